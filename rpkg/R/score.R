# Shared preparation of the score functions: one sequence, its pattern, and
# the states v (one value per missing entry, frame-major).
score_inputs <- function(spec, x, missing, v, t, call = rlang::caller_env()) {
  one <- one_sequence(spec, x, missing, call = call)
  m <- sum(one$miss)
  if (!is.numeric(v) || any(!is.finite(v))) abort_input("v", "must be finite numbers.", call = call)
  V <- if (is.matrix(v)) v else matrix(v, nrow = 1)
  if (ncol(V) != m) {
    abort_input("v", sprintf("must have one value per missing entry (%d), not %d.", m, ncol(V)), call = call)
  }
  t <- check_number(t, lower = 0, upper = Inf, call = call)
  list(x = one$x, miss = one$miss, V = V, t = t, vector = !is.matrix(v))
}

#' Exact conditional score of a Gaussian process
#'
#' The score of the diffused conditional law at time `t` (the paper's eq. 9):
#' `-(alpha_t^2 Sigma_cond + sigma_t^2 I)^{-1} (v - alpha_t mu_cond)` with
#' `alpha_t = exp(-t / 2)` and `sigma_t^2 = 1 - exp(-t)`. Computed through the
#' eigen-decompositions of `Gamma_cond` and `Lambda` for frame-level patterns.
#'
#' @inheritParams gp_conditional
#' @param x One sequence, an `H x d` matrix (missing entries may be `NA`).
#' @param v States: a vector with one value per missing entry (frame-major
#'   order: all variables of the first missing frame, then the next frame), or
#'   a matrix with one state per row.
#' @param t Diffusion time, `t > 0`.
#' @return The score, shaped like `v`.
#' @seealso [score_nested_gd()]
#' @examples
#' spec <- gp_spec(32, d = 2, kernel = gp_kernel("laplace", lengthscale = 8))
#' x <- gp_simulate(spec, 1, seed = 1)[1, , ]
#' v <- rnorm(2 * 4)
#' score_exact(spec, x, missing = 10:13, v = v, t = 0.5)
#' @export
score_exact <- function(spec, x, missing = NULL, v, t) {
  s <- score_inputs(spec, x, missing, v, t)
  out <- core_call(cpp_score_exact(spec$Gamma, spec$Lambda, spec$mean, s$x, s$miss, s$V, s$t))
  if (s$vector) as.vector(out) else out
}

#' Conditional score by nested gradient descent (Algorithm 2)
#'
#' Runs the paper's Algorithm 2: a major gradient descent on the quadratic
#' whose minimiser is the score, each of whose gradients needs
#' `Sigma_obs^{-1}` applied to a vector, found by an auxiliary gradient
#' descent. Step sizes are Lemma 1's. By default both loops stop adaptively
#' once the score is within relative error `tol`; with `K` and `K_aux` given
#' they run exactly that many steps. The iterations needed grow with
#' `kappa(Sigma_cond)` (major) and `kappa(Sigma_obs)` (auxiliary), which is
#' how the paper ties the condition number to the size of a transformer that
#' represents the score. `lemma1_counts()` reports Lemma 1's predicted counts.
#'
#' Lemma 1 states its counts up to constants; `lemma1_counts()` takes every
#' hidden constant as 1, so its counts show the scaling with kappa, not a
#' sharp bound. For long sequences with long lengthscales `kappa(Sigma_obs)` is
#' large (about 1.7e4 for `H = 96`, lengthscale 128), and the auxiliary loop
#' needs about 1e5 steps a major step.
#'
#' @inheritParams score_exact
#' @param v One state: a vector with one value per missing entry.
#' @param tol Target relative error of the returned score.
#' @param K,K_aux Fixed numbers of major and auxiliary steps (both > 0), or
#'   `NULL` for adaptive stopping.
#' @param max_major,max_aux Caps on the adaptive loops.
#' @return A list: `score`, `major_iterations`, `aux_iterations` (one count
#'   per major gradient), `aux_iterations_total`, step sizes `eta` and
#'   `theta`, `rel_error` against [score_exact()], `converged`, and `lemma`
#'   (Lemma 1's prediction). `lemma1_counts()` returns a list with the
#'   condition numbers `kappa_cond`, `kappa_obs`, `kappa_t`, the step sizes and
#'   the predicted counts `K` and `K_aux`.
#' @examples
#' spec <- gp_spec(32, d = 1, kernel = gp_kernel("laplace", lengthscale = 8))
#' x <- matrix(gp_simulate(spec, 1, seed = 1), 32, 1)
#' v <- rnorm(4)
#' r <- score_nested_gd(spec, x, missing = 29:32, v = v, t = 0.5, tol = 1e-6)
#' c(r$major_iterations, r$aux_iterations_total, r$rel_error)
#' lemma1_counts(spec, 29:32, t = 0.5, eps = 1e-6)[c("kappa_cond", "kappa_obs", "K", "K_aux")]
#' @export
score_nested_gd <- function(spec, x, missing = NULL, v, t, tol = 1e-6, K = NULL, K_aux = NULL,
                            max_major = 1e6, max_aux = 1e7) {
  s <- score_inputs(spec, x, missing, v, t)
  if (nrow(s$V) != 1) abort_input("v", "must be one state (a vector).")
  tol <- check_number(tol, lower = 0, upper = 1)
  fixed <- !is.null(K) || !is.null(K_aux)
  if (fixed) {
    if (is.null(K) || is.null(K_aux)) abort_input(if (is.null(K)) "K" else "K_aux", "give both K and K_aux, or neither.")
    K <- check_count(K)
    K_aux <- check_count(K_aux)
  }
  max_major <- check_count(max_major)
  max_aux <- check_count(max_aux)
  core_call(cpp_score_nested_gd(spec$Gamma, spec$Lambda, spec$mean, s$x, s$miss, as.vector(s$V), s$t, tol,
                                if (fixed) K else 0, if (fixed) K_aux else 0, max_major, max_aux))
}

#' @rdname score_nested_gd
#' @param eps Error tolerance of Lemma 1, in (0, 1).
#' @export
lemma1_counts <- function(spec, missing, t, eps = 1e-6) {
  check_spec(spec)
  miss <- resolve_missing(missing, spec$H, spec$d)
  t <- check_number(t, lower = 0, upper = Inf)
  eps <- check_number(eps, lower = 0, upper = 1)
  core_call(cpp_lemma1_counts(spec$Gamma, spec$Lambda, miss, t, eps))
}
