# From a long series to model-ready batches: windows, a split in time, and a
# standardisation fitted on the training part only.

#' Cut a series into windows
#'
#' Cuts a series into windows of `length` consecutive time stamps, the
#' sequences the models work on. The default `stride = length` gives
#' non-overlapping windows, as in the paper's appendix: 30 hours for
#' BeijingAir (35,064 hours -> 1,168 windows) and 48 steps for ETT. Windows
#' start every `stride` rows, `floor((T - length) / stride) + 1` of them: the
#' rows after the last window are dropped, and with `stride > length` so are
#' the rows between windows.
#'
#' @param series A [ditimpute_series], or a numeric `T x d` matrix (then
#'   window starts are row numbers).
#' @param length Window length `H` (number of time stamps).
#' @param stride Steps between the starts of consecutive windows.
#' @return An `n x H x d` array (`NA` = missing), the variables' names as its
#'   third `dimnames`, with attributes `start` (the first time stamp of each
#'   window: `POSIXct`, or row numbers for a matrix) and `freq` (the spacing of
#'   time stamps in seconds, or 1 row).
#' @seealso [split_by_time()], [fit_scaler()]
#' @examples
#' s <- ditimpute_series(matrix(1:20, 10, 2, dimnames = list(NULL, c("a", "b"))))
#' w <- make_windows(s, 4)
#' dim(w)             # 2 windows of 4 steps, 2 variables (2 rows left over)
#' attr(w, "start")
#' dim(make_windows(s, 4, stride = 2))
#' @export
make_windows <- function(series, length, stride = length) {
  src <- series_parts(series, "series")
  n_time <- nrow(src$values)
  length <- check_count(length)
  stride <- check_count(stride)
  if (length > n_time) {
    abort_input("length", sprintf("must be at most the series' %d time stamps, not %d.", n_time, length))
  }
  starts <- seq.int(1L, n_time - length + 1L, by = stride)
  rows <- as.vector(outer(starts, seq_len(length) - 1L, `+`))   # window index varies fastest
  out <- array(src$values[rows, , drop = FALSE], dim = c(base::length(starts), length, ncol(src$values)),
               dimnames = list(NULL, NULL, colnames(src$values)))
  attr(out, "start") <- src$time[starts]
  attr(out, "freq") <- src$freq
  if (isTRUE(attr(series, "ditimpute_scaled"))) attr(out, "ditimpute_scaled") <- TRUE  # standardised windows
  out
}

# The values, time axis and spacing of a series or a plain matrix.
series_parts <- function(x, arg, call = rlang::caller_env()) {
  if (inherits(x, "ditimpute_series")) return(list(values = x$values, time = x$time, freq = x$freq))
  if (is.matrix(x) && is.numeric(x)) {
    check_no_nan_inf(x, arg, call = call)
    return(list(values = x, time = seq_len(nrow(x)), freq = 1))
  }
  abort_input(arg, "must be a ditimpute_series or a numeric matrix (rows = time stamps).", call = call)
}

#' Split data into a training and a test part in time
#'
#' The training part comes strictly before the test part, so that no test
#' information leaks into training. Split the long series first, then cut
#' each part into windows (that is what [load_real_data()] does): no window
#' straddles the split. Given windows instead, the first `floor(train * n)`
#' windows train, and the test part keeps only the windows that start after
#' the last training window ends (with overlapping windows a few are dropped).
#'
#' @param x A [ditimpute_series], or windows from [make_windows()].
#' @param train Share of the time stamps (or windows) used for training.
#' @return A list with `train` and `test`, of the same kind as `x`.
#' @seealso [make_windows()], [fit_scaler()]
#' @examples
#' s <- ditimpute_series(matrix(rnorm(200), 100, 2))
#' parts <- split_by_time(s, train = 0.8)
#' parts$train
#' parts$test
#' w <- lapply(parts, make_windows, length = 10)
#' sapply(w, dim)
#' @export
split_by_time <- function(x, train = 0.8) {
  train <- check_number(train, lower = 0, upper = 1)
  if (inherits(x, "ditimpute_series")) {
    n_time <- nrow(x$values)
    k <- floor(train * n_time + 1e-9)  # 0.29 * 100 is 28.999...: 29 rows, as said (a review)
    if (k < 2 || n_time - k < 2) {
      abort_input("train", sprintf("leaves fewer than 2 time stamps in a part (%d of %d for training).", k, n_time))
    }
    part <- function(rows) {
      out <- new_series(x$values[rows, , drop = FALSE], x$time[rows], x$name, x$freq)
      # the parts of standardised data are standardised: the mark scale_data() and
      # impute_mean() check goes with them (a review: both checks were lost)
      if (isTRUE(attr(x, "ditimpute_scaled"))) attr(out, "ditimpute_scaled") <- TRUE
      out
    }
    return(list(train = part(seq_len(k)), test = part((k + 1):n_time)))
  }
  if (!is.array(x) || base::length(dim(x)) != 3 || is.null(attr(x, "start")) || is.null(attr(x, "freq"))) {
    abort_input("x", "must be a ditimpute_series or windows from make_windows().")
  }
  check_no_nan_inf(x, "x")
  n <- dim(x)[1]
  start <- attr(x, "start")
  begin <- as.numeric(start)
  if (any(diff(begin) <= 0)) abort_input("x", "must hold windows in increasing order of their start.")
  k <- floor(train * n + 1e-9)
  if (k < 1 || k >= n) abort_input("train", sprintf("leaves an empty part (%d of %d windows for training).", k, n))
  train_end <- begin[k] + (dim(x)[2] - 1) * attr(x, "freq")
  test <- which(begin > train_end)
  if (base::length(test) == 0) abort_input("train", "leaves no test window after the training windows.")
  pick <- function(i) {
    out <- x[i, , , drop = FALSE]
    attr(out, "start") <- start[i]
    attr(out, "freq") <- attr(x, "freq")
    if (isTRUE(attr(x, "ditimpute_scaled"))) attr(out, "ditimpute_scaled") <- TRUE
    out
  }
  list(train = pick(seq_len(k)), test = pick(test))
}

#' Standardise data with training statistics
#'
#' `fit_scaler()` computes each variable's mean and standard deviation on the
#' training data, ignoring `NA`. `scale_data()` subtracts the means and divides
#' by the sds; `unscale_data()` maps back to the data's units, so imputations
#' made on the standardised scale are reported in the original units. Use
#' `unscale_data(x, scaler, center = FALSE)` for spreads (sds, interval
#' half-widths, errors), which are only multiplied by the sds.
#'
#' `unscale_data()` of an imputation from [impute()] maps its data, point
#' estimate, intervals, truth and sample paths back, so [confint()],
#' [imputation_metrics()], [completions()] and [as_mids()] work in the data's
#' units. Its L2-ball region is a ball only on the standardised scale, so the
#' result has no region (compute [coverage()] of the region before unscaling)
#' and no model.
#'
#' Fit the scaler on the training part only: the test part must not inform
#' the preprocessing it is evaluated with. A variable with no observed value,
#' a single one, or zero spread in training cannot be standardised and is an
#' error naming it.
#'
#' @param train,x A [ditimpute_series], an `H x d` matrix or an `n x H x d`
#'   array; variables are the last dimension.
#' @param scaler A `ditimpute_scaler` from `fit_scaler()`.
#' @param center If `FALSE`, only rescale (for sds and other spreads).
#' @return `fit_scaler()`: an object of class `ditimpute_scaler`, a list with
#'   `center` and `scale` (named d-vectors). `scale_data()` and
#'   `unscale_data()`: `x` transformed, of the same shape. `scale_data()` marks
#'   its result with the attribute `ditimpute_scaled = TRUE` (a series passes
#'   it on to the windows [make_windows()] cuts from it), which
#'   [impute_mean()] and [impute_linear()] check.
#' @examples
#' x <- matrix(c(1, 2, 3, NA, 10, 20, 30, 40), 4, 2, dimnames = list(NULL, c("a", "b")))
#' sc <- fit_scaler(x)
#' sc
#' z <- scale_data(x, sc)
#' all.equal(unscale_data(z, sc), x, check.attributes = FALSE)
#' unscale_data(matrix(1, 1, 2), sc, center = FALSE)   # sd 1 -> the variables' sds
#'
#' # an imputation of standardised windows, back in the data's units
#' spec <- gp_spec(24, d = 2, kernel = gp_kernel("laplace", lengthscale = 10))
#' w <- gp_simulate(spec, 3, seed = 1) * 5 + 100   # windows in the data's units
#' sw <- fit_scaler(w)
#' held <- hide_mcar(scale_data(w, sw), rate = 0.2, seed = 2)
#' imp <- unscale_data(impute(spec, held$x, n_samples = 100, seed = 3), sw)
#' head(confint(imp))
#' @export
fit_scaler <- function(train) {
  v <- value_matrix(train, "train")
  center <- colMeans(v, na.rm = TRUE)
  n_obs <- colSums(!is.na(v))
  scale <- apply(v, 2, stats::sd, na.rm = TRUE)
  bad <- n_obs < 2 | is.na(scale) | scale == 0 | !is.finite(scale) | !is.finite(center)
  if (any(bad)) {
    j <- which(bad)[1]
    # values near the largest double overflow the mean or sd (a review:
    # 1e200s gave scale Inf, scale_data() zeros, unscale_data() NaN)
    why <- if (n_obs[j] == 0) "has no observed value" else if (n_obs[j] == 1) "has a single observed value" else
      if (!is.finite(scale[j]) || !is.finite(center[j])) "has values so large that its mean or standard deviation overflows (rescale it, e.g. to other units)" else
      "has zero standard deviation"
    abort_input("train", sprintf("variable %s %s, so it cannot be standardised (%d such variable%s).",
                                 var_label(v, j), why, sum(bad), if (sum(bad) > 1) "s" else ""))
  }
  names(center) <- names(scale) <- colnames(v)
  structure(list(center = center, scale = scale), class = "ditimpute_scaler")
}

#' @export
print.ditimpute_scaler <- function(x, ...) {
  check_dots(environment(), "print()", also = print_dots)
  cat(sprintf("<ditimpute_scaler> means and sds of %d variables (fitted on training data)\n",
              base::length(x$center)))
  show <- seq_len(min(6, base::length(x$center)))
  print(rbind(center = x$center[show], scale = x$scale[show]), digits = 4)
  if (base::length(x$center) > 6) cat(sprintf("... and %d more\n", base::length(x$center) - 6))
  invisible(x)
}

#' @rdname fit_scaler
#' @export
scale_data <- function(x, scaler) {
  # standardised twice, data look standardised and are not (a user review:
  # ETTh1 scaled twice had its oil temperature at mean -1.56, without a word)
  if (isTRUE(attr(x, "ditimpute_scaled"))) {
    abort_input("x", paste("is already standardised (scale_data() marked it so); scaling it again would standardise",
                           "it twice. Give the data on their own scale, or unscale_data() first."))
  }
  out <- transform_values(x, scaler, function(v, each) (v - rep(scaler$center, each = each)) /
                            rep(scaler$scale, each = each))
  attr(out, "ditimpute_scaled") <- TRUE  # a series passes it on to its windows (make_windows())
  out
}

#' @rdname fit_scaler
#' @export
unscale_data <- function(x, scaler, center = TRUE) {
  if (!isTRUE(center) && !isFALSE(center)) abort_input("center", "must be TRUE or FALSE.")
  if (inherits(x, "ditimpute_imputation")) return(unscale_imputation(x, scaler, center))
  shift <- if (center) scaler$center else 0 * scaler$center
  out <- transform_values(x, scaler, function(v, each) v * rep(scaler$scale, each = each) +
                            rep(shift, each = each))
  attr(out, "ditimpute_scaled") <- NULL
  out
}

# An imputation of standardised windows in the data's units: the data, point,
# intervals, truth and sample paths mapped back (quantiles and means commute
# with the map, so the intervals are the ones the samples give in these units).
# The L2-ball region is a ball only on the standardised scale: its radius is
# dropped (coverage() of the region before unscaling), and so is the model,
# which knows only that scale.
unscale_imputation <- function(x, scaler, center, call = rlang::caller_env()) {
  if (inherits(x, "ditimpute_series_imputation")) {
    abort_input("x", "is an impute_series() result, which is in the series' own units already.", call = call)
  }
  if (!center) abort_input("center", "must be TRUE for an imputation (its values, not spreads, are mapped back).",
                           call = call)
  if (!is.null(x$unscaled)) {
    abort_input("x", "was unscaled already (unscale_data() marked it so); unscaling it again would apply the scaler twice.",
                call = call)
  }
  back <- function(v) if (is.null(v)) NULL else unscale_data(v, scaler)
  for (f in c("x", "point", "centre", "lower", "upper", "truth")) x[[f]] <- back(x[[f]])
  d <- base::length(scaler$center)
  miss <- as3(x)$missing
  x$samples <- lapply(seq_along(x$samples), function(i) {
    s <- x$samples[[i]]
    if (is.null(s)) return(NULL)
    j <- (which(t(miss[i, , ])) - 1L) %% d + 1L  # each missing entry's variable, frame-major
    s * rep(scaler$scale[j], each = nrow(s)) + rep(scaler$center[j], each = nrow(s))
  })
  x$radius <- rep(NA_real_, base::length(x$radius))
  x$model <- NULL
  x$unscaled <- scaler
  x
}

# Applies f(values, each) where each = entries per variable (variables are the
# slowest-varying index of a matrix or array in R's column-major order).
transform_values <- function(x, scaler, f, call = rlang::caller_env()) {
  if (!inherits(scaler, "ditimpute_scaler")) {
    abort_input("scaler", "must be a ditimpute_scaler from fit_scaler().", call = call)
  }
  v <- if (inherits(x, "ditimpute_series")) x$values else x
  d <- check_value_shape(v, "x", call = call)
  if (d != base::length(scaler$center)) {
    abort_input("x", sprintf("has %d variables but the scaler was fitted on %d.", d,
                             base::length(scaler$center)), call = call)
  }
  nm <- var_names(v)
  if (!is.null(nm) && !is.null(names(scaler$center)) && !identical(unname(nm), names(scaler$center))) {
    abort_input("x", "has variables named differently from (or ordered unlike) those of the scaler.", call = call)
  }
  v[] <- f(v, base::length(v) / d)
  if (inherits(x, "ditimpute_series")) {
    x$values <- v
    return(x)
  }
  v
}

# Number of variables of a numeric matrix or 3-d array (the last dimension);
# NaN and Inf are input errors (check_no_nan_inf(), errors.R).
check_value_shape <- function(v, arg, call = rlang::caller_env(), series = TRUE) {
  # value_matrix() passes a series' values: a series itself here is one the
  # caller does not take (hide_mcar(), impute_mean(); the message below listed
  # it as taken; a review)
  if (inherits(v, "ditimpute_series")) {
    abort_input(arg, "is a ditimpute_series, which this function does not take: give its values (x$values), an H x d matrix.",
                call = call)
  }
  if (!is.numeric(v) || !is.array(v) || !base::length(dim(v)) %in% 2:3) {
    abort_input(arg, sprintf("must be %sa numeric H x d matrix or an n x H x d array.",
                             if (series) "a ditimpute_series, " else ""), call = call)
  }
  check_no_nan_inf(v, arg, call = call)
  dims <- dim(v)
  dims[base::length(dims)]
}

var_names <- function(v) {
  dn <- dimnames(v)
  if (is.null(dn)) NULL else dn[[base::length(dn)]]
}

# All entries of a series, matrix or array as a (entries x d) matrix.
value_matrix <- function(x, arg, call = rlang::caller_env()) {
  v <- if (inherits(x, "ditimpute_series")) x$values else x
  d <- check_value_shape(v, arg, call = call)
  out <- matrix(as.vector(v), ncol = d)
  colnames(out) <- var_names(v)
  out
}

var_label <- function(v, j) if (is.null(colnames(v))) sprintf("%d", j) else sprintf("\"%s\"", colnames(v)[j])
