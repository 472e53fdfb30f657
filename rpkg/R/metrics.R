#' Coverage of imputation confidence regions
#'
#' How often the `level` L2-ball region of each imputed sequence (the paper's
#' Algorithm 1) contains what it should:
#' * with `spec` (data from a known Gaussian process): the share of
#'   `n_draws` fresh draws from the exact conditional law of the missing
#'   values, given that sequence's observed values, that fall inside its
#'   region, by Monte Carlo (the paper's coverage);
#' * otherwise against the truth (`truth`, or the one given to [impute()]):
#'   whether each sequence's true missing values lie inside its region, and
#'   the share of missing entries inside their per-entry interval.
#'
#' @param object An imputation from [impute()] or [impute_series()] (or
#'   [impute_baseline()], [imputation_from_completions()]).
#' @param spec A [gp_spec()] the data came from, for Monte Carlo coverage.
#' @param truth True values shaped like the imputed `x`; for a series imputation
#'   ([impute_series()]) in the form of its `x` (a `ts`, a vector, a matrix, or
#'   a data frame holding the imputed variables by name, e.g. with its time column).
#'   `NA` where a true value is not known (the data's own gaps): such entries
#'   are not scored, and a sequence with one has no region coverage (`NA`).
#'   A complete sequence (no missing entry, which [impute()] passes
#'   through) has nothing to score: its coverages and its per-sequence
#'   metrics are `NA`, as are those of a sequence none of whose missing
#'   entries is scored.
#' @param n_draws Draws from the exact conditional per sequence.
#' @param seed Optional seed; without one, [set.seed()] makes results repeatable.
#' @param threads CPU threads (default: the process's budget, see [threads]: option `ditimpute.threads`, `DITIMPUTE_THREADS`, 1 in a worker or when busy cores would make spinning threads collide, else all cores).
#' @param ... Unused: a named argument here is an input error (`levels` is
#'   named in full).
#' @param levels Optional vector of levels in (0, 1): the imputation's regions
#'   and intervals are rebuilt at each level (from its samples, or in closed
#'   form for the exact GP imputer) and the result is a calibration curve.
#' @return Without `levels`, a data frame of class `ditimpute_coverage`, one row per sequence:
#'   `sequence`, `coverage` (share of draws inside, or 0/1 for the truth),
#'   `interval_coverage` (with a truth), `radius`; its `print()` method
#'   reports the regions' mean coverage with a standard error and the
#'   per-entry intervals' coverage pooled over the scored entries (as
#'   `print()` of the imputation and `imputation_metrics(by = "all")` give
#'   it; the column holds each sequence's own share).
#'   With `levels`, a data frame of class `ditimpute_coverage_curve`, one row
#'   per level: `level`, `coverage` of the regions with a 95% interval
#'   (`lower`, `upper`: Clopper-Pearson over sequences against the truth; mean
#'   +/- 1.96 standard errors over sequences for Monte Carlo coverage), and
#'   `interval_coverage` of the per-entry intervals (against the truth) with
#'   its binomial interval (over entries, which are correlated within a
#'   sequence: a guide only); `plot()` draws nominal against empirical.
#' @examples
#' spec <- gp_spec(48, d = 2, kernel = gp_kernel("laplace", lengthscale = 20))
#' x <- gp_simulate(spec, 20, seed = 1)
#' x[, 30:40, ] <- NA
#' imp <- impute(spec, x, n_samples = 200, seed = 2)
#' coverage(imp, spec = spec, n_draws = 500, seed = 3)
#' @export
coverage <- function(object, spec = NULL, truth = NULL, n_draws = 2000, seed = NULL, threads = NULL, ...,
                     levels = NULL) {
  # `levels` after the dots: named in full, so `level = 0.9` is an error
  # rather than a one-level calibration curve by partial matching.
  check_dots(environment(), "coverage()")
  if (!inherits(object, "ditimpute_imputation")) abort_input("object", "must be an imputation from impute().")
  truth <- series_truth(object, truth)
  if (!is.null(levels)) return(coverage_curve(object, spec, truth, n_draws, seed, threads, levels))
  object <- as3(object)
  n <- dim(object$x)[1]
  H <- dim(object$x)[2]; d <- dim(object$x)[3]
  if (!is.null(spec)) {
    check_spec(spec)
    if (spec$H != H || spec$d != d) abort_input("spec", sprintf("is for H = %d, d = %d; the data are %d x %d.",
                                                                spec$H, spec$d, H, d))
    n_draws <- check_count(n_draws, min = 2)
    check_has_region(object)
    cov <- core_call(cpp_region_coverage(spec$Gamma, spec$Lambda, spec$mean, object$x, region_centres(object), object$radius,
                                         n_draws, resolve_seed(seed), resolve_threads(threads)))
    cov[is.nan(cov)] <- NA  # a complete sequence: nothing to cover
    out <- data.frame(sequence = seq_len(n), coverage = cov, radius = object$radius)
    attr(out, "against") <- sprintf("%d exact conditional draws per sequence", n_draws)
  } else {
    truth <- if (is.null(truth)) object$truth else check_truth(truth, list(arr = object$x, miss = object$missing))
    if (is.null(truth)) abort_input("truth", "give the true values, or a spec to draw from (GP data).")
    check_has_region(object)
    # A truth not known (NA) at a missing entry: that entry is not scored,
    # and its sequence's region coverage is NA (the region is joint).
    # A complete sequence has nothing to cover: NA too (its empty "region"
    # holds its empty truth, which would count as covered).
    unknown <- object$missing & is.na(truth)
    known_all <- !apply(unknown, 1, any) & apply(object$missing, 1, any)
    centres <- region_centres(object)
    inside <- core_call(cpp_region_contains(object$x, centres, object$radius, replace(truth, unknown, centres[unknown])))
    inside[!known_all] <- NA
    icov <- vapply(seq_len(n), function(i) {
      m <- object$missing[i, , ] & !is.na(truth[i, , ])
      if (!any(m)) return(NA_real_)  # nothing scored (a complete sequence, or no truth known)
      tv <- truth[i, , ][m]
      mean(tv >= object$lower[i, , ][m] & tv <= object$upper[i, , ][m])
    }, 0)
    out <- data.frame(sequence = seq_len(n), coverage = as.numeric(inside), interval_coverage = icov,
                      radius = object$radius)
    attr(out, "against") <- "the true values"
    # the scored entries per sequence: print() pools the intervals' coverage
    # over entries, as print() of the imputation and imputation_metrics(by =
    # "all") do (a review: the mean of the sequences' shares, 94.6% against
    # their 94.2%, when sequences had 1 and 78 missing entries)
    attr(out, "interval_entries") <- vapply(seq_len(n), function(i) sum(object$missing[i, , ] & !is.na(truth[i, , ])), 0L)
  }
  attr(out, "level") <- object$level
  class(out) <- c("ditimpute_coverage", "data.frame")
  out
}

check_has_region <- function(object, call = rlang::caller_env()) {
  if (!is.null(object$unscaled) && any(is.finite(object$upper))) {
    abort_input("object", paste("was mapped back by unscale_data(): its L2-ball region is a ball only on the",
                                "standardised scale. Compute coverage() of the imputation before unscaling it."),
                call = call)
  }
  if (anyNA(object$radius)) {
    abort_input("object", "has no confidence region (a deterministic imputation): there is no coverage to compute.",
                call = call)
  }
}

# Centres of the regions (n x H x d): the point estimate unless the region was
# built around another centre (finite-sample regions centre on half the samples).
region_centres <- function(object) if (is.null(object$centre)) object$point else object$centre

point_values <- function(object, i) {
  missing_values(object$point[i, , , drop = FALSE], matrix(object$missing[i, , ], dim(object$x)[2]))
}

#' @export
print.ditimpute_coverage <- function(x, ...) {
  check_dots(environment(), "print()", also = print_dots)
  n <- sum(!is.na(x$coverage))  # NA: a sequence whose truth is not known at every missing entry
  m <- mean(x$coverage, na.rm = TRUE)
  se <- if (n > 1) stats::sd(x$coverage, na.rm = TRUE) / sqrt(n) else NA
  entries <- !is.null(x$interval_coverage) && any(!is.na(x$interval_coverage))
  if (n > 0) {
    cat(sprintf("Coverage of the %g%% regions against %s: %.1f%%%s over %d sequence%s\n", 100 * attr(x, "level"),
                attr(x, "against"), 100 * m, if (is.na(se)) "" else sprintf(" (se %.1f%%)", 100 * se), n,
                if (n == 1) "" else "s"))
  }
  if (entries) {
    # the counts by sequence number (rows kept, selected or reordered by `[`
    # keep the attribute: a code review's cv[40:1, ] weighed the wrong rows)
    k <- attr(x, "interval_entries")
    sq <- x$sequence
    pooled <- if (!is.null(k) && is.numeric(sq) && all(sq %in% seq_along(k)) && !anyDuplicated(sq)) {
      w <- k[sq]
      ok <- !is.na(x$interval_coverage)
      sum(x$interval_coverage[ok] * w[ok]) / sum(w[ok])
    } else {
      mean(x$interval_coverage, na.rm = TRUE)  # rows bound from several results: the sequences' mean
    }
    cat(sprintf("Per-entry %g%% intervals contain %.1f%% of the true values\n", 100 * attr(x, "level"), 100 * pooled))
  }
  if (n == 0) {
    # A series' own gaps (truth unknown) leave no sequence scored as a whole:
    # said after the entries' figure, which is the one there is.
    cat(sprintf(paste("The %g%% regions (joint over a sequence's missing entries) are not scored against %s: no",
                      "sequence has its truth known at all of them\n"), 100 * attr(x, "level"), attr(x, "against")))
  }
  invisible(x)
}

#' Accuracy metrics of an imputation
#'
#' Over the scored missing entries: `mse` and `mae` of the point estimate
#' against the target, `mre` (sum of absolute errors over the sum of absolute
#' targets, as in the paper's appendix), `crps` (the continuous ranked
#' probability score of the samples against the truth, averaged over entries),
#' the mean per-entry interval `width` and `interval_coverage`. The target is
#' the exact conditional mean when `spec` is given (the paper's MSE on GP data;
#' CRPS and interval coverage then still use the truth when known), otherwise
#' the truth.
#'
#' Deterministic imputations ([impute_baseline()], or
#' [imputation_from_completions()] with one completion) have no samples and no
#' intervals: their `width` and `interval_coverage` are `NA`, and their `crps`
#' is that of a point forecast, which is its absolute error.
#'
#' On real data only some missing entries have a known truth (those hidden by
#' [hide_mcar()]; the data's own gaps have none): pass `hidden` to score those
#' alone; `truth` then needs values only there, or is the vector of the hidden
#' values in the order of `x[hidden]` (`hide_mcar()$truth`; for a series
#' imputation too: variable by variable in the order of the imputed variables,
#' `colnames(object$x)`, frames in time order, as `x[hidden]` gives them for a
#' matrix or `ts` `x`).
#'
#' @inheritParams coverage
#' @param spec Optional [gp_spec()] the data came from: the target of `mse`,
#'   `mae` and `mre` is then its exact conditional mean (see Description).
#' @param truth True values shaped like the imputed `x`; for a series
#'   imputation ([impute_series()]) in the form of its `x` (a `ts`, a vector,
#'   a matrix, or a data frame holding the imputed variables by name). `NA`
#'   where a true value is not known (the data's own gaps): such entries are
#'   not scored. By default the truth stored in the imputation (its `truth`
#'   argument), if any.
#' @param hidden Optional logical array shaped like the imputed `x` (for a
#'   series imputation also in the form of its `x`: a logical vector or ts,
#'   or `is.na()` of its data frame): the
#'   missing entries to score (e.g. `hide_mcar()$hidden`). Default: all
#'   missing entries.
#' @param by `"sequence"` for one row per sequence, `"all"` for one row that
#'   pools every scored entry (the paper's MAE, MSE and MRE), `"variable"` for
#'   one row per variable pooling its scored entries over the sequences (each
#'   variable in its own units; a series imputation's variables by name).
#' @return A data frame: with `by = "sequence"` one row per sequence (first
#'   column `sequence`); a sequence with no scored entry (a complete one,
#'   which [impute()] passes through, or one whose truth is not known) has
#'   `NA` in every metric, so `colMeans(m[-1], na.rm = TRUE)` gives the
#'   averages over the scored sequences. With `by = "all"` one row whose
#'   first column `entries` counts the scored entries; with `by = "variable"`
#'   one row per variable (`variable`, `entries`, the metrics; `NA` metrics
#'   for a variable with no scored entry).
#' @examples
#' spec <- gp_spec(48, d = 2, kernel = gp_kernel("laplace", lengthscale = 20))
#' truth <- gp_simulate(spec, 10, seed = 1)
#' x <- truth
#' x[, 30:40, ] <- NA
#' imp <- impute(spec, x, n_samples = 100, seed = 2, truth = truth)
#' colMeans(imputation_metrics(imp)[-1], na.rm = TRUE)
#' imputation_metrics(imp, by = "all")
#' @export
imputation_metrics <- function(object, truth = NULL, spec = NULL, hidden = NULL, by = c("sequence", "all", "variable")) {
  if (!inherits(object, "ditimpute_imputation")) abort_input("object", "must be an imputation from impute().")
  hidden <- series_hidden(object, hidden)
  # hide_mcar()$truth, the values of x[hidden] in that order, is a vector for
  # a series too; a full truth in x's form goes through series_truth().
  values_only <- hidden_values(truth, hidden)
  if (!values_only) {
    if (inherits(object, "ditimpute_series_imputation") && is.logical(hidden) && is.numeric(truth) &&
        is.null(dim(truth)) && !stats::is.ts(truth) && length(truth) != nrow(object$x)) {
      abort_input("truth", sprintf(paste("has %d values: give the %d hidden values (variable by variable, as x[hidden])",
                                         "or the truth in the form of x (%d time points x %d variables)."),
                                   length(truth), sum(hidden), nrow(object$x), ncol(object$x)))
    }
    truth <- series_truth(object, truth)
  }
  object <- as3(object)
  by <- check_string(by, c("sequence", "all", "variable"))
  n <- dim(object$x)[1]; H <- dim(object$x)[2]; d <- dim(object$x)[3]
  scored <- scored_entries(hidden, object)
  if (values_only) {
    full <- array(NA_real_, dim(object$x))  # hide_mcar()$truth: the values of x[hidden], in that order
    full[scored] <- truth
    truth <- full
  }
  truth <- if (is.null(truth)) object$truth else check_truth(truth, list(arr = object$x, miss = scored))
  if (is.null(truth) && is.null(spec)) abort_input("truth", "give the true values or the spec of the GP the data came from.")
  if (!is.null(truth)) scored <- scored & !is.na(truth)  # NA: a true value not known, not scored
  target <- truth
  if (!is.null(spec)) {
    check_spec(spec)
    target <- object$x
    for (i in seq_len(n)) {
      mi <- matrix(object$missing[i, , ], H, d)
      if (!any(mi)) next  # a complete sequence: nothing to target or score
      xi <- matrix(object$x[i, , ], H, d)
      target[i, , ] <- gp_conditional(spec, xi, missing = mi)$mean
    }
  }
  # Per scored entry, sequence by sequence (frame-major over missing entries).
  entries <- lapply(seq_len(n), function(i) {
    mi <- matrix(object$missing[i, , ], H, d)
    keep <- missing_values(scored[i, , , drop = FALSE] * 1, mi) == 1
    est <- point_values(object, i)[keep]
    tg <- missing_values(target[i, , , drop = FALSE], mi)[keep]
    lo <- missing_values(object$lower[i, , , drop = FALSE], mi)[keep]
    hi <- missing_values(object$upper[i, , , drop = FALSE], mi)[keep]
    vars <- missing_values(array(rep(seq_len(d), each = H), c(1, H, d)), mi)[keep]  # each entry's variable
    out <- data.frame(sequence = rep(i, length(est)), variable = vars, err = est - tg, target = tg, width = hi - lo)
    if (!is.null(truth)) {
      tv <- missing_values(truth[i, , , drop = FALSE], mi)[keep]
      s <- object$samples[[i]]
      out$crps <- if (is.null(s)) abs(est - tv) else crps_sample(s[, keep, drop = FALSE], tv)
      out$inside <- tv >= lo & tv <= hi
    }
    out
  })
  summarise <- function(e) {
    out <- data.frame(mse = mean(e$err^2), mae = mean(abs(e$err)), mre = sum(abs(e$err)) / sum(abs(e$target)),
                      width = mean(e$width))
    if (!is.null(truth)) {
      out$crps <- mean(e$crps)
      out$interval_coverage <- mean(e$inside)
    }
    # Nothing scored (a complete sequence, passed through, or no truth known):
    # NA, as coverage() gives, not the NaN of a mean over no entries.
    if (!nrow(e)) out[] <- NA_real_
    out
  }
  if (by == "all") return(cbind(entries = sum(vapply(entries, nrow, 0L)), summarise(do.call(rbind, entries))))
  if (by == "variable") {
    # each variable in its own units: pooled over variables, a report's MAE
    # mixed micrograms with degrees (a review)
    e <- do.call(rbind, entries)
    names_d <- variable_names(object)
    return(do.call(rbind, lapply(seq_len(d), function(j) {
      ej <- e[e$variable == j, , drop = FALSE]
      cbind(variable = names_d[j], entries = nrow(ej), summarise(ej))
    })))
  }
  do.call(rbind, lapply(seq_len(n), function(i) cbind(sequence = i, summarise(entries[[i]]))))
}

# Whether `truth` is the vector of the hidden values (x[hidden], in order)
# rather than the truth in x's form: a plain numeric vector, one value per
# hidden entry. Where every entry is hidden the two forms are the same values.
hidden_values <- function(truth, hidden) {
  !is.null(truth) && !is.null(hidden) && is.logical(hidden) && is.numeric(truth) && is.null(dim(truth)) &&
    !stats::is.ts(truth) && length(truth) == sum(hidden, na.rm = TRUE)
}

# The entries to score: the missing entries of the imputation, or those of
# them marked in `hidden`.
scored_entries <- function(hidden, object, call = rlang::caller_env()) {
  if (is.null(hidden)) return(object$missing)
  if (!is.logical(hidden) || anyNA(hidden)) abort_input("hidden", "must be a logical array (TRUE = score).", call = call)
  if (length(dim(hidden)) == 2) hidden <- array(hidden, c(1L, dim(hidden)))
  if (!identical(as.integer(dim(hidden)), as.integer(dim(object$x)))) {
    abort_input("hidden", "must have the same shape as the imputed x.", call = call)
  }
  if (any(hidden & !object$missing)) {
    abort_input("hidden", "marks entries that are observed in the imputed x; only missing entries can be scored.",
                call = call)
  }
  if (!any(hidden)) abort_input("hidden", "marks no entry to score.", call = call)
  hidden
}

# CRPS of each column's samples (Z x m) against y (length m):
# E|X - y| - E|X - X'| / 2, with E|X - X'| from the sorted samples in O(Z log Z).
crps_sample <- function(samples, y) {
  Z <- nrow(samples)
  vapply(seq_along(y), function(k) {
    s <- sort(samples[, k])
    e1 <- mean(abs(s - y[k]))
    e2 <- 2 * sum((2 * seq_len(Z) - Z - 1) * s) / Z^2
    e1 - e2 / 2
  }, 0)
}

# A calibrated imputation holds its calibration at its own level only:
# intervals at another level rebuilt from its paths would silently drop it.
check_uncalibrated <- function(object, level, arg, call = rlang::caller_env()) {
  if (is.null(object$calibration)) return(invisible())
  abort_input(arg, sprintf(paste("cannot change on a calibrated imputation: its intervals are calibrated at level %g",
                                 "only, and intervals at %s from its paths would not be. Impute again at that level",
                                 "with the calibration."), object$level, paste(format(level), collapse = ", ")),
              call = call)
}

# The imputation's regions and intervals rebuilt at another level, from the
# same samples (or the exact law), without re-drawing.
at_level <- function(object, level, call = rlang::caller_env()) {
  check_uncalibrated(object, level, "levels", call = call)
  opts <- object$options
  opts$level <- level
  if (inherits(object$model, "ditimpute_gp") && is.null(opts$sampler)) {
    spec <- object$model  # the exact GP: closed form at any level
    res <- core_call(cpp_impute_gp(spec$Gamma, spec$Lambda, spec$mean, object$x, NULL, opts), call = call)
  } else {
    if (all(vapply(object$samples, is.null, TRUE))) {
      abort_input("object", "has no samples (a deterministic imputation): no region at any level.", call = call)
    }
    # the core would name n_samples and region, which a series imputation's
    # caller never gave; the level is what asks too much of the paths
    if (!identical(opts$region, "quantile") && object$n_samples < cpp_min_samples(level)) {
      abort_input("levels", sprintf(paste("includes %g: regions and intervals at that level from the imputation's %d",
                                          "samples need at least %d of them; impute again with more samples",
                                          "(n_samples), or score lower levels."),
                                    level, as.integer(object$n_samples), cpp_min_samples(level)), call = call)
    }
    res <- core_call(cpp_impute_samples(object$x, object$samples, opts[c("n_samples", "level", "median", "region")]),
                     call = call)
  }
  object[c("centre", "lower", "upper", "radius")] <- res[c("centre", "lower", "upper", "radius")]
  object$level <- level
  object
}

coverage_curve <- function(object, spec, truth, n_draws, seed, threads, levels, call = rlang::caller_env()) {
  levels <- check_levels(if (is.numeric(levels)) unique(levels) else levels, arg = "levels", call = call)
  series <- inherits(object, "ditimpute_series_imputation")
  object <- as3(object)
  # series_truth() gave a series' truth as frames x variables: the n x H x d
  # form of the reshaped object (which series_truth() passes through)
  if (!is.null(truth) && length(dim(truth)) == 2) truth <- array(truth, c(1L, dim(truth)))
  seed <- resolve_seed(seed, call = call)
  rows <- lapply(sort(unique(levels)), function(L) {
    imp <- at_level(object, L, call = call)
    cv <- coverage(imp, spec = spec, truth = truth, n_draws = n_draws, seed = seed, threads = threads)
    if (!is.null(spec)) {
      cov <- cv$coverage[!is.na(cv$coverage)]  # NA: a complete sequence, nothing to cover
      m <- mean(cov)
      se <- if (length(cov) > 1) stats::sd(cov) / sqrt(length(cov)) else NA_real_
      r <- c(n = length(cov), coverage = m, lower = m - 1.96 * se, upper = m + 1.96 * se)
    } else {
      r <- binom_row(cv$coverage[!is.na(cv$coverage)] == 1)  # sequences whose truth is known at every missing entry
    }
    out <- data.frame(level = L, sequences = r[["n"]], coverage = r[["coverage"]], lower = r[["lower"]],
                      upper = r[["upper"]])
    if (!is.null(cv$interval_coverage)) {
      tr <- if (is.null(truth)) object$truth else truth
      tr <- if (length(dim(tr)) == 2) array(tr, c(1L, dim(tr))) else tr
      m <- imp$missing & is.finite(tr)
      ir <- binom_row(tr[m] >= imp$lower[m] & tr[m] <= imp$upper[m])
      out$interval_coverage <- ir[["coverage"]]
      out$interval_lower <- ir[["lower"]]
      out$interval_upper <- ir[["upper"]]
    }
    out
  })
  out <- do.call(rbind, rows)
  attr(out, "against") <- if (is.null(spec)) "the true values" else sprintf("%d exact conditional draws per sequence", n_draws)
  attr(out, "method") <- object$method
  # a GP series imputation's own intervals are exact (or its proper draws'
  # quantiles); the curve's are rebuilt from its paths at every level (a DiT
  # series imputation's are its paths' quantiles already)
  attr(out, "paths") <- if (series && !inherits(object$model, "ditimpute_series_dit_model")) object$n_samples else NULL
  class(out) <- c("ditimpute_coverage_curve", "data.frame")
  out
}

#' @export
print.ditimpute_coverage_curve <- function(x, ...) {
  check_dots(environment(), "print()", also = print_dots)
  cat(sprintf("Coverage of %s against %s, by level:\n", attr(x, "method"), attr(x, "against")))
  df <- as.data.frame(unclass(x))
  pct <- function(v) sprintf("%.1f%%", 100 * v)
  tab <- data.frame(nominal = pct(df$level), regions = ifelse(is.na(df$coverage), "-", pct(df$coverage)),
                    ci95 = ifelse(is.na(df$lower) | is.na(df$upper), ifelse(df$sequences == 1, "(one sequence: none)", "-"),
                                  sprintf("[%s, %s]", pct(df$lower), pct(df$upper))))
  if (!is.null(df$interval_coverage)) tab$intervals <- pct(df$interval_coverage)
  print(tab, row.names = FALSE, right = FALSE)
  if (all(is.na(df$coverage))) {
    cat("Regions: none scored (a region needs the truth at every imputed entry of its sequence, and it is unknown at some).\n")
  }
  if (!is.null(attr(x, "paths"))) {
    cat(sprintf(paste0("Regions and intervals at each level rebuilt from the imputation's %d sample paths (quantiles);",
                       " its own intervals (exact, or Gaussian over proper draws) can differ: coverage() without `levels` scores them.\n"),
                attr(x, "paths")))
  }
  invisible(x)
}

#' @export
plot.ditimpute_coverage_curve <- function(x, ...) {
  check_dots(environment(), "plot()")
  df <- as.data.frame(unclass(x))
  p <- ggplot2::ggplot(df, ggplot2::aes(x = .data$level, y = .data$coverage)) +
    ggplot2::geom_abline(slope = 1, intercept = 0, linetype = 2, colour = "grey50")
  # regions not scored (a series' own gaps, truth unknown: NA): no layer, so no
  # ggplot warning about removed rows and no empty legend key (a review)
  if (any(!is.na(df$coverage))) {
    p <- p + ggplot2::geom_pointrange(data = df[!is.na(df$coverage), , drop = FALSE],
                                      ggplot2::aes(ymin = .data$lower, ymax = .data$upper, colour = "regions"))
  }
  if (!is.null(df$interval_coverage)) {
    p <- p + ggplot2::geom_pointrange(ggplot2::aes(y = .data$interval_coverage, ymin = .data$interval_lower,
                                                   ymax = .data$interval_upper, colour = "intervals"),
                                      position = ggplot2::position_nudge(x = 0.005))
  }
  drawn(p + ggplot2::labs(x = "nominal level", y = "empirical coverage", colour = NULL,
                          title = wrapped_title(sprintf("Calibration curve: %s", attr(x, "method")))) +
          ggplot2::scale_colour_manual(values = coverage_colours, name = NULL) + plot_theme())
}

# `[` on the package's result tables (coverage(), distribution_error(),
# bound_factors(), shift_ratio(), run_experiments()): a subset that keeps
# every column keeps the class and the attributes its print() reads; one that
# drops a column is a plain data frame. `[.data.frame` keeps them for rows
# alone but drops the attributes once columns are named, class kept: a
# review's subset(cv, coverage < 0.97) printed nothing and b[, c("pattern",
# "kappa_cond")] stopped in sprintf(). (Row-indexed attributes are matched by
# the `sequence` column where print() uses them.)
result_table_subset <- function(x, ...) {
  out <- NextMethod()
  if (!is.data.frame(out)) return(out)
  extra <- function(obj) setdiff(names(attributes(obj)), c("names", "row.names", "class"))
  if (!all(names(x) %in% names(out))) {
    attributes(out)[extra(out)] <- NULL
    class(out) <- "data.frame"
    return(out)
  }
  for (a in extra(x)) attr(out, a) <- attr(x, a)
  class(out) <- class(x)
  out
}

#' @export
`[.ditimpute_coverage` <- result_table_subset
#' @export
`[.ditimpute_coverage_curve` <- result_table_subset
#' @export
`[.ditimpute_distribution_error` <- result_table_subset
#' @export
`[.ditimpute_bounds` <- result_table_subset
#' @export
`[.ditimpute_shift_ratio` <- result_table_subset
#' @export
`[.ditimpute_experiments` <- result_table_subset
