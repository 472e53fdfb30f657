# impute_series(x, model = <fitted model>): an earlier fit or training
# imputes the same series again, neither fitted nor trained anew
# (rpkg/R/series.R: series_reused_model(), series_check_reuse()).

# An input error naming `arg` whose message holds `text`.
expect_reuse_error <- function(expr, arg, text) {
  cnd <- expect_input_error(expr, arg)
  expect_match(conditionMessage(cnd), text, fixed = TRUE)
}

gappy_air <- function() {
  y <- datasets::AirPassengers
  y[c(20:25, 60, 100:110)] <- NA
  y
}

test_that("a reused GP model gives the earlier imputation with the same seed, and others without refitting", {
  y <- gappy_air()
  a <- impute_series(y, level = 0.9, n_samples = 40, seed = 3, threads = 1)
  b <- impute_series(y, model = a, level = 0.9, n_samples = 40, seed = 3, threads = 1)
  expect_identical(b$point, a$point)
  expect_identical(b$lower, a$lower)
  expect_identical(b$samples, a$samples)
  expect_match(printed(b), "a fitted model reused, not refitted; fitting took", fixed = TRUE)
  expect_no_match(printed(a), "reused")
  # `$model` works as the result does; another level and more paths use the
  # fitted parameters (a refit would also move fit_seconds)
  c80 <- impute_series(y, model = a$model, level = 0.8, n_samples = 60, seed = 3, threads = 1)
  expect_identical(c80$model$spec, a$model$spec)
  expect_identical(c80$model$fit_seconds, a$model$fit_seconds)
  expect_true(all(c80$upper - c80$lower < a$upper - a$lower | !a$missing))
  expect_equal(nrow(c80$samples[[1]]), 60)
  # further values hidden: imputed under the same model
  y2 <- y
  y2[70:75] <- NA
  d <- impute_series(y2, model = a, level = 0.9, n_samples = 40, seed = 3, threads = 1)
  expect_true(isTRUE(d$model$reused))
  expect_identical(d$model$fit_seconds, a$model$fit_seconds)
  expect_equal(sum(d$missing), sum(a$missing) + 6)
  expect_true(all(is.finite(d$point[70:75])))
  expect_true(all(d$lower[70:75] < d$point[70:75] & d$point[70:75] < d$upper[70:75]))
})

test_that("a reused model keeps its fit's settings: giving them, another method or another series is an error", {
  y <- gappy_air()
  a <- impute_series(y, n_samples = 20, seed = 1, threads = 1)
  expect_reuse_error(impute_series(y, model = a, kernel = "smooth"), "kernel", "keeps its own settings")
  expect_reuse_error(impute_series(y, model = a, transform = "log"), "transform", "keeps its own settings")
  expect_reuse_error(impute_series(y, model = a, period = 12), "period", "keeps its own settings")
  expect_reuse_error(impute_series(y, model = a, dit = list(steps = 5)), "dit", "keeps its own settings")
  expect_reuse_error(impute_series(y, model = a, method = "dit"), "method", "fitted method = \"gp\" model")
  expect_reuse_error(impute_series(y[-1], model = a), "x", "has 143 frames; the fitted `model` was fitted on 144")
  m <- cbind(a = as.numeric(y), b = as.numeric(y))
  expect_reuse_error(impute_series(m, model = a), "x", "has the variables a, b")
  expect_reuse_error(impute_series(y, model = 3), "model", "or a fitted model to impute with")
  expect_reuse_error(impute_series(y, model = list(1)), "model", "or a fitted model to impute with")
  # a model from a version that did not keep its settings
  old <- a$model
  old$settings <- NULL
  expect_reuse_error(impute_series(y, model = old), "model", "older version of ditimpute")
  # method = "gp" given and matching is fine
  expect_identical(impute_series(y, model = a, method = "gp", n_samples = 20, seed = 1, threads = 1)$point, a$point)
})

test_that("a reused model keeps the bounds and scale it was fitted with", {
  y <- datasets::airquality$Ozone  # positive, spans two orders of magnitude: a Box-Cox scale
  a <- impute_series(y, level = 0.9, n_samples = 30, seed = 2, threads = 1, bounds = c(0, 200))
  b <- impute_series(y, model = a, level = 0.9, n_samples = 30, seed = 2, threads = 1)
  expect_true(isTRUE(b$model$reused))
  expect_identical(b$point, a$point)
  expect_identical(b$model$transform, a$model$transform)
  expect_true(all(b$lower[b$missing] >= 0 & b$upper[b$missing] <= 200))
})

test_that("a reused DiT draws again without training: the earlier imputation with the same seed", {
  skip_if_no_torch()
  y <- gappy_air()
  tiny <- list(steps = 40, width = 32, depth = 1, batch_size = 16, sample_steps = 5)
  a <- impute_series(y, method = "dit", level = 0.9, n_samples = 20, dit = tiny, seed = 4, threads = 1,
                     bounds = c(0, Inf))
  b <- impute_series(y, model = a, level = 0.9, n_samples = 20, seed = 4, threads = 1)
  expect_identical(b$point, a$point)
  expect_identical(b$upper, a$upper)
  expect_identical(b$samples, a$samples)
  expect_true(all(b$lower[b$missing] >= 0))  # the bounds it was trained with
  # not trained anew (training would measure its own seconds)
  expect_true(isTRUE(b$model$reused))
  expect_identical(b$model$fit_seconds, a$model$fit_seconds)
  expect_match(printed(b), "a fitted model reused, not refitted", fixed = TRUE)
  # method = "dit" may be given; the GP's settings may not
  expect_reuse_error(impute_series(y, model = a, method = "gp"), "method", "fitted method = \"dit\" model")
  expect_reuse_error(impute_series(y, model = a, fit_frames = 100), "fit_frames", "keeps its own settings")
  # other values: imputed on the trained scale before (1,775 among values near 2e6, a review)
  expect_reuse_error(impute_series(y * 1000, model = a), "x", "differs from the series the fitted `model` was fitted on")
  # another seed: other paths from the same network
  c2 <- impute_series(y, model = a$model, method = "dit", level = 0.9, n_samples = 20, seed = 5, threads = 1)
  expect_false(identical(c2$samples, a$samples))
  expect_identical(c2$model$fit_seconds, a$model$fit_seconds)
  # saved with saveRDS() and read back (the network is rebuilt from its bytes)
  f <- tempfile(fileext = ".rds")
  saveRDS(a, f)
  back <- impute_series(y, model = readRDS(f), level = 0.9, n_samples = 20, seed = 4, threads = 1)
  expect_identical(back$point, a$point)
  # dit_save() takes the network, and says so when given the series model
  expect_reuse_error(dit_save(a$model, tempfile()), "object", "its network is `$dit`")
  expect_reuse_error(dit_save(a, tempfile()), "object", "its network is `$dit`")
  # a value filled in below the bounds it was trained with
  y3 <- y
  y3[22] <- -5
  expect_reuse_error(impute_series(y3, model = a), "x", "outside the bounds [0, Inf] the fitted `model` has")
})

test_that("a reused model refuses other values than its series' and filled-in values its scale cannot take", {
  y <- gappy_air()
  a <- impute_series(y, n_samples = 20, seed = 1, threads = 1)
  # the series times 1,000: imputed on the fitted scale before (intervals
  # under 100 wide among values near 170,000)
  expect_reuse_error(impute_series(y * 1000, model = a), "x",
                     "differs from the series the fitted `model` was fitted on at 126 observed values (the first: frame 1")
  expect_reuse_error(impute_series(ts(rev(y), frequency = 12), model = a), "x", "differs from the series")
  # one value filled in (it was missing at the fit) is fine; changing one is not
  y2 <- y
  y2[60] <- 230
  expect_true(!impute_series(y2, model = a, n_samples = 20, seed = 1, threads = 1)$missing[60])
  y2[61] <- 1
  expect_reuse_error(impute_series(y2, model = a), "x", "at 1 observed value (the first: frame 61")
  # a log scale and a value <= 0 filled in: the core met NaNs and named `mean`
  la <- impute_series(y, n_samples = 20, seed = 1, threads = 1, transform = "log")
  y0 <- y
  y0[21] <- 0
  expect_reuse_error(impute_series(y0, model = la), "x", "has it on a log scale, which needs positive values")
  # bounds: a value filled in outside them was a plain R error
  p <- datasets::presidents  # has its own NAs
  pa <- impute_series(p, n_samples = 20, seed = 1, threads = 1, bounds = c(0, 100))
  p2 <- p
  p2[which(is.na(p))[1]] <- 120
  expect_reuse_error(impute_series(p2, model = pa), "x", "outside the bounds [0, 100] the fitted `model` has")
  # a misspelled class names the fitted-model choice too
  expect_reuse_error(impute_series(y, model = "levle"), "model", "or a fitted model to impute with")
})

test_that("a reused model set, a data frame with columns named in bounds, and calibrate = TRUE", {
  # a data frame whose Day column is modelled only because bounds names it:
  # on reuse it was taken for a calendar column (a review)
  x <- datasets::airquality
  x$date <- as.Date("1973-05-01") + 0:152
  x <- x[, c("date", "Ozone", "Temp", "Day")]
  a <- impute_series(x, n_samples = 20, seed = 1, threads = 1, bounds = list(Day = c(0, 32), Ozone = c(0, Inf)))
  expect_identical(colnames(a$x), c("Ozone", "Temp", "Day"))
  b <- impute_series(x, model = a, n_samples = 20, seed = 1, threads = 1)
  expect_identical(b$point, a$point)
  # a model set (a noise variable split off by separate = "auto"), self-calibrated on reuse
  set.seed(3)
  m <- cbind(air = as.numeric(gappy_air()), noise = rnorm(144))
  m[c(5, 90:95), "noise"] <- NA
  s1 <- impute_series(m, n_samples = 30, seed = 2, threads = 1, calibrate = TRUE)
  expect_s3_class(s1$model, "ditimpute_series_model_set")
  s2 <- impute_series(m, model = s1, n_samples = 30, seed = 2, threads = 1, calibrate = TRUE)
  expect_true(isTRUE(s2$model$reused))
  expect_identical(s2$model$fit_seconds, s1$model$fit_seconds)
  expect_identical(s2$lower, s1$lower)
  expect_identical(s2$calibration$factors, s1$calibration$factors)
})
