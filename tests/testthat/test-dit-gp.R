# dit_fit(gp = ): a GP-informed DiT. Its sampling law before training and its
# learning are tested in C++ (cpp/tests/dit/test_dit_gp.cpp); here the R
# interface: input checks, the mode, saving and imputing.
gp_tiny_data <- function(n = 60, seed = 1) {
  gp_simulate(gp_spec(24, d = 2, kernel = gp_kernel("laplace", lengthscale = 8)), n, seed = seed)
}

test_that("dit_fit(gp =) checks the GP and names the argument", {
  skip_if_no_torch()
  x <- gp_tiny_data()
  gp <- gp_fit(x, kernel = "laplace", n_windows = 30, seed = 1)
  cfg <- dit_config(24, 2, width = 32, depth = 1, heads = 2)
  expect_input_error(dit_fit(x, cfg, gp = list(Gamma = diag(24)), steps = 2, progress = FALSE), "gp")
  # a plain gp_spec() is not a fitted GP
  expect_input_error(dit_fit(x, cfg, gp = gp_spec(24, 2), steps = 2, progress = FALSE), "gp")
  # a GP fitted to other dimensions
  gp_short <- gp_fit(x[, 1:20, ], kernel = "laplace", n_windows = 30, seed = 1)
  expect_input_error(dit_fit(x, cfg, gp = gp_short, steps = 2, progress = FALSE), "gp")
  x3 <- gp_simulate(gp_spec(24, d = 3), 20, seed = 2)
  gp3 <- gp_fit(x3, kernel = "laplace", n_windows = 20, seed = 1)
  expect_input_error(dit_fit(x, cfg, gp = gp3, steps = 2, progress = FALSE), "gp")
  expect_input_error(dit_fit(x, cfg, gp = gp, gp_mode = "both", steps = 2, progress = FALSE), "gp_mode")
  expect_input_error(dit_fit(x, cfg, gp = gp, gp_pool = -1, steps = 2, progress = FALSE), "gp_pool")
})

test_that("dit_fit(gp =) draws fresh GP conditionals by default up to 1,000 entries a window, a pool beyond", {
  # bench/results/gp_pool_cost.md: fresh conditionals cost no measurable time
  # a step up to ~1,300 entries; a pool cost accuracy where measured.
  skip_if_no_torch()
  x <- gp_tiny_data()
  gp <- gp_fit(x, kernel = "laplace", n_windows = 30, seed = 1)
  small <- dit_fit(x, dit_config(24, 2, width = 32, depth = 1, heads = 2), gp = gp, steps = 2, batch_size = 8,
                   seed = 1, threads = 1, progress = FALSE)
  expect_identical(small$train_info$options$gp_pool, 0L)
  pooled <- dit_fit(x, dit_config(24, 2, width = 32, depth = 1, heads = 2), gp = gp, gp_pool = 16, steps = 2,
                    batch_size = 8, seed = 1, threads = 1, progress = FALSE)
  expect_identical(pooled$train_info$options$gp_pool, 16L)
  wide <- gp_simulate(gp_spec(24, d = 42, kernel = gp_kernel("laplace", lengthscale = 8)), 20, seed = 1)
  gw <- gp_fit(wide, kernel = "laplace", n_windows = 10, seed = 1)
  big <- dit_fit(wide, dit_config(24, 42, width = 32, depth = 1, heads = 2), gp = gw, steps = 2, batch_size = 8,
                 seed = 1, threads = 1, progress = FALSE)
  expect_identical(big$train_info$options$gp_pool, 256L)  # 1,008 entries
})

test_that("a GP-informed DiT trains, prints, saves its GP and imputes", {
  skip_if_no_torch()
  x <- gp_tiny_data()
  gp <- gp_fit(x, kernel = "laplace", n_windows = 30, seed = 1)
  for (mode in c("residual", "channels", "score")) {
    fit <- dit_fit(x, dit_config(24, 2, width = 32, depth = 1, heads = 2), gp = gp, gp_mode = mode,
                   strategy = mask_strategy("6x1"), steps = 4, batch_size = 8, gp_pool = 16, seed = 1, threads = 1,
                   progress = FALSE)
    expect_equal(fit$config$gp, mode)
    expect_output(print(fit), sprintf("GP-informed: gp_mode \"%s\"", mode), fixed = TRUE)
    f <- tempfile(fileext = ".dit")
    dit_save(fit, f)
    back <- dit_load(f)
    expect_equal(back$config$gp, mode)
    held <- hide_mcar(gp_tiny_data(3, seed = 5), rate = 0.3, seed = 1)
    a <- impute(fit, held$x, n_samples = 40, seed = 1)
    b <- impute(back, held$x, n_samples = 40, seed = 1)
    expect_equal(a$point, b$point)
    expect_false(anyNA(a$point))
    expect_equal(a$point[!held$hidden & !is.na(held$x)], held$x[!held$hidden & !is.na(held$x)])
  }
  # without a GP the config carries none
  plain <- dit_fit(x, dit_config(24, 2, width = 32, depth = 1, heads = 2), steps = 2, batch_size = 8, seed = 1,
                   threads = 1, progress = FALSE)
  expect_equal(plain$config$gp, "")
})

# impute(control_variate =): the law of the shift is tested in C++; here
# that the argument reaches the core, keeps the observed values and the
# spread, is the default for a model with a GP base, and is refused where the
# model has none.
test_that("impute(control_variate = TRUE) recentres a GP-DiT's samples on the GP and is refused without a GP base", {
  skip_if_no_torch()
  x <- gp_tiny_data()
  gp <- gp_fit(x, kernel = "laplace", n_windows = 30, seed = 1)
  held <- hide_mcar(gp_tiny_data(2, seed = 5), rate = 0.3, seed = 1)
  cfg <- dit_config(24, 2, width = 32, depth = 1, heads = 2)
  fit <- dit_fit(x, cfg, gp = gp, gp_mode = "residual", steps = 4, batch_size = 8, gp_pool = 16, seed = 1,
                 threads = 1, progress = FALSE)
  a <- impute(fit, held$x, n_samples = 40, seed = 1, control_variate = FALSE)
  b <- impute(fit, held$x, n_samples = 40, seed = 1, control_variate = TRUE)
  # the default for a residual (or score) GP-DiT is the control variate
  expect_equal(impute(fit, held$x, n_samples = 40, seed = 1)$samples, b$samples)
  seen <- !is.na(held$x)
  expect_equal(b$point[seen], held$x[seen])
  for (i in seq_along(a$samples)) {
    shift <- sweep(b$samples[[i]], 2, colMeans(b$samples[[i]])) - sweep(a$samples[[i]], 2, colMeans(a$samples[[i]]))
    expect_lt(max(abs(shift)), 1e-8)  # every draw of an entry moves alike
  }
  # The shift is the Monte Carlo error of 40 draws: of the order sd / sqrt(40), not zero.
  expect_gt(max(abs(a$point - b$point)), 1e-3)
  expect_input_error(impute(fit, held$x, n_samples = 40, control_variate = NA), "control_variate")
  plain <- dit_fit(x, cfg, steps = 2, batch_size = 8, seed = 1, threads = 1, progress = FALSE)
  expect_input_error(impute(plain, held$x, n_samples = 40, control_variate = TRUE), "control_variate")
  # a model without a GP base samples plainly by default (no error)
  expect_equal(impute(plain, held$x, n_samples = 40, seed = 1)$samples,
               impute(plain, held$x, n_samples = 40, seed = 1, control_variate = FALSE)$samples)
})
