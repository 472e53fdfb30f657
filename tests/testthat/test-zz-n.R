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
