# Reference imputers in the impute() interface, so that every method of a
# benchmark is scored by the same imputation_metrics().

#' Baseline and outside imputations as `ditimpute_imputation` objects
#'
#' `impute_baseline()` wraps the two simple references [impute_linear()]
#' (linear interpolation along time within each window) and [impute_mean()]
#' (each variable's training mean) as imputations, so they are scored by
#' [imputation_metrics()] exactly like [impute()]. They are deterministic:
#' they have no samples, no intervals and no region (`lower`, `upper` and
#' `radius` are `NA`), so their interval coverage is `NA` and their CRPS is
#' the absolute error of a point forecast.
#'
#' `imputation_from_completions()` brings any other imputer into the same
#' interface: give it the completed data sets it produced (e.g. the `m`
#' imputations of `mice` or `Amelia`, reshaped like `x`). With two or more
#' completions they are treated as samples (point estimate, L2-ball region
#' and per-entry intervals as in [impute()]); with one, the imputation is
#' deterministic as above.
#'
#' @param x An `n x H x d` array of windows (or one `H x d` window), `NA` =
#'   missing; every window needs an observed entry. A window with no missing
#'   entry passes through as in [impute()] (its point is its data; with
#'   samples, radius 0 and an `n x 0` sample matrix), and the metrics leave
#'   it out (`NA`); every window complete is an input error.
#' @param method For `impute_baseline()`, `"linear"` or `"mean"`; for
#'   `imputation_from_completions()`, a label for printing.
#' @param means Training means (see [impute_linear()]): 0 for standardised data.
#' @param completions A list of arrays shaped like `x`, each equal to `x` on
#'   its observed entries and finite on its missing ones.
#' @param level,point,truth,region As in [impute()]. With fewer completions
#'   than a finite-sample region needs (e.g. 5 from Amelia), use
#'   `region = "quantile"` and correct the coverage with [calibrate()].
#' @return An object of class `ditimpute_imputation`.
#' @seealso [impute()], [imputation_metrics()], [hide_mcar()]
#' @examples
#' x <- array(rnorm(2 * 10 * 2), c(2, 10, 2))
#' held <- hide_mcar(x, rate = 0.2, seed = 1)
#' lin <- impute_baseline(held$x, "linear")
#' imputation_metrics(lin, truth = x, by = "all")
#' # Two completions from some other imputer, as samples (too few for a
#' # finite-sample region, so the in-sample one; see calibrate()):
#' fills <- lapply(1:2, function(k) impute_mean(held$x, means = k - 1.5))
#' imputation_metrics(imputation_from_completions(held$x, fills, method = "toy",
#'                                             region = "quantile"), truth = x, by = "all")
#' @export
impute_baseline <- function(x, method = c("linear", "mean"), means = 0, truth = NULL) {
  method <- check_string(method, c("linear", "mean"))
  fill <- if (method == "linear") impute_linear else impute_mean
  filled <- if (missing(means)) fill(x) else fill(x, means = means)  # the default's check (resolve_means())
  imputation_from_completions(x, list(filled),
                              method = if (method == "linear") "linear interpolation" else "mean", truth = truth)
}

#' @rdname impute_baseline
#' @export
imputation_from_completions <- function(x, completions, method = "outside imputer", level = 0.9,
                                        point = c("mean", "median"), truth = NULL,
                                        region = c("finite", "quantile")) {
  dm <- dim(x)
  if (!is.array(x) || !length(dm) %in% 2:3) abort_input("x", "must be an H x d matrix or an n x H x d array.")
  cases <- prepare_cases(x, dm[length(dm) - 1], dm[length(dm)], what = "the data have")
  if (!is.character(method) || length(method) != 1) abort_input("method", "must be a single string.")
  if (is.array(completions)) completions <- list(completions)
  if (!is.list(completions) || length(completions) < 1) {
    abort_input("completions", "must be a list of completed data sets shaped like x.")
  }
  cases$miss <- is.na(cases$arr)
  comp <- lapply(seq_along(completions), function(k) check_completion(completions[[k]], k, cases))
  if (length(comp) >= 2) {
    opts <- impute_options(length(comp), level, point, seed = 0, threads = NULL, region = region)
    # said here in terms of completions (the core's check names n_samples, which this function has not; a review)
    if (opts$region == "finite" && length(comp) < cpp_min_samples(opts$level)) {
      abort_input("completions", sprintf(paste("holds %d completed data sets; a finite-sample region and intervals at",
                                               "level %g need at least %d: give more, or region = \"quantile\"",
                                               "(the in-sample one)."),
                                         length(comp), opts$level, cpp_min_samples(opts$level)))
    }
    # Z x m_i samples of each sequence's missing entries, summarised by the core.
    samples <- lapply(seq_len(cases$n), function(i) {
      arr <- aperm(vapply(comp, function(cpl) cpl[i, , ], matrix(0, cases$H, cases$d)), c(3, 1, 2))
      missing_values(arr, matrix(cases$miss[i, , ], cases$H, cases$d))
    })
    res <- core_call(cpp_impute_samples(cases$arr, samples, opts))
    return(new_imputation(cases, res, opts, method = method, truth = truth))
  }
  core_call(cpp_check_cases(cases$arr))  # impute()'s rule: a complete window passes through, not every one
  opts <- list(n_samples = 1L, level = check_level(level))
  na <- array(NA_real_, dim(cases$arr))
  filled <- comp[[1]]
  filled[!cases$miss] <- cases$arr[!cases$miss]  # exactly the observed values (completions may round them)
  res <- list(point = filled, lower = na, upper = na, radius = rep(NA_real_, cases$n),
              samples = vector("list", cases$n))
  new_imputation(cases, res, opts, method = method, truth = truth, point_type = "deterministic")
}

check_completion <- function(cpl, k, cases, call = rlang::caller_env()) {
  if (is.data.frame(cpl)) cpl <- as.matrix(cpl)
  arr <- if (length(dim(cpl)) == 2) array(as.numeric(cpl), c(1L, dim(cpl))) else cpl
  if (!is.numeric(arr) || !identical(as.integer(dim(arr)), as.integer(dim(cases$arr)))) {
    abort_input("completions", sprintf("completion %d is not a numeric array shaped like x.", k), call = call)
  }
  if (any(!is.finite(arr[cases$miss]))) {
    abort_input("completions", sprintf("completion %d leaves a missing entry of x unfilled (NA, NaN or Inf).", k),
                call = call)
  }
  obs <- !cases$miss
  if (any(abs(arr[obs] - cases$arr[obs]) > 1e-8 * pmax(1, abs(cases$arr[obs])))) {
    abort_input("completions", sprintf("completion %d changes observed values of x.", k), call = call)
  }
  storage.mode(arr) <- "double"
  arr
}
