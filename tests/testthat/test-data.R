# Readers and the series class, on small files written here in both formats
# (the real files are tested in test-data-real.R).

air_vars <- c("PM2.5", "PM10", "SO2", "NO2", "CO", "O3", "TEMP", "PRES", "DEWP", "RAIN", "WSPM")

# Writes one BeijingAir site file with `n` hourly rows; value of variable j at
# row r of the k-th site is k * 1000 + j * 10 + r, so placement can be checked.
write_site <- function(dir, site, k, n = 6, gz = TRUE, start = "2013-03-01 00:00:00", edit = identity) {
  time <- as.POSIXlt(as.POSIXct(start, tz = "UTC") + 3600 * (seq_len(n) - 1))
  df <- data.frame(No = seq_len(n), year = time$year + 1900, month = time$mon + 1, day = time$mday,
                   hour = time$hour)
  for (j in seq_along(air_vars)[-11]) df[[air_vars[j]]] <- k * 1000 + j * 10 + seq_len(n)
  df$wd <- rep(c("N", "SE"), length.out = n)
  df$WSPM <- k * 1000 + 110 + seq_len(n)
  df$station <- site
  df <- edit(df)
  path <- file.path(dir, sprintf("PRSA_Data_%s_20130301-20170228.csv%s", site, if (gz) ".gz" else ""))
  con <- if (gz) gzfile(path, "w") else file(path, "w")
  utils::write.csv(df, con, row.names = FALSE)
  close(con)
  path
}

new_dir <- function() {
  d <- tempfile("air")
  dir.create(d)
  d
}

ett_lines <- function(dates, vals = NULL) {
  if (is.null(vals)) vals <- outer(seq_along(dates), 1:7, function(r, j) r + j / 10)
  c("date,HUFL,HULL,MUFL,MULL,LUFL,LULL,OT",
    paste(dates, apply(vals, 1, paste, collapse = ","), sep = ","))
}

write_ett <- function(lines, gz = FALSE) {
  path <- tempfile("ETTx", fileext = if (gz) ".csv.gz" else ".csv")
  con <- if (gz) gzfile(path, "w") else file(path, "w")
  writeLines(lines, con)
  close(con)
  path
}

hours <- function(n, start = "2016-07-01 00:00:00", step = 3600) {
  format(as.POSIXct(start, tz = "UTC") + step * (seq_len(n) - 1), "%Y-%m-%d %H:%M:%S", tz = "UTC")
}

test_that("read_beijing_air puts the sites side by side with UTC hours", {
  d <- new_dir()
  write_site(d, "Dongsi", 2, gz = FALSE)
  write_site(d, "Aotizhongxin", 1, edit = function(df) {
    df$PM10[3] <- NA
    df
  })
  air <- read_beijing_air(d)
  expect_s3_class(air, "ditimpute_series")
  expect_identical(dim(air$values), c(6L, 22L))
  expect_identical(colnames(air$values)[c(1, 11, 12, 22)],
                   c("Aotizhongxin.PM2.5", "Aotizhongxin.WSPM", "Dongsi.PM2.5", "Dongsi.WSPM"))
  expect_equal(unname(air$values[4, "Dongsi.SO2"]), 2000 + 30 + 4)
  expect_equal(unname(air$values[6, "Aotizhongxin.WSPM"]), 1000 + 110 + 6)
  expect_true(is.na(air$values[3, "Aotizhongxin.PM10"]))
  expect_equal(sum(is.na(air$values)), 1)
  expect_s3_class(air$time, "POSIXct")
  expect_identical(attr(air$time, "tzone"), "UTC")
  expect_identical(format(air$time[6], "%Y-%m-%d %H:%M"), "2013-03-01 05:00")
  expect_equal(air$freq, 3600)
  expect_null(air$wd)
  wind <- read_beijing_air(d, wind = TRUE)
  expect_identical(dim(wind$wd), c(6L, 2L))
  expect_identical(colnames(wind$wd), c("Aotizhongxin", "Dongsi"))
  expect_identical(unname(wind$wd[2, "Dongsi"]), "SE")
  one <- read_beijing_air(d, sites = "Dongsi")
  expect_identical(colnames(one$values), paste0("Dongsi.", air_vars))
  # Sites are found by the station column when file names do not tell.
  file.rename(file.path(d, "PRSA_Data_Dongsi_20130301-20170228.csv"), file.path(d, "site2.csv"))
  both <- read_beijing_air(d, sites = c("Dongsi", "Aotizhongxin"))
  expect_equal(both$values, air$values)
  expect_identical(colnames(read_beijing_air(d, sites = "Dongsi")$values), paste0("Dongsi.", air_vars))
  # a misspelled site: the stations there and the one meant (a review)
  cnd <- expect_input_error(read_beijing_air(d, sites = "Dongsy"), "sites")
  expect_match(conditionMessage(cnd), "the stations of the files read are \"Aotizhongxin\", \"Dongsi\"")
  expect_match(conditionMessage(cnd), "Did you mean \"Dongsi\" for \"Dongsy\"?", fixed = TRUE)
  cnd <- expect_input_error(read_beijing_air(d, sites = c("Dongsy", "Aotizhongxn")), "sites")
  expect_match(conditionMessage(cnd), "\"Dongsi\" for \"Dongsy\", \"Aotizhongxin\" for \"Aotizhongxn\"", fixed = TRUE)
})

test_that("read_beijing_air rejects malformed directories and files", {
  expect_input_error(read_beijing_air(file.path(tempdir(), "no-such-dir")), "dir")
  expect_input_error(read_beijing_air(new_dir()), "dir")
  expect_input_error(read_beijing_air(new_dir(), sites = 3), "sites")
  d <- new_dir()
  write_site(d, "Dongsi", 2)
  expect_input_error(read_beijing_air(d, sites = c("Dongsi", "Nowhere")), "sites")
  expect_input_error(read_beijing_air(d, wind = NA), "wind")

  bad <- function(edit, ...) {
    d <- new_dir()
    write_site(d, "Aotizhongxin", 1)
    write_site(d, "Dongsi", 2, edit = edit, ...)
    d
  }
  cnd <- expect_input_error(read_beijing_air(bad(function(df) df[names(df) != "O3"])), "dir")
  expect_match(conditionMessage(cnd), "lacks column \"O3\"")
  cnd <- expect_input_error(read_beijing_air(bad(function(df) {
    df$PM10[2] <- "abc"
    df
  })), "dir")
  expect_match(conditionMessage(cnd), "\"PM10\" holds \"abc\" at data row 2")
  cnd <- expect_input_error(read_beijing_air(bad(function(df) df[c(1, 3, 2, 4, 5, 6), ])), "dir")
  expect_match(conditionMessage(cnd), "not sorted")
  cnd <- expect_input_error(read_beijing_air(bad(function(df) df[c(1, 2, 2, 3, 4, 5), ])), "dir")
  expect_match(conditionMessage(cnd), "duplicated")
  cnd <- expect_input_error(read_beijing_air(bad(function(df) df[-4, ])), "dir")
  expect_match(conditionMessage(cnd), "not equally spaced")
  expect_no_match(conditionMessage(cnd), "calendar months")
  # monthly stamps (28-31 days apart): said, with what to do for windows
  months <- seq(as.Date("1969-01-01"), by = "month", length.out = 24)
  cnd <- expect_input_error(ditimpute_series(matrix(rnorm(24), ncol = 1), time = months), "time")
  expect_match(conditionMessage(cnd), "calendar months, which impute_series() takes", fixed = TRUE)
  cnd <- expect_input_error(read_beijing_air(bad(function(df) {
    df$hour[6] <- 24   # would otherwise roll over to the next day
    df
  })), "dir")
  expect_match(conditionMessage(cnd), "invalid at row 6")
  cnd <- expect_input_error(read_beijing_air(bad(identity, start = "2013-03-01 01:00:00")), "dir")
  expect_match(conditionMessage(cnd), "identical time stamps")
  cnd <- expect_input_error(read_beijing_air(bad(identity, n = 5)), "dir")
  expect_match(conditionMessage(cnd), "identical time stamps")
  d <- new_dir()
  writeLines(c("year,month", "2013,\"3"), file.path(d, "broken.csv"))
  expect_input_error(read_beijing_air(d), "dir")
})

test_that("read_ett reads hourly and 15-minute files, gzipped or plain", {
  f <- write_ett(ett_lines(hours(5)), gz = TRUE)
  s <- read_ett(f)
  expect_s3_class(s, "ditimpute_series")
  expect_identical(dim(s$values), c(5L, 7L))
  expect_identical(colnames(s$values), c("HUFL", "HULL", "MUFL", "MULL", "LUFL", "LULL", "OT"))
  expect_equal(unname(s$values[3, "OT"]), 3.7)
  expect_equal(s$freq, 3600)
  expect_identical(s$name, sub("\\.csv\\.gz$", "", basename(f)))
  vals <- outer(1:8, 1:7)
  vals[2, 7] <- NA
  m <- read_ett(write_ett(ett_lines(hours(8, step = 900), vals)))
  expect_equal(m$freq, 900)
  expect_identical(format(m$time[8], "%H:%M"), "01:45")
  expect_true(is.na(m$values[2, "OT"]))
  expect_equal(sum(is.na(m$values)), 1)
  expect_output(print(m), "8 time stamps x 7 variables, 15 minutes from 2016-07-01 00:00:00")
})

test_that("read_ett reads a date's UTC offset as that instant in UTC (it was dropped)", {
  utc <- as.POSIXct("2016-06-30 16:00:00", tz = "UTC") + 3600 * (0:3)
  for (form in c("+08:00", "+0800", " +0800")) {
    s <- read_ett(write_ett(ett_lines(paste0(hours(4), form))))
    expect_equal(s$time, utc)
  }
  s <- read_ett(write_ett(ett_lines(paste0(sub(" ", "T", hours(4)), "Z"))))
  expect_equal(s$time, utc + 8 * 3600)
  expect_equal(read_ett(write_ett(ett_lines(paste0(hours(4), "+08"))))$time, utc)  # ISO 8601's hours-only offset
  expect_equal(read_ett(write_ett(ett_lines(paste0(hours(4), " UTC"))))$time, utc + 8 * 3600)
  # an ending it cannot read is an error with its row, not dropped
  cnd <- expect_input_error(read_ett(write_ett(ett_lines(paste0(hours(4), " CEST")))), "file")
  expect_match(conditionMessage(cnd), "invalid at row 1")
  # an offset that changes within the file (daylight saving time) keeps the hours equally spaced in UTC
  dates <- c("2016-03-27 00:00:00+01:00", "2016-03-27 01:00:00+01:00", "2016-03-27 03:00:00+02:00",
             "2016-03-27 04:00:00+02:00")
  s <- read_ett(write_ett(ett_lines(dates)))
  expect_equal(s$time, as.POSIXct("2016-03-26 23:00:00", tz = "UTC") + 3600 * (0:3))
  expect_equal(s$freq, 3600)
})

test_that("read_ett rejects malformed files", {
  expect_input_error(read_ett(file.path(tempdir(), "absent.csv")), "file")
  expect_input_error(read_ett(tempdir()), "file")
  expect_input_error(read_ett(c("a", "b")), "file")
  lines <- ett_lines(hours(5))
  cnd <- expect_input_error(read_ett(write_ett(sub(",OT$", ",XX", lines))), "file")
  expect_match(conditionMessage(cnd), "lacks column \"OT\"")
  broken <- lines
  broken[3] <- sub(",[^,]*$", ",abc", broken[3])
  cnd <- expect_input_error(read_ett(write_ett(broken, gz = TRUE)), "file")
  expect_match(conditionMessage(cnd), "\"OT\" holds \"abc\" at data row 2")
  # as.numeric() reads a hexadecimal code as a number (26 for 0x1A): not a reading
  broken[3] <- sub(",[^,]*$", ",0x1A", lines[3])
  cnd <- expect_input_error(read_ett(write_ett(broken)), "file")
  expect_match(conditionMessage(cnd), "\"OT\" holds \"0x1A\" at data row 2")
  cnd <- expect_input_error(read_ett(write_ett(lines[c(1, 2, 4, 3, 5, 6)])), "file")
  expect_match(conditionMessage(cnd), "not sorted")
  cnd <- expect_input_error(read_ett(write_ett(lines[c(1, 2, 3, 3, 4)])), "file")
  expect_match(conditionMessage(cnd), "duplicated")
  cnd <- expect_input_error(read_ett(write_ett(lines[-4])), "file")
  expect_match(conditionMessage(cnd), "not equally spaced")
  bad_date <- lines
  bad_date[4] <- sub("^[^,]*", "2016-13-45 00:00:00", bad_date[4])
  cnd <- expect_input_error(read_ett(write_ett(bad_date)), "file")
  expect_match(conditionMessage(cnd), "invalid at row 3")
  expect_input_error(read_ett(write_ett(lines[1:2])), "file")   # a single data row
})

test_that("series print, summary and as.data.frame describe the data", {
  v <- cbind(a = c(1, NA, 3, NA), b = c(2, 4, 6, 8))
  s <- ditimpute_series(v, time = as.POSIXct("2020-01-01", tz = "UTC") + 86400 * (0:3), name = "toy")
  expect_equal(s$freq, 86400)
  expect_output(print(s), "toy: 4 time stamps x 2 variables, daily")
  expect_output(print(s), "25.00% of the values missing")
  sm <- summary(s)
  expect_equal(sm$missing, c(0.5, 0))
  expect_equal(sm$mean, c(2, 5))
  expect_equal(sm$sd, c(sd(c(1, 3)), sd(c(2, 4, 6, 8))))
  expect_output(print(sm), "Variables of toy")
  df <- as.data.frame(s)
  expect_identical(names(df), c("time", "a", "b"))
  expect_identical(nrow(df), 4L)
  all_na <- summary(ditimpute_series(cbind(z = c(NA_real_, NA))))
  expect_true(is.na(all_na$mean) && all_na$missing == 1)
})

test_that("ditimpute_series checks its input", {
  expect_input_error(ditimpute_series("a"), "values")
  expect_input_error(ditimpute_series(matrix(1, 1, 2)), "values")
  expect_input_error(ditimpute_series(matrix(c(1, Inf), 2, 1)), "values")
  expect_input_error(ditimpute_series(matrix(1, 2, 1), time = 1:2), "time")
  t3 <- as.POSIXct("2020-01-01", tz = "UTC") + c(0, 60, 180)
  expect_input_error(ditimpute_series(matrix(1, 3, 1), time = t3), "time")
  expect_input_error(ditimpute_series(matrix(1, 3, 1), time = rev(t3)), "time")
  expect_input_error(ditimpute_series(matrix(1, 2, 1), name = 1), "name")
  expect_identical(colnames(ditimpute_series(matrix(1, 2, 3))$values), c("V1", "V2", "V3"))
})

test_that("ditimpute_series() takes a numeric vector and Date stamps", {
  s <- ditimpute_series(c(1, NA, 3, 4), time = as.Date("2020-01-01") + 0:3)
  expect_identical(dim(s$values), c(4L, 1L))
  expect_identical(s$freq, 86400)
  expect_equal(s$time[1], as.POSIXct("2020-01-01", tz = "UTC"))
  expect_input_error(ditimpute_series(1:4, time = "2020-01-01"), "time")
})
