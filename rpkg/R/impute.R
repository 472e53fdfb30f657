#' Impute missing values with uncertainty
#'
#' Draws `n_samples` completions of each partly observed sequence and
#' summarises them as in the paper's Algorithm 1: a point estimate (the mean or
#' the entry-wise median of all samples), an L2-ball confidence region, and
#' per-entry intervals.
#'
#' How regions and intervals are built (`region`):
#' * the exact GP imputer (`sampler = "exact"`) knows the conditional law
#'   `N(mu, Sigma)`: the point is `mu`, the region is the ball around `mu`
#'   whose radius is the exact `level` quantile of `||X - mu||`, a weighted sum
#'   of chi-squares in the eigenvalues of `Sigma` (Imhof's inversion, accurate
#'   to 1e-9 in probability), and the intervals are `mu +/- z sd`. None of it
#'   depends on `n_samples`.
#' * every sampled imputer (a DiT, the diffusion sampler with the exact score,
#'   outside completions) with `region = "finite"` (the default): the region
#'   is centred on the mean (median) of the first half of the samples and its
#'   radius is the `ceiling((m + 1) level)`-th smallest distance to that centre
#'   of the other `m` samples; the intervals are the order statistics
#'   `[s_(a), s_(Z + 1 - a)]`, `a = floor((Z + 1)(1 - level) / 2)`. A new draw
#'   from the samples' law lies inside with probability at least `level`
#'   whatever `Z` (the split-conformal argument for exchangeable draws), so the
#'   regions are honest for the sampler's own law; [calibrate()] corrects for
#'   a sampler whose law differs from the truth. It needs `n_samples >= 37`
#'   at level 0.95 (39 for the intervals); fewer is an input error.
#' * `region = "quantile"`: the paper's in-sample construction (radius = the
#'   `level` quantile of the samples' own distances to their mean, type-7
#'   quantile intervals); it under-covers at finite `Z` (about 92-93% at a
#'   nominal 95% with `Z = 100` for the exact GP).
#'
#' Methods:
#' * a fitted DiT ([dit_fit()]): samples from the trained diffusion model;
#' * a Gaussian-process model ([gp_spec()]): the exact conditional law (the
#'   oracle imputer), drawn exactly (`sampler = "exact"`) or by the diffusion
#'   sampler driven by the exact score (`"unipc2"`, `"sde"`, ...).
#'
#' @param object A fitted DiT or a [gp_spec()].
#' @param x An `H x d` matrix with `NA` where values are missing (frame- or
#'   entry-level; with `d = 1` also a vector of the `H` values), or an `n x H x d` array of such sequences; each may have its
#'   own pattern. `NA` is the one marker of a missing value, here and in every
#'   function of the package that takes data: `NaN` and `Inf` are input errors
#'   that say where they are (set them to `NA` first if they mean missing).
#'   A sequence of an array with no missing value (a complete window) passes
#'   through: its point is its data, it has no intervals (`NA`, as every
#'   observed entry), radius 0 and an `n_samples x 0` sample matrix, it costs
#'   no draws and changes no other sequence's, and [coverage()] and
#'   [imputation_metrics()] leave it out. Every sequence complete (or a
#'   complete matrix) is an input error: there is nothing to impute.
#' @param n_samples Samples per sequence. The exact GP imputer accepts 2 or more
#'   (its regions and intervals do not use them); a sampled imputer's default
#'   finite-sample region needs 37 at level 0.95 (39 for its intervals; in
#'   general the smallest `Z` whose split leaves `m = Z - floor(Z / 2)` samples
#'   with `ceiling((m + 1) level) <= m`), the in-sample `region = "quantile"` 2.
#'   Too few is an input error naming `n_samples`. The result keeps every
#'   sample of every missing entry (8 bytes each, for [completions()],
#'   [as_mids()] and the CRPS): 4,332 windows of 96 x 7 with 20% missing and
#'   100 samples made a result of 567 MB (`bench/results/reviews_2026-12-07_session75.md`);
#'   for many windows, fewer samples, or the windows imputed in turns, keep it small.
#' @param level Confidence level in (0, 1).
#' @param ... Passed to the methods; a name the method does not take is an
#'   input error that suggests the closest one.
#' @param point `"mean"` or `"median"`: the point estimate and centre of the region.
#' @param truth Optional true values (same shape as `x`), kept for
#'   [imputation_metrics()], [coverage()] and [plot()]; `NA` where a true
#'   value is not known (the data's own gaps): those entries are imputed but
#'   not scored.
#' @param method,steps Sampler options for the DiT (see [dit_sample()]).
#' @param sampler For a Gaussian process: `"exact"` draws, or the diffusion
#'   sampler with the exact score (`"unipc2"`, `"unipc"`, `"sde"`, `"ode"`, `"euler"`,
#'   `"dpm2m"`, `"dpm2m_sde"`; see [dit_sample()]).
#' @param seed Optional seed; without one, [set.seed()] makes results
#'   repeatable. Sequence `i` draws from its own stream derived from `(seed, i)`
#'   in the C++ core, so its samples do not depend on the other sequences of
#'   the call or on how they are batched.
#' @param threads CPU threads (default: the process's budget, see [threads]: option `ditimpute.threads`, `DITIMPUTE_THREADS`, 1 in a worker or when busy cores would make spinning threads collide, else all cores).
#' @param region `"finite"` (finite-sample regions and intervals) or
#'   `"quantile"` (the paper's in-sample ones); see Details. Ignored by the
#'   exact GP imputer, whose regions are exact.
#' @return An object of class `ditimpute_imputation` with `point` (completed
#'   data, shaped like `x`), `centre` (the same with the region's centre),
#'   `lower`, `upper` (per-entry intervals shaped like `x`, `NA` on observed
#'   entries), `radius` (one per sequence), `samples` (a list of
#'   `n_samples x m` matrices of the missing entries in frame-major order),
#'   `missing`, `level`. Methods: `print()`, `summary()`, `plot()`,
#'   `confint()`, `as.data.frame()`; [completions()] extracts completed data
#'   sets; [coverage()] and [imputation_metrics()] score it.
#' @seealso [coverage()], [imputation_metrics()], [completions()]
#' @examples
#' spec <- gp_spec(48, d = 2, kernel = gp_kernel("laplace", lengthscale = 20))
#' x <- gp_simulate(spec, 1, seed = 1)[1, , ]
#' truth <- x
#' x[30:40, ] <- NA
#' imp <- impute(spec, x, n_samples = 200, seed = 2, truth = truth)
#' imp
#' head(confint(imp))
#' coverage(imp, spec = spec, seed = 3)
#' @export
impute <- function(object, x, n_samples = 100, level = 0.95, ...) UseMethod("impute")

#' @export
impute.default <- function(object, x, n_samples = 100, level = 0.95, ...) {
  abort_input("object", "must be a fitted model from dit_fit() or a Gaussian-process model from gp_spec().")
}

#' @rdname impute
#' @param device For a DiT: `"cpu"`, `"cuda"` or `"auto"` to run the network
#'   there (the model stays there for later calls); `NULL` keeps its device.
#'   Asking for `"cuda"` without a CUDA LibTorch is an input error that says
#'   what the linked LibTorch offers ([torch_backend()]).
#' @param batch_size For a DiT: the most sequences per network batch (cases
#'   are never split; `NULL` = 128 on the CPU, 4096 on CUDA, or `n_samples`
#'   when larger). All cases' samples share network batches, so many cases
#'   cost no more per sample than one. On the CPU a batch goes through the
#'   network in row chunks of at most 16,000 tokens (rows x `H`, or rows x
#'   `H` x `d` for entry tokens), which keeps its working memory small;
#'   samples are the same either way.
#' @param control_variate For a GP-informed DiT whose GP is its base
#'   (`dit_fit(gp = , gp_mode = "residual")` or `"score"`): `TRUE` uses the GP
#'   as a control variate. The sampler runs a second time with the network's
#'   correction set to zero and the same random numbers, which draws from the
#'   GP alone, whose mean (the GP's conditional mean) is known exactly; each
#'   missing entry's samples are then shifted by `beta * (mean(b) - mu)`, with
#'   `b` those GP draws, `mu` the exact mean and `beta` the entry's
#'   least-squares slope of the samples on `b`. The spread of the samples is
#'   unchanged; their mean (the point) loses the Monte Carlo error that the
#'   DiT's draws share with the GP's, about `Var / n_samples` per entry
#'   without it. An untrained GP-DiT then returns the GP's conditional mean
#'   (to float rounding). Costs one more sampling run, without the network
#'   (1.2x the imputation time on BeijingAir). `NULL` (the default) turns it
#'   on for a DiT whose GP is its base and off for any other; `TRUE` for any
#'   other DiT is an input error, and `FALSE` gives the plain sampler's
#'   point.
#' @export
impute.ditimpute_dit <- function(object, x, n_samples = 100, level = 0.95, point = c("mean", "median"),
                                 truth = NULL, method = NULL, steps = NULL, seed = NULL, threads = NULL,
                                 batch_size = NULL, region = c("finite", "quantile"), device = NULL,
                                 control_variate = NULL, ...) {
  check_dots(environment(), "impute() for a DiT")
  object <- check_dit(object)
  use_device(object, device)
  cfg <- object$config
  cases <- prepare_cases(x, cfg$H, cfg$d, what = "the model was trained for")
  check_dit_variables(object, x)
  opts <- impute_options(n_samples, level, point, seed, threads, region)
  # the scale check of dit_fit(): raw windows given to a DiT trained on
  # standardised ones were imputed near 0 without a word
  warned <- if (!isTRUE(attr(x, "ditimpute_scaled"))) warn_unscaled(cases$arr, imputing = TRUE) else FALSE
  info <- object$train_info
  if (!isTRUE(warned) && length(info$value_center) == cfg$d && length(info$value_scale) == cfg$d) {
    warn_off_scale(cases$arr, info$value_center, info$value_scale, "DiT")
  }
  warn_untrained_patterns(object, cases$arr)
  if (!is.null(batch_size)) opts$batch_size <- check_count(batch_size, arg = "batch_size")
  sopts <- sampler_options(method = method, steps = steps)
  if (is.null(control_variate)) control_variate <- isTRUE(cfg$gp %in% c("residual", "score"))
  if (check_flag(control_variate)) sopts$control_variate <- TRUE
  res <- core_call(cpp_impute_dit(dit_ptr(object), cases$arr, sopts, opts))
  new_imputation(cases, res, c(opts, list(sampler = sopts)), method = "DiT", truth = truth, model = object)
}

#' @rdname impute
#' @export
impute.ditimpute_gp <- function(object, x, n_samples = 100, level = 0.95, point = c("mean", "median"),
                                truth = NULL, sampler = c("exact", "unipc2", "unipc", "sde", "ode", "euler", "dpm2m",
                                            "dpm2m_sde"),
                                steps = NULL, seed = NULL, threads = NULL, region = c("finite", "quantile"), ...) {
  check_dots(environment(), "impute() for a Gaussian process")
  spec <- check_spec(object, arg = "object")
  cases <- prepare_cases(x, spec$H, spec$d, what = "the Gaussian process has")
  sampler <- check_string(sampler, c("exact", "unipc2", "unipc", "sde", "ode", "euler", "dpm2m", "dpm2m_sde"),
                          arg = "sampler")
  opts <- impute_options(n_samples, level, point, seed, threads, region)
  # the exact sampler draws in closed form: a step count was silently unused (a review)
  if (sampler == "exact" && !is.null(steps)) {
    abort_input("steps", "is for the diffusion samplers; the exact sampler has none: name one too, e.g. sampler = \"euler\".")
  }
  sopts <- if (sampler == "exact") NULL else sampler_options(method = sampler, steps = steps)
  warn_off_scale(cases$arr, spec$mean, sqrt(outer(pmax(diag(spec$Gamma), 0), pmax(diag(spec$Lambda), 0))), "GP")
  res <- core_call(cpp_impute_gp(spec$Gamma, spec$Lambda, spec$mean, cases$arr, sopts, opts))
  new_imputation(cases, res, c(opts, list(sampler = sopts)), truth = truth, model = object,
                 method = if (sampler == "exact") "exact GP" else sprintf("exact-score %s sampler", sampler))
}

# The options of the core's imputation pipeline, as the named list every
# entry takes (checked here so errors name the R argument).
impute_options <- function(n_samples, level, point, seed, threads, region = "finite", call = rlang::caller_env()) {
  list(n_samples = check_count(n_samples, arg = "n_samples", min = 2, call = call),
       region = check_string(region, c("finite", "quantile"), arg = "region", call = call),
       level = check_level(level, arg = "level", call = call),
       median = check_string(point, c("mean", "median"), arg = "point", call = call) == "median",
       seed = resolve_seed(seed, call = call),
       threads = resolve_threads(threads, call = call))
}

# Validates the shape of the data to impute (an H x d matrix or n x H x d
# array; the core checks that each sequence has an observed value and that
# some sequence has a missing one: a complete sequence beside others passes
# through) and keeps what the result needs to look like x.
prepare_cases <- function(x, H, d, what, arg = "x", call = rlang::caller_env()) {
  check_no_nan_inf(x, arg, call = call)  # before a data frame becomes a matrix, so the hint fits x
  if (is.data.frame(x)) x <- as.matrix(x)
  dm <- dim(x)
  if (!is.null(dm) && length(dm) %in% 2:3) {
    got <- dm[length(dm) - 1:0]
    if (got[1] != H || got[2] != d) {
      abort_input(arg, sprintf("has H = %d frames and d = %d variables, but %s H = %d and d = %d.", got[1], got[2],
                               what, H, d), call = call)
    }
  }
  seqs <- as_sequences(x, H, d, arg = arg, call = call)
  c(seqs, list(H = H, d = d, dimnames = dimnames(x)))
}

#' Build an imputation object
#'
#' The one constructor of `ditimpute_imputation` objects, used by [impute()],
#' [impute_baseline()] and [imputation_from_completions()]: it checks that
#' every field has the shape of `x` and that the point estimate keeps the
#' observed values.
#'
#' @param cases From `prepare_cases()`: `arr` (n x H x d, NA = missing),
#'   `single`, `H`, `d`, `dimnames`.
#' @param res The core's summaries: `point`, `lower`, `upper` (n x H x d),
#'   `radius` (length n) and `samples` (a list of `Z x m_i` matrices or NULLs).
#' @param opts The imputation options (`n_samples`, `level`, `median`, and
#'   for sampled imputers `seed`, `threads`, `region`, `sampler`), kept so the
#'   imputation can be redone at another level ([coverage()] with `levels`).
#' @param model The imputer (a fitted DiT or a GP spec), or NULL.
#' @noRd
new_imputation <- function(cases, res, opts, method, truth = NULL, point_type = NULL, model = NULL,
                           call = rlang::caller_env()) {
  arr <- cases$arr
  miss <- is.na(arr)
  n <- dim(arr)[1]
  same <- function(a) is.numeric(a) && identical(as.integer(dim(a)), as.integer(dim(arr)))
  if (is.null(res$centre)) res$centre <- res$point
  stopifnot(same(res$point), same(res$centre), same(res$lower), same(res$upper), length(res$radius) == n,
            length(res$samples) == n, !anyNA(res$point))
  obs <- !miss
  stopifnot(all(res$point[obs] == arr[obs]))
  if (!is.null(truth)) truth <- check_truth(truth, list(arr = arr, miss = miss), call = call)
  out <- list(x = arr, missing = miss, point = res$point, centre = res$centre, lower = res$lower, upper = res$upper,
              radius = as.numeric(res$radius), samples = res$samples, level = opts$level,
              point_type = if (is.null(point_type)) (if (isTRUE(opts$median)) "median" else "mean") else point_type,
              method = method, n_samples = as.integer(opts$n_samples), truth = truth, single = cases$single,
              dimnames = cases$dimnames, options = opts, model = model)
  if (cases$single) {
    # Give back the caller's shape: H x d matrices for one sequence.
    for (f in array_fields) {
      if (!is.null(out[[f]])) out[[f]] <- matrix(out[[f]][1, , ], cases$H, cases$d, dimnames = cases$dimnames)
    }
  } else if (length(cases$dimnames) == 3) {
    # and an array's names (a user review: point lost the variables' names
    # that as.data.frame() kept)
    for (f in array_fields) if (!is.null(out[[f]])) dimnames(out[[f]]) <- cases$dimnames
  }
  structure(out, class = "ditimpute_imputation")
}

# Frame-major positions of the missing entries of one H x d pattern: a
# two-column (frame, variable) matrix in the order of the core's vec index
# h * d + j, the order of every sample matrix.
missing_index <- function(miss) {
  idx <- which(t(miss)) - 1L
  cbind(idx %/% ncol(miss) + 1L, idx %% ncol(miss) + 1L)
}

# Values of the missing entries of each sample: Z x H x d array -> Z x m.
missing_values <- function(samples, miss) {
  ij <- missing_index(miss)
  vapply(seq_len(nrow(ij)), function(k) samples[, ij[k, 1], ij[k, 2]], numeric(dim(samples)[1]))
}

array_fields <- c("x", "missing", "point", "centre", "lower", "upper", "truth")

# The imputation with every data field as an n x H x d array (n = 1 for a
# single sequence), the form all summaries work on.
as3 <- function(object) {
  if (!isTRUE(object$single)) return(object)
  for (f in array_fields) {
    if (length(dim(object[[f]])) == 2) object[[f]] <- array(object[[f]], c(1L, dim(object[[f]])))
  }
  object
}

check_truth <- function(truth, cases, arg = "truth", call = rlang::caller_env()) {
  if (!is.numeric(truth)) abort_input(arg, "must be numeric, shaped like x.", call = call)
  check_no_nan_inf(truth, arg, call = call)
  dc <- dim(cases$arr)
  # one variable: the vector of one sequence's H values, as x may be (a review)
  if (is.null(dim(truth)) && dc[1] == 1 && dc[3] == 1 && length(truth) == dc[2]) truth <- matrix(truth, dc[2], 1)
  arr <- if (length(dim(truth)) == 2) array(as.numeric(truth), c(1L, dim(truth))) else truth
  if (!identical(as.integer(dim(arr)), as.integer(dim(cases$arr)))) {
    abort_input(arg, sprintf("must have the same shape as x (%s).", paste(dim(cases$arr), collapse = " x ")), call = call)
  }
  # NA: a true value not known (a gap of the data's own), not scored.
  if (!any(!is.na(arr[cases$miss]))) {
    abort_input(arg, "has no value at a missing entry of x: nothing to score (NA marks a true value not known).",
                call = call)
  }
  warn_truth_differs(arr, cases$arr, cases$miss, arg)
  storage.mode(arr) <- "double"
  arr
}

# A warning when `truth` disagrees with x where x is observed (beyond 1e-7 of
# x's largest magnitude): truth is read as x's complete version and only x's
# missing entries are scored, so a different series (shifted, rescaled, of
# another variable) would be scored silently. Not an error: a simulation
# study may pass noise-free signals as the truth of noisy observations.
warn_truth_differs <- function(truth, x, miss, arg = "truth") {
  obs <- !miss & !is.na(truth) & !is.na(x)
  if (!any(obs)) return(invisible())
  diff <- abs(truth[obs] - x[obs])
  tol <- 1e-7 * max(abs(x[obs]))
  bad <- diff > tol
  if (!any(bad)) return(invisible())
  rlang::warn(sprintf(paste("`%s` differs from `x` at %d of the %d entries observed in both (by up to %s): it is read",
                            "as the complete version of `x`, and only the missing entries of `x` are scored; check that",
                            "it is the same series on the same scale."),
                      arg, sum(bad), sum(obs), format(signif(max(diff), 3))))
}

# Shapes an n x H x d array back like the caller's x.
as_user_shape <- function(object, arr) {
  if (object$single) matrix(arr[1, , ], dim(arr)[2], dim(arr)[3], dimnames = object$dimnames) else arr
}

#' @export
print.ditimpute_imputation <- function(x, ...) {
  check_dots(environment(), "print()", also = print_dots)
  x <- as3(x)
  n <- dim(x$x)[1]
  cat(sprintf("<ditimpute_imputation> %s, %d sequence%s of %d x %d, %d sample%s each\n", x$method, n,
              if (n == 1) "" else "s", dim(x$x)[2], dim(x$x)[3], x$n_samples, if (x$n_samples == 1) "" else "s"))
  m <- apply(x$missing, 1, sum)
  cat(sprintf("  missing entries per sequence: %s\n", if (length(unique(m)) == 1) m[1] else
    sprintf("%d to %d", min(m), max(m))))
  if (!is.null(x$unscaled) && any(is.finite(x$upper))) {
    # per variable: the variables' units differ
    w <- apply(x$upper - x$lower, 3, function(v) if (any(!is.na(v))) mean(v, na.rm = TRUE) else NA_real_)
    cat(sprintf("  point estimate: %s; mean %g%% interval width in the data's units (unscale_data()): %s\n",
                x$point_type, 100 * x$level, paste(sprintf("%s %.3g", variable_names(x), w), collapse = ", ")))
    cat("  no L2-ball region (a ball only on the standardised scale)\n")
  } else if (all(is.na(x$radius))) {
    # A deterministic imputer (one completion) has no region and no intervals.
    cat(sprintf("  point estimate: %s; no confidence region or intervals (one completion per sequence)\n",
                x$point_type))
  } else {
    # A complete sequence (passed through: radius 0, no intervals) has no
    # region to describe: the range is over the sequences with a gap.
    gappy <- m > 0
    cat(sprintf("  point estimate: %s; %g%% L2-ball radius: %s; mean %g%% interval width: %.3g\n", x$point_type,
                100 * x$level, format_range(x$radius[gappy]), 100 * x$level, mean(x$upper - x$lower, na.rm = TRUE)))
    cat(sprintf("  regions and intervals: %s\n", region_kind(x)))
  }
  if (!is.null(x$truth)) {
    met <- imputation_metrics(x, by = "all")
    cover <- met$interval_coverage
    cat(sprintf("  against the truth: MSE %.4g, MAE %.4g, CRPS %.4g%s\n", met$mse, met$mae,
                met$crps, if (is.na(cover)) "" else sprintf(", interval coverage %.1f%%", 100 * cover)))
  }
  invisible(x)
}

# How the imputation's regions were built, in words.
region_kind <- function(x) {
  kind <- if (inherits(x$model, "ditimpute_gp") && !is.null(x$options) && is.null(x$options$sampler)) {
    "exact (closed form from the conditional law)"
  } else if (identical(x$method, "exact GP (state space)")) {
    "exact intervals (mean +/- z sd); region radius from exact conditional draws"
  } else if (identical(x$options$region, "quantile")) {
    "in-sample quantiles of the samples (the paper's Algorithm 1; under-cover at finite n_samples)"
  } else {
    "finite-sample (split region, order-statistic intervals)"
  }
  if (!is.null(x$calibration)) kind <- paste(kind, "+ conformal calibration per group")
  kind
}

format_range <- function(v) if (length(v) == 1) sprintf("%.3g", v) else sprintf("%.3g to %.3g", min(v), max(v))

# The summary's table, one row per sequence, as print() shows it (for
# knitr::kable() in a report: a review found it "cannot coerce").
#' @export
as.data.frame.summary.ditimpute_imputation <- function(x, row.names = NULL, optional = FALSE, ...) {
  check_dots(environment(), "as.data.frame()", valid = c("row.names", "optional", "stringsAsFactors"))
  tab <- data.frame(sequence = seq_len(x$n), missing = x$n_missing)
  if (any(is.finite(x$width))) tab <- cbind(tab, radius = x$radius, interval_width = x$width)
  if (!is.null(x$metrics)) tab <- cbind(tab, x$metrics[, c("mse", "mae", "crps", "interval_coverage")])
  tab
}

#' @export
summary.ditimpute_imputation <- function(object, ...) {
  check_dots(environment(), "summary()")
  object <- as3(object)
  n_missing <- apply(object$missing, 1, sum)
  # A complete sequence (passed through) has no interval: NA width (not the
  # NaN of a mean over none), as its metrics and coverage are NA.
  width <- apply(object$upper - object$lower, 1, function(w) if (any(!is.na(w))) mean(w, na.rm = TRUE) else NA_real_)
  out <- list(method = object$method, n = dim(object$x)[1], H = dim(object$x)[2], d = dim(object$x)[3],
              n_samples = object$n_samples, level = object$level, point_type = object$point_type,
              radius = object$radius, n_missing = n_missing, width = width,
              metrics = if (!is.null(object$truth)) imputation_metrics(object))
  structure(out, class = "summary.ditimpute_imputation")
}

#' @export
print.summary.ditimpute_imputation <- function(x, ...) {
  check_dots(environment(), "print()", also = print_dots)
  cat(sprintf("Imputation by %s: %d sequence(s) of %d frames x %d variables, %d samples each\n", x$method, x$n,
              x$H, x$d, x$n_samples))
  intervals <- any(is.finite(x$width))
  cat(sprintf("Point estimate: %s. %s\n", x$point_type,
              if (intervals) sprintf("Confidence level: %g%%.", 100 * x$level) else "No intervals or region (deterministic)."))
  tab <- as.data.frame(x)
  print(utils::head(tab, 10), row.names = FALSE, digits = 4)
  if (x$n > 10) cat(sprintf("... %d more sequences\n", x$n - 10))
  invisible(x)
}

#' Confidence intervals of imputed values
#'
#' Per-entry equal-tailed intervals of the missing entries. At the
#' imputation's own level they are the intervals it holds: exact (`mean +/- z
#' sd`, or its image on the data's scale) for a Gaussian process, [gp_smooth()]
#' and [impute_series()], the samples' finite-sample intervals for a sampler.
#' At another level an [impute_series()] result of `method = "gp"` gives its
#' Gaussian law's intervals at that level (see `level`), and so does an
#' [impute()] of a Gaussian process with its exact sampler (mean +/- z sd at
#' the new level); other imputations
#' are rebuilt from the samples as [impute()] builds a sampler's: the order statistics `s_(a)` and `s_(Z + 1 - a)`, `a =
#' floor((Z + 1)(1 - level) / 2)`, which hold the level for draws
#' exchangeable with the truth and are a little wide for a few samples. They
#' need `Z >= 2 / (1 - level) - 1` samples (39 at 0.95, 199 at 0.99).
#'
#' @param object An imputation from [impute()] or [impute_series()].
#' @param parm Not used: every missing entry is returned, and a `parm` other than `NULL` is an input error.
#' @param level Confidence level; by default the imputation's. At another
#'   level, an [impute_series()] result of `method = "gp"` gives the
#'   intervals of the same Gaussian law as at its own level (the fitted
#'   model's exact conditional, or with proper draws the mixture's mean and
#'   variance, as `predict()` of it does), and so does the exact imputer of
#'   [impute()] for a Gaussian process; other imputations give the sample
#'   paths' order statistics (which needs enough paths: 199 at 0.99). A calibrated imputation is
#'   calibrated at its own level only: another level is an input error
#'   (impute again at that level with the calibration).
#' @param ... Unused: a named argument here is an input error.
#' @return A data frame with one row per missing entry: `sequence`, `frame`,
#'   `variable`, `estimate`, `lower`, `upper`, ordered by sequence, frame and
#'   variable (as the rows of `as.data.frame()` of an [impute()] result,
#'   which include the observed entries). For [impute_series()]: `time` (the
#'   series' time stamps) in place of `sequence`; its `as.data.frame()` has
#'   the same rows (the imputed entries only; [completed_series()] gives the
#'   whole series).
#' @examples
#' spec <- gp_spec(24, d = 2)
#' x <- gp_simulate(spec, 1, seed = 1)[1, , ]
#' x[5:8, ] <- NA
#' confint(impute(spec, x, seed = 1), level = 0.9)
#' @export
confint.ditimpute_imputation <- function(object, parm, level = object$level, ...) {
  check_dots(environment(), "confint()")
  check_no_parm(parm)
  level <- check_level(level)
  object <- as3(object)
  lower <- object$lower
  upper <- object$upper
  if (!isTRUE(all.equal(level, object$level)) && identical(object$method, "exact GP")) {
    check_uncalibrated(object, level, "level")
    # the exact imputer's intervals are mean +/- z sd: the same Gaussian law at
    # the level asked (order statistics of its draws gave [-0.596, 1.125]
    # around -0.207 from 10 draws: a review)
    z <- stats::qnorm((1 + c(object$level, level)) / 2)
    centre <- (object$upper + object$lower) / 2
    half <- (object$upper - object$lower) / 2 * z[2] / z[1]
    lower <- centre - half
    upper <- centre + half
  } else if (!isTRUE(all.equal(level, object$level))) {
    check_uncalibrated(object, level, "level")  # the paths' intervals silently dropped it (a review)
    if (all(vapply(object$samples, is.null, TRUE))) abort_input("level", "cannot change: the imputation has no samples.")
    if (object$n_samples < cpp_min_samples(level)) {
      abort_input("level", sprintf(paste("intervals at level %g from the imputation's %d samples need at least %d of",
                                         "them: impute again at this level, or with more samples."),
                                   level, as.integer(object$n_samples), cpp_min_samples(level)))
    }
    # Intervals at another level from the same samples, by the core's one routine.
    res <- core_call(cpp_impute_samples(object$x, object$samples, list(n_samples = object$n_samples, level = level)))
    lower <- res$lower
    upper <- res$upper
  }
  H <- dim(object$x)[2]
  # One sequence's entries as an H x d matrix: with one variable, [i, , ]
  # drops to a vector, which a two-column index would read as positions
  # (every row came twice, the second with NA bounds).
  seq_matrix <- function(a, i) matrix(a[i, , ], H)
  rows <- lapply(seq_len(dim(object$x)[1]), function(i) {
    ij <- missing_index(seq_matrix(object$missing, i))
    data.frame(sequence = rep(i, nrow(ij)), frame = ij[, 1], variable = variable_names(object)[ij[, 2]],
               estimate = seq_matrix(object$point, i)[ij], lower = seq_matrix(lower, i)[ij],
               upper = seq_matrix(upper, i)[ij])
  })
  do.call(rbind, rows)
}

# A series imputation's intervals carry its time stamps, as its
# as.data.frame() does (a user review: confint() gave a column `sequence`,
# always 1, and no time).
#' @export
confint.ditimpute_series_imputation <- function(object, parm, level = object$level, ...) {
  check_dots(environment(), "confint()")
  check_no_parm(parm)
  level <- check_level(level)
  if (!is.null(object$exact) && is.null(object$calibration) && !isTRUE(all.equal(level, object$level))) {
    # exact intervals at any level from the conditional law, as printed
    b <- series_exact_bands(object$model, object$x, object$exact$mean, object$exact$sd, level)
    object[c("lower", "upper", "level")] <- list(b$lower, b$upper, level)
  }
  ci <- confint.ditimpute_imputation(object, level = level)
  cbind(time = object$time[ci$frame], ci[names(ci) != "sequence"])
}

# The variables' names: x's (its column names for one H x d sequence, its
# third dimnames for an n x H x d array), else V1..Vd.
variable_names <- function(object) {
  d <- utils::tail(dim(object$x), 1)  # x is H x d for one sequence (before as3()) or n x H x d
  nm <- if (object$single) object$dimnames[[2]] else object$dimnames[[3]]
  if (is.null(nm)) paste0("V", seq_len(d)) else nm
}

#' @export
as.data.frame.ditimpute_imputation <- function(x, row.names = NULL, optional = FALSE, ...) {
  check_dots(environment(), "as.data.frame()", valid = c("row.names", "optional", "stringsAsFactors"))
  x <- as3(x)
  n <- dim(x$x)[1]; H <- dim(x$x)[2]; d <- dim(x$x)[3]
  grid <- expand.grid(sequence = seq_len(n), frame = seq_len(H), variable = seq_len(d))
  out <- data.frame(sequence = grid$sequence, frame = grid$frame,
                    variable = factor(variable_names(x)[grid$variable], levels = variable_names(x)),
                    missing = as.vector(x$missing), observed = as.vector(x$x), estimate = as.vector(x$point),
                    lower = as.vector(x$lower), upper = as.vector(x$upper))
  if (!is.null(x$truth)) out$truth <- as.vector(x$truth)
  # By sequence, frame and variable: the order of confint()'s rows (and of the samples' entries).
  out[order(out$sequence, out$frame, out$variable), , drop = FALSE] |> `rownames<-`(NULL)
}

#' Completed data sets from an imputation
#'
#' Like `mice::complete()`: each completed data set fills the missing entries
#' with one joint sample, so analyses repeated over the completed sets and
#' pooled carry the imputation uncertainty.
#'
#' @param object An imputation from [impute()] or [impute_series()].
#' @param m Which sample paths, as `m` of `mice::mice()`: a single number
#'   gives the first `m` (`m = 5`: five completed data sets, paths 1 to 5),
#'   a vector of several numbers those paths (`m = c(2, 7)`); `NULL` (the
#'   default) all `n_samples`. For one path alone, take it from the list
#'   (`completions(imp)[[7]]`). Asking for more than `n_samples` is an input
#'   error.
#' @return A list of completed data sets, each shaped like the imputed `x`;
#'   for [impute_series()], each in the form of its `x` (a `ts`, a data frame
#'   with its time column, ...), as [completed_series()] with `what = "sample"`.
#'   To pool an analysis over them with Rubin's rules (`mice::pool()`), see
#'   [as_mids()], which also says why the completions are improper.
#' @examples
#' spec <- gp_spec(24, d = 2)
#' x <- gp_simulate(spec, 1, seed = 1)[1, , ]
#' x[5:8, ] <- NA
#' sets <- completions(impute(spec, x, n_samples = 5, seed = 1))
#' length(sets)
#' sapply(sets, function(s) mean(s[5:8, 1]))
#' @export
completions <- function(object, m = NULL) {
  if (!inherits(object, "ditimpute_imputation")) abort_input("object", "must be an imputation from impute().")
  if (all(vapply(object$samples, is.null, TRUE))) {
    abort_input("object", "has no sample paths (a deterministic imputation): there is nothing to complete with.")
  }
  # distinct paths, as as_mids() asks: the same path twice would pass Rubin's
  # rules a between-imputation variance too small
  sets <- completion_values(object, resolve_paths(m, object$n_samples, distinct = TRUE))
  if (inherits(object, "ditimpute_series_imputation")) lapply(sets, object$rebuild) else sets
}

# The sample paths that `m` picks, as in mice: NULL all of them, a single
# number the first m, a vector of several numbers those paths (distinct ones
# with `distinct = TRUE`).
resolve_paths <- function(m, n_samples, distinct = FALSE, call = rlang::caller_env()) {
  if (is.null(m)) return(seq_len(n_samples))
  if (!is.numeric(m) || !length(m) || anyNA(m) || any(m != round(m))) {
    abort_input("m", "must be a number of imputations (the first m sample paths) or a vector of sample path numbers.",
                call = call)
  }
  if (length(m) == 1) {
    if (m < 1) abort_input("m", sprintf("must be at least 1 imputation, not %s.", format(m)), call = call)
    if (m > n_samples) {
      abort_input("m", sprintf(paste("asks for %s imputations, but the imputation has %d sample paths: give at most %d",
                                     "(or impute again with more `n_samples`)."), format(m), n_samples, n_samples),
                  call = call)
    }
    return(seq_len(m))
  }
  if (any(m < 1 | m > n_samples)) {
    abort_input("m", sprintf("must be sample path numbers in 1..%d.", n_samples), call = call)
  }
  if (distinct && anyDuplicated(m)) abort_input("m", "must be distinct sample path numbers.", call = call)
  as.integer(m)
}

# The completed values (arrays or matrices shaped like the imputed x) of the
# sample paths numbered m (completed_series() takes one path this way).
completion_values <- function(object, m = NULL, call = rlang::caller_env()) {
  object <- as3(object)
  if (is.null(m)) m <- seq_len(object$n_samples)
  if (!is.numeric(m) || any(m < 1 | m > object$n_samples) || any(m != round(m))) {
    abort_input("m", sprintf("must be sample numbers in 1..%d.", object$n_samples), call = call)
  }
  lapply(m, function(k) {
    arr <- object$x
    for (i in seq_len(dim(arr)[1])) {
      one <- fill_missing(arr[i, , , drop = FALSE], matrix(object$missing[i, , ], dim(arr)[2]),
                          object$samples[[i]][k, , drop = FALSE])
      arr[i, , ] <- one[1, , ]
    }
    as_user_shape(object, arr)
  })
}

# confint()'s `parm` (the generic's): every imputed entry is a parameter
# here, so a selection is an input error rather than silently ignored (a
# review: parm = 3 and parm = "zz" both gave the full table).
check_no_parm <- function(parm, call = rlang::caller_env()) {
  if (!missing(parm) && !is.null(parm)) {  # NULL: "all", as for stats::confint()
    abort_input("parm", "is not used: confint() gives every imputed entry; select rows of its result instead.", call = call)
  }
}
