#' Exact GP imputation of long series by Kalman smoothing
#'
#' The exact conditional law of the missing entries of a long multivariate
#' series under the package's Gaussian process (as [gp_spec()] with the same
#' kernel, `Lambda`, `mean` and `nugget`), computed in time and memory linear
#' in the number of frames: `Gamma` is never formed. It suits series far longer
#' than [impute()] on a [gp_spec()] can hold (that path needs the `H x H`
#' matrix `Gamma` and, for entry-level gaps, a factorisation over the missing
#' entries): one million entries (`H = 125000`, `d = 8`) take seconds.
#'
#' The model is `X_t = mean_t + L (f_t + e_t)` with `Lambda = L t(L)`, the `d`
#' components of `f` independent GPs with the kernel `k`, and white
#' `e_t ~ N(0, nugget I)`, so that `vec(X) ~ N(vec(mean), (K + nugget I) %x%
#' Lambda)`, the law of `gp_spec(H, kernel = kernel, Lambda = Lambda, mean =
#' mean, nugget = nugget)`. The Matern kernels of half-integer order are Markov:
#' `laplace` (Matern 1/2) in the state `f`, `matern32` in `(f, f')`,
#' `matern52` in `(f, f', f'')`, with closed-form transitions between frames
#' `scale` apart. A Kalman filter runs over the frames, each conditioning on
#' its own observed entries (frames with none just predict), a
#' Rauch-Tung-Striebel smoother gives the exact conditional mean and sd of
#' every missing entry, and backward sampling gives `n_samples` exact joint
#' draws.
#'
#' The result is the same kind of object as [impute()] on a [gp_spec()]: the
#' point estimate is the exact conditional mean and the intervals are
#' `mean +/- z sd`, exact at any `n_samples`. The L2-ball radius is the
#' `ceiling((n_samples + 1) level)`-th smallest distance of the exact draws to
#' the exact mean (the truth and the draws are exchangeable under the model, so
#' the ball holds its level); the closed-form radius of [impute()] needs the
#' eigenvalues of the conditional covariance, which this path never forms.
#' Hence `n_samples` must be at least `level / (1 - level)` (19 at 0.95).
#' At another level ([coverage()] with `levels`, [confint()]) regions and
#' intervals are rebuilt from the samples.
#'
#' @param x An `H x d` matrix with `NA` where values are missing (any
#'   entry-level pattern), or an `n x H x d` array of such series.
#' @param kernel A [gp_kernel()] of type `"laplace"`, `"matern32"` or
#'   `"matern52"` with the `"index"` embedding (`scale` is the time between
#'   frames). Other kernels are an input error: use [impute()] on a
#'   [gp_spec()].
#' @param Lambda `d x d` symmetric positive definite covariance of one frame
#'   (default: the identity).
#' @param mean A scalar, a length-`d` vector or an `H x d` matrix.
#' @param nugget Non-negative variance added to the diagonal of `Gamma`.
#' @param n_samples Exact joint draws per series.
#' @param level Confidence level in (0, 1).
#' @param seed Optional seed (see [impute()]).
#' @param truth Optional true values shaped like `x`, kept for
#'   [imputation_metrics()] and [coverage()].
#' @param threads CPU threads over series (default: the process's budget, see
#'   [threads]); one series runs on one thread.
#' @return An object of class `ditimpute_imputation` (see [impute()]) with
#'   method `"exact GP (state space)"`.
#' @seealso [impute()], [gp_spec()], [gp_conditional()]
#' @examples
#' k <- gp_kernel("matern32", lengthscale = 10)
#' Lambda <- matrix(c(1, 0.6, 0.6, 1), 2)
#' spec <- gp_spec(200, kernel = k, Lambda = Lambda, nugget = 0.01)
#' truth <- gp_simulate(spec, 1, seed = 1)[1, , ]
#' set.seed(3)
#' x <- truth
#' x[sample(length(x), 120)] <- NA
#' x[50:70, ] <- NA
#' imp <- gp_smooth(x, kernel = k, Lambda = Lambda, nugget = 0.01, seed = 2, truth = truth)
#' imp
#' imputation_metrics(imp)
#' @export
gp_smooth <- function(x, kernel = gp_kernel("matern32"), Lambda = NULL, mean = 0, nugget = 0, n_samples = 100,
                      level = 0.95, seed = NULL, truth = NULL, threads = NULL) {
  if (!inherits(kernel, "ditimpute_kernel")) abort_input("kernel", "must be made by gp_kernel().")
  if (!kernel$type %in% c("laplace", "matern32", "matern52") || kernel$embedding != "index") {
    abort_input("kernel", sprintf(paste(
      "gp_smooth() supports the laplace (Matern 1/2), matern32 and matern52 kernels with the index embedding,",
      "not %s; use impute() on a gp_spec() for it."),
      if (kernel$embedding != "index") "the sinusoidal embedding" else sprintf("the %s kernel", kernel$type)))
  }
  if (is.data.frame(x)) x <- as.matrix(x)
  dm <- dim(x)
  if (!is.numeric(x) && !(is.logical(x) && all(is.na(x)))) {
    abort_input("x", "must be a numeric H x d matrix or n x H x d array.")
  }
  if (!length(dm) %in% 2:3) abort_input("x", "must be an H x d matrix or an n x H x d array.")
  H <- dm[length(dm) - 1]
  d <- dm[length(dm)]
  if (is.null(Lambda)) Lambda <- diag(d)
  if (length(Lambda) == 1 && !is.matrix(Lambda)) Lambda <- matrix(Lambda, 1, 1)
  Lambda <- check_numeric_matrix(Lambda, nrow = d, ncol = d)
  nugget <- check_number(nugget, lower = 0, upper = Inf, open = FALSE)
  mean <- expand_mean(mean, H, d)
  # Matern 5/2 with no nugget and a lengthscale beyond 20,000 frames: the
  # smoother's innovation variance, about (sqrt(5) / lengthscale)^5 of the
  # kernel's variance a frame, falls below double precision, and its answer
  # drifts (0.1% at 5e4 frames, 3% at 1e5, an error beyond; a user review
  # found the 3% silent). Matern 3/2 and the Laplace kernel keep their answer
  # to 1e10 frames, and any nugget of 1e-12 of the variance or more keeps
  # Matern 5/2's equal to the dense conditional (bench/results/gp_smooth_long_lengthscale.md).
  ratio <- kernel$lengthscale / kernel$scale
  if (kernel$type == "matern52" && ratio > 2e4 && nugget < 1e-12 * kernel$variance) {
    abort_input("kernel", sprintf(paste("is Matern 5/2 with a lengthscale of %s frames and no nugget, beyond what the",
                                        "smoother resolves in double precision (20,000 frames): add a small `nugget`",
                                        "(e.g. 1e-10), or shorten the lengthscale."), format(signif(ratio, 3))))
  }
  cases <- prepare_cases(x, H, d, what = "Lambda and mean have")
  opts <- impute_options(n_samples, level, "mean", seed, threads)
  res <- core_call(cpp_impute_state_space(kernel, nugget, Lambda, mean, cases$arr, opts))
  new_imputation(cases, res, opts, method = "exact GP (state space)", truth = truth)
}
