#' Impute missing values with uncertainty
#'
#' Draws `n_samples` completions of each partly observed sequence and
#' summarises them as in the paper's Algorithm 1: a point estimate (the mean or
#' the entry-wise median of the samples), an L2-ball confidence region around
#' it whose radius is the `level` quantile of the samples' distances to it, and
#' per-entry equal-tailed quantile intervals.
#'
#' Methods:
#' * a fitted DiT ([dit_fit()]): samples from the trained diffusion model;
#' * a Gaussian-process model ([gp_spec()]): the exact conditional law (the
#'   oracle imputer), drawn exactly (`sampler = "exact"`) or by the diffusion
#'   sampler driven by the exact score (`"sde"`, `"ode"`, `"euler"`).
#'
#' @param object A fitted DiT or a [gp_spec()].
#' @param x An `H x d` matrix with `NA` where values are missing (frame- or
#'   entry-level), or an `n x H x d` array of such sequences; each may have its
#'   own pattern.
#' @param n_samples Samples per sequence (at least 2).
#' @param level Confidence level in (0, 1).
#' @param ... Passed to the methods.
#' @param point `"mean"` or `"median"`: the point estimate and centre of the region.
#' @param truth Optional true values (same shape as `x`), kept for
#'   [imputation_metrics()], [coverage()] and [plot()].
#' @param method,steps Sampler options for the DiT (see [dit_sample()]).
#' @param sampler For a Gaussian process: `"exact"` draws, or the diffusion
#'   sampler with the exact score.
#' @param seed Optional seed; without one, [set.seed()] makes results repeatable.
#' @param threads CPU threads.
#' @return An object of class `ditimpute_imputation` with `point` (completed
#'   data, shaped like `x`), `lower`, `upper` (per-entry intervals shaped like
#'   `x`, `NA` on observed entries), `radius` (one per sequence), `samples` (a list of
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
#' @export
impute.ditimpute_dit <- function(object, x, n_samples = 100, level = 0.95, point = c("mean", "median"),
                                 truth = NULL, method = NULL, steps = NULL, seed = NULL, threads = NULL, ...) {
  object <- check_dit(object)
  cfg <- object$config
  cases <- prepare_cases(x, cfg$H, cfg$d, what = "the model was trained for")
  opts <- sampler_options(method = method, steps = steps)
  threads <- if (is.null(threads)) default_threads() else check_count(threads)
  ptr <- dit_ptr(object)
  draw <- function(xi, miss, seed) {
    s <- core_call(cpp_dit_sample(ptr, xi, n_samples, opts, seed, threads))
    missing_values(s, miss)
  }
  impute_cases(cases, draw, n_samples, level, point, truth, seed, method = "DiT")
}

#' @rdname impute
#' @export
impute.ditimpute_gp <- function(object, x, n_samples = 100, level = 0.95, point = c("mean", "median"),
                                truth = NULL, sampler = c("exact", "sde", "ode", "euler"), steps = NULL,
                                seed = NULL, threads = NULL, ...) {
  spec <- object
  cases <- prepare_cases(x, spec$H, spec$d, what = "the Gaussian process has")
  sampler <- check_string(sampler, c("exact", "sde", "ode", "euler"))
  opts <- sampler_options(method = if (sampler == "exact") NULL else sampler, steps = steps)
  threads <- if (is.null(threads)) default_threads() else check_count(threads)
  draw <- function(xi, miss, seed) {
    x0 <- xi
    x0[miss] <- 0
    if (sampler == "exact") {
      core_call(cpp_sample_conditional(spec$Gamma, spec$Lambda, spec$mean, x0, miss, n_samples, seed))
    } else {
      core_call(cpp_sample_oracle(spec$Gamma, spec$Lambda, spec$mean, x0, miss, n_samples, opts, seed, threads))
    }
  }
  impute_cases(cases, draw, n_samples, level, point, truth, seed,
               method = if (sampler == "exact") "exact GP" else sprintf("exact-score %s sampler", sampler))
}

# Validates the data to impute: an H x d matrix or n x H x d array whose every
# sequence has at least one missing and one observed value.
prepare_cases <- function(x, H, d, what, call = rlang::caller_env()) {
  if (is.data.frame(x)) x <- as.matrix(x)
  if (!is.numeric(x) && !(is.logical(x) && all(is.na(x)))) {
    abort_input("x", "must be a numeric H x d matrix or n x H x d array with NA where values are missing.",
                call = call)
  }
  dm <- dim(x)
  single <- length(dm) == 2
  if (!(single || length(dm) == 3)) abort_input("x", "must be an H x d matrix or an n x H x d array.", call = call)
  got <- if (single) dm else dm[2:3]
  if (got[1] != H || got[2] != d) {
    abort_input("x", sprintf("has H = %d frames and d = %d variables, but %s H = %d and d = %d.", got[1], got[2],
                             what, H, d), call = call)
  }
  arr <- if (single) array(as.numeric(x), c(1L, H, d)) else { storage.mode(x) <- "double"; x }
  if (any(is.infinite(arr))) abort_input("x", "must not contain Inf.", call = call)
  miss <- is.na(arr)
  n_miss <- apply(miss, 1, sum)
  if (any(n_miss == 0)) {
    abort_input("x", sprintf("sequence %d has no missing value (NA): there is nothing to impute.",
                             which(n_miss == 0)[1]), call = call)
  }
  if (any(n_miss == H * d)) {
    abort_input("x", sprintf("sequence %d has no observed value: every entry is missing.",
                             which(n_miss == H * d)[1]), call = call)
  }
  list(arr = arr, miss = miss, n = dim(arr)[1], H = H, d = d, single = single, dimnames = dimnames(x))
}

# Values of the missing entries of each sample: Z x H x d array -> Z x m (frame-major).
missing_values <- function(samples, miss) {
  idx <- which(t(miss))
  h <- (idx - 1) %/% ncol(miss) + 1
  j <- (idx - 1) %% ncol(miss) + 1
  vapply(seq_along(idx), function(k) samples[, h[k], j[k]], numeric(dim(samples)[1]))
}

impute_cases <- function(cases, draw, n_samples, level, point, truth, seed, method,
                         call = rlang::caller_env()) {
  n_samples <- check_count(n_samples, arg = "n_samples", min = 2, call = call)
  level <- check_level(level, arg = "level", call = call)
  point <- check_string(point, c("mean", "median"), arg = "point", call = call)
  if (!is.null(truth)) truth <- check_truth(truth, cases, call = call)
  seed <- resolve_seed(seed, call = call)
  n <- cases$n
  point_arr <- cases$arr
  lower <- upper <- array(NA_real_, dim(cases$arr))
  radius <- numeric(n)
  samples <- vector("list", n)
  for (i in seq_len(n)) {
    xi <- matrix(cases$arr[i, , ], cases$H, cases$d)
    mi <- matrix(cases$miss[i, , ], cases$H, cases$d)
    # Case i draws with seed + i: cases are independent and each repeatable alone.
    s <- draw(xi, mi, (seed + i) %% 2^53)
    s <- matrix(s, nrow = n_samples)
    reg <- core_call(cpp_region(s, level, point == "median"), call = call)
    samples[[i]] <- s
    radius[i] <- reg$radius
    point_arr[i, , ] <- fill_missing(array(xi, c(1, cases$H, cases$d)), mi, matrix(reg$centre, 1))[1, , ]
    lower[i, , ] <- fill_missing(array(NA_real_, c(1, cases$H, cases$d)), mi, matrix(reg$lower, 1))[1, , ]
    upper[i, , ] <- fill_missing(array(NA_real_, c(1, cases$H, cases$d)), mi, matrix(reg$upper, 1))[1, , ]
  }
  out <- list(x = cases$arr, missing = cases$miss, point = point_arr, lower = lower, upper = upper,
              radius = radius, samples = samples, level = level, point_type = point, method = method,
              n_samples = n_samples, truth = truth, single = cases$single, dimnames = cases$dimnames)
  if (cases$single) {
    # Give back the caller's shape: H x d matrices for one sequence.
    for (f in array_fields) {
      if (!is.null(out[[f]])) out[[f]] <- matrix(out[[f]][1, , ], cases$H, cases$d, dimnames = cases$dimnames)
    }
  }
  structure(out, class = "ditimpute_imputation")
}

array_fields <- c("x", "missing", "point", "lower", "upper", "truth")

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
  arr <- if (length(dim(truth)) == 2) array(as.numeric(truth), c(1L, dim(truth))) else truth
  if (!identical(as.integer(dim(arr)), as.integer(dim(cases$arr)))) {
    abort_input(arg, "must have the same shape as x.", call = call)
  }
  if (any(!is.finite(arr[cases$miss]))) abort_input(arg, "must be finite at every missing entry of x.", call = call)
  storage.mode(arr) <- "double"
  arr
}

# Shapes an n x H x d array back like the caller's x.
as_user_shape <- function(object, arr) {
  if (object$single) matrix(arr[1, , ], dim(arr)[2], dim(arr)[3], dimnames = object$dimnames) else arr
}

#' @export
print.ditimpute_imputation <- function(x, ...) {
  x <- as3(x)
  n <- dim(x$x)[1]
  cat(sprintf("<ditimpute_imputation> %s, %d sequence%s of %d x %d, %d sample%s each\n", x$method, n,
              if (n == 1) "" else "s", dim(x$x)[2], dim(x$x)[3], x$n_samples, if (x$n_samples == 1) "" else "s"))
  m <- apply(x$missing, 1, sum)
  cat(sprintf("  missing entries per sequence: %s\n", if (length(unique(m)) == 1) m[1] else
    sprintf("%d to %d", min(m), max(m))))
  if (all(is.na(x$radius))) {
    # A deterministic imputer (one completion) has no region and no intervals.
    cat(sprintf("  point estimate: %s; no confidence region or intervals (one completion per sequence)\n",
                x$point_type))
  } else {
    cat(sprintf("  point estimate: %s; %g%% L2-ball radius: %s; mean %g%% interval width: %.3g\n", x$point_type,
                100 * x$level, format_range(x$radius), 100 * x$level, mean(x$upper - x$lower, na.rm = TRUE)))
  }
  if (!is.null(x$truth)) {
    met <- imputation_metrics(x)
    cover <- mean(met$interval_coverage)
    cat(sprintf("  against the truth: MSE %.4g, MAE %.4g, CRPS %.4g%s\n", mean(met$mse), mean(met$mae),
                mean(met$crps), if (is.na(cover)) "" else sprintf(", interval coverage %.1f%%", 100 * cover)))
  }
  invisible(x)
}

format_range <- function(v) if (length(v) == 1) sprintf("%.3g", v) else sprintf("%.3g to %.3g", min(v), max(v))

#' @export
summary.ditimpute_imputation <- function(object, ...) {
  object <- as3(object)
  out <- list(method = object$method, n = dim(object$x)[1], H = dim(object$x)[2], d = dim(object$x)[3],
              n_samples = object$n_samples, level = object$level, point_type = object$point_type,
              radius = object$radius, n_missing = apply(object$missing, 1, sum),
              width = apply(object$upper - object$lower, 1, mean, na.rm = TRUE),
              metrics = if (!is.null(object$truth)) imputation_metrics(object))
  structure(out, class = "summary.ditimpute_imputation")
}

#' @export
print.summary.ditimpute_imputation <- function(x, ...) {
  cat(sprintf("Imputation by %s: %d sequence(s) of %d frames x %d variables, %d samples each\n", x$method, x$n,
              x$H, x$d, x$n_samples))
  cat(sprintf("Point estimate: %s. Confidence level: %g%%.\n", x$point_type, 100 * x$level))
  tab <- data.frame(sequence = seq_len(x$n), missing = x$n_missing, radius = x$radius, interval_width = x$width)
  if (!is.null(x$metrics)) tab <- cbind(tab, x$metrics[, c("mse", "mae", "crps", "interval_coverage")])
  print(utils::head(tab, 10), row.names = FALSE, digits = 4)
  if (x$n > 10) cat(sprintf("... %d more sequences\n", x$n - 10))
  invisible(x)
}

#' Confidence intervals of imputed values
#'
#' Per-entry equal-tailed intervals of the missing entries, from the samples'
#' quantiles (R's type 7).
#'
#' @param object An imputation from [impute()].
#' @param parm Unused (all missing entries are returned).
#' @param level Confidence level; by default the imputation's.
#' @param ... Unused.
#' @return A data frame with one row per missing entry: `sequence`, `frame`,
#'   `variable`, `estimate`, `lower`, `upper`.
#' @examples
#' spec <- gp_spec(24, d = 2)
#' x <- gp_simulate(spec, 1, seed = 1)[1, , ]
#' x[5:8, ] <- NA
#' confint(impute(spec, x, seed = 1), level = 0.9)
#' @export
confint.ditimpute_imputation <- function(object, parm, level = object$level, ...) {
  level <- check_level(level)
  object <- as3(object)
  rows <- lapply(seq_len(dim(object$x)[1]), function(i) {
    miss <- matrix(object$missing[i, , ], dim(object$x)[2])
    idx <- which(t(miss))
    d <- ncol(miss)
    h <- (idx - 1) %/% d + 1
    j <- (idx - 1) %% d + 1
    if (isTRUE(all.equal(level, object$level))) {
      lo <- object$lower[i, , ][cbind(h, j)]
      hi <- object$upper[i, , ][cbind(h, j)]
    } else {
      q <- apply(object$samples[[i]], 2, stats::quantile, probs = c((1 - level) / 2, (1 + level) / 2), type = 7)
      lo <- q[1, ]; hi <- q[2, ]
    }
    data.frame(sequence = i, frame = h, variable = variable_names(object)[j],
               estimate = matrix(object$point[i, , ], dim(object$x)[2])[cbind(h, j)], lower = lo, upper = hi)
  })
  do.call(rbind, rows)
}

variable_names <- function(object) {
  d <- dim(object$x)[3]
  nm <- if (object$single) object$dimnames[[2]] else object$dimnames[[3]]
  if (is.null(nm)) paste0("V", seq_len(d)) else nm
}

#' @export
as.data.frame.ditimpute_imputation <- function(x, row.names = NULL, optional = FALSE, ...) {
  x <- as3(x)
  n <- dim(x$x)[1]; H <- dim(x$x)[2]; d <- dim(x$x)[3]
  grid <- expand.grid(sequence = seq_len(n), frame = seq_len(H), variable = seq_len(d))
  out <- data.frame(sequence = grid$sequence, frame = grid$frame,
                    variable = factor(variable_names(x)[grid$variable], levels = variable_names(x)),
                    missing = as.vector(x$missing), observed = as.vector(x$x), estimate = as.vector(x$point),
                    lower = as.vector(x$lower), upper = as.vector(x$upper))
  if (!is.null(x$truth)) out$truth <- as.vector(x$truth)
  out[order(out$sequence, out$variable, out$frame), , drop = FALSE] |> `rownames<-`(NULL)
}

#' Completed data sets from an imputation
#'
#' Like `mice::complete()`: each completed data set fills the missing entries
#' with one joint sample, so analyses repeated over the completed sets and
#' pooled carry the imputation uncertainty.
#'
#' @param object An imputation from [impute()].
#' @param m Which samples (default: all).
#' @return A list of completed data sets, each shaped like the imputed `x`.
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
  object <- as3(object)
  if (is.null(m)) m <- seq_len(object$n_samples)
  if (!is.numeric(m) || any(m < 1 | m > object$n_samples) || any(m != round(m))) {
    abort_input("m", sprintf("must be sample numbers in 1..%d.", object$n_samples))
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
