# Whole series of any length: impute_series() fits a Gaussian process with a
# linear trend and a trend-and-season kernel to the series' own windows and
# imputes every gap by sequential conditional sampling in the C++ core
# (cpp/include/ditimpute/series.hpp).

#' Impute a whole time series with intervals
#'
#' Completes one univariate or multivariate series of any length with any
#' gaps (scattered holes, long gaps, leading and trailing gaps, a variable
#' missing for a stretch) and gives an interval for every imputed entry.
#'
#' The model (`method = "gp"`): each variable has a linear trend in time
#' (fitted by least squares on its observed values); around it the series is
#' a Gaussian process with covariance `Gamma %x% Lambda` over any stretch of
#' frames, `Lambda` a free `d x d` covariance between variables and `Gamma`
#' a stationary kernel over the lag `tau`:
#' * `"seasonal"`: `w1 m52(tau / l1) + w2 exp(-2 sin^2(pi tau / period) / lp^2)
#'   exp(-tau^2 / (2 ld^2)) + w3 [tau = 0]`: a smooth long-range term
#'   (Matern 5/2), a seasonal term (periodic times a decaying envelope) and a
#'   nugget, the weights summing to 1;
#' * `"smooth"`: the smooth term and the nugget only.
#'
#' The kernel's parameters maximise the likelihood of the observed values of
#' non-overlapping windows of the detrended series (missing entries
#' integrated out), each variable with its own mean and variance profiled
#' out; then the mean and the full `Lambda` are fitted by ECME with that
#' kernel fixed ([gp_fit()]'s algorithm). The fitting windows are
#' `past + block + future` frames long, at most `n_windows` of them; a series
#' shorter than two windows is fitted as one window. With `kernel = "auto"` both kernels
#' are fitted (the seasonal one only with a period of at least 2 frames and
#' two full periods both in the data and in a fitting window) and the one
#' with the smaller BIC is used;
#' `summary()` shows the log-likelihood, AIC and BIC of each candidate.
#'
#' Long series are imputed block by block (`window`: `block` frames at a
#' time) in the C++ core: block `k` is drawn from its conditional law given
#' the `past` frames before it (observed, or already imputed on the same
#' sample path), its own observed values and the observed values of the
#' `future` frames after it. So a gap longer than any window is one joint draw
#' along each path, and one factorisation per block serves all `n_samples`
#' paths. A path without noise gives the point estimate (the conditional
#' mean of the same recursion). Each interval is `point +/- z sd`, `sd` the
#' standard deviation of the entry's `n_samples` draws (the entry's law under
#' the model is Gaussian around `point`).
#'
#' With `method = "dit"`, the same linear trend and scaling are removed and a
#' small diffusion transformer ([dit_fit()]) is trained on windows of `H`
#' frames of the series itself (every `H / 4` frames): entries already missing
#' are shown to the network as missing and kept out of the loss, and the
#' training masks are half one block of a length drawn from the series' own
#' gaps (capped at `H / 2`), half the paper's scattered frames and one long
#' block. Windows overlapping by half are then imputed one after another along
#' each of the `n_samples` paths, each window conditioned on its observed
#' values and on the values its path already holds for the first half. Per-entry
#' intervals are `point +/- z sd` over the paths, as for the GP.
#'
#' @param x The series: a `ts` or `mts`, a data frame with a time column
#'   (`Date` or `POSIXct`, equally spaced or monthly) and numeric columns, a
#'   [ditimpute_series()], a numeric matrix (rows are frames) or a numeric
#'   vector. `NA` marks missing values.
#' @param method `"gp"`, or `"dit"`: a diffusion transformer trained on the
#'   series' own windows (see Details).
#' @param level Level of the per-entry intervals, in (0, 1).
#' @param n_samples Sample paths (at least 20).
#' @param period Season length in frames; by default `frequency(x)` for a
#'   `ts`, 12 for monthly, 7 for daily and 24 for hourly time stamps, none
#'   otherwise (then only the smooth kernel is fitted).
#' @param kernel `"auto"` (the smaller BIC), `"seasonal"` or `"smooth"`.
#' @param window Optional `c(past = , block = , future = )` in frames; by
#'   default `block = max(period, 10)` and `past = future = max(4 period, 40)`,
#'   shortened so that a window holds at most 640 entries and at most
#'   `max(T / 3, 60)` frames.
#' @param truth Optional true values in the form of `x`, kept for
#'   [imputation_metrics()] and [coverage()].
#' @param n_windows Fit on at most this many windows (chosen at random).
#' @param ridge Added to the diagonal of the fitted `Lambda` (as
#'   [gp_fit()]'s `ridge`), relative to the mean variance of the detrended,
#'   standardised variables: 0.01 is 1% of it. It keeps `Lambda` invertible when variables are
#'   nearly collinear (Seatbelts: `drivers` is `front` plus part of `rear`),
#'   where plain maximum likelihood extrapolates wildly across variables.
#' @param calibrate `TRUE` to self-calibrate the intervals ([calibrate()] on
#'   the result with its defaults, then [apply_calibration()]): ten rounds
#'   hide further observed stretches of the series with lengths drawn from its
#'   own gaps, and each entry's interval is widened or narrowed so that a
#'   share `level` of those hidden values fall inside, per gap-length group. The
#'   calibration is kept as `calibration` in the result.
#' @param dit Options of `method = "dit"`, a list with any of `H` (window
#'   length, default `max(2 period, 16)`), `width`, `depth`, `heads` (the
#'   network, default 32, 1, 2), `steps` (training steps, default 300),
#'   `batch_size` (32) and `sample_steps` (sampler steps, 20). The defaults
#'   run in seconds and make a weak model: a useful one needs thousands of
#'   steps and a wider network (see [dit_fit()]).
#' @param seed Optional seed; without one [set.seed()] makes results repeatable.
#' @param threads CPU threads (default: option `ditimpute.threads`, else all cores).
#' @param ... Nothing: a name here is an input error (a misspelled argument
#'   would otherwise run with the default).
#' @return An object of class `ditimpute_series_imputation`, which is also a
#'   `ditimpute_imputation` of one `T x d` sequence: `point` (the completed
#'   values), `lower`, `upper` (`NA` on observed entries), `samples` (a list
#'   holding the `n_samples x m` draws of the missing entries, frame-major),
#'   `radius` (an L2 region over all missing entries: the
#'   `ceiling((Z + 1) level)`-th smallest distance of the draws to `point`),
#'   `model` (a `ditimpute_series_model`: trend, kernel, `Lambda`, candidates;
#'   [logLik()] works on it), `record` (a data frame of the imputed entries:
#'   time, variable, estimate, lower, upper) and `gaps` (one row per run of
#'   missing values). [completed_series()] gives the completed series in the
#'   class of `x`; [completions()], [coverage()] and [imputation_metrics()]
#'   work on it; `print()`, `summary()`, `plot()` and `as.data.frame()` too.
#'   [calibrate()] on it self-calibrates its intervals (`method = "gp"`); with
#'   `calibrate = TRUE` the result is calibrated and keeps the calibration as
#'   `calibration`. With `method = "dit"`, `model` is a
#'   `ditimpute_series_dit_model` holding the trained DiT (`dit`).
#' @seealso [completed_series()], [gp_fit()] for windows of a fixed length.
#' @examples
#' y <- datasets::co2
#' y[c(30:40, 200:229)] <- NA
#' imp <- impute_series(y, n_samples = 50, seed = 1)
#' imp
#' head(imp$record)
#' co2_filled <- completed_series(imp)
#' @export
impute_series <- function(x, method = c("gp", "dit"), level = 0.95, n_samples = 100, period = NULL,
                          kernel = c("auto", "seasonal", "smooth"), window = NULL, truth = NULL,
                          n_windows = 100, ridge = 1e-2, calibrate = FALSE, dit = list(), seed = NULL, threads = NULL,
                          time = NULL, ...) {
  check_dots(environment(), "impute_series()")
  x <- frame_time(x, time); truth <- frame_time(truth, time, "truth")  # time = columns of a data frame
  method <- check_string(method, c("gp", "dit"))
  level <- check_level(level)
  n_samples <- check_count(n_samples, min = 20)
  kernel <- check_string(kernel, c("auto", "seasonal", "smooth"))
  n_windows <- check_count(n_windows)
  ridge <- check_number(ridge, lower = 0, upper = Inf, open = FALSE)
  if (!is.logical(calibrate) || length(calibrate) != 1 || is.na(calibrate)) abort_input("calibrate", "must be TRUE or FALSE.")
  if (calibrate && method == "dit") abort_input("calibrate", "is available for method = \"gp\" only (it re-imputes with the fitted GP).")
  seed <- resolve_seed(seed)
  threads <- resolve_threads(threads)
  input <- series_input(x, "x")
  v <- input$values
  n_time <- nrow(v); d <- ncol(v)
  check_series_values(v, "x")
  if (is.null(period)) period <- input$period
  period <- if (is.null(period)) 1 else check_number(period, lower = 1, upper = Inf, open = FALSE)
  win <- series_window(window, period, d, n_time)
  if (!is.null(truth)) {
    truth <- series_input(truth, "truth")$values
    if (!identical(dim(truth), dim(v))) abort_input("truth", "must have the same shape as x.")
  }
  start <- proc.time()[["elapsed"]]
  if (method == "dit") {
    out <- impute_series_dit(v, level, n_samples, period, dit, seed, threads)
    out$model$seconds <- proc.time()[["elapsed"]] - start
    return(new_series_imputation(input, v, out$res, out$model, level, n_samples, out$win, truth))
  }
  model <- fit_series_model(v, period, kernel, win, n_windows, ridge, seed, threads)
  model$fit_seconds <- proc.time()[["elapsed"]] - start
  res <- core_call(cpp_impute_series_gp(scale_cols(v, model), model$mean_path, model$Gamma, model$Lambda,
                                        win[["past"]], win[["block"]], win[["future"]], n_samples, seed, threads))
  model$seconds <- proc.time()[["elapsed"]] - start
  out <- new_series_imputation(input, v, res, model, level, n_samples, win, truth)
  if (calibrate && any(out$missing)) {
    out <- apply_calibration(out, calibrate_series(out, NULL, level, "auto", 3L, 10L, NULL, sub_seed(seed, 7), threads))
  }
  out
}

# ------------------------------------------------------------------ input --

# The values (T x d numeric matrix), time axis, default period and a function
# that rebuilds an object of the input's class from completed values.
series_input <- function(x, arg, call = rlang::caller_env()) {
  if (stats::is.ts(x)) {
    v <- as.matrix(x)
    if (!is.numeric(v)) abort_input(arg, "must hold numbers.", call = call)
    if (is.null(colnames(v))) colnames(v) <- if (ncol(v) == 1) "x" else paste0("V", seq_len(ncol(v)))
    f <- stats::frequency(x)
    rebuild <- function(vals) {
      out <- x  # keeps tsp, class and names exactly
      storage.mode(out) <- "double"
      out[] <- as.numeric(vals)
      out
    }
    return(list(values = unname_rows(v), time = as.numeric(stats::time(x)), period = if (f >= 2) f else NULL,
                rebuild = rebuild))
  }
  if (inherits(x, "ditimpute_series")) {
    period <- switch(as.character(x$freq), `3600` = 24, `86400` = 7, NULL)
    return(list(values = x$values, time = x$time, period = period,
                rebuild = function(vals) new_series(vals, x$time, x$name, x$freq)))
  }
  if (is.data.frame(x)) return(frame_input(x, arg, call))
  if (is.numeric(x) && is.null(dim(x))) {
    return(list(values = matrix(as.numeric(x), ncol = 1, dimnames = list(NULL, "x")), time = seq_along(x),
                period = NULL, rebuild = function(vals) as.numeric(vals)))
  }
  if (is.matrix(x)) {
    if (!is.numeric(x)) abort_input(arg, "must be a numeric matrix; it holds non-numeric values.", call = call)
    v <- x
    if (is.null(colnames(v))) colnames(v) <- paste0("V", seq_len(ncol(v)))
    storage.mode(v) <- "double"
    return(list(values = unname_rows(v), time = seq_len(nrow(v)), period = NULL,
                rebuild = function(vals) { dimnames(vals) <- dimnames(x); vals }))
  }
  abort_input(arg, "must be a ts, a data frame with a time column, a ditimpute_series, a numeric matrix or a numeric vector.",
              call = call)
}

unname_rows <- function(v) {
  rownames(v) <- NULL
  storage.mode(v) <- "double"
  v
}

# A data frame: one Date/POSIXct column is the time axis (equally spaced, or
# consecutive months), or the one impute_series(time = ) built (frame_time());
# every other column must be numeric. What is wrong is said with how to fix it
# (series-forms.R).
frame_input <- function(x, arg, call) {
  given <- attr(x, "ditimpute_time")
  attr(x, "ditimpute_time") <- NULL
  if (is.null(given)) {
    is_time <- vapply(x, function(col) inherits(col, c("Date", "POSIXt")), TRUE)
    if (sum(is_time) != 1) abort_input(arg, frame_time_advice(x, is_time), call = call)
    given <- list(time = x[[which(is_time)]], columns = names(x)[is_time],
                  what = sprintf("the time stamps in column \"%s\"", names(x)[is_time]))
  }
  tcol <- given$columns
  time <- given$time
  col <- if (length(tcol) == 1 && identical(time, x[[tcol]])) tcol else NULL
  others <- setdiff(names(x), tcol)
  bad <- others[!vapply(x[others], is.numeric, TRUE)]
  if (length(bad)) abort_input(arg, non_numeric_advice(x, bad[1]), call = call)
  if (!length(others)) abort_input(arg, "has no numeric column to impute.", call = call)
  period <- NULL
  months <- if (inherits(time, c("Date", "POSIXt"))) monthly_index(time)
  if (!is.null(months)) {
    period <- 12
  } else {
    check_month_gaps(time, given$what, col, arg, call)
    step <- frame_grid(time, given$what, col, arg, call)
    if (inherits(time, c("Date", "POSIXt"))) period <- switch(as.character(step), `3600` = 24, `86400` = 7, NULL)
  }
  v <- as.matrix(x[others])
  list(values = unname_rows(v), time = time, period = period,
       rebuild = function(vals) { out <- x; out[others] <- as.data.frame(vals); out })
}

# Month numbers of time stamps that fall on consecutive months (same day of
# the month), or NULL when they do not.
monthly_index <- function(time) {
  if (anyNA(time) || length(time) < 2) return(NULL)
  lt <- as.POSIXlt(time)
  m <- 12 * lt$year + lt$mon
  if (all(diff(m) == 1) && length(unique(lt$mday)) == 1 && any(diff(as.numeric(as.POSIXct(time))) !=
                                                                 diff(as.numeric(as.POSIXct(time)))[1])) m else NULL
}

# What the model needs of the values: finite numbers or NA, at least 3
# observed values per variable (a trend and a variance), some spread.
check_series_values <- function(v, arg, call = rlang::caller_env()) {
  if (nrow(v) < 4) abort_input(arg, sprintf("has %d time points; impute_series() needs at least 4.", nrow(v)),
                               call = call)
  if (any(is.infinite(v) | is.nan(v))) abort_input(arg, "holds Inf or NaN values; use NA for missing ones.", call = call)
  n_obs <- colSums(!is.na(v))
  if (any(n_obs < 3)) {
    j <- which(n_obs < 3)[1]
    abort_input(arg, sprintf("variable \"%s\" has %d observed values; each variable needs at least 3 (drop it or impute it separately).",
                             colnames(v)[j], n_obs[j]), call = call)
  }
  spread <- apply(v, 2, stats::sd, na.rm = TRUE)
  if (any(!(spread > 0))) {
    abort_input(arg, sprintf("variable \"%s\" is constant where observed; it has nothing to model.",
                             colnames(v)[which(!(spread > 0))[1]]), call = call)
  }
  invisible(v)
}

# The block layout: past, block, future frames; a window holds at most 640
# entries by default (its factorisation costs (640)^3 / 3 flops per block).
series_window <- function(window, period, d, n_time, call = rlang::caller_env()) {
  if (!is.null(window)) {
    if (!is.numeric(window) || length(window) != 3 || anyNA(window) || any(window != round(window)) ||
        any(window < 0) || window[2] < 1) {
      abort_input("window", "must be three whole numbers c(past, block, future), block at least 1.", call = call)
    }
    if (!is.null(names(window)) && !setequal(names(window), c("past", "block", "future"))) {
      abort_input("window", "must be named past, block and future (or unnamed, in that order).", call = call)
    }
    w <- if (is.null(names(window))) window else window[c("past", "block", "future")]
    return(stats::setNames(as.integer(w), c("past", "block", "future")))
  }
  p <- round(period)
  block <- max(p, 10)
  # Long context pays on long gaps (co2, a 47-month gap: MAE 0.64 with 24
  # frames either side, 0.40 with 48; bench/series.R), and costs little for few variables.
  ctx <- max(4 * p, 40)
  # At most 640 entries per window, and windows short enough that the fit
  # sees at least 3 of them (or 60 frames): Seatbelts (192 months, d = 8)
  # fitted on 2 windows of 80 frames imputed 4x worse than on 3 of 60.
  budget <- max(3, min(floor(640 / d), max(floor(n_time / 3), 60)))
  if (2 * ctx + block > budget) {
    block <- max(1, min(block, floor(budget / 3)))
    ctx <- max(1, floor((budget - block) / 2))
  }
  stats::setNames(as.integer(c(ctx, block, ctx)), c("past", "block", "future"))
}

# ------------------------------------------------------------------ model --

# Standardised values with the trend removed are what the GP models.
scale_cols <- function(v, model) sweep(sweep(v, 2, model$center), 2, model$scale, "/")

# Fits the trend, chooses and fits the kernel, and fits Lambda; everything in
# standardised units (model$center, model$scale give the way back).
fit_series_model <- function(v, period, kernel, win, n_windows, ridge, seed, threads, call = rlang::caller_env()) {
  n_time <- nrow(v); d <- ncol(v)
  tr <- series_trend(v)
  center <- tr$center; scale <- tr$scale; trend <- tr$trend; trend_path <- tr$trend_path
  resid <- tr$resid
  ridge <- ridge * mean(apply(resid, 2, stats::var, na.rm = TRUE))  # relative to what the GP models
  H <- sum(win)
  # Non-overlapping windows of the window's length; a series shorter than two
  # windows is one window, so that no frame is left out of the fit.
  Hf <- if (n_time < 2 * H) n_time else H
  starts <- seq.int(1L, n_time - Hf + 1L, by = Hf)
  windows <- array(NA_real_, c(length(starts), Hf, d))
  for (k in seq_along(starts)) windows[k, , ] <- resid[starts[k] + seq_len(Hf) - 1L, , drop = FALSE]
  keep <- which(apply(windows, 1, function(w) any(!is.na(w))))
  if (length(keep) > n_windows) keep <- sort(with_local_seed(seed, sample(keep, n_windows)))
  windows <- windows[keep, , , drop = FALSE]
  # A season must fit twice into the data and into a fitting window to be learnt.
  can_season <- period >= 2 && n_time >= 2 * period && Hf >= 2 * period
  kinds <- switch(kernel, auto = if (can_season) c("smooth", "seasonal") else "smooth",
                  seasonal = {
                    if (!can_season) abort_input("kernel", sprintf("\"seasonal\" needs a period of at least 2 frames and two periods of data and of a window (period %g, %d frames, windows of %d).", period, n_time, Hf), call = call)
                    "seasonal"
                  }, smooth = "smooth")
  fits <- lapply(kinds, function(kind) fit_series_kernel(kind, windows, period, Hf, ridge, threads, call))
  n_obs <- sum(!is.na(windows))
  cand <- data.frame(kernel = kinds, logLik = vapply(fits, `[[`, 0, "loglik"),
                     df = vapply(fits, `[[`, 0, "df") + 2 * d)  # + the trend's 2 per variable
  cand$AIC <- -2 * cand$logLik + 2 * cand$df
  cand$BIC <- -2 * cand$logLik + log(n_obs) * cand$df
  best <- which.min(cand$BIC)
  cand$chosen <- seq_along(kinds) == best
  f <- fits[[best]]
  Gamma <- core_call(cpp_seasonal_gamma(f$kernel, H), call = call)
  mean_path <- sweep(trend_path, 2, as.numeric(f$mean), "+")
  structure(list(kernel_name = kinds[best], kernel = f$kernel, period = period, Lambda = f$Lambda,
                 gp_mean = as.numeric(f$mean), trend = trend, center = center, scale = scale,
                 Gamma = Gamma, mean_path = mean_path, window = win, loglik = f$loglik, df = cand$df[best],
                 nobs = n_obs, n_windows = dim(windows)[1], window_length = Hf, candidates = cand,
                 variables = colnames(v)),
            class = "ditimpute_series_model")
}

# Parameters on unconstrained scales -> the core's kernel list.
series_kernel_of <- function(kind, theta, period, Hf) {
  clamp <- function(u, lo, hi) min(max(u, lo), hi)
  if (kind == "smooth") {
    nug <- stats::plogis(clamp(theta[2], -12, 6))
    return(list(w_smooth = 1 - nug, smooth_lengthscale = exp(clamp(theta[1], log(0.3), log(50 * Hf))),
                w_season = 0, w_nugget = nug, period = period))
  }
  w <- exp(c(0, clamp(theta[4], -12, 12), clamp(theta[5], -12, 12)))
  w <- w / sum(w)
  list(w_smooth = w[1], smooth_lengthscale = exp(clamp(theta[1], log(0.3), log(50 * Hf))),
       w_season = w[2], period = period, periodic_lengthscale = exp(clamp(theta[2], log(0.05), log(20))),
       decay_lengthscale = exp(clamp(theta[3], log(period / 2), log(1000 * period))), w_nugget = w[3])
}

# Maximises the profile likelihood over the kernel (Nelder-Mead on log scales),
# then fits the mean and Lambda with that kernel fixed.
fit_series_kernel <- function(kind, windows, period, Hf, ridge, threads, call) {
  dm <- dim(windows)
  theta0 <- if (kind == "smooth") c(log(max(2, Hf / 4)), stats::qlogis(0.05)) else
    c(log(max(2 * period, Hf / 2)), log(1), log(4 * period), log(2), log(0.1))
  prof <- function(theta) {
    k <- series_kernel_of(kind, theta, period, Hf)
    val <- tryCatch(cpp_series_profile(windows, dm[1], dm[2], dm[3], k, threads), error = function(e) -Inf)
    if (is.finite(val)) -val else 1e300
  }
  # A first bad start (e.g. a singular kernel) is not a bad model: check it.
  if (prof(theta0) >= 1e300) abort_numeric("the starting kernel's likelihood could not be evaluated.", call = call)
  opt <- stats::optim(theta0, prof, method = "Nelder-Mead", control = list(maxit = 400, reltol = 1e-8))
  k <- series_kernel_of(kind, opt$par, period, Hf)
  G <- core_call(cpp_seasonal_gamma(k, Hf), call = call)
  lam <- core_call(cpp_series_fit_lambda(windows, dm[1], dm[2], dm[3], G, ridge, 500, 1e-8), call = call)
  d <- dm[3]
  list(kernel = k, Lambda = lam$Lambda, mean = lam$mean, loglik = lam$loglik,
       df = length(theta0) + d + d * (d + 1) / 2, profile = -opt$value, converged = lam$converged)
}

#' @export
print.ditimpute_series_model <- function(x, ...) {
  k <- x$kernel
  cat(sprintf("<ditimpute_series_model> linear trend + GP, kernel \"%s\"%s\n", x$kernel_name,
              if (x$kernel_name == "seasonal") sprintf(" (period %g)", x$period) else ""))
  cat(sprintf("  kernel shares: smooth %.3f (lengthscale %.3g)%s, nugget %.3f\n", k$w_smooth, k$smooth_lengthscale,
              if (isTRUE(k$w_season > 0)) sprintf(", season %.3f (periodic lengthscale %.3g, decay %.3g)", k$w_season,
                                                  k$periodic_lengthscale, k$decay_lengthscale) else "", k$w_nugget))
  cat(sprintf("  fitted on %d windows of %d frames: log-likelihood %.2f, %d parameters\n", x$n_windows,
              x$window_length, x$loglik, as.integer(x$df)))
  invisible(x)
}

#' @export
logLik.ditimpute_series_model <- function(object, ...) {
  structure(object$loglik, df = object$df, nobs = object$nobs, class = "logLik")
}

# ----------------------------------------------------------------- result --

# The core's result in the data's units: the completed values (observed
# entries exactly as given), the draws of the missing entries (n_samples x m,
# frame-major as missing_index()) and per-entry intervals point +/- z sd.
series_intervals <- function(res, model, v, level, n_samples) {
  miss <- is.na(v)
  ij <- missing_index(miss)
  sc <- model$scale[ij[, 2]]; ce <- model$center[ij[, 2]]
  samples <- sweep(sweep(res$samples, 2, sc, "*"), 2, ce, "+")
  point <- sweep(sweep(res$point, 2, model$scale, "*"), 2, model$center, "+")
  point[!miss] <- v[!miss]  # exactly the observed values, not a rounding of them
  dimnames(point) <- dimnames(v)
  lower <- upper <- matrix(NA_real_, nrow(v), ncol(v), dimnames = dimnames(v))
  if (nrow(ij)) {
    sds <- sqrt(pmax(0, colMeans(samples^2) - colMeans(samples)^2) * n_samples / (n_samples - 1))
    z <- stats::qnorm(1 - (1 - level) / 2)
    lower[ij] <- point[ij] - z * sds
    upper[ij] <- point[ij] + z * sds
  }
  list(point = point, lower = lower, upper = upper, samples = samples, ij = ij)
}

new_series_imputation <- function(input, v, res, model, level, n_samples, win, truth) {
  n_time <- nrow(v); d <- ncol(v)
  miss <- is.na(v)
  iv <- series_intervals(res, model, v, level, n_samples)
  point <- iv$point; lower <- iv$lower; upper <- iv$upper; samples <- iv$samples; ij <- iv$ij
  radius <- NA_real_
  if (nrow(ij)) {
    dist <- sqrt(rowSums(sweep(samples, 2, point[ij])^2))
    radius <- sort(dist)[min(n_samples, ceiling((n_samples + 1) * level))]
  }
  cases <- list(arr = array(v, c(1L, n_time, d)), single = TRUE, H = n_time, d = d, dimnames = dimnames(v))
  core <- list(point = array(point, c(1L, n_time, d)), lower = array(lower, c(1L, n_time, d)),
               upper = array(upper, c(1L, n_time, d)), radius = radius, samples = list(samples))
  opts <- list(level = level, n_samples = n_samples, median = FALSE)
  label <- if (inherits(model, "ditimpute_series_dit_model")) "DiT series (linear trend, DiT on the series' windows)" else
    sprintf("GP series (linear trend, %s kernel)", model$kernel_name)
  out <- new_imputation(cases, core, opts, method = label,
                        truth = truth, model = model)
  time <- input$time
  out$time <- time
  out$rebuild <- input$rebuild
  out$window <- win
  out$blocks <- res$blocks
  out$gaps <- gap_runs(miss, time)
  out$record <- if (nrow(ij)) {
    data.frame(time = time[ij[, 1]], frame = ij[, 1], variable = colnames(v)[ij[, 2]], estimate = point[ij],
               lower = lower[ij], upper = upper[ij])
  } else {
    data.frame(time = time[0], frame = integer(), variable = character(), estimate = numeric(),
               lower = numeric(), upper = numeric())
  }
  class(out) <- c("ditimpute_series_imputation", class(out))
  out
}

# One row per run of missing values of a variable.
gap_runs <- function(miss, time) {
  rows <- lapply(seq_len(ncol(miss)), function(j) {
    r <- rle(miss[, j])
    ends <- cumsum(r$lengths)
    starts <- ends - r$lengths + 1
    g <- r$values
    if (!any(g)) return(NULL)
    data.frame(variable = colnames(miss)[j], start = starts[g], end = ends[g], length = r$lengths[g])
  })
  out <- do.call(rbind, rows)
  if (is.null(out)) out <- data.frame(variable = character(), start = integer(), end = integer(), length = integer())
  out
}

#' The completed series of a series imputation
#'
#' Gives the series imputed by [impute_series()] back in the class of its
#' input (a `ts`, a data frame, a [ditimpute_series()], a matrix or a vector),
#' with the point estimates, or the lower or upper interval bounds, or one
#' sample path, in place of the missing values.
#'
#' @param object A result of [impute_series()].
#' @param what `"point"`, `"lower"`, `"upper"` (observed values stay in all
#'   three), or `"sample"`.
#' @param m With `what = "sample"`: which sample path.
#' @return The completed series, in the class of the imputed `x`.
#' @examples
#' y <- datasets::Nile
#' y[40:55] <- NA
#' imp <- impute_series(y, n_samples = 20, seed = 1)
#' window(completed_series(imp), 1900, 1930)
#' @export
completed_series <- function(object, what = c("point", "lower", "upper", "sample"), m = 1) {
  if (!inherits(object, "ditimpute_series_imputation")) abort_input("object", "must be a result of impute_series().")
  what <- check_string(what, c("point", "lower", "upper", "sample"))
  vals <- object$point
  miss <- object$missing
  if (what %in% c("lower", "upper")) vals[miss] <- object[[what]][miss]
  if (what == "sample") {
    m <- check_count(m, max = object$n_samples)
    vals <- completion_values(object, m)[[1]]
  }
  object$rebuild(vals)
}

#' @export
print.ditimpute_series_imputation <- function(x, ...) {
  n_time <- nrow(x$x); d <- ncol(x$x)
  cat(sprintf("<ditimpute_series_imputation> %s\n", x$method))
  cat(sprintf("  %d time points x %d variable%s; %d entries imputed (%.1f%%) in %d gaps, the longest %d frames\n",
              n_time, d, if (d == 1) "" else "s", sum(x$missing), 100 * mean(x$missing), nrow(x$gaps),
              if (nrow(x$gaps)) max(x$gaps$length) else 0L))
  if (any(x$missing)) {
    cat(sprintf("  %g%% per-entry intervals from %d sample paths, mean width %.4g; observed values unchanged\n",
                100 * x$level, x$n_samples, mean(x$upper - x$lower, na.rm = TRUE)))
  }
  cat(sprintf("  windows: %d past + %d block + %d future frames (%d blocks imputed); %.1f s (%.1f s fitting)\n",
              x$window[["past"]], x$window[["block"]], x$window[["future"]], as.integer(x$blocks), x$model$seconds,
              x$model$fit_seconds))
  print(x$model)
  if (!is.null(x$truth) && any(x$missing)) {
    met <- imputation_metrics(x, by = "all")
    cat(sprintf("  against the truth: MAE %.4g, RMSE %.4g, interval coverage %.1f%%\n", met$mae, sqrt(met$mse),
                100 * met$interval_coverage))
  }
  invisible(x)
}

#' @export
summary.ditimpute_series_imputation <- function(object, ...) {
  miss <- object$missing
  vars <- colnames(object$x)
  per_var <- data.frame(variable = vars, missing = colSums(miss),
                        gaps = vapply(vars, function(v) sum(object$gaps$variable == v), 0L),
                        longest_gap = vapply(vars, function(v) max(c(0L, object$gaps$length[object$gaps$variable == v])), 0L),
                        mean_width = vapply(seq_along(vars), function(j) {
                          if (any(miss[, j])) mean(object$upper[miss[, j], j] - object$lower[miss[, j], j]) else NA_real_
                        }, 0), row.names = NULL)
  structure(list(variables = per_var, candidates = object$model$candidates, level = object$level,
                 method = object$method), class = "summary.ditimpute_series_imputation")
}

#' @export
print.summary.ditimpute_series_imputation <- function(x, ...) {
  cat(sprintf("Series imputation by %s\n\nPer variable (%g%% intervals):\n", x$method, 100 * x$level))
  print(x$variables, row.names = FALSE)
  if (!is.null(x$candidates)) {
    cat("\nCandidate kernels (fitted by maximum likelihood; the chosen one has the smaller BIC):\n")
    print(x$candidates, row.names = FALSE)
  }
  invisible(x)
}

#' @export
as.data.frame.ditimpute_series_imputation <- function(x, row.names = NULL, optional = FALSE, ...) {
  x$record
}
