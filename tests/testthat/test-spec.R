test_that("gp_spec expands the mean and keeps the matrices", {
  k <- gp_kernel("rbf", lengthscale = 3)
  s <- gp_spec(10, d = 3, kernel = k, mean = c(1, 2, 3))
  expect_s3_class(s, "ditimpute_gp")
  expect_equal(s$mean, matrix(c(1, 2, 3), 10, 3, byrow = TRUE))
  expect_equal(s$Gamma, kernel_matrix(k, 10))
  expect_equal(gp_spec(10, d = 2, mean = 5)$mean, matrix(5, 10, 2))
  expect_equal(nrow(gp_spec(4, Lambda = diag(3))$Lambda), 3)
  expect_output(print(s), "H = 10 frames, d = 3 variables")
})

test_that("bad specifications give classed errors naming the argument", {
  expect_input_error(gp_spec(10, Lambda = matrix(c(1, 2, 2, 1), 2)), "Lambda")      # indefinite
  expect_input_error(gp_spec(10, Lambda = matrix(c(1, 0.5, 0, 1), 2)), "Lambda")    # not symmetric
  expect_input_error(gp_spec(10, d = 3, Lambda = diag(2)), "Lambda")                 # wrong size
  expect_input_error(gp_spec(10, Lambda = diag(c(1, NA))), "Lambda")
  G <- diag(10); G[1, 2] <- G[2, 1] <- 2
  expect_input_error(gp_spec(10, Gamma = G), "Gamma")
  expect_input_error(gp_spec(10, Gamma = diag(9)), "Gamma")
  expect_input_error(gp_spec(10, d = 2, mean = 1:3), "mean")
  expect_input_error(gp_spec(10, d = 2, mean = matrix(0, 9, 2)), "mean")
  expect_input_error(gp_spec(1), "H")
  expect_input_error(gp_spec(10, kernel = "laplace"), "kernel")
  # smooth kernels give singular Gamma: the error points at the kernel, a nugget fixes it
  cnd <- expect_input_error(gp_spec(20, kernel = gp_kernel("rbf", lengthscale = 4)), "kernel")
  expect_identical(deparse(cnd$call[[1]]), "gp_spec")  # gp_spec()'s error, not its handler's
  expect_s3_class(gp_spec(20, kernel = gp_kernel("rbf", lengthscale = 4), nugget = 1e-6), "ditimpute_gp")
  expect_input_error(gp_spec(20, nugget = -1), "nugget")
})

test_that("simulated sequences have covariance Gamma %x% Lambda", {
  set.seed(1)
  A <- matrix(rnorm(9), 3)
  Lambda <- crossprod(A) + diag(3)
  spec <- gp_spec(6, kernel = gp_kernel("matern32", lengthscale = 2), Lambda = Lambda, mean = c(1, -1, 0))
  n <- 20000
  x <- gp_simulate(spec, n, seed = 42)
  expect_equal(dim(x), c(n, 6L, 3L))
  # vec stacks frames: column (h - 1) * d + j of the flattened draws.
  flat <- t(apply(x, 1, function(s) as.vector(t(s))))
  target <- kronecker(spec$Gamma, Lambda)
  emp <- cov(flat)
  # Monte Carlo sd of a sample covariance entry is sqrt((S_ii S_jj + S_ij^2) / n);
  # allow 5 sd for each of the 171 distinct entries.
  sd_mc <- sqrt((outer(diag(target), diag(target)) + target^2) / n)
  expect_true(all(abs(emp - target) <= 5 * sd_mc))
  expect_true(all(abs(colMeans(flat) - as.vector(t(spec$mean))) <= 5 * sqrt(diag(target) / n)))
})

test_that("seeds make simulation repeatable", {
  spec <- gp_spec(8, d = 2)
  expect_identical(gp_simulate(spec, 3, seed = 7), gp_simulate(spec, 3, seed = 7))
  expect_false(identical(gp_simulate(spec, 3, seed = 7), gp_simulate(spec, 3, seed = 8)))
  set.seed(3); a <- gp_simulate(spec, 3)
  set.seed(3); b <- gp_simulate(spec, 3)
  expect_identical(a, b)
  expect_input_error(gp_simulate(spec, 0), "n")
  expect_input_error(gp_simulate(spec, 2, seed = -1), "seed")
  expect_input_error(gp_simulate(list(), 2), "spec")
})

test_that("latent_gp applies phi(x) = x + exp(-x^2) + 2 sin(x) plus noise", {
  x <- array(seq(-2, 2, length.out = 24), c(2, 4, 3))
  y0 <- latent_gp(x, noise_var = 0, seed = 1)
  expect_equal(y0, x + exp(-x^2) + 2 * sin(x), tolerance = 1e-14)
  expect_identical(dim(y0), dim(x))
  big <- array(0, c(1, 1000, 20))
  noise <- latent_gp(big, noise_var = 0.1, seed = 1) - 1   # phi(0) = 1
  expect_equal(var(as.vector(noise)), 0.1, tolerance = 0.05)  # 20000 draws: sd of the estimate ~1%
  expect_input_error(latent_gp(x, noise_var = -1), "noise_var")
  expect_input_error(latent_gp(c(1, NA)), "x")
})

test_that("print() of a model shows its nugget, once also for a fit (a user review: gp_spec() printed none)", {
  spec <- gp_spec(24, d = 2, kernel = gp_kernel("matern32", lengthscale = 4), nugget = 0.05)
  expect_output(print(spec), "nugget: 0.05$")
  fit <- gp_fit(gp_simulate(spec, 5, seed = 1), kernel = "matern32", fit_nugget = TRUE)
  out <- capture.output(print(fit))
  expect_length(grep("nugget:", out), 1)
  expect_match(out[grep("nugget:", out)], "(fitted)", fixed = TRUE)
})
