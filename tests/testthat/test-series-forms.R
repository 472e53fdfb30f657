# Series in the user's own form: data frames without a Date column, dates as
# text, irregular time stamps, impute_series(time = ), truths and completions
# in the form of x.

test_that("a data frame without a time axis is told how to add one", {
  cnd <- expect_input_error(impute_series(airquality), "x")
  expect_match(conditionMessage(cnd), "time = c(\"Month\", \"Day\", year = 2020)", fixed = TRUE)
  cnd <- expect_input_error(impute_series(airquality[1:4]), "x")
  expect_match(conditionMessage(cnd), "Date or POSIXct column (add one", fixed = TRUE)
  two <- data.frame(a = as.Date("2020-01-01") + 0:9, b = as.Date("2021-01-01") + 0:9, y = c(1:4, NA, 6:10))
  cnd <- expect_input_error(impute_series(two), "x")
  expect_match(conditionMessage(cnd), "time = \"a\"", fixed = TRUE)
})

test_that("time = builds the axis from columns, which are then not modelled", {
  imp <- impute_series(airquality, time = c("Month", "Day", year = 1973), n_samples = 20, seed = 1, threads = 1)
  expect_identical(colnames(imp$x), c("Ozone", "Solar.R", "Wind", "Temp"))
  expect_identical(imp$time, as.Date("1973-05-01") + 0:152)
  done <- completed_series(imp)
  expect_identical(names(done), names(airquality))
  expect_identical(done$Month, airquality$Month)
  expect_identical(done$Day, airquality$Day)
  expect_false(anyNA(done))
  obs <- !is.na(airquality$Ozone)
  expect_identical(done$Ozone[obs], as.numeric(airquality$Ozone[obs]))
  expect_input_error(impute_series(airquality, time = c("Month", "Day")), "time")         # no year
  cnd <- expect_input_error(impute_series(airquality, time = c("Month", "Dy", year = 1973)), "time")
  expect_match(conditionMessage(cnd), "did you mean \"Day\"", fixed = TRUE)
  expect_input_error(impute_series(airquality, time = c("Ozone", "Day", year = 1973)), "time")  # not a role
  bad <- airquality
  bad$Day[10] <- 32
  cnd <- expect_input_error(impute_series(bad, time = c("Month", "Day", year = 1973)), "time")
  expect_match(conditionMessage(cnd), "row 10", fixed = TRUE)
  expect_input_error(impute_series(datasets::Nile, time = "Year"), "time")
  # An hourly axis from Year/Month/Day/Hour columns gives the daily season.
  hourly <- data.frame(Year = 2020, Month = 1, Day = rep(1:4, each = 24), Hour = rep(0:23, 4),
                       y = sin(2 * pi * (0:95) / 24) + 0.1 * (0:95 %% 5))
  hourly$y[c(30:33, 70)] <- NA
  h <- impute_series(hourly, time = c("Year", "Month", "Day", "Hour"), n_samples = 20, seed = 1, threads = 1)
  expect_s3_class(h$time, "POSIXct")
  expect_identical(h$model$period, 24)
})

test_that("dates as text are recognised and can be named as the time axis", {
  d <- data.frame(date = format(as.Date("2020-01-01") + 0:39), y = sin(1:40))
  d$y[c(10, 20:22)] <- NA
  cnd <- expect_input_error(impute_series(d), "x")
  expect_match(conditionMessage(cnd), "column \"date\" holds dates as text: convert with as.Date()", fixed = TRUE)
  imp <- impute_series(d, time = "date", n_samples = 20, seed = 1, threads = 1)
  expect_identical(imp$time, as.Date("2020-01-01") + 0:39)
  expect_identical(completed_series(imp)$date, d$date)
  d$when <- as.Date(d$date)
  cnd <- expect_input_error(impute_series(d), "x")   # a text date beside the real time axis
  expect_match(conditionMessage(cnd), "holds dates as text", fixed = TRUE)
})

test_that("irregular time stamps are reported in the series' own unit with the fix", {
  daily <- data.frame(date = as.Date("2020-01-01") + 0:39, y = sin(1:40))[-(12:14), ]
  cnd <- expect_input_error(impute_series(daily), "x")
  expect_match(conditionMessage(cnd), "rows 11 and 12 are 4 days apart, the most common step 1 day", fixed = TRUE)
  expect_match(conditionMessage(cnd), "Complete a regular grid with NA rows", fixed = TRUE)
  # The suggested fix works.
  x <- daily
  grid <- data.frame(date = seq(min(x$date), max(x$date), by = "1 day"))
  x <- merge(grid, x, all.x = TRUE)
  expect_s3_class(impute_series(x, n_samples = 20, seed = 1, threads = 1), "ditimpute_series_imputation")
  # business days: the grid would add weekends that never have values; the
  # message says how to give such a series instead (a review)
  expect_match(conditionMessage(cnd), "give the values without the time column", fixed = TRUE)
  cnd <- expect_input_error(impute_series(hourly <- data.frame(t = as.POSIXct("2020-01-01", tz = "UTC") + 3600 * 0:39,
                                                               y = sin(1:40))[-c(5, 6), ]), "x")
  expect_no_match(conditionMessage(cnd), "without the time column")  # hours: no business-day hint
  hourly <- data.frame(t = as.POSIXct("2020-01-01", tz = "UTC") + 3600 * 0:39, y = sin(1:40))[-c(5, 6), ]
  cnd <- expect_input_error(impute_series(hourly), "x")
  expect_match(conditionMessage(cnd), "are 3 hours apart, the most common step 1 hour", fixed = TRUE)
  monthly <- data.frame(m = seq(as.Date("2000-01-15"), by = "month", length.out = 40), y = sin(1:40))[-c(5, 6), ]
  cnd <- expect_input_error(impute_series(monthly), "x")
  expect_match(conditionMessage(cnd), "are 3 months apart, the most common step 1 month", fixed = TRUE)
  years <- data.frame(Year = c(1901:1910, 1913:1940), y = sin(1:38))
  cnd <- expect_input_error(impute_series(years, time = "Year"), "x")
  expect_match(conditionMessage(cnd), "are 3 apart, the most common step 1 (36 of 37)", fixed = TRUE)
  # no step repeats (Orange's ages): no "most common" step to name
  ages <- data.frame(age = c(118, 484, 664, 1004, 1231, 1372, 1582), y = 1:7)
  cnd <- expect_input_error(impute_series(ages, time = "age"), "x")
  expect_match(conditionMessage(cnd), "no two steps between consecutive rows are equal (from 141 to 366)", fixed = TRUE)
  expect_match(conditionMessage(cnd), "aggregate or interpolate the times", fixed = TRUE)
  # steps that are all multiples of the shortest: rows of NA complete a grid
  days <- data.frame(d = as.Date("2020-01-01") + c(0, 1, 3, 6), y = 1:4)
  cnd <- expect_input_error(impute_series(days), "x")
  expect_match(conditionMessage(cnd), "(from 1 day to 3 days). Complete a regular grid with NA rows", fixed = TRUE)
  # a sub-second clock: steps of 0.1 s that differ in the last bits are one step
  tt <- as.POSIXct("2024-05-01 12:00:00", tz = "UTC") + seq(0, 4.9, by = 0.1)
  fine <- data.frame(t = tt, y = sin(seq_along(tt) / 3))
  fine$y[c(10, 20:22)] <- NA
  expect_s3_class(impute_series(fine, n_samples = 20, seed = 1, threads = 1), "ditimpute_series_imputation")
})

test_that("truth is accepted in the form of x, and completions come in that form", {
  y <- datasets::Nile
  y[20:30] <- NA
  imp <- impute_series(y, n_samples = 30, seed = 1, threads = 1)
  ref <- imputation_metrics(imp, truth = matrix(as.numeric(datasets::Nile)), by = "all")
  expect_equal(imputation_metrics(imp, truth = datasets::Nile, by = "all"), ref)
  expect_equal(imputation_metrics(imp, truth = as.numeric(datasets::Nile), by = "all"), ref)
  expect_equal(coverage(imp, truth = datasets::Nile)$interval_coverage, ref$interval_coverage)
  expect_input_error(imputation_metrics(imp, truth = datasets::Nile[-1]), "truth")
  sets <- completions(imp, 1:3)
  for (i in 1:3) expect_identical(sets[[i]], completed_series(imp, "sample", m = i))
  expect_s3_class(sets[[1]], "ts")
  expect_identical(stats::tsp(sets[[1]]), stats::tsp(y))
  # A data frame with its time column: the truth is the complete frame.
  full <- data.frame(date = as.Date("2020-01-01") + 0:59, a = sin((1:60) / 3), b = cos((1:60) / 4))
  gappy <- full
  gappy$a[10:14] <- NA
  gappy$b[c(3, 40:42)] <- NA
  # two unrelated curves: each gains nothing from the other, so each gets its
  # own model (separate = "auto"), or a warning with separate = "none"
  expect_warning(impute_series(gappy, n_samples = 20, seed = 2, threads = 1, separate = "none"),
                 "\"a\" .*\"b\" .*gain nothing")
  expect_warning(fimp <- impute_series(gappy, n_samples = 20, seed = 2, threads = 1), NA)
  expect_identical(fimp$model$groups, list(1L, 2L))
  m <- imputation_metrics(fimp, truth = full, by = "all")
  expect_identical(m$entries, 9L)
  expect_equal(m, imputation_metrics(fimp, truth = as.matrix(full[c("a", "b")]), by = "all"))
  expect_input_error(imputation_metrics(fimp, truth = full[c("date", "a")]), "truth")
  fsets <- completions(fimp)[2]
  expect_identical(fsets[[1]], completed_series(fimp, "sample", m = 2))
  expect_identical(names(fsets[[1]]), c("date", "a", "b"))
  expect_identical(fsets[[1]]$date, full$date)
  # impute_series(truth = ) takes the same forms with time = columns
  aq <- data.frame(Month = rep(5:6, c(31, 30)), Day = c(1:31, 1:30), v = sin((1:61) / 5))
  gap <- aq
  gap$v[20:25] <- NA
  t_imp <- impute_series(gap, time = c("Month", "Day", year = 1973), truth = aq, n_samples = 20, seed = 1,
                         threads = 1)
  expect_equal(t_imp$truth[20:25, 1], aq$v[20:25])
})

test_that("quarterly, yearly and month-end data frames are regular calendar series", {
  set.seed(3)
  q <- data.frame(d = seq(as.Date("2000-01-01"), by = "quarter", length.out = 40), y = cumsum(rnorm(40)) + 20)
  q$y[10:13] <- NA
  imp_q <- impute_series(q, n_samples = 20, seed = 1, threads = 1)
  expect_equal(imp_q$model$period, 4)
  expect_false(anyNA(completed_series(imp_q)$y))
  yr <- q
  yr$d <- seq(as.Date("1950-01-01"), by = "year", length.out = 40)
  imp_y <- impute_series(yr, n_samples = 20, seed = 1, threads = 1)
  expect_true(is.na(imp_y$model$period) || imp_y$model$period <= 1)
  me <- data.frame(d = seq(as.Date("2000-02-01"), by = "month", length.out = 60) - 1,
                   y = sin(2 * pi * (1:60) / 12) + rnorm(60, sd = 0.1))
  me$y[20:24] <- NA
  expect_equal(impute_series(me, n_samples = 20, seed = 1, threads = 1)$model$period, 12)
  # A missing quarter is reported in the data's own step, with the fix.
  cnd <- expect_input_error(impute_series(q[-(20:21), ]), "x")
  expect_match(conditionMessage(cnd), "are 9 months apart, the most common step 3 months", fixed = TRUE)
  expect_match(conditionMessage(cnd), "by = \"quarter\"", fixed = TRUE)
  # Year and Quarter columns build the same axis (a quarter stands for its
  # first month): the same fit as the Date column's, the columns unchanged
  yq <- data.frame(Year = rep(2000:2009, each = 4), Quarter = rep(1:4, 10), y = q$y)
  imp_yq <- impute_series(yq, time = c("Year", "Quarter"), n_samples = 20, seed = 1, threads = 1)
  expect_equal(imp_yq$model$period, 4)
  expect_equal(completed_series(imp_yq)$y, completed_series(imp_q)$y)
  expect_identical(completed_series(imp_yq)$Quarter, yq$Quarter)
  expect_equal(completed_series(impute_series(yq, time = c(year = "Year", quarter = "Quarter"), n_samples = 20,
                                              seed = 1, threads = 1))$y, completed_series(imp_q)$y)
  bad_q <- yq
  bad_q$Quarter[7] <- 5
  cnd <- expect_input_error(impute_series(bad_q, time = c("Year", "Quarter")), "time")
  expect_match(conditionMessage(cnd), "the quarter must be 1-4 (row 7 holds 5)", fixed = TRUE)
  cnd <- expect_input_error(impute_series(cbind(yq, Month = 1), time = c("Year", "Quarter", "Month")), "time")
  expect_match(conditionMessage(cnd), "both a quarter and a month", fixed = TRUE)
})

test_that("complete columns that restate the time axis or count the rows ride along, not modelled", {
  aq <- datasets::airquality
  aq$date <- as.Date(sprintf("1973-%02d-%02d", aq$Month, aq$Day))
  expect_message(imp <- impute_series(aq[, c("date", "Month", "Day", "Ozone", "Temp")], n_samples = 20, seed = 1,
                                      threads = 1),
                 "Not modelled, carried through unchanged: Month \\(the month\\), Day \\(the day of the month\\)")
  expect_identical(colnames(imp$x), c("Ozone", "Temp"))
  done <- completed_series(imp)
  expect_identical(names(done), c("date", "Month", "Day", "Ozone", "Temp"))
  expect_identical(done$Month, aq$Month)
  expect_false(anyNA(done$Ozone))
  # hourly stamps: a row number, year, hour; a column with a missing value is modelled
  hours <- as.POSIXct("2020-01-01 00:00", tz = "UTC") + 3600 * (0:99)
  set.seed(1)
  y <- sin((0:99) / 5) + rnorm(100, sd = 0.1)
  y[40:44] <- NA
  df <- data.frame(time = hours, No = 1:100, year = 2020, hour = as.POSIXlt(hours)$hour, y = y)
  expect_message(ih <- impute_series(df, n_samples = 20, seed = 1, threads = 1),
                 "No \\(steps evenly: a row count or a schedule\\), year \\(constant: nothing to impute or model\\), hour \\(the hour\\)")
  expect_identical(colnames(ih$x), "y")
  # calendar parts before even steps; a column named in separate is modelled
  yearly <- data.frame(date = as.Date(sprintf("%d-01-01", 1950:1979)), Year = 1950:1979,
                       dose = seq(100, by = 2, length.out = 30),
                       y = c(1:10, NA, 12:30) + sin(1:30) + stats::rnorm(30, sd = 0.3))
  expect_message(iy <- impute_series(yearly, n_samples = 20, seed = 1, threads = 1),
                 "Year \\(the year\\), dose \\(steps evenly")
  expect_identical(colnames(iy$x), "y")
  daily <- data.frame(date = as.Date("2020-01-01") + 0:59, rain = 0, y = c(1:20, NA, 22:60) + sin(1:60))
  expect_message(ic <- impute_series(daily, n_samples = 20, seed = 1, threads = 1),
                 "rain \\(constant: nothing to impute or model\\)")
  expect_identical(colnames(ic$x), "y")
  daily$rain[5] <- NA  # a constant with a gap: nothing to model, an error as before
  expect_input_error(impute_series(daily, n_samples = 20, seed = 1, threads = 1), "x")
  msgs <- capture_messages(id <- impute_series(df, separate = c("No", "y"), n_samples = 20, seed = 1, threads = 1))
  expect_false(any(grepl("No (steps", msgs, fixed = TRUE)))
  expect_true(any(grepl("year (constant", msgs, fixed = TRUE)))
  expect_true("No" %in% colnames(id$x))
  # only such columns: they are the series, modelled as before
  solo <- data.frame(time = hours[1:30], z = c(1:10, NA, 12:30))
  # (an exactly linear z: the model reaches it and refuses zero-width intervals, naming it)
  cnd <- expect_error(expect_no_message(impute_series(solo, n_samples = 20, seed = 1, threads = 1)),
                      class = "ditimpute_error_numeric")
  expect_match(conditionMessage(cnd), "variable \"z\" follows its fitted curve with no noise", fixed = TRUE)
  solo$z <- solo$z + 1e-3 * sin(1:30)  # no longer exactly linear, nor evenly stepping: a series as any other
  expect_no_message(is <- impute_series(solo, n_samples = 20, seed = 1, threads = 1))
  expect_identical(colnames(is$x), "z")
})
test_that("calendar, row-number and label columns given NA rows by completing the time grid are filled, not modelled", {
  # the grid advice's merge(): BeijingAir-like columns gain NA rows where the
  # logger dropped rows (a review: hour was then imputed as 2.976, No modelled,
  # station refused with advice to use mice's polyreg)
  hours <- as.POSIXct("2015-05-01 00:00", tz = "UTC") + 3600 * (0:239)
  lt <- as.POSIXlt(hours)
  set.seed(2)
  full <- data.frame(time = hours, No = 18985L + 0:239, year = 2015L, month = 5L, day = lt$mday, hour = lt$hour,
                     pm = exp(4 + 0.4 * sin(2 * pi * (0:239) / 24) + cumsum(rnorm(240, sd = 0.05))),
                     station = "Dongsi", stringsAsFactors = FALSE)
  x <- full[-(100:110), ]
  cnd <- expect_input_error(suppressMessages(impute_series(x, n_samples = 20, seed = 1, threads = 1)), "x")
  expect_match(conditionMessage(cnd), "merge(grid, x, all.x = TRUE)", fixed = TRUE)
  grid <- data.frame(time = seq(min(x$time), max(x$time), by = "1 hour"))
  x2 <- merge(grid, x, all.x = TRUE)
  expect_true(anyNA(x2$hour) && anyNA(x2$station) && anyNA(x2$No))
  msgs <- capture_messages(imp <- impute_series(x2, n_samples = 20, seed = 1, threads = 1))
  expect_identical(colnames(imp$x), "pm")
  expect_true(any(grepl("hour (the hour; its missing rows filled by that rule)", msgs, fixed = TRUE)))
  expect_true(any(grepl("year (the year; its missing rows filled", msgs, fixed = TRUE)))
  expect_true(any(grepl("station (text; one value, \"Dongsi\", filled into its missing rows)", msgs, fixed = TRUE)))
  done <- completed_series(imp)
  expect_identical(done[c("No", "year", "month", "day", "hour", "station")], full[c("No", "year", "month", "day", "hour", "station")])
  expect_identical(done$pm[-(100:110)], full$pm[-(100:110)])
  expect_false(anyNA(done$pm))
  # a text column with several values and missing rows stays an error; a
  # numeric constant with a gap stays a variable (above: an error)
  x3 <- x2
  x3$wd <- ifelse(is.na(x3$pm), NA, c("N", "S")[1 + (seq_len(nrow(x3)) %% 2)])
  expect_input_error(suppressMessages(impute_series(x3, n_samples = 20, seed = 1, threads = 1)), "x")
  # a note given once, missing where there is nothing to note, is no grid
  # label: an error, not copied into every row (a code review)
  x4 <- full
  x4$note <- NA_character_
  x4$note[20] <- "sensor replaced"
  x4$pm[150:160] <- NA
  expect_input_error(suppressMessages(impute_series(x4, n_samples = 20, seed = 1, threads = 1)), "x")
  # a numeric constant with a gap stays a variable (an error: nothing to
  # model), even where it equals the month of May's data (it is not named for it)
  x5 <- full
  x5$on <- 5
  x5$on[100:130] <- NA
  x5$pm[150:160] <- NA
  expect_input_error(suppressMessages(impute_series(x5, n_samples = 20, seed = 1, threads = 1)), "x")
  # braces in a label's value are the data's, not cli's
  x6 <- x2
  x6$station[!is.na(x6$station)] <- "site {A}"
  msgs <- capture_messages(impute_series(x6, n_samples = 20, seed = 1, threads = 1))
  expect_true(any(grepl("one value, \"site {A}\", filled", msgs, fixed = TRUE)))
})

test_that("a data frame's truth is read by column name: all-NA or absent columns are unknown", {
  aq <- datasets::airquality
  d <- data.frame(date = as.Date(sprintf("1973-%02d-%02d", aq$Month, aq$Day)), Ozone = aq$Ozone, Temp = aq$Temp)
  y <- d
  y$Ozone[c(20:23, 62)] <- NA
  imp <- impute_series(y, n_samples = 20, level = 0.9, seed = 1, threads = 1)
  tr <- d
  tr$Ozone[-c(20:23, 62)] <- NA
  tr$Temp <- NA  # logical
  a <- coverage(imp, truth = tr)
  num <- tr
  num$Temp <- NA_real_
  expect_equal(a, coverage(imp, truth = num))
  cnd <- expect_input_error(coverage(imp, truth = tr[, c("date", "Ozone")]), "truth")
  expect_match(conditionMessage(cnd), "has no column \"Temp\".*a column of NA")
  bad <- tr
  bad$Temp <- "x"
  cnd <- expect_input_error(coverage(imp, truth = bad), "truth")
  expect_match(conditionMessage(cnd), "column \"Temp\" must hold numbers")
  expect_input_error(coverage(imp, truth = data.frame(date = d$date, other = 1)), "truth")
  # impute_series(truth =) with the time built from columns: the truth's own
  # time columns are not read (masked to NA here)
  y2 <- aq[, c("Month", "Day", "Ozone", "Temp")]
  y2$Temp[5:9] <- NA
  tr2 <- aq[, c("Month", "Day", "Ozone", "Temp")]
  tr2[!is.na(y2)] <- NA
  i2 <- impute_series(y2, time = c("Month", "Day", year = 1973), truth = tr2, n_samples = 20, seed = 1, threads = 1)
  expect_equal(i2$truth[5:9, "Temp"], aq$Temp[5:9])
  expect_true(all(is.na(i2$truth[, "Ozone"])))
  cnd <- expect_input_error(impute_series(y2, time = c("Month", "Day", year = 1973), truth = tr2[1:100, ]), "truth")
  expect_match(conditionMessage(cnd), "153 time points x 2 variables \\(Ozone, Temp\\), not 100 x 2")
  # rows in another order: an error, not a score on the wrong rows
  full <- aq[, c("Month", "Day", "Ozone", "Temp")]
  cnd <- expect_input_error(impute_series(y2, time = c("Month", "Day", year = 1973), truth = full[153:1, ]), "truth")
  expect_match(conditionMessage(cnd), "rows in another order")
  expect_match(conditionMessage(expect_input_error(coverage(imp, truth = tr[153:1, ]), "truth")), "column \"date\"")
  # an all-NA column of any type is unknown; a named matrix is read by name
  chr <- tr
  chr$Temp <- NA_character_
  expect_equal(coverage(imp, truth = chr), a)
  i3 <- impute_series(y2, time = c("Month", "Day", year = 1973), truth = as.matrix(full), n_samples = 20, seed = 1,
                      threads = 1)
  expect_equal(i3$truth[, "Temp"], aq$Temp)
})

test_that("a series with next to no noise fails with advice impute_series() users can follow", {
  cnd <- expect_error(impute_series(c(1:10, NA, 12:30) + sin(1:30), n_samples = 20, seed = 1, threads = 1),
                      class = "ditimpute_error_numeric")
  expect_match(conditionMessage(cnd), "too smooth")
  expect_match(conditionMessage(cnd), "stats::spline()", fixed = TRUE)
  expect_no_match(conditionMessage(cnd), "add a small nugget")
  # an exactly linear or quadratic series: fitted exactly, its intervals of
  # zero width (a user review found them silent; issue 27: never a zero-width interval)
  for (y in list(c(1:10, NA, NA, 13:22) + 0, c((1:10)^2, NA, NA, (13:22)^2))) {
    cnd <- expect_error(impute_series(y, n_samples = 20, seed = 1, threads = 1), class = "ditimpute_error_numeric")
    expect_match(conditionMessage(cnd), "zero width")
    expect_match(conditionMessage(cnd), "stats::approx()", fixed = TRUE)
    # the advice works: a little noise gives intervals of a width
    set.seed(1)
    noisy <- y + stats::rnorm(length(y), sd = 1e-4 * stats::sd(y, na.rm = TRUE))
    imp <- impute_series(noisy, n_samples = 20, seed = 1, threads = 1)
    expect_true(all(imp$upper[11:12] - imp$lower[11:12] > 0))
  }
})

test_that("coverage() of a series with its own gaps leads with the per-entry figure", {
  y <- datasets::Nile
  y[c(20:25, 70)] <- NA
  imp <- impute_series(y, n_samples = 20, level = 0.9, seed = 1, threads = 1)
  tr <- datasets::Nile
  tr[-c(20:25)] <- NA  # the truth of one gap known, 70's not
  out <- capture.output(print(coverage(imp, truth = tr)))
  expect_match(out[1], "^Per-entry 90% intervals contain")
  expect_match(out[2], "^The 90% regions \\(joint over a sequence's missing entries\\) are not scored")
})

test_that("a named vector whose names are not times warns that its order is taken as time", {
  set.seed(1)
  v <- cumsum(rnorm(30))
  v[c(5, 9, 20)] <- NA
  cnd <- expect_warning(impute_series(stats::setNames(v, c("Mobile", "Juneau", letters[3:30]))), "not times")
  expect_match(conditionMessage(cnd), "\"Mobile\", \"Juneau\", \"c\", ...", fixed = TRUE)
  expect_warning(impute_series(stats::setNames(v, c("{a}", letters[2:30]))), "not times")  # braces shown, no cli error
  # years, dates as text and no names at all: times in order, nothing to say
  expect_no_warning(impute_series(stats::setNames(v, 1991:2020)))
  expect_no_warning(impute_series(stats::setNames(v, as.character(as.Date("2020-01-01") + 0:29))))
  expect_no_warning(impute_series(v))
  expect_warning(impute_series(stats::setNames(v, 2020:1991)), "increasing")
  # the names come back on the result
  r <- suppressWarnings(impute_series(stats::setNames(v, c("Mobile", letters[2:30]))))
  expect_identical(names(completed_series(r)), c("Mobile", letters[2:30]))
})

test_that("column names must pick one column each (a user review: a duplicated name left a column unimputed)", {
  days <- as.Date("2020-01-01") + 0:59
  set.seed(2)
  a <- data.frame(date = days, pm25 = cumsum(rnorm(60)))
  b <- data.frame(pm25 = cumsum(rnorm(60)))
  a$pm25[30:35] <- NA
  b$pm25[40:45] <- NA
  cnd <- expect_input_error(impute_series(cbind(a, b)), "x")
  expect_match(conditionMessage(cnd), "columns 2 and 3 are both named \"pm25\"", fixed = TRUE)
  m <- cbind(a$pm25, b$pm25)
  colnames(m) <- c("pm25", "pm25")
  expect_input_error(impute_series(m), "x")
  expect_input_error(impute_series(stats::ts(m, frequency = 7)), "x")
  e <- cbind(a, b)
  names(e)[3] <- ""
  expect_match(conditionMessage(expect_input_error(impute_series(e), "x")), "column 3 has no name", fixed = TRUE)
  names(e)[3] <- "other"
  expect_no_error(suppressMessages(impute_series(e, n_samples = 20, seed = 1)))
})

test_that("numbers read as text are an error that says how to convert them; other text rides through with a note", {
  set.seed(3)
  x <- data.frame(date = as.Date("2023-01-01") + 0:59, hum = 60 + cumsum(rnorm(60)),
                  temp = sprintf("%.1f", 15 + cumsum(rnorm(60, sd = 0.3))), site = "A")
  x$temp[c(10, 30, 31)] <- "-"
  x$hum[20:22] <- NA
  cnd <- expect_input_error(impute_series(x), "x")
  expect_match(conditionMessage(cnd), "column \"temp\" holds numbers as text (\"-\" in 3 rows, not a number)", fixed = TRUE)
  x$temp <- suppressWarnings(as.numeric(x$temp))
  expect_message(r <- impute_series(x, n_samples = 20, seed = 1), "Not numeric, carried through unchanged.*site \\(text\\)")
  expect_false(anyNA(completed_series(r)$temp))
  expect_identical(completed_series(r)$site, x$site)
  # labels made of digits ride through too: a factor station code, a month as
  # text (a review: both were refused as "numbers as text")
  x$station <- factor("00501")
  x$month <- as.character(as.POSIXlt(x$date)$mon + 1)
  expect_message(r <- impute_series(x, n_samples = 20, seed = 1),
                 "carried through unchanged.*station \\(factor\\), month \\(text\\)")
  expect_identical(completed_series(r)$station, x$station)
  expect_identical(completed_series(r)$month, x$month)
  # among numbers, a hexadecimal entry is not one, and the advice sets it to NA before converting (as.numeric() reads "0x1A" as 26)
  y <- x
  y$temp2 <- sprintf("%.2f", seq_len(60) * 1.37)
  y$temp2[3] <- "0x1A"
  cnd <- expect_input_error(impute_series(y), "x")
  expect_match(conditionMessage(cnd), "(\"0x1A\" in 1 row, not a number)", fixed = TRUE)
  expect_match(conditionMessage(cnd), "x$temp2[grepl(\"^[+-]?0[xX]\", x$temp2)] <- NA; x$temp2 <-", fixed = TRUE)
  # hexadecimal codes are labels too, though as.numeric() reads them ("0x1A" is 26)
  x$sensor <- sprintf("0x%02X", seq_len(60))
  expect_message(r <- impute_series(x, n_samples = 20, seed = 1), "carried through unchanged.*sensor \\(text\\)")
  expect_identical(completed_series(r)$sensor, x$sensor)
  x$sensor <- NULL
  # numbers as text with no word among them are still numbers: many values,
  # a factor of many values, a few values with blanks or NA among them (a code
  # review: a 15-valued temperature, blanks and a factor had slipped through)
  numbers <- list(many = sprintf("%.2f", seq_len(60) * 1.37), fifteen = as.character(rep(1:15, 4)),
                  factor = factor(sprintf("%.1f", seq_len(60) / 3)), blanks = c(rep(c("1", "2"), 29), "", ""),
                  na = c(rep(c("1", "2"), 29), NA, NA))
  for (k in names(numbers)) {
    y <- x
    y$temp2 <- numbers[[k]]
    cnd <- expect_input_error(impute_series(y), "x")
    expect_match(conditionMessage(cnd), "column \"temp2\" holds numbers as text", fixed = TRUE, label = k)
  }
})

test_that("date-times as text are read as date-times, not cut to their dates", {
  tt <- format(as.POSIXct("2021-01-01", tz = "UTC") + 3600 * (0:119), "%Y-%m-%d %H:%M:%S")
  set.seed(4)
  y <- sin(2 * pi * (0:119) / 24) + rnorm(120, sd = 0.1)
  y[50:53] <- NA
  x <- data.frame(time = tt, y = y)
  cnd <- expect_input_error(impute_series(x), "x")
  expect_match(conditionMessage(cnd), "holds date-times as text: convert with as.POSIXct()", fixed = TRUE)
  r <- impute_series(x, time = "time", n_samples = 20, seed = 1)
  expect_s3_class(r$time, "POSIXct")
  expect_equal(r$model$period, 24)
  expect_identical(completed_series(r)$time, tt)  # the named column comes back as given
  # ISO 8601 with T and Z, minutes only, slashes: the same stamps
  for (v in list(sub(" ", "T", paste0(tt, "Z")), substr(tt, 1, 16), gsub("-", "/", tt))) {
    expect_equal(as.numeric(ditimpute:::parse_text_dates(v)), as.numeric(r$time))
  }
  expect_s3_class(ditimpute:::parse_text_dates(c("2021-01-01", NA, "2021-01-03")), "Date")
  expect_null(ditimpute:::parse_text_dates(c("2021-01-01", "2021-01-01 10:00")))  # mixed: neither
  expect_null(ditimpute:::parse_text_dates(c("2021-01-01 extra")))
})

test_that("time stamps in errors read in their own time zone", {
  tt <- as.POSIXct("2021-06-01 09:00", tz = "America/New_York") + 3600 * c(0:5, 5:9)
  cnd <- expect_input_error(impute_series(data.frame(time = tt, y = rnorm(11))), "x")
  expect_match(conditionMessage(cnd), "both hold 2021-06-01 14:00:00 EDT", fixed = TRUE)
})

test_that("long (panel) data get advice about the id column, not 'unsorted' or 'duplicated'", {
  long <- expand.grid(date = as.Date("2022-01-01") + 0:29, station = c("north", "south"), stringsAsFactors = FALSE)
  set.seed(5)
  long$no2 <- rnorm(60)
  for (rows in list(seq_len(60), order(long$date))) {
    cnd <- expect_input_error(impute_series(long[rows, ]), "x")
    expect_match(conditionMessage(cnd), "each time stamp appears once per value of column \"station\"", fixed = TRUE)
  }
  # a repeated stamp with no column to tell the rows apart stays "duplicated"
  expect_match(conditionMessage(expect_input_error(impute_series(long[order(long$date), c("date", "no2")]), "x")),
               "duplicated")
})

test_that("zoo's yearmon and yearqtr stamps are monthly and quarterly time axes", {
  skip_if_not_installed("zoo")
  set.seed(6)
  y <- 10 + 3 * sin(2 * pi * (0:95) / 12) + rnorm(96, sd = 0.3)
  y[40:45] <- NA
  ym <- zoo::as.yearmon(2000 + (0:95) / 12)
  r <- impute_series(data.frame(time = ym, y = y), n_samples = 20, seed = 1)
  expect_equal(r$model$period, 12)
  expect_identical(r$time, as.Date(sprintf("%d-%02d-01", 2000 + (0:95) %/% 12, (0:95) %% 12 + 1)))
  expect_s3_class(completed_series(r)$time, "yearmon")
  r2 <- impute_series(data.frame(when = ym, y = y), time = "when", n_samples = 20, seed = 1)
  expect_equal(completed_series(r2)$y, completed_series(r)$y)
  q <- impute_series(data.frame(time = zoo::as.yearqtr(2000 + (0:39) / 4), y = y[1:40]), n_samples = 20, seed = 1)
  expect_equal(q$model$period, 4)
  expect_identical(format(q$time[1:2]), c("2000-01-01", "2000-04-01"))
})

test_that("confint() of a series imputation has its time stamps; plot() says which frame a ts time is", {
  y <- datasets::Nile
  y[c(10:12, 40)] <- NA
  r <- impute_series(y, n_samples = 20, seed = 1)
  ci <- confint(r)
  expect_identical(names(ci), c("time", "frame", "variable", "estimate", "lower", "upper"))
  expect_equal(ci$time, c(1880, 1881, 1882, 1910))
  expect_equal(ci[names(ci) != "time"], as.data.frame(r)[names(ci) != "time"], ignore_attr = TRUE)
  cnd <- expect_input_error(plot(r, from = 1900), "from")
  expect_match(conditionMessage(cnd), "the series' time 1900 is frame 30: from = 30", fixed = TRUE)
})

test_that("a daily local-time series with an absent day gets a grid that keeps its clock time across daylight saving", {
  t <- seq(as.POSIXct("2021-02-01", tz = "America/New_York"), by = "DSTday", length.out = 80)
  set.seed(17)
  x <- data.frame(date = t, y = 20 + cumsum(rnorm(80)))[-10, ]
  cnd <- expect_input_error(impute_series(x), "x")
  expect_match(conditionMessage(cnd), "rows 9 and 10 are 2 calendar days apart", fixed = TRUE)
  expect_match(conditionMessage(cnd), "by = \"DSTday\"", fixed = TRUE)
  # the advice, followed, restores one NA row and keeps every observed value
  grid <- data.frame(date = seq(min(x$date), max(x$date), by = "DSTday"))
  x2 <- merge(grid, x, all.x = TRUE)
  expect_identical(sum(is.na(x2$y)), 1L)
  expect_no_error(impute_series(x2, n_samples = 20, seed = 1))
})

test_that("time-column and constant-variable errors say what to do", {
  x <- data.frame(date = as.Date("2020-01-01") + 0:29, y = sin(1:30))
  x$y[5] <- NA
  x$date[30] <- NA  # a blank last line of a file
  cnd <- expect_input_error(impute_series(x), "x")
  expect_match(conditionMessage(cnd), "missing or invalid at row 30: drop the row", fixed = TRUE)
  x$date[30] <- x$date[29]
  cnd <- expect_input_error(impute_series(x), "x")
  expect_match(conditionMessage(cnd), "Keep one row per time", fixed = TRUE)
  expect_no_match(conditionMessage(cnd), "daylight")  # dates have no clock hour to repeat
  # local clock hours written at the end of daylight saving time repeat an hour
  tt <- as.POSIXct("2021-10-31 00:00", tz = "UTC") + 3600 * c(0:2, 2:5)
  h <- data.frame(time = tt, v = c(1, 2, NA, 3, 4, 5, 6))
  cnd <- expect_input_error(impute_series(h), "x")
  expect_match(conditionMessage(cnd), "daylight saving time ends", fixed = TRUE)
  m <- ts(cbind(a = 10 + cumsum(rnorm(48)), c = 7), frequency = 12)
  m[5:8, "a"] <- NA
  cnd <- expect_input_error(impute_series(m), "x")
  expect_match(conditionMessage(cnd), "is constant where observed; it has nothing to model: drop it", fixed = TRUE)
})
