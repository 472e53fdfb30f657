# Sequences arrive as an H x d matrix or an n x H x d array; internally always
# an array, with a flag to give back the caller's shape.
as_sequences <- function(x, H, d, arg = "x", call = rlang::caller_env()) {
  check_no_nan_inf(x, arg, call = call)  # NA is the one missing-value marker (errors.R)
  if (is.data.frame(x)) x <- as.matrix(x)
  # one variable: a vector of the H values is the H x 1 matrix (what
  # gp_simulate(spec, 1)[1, , ] gives for d = 1; a review found it refused)
  if (is.null(dim(x)) && d == 1 && length(x) == H && (is.numeric(x) || is.logical(x))) x <- matrix(x, H, 1)
  if (!is.numeric(x) && !(is.logical(x) && all(is.na(x)))) {
    abort_input(arg, "must be a numeric H x d matrix or n x H x d array.", call = call)
  }
  if (is.matrix(x)) {
    if (!identical(dim(x), c(as.integer(H), as.integer(d)))) {
      abort_input(arg, sprintf("must be %d x %d (H x d), not %d x %d.", H, d, nrow(x), ncol(x)), call = call)
    }
    arr <- array(as.numeric(x), c(1L, H, d))
    return(list(arr = arr, n = 1L, single = TRUE))
  }
  dm <- dim(x)
  if (length(dm) != 3 || dm[2] != H || dm[3] != d) {
    abort_input(arg, sprintf("must be an H x d = %d x %d matrix or an n x %d x %d array, not of dimension %s.",
                             H, d, H, d, paste(if (is.null(dm)) length(x) else dm, collapse = " x ")),
                call = call)
  }
  storage.mode(x) <- "double"
  list(arr = x, n = dm[1], single = FALSE)
}

check_observed_finite <- function(arr, miss, arg = "x", call = rlang::caller_env()) {
  n <- dim(arr)[1]
  obs <- rep(!as.vector(miss), each = n)
  if (anyNA(as.vector(arr)[obs])) {
    abort_input(arg, paste("has NA among the observed values (entries outside the missing pattern): every sequence",
                           "shares one pattern (`missing`, by default the first sequence's NAs); for sequences with",
                           "different gaps use impute(), or one call per sequence."),
                call = call)
  }
}

#' Exact conditional law of missing values under a Gaussian process
#'
#' For a missing pattern, the missing values given the observed ones are
#' Gaussian, `N(mu_cond, Sigma_cond)`. Frame-level patterns (whole frames
#' missing) use the Kronecker structure
#' `Sigma_cond = Gamma_cond %x% Lambda`, never forming the `Hd x Hd` matrix.
#' Entry-level patterns (some variables missing at a time step) go through
#' the joint precision `Q = Gamma^-1 %x% Lambda^-1`: with `m` the missing
#' entries, `Sigma_cond = Q_mm^-1` and
#' `mu_cond = mu_m - Q_mm^-1 Q_mo (x_o - mu_o)`, where every product with `Q`
#' is `Gamma^-1 X Lambda^-1` on the `H x d` matrix `X`. `method` chooses how
#' `Q_mm` is solved:
#' * `"precision"`: one Cholesky factorisation of the `m x m` matrix `Q_mm`
#'   (exact; at BeijingAir size, 48 x 132 with 30% missing, about 60 times
#'   faster than `"dense"`, see `bench/bench_entry_conditional.cpp`);
#' * `"cg"`: matrix-free: `Q_mm` is never formed; solves by conjugate
#'   gradients preconditioned by `Q_mm`'s blocks within each frame, to a
#'   relative residual of `cg_tol`; draws by pathwise conditioning (a prior
#'   draw plus one solve each, all draws' solves together). Memory grows
#'   like `H d` per right-hand side plus `H^2 + d^2`;
#' * `"dense"`: the reference, a Cholesky of the covariance of all entries
#'   (`O((Hd)^3)`); also for frame-level patterns;
#' * `"auto"` (default): `"precision"` while `m <= 8000` (`Q_mm` at most
#'   512 MB), `"cg"` beyond. The precision path was faster than the dense one
#'   at every size measured, down to 48 entries.
#'
#' In [impute()] with a GP model, the point is the exact conditional mean
#' and the intervals `mean +/- z sd` on every path. The L2 radius is the exact
#' weighted chi-square quantile where the eigenvalues are cheap (Kronecker and
#' dense paths, precision path up to 500 missing entries); beyond, it is the
#' `ceil((Z + 1) level)`-th smallest distance of the `Z` exact draws to the
#' exact mean, a finite-sample region that holds its level because the truth
#' and the draws are exchangeable under the model. On the CG path the `sd`
#' is also estimated from the draws (around the exact mean).
#'
#' All sequences of `x` share one factorisation. A path whose matrices would
#' not fit the memory limit (`options(ditimpute.max_memory)`, half the
#' physical memory by default) is an input error naming the size.
#'
#' @param spec A [gp_spec()].
#' @param x An `H x d` matrix (with `d = 1` also a vector of the `H` values)
#'   or `n x H x d` array; values at missing entries
#'   are ignored (they may be `NA`), observed values must be given. `NaN` and
#'   `Inf` are input errors anywhere in `x` (see [impute()]).
#' @param missing The missing pattern: frame indices, a logical vector over
#'   frames, a logical `H x d` matrix, a pattern object (see [patterns]), or
#'   `NULL` to take the `NA`s of `x` (of its first sequence for an array).
#' @param dense Use the dense reference path (same as `method = "dense"`;
#'   slow; for checks).
#' @param method `"auto"`, `"precision"`, `"cg"` or `"dense"` (above).
#' @param cov If `FALSE`, skip `cov` and the condition numbers (they cost
#'   `O(m^3)` and `m^2` memory); only the means are computed.
#' @param cg_tol Relative residual at which conjugate gradients stop.
#' @return An object of class `ditimpute_conditional`: `mean` (`x` with missing
#'   entries replaced by the conditional mean, same shape as `x`), `cond_mean`
#'   (`n x m`, the conditional means of the `m` missing entries in frame-major
#'   order), `cov` (`m x m`, `Sigma_cond`; `NULL` with `cov = FALSE`),
#'   `kappa_cond`, `kappa_obs`, `missing` (the `H x d` logical pattern),
#'   `frames` (missing frames, `NULL` for entry-level patterns), `method` (the
#'   path taken). [vcov()] returns `cov`.
#' @seealso [kappa_cond()], [gp_sample_conditional()]
#' @examples
#' spec <- gp_spec(24, d = 2, kernel = gp_kernel("laplace", lengthscale = 10))
#' x <- gp_simulate(spec, 1, seed = 1)[1, , ]
#' cond <- gp_conditional(spec, x, missing = 10:14)
#' cond
#' round(cond$mean[8:16, ], 3)
#' # entry-level gaps: the precision path, or matrix-free CG
#' miss <- matrix(FALSE, 24, 2); miss[c(3, 7, 15), 1] <- TRUE
#' gp_conditional(spec, x, missing = miss)$method
#' gp_conditional(spec, x, missing = miss, method = "cg", cov = FALSE)$cond_mean
#' @export
gp_conditional <- function(spec, x, missing = NULL, dense = FALSE, method = c("auto", "precision", "cg", "dense"),
                           cov = TRUE, cg_tol = 1e-10) {
  check_spec(spec)
  method <- check_string(method, c("auto", "precision", "cg", "dense"))
  if (!isTRUE(dense) && !isFALSE(dense)) abort_input("dense", "must be TRUE or FALSE.")  # "yes" was taken as FALSE (a review)
  if (isTRUE(dense)) method <- "dense"
  if (!isTRUE(cov) && !isFALSE(cov)) abort_input("cov", "must be TRUE or FALSE.")
  cg_tol <- check_number(cg_tol, lower = 0, upper = 1)
  seqs <- as_sequences(x, spec$H, spec$d)
  miss <- resolve_missing(missing, spec$H, spec$d, x = matrix(seqs$arr[1, , ], spec$H, spec$d))
  check_observed_finite(seqs$arr, miss)
  arr <- seqs$arr
  arr[is.na(arr)] <- 0
  res <- core_call(cpp_conditional(spec$Gamma, spec$Lambda, spec$mean, arr, seqs$n, miss, method, cov, cg_tol))
  filled <- fill_missing(seqs$arr, miss, res$mean)
  structure(list(
    mean = if (seqs$single) matrix(filled[1, , ], spec$H, spec$d) else filled,
    cond_mean = res$mean, cov = res$cov, kappa_cond = res$kappa_cond, kappa_obs = res$kappa_obs,
    missing = miss, frames = pattern_frames_of(miss), kronecker = res$kronecker, method = res$method, n = seqs$n
  ), class = "ditimpute_conditional")
}

# Writes the n x m values (frame-major over missing entries) into the missing
# entries of an n x H x d array.
fill_missing <- function(arr, miss, values) {
  ij <- missing_index(miss)
  for (k in seq_len(nrow(ij))) arr[, ij[k, 1], ij[k, 2]] <- values[, k]
  arr
}

#' @export
print.ditimpute_conditional <- function(x, ...) {
  check_dots(environment(), "print()", also = print_dots)
  m <- ncol(x$cond_mean)
  what <- if (!is.null(x$frames)) sprintf("%d missing frames (%s)", length(x$frames), compress_runs(x$frames)) else
    sprintf("%d missing entries", m)
  cat(sprintf("<ditimpute_conditional> %s, %d sequence%s\n", what, x$n, if (x$n == 1) "" else "s"))
  path <- if (is.null(x$method)) if (x$kronecker) "Kronecker" else "dense" else x$method
  if (is.null(x$cov)) {
    cat(sprintf("  %s path; covariance not computed (cov = FALSE)\n", path))
  } else {
    cat(sprintf("  kappa(Sigma_cond) = %.4g, kappa(Sigma_obs) = %.4g (%s path)\n", x$kappa_cond, x$kappa_obs, path))
    sds <- sqrt(diag(x$cov))
    cat(sprintf("  conditional sd of missing entries: %.3g to %.3g\n", min(sds), max(sds)))
  }
  invisible(x)
}

#' @export
vcov.ditimpute_conditional <- function(object, ...) {
  check_dots(environment(), "vcov()")
  object$cov
}

#' Condition numbers of a missing pattern
#'
#' `kappa_cond()` is `kappa(Sigma_cond)`, the condition number of the
#' conditional covariance of the missing values, which governs how hard a
#' pattern is to impute (the paper's Theorem 2); `kappa_obs()` is
#' `kappa(Sigma_obs)`, that of the observed values' covariance, which governs
#' the cost of the nested gradient descent (Lemma 1). Neither depends on the
#' data, only on the model and the pattern.
#'
#' @inheritParams gp_conditional
#' @param missing The missing pattern (see [gp_conditional()]), or a list of
#'   patterns (e.g. [paper_patterns()]) for a vector of condition numbers.
#' @return A number, or a named vector for a list of patterns.
#' @examples
#' spec <- gp_spec(96, d = 8, kernel = gp_kernel("laplace", lengthscale = 128))
#' kappa_cond(spec, pattern_tail(96, 16))
#' kappa_cond(spec, paper_patterns())
#' kappa_obs(spec, 81:96)
#' @export
kappa_cond <- function(spec, missing) kappas(spec, missing)$kappa_cond

#' @rdname kappa_cond
#' @export
kappa_obs <- function(spec, missing) kappas(spec, missing)$kappa_obs

kappas <- function(spec, missing, call = rlang::caller_env()) {
  check_spec(spec, call = call)
  if (is.list(missing) && !inherits(missing, "ditimpute_pattern")) {
    res <- lapply(missing, kappas, spec = spec, call = call)
    return(list(kappa_cond = vapply(res, `[[`, 0, "kappa_cond"),
                kappa_obs = vapply(res, `[[`, 0, "kappa_obs")))
  }
  miss <- resolve_missing(missing, spec$H, spec$d, call = call)
  core_call(cpp_kappa(spec$Gamma, spec$Lambda, miss), call = call)
}

#' Exact draws from the conditional law (the oracle imputer)
#'
#' @inheritParams gp_conditional
#' @param x One sequence, an `H x d` matrix (missing entries may be `NA`;
#'   with `d = 1` also a vector of the `H` values).
#' @param n_samples Number of draws.
#' @param seed Optional seed; without one, [set.seed()] makes draws repeatable.
#' @return An `n_samples x H x d` array of completed sequences: observed
#'   entries as in `x`, missing ones drawn from `N(mu_cond, Sigma_cond)`.
#' @examples
#' spec <- gp_spec(24, d = 2, kernel = gp_kernel("laplace", lengthscale = 10))
#' x <- gp_simulate(spec, 1, seed = 1)[1, , ]
#' draws <- gp_sample_conditional(spec, x, missing = 10:14, n_samples = 100, seed = 2)
#' apply(draws[, 12, ], 2, sd)
#' @export
gp_sample_conditional <- function(spec, x, missing = NULL, n_samples = 100, seed = NULL) {
  one <- one_sequence(spec, x, missing)
  n_samples <- check_count(n_samples)
  seed <- resolve_seed(seed)
  completed_draws(one, gp_draw(spec, one, n_samples, NULL, seed, 1L))
}

# One sequence of a spec with its pattern: the H x d values with missing
# entries zeroed (the core reads only observed ones) and the pattern.
one_sequence <- function(spec, x, missing, call = rlang::caller_env()) {
  check_spec(spec, call = call)
  seqs <- as_sequences(x, spec$H, spec$d, call = call)
  if (!seqs$single) abort_input("x", "must be one sequence (an H x d matrix).", call = call)
  miss <- resolve_missing(missing, spec$H, spec$d, x = matrix(seqs$arr[1, , ], spec$H, spec$d), call = call)
  check_observed_finite(seqs$arr, miss, call = call)
  x0 <- matrix(seqs$arr[1, , ], spec$H, spec$d)
  x0[miss] <- 0
  list(x = x0, miss = miss)
}

# Z draws of the missing entries of one sequence (Z x m), exact (`sampler`
# NULL) or by the diffusion sampler with the exact score.
gp_draw <- function(spec, one, n_samples, sampler, seed, threads) {
  x <- one$x
  x[one$miss] <- NA
  core_call(cpp_gp_draw(spec$Gamma, spec$Lambda, spec$mean, array(x, c(1L, dim(x))), n_samples, sampler, seed,
                        threads))[[1]]
}

# Z x m draws of the missing entries -> Z x H x d completed sequences.
completed_draws <- function(one, draws) {
  Z <- nrow(draws)
  arr <- array(rep(as.numeric(one$x), each = Z), c(Z, dim(one$x)))
  fill_missing(arr, one$miss, draws)
}
