# Dense reference: the textbook Gaussian conditional on the full Hd x Hd covariance.
dense_conditional <- function(spec, xvec, miss_vec) {
  S <- kronecker(spec$Gamma, spec$Lambda)
  mu <- as.vector(t(spec$mean))
  m <- which(miss_vec); o <- which(!miss_vec)
  A <- S[m, o] %*% solve(S[o, o])
  list(mean = as.vector(mu[m] + A %*% (xvec[o] - mu[o])), cov = S[m, m] - A %*% S[o, m])
}

random_spd <- function(d) {
  A <- matrix(rnorm(d * d), d)
  crossprod(A) + 0.5 * diag(d)
}

test_that("conditionals equal the dense reference for every kernel, frame- and entry-level", {
  set.seed(11)
  H <- 12; d <- 3
  for (type in c("laplace", "rbf", "matern32", "matern52")) {
    # lengthscale 1.5 keeps kappa(Gamma) below ~7e3 (rbf), so that R's own
    # dense reference is itself accurate to ~1e-12.
    spec <- gp_spec(H, kernel = gp_kernel(type, lengthscale = 1.5), Lambda = random_spd(d),
                    mean = rnorm(d))
    x <- gp_simulate(spec, 1, seed = 5)[1, , ]
    patterns <- list(frames = c(2, 7:9), entries = matrix(runif(H * d) < 0.3, H, d))
    for (nm in names(patterns)) {
      cond <- gp_conditional(spec, x, missing = patterns[[nm]])
      miss_vec <- as.vector(t(cond$missing))
      ref <- dense_conditional(spec, as.vector(t(x)), miss_vec)
      rel <- function(a, b) max(abs(a - b)) / max(abs(b))
      expect_lt(rel(as.vector(cond$cond_mean), ref$mean), 1e-9)
      expect_lt(rel(cond$cov, ref$cov), 1e-9)
      expect_identical(cond$kronecker, nm == "frames")
      expect_equal(cond$mean[!cond$missing], x[!cond$missing])
    }
  }
})

test_that("a batch shares the pattern and gives each sequence its own mean", {
  spec <- gp_spec(20, d = 2, kernel = gp_kernel("matern52", lengthscale = 4))
  x <- gp_simulate(spec, 5, seed = 1)
  cond <- gp_conditional(spec, x, missing = pattern_tail(20, 5))
  expect_equal(dim(cond$mean), c(5L, 20L, 2L))
  expect_equal(dim(cond$cond_mean), c(5L, 10L))
  one <- gp_conditional(spec, x[3, , ], missing = 16:20)
  expect_equal(cond$mean[3, , ], one$mean, tolerance = 1e-12)
  expect_equal(vcov(cond), one$cov)
  expect_output(print(cond), "5 missing frames \\(16:20\\), 5 sequences")
})

test_that("missing frames can be given in every documented form", {
  spec <- gp_spec(10, d = 2)
  x <- gp_simulate(spec, 1, seed = 2)[1, , ]
  ref <- gp_conditional(spec, x, missing = c(3, 4))$cond_mean
  na_x <- x; na_x[3:4, ] <- NA
  lg <- rep(FALSE, 10); lg[3:4] <- TRUE
  expect_equal(gp_conditional(spec, na_x)$cond_mean, ref)
  expect_equal(gp_conditional(spec, x, missing = lg)$cond_mean, ref)
  expect_equal(gp_conditional(spec, x, missing = is.na(na_x))$cond_mean, ref)
  expect_equal(gp_conditional(spec, x, missing = na_x)$cond_mean, ref)
  expect_equal(gp_conditional(spec, x, missing = pattern_frames(10, 3:4))$cond_mean, ref)
})

test_that("the exact imputation has the right error and coverage on fresh data", {
  spec <- gp_spec(96, d = 2, kernel = gp_kernel("laplace", lengthscale = 128))
  x <- gp_simulate(spec, 2000, seed = 3)
  cond <- gp_conditional(spec, x, missing = paper_patterns(1)$P1)
  truth <- t(apply(x, 1, function(s) t(s)[t(cond$missing)]))
  err <- cond$cond_mean - truth
  # E||err||^2 = trace(Sigma_cond); 2000 draws give about 3% relative error.
  expect_equal(mean(rowSums(err^2)), sum(diag(cond$cov)), tolerance = 0.1)
  d2 <- rowSums((err %*% solve(cond$cov)) * err)
  expect_lt(abs(mean(d2 <= qchisq(0.95, ncol(err))) - 0.95), 4 * sqrt(0.95 * 0.05 / 2000))
})

test_that("kappa_cond and kappa_obs follow the Kronecker identities", {
  Lambda <- matrix(c(2, 0.5, 0.5, 1), 2)
  spec <- gp_spec(30, kernel = gp_kernel("laplace", lengthscale = 8), Lambda = Lambda)
  miss <- 11:16
  G <- spec$Gamma; o <- setdiff(1:30, miss)
  Gc <- G[miss, miss] - G[miss, o] %*% solve(G[o, o], G[o, miss])
  kap <- function(A) { e <- eigen(A, symmetric = TRUE)$values; max(e) / min(e) }
  expect_equal(kappa_cond(spec, miss), kap(Gc) * kap(Lambda), tolerance = 1e-8)
  expect_equal(kappa_obs(spec, miss), kap(G[o, o]) * kap(Lambda), tolerance = 1e-8)
  # a tail block is harder than separated single frames
  expect_gt(kappa_cond(spec, pattern_tail(30, 6)), kappa_cond(spec, c(3, 9, 15, 21, 27, 29)))
})

test_that("exact conditional draws match the conditional law", {
  spec <- gp_spec(16, d = 2, kernel = gp_kernel("matern52", lengthscale = 3))
  x <- gp_simulate(spec, 1, seed = 4)[1, , ]
  cond <- gp_conditional(spec, x, missing = 6:9)
  draws <- gp_sample_conditional(spec, x, missing = 6:9, n_samples = 20000, seed = 5)
  expect_equal(dim(draws), c(20000L, 16L, 2L))
  expect_equal(draws[7, 1:5, ], x[1:5, ])              # observed entries are kept
  flat <- t(apply(draws, 1, function(s) t(s)[t(cond$missing)]))
  sds <- sqrt(diag(cond$cov))
  expect_true(all(abs(colMeans(flat) - cond$cond_mean[1, ]) < 5 * sds / sqrt(20000)))
  expect_lt(max(abs(cov(flat) - cond$cov)) / max(cond$cov), 0.05)
  expect_identical(gp_sample_conditional(spec, x, 6:9, 3, seed = 1), gp_sample_conditional(spec, x, 6:9, 3, seed = 1))
})

test_that("bad conditioning input gives classed errors naming the argument", {
  spec <- gp_spec(10, d = 2)
  x <- gp_simulate(spec, 1, seed = 1)[1, , ]
  bad <- x; bad[1, 1] <- NA
  expect_input_error(gp_conditional(spec, bad, missing = 5:6), "x")          # NA among observed
  bad[1, 1] <- Inf
  expect_input_error(gp_conditional(spec, bad, missing = 5:6), "x")
  expect_input_error(gp_conditional(spec, x[, 1, drop = FALSE], missing = 5), "x")  # wrong dims
  expect_input_error(gp_conditional(spec, array(0, c(2, 9, 2)), missing = 5), "x")
  expect_input_error(gp_conditional(spec, x, missing = 1:10), "missing")     # every frame missing
  expect_input_error(gp_conditional(spec, x, missing = rep(FALSE, 10)), "missing")  # none missing
  expect_input_error(gp_conditional(spec, x), "missing")                     # x has no NA
  expect_input_error(gp_conditional(spec, x, missing = c(0, 4)), "missing")
  expect_input_error(gp_conditional(spec, x, missing = 11), "missing")
  expect_input_error(gp_conditional(spec, x, missing = matrix(TRUE, 9, 2)), "missing")
  expect_input_error(gp_conditional(spec, x, missing = pattern_tail(12, 2)), "missing")
  expect_input_error(kappa_cond(spec, 1:10), "missing")
  expect_input_error(gp_sample_conditional(spec, x, 5, n_samples = 0), "n_samples")
})

test_that("entry-level gaps: precision and CG paths equal the dense reference; draws follow the law", {
  set.seed(1)
  d <- 30; H <- 20
  A <- matrix(rnorm(d * d), d)
  Lambda <- crossprod(A) / d + 0.2 * diag(d)                     # full rank, far from diagonal
  spec <- gp_spec(H, d, kernel = gp_kernel("matern32", lengthscale = 4), Lambda = Lambda, nugget = 0.01)
  x <- gp_simulate(spec, 2, seed = 2)
  miss <- matrix(runif(H * d) < 0.3, H, d)                       # 30% MCAR: entry level
  ref <- gp_conditional(spec, x, missing = miss, dense = TRUE)
  def <- gp_conditional(spec, x, missing = miss)
  cg <- gp_conditional(spec, x, missing = miss, method = "cg", cov = FALSE)
  expect_identical(ref$method, "dense")
  expect_identical(def$method, "precision")
  expect_identical(cg$method, "CG")
  expect_null(cg$cov)
  # Both are exact up to rounding; CG stops at relative residual 1e-10, which
  # kappa(Q_mm) (< 1e4 here) turns into well under 1e-6 relative error.
  rel <- function(a, b) sqrt(sum((a - b)^2) / sum(b^2))
  expect_lt(rel(def$cond_mean, ref$cond_mean), 1e-10)
  expect_lt(rel(def$cov, ref$cov), 1e-10)
  expect_lt(rel(cg$cond_mean, ref$cond_mean), 1e-6)
  expect_equal(def$kappa_cond, ref$kappa_cond, tolerance = 1e-6)

  # Draws (precision path, the default) against the exact law on a small pattern:
  small <- gp_spec(8, 4, kernel = gp_kernel("matern32", lengthscale = 3), Lambda = Lambda[1:4, 1:4], nugget = 0.01)
  xs <- gp_simulate(small, 1, seed = 3)[1, , ]
  ms <- matrix(FALSE, 8, 4); ms[c(2, 5, 11, 14, 20, 23, 27, 32)] <- TRUE
  cs <- gp_conditional(small, xs, missing = ms, dense = TRUE)
  draws <- gp_sample_conditional(small, xs, missing = ms, n_samples = 20000, seed = 5)
  flat <- t(apply(draws, 1, function(s) t(s)[t(ms)]))
  # Whitened by the exact law the draws have mean 0 and covariance I: entries
  # of the sample mean have sd 1/sqrt(Z), of the sample covariance <= sqrt(2/Z);
  # 5 sd over 44 numbers is exceeded with probability < 1e-4 (and the seed is fixed).
  W <- t(forwardsolve(t(chol(cs$cov)), t(sweep(flat, 2, cs$cond_mean[1, ]))))
  expect_lt(max(abs(colMeans(W))), 5 / sqrt(20000))
  expect_lt(max(abs(crossprod(W) / 20000 - diag(ncol(W)))), 5 * sqrt(2 / 20000))
})

test_that("a dense conditional that would not fit is an input error naming the size", {
  spec <- gp_spec(1000, d = 100, kernel = gp_kernel("matern32", lengthscale = 5), nugget = 0.01)
  x <- matrix(0, 1000, 100)
  miss <- matrix(FALSE, 1000, 100); miss[c(5, 900, 50000)] <- TRUE
  cnd <- expect_input_error(gp_conditional(spec, x, missing = miss, dense = TRUE, cov = FALSE), "x")
  expect_match(conditionMessage(cnd), "100000 x 100000.*GB")
  expect_match(conditionMessage(cnd), "precision")
  expect_identical(gp_conditional(spec, x, missing = miss, cov = FALSE)$method, "precision")
  expect_input_error(gp_conditional(spec, x, missing = miss, method = "fast"), "method")
})

test_that("with d = 1 a vector of the H values is the H x 1 matrix (it was refused)", {
  s1 <- gp_spec(6, kernel = gp_kernel("rbf", lengthscale = 1))
  x1 <- gp_simulate(s1, 1, seed = 1)[1, , ]
  expect_null(dim(x1))
  expect_equal(gp_conditional(s1, x1, missing = 2:3), gp_conditional(s1, matrix(x1), missing = 2:3))
  v <- replace(x1, c(2, 5), NA)
  expect_equal(impute(s1, v, seed = 1)$point, impute(s1, matrix(v), seed = 1)$point)
  expect_equal(gp_sample_conditional(s1, v, n_samples = 5, seed = 2),
               gp_sample_conditional(s1, matrix(v), n_samples = 5, seed = 2))
  # the truth of such a vector may be a vector too (it had to be a matrix)
  tr <- x1
  expect_equal(impute(s1, v, truth = tr, seed = 1)$truth, impute(s1, v, truth = matrix(tr), seed = 1)$truth)
  expect_equal(coverage(impute(s1, v, seed = 1), truth = tr)$coverage,
               coverage(impute(s1, v, seed = 1), truth = matrix(tr))$coverage)
  # a vector of another length, or with d = 2, stays an input error
  expect_input_error(gp_conditional(s1, x1[1:5], missing = 2), "x")
  expect_input_error(gp_conditional(gp_spec(6, 2), x1, missing = 2), "x")
})
