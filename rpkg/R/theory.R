# The paper's theory made computable (sections 4-5): distribution error of a
# sampled imputation against the exact law, the distribution-shift
# coefficient of a trained DiT, and the factors of Theorems 1-2 per pattern.

#' Distance between an imputation's samples and the exact conditional law
#'
#' Measures, sequence by sequence, how far the samples of a sampled imputation
#' are from the exact conditional law `N(mu_cond, Sigma_cond)` of the missing
#' values given the observed ones under a known Gaussian process: the left
#' side of the paper's Theorem 1, measured.
#'
#' Statistics per sequence (`m` missing values, `Z` samples with mean `mhat`
#' and covariance `S`):
#' * `w2`: the 2-Wasserstein distance between the samples' Gaussian fit
#'   `N(mhat, S)` and the exact law, in closed form; `w2_mean = ||mhat - mu||`
#'   is its mean part;
#' * `mahalanobis`: `||Sigma_cond^{-1/2} (mhat - mu)||`, the mean error in the
#'   conditional metric (about `sqrt(m / Z)` for exact samples);
#' * `kl`: `KL(N(mhat, S) || N(mu, Sigma_cond))` (infinite when `Z <= m`);
#'   `sqrt(kl / 2)` bounds the total variation of Theorem 1 for the Gaussian fit;
#' * the covariance ratio spectrum, the eigenvalues of
#'   `Sigma_cond^{-1/2} S Sigma_cond^{-1/2}` (`ratio_min`, `ratio_max`,
#'   `ratio_mean`; all of them in `attr(, "cov_ratio")`): 1 for the exact law,
#'   below 1 where the samples are under-dispersed, above 1 where over;
#' * `energy`: the energy distance (an unbiased U-statistic) between the
#'   whitened samples `Sigma_cond^{-1/2} (x - mu)` and `n_ref` whitened exact
#'   draws; it assumes nothing about the samples' shape and is 0 on average
#'   for exact samples.
#'
#' Monte Carlo error: every statistic is also computed for `Z` fresh exact
#' draws against the same exact reference (columns ending in `_null`): one
#' draw from the statistic's distribution for a perfect sampler with this
#' `Z`. The differences statistic - null have mean 0 for exact samples;
#' `print()` and `summary()` report their mean over sequences with a standard
#' error.
#'
#' @param object A sampled imputation ([impute()] with `n_samples >= 2`,
#'   [calibrate()]d or not), or an `n_samples x H x d` array of completed
#'   sequences ([dit_sample()], [oracle_sample()], [gp_sample_conditional()])
#'   with `x` giving the sequence.
#' @param spec The [gp_spec()] the data came from.
#' @param x For an array `object`: the `H x d` sequence with `NA` on the
#'   missing entries (an input error with an imputation, which holds its own).
#' @param n_ref Exact reference draws per sequence for the energy distance
#'   (default: as many as the samples).
#' @param seed Optional seed; without one, [set.seed()] makes results repeatable.
#' @param threads CPU threads (default: the process's budget, see [threads]: option `ditimpute.threads`, `DITIMPUTE_THREADS`, 1 in a worker or when busy cores would make spinning threads collide, else all cores).
#' @return A data frame of class `ditimpute_distribution_error`, one row per
#'   sequence: `sequence`, `pattern` (an integer per distinct missing pattern),
#'   `Z`, `m`, `kappa_cond`, the statistics above and their `_null` twins.
#'   A complete sequence of the imputation (no missing value, which
#'   [impute()] passes through) has no law to compare: its row has `m = 0`
#'   and `NA` for `pattern`, `kappa_cond` and every statistic, as
#'   [coverage()] gives it `NA`, and the summaries leave it out.
#'   Methods: `print()`, `summary()` (means by pattern and overall, each with
#'   the null's mean and the standard error of the difference, over the
#'   sequences with a missing value), `plot()` (the covariance ratio
#'   spectra).
#' @seealso [distribution_shift()], [bound_factors()]
#' @examples
#' spec <- gp_spec(24, d = 2, kernel = gp_kernel("laplace", lengthscale = 10))
#' x <- gp_simulate(spec, 5, seed = 1)
#' x[, 10:13, ] <- NA
#' imp <- impute(spec, x, n_samples = 100, sampler = "euler", steps = 30, seed = 2, threads = 1)
#' de <- distribution_error(imp, spec, seed = 3, threads = 1)
#' de
#' plot(de)
#' @export
distribution_error <- function(object, spec, x = NULL, n_ref = NULL, seed = NULL, threads = NULL) {
  check_spec(spec)
  if (inherits(object, "ditimpute_imputation")) {
    # the imputation holds its sequences: an `x` here was silently unused (a review)
    if (!is.null(x)) abort_input("x", "is for an array of samples; an imputation holds its own sequences.")
    object <- as3(object)
    arr <- object$x
    samples <- object$samples
    if (is.null(samples) || any(vapply(samples, is.null, TRUE))) {
      abort_input("object", "has no samples (a deterministic imputation): there is no law to compare.")
    }
  } else if (is.numeric(object) && length(dim(object)) == 3) {
    if (is.null(x)) abort_input("x", "give the sequence (H x d, NA where missing) that the samples complete.")
    seqs <- as_sequences(x, spec$H, spec$d)
    if (!seqs$single) abort_input("x", "must be one sequence (an H x d matrix) for an array of samples.")
    if (dim(object)[2] != spec$H || dim(object)[3] != spec$d) {
      abort_input("object", sprintf("must be an n_samples x %d x %d array of completed sequences.", spec$H, spec$d))
    }
    arr <- seqs$arr
    samples <- list(missing_values(object, is.na(arr[1, , ])))
  } else {
    abort_input("object", "must be an imputation from impute() or an n_samples x H x d array of samples.")
  }
  if (dim(arr)[2] != spec$H || dim(arr)[3] != spec$d) {
    abort_input("spec", sprintf("is for H = %d, d = %d; the data are %d x %d.", spec$H, spec$d, dim(arr)[2],
                                dim(arr)[3]))
  }
  Z <- vapply(samples, nrow, 1L)
  n_ref <- if (is.null(n_ref)) max(Z) else check_count(n_ref, min = 2)
  res <- core_call(cpp_distribution_error(spec$Gamma, spec$Lambda, spec$mean, arr, samples, n_ref,
                                          resolve_seed(seed), resolve_threads(threads)))
  miss <- is.na(arr)
  # A complete sequence (which impute() passes through) has no law to
  # compare: no pattern, NA statistics (the core's NaN), and the summaries
  # leave it out, as coverage() gives it NA.
  gappy <- apply(miss, 1, any)
  keys <- vapply(seq_len(dim(arr)[1]), function(i) paste(which(miss[i, , ]), collapse = ","), "")
  pattern <- match(keys, unique(keys[gappy]))  # 1, 2, ... in order of appearance; NA for a complete one
  kappa <- rep(NA_real_, length(pattern))
  kappa[gappy] <- vapply(seq_len(max(pattern, na.rm = TRUE)), function(p) kappa_cond(spec, miss[match(p, pattern), , ]),
                         0)[pattern[gappy]]
  stats <- c("w2", "w2_mean", "mahalanobis", "kl", "energy")
  na_nan <- function(v) replace(v, is.nan(v), NA)
  ratio_cols <- function(r) {
    one <- function(f) vapply(r, function(v) if (length(v)) f(v) else NA_real_, 0)
    data.frame(ratio_min = one(min), ratio_max = one(max), ratio_mean = one(mean))
  }
  s <- cbind(as.data.frame(lapply(res$samples[stats], na_nan)), ratio_cols(res$samples$cov_ratio))
  nl <- cbind(as.data.frame(lapply(res$null[stats], na_nan)), ratio_cols(res$null$cov_ratio))
  names(nl) <- paste0(names(nl), "_null")
  out <- cbind(data.frame(sequence = seq_along(Z), pattern = pattern, Z = res$Z, m = res$m, kappa_cond = kappa),
               s, nl)
  attr(out, "cov_ratio") <- res$samples$cov_ratio
  attr(out, "cov_ratio_null") <- res$null$cov_ratio
  attr(out, "method") <- if (inherits(object, "ditimpute_imputation")) object$method else "samples"
  class(out) <- c("ditimpute_distribution_error", "data.frame")
  out
}

# Mean of each statistic, of its null twin, and the paired difference with
# its standard error, over the rows given.
error_table <- function(x, rows) {
  stats <- c("w2", "mahalanobis", "kl", "energy", "ratio_min", "ratio_max")
  one <- function(s) {
    v <- x[[s]][rows]
    v0 <- x[[paste0(s, "_null")]][rows]
    dlt <- v - v0
    se <- if (length(dlt) > 1) stats::sd(dlt) / sqrt(length(dlt)) else NA_real_
    c(mean(v), mean(v0), mean(dlt), se)
  }
  vals <- vapply(stats, one, numeric(4))
  out <- data.frame(sequences = length(rows), kappa_cond = mean(x$kappa_cond[rows]))
  for (s in stats) {
    out[[s]] <- vals[1, s]
    out[[paste0(s, "_null")]] <- vals[2, s]
    out[[paste0(s, "_excess")]] <- vals[3, s]
    out[[paste0(s, "_se")]] <- vals[4, s]
  }
  out
}

#' @export
summary.ditimpute_distribution_error <- function(object, ...) {
  check_dots(environment(), "summary()")
  # Complete sequences (pattern NA, statistics NA) have no law: left out.
  scored <- which(!is.na(object$pattern))
  groups <- split(scored, object$pattern[scored])
  tab <- do.call(rbind, lapply(groups, function(r) error_table(object, r)))
  tab <- cbind(pattern = as.integer(names(groups)), tab)
  structure(list(table = tab, overall = error_table(object, scored),
                 method = attr(object, "method")),
            class = "summary.ditimpute_distribution_error")
}

#' @export
print.summary.ditimpute_distribution_error <- function(x, ...) {
  check_dots(environment(), "print()", also = print_dots)
  cat(sprintf("<distribution error> %s against the exact conditional law\n", x$method))
  show <- function(t, label) {
    # One sequence has no standard error of the excess: none is printed.
    f <- function(s) sprintf("%.3g (null %.3g, excess %.3g%s)", t[[s]], t[[paste0(s, "_null")]],
                             t[[paste0(s, "_excess")]],
                             if (is.na(t[[paste0(s, "_se")]])) "" else sprintf(" +/- %.2g", t[[paste0(s, "_se")]]))
    cat(sprintf("%s: %d sequence%s, kappa_cond %.3g\n", label, t$sequences, if (t$sequences == 1) "" else "s",
                t$kappa_cond))
    cat(sprintf("  W2 %s\n  Mahalanobis %s\n  energy %s\n  covariance ratios %.3g to %.3g (null %.3g to %.3g)\n",
                f("w2"), f("mahalanobis"), f("energy"), t$ratio_min, t$ratio_max, t$ratio_min_null,
                t$ratio_max_null))
  }
  if (nrow(x$table) > 1) for (k in seq_len(nrow(x$table))) show(x$table[k, ], sprintf("pattern %d", x$table$pattern[k]))
  show(x$overall, "all")
  cat(sprintf("(null = the same statistic for exact draws of the same size; excess = mean difference%s)\n",
              if (x$overall$sequences > 1) " +/- its standard error" else ", no standard error from one sequence"))
  invisible(x)
}

#' @export
print.ditimpute_distribution_error <- function(x, ...) {
  check_dots(environment(), "print()", also = print_dots)
  print(summary(x))
  invisible(x)
}

#' @export
plot.ditimpute_distribution_error <- function(x, ...) {
  r <- attr(x, "cov_ratio")
  r0 <- attr(x, "cov_ratio_null")
  m <- max(lengths(r))
  ylim <- range(c(unlist(r), unlist(r0)))
  ylim[1] <- max(ylim[1], 1e-3)
  graphics::plot(NA, xlim = c(1, m), ylim = ylim, log = "y", xlab = "direction (ascending)",
                 ylab = "covariance ratio (samples / exact)", main = "Covariance ratio spectra", ...)
  for (v in r0) graphics::lines(seq_along(v), pmax(v, ylim[1]), col = "grey75")
  for (v in r) graphics::lines(seq_along(v), pmax(v, ylim[1]), col = "steelblue")
  graphics::abline(h = 1, lty = 2)
  graphics::legend("topleft", c("samples", "exact draws, same size"), col = c("steelblue", "grey75"), lty = 1,
                   bty = "n")
  invisible(x)
}

#' Distribution-shift coefficient of a trained DiT
#'
#' Estimates the paper's distribution-shift coefficient (section 5,
#' Definition 1) between a test sequence's observed values and the training
#' distribution of a DiT, `DS(P_{x*_obs}, P_{x_obs}; G) = sup_g g(x*_obs) /
#' E_{x_obs ~ P_train} g(x_obs)`, with `G` approximated through the trained
#' network's own expected loss, `g(y) = E_{x_miss | y} l(x_miss, y; s_hat)`
#' (the paper's eq. 14 loss at the fitted score): one member of `G`, so the
#' estimate is a lower bound of the supremum, and the member Corollary 1
#' applies to.
#'
#' `g` is estimated by Monte Carlo in the C++ core: for each sequence, `K`
#' replicates of `x_miss` drawn from the exact conditional law given its
#' observed values (`spec`), a time `t` log-uniform on the model's `[t0, T]`
#' and Gaussian noise; the denominator averages `g` over `n_reference`
#' training-distribution cases (fresh sequences from `spec` masked by the
#' model's training strategy) unless `reference` gives them. The same `seed`
#' gives every model the same draws (common random numbers), so the ratio of
#' two models' coefficients ([shift_ratio()]) is much less noisy than each.
#'
#' Two versions of `g`: `"loss"`, the denoising loss itself (what the network
#' was trained on, as in the paper), and `"excess"`, the same loss with the
#' noise replaced by its conditional expectation given the noisy state (the
#' exact score, eq. 9): the score error, i.e. the loss minus the part no
#' network can remove. The loss version is diluted by that irreducible part;
#' the excess version shows the network's own error.
#'
#' @param object A fitted DiT ([dit_fit()]).
#' @param x Test sequences (`n x H x d` array or one `H x d` matrix) with `NA`
#'   on the missing entries.
#' @param spec The [gp_spec()] of the data.
#' @param reference Training-distribution cases (an array with `NA` on the
#'   masked entries), or `NULL` to draw `n_reference` of them.
#' @param n_reference Reference cases to draw when `reference` is `NULL`.
#' @param K Monte Carlo replicates per sequence.
#' @param weight `"eps"` (the noise-prediction loss the DiT is trained on,
#'   eq. 13) or `"score"` (eq. 14's `||s - target||^2` integrated in `t`).
#' @param strategy The training strategy for the reference cases (default:
#'   the model's, as [dit_fit()] records it; a model read by [dit_load()]
#'   does not know it).
#' @param level Confidence level of the intervals.
#' @param seed Optional seed; without one, [set.seed()] makes results repeatable.
#' @param threads CPU threads (default: the process's budget, see [threads]: option `ditimpute.threads`, `DITIMPUTE_THREADS`, 1 in a worker or when busy cores would make spinning threads collide, else all cores).
#' @return An object of class `ditimpute_shift`: `sequences` (a data frame per
#'   test sequence: `loss`, `loss_se`, `excess`, `excess_se`, `ds_loss`,
#'   `ds_excess`), `reference` (the reference cases' `loss` and `excess`),
#'   `summary` (mean coefficient of each type with a bootstrap interval over
#'   test and reference cases), `seed`, `x`. A complete sequence of `x` (no
#'   missing value, which [impute()] passes through) has no loss to measure:
#'   its row of `sequences` is `NA`, and it enters neither the means nor the
#'   bootstrap (nor, in `reference`, the denominator); every sequence
#'   complete is an input error.
#' @seealso [shift_ratio()], [distribution_error()]
#' @examplesIf torch_available()
#' spec <- gp_spec(24, d = 2, kernel = gp_kernel("laplace", lengthscale = 8))
#' fit <- dit_fit(gp_simulate(spec, 100, seed = 1),
#'                dit_config(24, 2, width = 32, depth = 1, heads = 2),
#'                strategy = mask_strategy("6x1"), steps = 10, batch_size = 16, seed = 1, threads = 1,
#'                progress = FALSE)
#' x <- gp_simulate(spec, 5, seed = 2)
#' x[, 19:24, ] <- NA
#' distribution_shift(fit, x, spec, n_reference = 20, K = 4, seed = 3, threads = 1)
#' @export
distribution_shift <- function(object, x, spec, reference = NULL, n_reference = 200, K = 16,
                               weight = c("eps", "score"), strategy = NULL, level = 0.95, seed = NULL,
                               threads = NULL) {
  object <- check_dit(object)
  check_spec(spec)
  cfg <- object$config
  if (spec$H != cfg$H || spec$d != cfg$d) {
    abort_input("spec", sprintf("is for H = %d, d = %d; the model for %d x %d.", spec$H, spec$d, cfg$H, cfg$d))
  }
  test <- prepare_cases(x, cfg$H, cfg$d, what = "the model was trained for")
  K <- check_count(K)
  weight <- check_string(weight, c("eps", "score"))
  level <- check_level(level)
  seed <- resolve_seed(seed)
  threads <- resolve_threads(threads)
  if (is.null(reference)) {
    strategy <- model_strategy(strategy, object)
    n_reference <- check_count(n_reference, min = 2)
    reference <- gp_simulate(spec, n_reference, seed = sub_seed(seed, 1))
    reference[draw_masks(strategy, n_reference, cfg$H, cfg$d, seed = sub_seed(seed, 2))] <- NA
  }
  ref <- prepare_cases(reference, cfg$H, cfg$d, what = "the model was trained for", arg = "reference")
  if (sum(apply(is.na(ref$arr), 1, any)) < 2) abort_input("reference", "needs at least 2 cases with a missing value.")
  risk <- function(arr, s) {
    r <- as.data.frame(core_call(cpp_denoising_risk(dit_ptr(object), spec$Gamma, spec$Lambda, spec$mean, arr, K,
                                                    weight, s, threads)))
    r[] <- lapply(r, function(v) replace(v, is.nan(v), NA))  # a complete sequence: no loss (the core's NaN)
    r
  }
  # A complete sequence (no missing value, which impute() passes through)
  # has no loss to measure: NA in its row of `sequences`, and it is no case
  # of the means, the bootstrap or the reference.
  g <- risk(test$arr, seed)
  g_ref <- risk(ref$arr, sub_seed(seed, 3))
  g_ref <- g_ref[!is.na(g_ref$loss), , drop = FALSE]
  rownames(g_ref) <- NULL
  g$ds_loss <- g$loss / mean(g_ref$loss)
  g$ds_excess <- g$excess / mean(g_ref$excess)
  g <- cbind(sequence = seq_len(nrow(g)), g)
  boot <- shift_bootstrap(list(g[!is.na(g$loss), , drop = FALSE]), list(g_ref),
                          function(gs, rs, type) mean(gs[[1]][[type]]) / mean(rs[[1]][[type]]), level,
                          sub_seed(seed, 4))
  structure(list(sequences = g, reference = g_ref, summary = boot, K = K, weight = weight, seed = seed,
                 x = test$arr, level = level),
            class = "ditimpute_shift")
}

# Point estimates and percentile bootstrap intervals of stat(tests,
# references, type) for type "loss" and "excess", resampling each test set and
# each reference set independently (paired test sets are resampled together,
# as their rows are the same sequences).
shift_bootstrap <- function(tests, refs, stat, level, seed, n_boot = 2000) {
  n_t <- nrow(tests[[1]])
  with_local_seed(seed, {
    out <- lapply(c("loss", "excess"), function(type) {
      est <- stat(tests, refs, type)
      b <- vapply(seq_len(n_boot), function(r) {
        it <- sample.int(n_t, n_t, replace = TRUE)
        rs <- lapply(refs, function(g) g[sample.int(nrow(g), nrow(g), replace = TRUE), , drop = FALSE])
        stat(lapply(tests, function(g) g[it, , drop = FALSE]), rs, type)
      }, 0)
      q <- stats::quantile(b, c((1 - level) / 2, (1 + level) / 2), names = FALSE)
      data.frame(type = type, estimate = est, lower = q[1], upper = q[2])
    })
    do.call(rbind, out)
  })
}

#' @export
print.ditimpute_shift <- function(x, ...) {
  check_dots(environment(), "print()", also = print_dots)
  n <- sum(!is.na(x$sequences$loss))  # NA: a complete sequence, no loss
  cat(sprintf("<ditimpute_shift> %d test sequences, %d reference cases, K = %d, weight \"%s\"\n",
              n, nrow(x$reference), x$K, x$weight))
  s <- x$summary
  for (k in seq_len(nrow(s))) {
    cat(sprintf("  DS (%s): %.3g, %g%% CI [%.3g, %.3g]\n", s$type[k], s$estimate[k], 100 * x$level, s$lower[k],
                s$upper[k]))
  }
  invisible(x)
}

#' Ratio of two models' distribution-shift coefficients on the same test set
#'
#' The paper (section 6.1) compares a DiT trained with random masks (S1) and
#' one trained with mixed masks (S4) on test sequences with the tail pattern
#' P1 through the average over test sequences of `DS_a / DS_b`. Both
#' coefficients must come from [distribution_shift()] on the same test
#' sequences with the same seed (so they share their Monte Carlo draws).
#'
#' @param a,b Results of [distribution_shift()].
#' @param type `"loss"` or `"excess"` (see [distribution_shift()]).
#' @param level Confidence level of the bootstrap interval.
#' @param seed Optional seed for the bootstrap.
#' @return A data frame of class `ditimpute_shift_ratio` with two rows:
#'   `mean of ratios` (the paper's average of per-sequence ratios) and
#'   `ratio of means`, each with `estimate`, `lower`, `upper` (percentile
#'   bootstrap over test sequences and both reference sets).
#' @examplesIf torch_available()
#' spec <- gp_spec(24, d = 2, kernel = gp_kernel("laplace", lengthscale = 8))
#' train <- gp_simulate(spec, 100, seed = 1)
#' cfg <- dit_config(24, 2, width = 32, depth = 1, heads = 2)
#' f1 <- dit_fit(train, cfg, strategy = mask_strategy("6x1"), steps = 10, batch_size = 16, seed = 1,
#'               threads = 1, progress = FALSE)
#' f2 <- dit_fit(train, cfg, strategy = mask_strategy("1x6"), steps = 10, batch_size = 16, seed = 1,
#'               threads = 1, progress = FALSE)
#' x <- gp_simulate(spec, 5, seed = 2)
#' x[, 19:24, ] <- NA
#' a <- distribution_shift(f1, x, spec, n_reference = 20, K = 4, seed = 3, threads = 1)
#' b <- distribution_shift(f2, x, spec, n_reference = 20, K = 4, seed = 3, threads = 1)
#' shift_ratio(a, b, seed = 4)
#' @export
shift_ratio <- function(a, b, type = c("loss", "excess"), level = 0.95, seed = NULL) {
  if (!inherits(a, "ditimpute_shift")) abort_input("a", "must come from distribution_shift().")
  if (!inherits(b, "ditimpute_shift")) abort_input("b", "must come from distribution_shift().")
  if (!identical(dim(a$x), dim(b$x)) || !identical(is.na(a$x), is.na(b$x)) ||
      !isTRUE(all.equal(a$x[!is.na(a$x)], b$x[!is.na(b$x)]))) {
    abort_input("b", "must be computed on the same test sequences as a.")
  }
  type <- check_string(type, c("loss", "excess"))
  level <- check_level(level)
  col <- type
  per_seq <- function(ts, rs) (ts[[1]][[col]] / mean(rs[[1]][[col]])) / (ts[[2]][[col]] / mean(rs[[2]][[col]]))
  stats <- list(`mean of ratios` = function(ts, rs, tp) mean(per_seq(ts, rs)),
                `ratio of means` = function(ts, rs, tp) {
                  (mean(ts[[1]][[col]]) / mean(rs[[1]][[col]])) / (mean(ts[[2]][[col]]) / mean(rs[[2]][[col]]))
                })
  seed <- resolve_seed(seed)
  keep <- !is.na(a$sequences$loss) & !is.na(b$sequences$loss)  # complete sequences have no loss
  tests <- list(a$sequences[keep, , drop = FALSE], b$sequences[keep, , drop = FALSE])
  refs <- list(a$reference, b$reference)
  out <- do.call(rbind, lapply(names(stats), function(nm) {
    r <- shift_bootstrap(tests, refs, stats[[nm]], level, seed)
    cbind(statistic = nm, r[r$type == "loss", c("estimate", "lower", "upper")])
  }))
  rownames(out) <- NULL
  attr(out, "type") <- type
  attr(out, "level") <- level
  attr(out, "same_seed") <- identical(a$seed, b$seed)
  class(out) <- c("ditimpute_shift_ratio", "data.frame")
  out
}

#' @export
print.ditimpute_shift_ratio <- function(x, ...) {
  check_dots(environment(), "print()", also = print_dots)
  cat(sprintf("<ditimpute_shift_ratio> DS(a) / DS(b), %s version%s\n", attr(x, "type"),
              if (isTRUE(attr(x, "same_seed"))) "" else " (different seeds: no common random numbers)"))
  for (k in seq_len(nrow(x))) {
    cat(sprintf("  %s: %.3g, %g%% CI [%.3g, %.3g]\n", x$statistic[k], x$estimate[k], 100 * attr(x, "level"),
                x$lower[k], x$upper[k]))
  }
  invisible(x)
}

#' Factors of the paper's bounds for missing patterns
#'
#' For each pattern, the quantities that the paper's rates depend on, computed
#' from the process: Theorem 1's factor `sqrt(H d^2 kappa_cond^5 kappa_obs^2)`
#' (the distribution error is `O~` of it times `n^{-1/2}`), Theorem 2's
#' architecture sizes with `epsilon = n^{-1/2}` (depth `L ~ kappa_cond^2
#' kappa_obs log^3(H d kappa_cond^2 kappa_obs sqrt(n))`, `M = 4H` heads, norm
#' bounds `B ~ sqrt(H d^3)(1 + kappa_obs / sigma_t0)` and `R ~ sqrt(H d)
#' kappa_obs / sigma_t0^2` at Theorem 1's early stopping `t0 = lambda_min(Sigma_cond)
#' / sqrt(n)`), and Lemma 1's iteration counts at `t = 1`, `eps = n^{-1/2}`
#' ([lemma1_counts()]). The constants are unknown, so the columns ending in
#' `_rel` give each factor relative to the smallest over the patterns: only
#' those comparisons mean anything.
#'
#' @param spec A [gp_spec()].
#' @param patterns A list of patterns (e.g. [paper_patterns()], or anything
#'   [kappa_cond()] accepts as `missing`), named for the output.
#' @param n Training sample size used in the logarithms and `t0`.
#' @return A data frame of class `ditimpute_bounds`, one row per pattern;
#'   `plot(x, error = )` draws the relative Theorem 1 factor against measured
#'   distribution errors (a named vector, one per pattern).
#' @examples
#' spec <- gp_spec(96, d = 8, kernel = gp_kernel("laplace", lengthscale = 128))
#' bound_factors(spec, paper_patterns())
#' @export
bound_factors <- function(spec, patterns, n = 1e4) {
  check_spec(spec)
  if (inherits(patterns, "ditimpute_pattern") || !is.list(patterns) || length(patterns) == 0) {
    patterns <- list(patterns)
  }
  n <- check_number(n, lower = 0, upper = Inf)
  nms <- names(patterns)
  if (is.null(nms)) nms <- paste0("pattern ", seq_along(patterns))
  rows <- lapply(seq_along(patterns), function(k) {
    miss <- resolve_missing(patterns[[k]], spec$H, spec$d, arg = "patterns")
    b <- core_call(cpp_bound_factors(spec$Gamma, spec$Lambda, miss, n))
    l1 <- core_call(cpp_lemma1_counts(spec$Gamma, spec$Lambda, miss, 1, min(0.5, 1 / sqrt(n))))
    data.frame(pattern = nms[k], n_missing = b$n_missing, kappa_cond = b$kappa_cond, kappa_obs = b$kappa_obs,
               theorem1 = b$theorem1, depth = b$depth, heads = b$heads, norm_B = b$norm_B, norm_R = b$norm_R,
               t0 = b$t0, lemma1_K = l1$K, lemma1_K_aux = l1$K_aux)
  })
  out <- do.call(rbind, rows)
  for (col in c("theorem1", "depth", "norm_B", "norm_R")) out[[paste0(col, "_rel")]] <- out[[col]] / min(out[[col]])
  attr(out, "n") <- n
  class(out) <- c("ditimpute_bounds", "data.frame")
  out
}

#' @export
print.ditimpute_bounds <- function(x, ...) {
  check_dots(environment(), "print()", also = print_dots)
  cat(sprintf("<ditimpute_bounds> factors of Theorems 1-2 at n = %g (relative: constants unknown)\n", attr(x, "n")))
  show <- data.frame(pattern = x$pattern, kappa_cond = signif(x$kappa_cond, 4), kappa_obs = signif(x$kappa_obs, 4),
                     theorem1_rel = signif(x$theorem1_rel, 3), depth_rel = signif(x$depth_rel, 3), heads = x$heads,
                     norm_R_rel = signif(x$norm_R_rel, 3), lemma1_K = x$lemma1_K, lemma1_K_aux = x$lemma1_K_aux)
  print(show, row.names = FALSE)
  invisible(x)
}

#' @export
plot.ditimpute_bounds <- function(x, error = NULL, ylab = "measured distribution error", ...) {
  if (is.null(error)) {
    graphics::barplot(x$theorem1_rel, names.arg = x$pattern, log = "y", ylab = "Theorem 1 factor (relative)", ...)
    return(invisible(x))
  }
  if (!is.numeric(error) || length(error) != nrow(x)) {
    abort_input("error", sprintf("must be a numeric vector with one value per pattern (%d).", nrow(x)))
  }
  if (!is.null(names(error))) error <- error[x$pattern]
  graphics::plot(x$theorem1_rel, error, log = "xy", pch = 19, xlab = "Theorem 1 factor (relative)", ylab = ylab, ...)
  graphics::text(x$theorem1_rel, error, x$pattern, pos = 3)
  invisible(x)
}
