# impute_series(bounds = ): bounded variables on a logit scale (two bounds)
# or a shifted log scale (one bound) whose imputations, draws and interval
# ends never leave the bounds.

within <- function(a, lo, hi) all(a >= lo & a <= hi)

test_that("bounded data: imputations, draws and interval ends stay within the bounds", {
  imp0 <- impute_series(datasets::presidents, n_samples = 50, seed = 1)
  # the data's own scale puts an upper bound above 100 (Truman's 1950 quarter)
  expect_gt(max(imp0$upper[imp0$missing]), 100)
  imp <- impute_series(datasets::presidents, n_samples = 50, seed = 1, bounds = c(0, 100))
  miss <- imp$missing
  expect_true(within(imp$point[miss], 0, 100))
  expect_true(within(imp$lower[miss], 0, 100))
  expect_true(within(imp$upper[miss], 0, 100))
  expect_true(all(imp$lower[miss] < imp$point[miss] & imp$point[miss] < imp$upper[miss]))
  for (m in c(1, 25, 50)) expect_true(within(completed_series(imp, "sample", m = m), 0, 100))
  expect_match(printed(imp$model), "logit scale on \\[0, 100\\] \\(margin [0-9.e-]+\\) for x")
  expect_match(summary(imp)$candidates$transform[1], "logit [0, 100]", fixed = TRUE)
  # calibration widens on the model's scale and maps back: still inside
  cal <- impute_series(datasets::presidents, n_samples = 50, seed = 1, bounds = c(0, 100), calibrate = TRUE)
  expect_true(within(c(cal$lower[miss], cal$upper[miss]), 0, 100))
  # proper draws (parameters drawn too) map back the same way
  prop <- impute_series(datasets::presidents, n_samples = 50, seed = 1, bounds = c(0, 100), proper = TRUE)
  expect_true(within(c(prop$lower[miss], prop$upper[miss], prop$point[miss]), 0, 100))
})

test_that("the bounded scale's Jacobian puts logLik on the data's scale: far bounds give the unbounded fit", {
  # With bounds 1,000 ranges away, the logit is linear to 1e-6 over the
  # data, so the fit and imputations are those on the data's own scale, and
  # so is logLik once the map's Jacobian is counted (without it, logLik would
  # move by about n log(slope), hundreds of units here).
  y <- datasets::presidents
  imp0 <- impute_series(y, n_samples = 20, seed = 1, transform = "none")
  impw <- impute_series(y, n_samples = 20, seed = 1, bounds = c(-1e5, 1e5))
  expect_equal(as.numeric(logLik(impw$model)), as.numeric(logLik(imp0$model)), tolerance = 1e-6)
  expect_equal(impw$point, imp0$point, tolerance = 1e-6)
  expect_equal(impw$upper, imp0$upper, tolerance = 1e-6)
})

test_that("values on a bound map to finite values, and the margin keeps them from being outliers", {
  # A share that sits at 0 and at 1 for stretches (clipped waves plus noise).
  set.seed(4)
  n <- 400
  p <- pmin(pmax(0.5 + 0.7 * sin((1:n) / 15) + rnorm(n, sd = 0.05), 0), 1)
  expect_gt(sum(p == 0), 20)
  expect_gt(sum(p == 1), 20)
  x <- p
  x[c(20:30, 200:215, 333)] <- NA
  imp <- impute_series(x, n_samples = 50, seed = 2, bounds = c(0, 1))
  miss <- is.na(x)
  expect_true(within(c(imp$lower[miss], imp$upper[miss], imp$point[miss]), 0, 1))
  expect_true(all(is.finite(c(imp$lower[miss], imp$upper[miss]))))
  expect_true(all(imp$upper[miss] > imp$lower[miss]))
  # the margin chosen is positive (values lie on the bounds) and from the grid
  m <- imp$model$transform$margin[[1]]
  expect_true(m %in% c(1e-4, 3e-4, 1e-3, 3e-3, 0.01, 0.03, 0.1))
})

test_that("bounds per variable by name; a set of separate models keeps each variable's scale", {
  set.seed(5)
  n <- 300
  share <- pmin(pmax(60 + 30 * sin((1:n) / 20) + rnorm(n, sd = 3), 0), 100)
  level <- cumsum(rnorm(n))  # unbounded, unrelated
  x <- cbind(share = share, level = level)
  x[100:130, "share"] <- NA
  x[c(40, 250:260), "level"] <- NA
  imp <- impute_series(x, n_samples = 20, seed = 1, bounds = list(share = c(0, 100)), separate = "all")
  expect_s3_class(imp$model, "ditimpute_series_model_set")
  expect_true(within(c(imp$lower[100:130, 1], imp$upper[100:130, 1]), 0, 100))
  expect_identical(is.na(imp$model$transform$lower), c(share = FALSE, level = TRUE))
  expect_match(printed(imp$model$parts[[1]]), "logit scale on \\[0, 100\\]")
  expect_no_match(printed(imp$model$parts[[2]]), "logit")
  # the level's lower bound goes negative: no bounds, no clamp
  expect_lt(min(imp$lower[, 2], na.rm = TRUE), 0)
})

test_that("bad bounds are input errors naming bounds", {
  y <- datasets::presidents
  expect_input_error(impute_series(y, bounds = c(100, 0)), "bounds")
  expect_input_error(impute_series(y, bounds = 100), "bounds")
  expect_input_error(impute_series(y, bounds = c(-Inf, Inf)), "bounds")
  expect_input_error(impute_series(y, bounds = c(Inf, 0)), "bounds")
  expect_input_error(impute_series(y, bounds = c(0, -Inf)), "bounds")
  cnd <- expect_input_error(impute_series(y, bounds = c(30, Inf)), "bounds")
  expect_match(conditionMessage(cnd), "observed values from 23 to 87, outside its bounds [30, Inf]", fixed = TRUE)
  expect_input_error(impute_series(y, bounds = c(0, NA)), "bounds")
  expect_input_error(impute_series(y, bounds = "0-100"), "bounds")
  cnd <- expect_input_error(impute_series(y, bounds = c(0, 50)), "bounds")
  expect_match(conditionMessage(cnd), "observed values from 23 to 87, outside its bounds [0, 50]", fixed = TRUE)
  expect_input_error(impute_series(y, bounds = list(c(0, 100))), "bounds")
  cnd <- expect_input_error(impute_series(y, bounds = list(z = c(0, 100))), "bounds")
  expect_match(conditionMessage(cnd), "\"z\", which is not a variable of x (its variables: \"x\")", fixed = TRUE)
  # The argument's name once: "`bounds`: must be ...", not "`bounds`: bounds must be ...".
  cnd <- expect_input_error(impute_series(y, bounds = c(100, 0)), "bounds")
  expect_match(conditionMessage(cnd), "`bounds`: must be two numbers", fixed = TRUE)
  expect_input_error(impute_series(y, bounds = list(x = c(0, 100), x = c(0, 1))), "bounds")
  # method = "dit" takes bounds and transform too: tests/testthat/test-series-dit-scale.R
})

test_that("non-negative data with zeros: bounds = c(0, Inf) keeps imputations, draws and interval ends at or above 0", {
  # Yearly counts with 9 zeros; on the data's own scale the model's lower
  # interval ends go below 0 (the check that the bound has work to do).
  disc <- datasets::discoveries
  expect_gt(sum(disc == 0), 5)
  disc[c(20:28, 70:75)] <- NA
  miss <- is.na(disc)
  # (and a warning names the variable and the bound that would help)
  expect_warning(imp0 <- impute_series(disc, n_samples = 50, seed = 1),
                 "Variable \"x\" is never negative where observed.*bounds = c\\(0, Inf\\)")
  expect_lt(min(imp0$lower[miss]), 0)
  expect_no_warning(imp <- impute_series(disc, n_samples = 50, seed = 1, bounds = c(0, Inf)))
  expect_true(all(c(imp$point[miss], imp$lower[miss], imp$upper[miss]) >= 0))
  expect_true(all(imp$lower[miss] < imp$point[miss] & imp$point[miss] < imp$upper[miss]))
  for (m in c(1, 25, 50)) expect_gte(min(completed_series(imp, "sample", m = m)), 0)
  expect_match(printed(imp$model), "log scale above 0 \\(offset [0-9.e-]+\\) for x")
  expect_match(summary(imp)$candidates$transform[1], "log [0, Inf)", fixed = TRUE)
  # the offset is a grid value times the observed values' median distance from 0
  off <- imp$model$transform$margin[[1]]
  grid <- c(1e-4, 3e-4, 1e-3, 3e-3, 0.01, 0.03, 0.1, 0.3, 1, 3, 10) * stats::median(disc, na.rm = TRUE)
  expect_true(any(abs(off - grid) < 1e-12 * grid))
  cal <- impute_series(disc, n_samples = 50, seed = 1, bounds = c(0, Inf), calibrate = TRUE)
  expect_gte(min(cal$lower[miss]), 0)
  # an upper bound mirrors a lower one: -x below 0 is x above 0, negated,
  # with the same log-likelihood (the Jacobian of each side counted)
  neg <- impute_series(-disc, n_samples = 50, seed = 1, bounds = c(-Inf, 0))
  expect_equal(-neg$point[miss], imp$point[miss], tolerance = 1e-8)
  expect_equal(-neg$upper[miss], imp$lower[miss], tolerance = 1e-8)
  expect_equal(as.numeric(logLik(neg$model)), as.numeric(logLik(imp$model)), tolerance = 1e-8)
  expect_match(printed(neg$model), "log scale below 0")
  # several variables: the warning names those without a bound, the advice a list
  x <- cbind(a = disc, b = rev(datasets::discoveries))
  x[40:45, "b"] <- NA
  expect_warning(impute_series(x, n_samples = 20, seed = 1, separate = "all"),
                 "Variables \"a\", \"b\" are never negative.*bounds = list\\(a = c\\(0, Inf\\), b = c\\(0, Inf\\)\\)")
  expect_warning(impute_series(x, n_samples = 20, seed = 1, separate = "all", bounds = list(a = c(0, Inf))),
                 "Variable \"b\" is never negative.*bounds = list\\(b = c\\(0, Inf\\)\\)")
  # a name that is not syntactic is quoted in the advice, so that it can be pasted
  colnames(x) <- c("a", "wind speed")
  expect_warning(impute_series(x, n_samples = 20, seed = 1, separate = "all", bounds = list(a = c(0, Inf))),
                 "bounds = list(`wind speed` = c(0, Inf))", fixed = TRUE)
})

test_that("a far one-sided bound gives the unbounded fit: the shifted log's Jacobian is counted", {
  # log(y + 1e9) is linear to about 1e-7 over presidents' range, so fit,
  # imputations and logLik (with the Jacobian) equal those on the data's scale.
  y <- datasets::presidents
  imp0 <- impute_series(y, n_samples = 20, seed = 1, transform = "none")
  impw <- impute_series(y, n_samples = 20, seed = 1, bounds = c(-1e9, Inf))
  expect_equal(as.numeric(logLik(impw$model)), as.numeric(logLik(imp0$model)), tolerance = 1e-6)
  expect_equal(impw$point, imp0$point, tolerance = 1e-6)
  expect_equal(impw$upper, imp0$upper, tolerance = 1e-6)
})

test_that("values on a bound are a point mass: many zeros or saturated values do not pull the margin to the grid's floor", {
  # Yearly counts, a third of them 0 (Poisson around a slowly varying
  # rate). Counted as values of a density, each zero's log-Jacobian -log(offset)
  # grows without limit as the offset shrinks, so the offset went to the grid's
  # smallest (1e-4 of the median) and 90% upper ends to hundreds for counts of at
  # most 7 (boot's coal counts: up to 1,540; bench/results/series_bounded_point_mass.md).
  # A zero stands for the values below the data's resolution (1 for counts):
  # the offset is at least that, and the intervals stay on the data's scale.
  set.seed(7)
  n <- 120
  rate <- exp(0.2 + 0.6 * sin((1:n) / 9))
  cnt <- stats::rpois(n, rate)
  expect_gt(mean(cnt == 0), 0.25)
  x <- cnt
  hide <- c(10, 25:27, 40, 61:64, 90, 101)
  x[hide] <- NA
  imp <- impute_series(x, n_samples = 50, seed = 1, bounds = c(0, Inf))
  expect_gte(imp$model$transform$margin[[1]], 1)
  expect_lt(max(imp$upper[hide]), 3 * max(cnt))
  expect_true(all(imp$lower[hide] >= 0))
  imp0 <- suppressWarnings(impute_series(x, n_samples = 50, seed = 1))
  expect_lt(mean(imp$upper[hide] - imp$lower[hide]), 1.5 * mean(imp0$upper[hide] - imp0$lower[hide]))
  # Continuous data with a third at 0 (an AR(1) clipped): the point mass
  # outweighs the values' shape at any offset, so the grid's largest is
  # taken (10 times the median), the scale closest to the data's own.
  set.seed(11)
  w <- pmax(0, 0.5 + as.numeric(stats::arima.sim(list(ar = 0.9), 400)))
  expect_gt(mean(w == 0), 0.25)
  expect_equal(ditimpute:::bounded_margin(w, 0, Inf), 10 * stats::median(w))
  # A share saturated at 100 a fifth of the time (two bounds): the margin is
  # no finer than the nearest values below 100 resolve, and the intervals
  # are about as wide as on the data's own scale (2.3 times as wide before).
  h <- pmin(100, 85 + 8 * as.numeric(stats::arima.sim(list(ar = 0.9), 400)))
  expect_gt(mean(h == 100), 0.15)
  m <- ditimpute:::bounded_margin(h, 0, 100)
  expect_gte(100 * m, 100 - max(h[h < 100]))
  # a value a rounding error off the bound lies on it (a humidity computed as
  # 100 - 1.4e-14 had made the resolution, and the slope over it, rounding noise)
  h_round <- h
  h_round[which(h == 100)[1:10]] <- 100 - 1.4e-14
  expect_identical(ditimpute:::bounded_margin(h_round, 0, 100), m)
  hx <- h
  hx[seq(7, 400, by = 10)] <- NA
  hb <- impute_series(hx, n_samples = 20, seed = 1, bounds = c(0, 100))
  h0 <- impute_series(hx, n_samples = 20, seed = 1)
  miss <- is.na(hx)
  expect_true(all(hb$upper[miss] <= 100))
  expect_lt(mean(hb$upper[miss] - hb$lower[miss]), 1.3 * mean(h0$upper[miss] - h0$lower[miss]))
  # Without values on the bound the resolution plays no part: presidents'
  # approval (23-87%) keeps the profile's choice, the grid's smallest.
  expect_equal(ditimpute:::bounded_margin(as.numeric(datasets::presidents), 0, 100), 1e-4)
})
