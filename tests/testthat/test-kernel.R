test_that("kernel matrices have the documented forms", {
  r <- abs(outer(1:5, 1:5, "-"))
  expect_equal(kernel_matrix(gp_kernel("laplace", lengthscale = 3), 5), exp(-r / 3), tolerance = 1e-14)
  expect_equal(kernel_matrix(gp_kernel("rbf", lengthscale = 2, variance = 2), 5), 2 * exp(-r^2 / 8),
               tolerance = 1e-14)
  s <- sqrt(3) * r / 2
  expect_equal(kernel_matrix(gp_kernel("matern32", lengthscale = 2), 5), (1 + s) * exp(-s), tolerance = 1e-14)
  s <- sqrt(5) * r / 2
  expect_equal(kernel_matrix(gp_kernel("matern52", lengthscale = 2), 5), (1 + s + s^2 / 3) * exp(-s),
               tolerance = 1e-14)
  # Sinusoidal embedding: ||e_i - e_j|| = 2 r |sin(pi (i - j) / C)|.
  k <- gp_kernel("laplace", lengthscale = 4, embedding = "sinusoidal", radius = 10, period = 200)
  dist <- 2 * 10 * abs(sin(pi * (outer(1:5, 1:5, "-")) / 200))
  expect_equal(kernel_matrix(k, 5), exp(-dist / 4), tolerance = 1e-12)
  expect_identical(gp_kernel("exponential")$type, "laplace")
})

test_that("bad kernels give classed errors naming the argument", {
  expect_input_error(gp_kernel("laplace", lengthscale = 0), "lengthscale")
  expect_input_error(gp_kernel("laplace", lengthscale = -1), "lengthscale")
  expect_input_error(gp_kernel("laplace", variance = 0), "variance")
  expect_input_error(gp_kernel("cosine"), "type")
  expect_input_error(gp_kernel(embedding = "fourier"), "embedding")
  expect_input_error(kernel_matrix(list(), 3), "kernel")
  expect_input_error(kernel_matrix(gp_kernel(), 0), "H")
})

test_that("the sinusoidal embedding needs a period that divides no lag below H (period 1 put every frame at one point)", {
  expect_s3_class(gp_kernel("rbf", period = NULL), "ditimpute_kernel")  # the default, with the index embedding
  cnd <- expect_input_error(gp_kernel("rbf", embedding = "sinusoidal"), "period")
  expect_match(conditionMessage(cnd), "longer than the sequences", fixed = TRUE)
  k4 <- gp_kernel("rbf", embedding = "sinusoidal", period = 4)
  # lag 4 is one period: frames 1 and 5 coincide (it was "numerically singular; add a nugget")
  cnd <- expect_input_error(gp_spec(10, 2, kernel = k4), "kernel")
  expect_match(conditionMessage(cnd), "puts frames 4 apart at the same point", fixed = TRUE)
  expect_input_error(kernel_matrix(k4, 10), "kernel")
  # shorter sequences than the period, and a period that divides no lag, are fine
  expect_equal(dim(kernel_matrix(k4, 4)), c(4L, 4L))
  k <- gp_kernel("rbf", lengthscale = 0.5, embedding = "sinusoidal", period = 25)
  G <- kernel_matrix(k, 12)
  e <- cbind(sin(2 * pi * (1:12) / 25), cos(2 * pi * (1:12) / 25))
  expect_equal(G, exp(-as.matrix(stats::dist(e))^2 / (2 * 0.5^2)), ignore_attr = TRUE)
  expect_s3_class(gp_spec(12, 1, kernel = k), "ditimpute_gp")
})
