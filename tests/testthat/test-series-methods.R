# predict(), logLik(), nobs(), AIC() and BIC() on impute_series() results
# (rpkg/R/series_methods.R), and the model print's variance shares.

# The object as if its series had ended `k` frames earlier (same model):
# what predict() reads of it is x, missing, time and model.
truncate_series_imputation <- function(imp, k) {
  keep <- seq_len(nrow(imp$x) - k)
  imp$x <- imp$x[keep, , drop = FALSE]
  imp$missing <- imp$missing[keep, , drop = FALSE]
  imp$time <- imp$time[keep]
  imp
}

test_that("predict() continues the time stamps and gives ordered intervals", {
  y <- datasets::LakeHuron  # 1875-1972
  y[c(20:24, 60)] <- NA
  imp <- impute_series(y, n_samples = 30, seed = 1, threads = 1)
  fc <- predict(imp, n.ahead = 5, seed = 1, threads = 1)
  expect_s3_class(fc, "ditimpute_series_forecast")
  expect_s3_class(fc, "data.frame")
  expect_identical(names(fc), c("time", "frame", "horizon", "variable", "estimate", "se", "lower", "upper"))
  expect_equal(fc$time, 1973:1977)
  expect_identical(fc$frame, 99:103)
  expect_identical(fc$horizon, 1:5)
  expect_true(all(fc$lower < fc$estimate & fc$estimate < fc$upper))
  expect_identical(dim(attr(fc, "samples")), c(30L, 5L))
  expect_match(printed(fc), "5 frames beyond the series' end \\(horizons 1-5\\)")
  expect_match(printed(tail(fc, 1)), "1 frame beyond the series' end \\(horizon 5\\)")
  # the level: narrower intervals at 50%, the same point
  fc50 <- predict(imp, n.ahead = 5, level = 0.5, seed = 1, threads = 1)
  expect_equal(fc50$estimate, fc$estimate)
  expect_true(all(fc50$upper - fc50$lower < fc$upper - fc$lower))
  # a monthly ts: the next month; a plain vector: frame numbers
  m <- window(datasets::co2, 1990)  # Jan 1990 - Dec 1997
  m[c(30:33, 70)] <- NA
  fm <- predict(impute_series(m, n_samples = 20, seed = 1, threads = 1), n.ahead = 3, seed = 1, threads = 1)
  expect_equal(fm$time, 1998 + (0:2) / 12)
  v <- as.numeric(datasets::Nile)[1:80]
  v[30:35] <- NA
  fv <- predict(impute_series(v, n_samples = 20, seed = 1, threads = 1), n.ahead = 2, seed = 1, threads = 1)
  expect_equal(fv$time, c(81, 82))
})

test_that("predict() gives several levels at once from the same draws", {
  y <- datasets::LakeHuron
  y[c(20:24, 60)] <- NA
  imp <- impute_series(y, n_samples = 30, seed = 1, threads = 1)
  for (proper in c(FALSE, TRUE)) {
    fc <- predict(imp, n.ahead = 4, level = c(0.95, 0.8), proper = proper, seed = 3, threads = 1)
    expect_identical(names(fc), c("time", "frame", "horizon", "variable", "estimate", "se", "lower_80", "upper_80",
                                  "lower_95", "upper_95"))
    expect_identical(attr(fc, "level"), c(0.8, 0.95))  # increasing order
    # each pair is what a call at that level alone gives, with the same draws
    for (L in c(0.8, 0.95)) {
      one <- predict(imp, n.ahead = 4, level = L, proper = proper, seed = 3, threads = 1)
      expect_equal(fc[[paste0("lower_", 100 * L)]], one$lower)
      expect_equal(fc[[paste0("upper_", 100 * L)]], one$upper)
      expect_equal(fc$estimate, one$estimate)
      expect_equal(attr(fc, "samples"), attr(one, "samples"))
    }
    expect_true(all(fc$lower_95 < fc$lower_80 & fc$upper_80 < fc$upper_95))
  }
  expect_match(printed(fc), "80% and 95% intervals")
  # rows keep the levels; plot() draws one band per level, the line once
  expect_s3_class(fc[fc$horizon > 2, ], "ditimpute_series_forecast")
  expect_identical(attr(fc[fc$horizon > 2, ], "level"), c(0.8, 0.95))
  built <- ggplot2::ggplot_build(plot(fc))
  expect_equal(nrow(built$data[[2]]), 2 * 5)
  expect_equal(nrow(built$data[[3]]), 5)
  # a model set (variables apart) and a non-integer percent
  set.seed(5)
  xs <- cbind(a = 50 + cumsum(rnorm(90)), b = 20 + cumsum(rnorm(90)))
  xs[20:24, 1] <- NA
  fs <- predict(impute_series(xs, separate = "all", n_samples = 20, seed = 1, threads = 1), n.ahead = 2,
                level = c(0.5, 0.975), proper = FALSE, seed = 1, threads = 1)
  expect_true(all(c("lower_50", "upper_97.5") %in% names(fs)))
  expect_true(all(fs$lower_97.5 < fs$lower_50))
  expect_input_error(predict(imp, level = c(0.8, 0.8)), "level")
  expect_input_error(predict(imp, level = c(0.8, 1)), "level")
  expect_input_error(predict(imp, level = c(0.8, NA)), "level")
  # levels whose column names would coincide, or read 100%
  cnd <- expect_input_error(predict(imp, level = c(0.95, 0.95 + 1e-9)), "level")
  expect_match(conditionMessage(cnd), "4 decimals of a percent")
  expect_input_error(predict(imp, level = c(0.9, 0.9999999)), "level")
  expect_input_error(predict(imp, level = c("0.8", "0.9")), "level")
})

test_that("predict() continues Date and POSIXct time stamps by the series' step", {
  set.seed(11)
  vals <- 10 + cumsum(rnorm(48, sd = 0.3))
  vals[c(10:13, 30)] <- NA
  monthly <- data.frame(date = seq(as.Date("2001-01-01"), by = "month", length.out = 48), y = vals)
  fc <- predict(impute_series(monthly, n_samples = 20, seed = 1, threads = 1, kernel = "smooth"), n.ahead = 2,
                seed = 1, threads = 1)
  expect_identical(fc$time, as.Date(c("2005-01-01", "2005-02-01")))
  # month ends stay month ends
  ends <- seq(as.Date("2001-02-01"), by = "month", length.out = 48) - 1
  fe <- predict(impute_series(data.frame(date = ends, y = vals), n_samples = 20, seed = 1, threads = 1,
                              kernel = "smooth"), n.ahead = 2, seed = 1, threads = 1)
  expect_identical(fe$time, as.Date(c("2005-01-31", "2005-02-28")))
  hourly <- data.frame(t = as.POSIXct("2020-03-01 00:00", tz = "UTC") + 3600 * (0:47), y = vals)
  fh <- predict(impute_series(hourly, n_samples = 20, seed = 1, threads = 1, kernel = "smooth"), n.ahead = 2,
                seed = 1, threads = 1)
  expect_equal(fh$time, as.POSIXct(c("2020-03-03 00:00", "2020-03-03 01:00"), tz = "UTC"))
  # internal: daily stamps at one clock time across daylight saving stay at that time
  days <- as.POSIXct(sprintf("2021-03-%02d 09:00", 20:27), tz = "Europe/Paris")
  ahead <- ditimpute:::series_time_ahead(days, 3)
  expect_identical(format(ahead, "%Y-%m-%d %H:%M"), c("2021-03-28 09:00", "2021-03-29 09:00", "2021-03-30 09:00"))
})

test_that("a forecast is the end gap imputed by the same model", {
  # The series with its last k values missing, imputed by impute_series();
  # then the same object cut k frames short and forecast k frames: the same
  # model and the same conditional law, so the same points and intervals.
  y <- datasets::Nile
  k <- 8
  y[c(30:34, 100 - k + seq_len(k))] <- NA
  imp <- impute_series(y, n_samples = 30, seed = 1, threads = 1)
  end <- imp$record[imp$record$frame > 100 - k, ]
  fc <- predict(truncate_series_imputation(imp, k), n.ahead = k, seed = 1, threads = 1, model_choice = "fit")
  expect_equal(fc$time, end$time)
  expect_equal(fc$estimate, end$estimate, tolerance = 1e-6)
  expect_equal(fc$lower, end$lower, tolerance = 1e-6)
  expect_equal(fc$upper, end$upper, tolerance = 1e-6)
  # two variables in independent groups (a model set), on log scales
  set.seed(5)
  n <- 90
  a <- 50 + cumsum(rnorm(n))
  b <- exp(1 + cumsum(rnorm(n, sd = 0.08)))
  x <- cbind(a = a, b = b)
  x[c(20:24), 1] <- NA
  x[60:62, 2] <- NA
  x[n - 0:5, ] <- NA  # every variable, so that the cut series keeps every observed value
  set_imp <- impute_series(x, separate = "all", transform = "log", n_samples = 30, seed = 1, threads = 1)
  expect_s3_class(set_imp$model, "ditimpute_series_model_set")
  expect_equal(unname(set_imp$model$transform$lambda), c(0, 0))
  end <- set_imp$record[set_imp$record$frame > n - 6, ]
  end <- end[order(end$frame, match(end$variable, c("a", "b"))), ]
  cut <- truncate_series_imputation(set_imp, 6)
  fc <- predict(cut, n.ahead = 6, seed = 1, threads = 1, model_choice = "fit")
  expect_identical(paste(fc$frame, fc$variable), paste(end$frame, end$variable))
  expect_equal(fc$estimate, end$estimate, tolerance = 1e-6)
  expect_equal(fc$upper, end$upper, tolerance = 1e-6)
})

test_that("a seasonal shape held fixed carries on into the forecast", {
  set.seed(1)
  p <- 24
  n <- 10 * p
  shape <- rep(0, p)
  shape[c(7, 8)] <- c(6, 3)  # a sharp spike the season's 5 harmonics cannot hold
  x <- shape[(seq_len(n) - 1) %% p + 1] + cumsum(rnorm(n, sd = 0.1)) + rnorm(n, sd = 0.3)
  x[c(50:60, 150:155)] <- NA
  imp <- impute_series(ts(x, frequency = p), n_samples = 20, seed = 1, threads = 1)
  expect_false(is.null(imp$model$profile))
  fc <- predict(imp, n.ahead = 2 * p, seed = 1, threads = 1)
  pos <- (fc$frame - 1) %% p + 1
  top <- pos[order(-fc$estimate)][1:4]
  expect_setequal(top, c(7, 8))  # the spikes at their place in the period, both periods ahead
  expect_gt(mean(fc$estimate[pos == 7]) - mean(fc$estimate[!pos %in% c(7, 8)]), 4)
})

test_that("a level's and a trend's forecast intervals widen with the horizon", {
  y <- datasets::Nile
  y[c(30:34, 70)] <- NA
  for (form in c("level", "trend")) {
    imp <- impute_series(y, model = form, kernel = "smooth", n_samples = 20, seed = 1, threads = 1)
    fc <- predict(imp, n.ahead = 12, seed = 1, threads = 1)
    w <- fc$upper - fc$lower
    expect_true(all(diff(w) > 0), info = form)
    expect_gt(w[12], 1.2 * w[1])
  }
})

test_that("predict() draws properly by default, as impute_series() does for an end gap", {
  # Nile has no end gap: fitted with plug-in draws; its forecast (an end
  # gap) gets proper draws unless proper = FALSE, which is the plug-in law
  y <- datasets::Nile
  y[c(30:34, 70)] <- NA
  imp <- impute_series(y, n_samples = 20, seed = 1, threads = 1)
  expect_false(imp$model$proper)
  fc <- predict(imp, n.ahead = 6, seed = 2, threads = 1)
  expect_true(attr(fc, "proper"))
  expect_match(printed(fc), "proper draws")
  on <- predict(imp, n.ahead = 6, proper = TRUE, seed = 2, threads = 1)
  expect_identical(on$upper, fc$upper)
  off <- predict(imp, n.ahead = 6, proper = FALSE, seed = 2, threads = 1)
  expect_false(attr(off, "proper"))
  expect_false(isTRUE(all.equal(off$upper, fc$upper)))
  expect_input_error(predict(imp, n.ahead = 6, proper = "yes"), "proper")
  # an imputation asked for plug-in draws forecasts with them, unless told
  plain <- impute_series(y, n_samples = 20, proper = FALSE, seed = 1, threads = 1)
  expect_false(attr(predict(plain, n.ahead = 6, seed = 2, threads = 1), "proper"))
  expect_true(attr(predict(plain, n.ahead = 6, proper = TRUE, seed = 2, threads = 1), "proper"))
})

test_that("predict() under proper draws (a short series) forecasts from the mixture", {
  y <- datasets::LakeHuron[1:50]
  y[c(10:13, 30)] <- NA
  imp <- impute_series(y, n_samples = 20, seed = 1, threads = 1)
  expect_true(imp$model$proper)
  fc <- predict(imp, n.ahead = 3, seed = 2, threads = 1)
  expect_true(all(fc$lower < fc$estimate & fc$estimate < fc$upper))
  expect_identical(predict(imp, n.ahead = 3, seed = 2, threads = 1)$upper, fc$upper)  # repeatable by seed
  # se is the mixture's sd (the data's own scale), as the intervals are
  expect_equal(fc$se, (fc$upper - fc$lower) / (2 * qnorm(0.975)), tolerance = 1e-10)
})

test_that("predict() chooses the model class with the horizon in view, on forecasts of the series' own end", {
  # LakeHuron has no gaps, so its fit kept BIC's class, a linear trend; on
  # hidden stretches of its last 6 observed frames (moved inwards by up to 6)
  # the local level, fitted beside it, forecasts better (a lower mean CRPS:
  # a level needs no margin)
  y <- datasets::LakeHuron
  imp <- impute_series(y, n_samples = 30, seed = 1, threads = 1)
  expect_identical(imp$model$model_name, "stationary")
  fc <- predict(imp, n.ahead = 6, proper = FALSE, seed = 1, threads = 1)
  ch <- attr(fc, "model_choice")
  expect_identical(ch$step, c("horizon", "horizon"))
  expect_identical(ch$model, c("stationary", "level"))
  expect_identical(ch$chosen, c(FALSE, TRUE))
  expect_lt(ch$difference[2], 0)
  expect_identical(ch$hidden_values, c(60L, 60L))  # 10 rounds of 6 frames
  expect_identical(ch$hidden_gaps, c(10L, 10L))
  expect_match(printed(fc), "chosen for the horizon over the fit's (stationary around a fixed line, smooth kernel)", fixed = TRUE)
  # the level form as fitted, nothing refitted: the forecast of the series
  # fitted with model = "level" (the same fit of that form), whose one class
  # leaves nothing to choose
  lvl <- impute_series(y, model = "level", n_samples = 30, seed = 1, threads = 1)
  ref <- predict(lvl, n.ahead = 6, proper = FALSE, seed = 1, threads = 1)
  expect_null(attr(ref, "model_choice"))
  expect_equal(fc$estimate, ref$estimate, tolerance = 1e-10)
  expect_equal(fc$upper, ref$upper, tolerance = 1e-10)
  # model_choice = "fit": the fitted class, as predict() forecast before
  fit <- predict(imp, n.ahead = 6, proper = FALSE, seed = 1, threads = 1, model_choice = "fit")
  expect_null(attr(fit, "model_choice"))
  expect_gt(max(abs(fit$estimate - fc$estimate)), 0.1)
  expect_match(printed(fit), "GP series (stationary around a fixed line, smooth kernel)", fixed = TRUE)
  # the class is the series' and the horizon's, not the seed's; forecasts
  # of up to 6 frames share it (a forecast of 1 frame is the first of 6)
  expect_identical(attr(predict(imp, n.ahead = 6, proper = FALSE, seed = 2, threads = 1), "model_choice"), ch)
  one <- predict(imp, n.ahead = 1, proper = FALSE, seed = 5, threads = 1)
  expect_equal(one$estimate, fc$estimate[1], tolerance = 1e-12)
  # 12 frames ahead the linear trend forecast the series' end better: kept
  f12 <- predict(imp, n.ahead = 12, proper = FALSE, seed = 1, threads = 1)
  expect_identical(attr(f12, "model_choice")$chosen, c(TRUE, FALSE))
  expect_identical(f12$estimate,
                   predict(imp, n.ahead = 12, proper = FALSE, seed = 1, threads = 1, model_choice = "fit")$estimate)
  # a class chosen against BIC on the series' own gaps keeps only its forms:
  # nothing to choose; nor in a model of a build before the choice
  gappy <- y
  gappy[20:24] <- NA
  g <- impute_series(gappy, n_samples = 30, seed = 1, threads = 1)
  expect_identical(g$model$selection$chosen, c(FALSE, TRUE))  # the level, against BIC's linear trend
  expect_false(any(vapply(g$model$forms$candidates, function(c) c$spec$model == "stationary", TRUE)))
  expect_null(attr(predict(g, n.ahead = 6, proper = FALSE, seed = 1, threads = 1), "model_choice"))
  # a value missing near the end: the hidden stretches count observed values
  # and still start from different origins (a review: counted in frames,
  # every round hid the one value after frame 97, ten "gaps" with SE 0)
  near <- y
  near[97] <- NA
  ne <- impute_series(near, n_samples = 30, seed = 1, threads = 1)
  nc <- attr(predict(ne, n.ahead = 6, proper = FALSE, seed = 1, threads = 1), "model_choice")
  expect_identical(nc$hidden_values, c(60L, 60L))
  expect_identical(nc$hidden_gaps, c(10L, 10L))
  expect_gt(nc$se[2], 0.01)
  old <- imp
  old$model$forms$rows <- NULL
  expect_null(attr(predict(old, n.ahead = 6, proper = FALSE, seed = 1, threads = 1), "model_choice"))
  expect_input_error(predict(imp, n.ahead = 2, model_choice = "horizn"), "model_choice")
  # a model set: each group chosen on its own, as alone (plug-in: exact)
  x <- cbind(lake = as.numeric(y), nile = as.numeric(datasets::Nile)[1:98])
  set <- impute_series(x, separate = "all", n_samples = 30, seed = 1, threads = 1)
  fs <- predict(set, n.ahead = 6, proper = FALSE, seed = 1, threads = 1)
  expect_identical(attr(fs, "model_choice")$variables, rep(c("lake", "nile"), each = 2))
  expect_identical(attr(fs, "model_choice")$chosen[1:2], c(FALSE, TRUE))
  expect_equal(fs$estimate[fs$variable == "lake"], fc$estimate, tolerance = 1e-10)
  expect_equal(fs$upper[fs$variable == "lake"], fc$upper, tolerance = 1e-10)
})

test_that("predict()'s se is the forecast's sd on the data's scale", {
  # Nile is modelled on its own scale (largest / smallest < 10): the law of a
  # forecast is Gaussian there and se its exact sd, from the same sd as the
  # intervals, which are estimate -/+ z se. Both sides are computed from one
  # sd, so they agree to rounding (values near 1e3: about 1e-13 relative);
  # a se on the model's standardised scale (off by the model's scale, of
  # the order of the series' sd, 169) or of another level's z fails.
  y <- datasets::Nile
  y[c(30:34, 70)] <- NA
  imp <- impute_series(y, model = "level", kernel = "smooth", n_samples = 20, seed = 1, threads = 1)
  expect_true(is.na(imp$model$transform$lambda))
  # plug-in draws (a forecast gets proper draws by default, whose mixture
  # law depends on the paths drawn; that case is tested above)
  fc <- predict(imp, n.ahead = 10, level = 0.9, n_samples = 4000, proper = FALSE, seed = 1, threads = 1)
  z <- qnorm(0.95)
  expect_equal(fc$se, (fc$upper - fc$lower) / (2 * z), tolerance = 1e-10)
  expect_equal(fc$estimate - fc$lower, z * fc$se, tolerance = 1e-10)
  expect_true(all(diff(fc$se) > 0))  # a level's forecast spreads with the horizon
  # the sd of the 4,000 Gaussian draws estimates it: relative sd
  # 1 / sqrt(2 * 3999) = 1.1% per entry, so 5% is 4.5 sds (a miss in 10
  # entries has probability < 1e-4)
  expect_equal(unname(apply(attr(fc, "samples"), 2, sd)), fc$se, tolerance = 0.05)
  # se does not depend on the level: one forecast gives every level's interval
  fc50 <- predict(imp, n.ahead = 10, level = 0.5, proper = FALSE, seed = 1, threads = 1)
  expect_equal(fc50$se, fc$se, tolerance = 1e-12)
  expect_equal(fc50$upper, fc$estimate + qnorm(0.75) * fc$se, tolerance = 1e-10)
  # a log scale: the intervals are estimate * exp(-/+ z s), s the sd of the
  # log; se is the log-normal law's sd, estimate * sqrt(exp(s^2) (exp(s^2) -
  # 1)) (quadrature, 1e-8), and the 4,000 plug-in draws' sd estimates it
  # (relative sd about 1.2% for s <= 0.3, so 6% is 5 sds)
  set.seed(5)
  b <- exp(1 + cumsum(rnorm(90, sd = 0.08)))
  b[60:62] <- NA
  il <- impute_series(b, model = "level", kernel = "smooth", transform = "log", n_samples = 20, seed = 1,
                      threads = 1)
  fl <- predict(il, n.ahead = 12, n_samples = 4000, proper = FALSE, seed = 1, threads = 1)
  s <- log(fl$upper / fl$lower) / (2 * qnorm(0.975))
  expect_true(max(s) < 0.3)
  expect_equal(fl$se, fl$estimate * sqrt(exp(s^2) * (exp(s^2) - 1)), tolerance = 1e-8)
  expect_equal(unname(apply(attr(fl, "samples"), 2, sd)), fl$se, tolerance = 0.06)
  expect_true(all(fl$se > 0) && fl$se[12] > 1.5 * fl$se[1])  # a level's forecast spreads with the horizon
  expect_true(all(fl$upper - fl$estimate > fl$estimate - fl$lower))  # asymmetric: se is not a half-width
})

test_that("predict()'s se on a transformed scale is the sd of the intervals' law, also near a bound", {
  draws_sd <- function(fc) unname(apply(attr(fc, "samples"), 2, sd))
  # plug-in draws: se does not depend on the number of paths, and 4,000
  # paths' sd agrees with it (Monte Carlo error about 1.1%; 8% allowed)
  agree <- function(imp, n.ahead) {
    few <- predict(imp, n.ahead = n.ahead, n_samples = 20, proper = FALSE, seed = 1, threads = 1)
    many <- predict(imp, n.ahead = n.ahead, n_samples = 4000, proper = FALSE, seed = 2, threads = 1)
    expect_equal(few$se, many$se, tolerance = 1e-10)
    expect_equal(many$se, draws_sd(many), tolerance = 0.08)
    many
  }
  # Box-Cox (lambda in (0, 1)) with a downward trend: the forecast crosses
  # the smallest observed value, below which the scale continues as a log
  set.seed(4)
  x <- (6 + cumsum(rnorm(100, sd = 0.15)) - 0.04 * (1:100))^2
  x[30:34] <- NA
  ix <- impute_series(x, transform = "boxcox", model = "trend", kernel = "smooth", n_samples = 20, seed = 1,
                      threads = 1)
  lambda <- ix$model$transform$lambda[[1]]
  expect_true(lambda > 0 && lambda < 1)
  fx <- agree(ix, 30)
  expect_true(any(fx$estimate < ix$model$transform$floor[[1]]))
  # a log scale: the lognormal's sd in closed form
  set.seed(6)
  ly <- exp(2 + cumsum(rnorm(80, sd = 0.1)))
  ly[30:33] <- NA
  il <- impute_series(ly, transform = "log", model = "level", kernel = "smooth", n_samples = 20, proper = FALSE,
                      seed = 1, threads = 1)
  fl <- predict(il, n.ahead = 5, proper = FALSE, seed = 1, threads = 1)
  s <- (log(fl$upper) - log(fl$lower)) / (2 * qnorm(0.975))  # sd on the log scale
  m <- log(fl$estimate)
  expect_equal(fl$se, sqrt((exp(s^2) - 1) * exp(2 * m + s^2)), tolerance = 1e-6)
  # a share close to its lower bound (logit scale on [0, 1]): the map back
  # flattens there, and the delta method's sd was one to two orders of
  # magnitude below the draws'
  set.seed(1)
  y <- pmax(0, round(30 * exp(-(1:80) / 10) + rnorm(80)))
  fb <- agree(impute_series(y / max(y), bounds = c(0, 1), n_samples = 100, seed = 1, threads = 1), 4)
  expect_true(all(fb$se > 0.1 * (fb$upper - fb$lower) / (2 * qnorm(0.975))))
  # one bound (a shifted log above 0), under proper draws too: repeatable
  set.seed(3)
  w <- abs(cumsum(rnorm(120)))
  w[1:3] <- 0
  w[50:55] <- NA
  iw <- impute_series(w, bounds = c(0, Inf), n_samples = 20, seed = 1, threads = 1)
  agree(iw, 8)
  fw <- predict(iw, n.ahead = 8, seed = 1, threads = 1)
  expect_identical(fw$se, predict(iw, n.ahead = 8, seed = 1, threads = 1)$se)
  expect_true(all(fw$se > 0))
  # a model set: a variable on its own scale keeps the exact sd, one on a
  # bounded scale gets its law's
  set.seed(5)
  xs <- cbind(a = 50 + cumsum(rnorm(90)), b = exp(1 + cumsum(rnorm(90, sd = 0.08))))
  xs[20:24, 1] <- NA
  xs[60:62, 2] <- NA
  set_imp <- impute_series(xs, separate = "all", transform = "none", bounds = list(b = c(0, Inf)), n_samples = 20,
                           seed = 1, threads = 1)
  expect_s3_class(set_imp$model, "ditimpute_series_model_set")
  fs <- agree(set_imp, 4)
  a <- fs$variable == "a"
  expect_equal(fs$se[a], ((fs$upper - fs$lower) / (2 * qnorm(0.975)))[a], tolerance = 1e-10)
})

test_that("predict() rejects a bad n.ahead and unknown arguments", {
  y <- datasets::LakeHuron
  y[c(20:24, 60)] <- NA
  imp <- impute_series(y, n_samples = 20, seed = 1, threads = 1)
  for (bad in list(0, -1, 1.5, NA, "3", c(1, 2))) expect_input_error(predict(imp, n.ahead = bad), "n.ahead")
  expect_input_error(predict(imp, level = 1), "level")
  expect_input_error(predict(imp, n_samples = 5), "n_samples")
  cnd <- expect_input_error(predict(imp, nahead = 3), "nahead")
  expect_match(conditionMessage(cnd), "did you mean `n.ahead`", fixed = TRUE)
})

test_that("logLik(), nobs(), AIC() and BIC() agree on an imputation and its model", {
  y <- datasets::Nile
  y[40:55] <- NA
  imp <- impute_series(y, n_samples = 20, seed = 1, threads = 1)
  ll <- logLik(imp)
  expect_s3_class(ll, "logLik")
  expect_identical(attr(ll, "df"), imp$model$df)
  expect_equal(nobs(imp), as.integer(imp$model$nobs))
  expect_identical(nobs(imp), nobs(imp$model))
  expect_lt(nobs(imp), sum(!is.na(y)) + 1)  # observed values, less the level's start
  expect_equal(AIC(imp), AIC(imp$model))
  expect_equal(BIC(imp), BIC(imp$model))
  expect_equal(AIC(imp), -2 * as.numeric(ll) + 2 * imp$model$df)
  expect_equal(BIC(imp), -2 * as.numeric(ll) + log(imp$model$nobs) * imp$model$df)
  # the chosen candidate's BIC (at the maximum-likelihood rate: the series is fitted whole)
  expect_equal(BIC(imp), imp$model$candidates$BIC[imp$model$candidates$chosen])
  # a model set: the groups' sums
  set.seed(5)
  x <- cbind(a = cumsum(rnorm(80)), b = rnorm(80))
  x[10:14, 1] <- NA
  s <- impute_series(x, separate = "all", n_samples = 20, seed = 1, threads = 1)
  expect_equal(as.numeric(logLik(s)), sum(vapply(s$model$parts, function(p) as.numeric(logLik(p)), 0)))
  expect_equal(nobs(s), sum(vapply(s$model$parts, nobs, 0L)))
  expect_equal(BIC(s), BIC(s$model))
  expect_input_error(logLik(imp, REML = TRUE), "REML")
})

test_that("a DiT imputation has no likelihood and no forecast: input errors", {
  # without LibTorch too: an imputation whose model is a DiT's
  y <- datasets::Nile
  y[40:55] <- NA
  fake <- impute_series(y, n_samples = 20, seed = 1, threads = 1)
  fake$model <- structure(list(kernel_name = "dit"), class = "ditimpute_series_dit_model")
  cnd <- expect_input_error(predict(fake, n.ahead = 3), "object")
  expect_match(conditionMessage(cnd), "method = \"dit\"", fixed = TRUE)
  expect_input_error(logLik(fake), "object")
  expect_input_error(BIC(fake), "object")
  expect_input_error(nobs(fake), "object")
  expect_input_error(residuals(fake), "object")
  skip_if_no_torch()
  y <- datasets::ldeaths
  y[c(10:14, 50)] <- NA
  small <- list(steps = 2, sample_steps = 2, batch_size = 4, width = 16, depth = 1, heads = 2)
  imp <- impute_series(y, method = "dit", n_samples = 20, level = 0.9, dit = small, seed = 1, threads = 1)
  cnd <- expect_input_error(predict(imp, n.ahead = 3), "object")
  expect_match(conditionMessage(cnd), "method = \"dit\"", fixed = TRUE)
  expect_input_error(logLik(imp), "object")
  expect_input_error(AIC(imp), "object")
  expect_input_error(nobs(imp), "object")
  expect_input_error(logLik(imp$model), "object")
})

test_that("the model print never shows a positive variance share as 0.000", {
  expect_identical(ditimpute:::series_share_text(4.2e-6), "4.2e-06")
  expect_identical(ditimpute:::series_share_text(0.25), "0.250")
  expect_identical(ditimpute:::series_share_text(0), "0")
  # Seatbelts: a smooth term with a lengthscale of thousands of frames on 192
  # took all but 1e-5 of the stationary variance, and the print read
  # "season 0.000 ..., nugget 0.000" for a season BIC preferred by hundreds.
  y <- datasets::Seatbelts[, c("drivers", "front", "rear", "kms")]
  y[c(5, 186, 140, 36, 191), 1] <- NA
  y[c(107, 136, 20, 74, 183), 2] <- NA
  y[c(168, 48, 104, 136, 37), 3] <- NA
  y[c(157, 108, 5, 165, 137), 4] <- NA
  imp <- impute_series(y, n_samples = 20, seed = 1, threads = 1)
  m <- imp$model
  if (inherits(m, "ditimpute_series_model_set")) m <- m$parts[[length(m$parts)]]
  out <- printed(imp$model)
  expect_false(any(grepl("[a-z] 0\\.000", out)))
  if (m$spec$smooth_lengthscale > m$fit_frames) {
    expect_true(any(grepl("left out of the shares", out, fixed = TRUE)))
  }
  # The same, deterministic: a fitted seasonal model given such a smooth term.
  co <- window(datasets::co2, 1990)
  co[c(30:33, 70)] <- NA
  sm <- impute_series(co, kernel = "seasonal", n_samples = 20, seed = 1, threads = 1)$model
  sm$spec$smooth_var <- 1
  sm$spec$smooth_lengthscale <- 2.5e4
  sm$spec$season_var <- 5.7e-6
  sm$spec$nugget <- 1.12e-6
  out <- printed(sm)
  expect_true(any(grepl("less its smooth term: season 0.836 (", out, fixed = TRUE)))
  expect_true(any(grepl("nugget 0.164", out, fixed = TRUE)))
  expect_true(any(grepl("smooth term: lengthscale 2.5e+04 frames, longer than the 96 fitted", out, fixed = TRUE)))
  # a smooth term within the stretch stays in the shares
  sm$spec$smooth_lengthscale <- 20
  out <- printed(sm)
  expect_true(any(grepl("shares of the stationary part: smooth 1.000 (lengthscale 20), season 5.7e-06", out,
                        fixed = TRUE)))
})

test_that("predict() guards the horizon; a calibrated imputation's forecast is calibrated on forecasts, not its gaps", {
  y <- datasets::LakeHuron
  y[20:25] <- NA
  cal <- impute_series(y, n_samples = 50, seed = 1, calibrate = TRUE)
  raw <- impute_series(y, n_samples = 50, seed = 1)
  fc <- predict(cal, n.ahead = 3, seed = 1)
  expect_false(grepl("calibrated", attr(fc, "method"), fixed = TRUE))
  # calibrate = "auto" follows impute_series(calibrate = TRUE): the forecast's
  # own calibration (the gaps' factors do not apply beyond the end)
  expect_false(is.null(attr(fc, "calibration")))
  expect_equal(fc$lower, predict(raw, n.ahead = 3, seed = 1, calibrate = TRUE)$lower)
  expect_equal(predict(cal, n.ahead = 3, seed = 1, calibrate = FALSE)$lower, predict(raw, n.ahead = 3, seed = 1)$lower)
  expect_null(attr(predict(raw, n.ahead = 3, seed = 1), "calibration"))
  # 98 frames: at most 1,000 ahead (10 x 98 is less).
  expect_match(conditionMessage(expect_input_error(predict(raw, n.ahead = 1001), "n.ahead")), "at most 1,000")
})

test_that("plot() of a forecast draws the series' end and the forecast band", {
  y <- datasets::UKgas
  fc <- predict(impute_series(y, n_samples = 50, seed = 1), n.ahead = 8, seed = 1)
  p <- plot(fc)
  expect_s3_class(p, "ggplot")
  built <- ggplot2::ggplot_build(p)
  # history line (50 frames), band and forecast line (the last observed frame + 8)
  expect_equal(nrow(built$data[[1]]), 50)
  expect_equal(nrow(built$data[[2]]), 9)
  expect_equal(max(built$data[[3]]$x), max(fc$time))
  expect_input_error(plot(fc, colour = "red"), "colour")
})

test_that("plot() of a forecast cut to one variable draws that variable's panel only", {
  y <- cbind(male = datasets::mdeaths, female = datasets::fdeaths)
  fc <- predict(impute_series(y, n_samples = 30, seed = 1, threads = 1), n.ahead = 4, seed = 1)
  one <- fc[fc$variable == "female", ]
  built <- ggplot2::ggplot_build(plot(one))
  expect_equal(length(unique(built$data[[1]]$PANEL)), 1)
  expect_equal(nrow(built$data[[1]]), 50)
  expect_equal(nrow(built$data[[2]]), 5)
  expect_equal(length(unique(ggplot2::ggplot_build(plot(fc))$data[[1]]$PANEL)), 2)
})

test_that("rows of a forecast keep its draws in step; its columns alone are a plain data frame", {
  fc <- predict(impute_series(datasets::LakeHuron, n_samples = 50, seed = 1), n.ahead = 10, seed = 1)
  late <- fc[fc$horizon > 8, ]
  expect_s3_class(late, "ditimpute_series_forecast")
  expect_identical(dim(attr(late, "samples")), c(50L, 2L))
  expect_equal(attr(late, "samples"), attr(fc, "samples")[, 9:10])
  expect_equal(attr(head(fc, 3), "samples"), attr(fc, "samples")[, 1:3])
  expect_match(printed(tail(fc, 2)), "2 frames beyond")
  cols <- fc[, c("time", "estimate")]
  expect_identical(class(cols), "data.frame")
})

test_that("scoring a series imputation takes its masks and truths in the form of its x, and says when a region has no truth", {
  # A user review: `hidden = is.na(y)` (a ts, or is.na() of a data frame with
  # its time column) was an error; coverage() printed "NaN% over 0 sequences".
  y0 <- datasets::fdeaths
  y <- y0
  y[c(3:5, 40)] <- NA
  imp <- impute_series(y, n_samples = 30, seed = 1, threads = 1)
  h <- is.na(y)
  h[40] <- FALSE  # score the gap 3-5 only
  m <- imputation_metrics(imp, truth = y0, hidden = h, by = "all")
  expect_identical(m$entries, 3L)
  expect_equal(m$mae, mean(abs(imp$point[3:5, 1] - y0[3:5])))
  expect_identical(imputation_metrics(imp, truth = y0, hidden = matrix(h, ncol = 1), by = "all"), m)
  expect_input_error(imputation_metrics(imp, truth = y0, hidden = h[-1]), "hidden")
  # the truth as the hidden values alone, in the order of y[h] (hide_mcar()$truth),
  # as ?imputation_metrics says: it was an input error for a series (a review)
  expect_identical(imputation_metrics(imp, truth = as.numeric(y0[h]), hidden = h, by = "all"), m)
  expect_input_error(imputation_metrics(imp, truth = as.numeric(y0[h])[-1], hidden = h), "truth")
  d0 <- data.frame(date = seq(as.Date("2000-01-01"), by = "month", length.out = 72), a = c(y0),
                   b = c(datasets::mdeaths))
  d <- d0
  d$a[3:5] <- NA
  d$b[50:51] <- NA
  di <- impute_series(d, n_samples = 30, seed = 1, threads = 1)
  md <- imputation_metrics(di, truth = d0, hidden = is.na(d), by = "all")
  expect_identical(md$entries, 5L)
  expect_identical(imputation_metrics(di, truth = c(d0$a[is.na(d$a)], d0$b[is.na(d$b)]), hidden = is.na(d),
                                      by = "all"), md)
  mask <- data.frame(date = d$date, b = is.na(d$b), a = is.na(d$a))  # a data frame of logical columns, any order
  expect_identical(imputation_metrics(di, truth = d0, hidden = mask, by = "all"), md)
  bad <- cbind(a = is.na(d$a), zz = is.na(d$b))
  expect_match(conditionMessage(expect_input_error(imputation_metrics(di, truth = d0, hidden = bad), "hidden")),
               "no column \"b\"")
  # each draw's column names its entry
  expect_identical(colnames(di$samples[[1]]), c("a[3]", "a[4]", "a[5]", "b[50]", "b[51]"))
  # a truth unknown at a missing entry: that entry unscored, the joint region not covered or missed
  t2 <- y0
  t2[40] <- NA
  cv <- coverage(imp, truth = t2)
  expect_true(is.na(cv$coverage))
  out <- paste(capture.output(print(cv)), collapse = "\n")
  expect_match(out, "are not scored against the true values")
  expect_false(grepl("NaN", out))
  expect_match(out, "Per-entry 95% intervals contain")
})

test_that("coverage(levels = ) of a series imputation takes the truth that coverage() takes, and says its intervals come from the paths", {
  # it stopped with "`truth`: has 72 time points x 1 variables; the imputed
  # series has 1 x 72" for every series imputation (the truth was not reshaped
  # with the imputation)
  y0 <- datasets::mdeaths
  y <- y0
  y[c(10:13, 40:46)] <- NA
  imp <- impute_series(y, n_samples = 100, seed = 1, threads = 1)
  curve <- coverage(imp, truth = y0, levels = c(0.5, 0.8, 0.95))
  expect_s3_class(curve, "ditimpute_coverage_curve")
  expect_identical(curve$level, c(0.5, 0.8, 0.95))
  expect_true(all(curve$sequences == 1))
  # wider intervals at higher levels cover at least as much
  expect_true(all(diff(curve$interval_coverage) >= 0))
  expect_true(all(curve$interval_coverage >= 0 & curve$interval_coverage <= 1))
  out <- paste(capture.output(print(curve)), collapse = "\n")
  expect_match(out, "rebuilt from the imputation's 100 sample paths")
  expect_false(grepl("NA%", out, fixed = TRUE))
  # a truth unknown at some imputed entries: intervals scored, no region
  y1 <- y0
  y1[11] <- NA
  c1 <- coverage(imp, truth = y1, levels = c(0.5, 0.8))
  out <- paste(capture.output(print(c1)), collapse = "\n")
  expect_false(grepl("NA%", out, fixed = TRUE))
  expect_match(out, "Regions: none scored")
  # its plot draws the intervals only: no ggplot warning about removed rows (a review)
  pdf(NULL)
  expect_no_warning(print(plot(c1)))
  dev.off()
  # two variables, a ts truth
  x <- cbind(m = datasets::mdeaths, f = datasets::fdeaths)
  tx <- x
  x[20:25, "m"] <- NA
  imp2 <- impute_series(x, n_samples = 40, seed = 1, threads = 1)
  c2 <- coverage(imp2, truth = tx, levels = c(0.5, 0.9))
  expect_identical(nrow(c2), 2L)
  expect_true(c2$interval_coverage[2] >= c2$interval_coverage[1])
  # a level the paths cannot reach names `levels`, not the core's n_samples / region
  cnd <- expect_error(coverage(imp2, truth = tx, levels = c(0.5, 0.99)), class = "ditimpute_error_input")
  expect_match(conditionMessage(cnd), "`levels`: includes 0.99", fixed = TRUE)
  expect_match(conditionMessage(cnd), "imputation's 40 samples need at least", fixed = TRUE)
  expect_false(grepl("region =|n_samples`", conditionMessage(cnd)))
})

test_that("a level whose stationary part fitted to nothing is printed as a random walk, not as a ratio of 1e+10", {
  x <- EuStockMarkets[1:30, ]
  x[10:14, "DAX"] <- NA
  imp <- impute_series(x, n_samples = 30, seed = 1, threads = 1)
  out <- printed(imp$model)
  # its smooth term is slower than the 30 frames fitted, so left out of the
  # shares: the random-walk line says so too (it dropped "less the smooth term's")
  expect_match(out, paste("level noise per frame: nearly all of the variance (the stationary part, less its smooth term,",
                          "is under 1e-4 of it: a random walk)"), fixed = TRUE)
  expect_false(grepl("level noise per frame: [0-9.]+e\\+", out))
  # a smooth term within the stretch is counted: the line has no such clause
  m <- imp$model
  m$spec$smooth_lengthscale <- m$fit_frames / 10
  m$spec$smooth_var <- m$spec$nugget
  out <- printed(m)
  expect_match(out, "level noise per frame: nearly all of the variance (the stationary part is under 1e-4 of it: a random walk)",
               fixed = TRUE)
})

test_that("summary() and the calibration print of a one-variable series fit an 80-column console, without a repeated row", {
  x <- datasets::Nile
  x[30:40] <- NA
  x[c(5, 70)] <- NA
  imp <- impute_series(x, n_samples = 60, seed = 1, threads = 1, calibrate = TRUE)
  old <- options(width = 80)
  on.exit(options(old))
  out <- capture.output(summary(imp))
  expect_true(all(nchar(out) <= 80))
  expect_true(any(grepl("Candidate models", out)))
  expect_false(any(grepl("envelope|harmonics", out)))  # all NA for these forms
  # seasonal forms add their columns, still within 80
  y <- datasets::ldeaths
  y[20:25] <- NA
  out <- capture.output(summary(impute_series(y, n_samples = 40, seed = 1, threads = 1)))
  expect_true(all(nchar(out) <= 80))
  expect_true(any(grepl(" harm ", out, fixed = TRUE)))
  cal <- capture.output(print(imp$calibration))
  expect_true(all(nchar(cal) <= 80))
  # one gap group: its row, not a second identical "all" row
  expect_identical(sum(grepl("^ ?all", cal)), 1L)
  # group labels as gap lengths, short enough for the table to fit
  expect_identical(ditimpute:::series_gap_label(c("gap <= 2", "gap > 2, gap <= 13", "gap > 3, gap <= 4", "gap > 13",
                                                  "gap <= 1", "end gaps", "all", "all gap")),
                   c("1-2", "3-13", "4", "> 13", "1", "end gaps", "all", "all lengths"))
})

test_that("summary() of three variables in two groups: a candidates table per group, within 80 columns", {
  set.seed(1)
  n <- 300
  a <- cumsum(rnorm(n))
  x <- cbind(pm25 = a, temperature = a + rnorm(n, sd = 0.5), windspeed = sin(1:n / 5) + rnorm(n, sd = 0.3))
  x[sample(n, 30), 1] <- NA
  x[100:120, 2] <- NA
  x[sample(n, 20), 3] <- NA
  imp <- impute_series(x, n_samples = 20, seed = 1, threads = 1)
  old <- options(width = 80)
  on.exit(options(old))
  out <- capture.output(summary(imp))
  # one table of nine forms with a "variables" and a "conv" column was 86 columns wide and wrapped
  expect_true(all(nchar(out) <= 80))
  cand <- summary(imp)$candidates
  groups <- unique(cand$variables)
  expect_length(groups, 2L)
  heads <- match(paste0(groups, ":"), out)
  expect_false(anyNA(heads))
  # each group's rows under its own header: as many rows as it has candidates
  ends <- c(heads[-1] - 1, grep("^\\* chosen", out) - 1)
  expect_identical(as.integer(ends - heads - 1), as.integer(table(cand$variables)[groups]))
  # the converged column is left out only when every fit converged, and that is said
  expect_true(all(cand$converged))
  expect_false(any(grepl("\\bconv\\b", out)))
  expect_match(paste(out, collapse = " "), "every fit converged", fixed = TRUE)
})

test_that("summary() of a model per variable fits 80 columns, marks the chosen forms and rounds the widths", {
  x <- cbind(m = as.numeric(datasets::mdeaths), f = as.numeric(datasets::fdeaths))
  x[c(5:8, 30), "m"] <- NA
  imp <- impute_series(ts(x, frequency = 12), n_samples = 40, seed = 1, threads = 1, separate = "all")
  old <- options(width = 80)
  on.exit(options(old))
  out <- capture.output(summary(imp))
  # the table of 12 forms was 85 columns wide: its TRUE/FALSE column printed on its own, below the table
  expect_true(all(nchar(out) <= 80))
  expect_false(any(grepl("^ *(TRUE|FALSE) *$", out)))
  s <- summary(imp)
  chosen <- s$candidates$chosen
  expect_identical(sum(chosen), 2L)  # one form per variable
  starred <- grep("^ \\* ", out, value = TRUE)
  expect_length(starred, 2L)
  # the starred rows are the chosen forms' (their BICs printed to one decimal)
  expect_setequal(as.numeric(sub(".* (-?[0-9.]+) +[0-9]+( +(TRUE|FALSE))?$", "\\1", starred)),
                  round(s$candidates$BIC[chosen], 1))
  expect_match(paste(out, collapse = " "), "* chosen; ", fixed = TRUE)
  expect_match(paste(out, collapse = " "), "every column, AIC among them", fixed = TRUE)
  # shortened column names said below the table (a report writer's review)
  short <- c(env = "envelope", harm = "harmonics", evals = "evaluations", conv = "converged")
  shown <- intersect(names(short), strsplit(trimws(out[grep("^ +form", out)[1]]), " +")[[1]])
  for (k in shown) expect_true(any(grepl(sprintf("%s: %s", k, short[[k]]), out, fixed = TRUE)))
  # mean widths to 4 significant digits; "-" where nothing is missing
  w <- s$variables$mean_width
  head <- grep("^ variable missing gaps longest_gap mean_width$", out)
  expect_length(head, 1L)
  expect_match(out[head + 1], paste0("^ +m +5 +2 +4 +", formatC(w[1], digits = 4, format = "fg"), "$"))
  expect_match(out[head + 2], "^ +f +0 +0 +0 +-$")
})

test_that("progress = TRUE reports each stage with its time; FALSE says nothing; it must be TRUE or FALSE", {
  y <- datasets::ldeaths
  y[20:25] <- NA
  said <- character()
  imp <- withCallingHandlers(impute_series(y, n_samples = 20, seed = 1, threads = 1, calibrate = TRUE, progress = TRUE),
                             message = function(m) {
                               said <<- c(said, conditionMessage(m))
                               invokeRestart("muffleMessage")
                             })
  said <- trimws(said[nzchar(trimws(said))])
  # each stage opened, then closed with its time, in order
  stages <- c("Fitting and choosing the model: 1 variable x 72 frames", "Drawing 20 sample paths of 6 missing values",
              "Calibrating the intervals on hidden observed values")
  opened <- vapply(stages, function(s) which(grepl(s, said, fixed = TRUE))[1], 0L)
  expect_false(anyNA(opened))
  expect_true(all(diff(opened) > 0))
  expect_identical(sum(grepl("\\[[0-9.]+m?s\\]$", said)), 3L)
  # the same imputation as without the messages
  quiet <- impute_series(y, n_samples = 20, seed = 1, threads = 1, calibrate = TRUE, progress = FALSE)
  expect_identical(quiet$point, imp$point)
  expect_silent(impute_series(y, n_samples = 20, seed = 1, threads = 1, progress = FALSE))
  expect_error(impute_series(y, progress = NA), "`progress`: must be TRUE or FALSE", class = "ditimpute_error_input")
  expect_error(impute_series(y, progress = "yes"), "`progress`", class = "ditimpute_error_input")
})

test_that("progress = TRUE with method = \"dit\" reports the training and drawing stages too", {
  # a review: only dit_fit()'s bar showed, and the sampling ran without a word
  skip_if_no_torch()
  y <- datasets::ldeaths
  y[c(10:14, 40, 55:60)] <- NA
  said <- character()
  withCallingHandlers(impute_series(y, method = "dit", n_samples = 20, level = 0.9, dit = list(steps = 4, sample_steps = 3, batch_size = 8),
                                    seed = 1, threads = 1, progress = TRUE),
                      message = function(m) {
                        said <<- c(said, conditionMessage(m))
                        invokeRestart("muffleMessage")
                      })
  stages <- c("Training the DiT on", "Drawing 20 sample paths of 12 missing values")
  opened <- vapply(stages, function(s) which(grepl(s, said, fixed = TRUE))[1], 0L)
  expect_false(anyNA(opened))
  expect_true(all(diff(opened) > 0))
})

test_that("print() says how the intervals were made, and a mean width only in one variable's units", {
  y <- datasets::Nile
  y[30:40] <- NA
  out <- printed(impute_series(y, n_samples = 40, seed = 1, threads = 1, proper = FALSE))
  expect_true(any(grepl("95% per-entry intervals exact (the fitted model's conditional law; 40 sample paths drawn), mean width",
                        out, fixed = TRUE)))
  out <- printed(impute_series(y, n_samples = 40, seed = 1, threads = 1, proper = TRUE))
  expect_true(any(grepl("from the mixture of 40 proper draws", out, fixed = TRUE)))
  x <- cbind(m = datasets::mdeaths, f = datasets::fdeaths)
  x[20:25, "m"] <- NA
  out <- printed(impute_series(x, n_samples = 40, seed = 1, threads = 1))
  expect_true(any(grepl("(mean widths per variable: summary())", out, fixed = TRUE)))
  expect_false(any(grepl("mean width [0-9]", out)))
})

test_that("separate = \"auto\" keeps and prints the shares that split variables off after the first fit", {
  # a fake fit: a, b, c together leave c under 5% beyond chance; a and b
  # refitted together fall under it too (the print showed only the first
  # fit's shares, above 5% for a and b: a user review)
  shares <- c(a = 0.20, b = 0.10, c = 0.01)
  round2 <- c(a = 0.03, b = -0.02)
  fake_fit <- function(cols) {
    list(cols = cols, innovation_r2_adjusted = if (length(cols) == 3) shares else if (length(cols) == 2) round2[cols] else NA)
  }
  set_fun <- ditimpute:::series_model_set
  utils::assignInNamespace("series_model_set", function(parts, groups, vars, shares) list(groups = groups), "ditimpute")
  withr::defer(utils::assignInNamespace("series_model_set", set_fun, "ditimpute"))
  set <- ditimpute:::fit_series_groups(c("a", "b", "c"), "auto", fake_fit)
  expect_identical(set$groups, list(1L, 2L, 3L))
  expect_identical(set$separate_rounds, list(round2))
  # the print of a set with such a round
  x <- cbind(m = datasets::mdeaths, f = datasets::fdeaths)
  x[20:25, "m"] <- NA
  utils::assignInNamespace("series_model_set", set_fun, "ditimpute")  # the real one again (the defer is a safety)
  m <- impute_series(x, n_samples = 20, seed = 1, threads = 1, separate = "all")$model
  m$separate_rounds <- list(c(m = 0.031, f = -0.01))
  expect_match(printed(m), "refitted together, beyond chance (what split more off): m 3.1%, f none", fixed = TRUE)
  # the first fit's shares beyond chance are shown when they fall on the other
  # side of 5%, however close to the raw ones (5.2% raw, 4.7% beyond chance)
  m$innovation_r2 <- c(m = 0.052, f = 0.30)
  m$innovation_r2_adjusted <- c(m = 0.047, f = 0.297)
  expect_match(printed(m), "the same beyond chance over [0-9]+ frames .*: m 4.7%, f 29.7%")
})

test_that("residuals() are the model's standardised one-step errors, in the series' form", {
  # A simulated local level (rate 0.5, noise 0.1, 1,500 frames) with gaps:
  # under the fitted level the errors have mean 0, sd 1 and no lag-1
  # correlation (SEs about 0.027; bounds of 4 SEs, the parameters fitted).
  set.seed(3)
  n <- 1500
  y <- 50 + cumsum(rnorm(n, sd = sqrt(0.5))) + rnorm(n, sd = sqrt(0.1))
  y[c(200:230, 700, 900:905)] <- NA
  imp <- impute_series(ts(y, start = 2000), model = "level", kernel = "smooth", transform = "none", n_samples = 20,
                       proper = FALSE, seed = 1, threads = 1)
  r <- residuals(imp)
  expect_s3_class(r, "ts")
  expect_equal(tsp(r), tsp(ts(y, start = 2000)))
  expect_true(all(is.na(r[is.na(y)])))
  expect_true(is.na(r[1]))  # the level's diffuse start conditions on the first value
  expect_equal(sum(!is.na(r)), sum(!is.na(y)) - 1)
  e <- as.numeric(r)
  expect_lt(abs(mean(e, na.rm = TRUE)), 4 * 0.027)
  expect_lt(abs(sd(e, na.rm = TRUE) - 1), 4 * 0.02)
  expect_lt(abs(acf(e, lag.max = 1, plot = FALSE, na.action = na.pass)$acf[2]), 4 * 0.027)
  # a spike stands out as the largest error
  z <- y
  z[1000] <- z[1000] + 15
  rz <- residuals(impute_series(z, model = "level", kernel = "smooth", transform = "none", n_samples = 20,
                                proper = FALSE, seed = 1, threads = 1))
  expect_identical(which.max(abs(rz)), 1000L)
  # a form that misses the season leaves it in the errors (Ljung-Box at two
  # years: 276 on 24 df without the season, 14.4 with it)
  co <- window(datasets::co2, 1980)
  co[c(30:35, 100)] <- NA
  box <- function(k) {
    imp <- impute_series(co, kernel = k, n_samples = 20, proper = FALSE, seed = 1, threads = 1)
    Box.test(residuals(imp), lag = 24, type = "Ljung-Box")$p.value
  }
  expect_lt(box("smooth"), 1e-6)
  expect_gt(box("seasonal"), 0.05)
  ar <- as.numeric(arima.sim(list(ar = 0.95), 600)) + 10
  # a data frame with a time column keeps it; a model set gives each
  # variable its own group's errors
  df <- data.frame(when = as.Date("2020-01-01") + 0:199, a = y[1:200], b = ar[1:200])
  di <- impute_series(df, separate = "all", transform = "none", n_samples = 20, proper = FALSE, seed = 1, threads = 1)
  rd <- residuals(di)
  expect_identical(names(rd), c("when", "a", "b"))
  expect_identical(rd$when, df$when)
  ib <- impute_series(df[, c("when", "b")], model = di$model$parts[[2]]$model_name, kernel = di$model$parts[[2]]$kernel_name,
                      transform = "none", n_samples = 20, proper = FALSE, seed = 1, threads = 1)
  expect_s3_class(di$model, "ditimpute_series_model_set")
  expect_equal(rd$b, residuals(ib)$b, tolerance = 1e-6)
  expect_input_error(residuals(imp, type = "pearson"), "type")
})

test_that("summary() checks the residuals: Ljung-Box, errors beyond 3 sds, a level moved inside a gap", {
  set.seed(2)
  n <- 400
  y <- 20 + cumsum(rnorm(n, sd = 0.3)) + rnorm(n, sd = 0.5)
  y[231:n] <- y[231:n] + 15  # a shift of 50 step sds inside the gap below
  y[c(221:240, 100)] <- NA
  imp <- impute_series(y, model = "level", n_samples = 20, proper = FALSE, seed = 1, threads = 1)
  s <- summary(imp)
  r <- s$residuals
  expect_identical(names(r), c("variable", "errors", "lag", "ljung_box_p", "over_3sd", "expected", "gaps_inside",
                               "after_gap_over_3sd", "largest_after_gap"))
  e <- residuals(imp)
  expect_identical(r$errors, sum(!is.na(e)))
  expect_identical(r$over_3sd, sum(abs(e) > 3, na.rm = TRUE))
  expect_identical(r$gaps_inside, 2L)
  expect_identical(r$after_gap_over_3sd, 1L)
  expect_equal(r$largest_after_gap, round(abs(e[241]), 2))
  expect_match(printed(s), "After 1 of 2 gaps \\(x\\), about 0.0054 by chance")
  # without the shift nothing is flagged
  z <- y
  z[231:n] <- z[231:n] - 15
  quiet <- summary(impute_series(z, model = "level", n_samples = 20, proper = FALSE, seed = 1, threads = 1))
  expect_identical(quiet$residuals$after_gap_over_3sd, 0L)
  expect_false(any(grepl("After", printed(quiet))))
  # a season the form leaves out: Ljung-Box at two periods rejects
  co <- window(datasets::co2, 1980)
  co[c(30:35, 100)] <- NA
  sm <- summary(impute_series(co, kernel = "smooth", n_samples = 20, proper = FALSE, seed = 1, threads = 1))$residuals
  expect_identical(sm$lag, 10L)  # no season in the form: lag 10
  expect_lt(sm$ljung_box_p, 1e-6)
  se <- summary(impute_series(co, kernel = "seasonal", n_samples = 20, proper = FALSE, seed = 1, threads = 1))$residuals
  expect_identical(se$lag, 24L)
  expect_gt(se$ljung_box_p, 0.05)
})

test_that("the model's print tells close CRPS apart and says when the chosen form's search did not converge", {
  expect_identical(distinct_digits(c(0.01281, 0.01283)), c("0.01281", "0.01283"))
  expect_identical(distinct_digits(c(0.182, 0.22)), c("0.182", "0.220"))
  expect_identical(distinct_digits(c(0.3, 0.3)), c("0.3", "0.3"))
  y <- datasets::Nile
  y[40:55] <- NA
  imp <- impute_series(y, n_samples = 20, seed = 1, threads = 1)
  expect_false(any(grepl("stopped at its limit", printed(imp$model))))
  m <- imp$model
  m$candidates$converged[m$candidates$chosen] <- FALSE
  expect_match(printed(m), "the chosen form's likelihood search stopped at its limit of [0-9]+ evaluations")
  cnd <- expect_input_error(gp_fit(as.matrix(datasets::airquality[, 1:4])), "x")
  expect_match(conditionMessage(cnd), "make_windows()", fixed = TRUE)
})

test_that("a model set's label stays short when many variables are apart", {
  set.seed(1)
  x <- sapply(1:12, function(i) cumsum(rnorm(60)))
  colnames(x) <- sprintf("chick%02d", 1:12)
  x[20:23, ] <- NA
  imp <- impute_series(x, separate = "all", n_samples = 20, proper = FALSE, seed = 1, threads = 1)
  expect_lt(nchar(imp$method), 200)
  expect_match(imp$method, "^GP series \\(chick01, chick02, chick[0-9]+ and [0-9]+ more: ")
  parts <- imp$model$parts
  expect_length(parts, 12)
})

test_that("progress is off by default while knitr renders a document", {
  # rmarkdown::render() from a console is interactive(), and the stage
  # messages filled the report's HTML (a review)
  # the default evaluated as in an interactive session (under Rscript and R
  # CMD check interactive() is FALSE, which alone would make this pass)
  as_if_interactive <- function(f) eval(formals(f)$progress, list(interactive = function() TRUE))
  for (f in list(impute_series, dit_fit, run_experiments)) {
    withr::with_options(list(knitr.in.progress = NULL), expect_true(as_if_interactive(f)))
    withr::with_options(list(knitr.in.progress = TRUE), expect_false(as_if_interactive(f)))
  }
})

test_that("print() of a series imputation and its model keep to the console's width; summary() tables for kable()", {
  # a review: lines of up to 205 characters scrolled sideways in a knitted
  # report, and knitr::kable(summary(imp)) failed ("cannot coerce")
  aq <- airquality[, c("Ozone", "Temp")]
  aq$date <- as.Date(sprintf("1973-%02d-%02d", airquality$Month, airquality$Day))
  imp <- suppressMessages(impute_series(aq, n_samples = 20, seed = 1, threads = 1))
  for (w in c(60, 100)) {
    withr::local_options(width = w)
    out <- capture.output(print(imp))
    expect_true(all(nchar(out) <= w), label = paste("print() lines within", w))
    expect_match(paste(out, collapse = " "), "local level|linear trend|stationary")
  }
  # a complete column comes back as it was (integer), an imputed one double
  cs <- completed_series(imp)
  expect_identical(cs$Temp, airquality$Temp)
  expect_type(cs$Ozone, "double")
  expect_identical(cs$Ozone[!is.na(aq$Ozone)], as.numeric(aq$Ozone[!is.na(aq$Ozone)]))
  expect_false(anyNA(cs$Ozone))
  expect_identical(completions(imp, m = 1)[[1]]$Temp, airquality$Temp)
  tab <- as.data.frame(summary(imp))
  expect_identical(tab$variable, c("Ozone", "Temp"))
  expect_identical(as.integer(tab$missing), c(37L, 0L))
  expect_match(paste(knitr::kable(summary(imp)), collapse = "\n"), "Ozone")
  spec <- gp_spec(12, d = 2)
  x <- gp_simulate(spec, 3, seed = 1)
  x[, 4:6, ] <- NA
  s <- as.data.frame(summary(impute(spec, x, n_samples = 40, seed = 1, threads = 1)))
  expect_identical(names(s), c("sequence", "missing", "radius", "interval_width"))
  expect_identical(as.integer(s$missing), rep(6L, 3))
})

test_that("confint() at another level: exact intervals for an exact series imputation, an error when calibrated", {
  # a review: confint(imp, level = 0.5) took the 100 paths' order statistics
  # (widths 0.83-1.23x the exact ones) for intervals printed as exact, and on
  # a calibrated imputation silently dropped the calibration
  x <- as.numeric(Nile)
  x[c(20:29, 60, 61, 80)] <- NA
  imp <- impute_series(x, level = 0.9, n_samples = 30, seed = 1, threads = 1, proper = FALSE)
  expect_false(is.null(imp$exact))
  at50 <- impute_series(x, level = 0.5, n_samples = 30, seed = 1, threads = 1, proper = FALSE)
  expect_equal(confint(imp, level = 0.5), confint(at50), tolerance = 1e-10)
  expect_equal(confint(at50, level = 0.9), confint(imp), tolerance = 1e-10)
  # 0.99 needs no paths for exact intervals
  ci99 <- confint(imp, level = 0.99)
  expect_true(all(ci99$lower < confint(imp)$lower & confint(imp)$upper < ci99$upper))
  # on a log scale too (mapped back, as printed)
  y <- as.numeric(AirPassengers)
  y[c(30:35, 100)] <- NA
  lg <- impute_series(y, level = 0.9, n_samples = 30, seed = 1, threads = 1, transform = "log", proper = FALSE)
  lg80 <- impute_series(y, level = 0.8, n_samples = 30, seed = 1, threads = 1, transform = "log", proper = FALSE)
  expect_equal(confint(lg, level = 0.8), confint(lg80), tolerance = 1e-10)
  cal <- impute_series(x, level = 0.9, n_samples = 30, seed = 1, threads = 1, proper = FALSE, calibrate = TRUE)
  cnd <- expect_input_error(confint(cal, level = 0.5), "level")
  expect_match(conditionMessage(cnd), "calibrated at level 0.9 only", fixed = TRUE)
  expect_equal(confint(cal, level = 0.9), confint(cal))
})

test_that("predict() says when never-negative data are forecast below 0, as impute_series() does", {
  # a review: sunspot.year's 95% lower bounds went below 0 at 151 of 240
  # rolling origins, and predict() said nothing
  s <- window(sunspot.year, end = 1950)
  s[240:245] <- NA
  imp <- suppressWarnings(impute_series(s, n_samples = 30, seed = 1, threads = 1))
  w <- expect_warning(fc <- predict(imp, 10, seed = 1, threads = 1), class = "ditimpute_warning_negative")
  expect_true(min(fc$lower) < 0)
  expect_match(conditionMessage(w), "forecast values have a lower interval end below 0", fixed = TRUE)
  expect_match(conditionMessage(w), "bounds = c(0, Inf)", fixed = TRUE)
  # a series on a log scale is never forecast below 0: no warning
  ap <- impute_series(AirPassengers, n_samples = 30, seed = 1, threads = 1, transform = "log")
  expect_no_warning(predict(ap, 12, seed = 1, threads = 1), class = "ditimpute_warning_negative")
})

test_that("print() says when a self-calibration left the intervals unchanged", {
  # a review: "then self-calibrated" on UKgas, whose intervals were identical
  # to the uncalibrated ones (too few hidden gaps to narrow them)
  x <- replace(UKgas, c(20:24, 60:63), NA)
  cal <- suppressWarnings(impute_series(x, n_samples = 50, seed = 1, calibrate = TRUE, threads = 1))
  raw <- suppressWarnings(impute_series(x, n_samples = 50, seed = 1, threads = 1))
  expect_true(all(cal$calibration$factors$interval == 0))
  expect_equal(cal$lower, raw$lower)
  out <- paste(capture.output(print(cal)), collapse = " ")
  expect_match(out, "left them unchanged", fixed = TRUE)
  expect_no_match(out, "then self-calibrated", fixed = TRUE)
})

test_that("a forecast prints its times whatever `digits`, and its header within the console's width", {
  # a review: print(fc, digits = 3) showed UKgas's quarters as 1987 1987 1988 1988,
  # and the header lines ran to 120-190 characters in a knitted document
  imp <- suppressWarnings(impute_series(replace(UKgas, c(20:22), NA), n_samples = 40, seed = 1, threads = 1))
  fc <- predict(imp, n.ahead = 4)
  old <- options(width = 60)
  on.exit(options(old))
  out <- capture.output(print(fc, digits = 3))
  expect_true(all(nchar(out[1:2]) <= 60))
  expect_true(any(grepl("1987.25", out, fixed = TRUE)))
  expect_true(any(grepl("1987.75", out, fixed = TRUE)))
})

test_that("progress reports each further fit of a group of variables", {
  # a review: on 11 variables one line stood for 2-3 minutes of fits
  m <- ts(cbind(a = as.numeric(mdeaths), b = as.numeric(fdeaths)), start = 1974, frequency = 12)
  m[10:14, 1] <- NA; m[40:45, 2] <- NA
  said <- character()
  withCallingHandlers(suppressWarnings(impute_series(m, n_samples = 20, seed = 1, threads = 1, separate = "all",
                                                     proper = FALSE, progress = TRUE)),
                      message = function(mm) {
                        said <<- c(said, conditionMessage(mm))
                        invokeRestart("muffleMessage")
                      })
  expect_true(any(grepl("Fitting a variable on its own: a (72 frames)", said, fixed = TRUE)))
  expect_true(any(grepl("Fitting a variable on its own: b (72 frames)", said, fixed = TRUE)))
  expect_identical(ditimpute:::fitting_step_text(c("x{1}", "b", "c", "d", "e"), 1200),
                   "Fitting a group on its own: x{{1}}, b, c and 2 more (1,200 frames)")
})

test_that("predict(calibrate = TRUE) widens each lead group by the conformal quantile of the model's forecasts of the series' past", {
  # By hand, through another path: the same model forecasting from each
  # origin is predict() of the object cut there (plug-in); its 80% intervals'
  # scores (how far out, in half-widths) per lead group (1, 2-3, 4-6, 7-12,
  # 13-24, 25-48, 49: every lead the origins reach) give the groups'
  # conformal quantiles, made non-decreasing in the lead (least squares
  # weighted by the groups' sizes: isoreg() of each value repeated that
  # often), and the calibrated interval is the raw one moved out by that
  # many half-widths (never in).
  y <- datasets::LakeHuron  # 98 frames, no season
  # the fitted model throughout (model_choice = "fit"): predict()'s choice of
  # class for the horizon would take the level for some of the cut series
  imp <- impute_series(y, n_samples = 50, seed = 1, threads = 1)
  h <- 5
  raw <- predict(imp, n.ahead = h, level = 0.8, proper = FALSE, seed = 1, threads = 1, model_choice = "fit")
  cal <- predict(imp, n.ahead = h, level = 0.8, proper = FALSE, seed = 1, threads = 1, calibrate = TRUE, model_choice = "fit")
  expect_equal(cal$estimate, raw$estimate)
  expect_equal(cal$se, raw$se)
  # origins: 20 spread evenly from frame 49 (the middle of frames 1-98) to 97
  cand <- 49:97
  origins <- unique(cand[round(seq(1, length(cand), length.out = 20))])
  expect_identical(attr(attr(cal, "calibration"), "origins"), length(origins))
  s <- c(); k <- c()
  for (o in origins) {
    m <- 98 - o  # every lead to the series' end (at most 49)
    f <- predict(truncate_series_imputation(imp, 98 - o), n.ahead = m, level = 0.8, proper = FALSE, seed = 1, threads = 1,
                 model_choice = "fit")
    truth <- as.numeric(y)[o + seq_len(m)]
    s <- c(s, pmax(f$lower - truth, truth - f$upper) / ((f$upper - f$lower) / 2))
    k <- c(k, seq_len(m))
  }
  breaks <- c(1, 2, 4, 7, 13, 25, 49)
  g <- findInterval(k, breaks)
  n_g <- tabulate(g, length(breaks))
  quantile80 <- function(x) sort(x)[ceiling((length(x) + 1) * 0.8)]
  # a group of fewer than 4 values (lead 49: one) takes all leads' quantile
  own <- vapply(seq_along(breaks), function(b) if (n_g[b] >= 4) quantile80(s[g == b]) else quantile80(s), 0)
  expect_identical(n_g[length(breaks)], 1L)
  fit <- stats::isoreg(rep(own, n_g))$yf
  q <- pmax(fit[cumsum(n_g)], 0)
  tab <- attr(cal, "calibration")
  expect_identical(tab$leads, c("1", "2-3", "4-6"))  # the groups the forecast uses
  expect_identical(tab$backtest_values, as.integer(n_g[1:3]))
  expect_identical(tab$from_80, rep("own", 3))
  expect_equal(tab$widen_80, q[1:3], tolerance = 1e-6)
  expect_equal(tab$covered_80, vapply(1:3, function(b) mean(s[g == b] <= 0), 0), tolerance = 1e-9)
  half <- (raw$upper - raw$lower) / 2
  qh <- q[findInterval(1:h, breaks)]
  expect_equal(cal$upper, raw$upper + qh * half, tolerance = 1e-6)
  expect_equal(cal$lower, raw$lower - qh * half, tolerance = 1e-6)
  expect_true(any(qh > 0))  # on LakeHuron the model's own past forecasts miss more than 20% somewhere
  # a horizon's intervals do not depend on how far the forecast goes
  for (n_ahead in c(1, 12, 200)) {
    longer <- suppressWarnings(predict(imp, n.ahead = n_ahead, level = 0.8, proper = FALSE, seed = 1, threads = 1, calibrate = TRUE, model_choice = "fit"))
    expect_equal(longer$upper[seq_len(min(h, n_ahead))], cal$upper[seq_len(min(h, n_ahead))], tolerance = 1e-9)
  }
  # beyond the origins' reach (49 leads) the farthest group's factor
  far <- predict(imp, n.ahead = 200, level = 0.8, proper = FALSE, seed = 1, threads = 1, calibrate = TRUE, model_choice = "fit")
  # (the groups end at the reach: 49, then 50-96, ... carried; a review)
  expect_identical(tail(attr(far, "calibration")$leads, 4), c("49", "50-96", "97-192", "193-200"))
  expect_identical(tail(attr(far, "calibration")$from_80, 3), rep("carried", 3))
  expect_equal(tail(attr(far, "calibration")$widen_80, 1), q[length(q)], tolerance = 1e-6)
  # printed, and kept by rows taken from the forecast
  expect_output(print(cal), "widened where its forecasts of the series' own past from 20 origins fell outside them",
                width = 250)  # the header on one line
  expect_identical(attr(cal[cal$horizon > 2, ], "calibration"), tab)
})

test_that("a calibrated forecast counts leads from the last observed frame, per variable, with nested levels", {
  # The last 15 frames missing: the forecast's horizons 1-3 are 16-18 frames
  # past the last observation and take that lead group's factor (13-24).
  y <- as.numeric(datasets::LakeHuron)
  y[84:98] <- NA
  imp <- suppressWarnings(impute_series(y, n_samples = 50, seed = 1, threads = 1))
  fc <- predict(imp, n.ahead = 3, level = 0.8, proper = FALSE, seed = 1, threads = 1, calibrate = TRUE)
  tab <- attr(fc, "calibration")
  expect_identical(attr(tab, "trailing"), c(x = 15L))
  expect_identical(tab$leads, "13-24")
  raw <- predict(imp, n.ahead = 3, level = 0.8, proper = FALSE, seed = 1, threads = 1)
  expect_equal(fc$upper, raw$upper + tail(tab$widen_80, 1) * (raw$upper - raw$lower) / 2, tolerance = 1e-6)
  # staggered ends: a variable whose last 4 values are missing (the other
  # observed) is calibrated at leads 5-7 for horizons 1-3
  st <- datasets::Seatbelts[, c("front", "rear")]
  st[189:192, "rear"] <- NA
  stimp <- suppressWarnings(impute_series(st, separate = "all", n_samples = 50, seed = 1, threads = 1))
  sf <- predict(stimp, n.ahead = 3, level = 0.8, proper = FALSE, seed = 1, threads = 1, calibrate = TRUE)
  stab <- attr(sf, "calibration")
  expect_identical(attr(stab, "trailing"), c(front = 0L, rear = 4L))
  expect_identical(stab$leads[stab$variable == "front"], c("1", "2-3"))
  expect_identical(stab$leads[stab$variable == "rear"], c("4-6", "7-12"))
  # variables modelled apart are calibrated apart: a variable's intervals as
  # when it is forecast alone
  sb <- datasets::Seatbelts[, c("front", "rear")]
  both <- suppressWarnings(impute_series(sb, separate = "all", n_samples = 50, seed = 1, threads = 1))
  alone <- suppressWarnings(impute_series(sb[, "front"], n_samples = 50, seed = 1, threads = 1))
  a <- predict(both, n.ahead = 6, level = 0.8, proper = FALSE, seed = 1, threads = 1, calibrate = TRUE)
  b <- predict(alone, n.ahead = 6, level = 0.8, proper = FALSE, seed = 1, threads = 1, calibrate = TRUE)
  expect_equal(a$upper[a$variable == "front"], b$upper, tolerance = 1e-9)
  expect_identical(unique(attr(a, "calibration")$variable), c("front", "rear"))
  # a level's interval holds every lower level's, even where the 95% factor
  # comes from fewer errors than the 80% one (a review's random walk: the
  # 80% interval had come out wider than the 95%)
  set.seed(18)
  w <- cumsum(rnorm(60)) + 3 * sin(seq_len(60) / 3)
  rw <- suppressWarnings(impute_series(w, model = "stationary", n_samples = 50, seed = 18, threads = 1))
  f <- suppressWarnings(predict(rw, n.ahead = 30, level = c(0.5, 0.8, 0.95), proper = FALSE, seed = 1, threads = 1,
                                calibrate = TRUE))
  expect_true(all(f$lower_95 <= f$lower_80 & f$lower_80 <= f$lower_50 & f$upper_50 <= f$upper_80 & f$upper_80 <= f$upper_95))
})

test_that("calibrated forecasts cover what a wrong model's forecasts miss, and add little to a right one's; bad calibrate values and too high levels are said", {
  # Random walks forced into a stationary model: its forecast intervals stop
  # widening and cover 66.8% of the next 20 values at 80% (30 walks of 150
  # frames); calibrated on the series' own past, 74.7% (measured with these
  # seeds). Widening only, each path's coverage can only rise; asked here:
  # at least 6 points in all.
  coverage_of <- function(simulate, model) {
    cover <- t(vapply(1:30, function(r) {
      set.seed(100 + r)
      y <- simulate()
      imp <- suppressWarnings(impute_series(y[1:150], model = model, n_samples = 50, seed = r, threads = 1))
      te <- y[151:170]
      a <- predict(imp, n.ahead = 20, level = 0.8, proper = FALSE, seed = 1, threads = 1)
      b <- suppressWarnings(predict(imp, n.ahead = 20, level = 0.8, proper = FALSE, seed = 1, threads = 1, calibrate = TRUE))
      expect_true(all(b$lower <= a$lower + 1e-9 & b$upper >= a$upper - 1e-9))
      c(mean(te >= a$lower & te <= a$upper), mean(te >= b$lower & te <= b$upper))
    }, c(0, 0)))
    colMeans(cover)
  }
  walk <- coverage_of(function() cumsum(rnorm(170)), "stationary")
  expect_lt(walk[1], 0.72)
  expect_gt(walk[2] - walk[1], 0.06)
  # AR(1) series with the default model (right up to its form): 79.3% raw,
  # 82.8% calibrated; the widening that a right model does not need is
  # asked to stay under 8 points
  ar <- coverage_of(function() as.numeric(stats::arima.sim(list(ar = 0.7), 170)), "auto")
  expect_lt(ar[2] - ar[1], 0.08)
  imp <- impute_series(datasets::LakeHuron, n_samples = 50, seed = 1, threads = 1)
  expect_input_error(predict(imp, n.ahead = 2, calibrate = "yes"), "calibrate")
  expect_input_error(predict(imp, n.ahead = 2, calibrate = NA), "calibrate")
  # 99% on 20 frames: 10 origins (frames 10-19) forecast 55 values of the
  # series' past, too few for its quantile (99 needed), so those intervals
  # stay the model's, and it is said
  short <- impute_series(as.numeric(datasets::LakeHuron)[1:20], n_samples = 50, seed = 1, threads = 1)
  expect_warning(fc <- predict(short, n.ahead = 1, level = c(0.8, 0.99), seed = 1, threads = 1, calibrate = TRUE),
                 "left as the model gives them everywhere.*at most 55 a variable; needed: 99 at 99%",
                 class = "ditimpute_warning_calibration")
  expect_identical(attr(attr(fc, "calibration"), "origins"), 10L)
  # said in the header too, and a forecast with nothing calibrated says so
  expect_output(print(fc), "some left as the model's \\(too few backtests\\)", width = 250)
  tiny <- impute_series(as.numeric(datasets::LakeHuron)[1:8], n_samples = 50, seed = 1, threads = 1)
  expect_warning(ft <- predict(tiny, n.ahead = 2, level = 0.95, seed = 1, threads = 1, calibrate = TRUE),
                 class = "ditimpute_warning_calibration")
  expect_output(print(ft), "not calibrated: too few forecasts of the series' own past", width = 250)
  expect_identical(unique(attr(ft, "calibration")$from_95), "none")
  plain <- predict(short, n.ahead = 1, level = c(0.8, 0.99), seed = 1, threads = 1)
  expect_equal(fc$upper_99, pmax(plain$upper_99, fc$upper_80))
  expect_true(is.na(attr(fc, "calibration")$widen_99))
})

test_that("imputation_metrics(by = \"variable\") scores each variable in its own units", {
  # A report writer's review: by = "all" pooled PM2.5 with temperature and wind
  # speed, and there was no per-variable breakdown.
  y0 <- cbind(a = as.numeric(datasets::mdeaths), b = as.numeric(datasets::fdeaths) / 100)
  y <- y0
  y[c(3:5, 40), 1] <- NA
  y[50:51, 2] <- NA
  f <- impute_series(y, n_samples = 30, seed = 1, threads = 1, progress = FALSE)
  m <- imputation_metrics(f, truth = y0, by = "variable")
  expect_identical(m$variable, c("a", "b"))
  expect_identical(m$entries, c(4L, 2L))
  expect_equal(m$mae[1], mean(abs(f$point[c(3:5, 40), 1] - y0[c(3:5, 40), 1])))
  expect_equal(m$mae[2], mean(abs(f$point[50:51, 2] - y0[50:51, 2])))
  all <- imputation_metrics(f, truth = y0, by = "all")
  expect_equal(sum(m$mae * m$entries) / sum(m$entries), all$mae)
  expect_equal(sum(m$interval_coverage * m$entries) / sum(m$entries), all$interval_coverage)
  # windows: a variable with nothing scored has NA metrics
  spec <- gp_spec(12, d = 2, kernel = gp_kernel("laplace", lengthscale = 4))
  x <- gp_simulate(spec, 3, seed = 1)
  truth <- x
  x[, 9:12, 1] <- NA
  mv <- imputation_metrics(impute(spec, x, n_samples = 40, seed = 1, threads = 1), truth = truth, by = "variable")
  expect_identical(mv$entries, c(12L, 0L))
  expect_true(all(is.na(mv[2, -(1:2)])))
})

test_that("a forecast prints 4 significant digits unless asked, one row a line at the console's width", {
  # a report writer's review: 8 digits pushed the interval columns of a
  # three-variable forecast into a second block below the first
  x <- cbind(m = datasets::mdeaths, f = datasets::fdeaths, l = datasets::ldeaths)
  imp <- impute_series(x, n_samples = 20, seed = 1, threads = 1, progress = FALSE)
  fc <- predict(imp, n.ahead = 4, proper = FALSE, seed = 1)
  out <- withr::with_options(list(width = 80), capture.output(print(fc)))
  head <- grep("^ *time", out)
  expect_length(head, 1)  # one block: the interval columns not wrapped below
  expect_length(out, head + nrow(fc))
  expect_false(any(grepl("\\.[0-9]{4,}", out[-(1:head)])))  # no value with 4 or more decimals
  more <- capture.output(print(fc, digits = 8))
  expect_true(any(grepl("\\.[0-9]{4,}", more)))
  # digits = NULL is the default's; options(digits =) below 4 is followed (a code review)
  expect_identical(capture.output(print(fc, digits = NULL)), capture.output(print(fc)))
  fewer <- withr::with_options(list(digits = 3, width = 80), capture.output(print(fc)))
  expect_identical(fewer, withr::with_options(list(width = 80), capture.output(print(fc, digits = 3))))
})

test_that("calibrate = TRUE on too short a series says the hidden entries were too few, and what to do", {
  set.seed(7)
  y <- 10 + cumsum(rnorm(14))
  y[c(2, 7, 8)] <- NA
  # it said "0 calibration cases with a scorable region" (a series' region is never scored)
  cnd <- expect_input_error(impute_series(y, n_samples = 40, seed = 1, calibrate = TRUE), "x")
  expect_match(conditionMessage(cnd), "hidden entries to calibrate on; level 0.95 needs at least 19", fixed = TRUE)
  expect_match(conditionMessage(cnd), "calibrate = FALSE", fixed = TRUE)
  expect_match(conditionMessage(cnd), "(0.9 needs 9)", fixed = TRUE)
})
