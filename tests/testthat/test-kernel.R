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
