#' Gaussian-process model of multivariate sequences
#'
#' A sequence `X` (an `H x d` matrix, rows are frames) has
#' `vec(X) ~ N(vec(mean), Gamma %x% Lambda)`, where `vec` stacks frames:
#' `Cov(X[i, ], X[j, ]) = Gamma[i, j] * Lambda`.
#'
#' @param H Sequence length (number of frames).
#' @param d Number of variables. Defaults to `nrow(Lambda)`, or 1.
#' @param kernel A [gp_kernel()] giving `Gamma`; ignored when `Gamma` is given.
#' @param Lambda `d x d` symmetric positive definite covariance of one frame.
#' @param mean A scalar, a length-`d` vector (one mean per variable) or an
#'   `H x d` matrix.
#' @param Gamma Optional `H x H` symmetric positive definite temporal
#'   covariance, used instead of `kernel`.
#' @param nugget Non-negative value added to the diagonal of `Gamma`. Smooth
#'   kernels (rbf, Matern 5/2 with long lengthscales) give numerically singular
#'   `Gamma`; a small nugget such as `1e-6` keeps it positive definite.
#' @return An object of class `ditimpute_gp`: a list with `H`, `d`, `Gamma`,
#'   `Lambda`, `mean` (`H x d`) and `kernel`.
#' @seealso [gp_simulate()], [gp_conditional()], [kappa_cond()]
#' @examples
#' spec <- gp_spec(96, d = 8, kernel = gp_kernel("laplace", lengthscale = 128))
#' spec
#' @export
gp_spec <- function(H, d = NULL, kernel = gp_kernel(), Lambda = NULL, mean = 0, Gamma = NULL,
                    nugget = 0) {
  H <- check_count(H, min = 2)
  if (is.null(d)) d <- if (is.null(Lambda)) 1L else NROW(Lambda)
  d <- check_count(d)
  # Gamma and Lambda are dense: the process needs about 3 copies of each
  # (the matrices, their factors and eigenvectors).
  check_memory(3 * 8 * (as.numeric(H)^2 + as.numeric(d)^2), "H",
               sprintf("a process with H = %s frames and d = %s variables (dense Gamma and Lambda; gp_smooth() conditions a long series with a Laplace or Matern kernel without forming Gamma)",
                       format(H), format(d)))
  if (is.null(Lambda)) Lambda <- diag(d)
  if (length(Lambda) == 1 && !is.matrix(Lambda)) Lambda <- matrix(Lambda, 1, 1)
  Lambda <- check_numeric_matrix(Lambda, nrow = d, ncol = d)
  if (is.null(Gamma)) {
    if (!inherits(kernel, "ditimpute_kernel")) abort_input("kernel", "must be made by gp_kernel().")
    check_embedding(kernel, H)
    Gamma <- core_call(cpp_kernel_matrix(kernel, H))
  } else {
    Gamma <- check_numeric_matrix(Gamma, nrow = H, ncol = H)
    kernel <- NULL
  }
  nugget <- check_number(nugget, lower = 0, upper = Inf, open = FALSE)
  diag(Gamma) <- diag(Gamma) + nugget
  mean <- expand_mean(mean, H, d)
  here <- environment()  # the error is gp_spec()'s, not the handler's
  tryCatch(core_call(cpp_gp_validate(Gamma, Lambda, mean)), ditimpute_error_input = function(e) {
    if (identical(e$arg, "Gamma") && !is.null(kernel)) {
      abort_input("kernel", sprintf("its Gamma (H = %d) is numerically singular; add a small `nugget` (e.g. 1e-6) or shorten the lengthscale.", H),
                  call = here)
    }
    stop(e)
  })
  structure(list(H = H, d = d, Gamma = Gamma, Lambda = Lambda, mean = mean, kernel = kernel, nugget = nugget),
            class = "ditimpute_gp")
}

expand_mean <- function(mean, H, d, call = rlang::caller_env()) {
  if (!is.numeric(mean) || any(!is.finite(mean))) {
    abort_input("mean", "must be finite numbers.", call = call)
  }
  if (is.matrix(mean)) {
    if (!identical(dim(mean), c(H, d))) {
      abort_input("mean", sprintf("a matrix mean must be %d x %d (H x d), not %d x %d.", H, d,
                                  nrow(mean), ncol(mean)), call = call)
    }
    storage.mode(mean) <- "double"
    return(mean)
  }
  if (length(mean) == 1) return(matrix(as.numeric(mean), H, d))
  if (length(mean) == d) return(matrix(as.numeric(mean), H, d, byrow = TRUE))
  abort_input("mean", sprintf("must be a scalar, a vector of length d = %d or an H x d matrix, not of length %d.",
                              d, length(mean)), call = call)
}

check_spec <- function(spec, arg = "spec", call = rlang::caller_env()) {
  if (!inherits(spec, "ditimpute_gp")) abort_input(arg, "must be made by gp_spec().", call = call)
  spec
}

#' @export
print.ditimpute_gp <- function(x, ...) {
  check_dots(environment(), "print()", also = print_dots)
  print_gp_spec(x)
  invisible(x)
}

# The lines every Gaussian-process model prints; a gp_fit() result adds how
# its nugget was chosen (nugget_note) and its fit.
print_gp_spec <- function(x, nugget_note = "") {
  cat(sprintf("<ditimpute_gp> H = %d frames, d = %d variables\n", x$H, x$d))
  if (!is.null(x$kernel)) {
    cat("  Gamma: "); print(x$kernel)
  } else {
    cat("  Gamma: user-given matrix\n")
  }
  ev <- eigen(x$Lambda, symmetric = TRUE, only.values = TRUE)$values
  cat(sprintf("  Lambda: %d x %d, kappa %.4g\n", x$d, x$d, max(ev) / min(ev)))
  m <- unique(as.vector(x$mean))
  per_var <- apply(x$mean, 2, function(v) length(unique(v)) == 1)  # constant in time, per variable
  cat(sprintf("  mean: %s\n", if (length(m) == 1) format(m) else if (all(per_var)) {
    shown <- format(x$mean[1, seq_len(min(6, x$d))], digits = 4)
    paste("per variable", paste(shown, collapse = ", "), if (x$d > 6) "..." else "")
  } else "varies in time"))
  cat(sprintf("  nugget: %.4g%s\n", x$nugget, nugget_note))
}

#' Plot a Gaussian-process model
#'
#' Draws the two factors of the covariance `Gamma (x) Lambda`: the temporal
#' correlation `Gamma[1, j] / sqrt(Gamma[1, 1] Gamma[j, j])` of the first frame
#' with each frame (for a stationary kernel, the correlation against the lag;
#' the nugget makes the drop at lag 0), and the correlation matrix of `Lambda`
#' between variables, shaded from -1 (red) to 1 (blue) with its values
#' written in (up to 12 variables).
#'
#' @param x A [gp_spec()] or a [gp_fit()] result.
#' @param ... Passed to [graphics::plot()] (the temporal panel).
#' @return `x`, invisibly.
#' @examples
#' spec <- gp_spec(48, d = 3, kernel = gp_kernel("matern52", lengthscale = 6),
#'                 Lambda = 0.5 + 0.5 * diag(3), nugget = 0.05)
#' plot(spec)
#' @export
plot.ditimpute_gp <- function(x, ...) {
  G <- x$Gamma
  r <- G[1, ] / sqrt(G[1, 1] * diag(G))
  L <- stats::cov2cor(x$Lambda)
  d <- x$d
  old <- graphics::par(mfrow = c(1, 2), mar = c(4, 4, 3, 1))
  on.exit(graphics::par(old))
  graphics::plot(seq_along(r) - 1, r, type = "h", ylim = range(c(0, r)), xlab = "lag (frames from the first)",
                 ylab = "correlation", main = "Gamma: temporal correlation", ...)
  graphics::abline(h = 0, col = "grey60")
  brk <- seq(-1, 1, length.out = 21)
  pal <- grDevices::hcl.colors(20, "Blue-Red 2", rev = TRUE)
  graphics::image(seq_len(d), seq_len(d), L[, rev(seq_len(d)), drop = FALSE], breaks = brk, col = pal,
                  axes = FALSE, xlab = "", ylab = "", main = "Lambda: correlation of variables")
  nm <- colnames(x$Lambda)
  if (is.null(nm)) nm <- seq_len(d)
  graphics::axis(1, at = seq_len(d), labels = nm, las = 2)
  graphics::axis(2, at = seq_len(d), labels = rev(nm), las = 1)
  if (d <= 12) {
    graphics::text(rep(seq_len(d), d), rep(rev(seq_len(d)), each = d), sprintf("%.2f", as.vector(L)), cex = 0.8)
  }
  graphics::box()
  invisible(x)
}

#' Simulate sequences from a Gaussian-process model
#'
#' Exact draws `X = mean + L_G Z t(L_L)` with `L_G`, `L_L` Cholesky factors of
#' `Gamma` and `Lambda` and `Z` standard normal.
#'
#' @param spec A [gp_spec()].
#' @param n Number of sequences.
#' @param seed Optional seed. Without one, the seed is drawn from R's random
#'   number generator, so [set.seed()] makes the draws repeatable.
#' @return An `n x H x d` array.
#' @examples
#' spec <- gp_spec(32, d = 2, kernel = gp_kernel("rbf", lengthscale = 4), nugget = 1e-6)
#' x <- gp_simulate(spec, n = 3, seed = 1)
#' dim(x)
#' matplot(x[1, , ], type = "l")
#' @export
gp_simulate <- function(spec, n = 1, seed = NULL) {
  check_spec(spec)
  n <- check_count(n)
  seed <- resolve_seed(seed)
  core_call(cpp_gp_simulate(spec$Gamma, spec$Lambda, spec$mean, n, seed))
}

#' Latent Gaussian process of the paper's section 6.2
#'
#' Transforms Gaussian-process draws entry-wise, `Y = phi(X) + eps` with
#' `phi(x) = x + exp(-x^2) + 2 sin(x)` and independent `eps ~ N(0, noise_var)`.
#'
#' @param x A numeric array or matrix of draws (from [gp_simulate()]).
#' @param noise_var Variance of the added noise (the paper: 0.1).
#' @param seed Optional seed (see [gp_simulate()]).
#' @return An array of the same shape as `x`.
#' @examples
#' spec <- gp_spec(16, d = 2)
#' y <- latent_gp(gp_simulate(spec, 2, seed = 1), seed = 2)
#' dim(y)
#' @export
latent_gp <- function(x, noise_var = 0.1, seed = NULL) {
  if (!is.numeric(x) || any(!is.finite(x))) abort_input("x", "must be finite numbers.")
  noise_var <- check_number(noise_var, lower = 0, upper = Inf, open = FALSE)
  seed <- resolve_seed(seed)
  out <- core_call(cpp_latent_transform(as.numeric(x), noise_var, seed))
  attributes(out) <- attributes(x)
  out
}
