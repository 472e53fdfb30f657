#' Calibrate an imputer's regions and intervals on held-out data
#'
#' Split-conformal calibration of any imputer. The imputer imputes held-out
#' sequences whose hidden values are known; from how far the truth falls
#' relative to each region and interval, `calibrate()` fits
#' * for the L2-ball regions, a scale factor on the radius: the
#'   `ceiling((n + 1) level)`-th smallest of `||truth - centre|| / radius` over
#'   the `n` calibration cases;
#' * for the per-entry intervals, a conformalised-quantile widening: with
#'   half-width `w` and score `e = max(lower - y, y - upper) / w`, the interval
#'   becomes `[lower - q w, upper + q w]`, `q` the `ceiling((N + 1) level)`-th
#'   smallest score of the `N` calibration entries.
#'
#' For a new case exchangeable with the calibration cases of its group, the
#' calibrated region holds its truth with probability at least `level`
#' (marginally over cases), whatever the imputer gets wrong: a DiT's over- or
#' under-dispersion, a GP with the wrong kernel, an outside imputer.
#'
#' **Groups (Mondrian calibration).** One factor for all cases would hold on
#' average while hard patterns under-cover and easy ones over-cover. Cases are
#' therefore grouped by what drives the error, and each group gets its own
#' factors:
#' * `"pattern"`: the missing pattern itself (when there are few, e.g. the
#'   paper's P1-P4); a new pattern not seen in calibration takes the pooled
#'   factors;
#' * `"gap"`: the longest run of frames with a missing value, in `n_groups`
#'   bins at the calibration cases' quantiles (long gaps are where the
#'   conditional covariance is ill-conditioned, the paper's `kappa`);
#' * `"fraction"`: the share of missing entries, binned the same way;
#' * `"kappa"`: `kappa_cond` of the pattern (Gaussian-process imputers only);
#' * `"none"`: one group;
#' * `"auto"` (default): `"pattern"` when the calibration cases have at most 10
#'   distinct patterns, each with enough cases; otherwise `"gap"`, with as
#'   many bins (up to `n_groups`) as the cases allow.
#'
#' Each group needs `ceiling(level / (1 - level))` cases (19 at 0.95, 9 at 0.9).
#'
#' **Self-calibration.** Split-conformal calibration holds when calibration
#' and test cases are exchangeable. A held-out period of a drifting series is
#' not (on ETTh1 the DiT's intervals, calibrated on the last 15% of the
#' training period, covered 74-79% of the test period at 90%). Hiding further
#' values of the very windows to impute, at random, and calibrating on them
#' needs no held-out data and follows the drift: the hidden values are
#' exchangeable with the data's own gaps when those are missing completely at
#' random (MCAR), which is what to check before relying on it. The
#' calibration windows then have more entries missing than the data, which
#' tends to widen the intervals slightly. Regions need every missing value's
#' truth, so windows with gaps of their own give interval factors only.
#'
#' The diagnostics (`print()`, `summary()`, `plot()`) show per group the
#' nominal level, the raw coverage of the imputer, and the calibrated coverage
#' estimated by 2-fold cross-fitting (factors fitted on one half of the cases,
#' scored on the other), with Clopper-Pearson 95% intervals; the last row,
#' `pooled`, is every case with the one factor fitted on all of them (what a
#' pattern unseen in calibration gets), not the grouped calibration, whose
#' coverage is that of the group rows. Interval
#' coverage pools entries, which are correlated within a sequence: its
#' binomial interval is too narrow and is shown as a guide only.
#'
#' **A whole series** ([impute_series()]'s result as `object`, no `x`): each
#' of `rounds` rounds hides further observed stretches of the series itself,
#' with lengths drawn from the series' own gaps (or from `missing`, a vector
#' of gap lengths), `share` of each variable's observed values, and imputes
#' them with the fitted model at the imputation's level (its exact
#' intervals: no sample paths are drawn, and the rounds run side by side,
#' `threads` at a time, one copy of the series each). Each
#' hidden entry is scored as above and grouped by the length of the gap it
#' lies in (`groups = "gap"` or `"none"`); [apply_calibration()] (or
#' `impute_series(calibrate = TRUE)`) widens each imputed entry's interval
#' by the factor of its gap's group where that factor is positive; where it
#' is negative (the model's intervals covered more than `level`), it narrows
#' them by it when the group's scores come from at least 200 hidden gaps, and
#' otherwise by no more than all the scores pooled show (not at all when the
#' pooled factor widens or rests on fewer than 200 gaps): the entries of one
#' gap are correlated, so a group of a few long gaps is a sample of a few,
#' while the errors' shape (heavy tails make Gaussian intervals too wide at
#' low levels) is shared by every gap length. The factors as fitted are kept
#' in `factors$fitted`, the gaps behind each in `factors$gaps`, the factors
#' applied in `factors$interval`. Intervals only: the
#' series' single L2 region is left as it is. The hidden values helped fit
#' the model, so the rounds are slightly optimistic about it. A DiT series
#' imputation (`impute_series(method = "dit")`) is calibrated the same way,
#' each round drawn with the trained network (as many paths as the
#' imputation has, one round at a time): the hidden values were in its
#' training windows, so there the rounds are more optimistic (on Seatbelts
#' the DiT's 90% intervals went from 82.8% to 83.4% coverage,
#' `bench/results/series_dit_short_coverage.md`). The rounds score the
#' fitted model's plug-in intervals (exact for the GP): on an imputation with
#' proper draws (`proper = TRUE`, or `"auto"` on short series and series with
#' an end gap), whose intervals are wider, the factors widen what the draws
#' already widened, so its calibrated intervals err wide.
#'
#' @param object A fitted DiT ([dit_fit()]), a [gp_spec()] or a fitted GP
#'   ([gp_fit()]); or an imputation of the calibration windows made by any
#'   imputer (e.g. [imputation_from_completions()] of Amelia's completions),
#'   with `truth`: the calibration is then applied to that imputer's test
#'   imputations with [apply_calibration()], which checks the method label.
#'   Or a series imputation ([impute_series()]): self-calibration of its intervals.
#' @param x Held-out data: an `n x H x d` array of complete sequences (with
#'   `missing` saying what to hide), or of windows with `NA` on hidden entries
#'   (and on the data's own gaps), with `truth`. Or **self-calibration**: the
#'   incomplete windows to be imputed themselves, with `missing` (no `truth`):
#'   `missing` hides some of their observed values, which are then scored.
#'   Use it when no held-out period is exchangeable with the data (a series
#'   that drifts); see Details. A window left with no missing entry passes
#'   through [impute()] and is no calibration case: it enters no count,
#'   group or fold, so the calibration is that of the other windows.
#'   [apply_calibration()] leaves such a window as it is (radius 0, no
#'   intervals, group `NA`).
#' @param missing For complete `x`: a pattern (see [gp_conditional()]), a list
#'   of patterns (every sequence is imputed under each), or a mask strategy
#'   ([mask_strategy()], [strategy_preset()]) to draw one mask per sequence.
#'   For a series: `NULL` (its own gap lengths) or gap lengths to draw.
#' @param level Confidence level of the regions and intervals to calibrate.
#' @param n_samples Samples per case; the calibrated object imputes with the same number.
#' @param truth With incomplete `x`: the true values, shaped like `x`, known
#'   at the hidden entries. Entries of `x` that are `NA` with an `NA` truth
#'   (the data's own gaps) are imputed but not scored; region factors use only
#'   cases with the truth at every missing entry. NaN or Inf in `truth` is an
#'   input error (NA marks a value not known).
#' @param groups,n_groups How cases are grouped (see Details).
#' @param seed Optional seed (masks and imputation); [set.seed()] works too.
#' @param threads CPU threads.
#' @param rounds,share Series only: the number of calibration rounds, and the
#'   share of each variable's observed values hidden per round (default: the
#'   series' share of missing values, between 2% and 10%).
#' @param ... Passed to [impute()] (e.g. `steps`, `method`, `sampler`); a name
#'   that neither `calibrate()` nor that `impute()` method takes is an input error.
#' @return An object of class `ditimpute_calibration`. [impute()] on it imputes
#'   with the calibrated regions and intervals; `print()`, `summary()` and
#'   `plot()` show the coverage per group before and after.
#' @seealso [coverage()], [impute()]
#' @examples
#' spec <- gp_spec(24, d = 2, kernel = gp_kernel("laplace", lengthscale = 10))
#' # A deliberately wrong model: lengthscale 3 instead of 10.
#' wrong <- gp_spec(24, d = 2, kernel = gp_kernel("laplace", lengthscale = 3))
#' held <- gp_simulate(spec, 60, seed = 1)
#' cal <- calibrate(wrong, held, missing = list(pattern_tail(24, 6), pattern_random(24, 6, seed = 1)),
#'                  level = 0.9, seed = 2)
#' cal
#' test <- gp_simulate(spec, 20, seed = 3)
#' x <- test
#' x[, 19:24, ] <- NA
#' coverage(impute(cal, x, seed = 4), truth = test)
#' # Self-calibration: the windows to impute have gaps of their own, and no
#' # held-out data are needed.
#' gappy <- hide_mcar(test, rate = 0.2, seed = 5)$x
#' self <- calibrate(wrong, gappy, missing = mask_strategy("mcar0.2"), level = 0.9, seed = 6)
#' imp <- apply_calibration(impute(wrong, gappy, level = 0.9, seed = 7), self)
#' imputation_metrics(imp, truth = test, by = "all")
#' @export
calibrate <- function(object, x = NULL, missing = NULL, level = 0.95, n_samples = 100, truth = NULL,
                      groups = c("auto", "pattern", "gap", "fraction", "kappa", "none"), n_groups = 3,
                      seed = NULL, threads = NULL, rounds = 10, share = NULL, ...) {
  if (inherits(object, "ditimpute_dit")) check_torch()
  # `...` reaches impute() only for a model; its names are checked here, so the
  # error names calibrate()'s argument.
  takes_dots <- !inherits(object, c("ditimpute_series_imputation", "ditimpute_imputation"))
  check_dots(environment(), "calibrate()",
             valid = c(names(formals(calibrate)), if (takes_dots) impute_method_args(object)))
  groups <- check_string(groups, c("auto", "pattern", "gap", "fraction", "kappa", "none"))
  n_groups <- check_count(n_groups, max = 20)
  if (inherits(object, "ditimpute_series_imputation")) {
    # A whole series: its own observed values are hidden and scored.
    if (!is.null(x) || !is.null(truth)) {
      abort_input(if (is.null(x)) "truth" else "x", "must be NULL for a series imputation: its own observed values are hidden and scored.")
    }
    if (!base::missing(level) && !isTRUE(all.equal(level, object$level))) {
      abort_input("level", sprintf("must be %g, the level of the series imputation (impute it again for another).",
                                   object$level))
    }
    if (!base::missing(n_samples)) {
      abort_input("n_samples", paste("is not used for a series imputation: its calibration rounds re-impute with exact",
                                     "moments (GP) or with the imputation's own number of paths (DiT)."))
    }
    if (!groups %in% c("auto", "gap", "none")) abort_input("groups", "a series is calibrated by \"gap\" (or \"auto\") or \"none\".")
    return(calibrate_series(object, missing, object$level, groups, n_groups, check_count(rounds, min = 2),
                            share, resolve_seed(seed), resolve_threads(threads)))
  }
  # rounds and share say how a series hides its own values: for windows
  # they would be silently unused.
  if (!base::missing(rounds) || !is.null(share)) {
    abort_input(if (!is.null(share)) "share" else "rounds", "is used only when calibrating a series imputation (impute_series()).")
  }
  if (groups == "kappa" && !inherits(object, "ditimpute_gp")) {
    abort_input("groups", "\"kappa\" needs a Gaussian-process imputer (kappa_cond of its covariance).")
  }
  seed <- resolve_seed(seed)
  if (inherits(object, "ditimpute_imputation")) {
    # An imputation of the calibration windows made elsewhere (an outside
    # imputer): score it against `truth` as it is.
    imp <- as3(object)
    if (!is.null(x) || !is.null(missing)) abort_input("x", "must be NULL when `object` is already an imputation.")
    if (is.null(truth)) abort_input("truth", "give the true values of the imputed windows.")
    truth <- check_truth_shape(truth, imp$x)
    if (!any(imp$missing & is.finite(truth))) abort_input("truth", "has no finite value at a missing entry: nothing to score.")
    cal <- list(truth = truth)
    # The imputation's own level and samples are what is scored.
    if (!base::missing(level) && !isTRUE(all.equal(level, imp$level))) {
      abort_input("level", sprintf("must be %g, the level of the imputation (impute again at another level).", imp$level))
    }
    if (!base::missing(n_samples) && !isTRUE(all.equal(n_samples, imp$n_samples))) {
      abort_input("n_samples", sprintf("must be %d, the samples of the imputation (impute again for more).",
                                       as.integer(imp$n_samples)))
    }
    level <- imp$level
    n_samples <- imp$n_samples
    key <- imputation_key(object)
    model <- NULL
  } else {
    dims <- imputer_dims(object)
    level <- check_level(level)
    n_samples <- check_count(n_samples, min = 2)
    threads <- resolve_threads(threads)
    cal <- calibration_cases(x, missing, truth, dims$H, dims$d, seed)
    imp <- as3(impute(object, cal$x, n_samples = n_samples, level = level, truth = NULL, seed = sub_seed(seed, 2),
                      threads = threads, ...))
    key <- model_key(object)
    model <- object
  }
  if (anyNA(imp$radius)) abort_input("object", "gives no confidence region (a deterministic imputer): nothing to calibrate.")
  # A complete window (no missing entry, which impute() passes through) is
  # no calibration case: it has nothing to score, so it enters no count,
  # group, bin or fold, and the calibration is the one of the other windows.
  gappy <- apply(imp$missing, 1, any)
  if (!all(gappy)) {
    imp <- imputation_cases(imp, which(gappy))
    cal$truth <- cal$truth[gappy, , , drop = FALSE]
  }
  scores <- calibration_scores(imp, cal$truth)
  features <- case_features(object, imp$missing, groups)
  grouping <- choose_groups(features, groups, n_groups, level, scores)
  g <- assign_groups(grouping, features)
  factors <- fit_factors(scores, g, grouping$labels, level)
  diag <- calibration_diagnostics(scores, g, grouping$labels, level, seed)
  structure(list(object = model, level = level, n_samples = n_samples, grouping = grouping, factors = factors,
                 diagnostics = diag, n_cases = length(scores$region), method = imp$method,
                 impute_args = list(...), model_key = key, settings = imp$options[c("sampler", "region")]),
            class = "ditimpute_calibration")
}

# The arguments of the impute() method that `object` dispatches to.
impute_method_args <- function(object) {
  for (cl in class(object)) {
    m <- utils::getS3method("impute", cl, optional = TRUE)
    if (!is.null(m)) return(names(formals(m)))
  }
  character()
}

# H and d of an imputer (input error naming `object` otherwise).
imputer_dims <- function(object, call = rlang::caller_env()) {
  if (inherits(object, "ditimpute_dit")) return(list(H = object$config$H, d = object$config$d))
  if (inherits(object, "ditimpute_gp")) return(list(H = object$H, d = object$d))
  abort_input("object", "must be a fitted DiT (dit_fit()), a gp_spec() or a fitted GP (gp_fit()).", call = call)
}

# The cases `keep` of an imputation (n x H x d form, as3()): what scoring
# reads of it.
imputation_cases <- function(imp, keep) {
  for (f in c("x", "missing", "point", "centre", "lower", "upper", "truth")) {
    if (!is.null(imp[[f]])) imp[[f]] <- imp[[f]][keep, , , drop = FALSE]
  }
  imp$radius <- imp$radius[keep]
  imp$samples <- imp$samples[keep]
  imp
}

# The key of the imputer behind an imputation: its model's, or for outside
# imputers its method label.
imputation_key <- function(imp) {
  if (is.null(imp$model)) paste("imputation:", imp$method) else model_key(imp$model)
}

check_truth_shape <- function(truth, x, call = rlang::caller_env()) {
  if (!is.numeric(truth)) abort_input("truth", "must be numeric, shaped like the imputed x.", call = call)
  check_no_nan_inf(truth, "truth", call = call)  # NA: a truth not known (not scored); NaN and Inf are errors
  if (length(dim(truth)) == 2) truth <- array(truth, c(1L, dim(truth)))
  if (!identical(as.integer(dim(truth)), as.integer(dim(x)))) {
    abort_input("truth", "must have the shape of the imputed x.", call = call)
  }
  storage.mode(truth) <- "double"
  truth
}

# A fingerprint of an imputer, so a calibration is only applied to its own model.
model_key <- function(object) {
  v <- if (inherits(object, "ditimpute_dit")) as.numeric(object$bytes) else
    c(object$Gamma, object$Lambda, object$mean)
  w <- seq_along(v) %% 9973 + 1
  sprintf("%s:%d:%.15g", class(object)[1], length(v), sum(v * w))
}

# The calibration cases: sequences with hidden entries (NA) and the truth there.
calibration_cases <- function(x, missing, truth, H, d, seed, call = rlang::caller_env()) {
  check_no_nan_inf(x, "x", call = call)
  if (is.data.frame(x) || !is.numeric(x) || length(dim(x)) != 3) {
    abort_input("x", "must be an n x H x d numeric array of held-out sequences.", call = call)
  }
  if (dim(x)[2] != H || dim(x)[3] != d) {
    abort_input("x", sprintf("has sequences of %d x %d; the imputer has H = %d, d = %d.", dim(x)[2], dim(x)[3], H, d),
                call = call)
  }
  storage.mode(x) <- "double"
  n <- dim(x)[1]
  if (!is.null(truth)) {
    if (!is.null(missing)) abort_input("missing", "must be NULL when `truth` is given (x's NAs are the hidden entries).",
                                       call = call)
    if (!is.numeric(truth) || !identical(as.integer(dim(truth)), as.integer(dim(x)))) {
      abort_input("truth", "must be a numeric array shaped like x.", call = call)
    }
    check_no_nan_inf(truth, "truth", call = call)  # NA: a truth not known (not scored)
    scored <- is.na(x) & is.finite(truth)
    if (!any(scored)) abort_input("truth", "has no finite value at a missing entry of x: there is nothing to score.",
                                  call = call)
    return(list(x = x, truth = truth))
  }
  if (is.null(missing)) {
    abort_input("missing", if (anyNA(x)) {
      "give a pattern or a mask strategy to hide observed values of x (self-calibration), or `truth`."
    } else {
      "give a pattern, a list of patterns or a mask strategy to hide values."
    }, call = call)
  }
  if (inherits(missing, "ditimpute_strategy")) {
    masks <- draw_masks(missing, n, H, d, seed = sub_seed(seed, 1))
  } else {
    pats <- if (is.list(missing) && !inherits(missing, "ditimpute_pattern")) missing else list(missing)
    if (length(pats) == 0) abort_input("missing", "is an empty list of patterns.", call = call)
    one <- lapply(pats, function(p) resolve_missing(p, H, d, arg = "missing", call = call))
    # Every sequence under every pattern.
    masks <- array(FALSE, c(n * length(one), H, d))
    for (k in seq_along(one)) masks[(k - 1) * n + seq_len(n), , ] <- rep(one[[k]], each = n)
    x <- x[rep(seq_len(n), length(one)), , , drop = FALSE]
  }
  # Self-calibration when x has gaps of its own: only its observed entries
  # are hidden and scored; its own NAs stay missing and unscored.
  truth <- x
  x[masks] <- NA
  if (!any(masks & !is.na(truth))) {
    abort_input("missing", "hides no observed entry of x: there is nothing to score.", call = call)
  }
  list(x = x, truth = truth)
}

# Region scores ||truth - centre|| / radius (NA for cases without the truth at
# every missing entry, and for complete cases, whose radius-0 "region" of
# nothing would score 0) and interval scores max(lo - y, y - hi) / half-width
# of every scored entry, with the case each entry belongs to.
calibration_scores <- function(imp, truth) {
  n <- dim(imp$x)[1]
  miss <- imp$missing
  scored <- miss & is.finite(truth)
  full <- vapply(seq_len(n), function(i) any(miss[i, , ]) && all(scored[i, , ] == miss[i, , ]), TRUE)
  t0 <- truth
  t0[!is.finite(t0)] <- 0
  inside <- rep(NA_real_, n)
  if (any(full)) {
    k <- which(full)
    centre <- imp$centre[k, , , drop = FALSE]
    d2 <- vapply(seq_along(k), function(a) {
      m <- miss[k[a], , ]
      sqrt(sum((t0[k[a], , ][m] - centre[a, , ][m])^2))
    }, 0)
    inside[k] <- d2 / pmax(imp$radius[k], .Machine$double.eps)
  }
  idx <- which(scored)
  half <- (imp$upper[idx] - imp$lower[idx]) / 2
  e <- pmax(imp$lower[idx] - truth[idx], truth[idx] - imp$upper[idx]) / pmax(half, .Machine$double.eps)
  case <- ((idx - 1) %% n) + 1
  list(region = inside, entry = e, entry_case = case)
}

# Per-case features that drive the imputation error.
case_features <- function(object, miss, groups) {
  n <- dim(miss)[1]
  frames <- apply(miss, c(1, 2), any)  # n x H: frames with a missing value
  gap <- if (is.matrix(frames)) apply(frames, 1, function(f) { r <- rle(f); max(c(0, r$lengths[r$values])) }) else
    rep(1, n)
  fraction <- apply(miss, 1, mean)
  key <- apply(miss, 1, function(m) paste(which(m), collapse = ","))
  # A complete case (passed through: nothing imputed, no scores) has no
  # conditional: kappa 1, the best conditioned; its group changes nothing.
  kappa <- if (groups == "kappa") vapply(seq_len(n), function(i) {
    if (any(miss[i, , ])) kappa_cond(object, miss[i, , ]) else 1
  }, 0) else NULL
  list(gap = gap, fraction = fraction, pattern = key, kappa = kappa, n = n)
}

min_group_size <- function(level) ceiling(level / (1 - level) - 1e-9)

choose_groups <- function(features, groups, n_groups, level, scores, call = rlang::caller_env()) {
  need <- min_group_size(level)
  have <- sum(!is.na(scores$region))
  if (have > 0 && have < need) {
    abort_input("x", sprintf("gives %d calibration cases with a scorable region; level %g needs at least %d.", have,
                             level, need), call = call)
  }
  if (length(scores$entry) < need) {
    # a series' calibration scores entries only (its region is NA): the count
    # that fell short is the hidden entries' (a review: a 14-frame series was
    # told it had "0 calibration cases with a scorable region")
    lower <- if (level > 0.9) 0.9 else if (level > 0.8) 0.8 else NULL
    abort_input("x", sprintf("gives %d hidden entries to calibrate on; level %g needs at least %d: impute without calibration (calibrate = FALSE)%s, or a longer series.",
                             length(scores$entry), level, need,
                             if (is.null(lower)) "" else sprintf(", at a lower level (%g needs %d)", lower, min_group_size(lower))),
                call = call)
  }
  counts <- table(features$pattern[!is.na(scores$region)])
  if (groups == "auto") {
    groups <- if (length(counts) <= 10 && all(counts >= need) && length(counts) > 0) "pattern" else "gap"
  }
  if (groups == "none") return(list(type = "none", labels = "all"))
  if (groups == "pattern") {
    if (have > 0 && any(counts < need)) {
      abort_input("groups", sprintf("pattern groups need %d cases each at level %g; the smallest has %d.", need, level,
                                    min(counts)), call = call)
    }
    keys <- names(counts)
    if (length(keys) == 0) keys <- unique(features$pattern)
    return(list(type = "pattern", keys = keys, labels = sprintf("pattern %d (%d missing)", seq_along(keys),
                                                                  lengths(strsplit(keys, ",")))))
  }
  v <- features[[groups]]
  use <- if (have > 0) !is.na(scores$region) else rep(TRUE, length(v))
  k <- min(n_groups, max(1, floor(sum(use) / max(need, 1))))
  repeat {
    breaks <- unique(stats::quantile(v[use], probs = seq(0, 1, length.out = k + 1), type = 1, names = FALSE))
    inner <- breaks[-c(1, length(breaks))]
    bins <- findInterval(v[use], inner, left.open = TRUE) + 1
    if (k == 1 || (all(tabulate(bins, length(inner) + 1) >= need))) break
    k <- k - 1
  }
  if (have > 0 && k == 1 && sum(use) < need) {
    abort_input("x", sprintf("gives %d calibration cases; level %g needs at least %d.", sum(use), level, need),
                call = call)
  }
  edges <- c(-Inf, inner, Inf)
  fmt <- function(a) if (groups == "fraction") sprintf("%.2f", a) else format(signif(a, 3))
  labels <- vapply(seq_len(length(edges) - 1), function(b) {
    if (length(edges) == 2) return(sprintf("all %s", groups))
    lo <- if (is.finite(edges[b])) sprintf("%s > %s", groups, fmt(edges[b])) else NULL
    hi <- if (is.finite(edges[b + 1])) sprintf("%s <= %s", groups, fmt(edges[b + 1])) else NULL
    paste(c(lo, hi), collapse = ", ")
  }, "")
  list(type = groups, inner = inner, labels = labels)
}

# Group of each case (an index into labels; 0 = a pattern not seen in calibration).
assign_groups <- function(grouping, features) {
  switch(grouping$type,
    none = rep(1L, features$n),
    pattern = { g <- match(features$pattern, grouping$keys); g[is.na(g)] <- 0L; as.integer(g) },
    as.integer(findInterval(features[[grouping$type]], grouping$inner, left.open = TRUE) + 1))
}

conformal_quantile <- function(s, level) {
  s <- sort(s[!is.na(s)])
  k <- ceiling((length(s) + 1) * level - 1e-9)
  if (length(s) == 0 || k > length(s)) return(Inf)
  s[k]
}

fit_factors <- function(scores, g, labels, level) {
  eg <- g[scores$entry_case]
  out <- data.frame(group = c(labels, "pooled"),
                    region = c(vapply(seq_along(labels), function(b) conformal_quantile(scores$region[g == b], level), 0),
                               conformal_quantile(scores$region, level)),
                    interval = c(vapply(seq_along(labels), function(b) conformal_quantile(scores$entry[eg == b], level), 0),
                                 conformal_quantile(scores$entry, level)),
                    stringsAsFactors = FALSE)
  if (all(is.na(scores$region))) out$region <- NA_real_
  out
}

# Share inside with a Clopper-Pearson 95% interval.
binom_row <- function(inside) {
  inside <- inside[!is.na(inside)]
  n <- length(inside)
  if (n == 0) return(c(n = 0, coverage = NA, lower = NA, upper = NA))
  k <- sum(inside)
  ci <- stats::binom.test(k, n)$conf.int
  c(n = n, coverage = k / n, lower = ci[1], upper = ci[2])
}

# Raw coverage, and calibrated coverage by 2-fold cross-fitting, per group.
calibration_diagnostics <- function(scores, g, labels, level, seed) {
  n <- length(g)
  fold <- with_local_seed(seed, sample(rep(1:2, length.out = n)))
  eg <- g[scores$entry_case]
  ef <- fold[scores$entry_case]
  rows <- lapply(c(seq_along(labels), 0L), function(b) {
    in_g <- if (b == 0) rep(TRUE, n) else g == b
    in_e <- if (b == 0) rep(TRUE, length(eg)) else eg == b
    cross_region <- rep(NA, n)
    cross_entry <- rep(NA, length(eg))
    for (f in 1:2) {
      qr <- conformal_quantile(scores$region[in_g & fold != f], level)
      qe <- conformal_quantile(scores$entry[in_e & ef != f], level)
      sel <- in_g & fold == f
      cross_region[sel] <- scores$region[sel] <= qr
      sel_e <- in_e & ef == f
      cross_entry[sel_e] <- scores$entry[sel_e] <= qe
    }
    r_raw <- binom_row(scores$region[in_g] <= 1)
    r_cal <- binom_row(cross_region[in_g])
    i_raw <- binom_row(scores$entry[in_e] <= 0)
    i_cal <- binom_row(cross_entry[in_e])
    data.frame(group = if (b == 0) "pooled" else labels[b], cases = sum(in_g), nominal = level,
               region_raw = r_raw[["coverage"]], region_raw_lower = r_raw[["lower"]], region_raw_upper = r_raw[["upper"]],
               region_cal = r_cal[["coverage"]], region_cal_lower = r_cal[["lower"]], region_cal_upper = r_cal[["upper"]],
               entries = sum(in_e), interval_raw = i_raw[["coverage"]], interval_cal = i_cal[["coverage"]],
               interval_cal_lower = i_cal[["lower"]], interval_cal_upper = i_cal[["upper"]], stringsAsFactors = FALSE)
  })
  do.call(rbind, rows)
}

#' @rdname impute
#' @export
impute.ditimpute_calibration <- function(object, x, n_samples = object$n_samples, level = object$level, ...) {
  if (is.null(object$object)) {
    abort_input("object", "was fitted on an outside imputation: impute with that imputer, then apply_calibration().")
  }
  if (!isTRUE(all.equal(level, object$level))) {
    abort_input("level", sprintf("must be %g, the level the calibration was fitted at; calibrate again for another.",
                                 object$level))
  }
  if (!identical(as.integer(n_samples), as.integer(object$n_samples))) {
    abort_input("n_samples", sprintf("must be %d, the number the calibration was fitted with (the radius depends on it).",
                                     object$n_samples))
  }
  args <- utils::modifyList(object$impute_args, list(...))
  imp <- do.call(impute, c(list(object$object, x, n_samples = n_samples, level = level), args))
  apply_calibration(imp, object)
}

#' Apply a calibration to an imputation
#'
#' Scales each region's radius and widens each per-entry interval by the
#' factors [calibrate()] fitted for the case's group. [impute()] on a
#' calibration object does this for you; use `apply_calibration()` for an
#' imputation made separately with the same model, level and `n_samples`.
#'
#' @param imputation An imputation from [impute()] with the calibrated model.
#' @param calibration From [calibrate()].
#' @return The imputation with calibrated `radius`, `lower` and `upper`; its
#'   `calibration` field records the group of each sequence.
#' @examples
#' spec <- gp_spec(24, d = 2, kernel = gp_kernel("laplace", lengthscale = 10))
#' cal <- calibrate(spec, gp_simulate(spec, 40, seed = 1), missing = pattern_tail(24, 6),
#'                  level = 0.9, seed = 2)
#' x <- gp_simulate(spec, 5, seed = 3)
#' x[, 19:24, ] <- NA
#' apply_calibration(impute(spec, x, level = 0.9, seed = 4), cal)
#' @export
apply_calibration <- function(imputation, calibration) {
  if (!inherits(imputation, "ditimpute_imputation")) abort_input("imputation", "must be an imputation from impute().")
  if (!inherits(calibration, "ditimpute_calibration")) abort_input("calibration", "must come from calibrate().")
  if (!identical(imputation_key(imputation), calibration$model_key)) {
    abort_input("calibration", "was made for another model than the one that made this imputation.")
  }
  if (!isTRUE(all.equal(imputation$level, calibration$level)) || imputation$n_samples != calibration$n_samples) {
    abort_input("calibration", sprintf("was fitted at level %g with %d samples; the imputation has level %g and %d.",
                                       calibration$level, calibration$n_samples, imputation$level,
                                       imputation$n_samples))
  }
  if (!is.null(imputation$calibration)) abort_input("imputation", "is already calibrated.")
  if (inherits(calibration, "ditimpute_series_calibration")) return(apply_series_calibration(imputation, calibration))
  differs <- imputation_settings_differ(calibration$settings, imputation$options)
  if (!is.null(differs)) {
    abort_input("calibration", sprintf(paste("was fitted on imputations with %s; this imputation used %s. The factors",
                                             "hold for the sampler they were fitted with: impute with its settings",
                                             "(impute() on the calibration does), or calibrate again."),
                                       differs[1], differs[2]))
  }
  imp <- as3(imputation)
  feats <- case_features(calibration$object, imp$missing, calibration$grouping$type)
  g <- assign_groups(calibration$grouping, feats)
  f <- calibration$factors
  row <- ifelse(g == 0, nrow(f), g)  # unseen pattern: pooled factors
  # A complete sequence (passed through) keeps its radius 0 whatever the
  # factor (an infinite one would make it NaN) and belongs to no group.
  complete <- !apply(imp$missing, 1, any)
  imp$radius <- ifelse(complete, imp$radius, imp$radius * f$region[row])
  n <- dim(imp$x)[1]
  q <- array(f$interval[row], dim(imp$x))  # case i's factor on every entry of case i
  half <- (imp$upper - imp$lower) / 2
  imp$lower <- imp$lower - q * half
  imp$upper <- imp$upper + q * half
  imp$method <- paste(imp$method, "(calibrated)")
  imp$calibration <- data.frame(sequence = seq_len(n), group = ifelse(complete, NA_character_, c(f$group)[row]))
  if (isTRUE(imputation$single)) {
    for (fld in c("lower", "upper")) imp[[fld]] <- matrix(imp[[fld]][1, , ], dim(imp$x)[2], dim(imp$x)[3],
                                                          dimnames = imp$dimnames)
    for (fld in setdiff(array_fields, c("lower", "upper"))) imp[[fld]] <- imputation[[fld]]
  }
  imp
}

# How the sampler settings of a calibration's imputations (`cal`: its
# recorded options' sampler and region) differ from an imputation's
# (`opts`): NULL when they agree, else the two descriptions. Each side's
# sampler is resolved by the core (cpp_sampler_settings(): a method's own
# default steps, the grid it runs on), so a default and the same value
# given agree. A calibration saved before the settings were recorded is not
# checked.
imputation_settings_differ <- function(cal, opts) {
  if (is.null(cal)) return(NULL)
  describe <- function(o) {
    s <- if (is.null(o$sampler)) "exact draws" else {
      r <- core_call(cpp_sampler_settings(o$sampler))
      sprintf("sampler %s (%d steps, %s grid, t0 = %g, T = %g%s)", r$method, r$steps, r$grid, r$t0, r$T,
              if (isTRUE(r$control_variate)) ", the control variate" else "")
    }
    paste0(s, if (identical(o$region, "quantile")) ", quantile regions" else "")
  }
  a <- describe(cal)
  b <- describe(opts)
  if (identical(a, b)) NULL else c(a, b)
}

#' @export
print.ditimpute_calibration <- function(x, ...) {
  check_dots(environment(), "print()", also = print_dots)
  cat(sprintf("<ditimpute_calibration> %s at level %g, %d samples, %d calibration cases, groups by %s\n", x$method,
              x$level, x$n_samples, x$n_cases, x$grouping$type))
  d <- x$diagnostics
  tab <- data.frame(group = d$group, cases = d$cases,
                    region_raw = paste(pct_text(d$region_raw), ci_text(d$region_raw_lower, d$region_raw_upper)),
                    region_calibrated = paste(pct_text(d$region_cal), ci_text(d$region_cal_lower, d$region_cal_upper)),
                    factor = c(sprintf("%.3g", x$factors$region[seq_len(nrow(d) - 1)]),
                               sprintf("%.3g", x$factors$region[nrow(x$factors)])),
                    interval_raw = pct_text(d$interval_raw), interval_calibrated = pct_text(d$interval_cal),
                    widen = sprintf("%.3g", c(x$factors$interval[seq_len(nrow(d) - 1)],
                                              x$factors$interval[nrow(x$factors)])))
  print(tab, row.names = FALSE, right = FALSE)
  cat(sprintf("Calibrated coverage by 2-fold cross-fitting%s; \"pooled\": every case with the one pooled factor.\n",
              if (any(!is.na(c(d$region_raw_lower, d$region_cal_lower)))) "; 95% Clopper-Pearson intervals in brackets" else ""))
  # The cross-fit estimates what the calibration does to new cases: say when,
  # over all cases, it moved the intervals' coverage away from the level.
  k <- nrow(d)
  if (!is.na(d$interval_raw[k]) && !is.na(d$interval_cal[k]) &&
      abs(d$interval_cal[k] - x$level) > abs(d$interval_raw[k] - x$level)) {
    cat(sprintf(paste0("Note: cross-fitted, the calibrated intervals cover %s against %s raw, further from the level",
                       " %g: %d calibration cases are too few for these factors; calibrate on more.\n"),
                trimws(pct_text(d$interval_cal[k])), trimws(pct_text(d$interval_raw[k])), x$level, as.integer(x$n_cases)))
  }
  invisible(x)
}

# Coverages as percentages and Clopper-Pearson intervals, for printing.
pct_text <- function(v) ifelse(is.na(v), "   -  ", sprintf("%5.1f%%", 100 * v))
ci_text <- function(lo, hi) ifelse(is.na(lo), "", sprintf("[%.1f, %.1f]", 100 * lo, 100 * hi))

#' @export
summary.ditimpute_calibration <- function(object, ...) {
  check_dots(environment(), "summary()")
  structure(list(diagnostics = object$diagnostics, factors = object$factors, level = object$level,
                 grouping = object$grouping$type, method = object$method),
            class = "summary.ditimpute_calibration")
}

#' @export
print.summary.ditimpute_calibration <- function(x, ...) {
  check_dots(environment(), "print()", also = print_dots)
  cat(sprintf("Calibration of %s at level %g, groups by %s\n", x$method, x$level, x$grouping))
  print(x$diagnostics, row.names = FALSE, digits = 3)
  cat("Factors (radius scale, interval widening in half-widths):\n")
  print(x$factors, row.names = FALSE, digits = 4)
  invisible(x)
}

#' @export
plot.ditimpute_calibration <- function(x, ...) {
  check_dots(environment(), "plot()")
  d <- x$diagnostics
  df <- rbind(
    data.frame(group = d$group, when = "raw", coverage = d$region_raw, lower = d$region_raw_lower,
               upper = d$region_raw_upper),
    data.frame(group = d$group, when = "calibrated", coverage = d$region_cal, lower = d$region_cal_lower,
               upper = d$region_cal_upper))
  df$when <- factor(df$when, levels = c("raw", "calibrated"))
  drawn(ggplot2::ggplot(df, ggplot2::aes(x = .data$group, y = .data$coverage, colour = .data$when)) +
    ggplot2::geom_hline(yintercept = x$level, linetype = 2) +
    ggplot2::geom_pointrange(ggplot2::aes(ymin = .data$lower, ymax = .data$upper),
                             position = ggplot2::position_dodge(width = 0.4)) +
    ggplot2::labs(x = NULL, y = "region coverage of held-out truths", colour = NULL,
                  title = sprintf("Coverage per group at nominal %g%%", 100 * x$level)) +
    ggplot2::scale_colour_manual(values = coverage_colours, name = NULL) +
    plot_theme() + ggplot2::theme(axis.text.x = ggplot2::element_text(angle = 20, hjust = 1)))
}
