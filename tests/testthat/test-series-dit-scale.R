# impute_series(method = "dit") models the data on the scale method = "gp"
# would (transform, bounds): trained on the transformed series, its paths
# mapped back before the point and intervals are summarised, so positive
# data get no negative imputation, draw or interval end. Tiny trainings:
# the scale's plumbing, not the network's accuracy.

tiny_dit <- list(steps = 60, width = 32, depth = 1, batch_size = 16, sample_steps = 5)

dit_series <- function(y, ...) {
  impute_series(y, method = "dit", n_samples = 20, level = 0.9, dit = tiny_dit, seed = 1, threads = 1, ...)
}

# A positive series near its upper bound of 100 (a share): on its own scale
# the intervals cross 100.
share_series <- function() {
  set.seed(3)
  y <- 100 * stats::plogis(2.5 + 0.9 * as.numeric(stats::arima.sim(list(ar = 0.8), 150)))
  y[c(20:27, 60:63, 100:111, sample(150, 10))] <- NA
  y
}

test_that("transform = \"auto\" on positive skewed data (Ozone): no negative imputation, draw or interval end", {
  skip_if_no_torch()
  oz <- datasets::airquality$Ozone  # 153 days, 37 missing; 1 to 168 ppb, skewed
  imp <- dit_series(oz)
  miss <- imp$missing
  # The scale the GP path chooses for the same data (a Box-Cox scale).
  expect_equal(imp$model$transform, ditimpute:::series_transforms(matrix(oz, dimnames = list(NULL, "x")), "auto"))
  expect_false(is.na(imp$model$transform$lambda[["x"]]))
  expect_true(all(imp$point[miss] > 0))
  expect_true(all(imp$lower[miss] > 0))
  expect_true(all(imp$samples[[1]] > 0))
  expect_true(all(imp$lower[miss] <= imp$point[miss] & imp$point[miss] <= imp$upper[miss]))
  # The point of a transformed variable is the paths' median (the conditional
  # median, as with method = "gp"); observed values stay as they were.
  expect_equal(imp$point[miss], unname(apply(imp$samples[[1]], 2, stats::median)))
  expect_identical(imp$point[!miss], as.numeric(oz[!miss]))
  # print() of the model names the scale, as the GP model's does.
  expect_match(printed(imp$model), "Box-Cox scale \\(lambda [0-9.]+; a log below [0-9.e+-]+\\) for x")
  # Declared non-negative: bounds = c(0, Inf) keeps everything at or above 0 too.
  nn <- dit_series(oz, bounds = c(0, Inf))
  expect_true(all(nn$lower[miss] >= 0 & nn$point[miss] >= 0 & nn$samples[[1]] >= 0))
  expect_match(printed(nn$model), "log scale above 0")
})

test_that("bounds = c(0, 100) are respected by every imputation, draw and interval end", {
  skip_if_no_torch()
  y <- share_series()
  imp <- dit_series(y, bounds = c(0, 100))
  miss <- imp$missing
  within <- function(a) all(a >= 0 & a <= 100)
  expect_true(within(imp$point[miss]))
  expect_true(within(imp$lower[miss]))
  expect_true(within(imp$upper[miss]))
  expect_true(within(imp$samples[[1]]))
  expect_equal(unname(c(imp$model$transform$lower, imp$model$transform$upper)), c(0, 100))
  expect_match(printed(imp$model), "logit scale on \\[0, 100\\]")
})

test_that("transform = \"none\" still models the data on their own scale; impossible transforms are the GP path's errors", {
  skip_if_no_torch()
  oz <- datasets::airquality$Ozone
  warned <- NULL
  imp <- withCallingHandlers(dit_series(oz, transform = "none"), warning = function(w) {
    warned <<- conditionMessage(w)
    invokeRestart("muffleWarning")
  })
  miss <- imp$missing
  expect_true(is.na(imp$model$transform$lambda[["x"]]))
  expect_equal(imp$point[miss], unname(colMeans(imp$samples[[1]])))  # the paths' mean, as before
  expect_match(printed(imp$model), "windows of the series")
  expect_no_match(printed(imp$model), "windows of the series;")  # no scale named
  # A lower interval end below 0 on never-negative data is said, as with method = "gp".
  expect_identical(!is.null(warned), any(imp$lower[miss] < 0))
  if (!is.null(warned)) expect_match(warned, "bounds = c\\(0,\\s+Inf\\)")
  # "log" of data with values <= 0: the same input error as method = "gp", before any training.
  z <- oz - 20
  gp <- expect_input_error(impute_series(z, transform = "log"), "transform")
  dit <- expect_input_error(dit_series(z, transform = "log"), "transform")
  expect_identical(conditionMessage(dit), conditionMessage(gp))
})

test_that("the DiT's series masks draw a single-variable gap as one variable's block, a whole-frame gap once as frames", {
  # the strategy alone (no training): ditimpute:::series_dit_strategy()
  miss <- matrix(FALSE, 60, 3, dimnames = list(NULL, c("a", "b", "c")))
  miss[10:14, 2] <- TRUE          # one sensor out for 5 frames, the others observed
  miss[30:32, ] <- TRUE           # every variable out for 3 frames
  miss[40, 1] <- TRUE             # a single entry
  s <- ditimpute:::series_dit_strategy(miss, H = 24)
  labels <- vapply(s$generators, `[[`, "", "label")
  kinds <- vapply(s$generators, `[[`, "", "kind")
  expect_identical(labels, c("4x1", "1x6", "1x3", "v1x1", "v1x5"))
  expect_identical(kinds[labels == "v1x5"], "variable_blocks")
  # half the draws the series' gaps, one share each (the whole-frame gap once, not once per variable)
  expect_equal(s$weights, c(0.25, 0.25, rep(0.5 / 3, 3)))
  m <- draw_masks(s, 400, H = 24, d = 3, seed = 1)
  v5 <- which(labels == "v1x5")
  # masks with exactly 5 entries in one variable and none elsewhere: about a sixth of them
  one_var <- apply(m, 1, function(k) sum(k) == 5 && sum(colSums(k) > 0) == 1)
  expect_gt(mean(one_var), 0.10)
  # sensors failing at staggered times (a review: no generator hid the frames
  # where all three were out): the common stretch as whole frames, the rest
  # per variable
  st <- matrix(FALSE, 60, 3, dimnames = list(NULL, c("a", "b", "c")))
  st[10:16, "a"] <- TRUE
  st[8:14, "b"] <- TRUE
  st[c(9:18), "c"] <- TRUE
  s2 <- ditimpute:::series_dit_strategy(st, H = 24)
  expect_identical(vapply(s2$generators, `[[`, "", "label"), c("4x1", "1x6", "1x5", "v1x1", "v1x2", "v1x4"))
  expect_equal(s2$weights, c(0.25, 0.25, 0.5 * c(1, 1, 2, 1) / 5))
  # a univariate series: unchanged, whole frames
  expect_identical(vapply(ditimpute:::series_dit_strategy(miss[, 2, drop = FALSE], H = 24)$generators, `[[`, "", "label"),
                   c("4x1", "1x6", "1x3", "1x5"))
})
