dense_score <- function(spec, x, miss, v, t) {
  S <- kronecker(spec$Gamma, spec$Lambda)
  mv <- as.vector(t(miss)); m <- which(mv); o <- which(!mv)
  xv <- as.vector(t(x)); mu <- as.vector(t(spec$mean))
  A <- S[m, o] %*% solve(S[o, o])
  mu_c <- mu[m] + A %*% (xv[o] - mu[o])
  Sc <- S[m, m] - A %*% S[o, m]
  a <- exp(-t / 2); s2 <- 1 - exp(-t)
  -as.vector(solve(a^2 * Sc + s2 * diag(length(m)), v - a * mu_c))
}

test_that("the exact score equals the dense formula (eq. 9)", {
  set.seed(2)
  Lambda <- crossprod(matrix(rnorm(9), 3)) + diag(3)
  spec <- gp_spec(16, kernel = gp_kernel("matern32", lengthscale = 2), Lambda = Lambda, mean = c(1, 0, -1))
  x <- gp_simulate(spec, 1, seed = 3)[1, , ]
  for (missing in list(5:8, matrix(runif(48) < 0.25, 16, 3))) {
    miss <- if (is.matrix(missing)) missing else { m <- matrix(FALSE, 16, 3); m[missing, ] <- TRUE; m }
    V <- matrix(rnorm(3 * sum(miss)), 3)
    for (t in c(1e-3, 0.3, 4)) {
      got <- score_exact(spec, x, missing, V, t)
      ref <- t(apply(V, 1, function(v) dense_score(spec, x, miss, v, t)))
      expect_lt(max(abs(got - ref)) / max(abs(ref)), 1e-9)
    }
    expect_length(score_exact(spec, x, missing, V[1, ], 0.5), sum(miss))
  }
})

test_that("nested gradient descent reaches the exact score, slower for harder patterns", {
  # H = 32, lengthscale 8: kappa(Sigma_obs) stays in the hundreds, so the
  # auxiliary loop needs thousands (not 1e5) of steps.
  spec <- gp_spec(32, d = 2, kernel = gp_kernel("laplace", lengthscale = 8))
  x <- gp_simulate(spec, 1, seed = 1)[1, , ]
  tail <- pattern_tail(32, 8)
  scattered <- pattern_frames(32, c(3, 7, 11, 15, 19, 23, 27, 30))
  set.seed(5)
  v <- rnorm(16)
  t <- 0.05
  r_tail <- score_nested_gd(spec, x, tail, v, t, tol = 1e-6)
  r_scat <- score_nested_gd(spec, x, scattered, v, t, tol = 1e-6)
  for (r in list(r_tail, r_scat)) {
    expect_true(r$converged)
    expect_lt(r$rel_error, 1e-6)
  }
  expect_equal(r_tail$score, score_exact(spec, x, tail, v, t), tolerance = 1e-5)
  expect_gt(kappa_cond(spec, tail), 5 * kappa_cond(spec, scattered))
  expect_gt(r_tail$major_iterations, r_scat$major_iterations)
  l_tail <- lemma1_counts(spec, tail, t, 1e-6)
  l_scat <- lemma1_counts(spec, scattered, t, 1e-6)
  expect_gt(l_tail$K, l_scat$K)
  expect_equal(l_tail$kappa_cond, kappa_cond(spec, tail))
  expect_equal(l_tail$eta, r_tail$eta)
})

test_that("fixed counts run Algorithm 2 verbatim", {
  spec <- gp_spec(16, d = 1, kernel = gp_kernel("laplace", lengthscale = 4))
  x <- matrix(gp_simulate(spec, 1, seed = 1), 16, 1)
  v <- c(0.3, -0.2, 0.1)
  few <- score_nested_gd(spec, x, 6:8, v, t = 0.5, K = 2, K_aux = 2)
  many <- score_nested_gd(spec, x, 6:8, v, t = 0.5, K = 200, K_aux = 2000)
  expect_equal(few$major_iterations, 2)
  expect_gt(few$rel_error, many$rel_error)
  expect_lt(many$rel_error, 1e-6)
})

test_that("bad score input gives classed errors naming the argument", {
  spec <- gp_spec(16, d = 1)
  x <- matrix(gp_simulate(spec, 1, seed = 1), 16, 1)
  expect_input_error(score_exact(spec, x, 6:8, v = c(1, 2), t = 1), "v")
  expect_input_error(score_exact(spec, x, 6:8, v = c(1, 2, NA), t = 1), "v")
  expect_input_error(score_exact(spec, x, 6:8, v = c(1, 2, 3), t = 0), "t")
  expect_input_error(score_nested_gd(spec, x, 6:8, v = c(1, 2, 3), t = 1, tol = 2), "tol")
  expect_input_error(score_nested_gd(spec, x, 6:8, v = c(1, 2, 3), t = 1, K = 3), "K_aux")
  expect_input_error(lemma1_counts(spec, 6:8, t = 1, eps = 0), "eps")
  expect_input_error(lemma1_counts(spec, 1:16, t = 1), "missing")
})
