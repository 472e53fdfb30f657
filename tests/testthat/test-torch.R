# Both builds: with LibTorch (the DiT tests run) and without (configure found
# none, or DITIMPUTE_LIBTORCH=none: tools/check-no-torch.sh).

test_that("torch_available() and torch_backend() agree, and say what the installation has", {
  b <- torch_backend()
  expect_s3_class(b, "ditimpute_torch_backend")
  expect_type(torch_available(), "logical")
  expect_length(torch_available(), 1)
  expect_identical(b$available, torch_available())
  if (torch_available()) {
    expect_match(b$torch_version, "^[0-9]+\\.[0-9]+")
    expect_output(print(b), paste0("LibTorch ", b$torch_version))
  } else {
    expect_true(is.na(b$torch_version))
    expect_false(b$cuda_available)
    expect_output(print(b), "installed without LibTorch")
    expect_output(print(b), "apt-get install libtorch-dev", fixed = TRUE)
    expect_output(print(b), "DITIMPUTE_LIBTORCH", fixed = TRUE)
  }
})

test_that("without LibTorch every DiT entry raises ditimpute_error_no_torch and says how to get it", {
  skip_if(torch_available(), "LibTorch is linked: the DiT entries run (test-dit.R)")
  expect_no_torch <- function(expr) {
    err <- expect_error(expr, class = "ditimpute_error_no_torch")
    expect_s3_class(err, "ditimpute_error")
    msg <- conditionMessage(err)
    expect_match(msg, "needs LibTorch", fixed = TRUE)
    expect_match(msg, "apt-get install libtorch-dev", fixed = TRUE)
    expect_match(msg, "DITIMPUTE_LIBTORCH", fixed = TRUE)
    invisible(err)
  }
  spec <- gp_spec(24, d = 2, kernel = gp_kernel("laplace", lengthscale = 8))
  x <- gp_simulate(spec, 3, seed = 1)
  x[, 19:24, ] <- NA
  # A DiT object as readRDS() gives it back (bytes from a build with LibTorch):
  # no network can be rebuilt from it here.
  fake <- structure(list(bytes = as.raw(1:8), config = structure(list(H = 24L, d = 2L), class = "ditimpute_dit_config"),
                         strategy = mask_strategy("6x1"), cache = new.env()), class = "ditimpute_dit")
  expect_no_torch(dit_config(24, 2))
  expect_no_torch(dit_fit(gp_simulate(spec, 10, seed = 2), steps = 2))
  expect_no_torch(dit_load(tempfile()))
  expect_no_torch(dit_sample(fake, x[1, , ]))
  expect_no_torch(dit_loss(fake, gp_simulate(spec, 4, seed = 2)))
  expect_no_torch(dit_save(fake, tempfile()))
  expect_no_torch(impute(fake, x))
  expect_no_torch(calibrate(fake, gp_simulate(spec, 20, seed = 3), missing = pattern_tail(24, 6)))
  expect_no_torch(distribution_shift(fake, x, spec))
  y <- sin(seq_len(200) / 5) + stats::rnorm(200, sd = 0.1)
  y[50:60] <- NA
  expect_no_torch(impute_series(y, method = "dit", seed = 1))
  grid <- data.frame(pattern = "4x1", imputer = "dit", n = 10, strategy = "4x1")
  expect_no_torch(run_experiments(grid, d = 2, H = 24, n_test = 2, progress = FALSE))
  # The core's own guard, below the R checks: its entries throw and the glue
  # raises the same class.
  expect_no_torch(ditimpute:::core_call(ditimpute:::cpp_dit_create(list(H = 24L, d = 2L), 1, "cpu")))
  expect_no_torch(ditimpute:::core_call(ditimpute:::cpp_dit_from_bytes(as.raw(1:8), "cpu")))
})

test_that("without LibTorch the Gaussian-process path still imputes, oracle sampler included", {
  skip_if(torch_available(), "LibTorch is linked: the same calls are tested in the other test files")
  spec <- gp_spec(24, d = 2, kernel = gp_kernel("laplace", lengthscale = 8))
  x <- gp_simulate(spec, 2, seed = 1)
  x[, 19:24, ] <- NA
  imp <- impute(spec, x, n_samples = 50, seed = 2, threads = 1)
  cond <- gp_conditional(spec, x[1, , ])
  # The exact imputer's point is the conditional mean.
  expect_equal(imp$point[1, 19:24, ], matrix(cond$cond_mean[1, ], 6, 2, byrow = TRUE), tolerance = 1e-10)
  s <- oracle_sample(spec, x[1, , ], n_samples = 20, steps = 20, seed = 3, threads = 1)
  expect_equal(dim(s), c(20L, 24L, 2L))
  expect_equal(s[, 1:18, ], array(rep(x[1, 1:18, ], each = 20), c(20, 18, 2)))
  expect_true(all(is.finite(s)))
})
