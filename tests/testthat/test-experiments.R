small_kernel <- gp_kernel("laplace", lengthscale = 16)

oracle_grid <- function() {
  data.frame(pattern = c("tail4", "4x1"), imputer = "oracle", stringsAsFactors = FALSE)
}

run_small <- function(grid, ...) {
  run_experiments(grid, d = 2, kernel = small_kernel, H = 24, n_test = 40, n_samples = 200, n_draws = 400,
                  threads = 1, progress = FALSE, ...)
}

test_that("an oracle grid gives one tidy row per grid row with every score", {
  set.seed(1)
  res <- run_small(oracle_grid())
  expect_s3_class(res, "ditimpute_experiments")
  expect_identical(nrow(res), 2L)
  expect_true(all(c("imputer", "latent", "n", "H", "d", "pattern", "strategy", "seed", "kappa", "coverage",
                    "coverage_se", "coverage_truth", "interval_coverage", "mse", "mae", "crps", "width",
                    "radius", "target", "train_seconds", "final_loss", "seconds") %in% names(res)))
  expect_identical(res$pattern, c("tail4", "4x1"))
  expect_true(all(res$H == 24 & res$d == 2 & res$imputer == "oracle" & !res$latent))
  expect_true(all(res$target == "conditional mean"))
  # A tail gap is harder than scattered frames (larger kappa, wider intervals);
  # the exact imputer's point is the conditional mean itself.
  expect_gt(res$kappa[1], res$kappa[2])
  expect_gt(res$width[1], res$width[2])
  expect_equal(res$mse, c(0, 0), tolerance = 1e-20)
  expect_output(print(res), "oracle")
})

test_that("the exact imputer's 95% regions cover 95% of conditional draws, no more, no less", {
  set.seed(2)
  res <- run_small(oracle_grid())
  # The exact imputer's regions are exact (closed-form radius, no sampling),
  # so each of the 40 x 400 = 16,000 exact conditional draws of a row lies
  # inside independently with probability 0.95: the row's coverage has
  # SE sqrt(0.95 * 0.05 / 16000) = 0.0017. A band of 4 SE either side,
  # 0.95 +/- 0.007, is missed by a correct build with probability 1.3e-4 (both
  # rows; the fixed seed passes: 0.9517, 0.9521), and a region built at 0.92
  # (0.920 and 0.923 in tools/mutation-check.sh, 16-17 SE low) or 0.98 fails it. (The
  # MSE is not checked again here: the first test asserts it is exactly 0.)
  se <- sqrt(0.95 * 0.05 / (40 * 400))
  expect_true(all(abs(res$coverage - 0.95) < 4 * se), info = paste(res$coverage, collapse = " "))
})

test_that("set.seed() makes a grid repeatable, and a row seed fixes its row", {
  set.seed(3)
  a <- run_small(oracle_grid())
  set.seed(3)
  b <- run_small(oracle_grid())
  drop <- c("seconds", "train_seconds")
  expect_equal(as.data.frame(a)[setdiff(names(a), drop)], as.data.frame(b)[setdiff(names(b), drop)])
  g <- oracle_grid()
  g$seed <- 11
  set.seed(4)
  c1 <- run_small(g)
  set.seed(5)
  c2 <- run_small(g)
  expect_equal(c1$coverage, c2$coverage)
  expect_equal(c1$seed, c(11, 11))
})

test_that("the latent-GP oracle is the best linear imputer with the exact moments", {
  spec <- gp_spec(6, d = 1, kernel = small_kernel)
  ms <- latent_moment_spec(spec, 0.1)
  y <- latent_gp(gp_simulate(spec, 40000, seed = 1), 0.1, seed = 2)[, , 1]
  # Monte Carlo moments of 40000 draws: standard errors about 0.01-0.02.
  expect_equal(colMeans(y), ms$mean[, 1], tolerance = 0.03)
  expect_equal(unname(stats::cov(y)), ms$Gamma, tolerance = 0.03)
  set.seed(6)
  res <- run_small(oracle_grid(), latent = TRUE)
  expect_true(all(res$latent & res$target == "truth"))
})

test_that("a tiny DiT row runs and reports its training", {
  skip_if_no_torch()
  grid <- data.frame(pattern = c("tail4", "4x1"), n = 64, strategy = "4x1+1x4", imputer = "dit", seed = 7,
                     stringsAsFactors = FALSE)
  res <- run_experiments(grid, d = 2, kernel = small_kernel, H = 24, config = list(width = 32, depth = 1, heads = 2),
                         steps = 5, fit_args = list(batch_size = 8, validation = 0), n_test = 3, n_samples = 40,
                         n_draws = 50, sampler = list(steps = 5), threads = 1, progress = FALSE, n_calibrate = 20)
  expect_identical(nrow(res), 2L)
  # Calibrated coverage beside the raw one for DiT rows.
  expect_true(all(res$coverage_calibrated >= 0 & res$coverage_calibrated <= 1))
  expect_true(all(c("coverage_truth_calibrated") %in% names(res)))
  expect_true(all(res$imputer == "dit" & res$strategy == "4x1+1x4" & res$n == 64))
  expect_true(all(res$train_seconds > 0 & is.finite(res$final_loss)))
  expect_true(all(res$coverage >= 0 & res$coverage <= 1 & is.finite(res$mse)))
})

test_that("bad grids give input errors naming grid", {
  expect_input_error(run_small(list(imputer = "oracle")), "grid")
  expect_input_error(run_small(42), "grid")
  expect_input_error(run_small(list(pattern = c("P1", "P2"), imputer = "oracle", H = 1:3)), "grid")
  expect_input_error(run_small(data.frame(pattern = "P1", imputer = "oracle")), "grid")          # H = 24
  expect_input_error(run_small(data.frame(pattern = "tail40", imputer = "oracle")), "grid")      # > H
  expect_input_error(run_small(data.frame(pattern = "zz", imputer = "oracle")), "grid")
  expect_input_error(run_small(data.frame(pattern = "tail4", imputer = "knn")), "grid")
  expect_input_error(run_small(data.frame(pattern = "tail4", imputer = "dit")), "grid")          # no n
  expect_input_error(run_small(data.frame(pattern = "tail4", n = 10, strategy = "S1")), "grid")  # H = 24
  expect_input_error(run_small(data.frame(pattern = "tail4", imputer = "oracle", seed = -1)), "grid")
  expect_input_error(run_small(data.frame(pattern = "tail4", imputer = "oracle", colour = 1)), "grid")
  expect_input_error(run_small(oracle_grid(), level = 2), "level")
  expect_input_error(run_small(oracle_grid(), sampler = list(foo = 1)), "sampler")
})

test_that("P1-P4 and the presets rescale to H = 48 block by block", {
  pp <- paper_patterns()
  expect_equal(rescale_frames(pp$P1$frames, 0.5), 41:48)
  expect_equal(rescale_frames(pp$P2$frames, 0.5), c(11:14, 31:34))
  expect_equal(rescale_frames(pp$P4$frames, 0.5), seq(4, 46, by = 6))
  expect_equal(rescale_frames(pp$P3$frames, 1), pp$P3$frames)
  s4 <- resolve_training_strategy("S4", 48, stop)
  expect_equal(vapply(s4$generators, `[[`, "", "label"), c("8x1", "8x1", "4x2", "1x8"))
  expect_equal(s4$weights, rep(0.25, 4))
  m <- draw_masks(resolve_test_pattern("P3", 48, stop), 2, 48, 1, seed = 1)
  expect_equal(which(m[1, , 1]), c(6, 7, 18, 19, 30, 31, 42, 43))
})
