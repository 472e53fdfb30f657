# Real data: the `ditimpute_series` class and the readers of the paper's two
# data sets (BeijingAir, ETT). The files themselves stay outside the package.

beijing_vars <- c("PM2.5", "PM10", "SO2", "NO2", "CO", "O3", "TEMP", "PRES", "DEWP", "RAIN", "WSPM")
ett_vars <- c("HUFL", "HULL", "MUFL", "MULL", "LUFL", "LULL", "OT")

#' Multivariate time series on a regular grid
#'
#' A `ditimpute_series` is what the readers return: a list with
#' * `values`: a `T x p` numeric matrix (rows are time stamps, columns
#'   variables, named), `NA` = missing;
#' * `time`: the `T` time stamps, `POSIXct` (the readers' labelled UTC; your
#'   own keep their time zone, dates become midnight UTC), strictly increasing
#'   and equally spaced;
#' * `freq`: the spacing of the time stamps in seconds (3600 for hourly data);
#' * `name`: a label for printing.
#'
#' `ditimpute_series()` builds one from your own matrix; `summary()` gives the
#' share of missing values and the mean and sd of each variable;
#' `as.data.frame()` gives a data frame with a `time` column first.
#'
#' @param values A numeric `T x p` matrix (or data frame of numeric columns,
#'   or a numeric vector: one variable), `NA` = missing.
#' @param time `POSIXct` time stamps (or `Date`s: days at midnight UTC), one
#'   per row, strictly increasing and equally spaced. Without them the rows
#'   are hours from 1970-01-01 UTC.
#' @param name A label.
#' @param x,object A `ditimpute_series`.
#' @param ... Unused: a named argument here is an input error.
#' @return An object of class `ditimpute_series`; `summary()` returns a data
#'   frame (class `summary.ditimpute_series`) with one row per variable.
#' @seealso [read_beijing_air()], [read_ett()], [make_windows()], [split_by_time()]
#' @examples
#' s <- ditimpute_series(cbind(a = c(1, NA, 3, 4), b = 1:4),
#'   time = as.POSIXct("2020-01-01", tz = "UTC") + 3600 * (0:3), name = "toy")
#' s
#' summary(s)
#' @export
ditimpute_series <- function(values, time = NULL, name = "series") {
  if (is.data.frame(values)) values <- as.matrix(values)
  if (is.numeric(values) && is.null(dim(values))) values <- matrix(values, ncol = 1)  # one variable
  if (!is.matrix(values) || !is.numeric(values) || nrow(values) < 2 || ncol(values) < 1) {
    abort_input("values", "must be a numeric matrix with at least 2 rows and 1 column.")
  }
  check_no_nan_inf(values, "values")  # NA marks a missing value (errors.R)
  if (is.null(colnames(values))) colnames(values) <- paste0("V", seq_len(ncol(values)))
  if (is.null(time)) time <- as.POSIXct(0, origin = "1970-01-01", tz = "UTC") + 3600 * (seq_len(nrow(values)) - 1)
  if (inherits(time, "Date")) time <- as.POSIXct(format(time), tz = "UTC")  # days at midnight UTC
  if (!inherits(time, "POSIXct") || length(time) != nrow(values)) {
    abort_input("time", sprintf("must be POSIXct (or Date) time stamps, one for each of the %d rows.", nrow(values)))
  }
  if (!is.character(name) || length(name) != 1) abort_input("name", "must be a single string.")
  freq <- check_time_grid(time, "time")
  storage.mode(values) <- "double"
  rownames(values) <- NULL
  new_series(values, time, name, freq)
}

new_series <- function(values, time, name, freq) {
  # time as given (a Date became midnight UTC above): as.POSIXct(time, tz = "UTC")
  # relabelled a POSIXct's own zone on R >= 4.3 and kept it before (a review)
  structure(list(values = values, time = time, name = name, freq = freq),
            class = "ditimpute_series")
}

# Time stamps must be strictly increasing and equally spaced (windows assume a
# regular grid); returns the spacing in seconds.
check_time_grid <- function(time, arg, what = "time stamps", call = rlang::caller_env()) {
  if (anyNA(time)) {
    abort_input(arg, sprintf("%s are missing or invalid at row %d.", what, which(is.na(time))[1]), call = call)
  }
  if (length(time) < 2) abort_input(arg, "must hold at least 2 time stamps.", call = call)
  step <- diff(as.numeric(time))
  if (any(step == 0)) {
    i <- which(step == 0)[1]
    abort_input(arg, sprintf("%s are duplicated: rows %d and %d both hold %s.", what, i, i + 1,
                             format_time(time[i])), call = call)
  }
  if (any(step < 0)) {
    i <- which(step < 0)[1]
    abort_input(arg, sprintf("%s are not sorted: row %d (%s) comes after row %d (%s).", what, i + 1,
                             format_time(time[i + 1]), i, format_time(time[i])), call = call)
  }
  if (any(step != step[1])) {
    i <- which(step != step[1])[1]
    months <- inherits(time, c("Date", "POSIXt")) && !is.null(calendar_step(time))
    abort_input(arg, sprintf("%s are not equally spaced: %s seconds between rows %d and %d, %s before.%s",
                             what, format(step[i]), i, i + 1, format(step[1]),
                             if (months) paste(" They step by calendar months, which impute_series() takes; windows",
                                               "need a fixed step: leave `time` out (frames are then numbered).") else ""),
                call = call)
  }
  step[1]
}

# A time stamp as its own clock reads it (its time zone, named), not in UTC:
# an error about 14:00 EDT said 18:00 before.
format_time <- function(t) {
  if (!inherits(t, "POSIXt")) return(format(t))
  tz <- attr(t, "tzone")[1]
  if (is.null(tz) || is.na(tz)) tz <- ""
  format(t, "%Y-%m-%d %H:%M:%S", tz = tz, usetz = TRUE)
}

describe_freq <- function(freq) {
  known <- c(`60` = "1 minute", `900` = "15 minutes", `1800` = "30 minutes", `3600` = "hourly", `86400` = "daily")
  if (as.character(freq) %in% names(known)) known[[as.character(freq)]] else sprintf("every %s s", format(freq))
}

#' @rdname ditimpute_series
#' @export
print.ditimpute_series <- function(x, ...) {
  check_dots(environment(), "print()", also = print_dots)
  v <- x$values
  cat(sprintf("<ditimpute_series> %s: %d time stamps x %d variables, %s from %s to %s (UTC)\n",
              x$name, nrow(v), ncol(v), describe_freq(x$freq), format_time(x$time[1]),
              format_time(x$time[length(x$time)])))
  cat(sprintf("%.2f%% of the values missing\n", 100 * mean(is.na(v))))
  invisible(x)
}

#' @rdname ditimpute_series
#' @export
summary.ditimpute_series <- function(object, ...) {
  check_dots(environment(), "summary()")
  v <- object$values
  out <- data.frame(
    variable = colnames(v),
    missing = colMeans(is.na(v)),
    mean = colMeans(v, na.rm = TRUE),
    sd = apply(v, 2, stats::sd, na.rm = TRUE),
    min = suppressWarnings(apply(v, 2, min, na.rm = TRUE)),
    max = suppressWarnings(apply(v, 2, max, na.rm = TRUE)),
    row.names = NULL
  )
  out[out$missing == 1, c("mean", "min", "max")] <- NA
  structure(out, class = c("summary.ditimpute_series", "data.frame"), series_name = object$name)
}

#' @export
print.summary.ditimpute_series <- function(x, ...) {
  check_dots(environment(), "print()", also = print_dots)
  cat(sprintf("Variables of %s (missing = share of missing values):\n", attr(x, "series_name")))
  print(structure(x, class = "data.frame"), digits = 4, row.names = FALSE)
  invisible(x)
}

#' @rdname ditimpute_series
#' @param row.names,optional Ignored (as for other `as.data.frame()` methods).
#' @export
as.data.frame.ditimpute_series <- function(x, row.names = NULL, optional = FALSE, ...) {
  check_dots(environment(), "as.data.frame()", valid = c("row.names", "optional", "stringsAsFactors"))
  data.frame(time = x$time, x$values, check.names = FALSE)
}

#' Read the BeijingAir and ETT data sets
#'
#' `read_beijing_air()` reads the Beijing Multi-Site Air-Quality data (UCI):
#' one CSV file per monitoring site (gzipped or not), columns `year`, `month`,
#' `day`, `hour`, the eleven numeric variables `PM2.5`, `PM10`, `SO2`, `NO2`,
#' `CO`, `O3`, `TEMP`, `PRES`, `DEWP`, `RAIN`, `WSPM`, the wind direction `wd`
#' and the site's name `station`. The sites are put side by side, in the
#' alphabetical order of their names: with the 12 sites that is the paper's
#' "BeijingAir", 35,064 hourly time stamps x 132 variables named
#' `"<site>.<variable>"`. The wind direction is categorical (16 compass
#' points), so it has no place among the Gaussian variables; with
#' `wind = TRUE` it comes back separately as `wd`, a `T x sites` character
#' matrix. Time stamps are built from year, month, day and hour as `POSIXct`
#' in UTC (the files hold Beijing local time, which has no daylight saving
#' time, so UTC labels keep every hour once). All sites must share the same
#' time stamps.
#'
#' `read_ett()` reads one file of the Electricity Transformer Temperature data
#' (ETTh1, ETTh2, ETTm1, ETTm2): columns `date` (`"YYYY-mm-dd HH:MM:SS"`),
#' `HUFL`, `HULL`, `MUFL`, `MULL`, `LUFL`, `LULL`, `OT`. Hourly and 15-minute
#' files load alike; `freq` records the spacing. The dates are the files'
#' local clock readings, labelled UTC as BeijingAir's are; a date ending in a
#' UTC offset (`"2016-07-01 00:00:00+08:00"`, `"-0130"`, `"Z"`) is read as
#' that instant in UTC (`2016-06-30 16:00:00 UTC`), and a `"T"` between the
#' day and the hour is taken as a space.
#'
#' Both readers check the files and raise an error of class
#' `ditimpute_error_input` naming `file` or `dir` when a file is missing or
#' unreadable, a column is missing, a numeric column holds something that is
#' not a number (`NA` and empty fields are missing values), or the time stamps
#' are invalid, duplicated, unsorted or not equally spaced.
#'
#' @param dir Directory holding the per-site files (`*.csv` or `*.csv.gz`).
#' @param sites Optional names of the sites to read (as in the `station`
#'   column, e.g. `"Dongsi"`), kept in alphabetical order; `NULL` reads all
#'   files of `dir`. Only files whose names contain a site's name are read
#'   when each site has one; otherwise all files are read.
#' @param wind If `TRUE`, also return the wind direction (`wd`).
#' @param file Path of an ETT file (`.csv` or `.csv.gz`).
#' @return A [ditimpute_series] (for `read_beijing_air(wind = TRUE)` with an
#'   extra element `wd`).
#' @seealso [make_windows()], [split_by_time()], [load_real_data()]
#' @examples
#' # A two-row ETT file, written on the spot (the real files are not shipped):
#' f <- tempfile(fileext = ".csv")
#' writeLines(c("date,HUFL,HULL,MUFL,MULL,LUFL,LULL,OT",
#'              "2016-07-01 00:00:00,5.8,2.0,1.6,0.46,4.2,1.34,30.5",
#'              "2016-07-01 01:00:00,5.7,2.1,NA,0.43,4.1,1.37,27.8"), f)
#' read_ett(f)
#' \dontrun{
#' air <- read_beijing_air("shared/data/beijing_air")
#' summary(air)
#' }
#' @export
read_beijing_air <- function(dir, sites = NULL, wind = FALSE) {
  if (!is.character(dir) || length(dir) != 1 || !dir.exists(dir)) {
    abort_input("dir", sprintf("must be an existing directory, not %s.", deparse1(dir)))
  }
  if (!is.null(sites) && (!is.character(sites) || length(sites) < 1 || anyNA(sites) || anyDuplicated(sites))) {
    abort_input("sites", "must be NULL or distinct site names.")
  }
  if (!isTRUE(wind) && !isFALSE(wind)) abort_input("wind", "must be TRUE or FALSE.")
  files <- sort(list.files(dir, pattern = "\\.csv(\\.gz)?$", full.names = TRUE))
  if (!is.null(sites)) {
    # File names usually carry the site (PRSA_Data_<site>_...): read only those
    # when every site matches one; otherwise read all and keep by `station`.
    hits <- vapply(sites, function(site) grepl(site, basename(files), fixed = TRUE), logical(length(files)))
    hits <- matrix(hits, nrow = length(files))
    if (all(colSums(hits) >= 1)) files <- files[rowSums(hits) > 0]
  }
  if (length(files) == 0) abort_input("dir", sprintf("holds no .csv or .csv.gz file%s.",
                                                     if (is.null(sites)) "" else " of the given sites"))
  need <- c("year", "month", "day", "hour", beijing_vars, "station", if (wind) "wd")
  parts <- lapply(files, function(f) {
    tab <- read_csv_checked(f, need, arg = "dir")
    station <- unique(tab$station)
    if (length(station) != 1 || is.na(station) || station == "") {
      abort_input("dir", sprintf("file %s must name one station in column \"station\".", basename(f)))
    }
    stamp <- numeric_columns(tab, c("year", "month", "day", "hour"), f, arg = "dir")
    time <- ISOdatetime(stamp[, "year"], stamp[, "month"], stamp[, "day"], stamp[, "hour"], 0, 0, tz = "UTC")
    # ISOdatetime() rolls hour 24 over to the next day; an invalid hour must fail instead.
    time[!stamp[, "hour"] %in% 0:23] <- NA
    list(station = station, time = time, values = numeric_columns(tab, beijing_vars, f, arg = "dir"),
         wd = if (wind) tab$wd, file = f)
  })
  stations <- vapply(parts, `[[`, "", "station")
  if (anyDuplicated(stations)) {
    abort_input("dir", sprintf("holds two files for station \"%s\".", stations[anyDuplicated(stations)]))
  }
  if (!is.null(sites)) {
    absent <- setdiff(sites, stations)
    if (length(absent)) {
      # the stations there, and the one meant when a name is near (a review: a
      # misspelled "Dongsy" listed nothing)
      hints <- unlist(lapply(absent, function(a) {
        h <- closest_name(a, sort(stations))
        if (!is.null(h)) sprintf("\"%s\" for \"%s\"", h, a)
      }))
      abort_input("sites", sprintf("no file in `dir` for site%s %s; the stations of the files read are %s.%s",
                                   if (length(absent) > 1) "s" else "", paste0('"', absent, '"', collapse = ", "),
                                   paste0('"', sort(stations), '"', collapse = ", "),
                                   if (!length(hints)) "" else sprintf(" Did you mean %s?", paste(hints, collapse = ", "))))
    }
    parts <- parts[stations %in% sites]
    stations <- stations[stations %in% sites]
  }
  parts <- parts[order(stations)]
  time <- parts[[1]]$time
  for (p in parts) {
    check_time_grid(p$time, "dir", what = sprintf("time stamps of %s", basename(p$file)))
    if (length(p$time) != length(time) || any(p$time != time)) {
      abort_input("dir", sprintf("sites must share identical time stamps; %s differs from %s.",
                                 basename(p$file), basename(parts[[1]]$file)))
    }
  }
  values <- do.call(cbind, lapply(parts, function(p) {
    colnames(p$values) <- paste(p$station, beijing_vars, sep = ".")
    p$values
  }))
  out <- new_series(values, time, name = "BeijingAir", freq = diff(as.numeric(time[1:2])))
  if (wind) {
    out$wd <- do.call(cbind, lapply(parts, `[[`, "wd"))
    colnames(out$wd) <- vapply(parts, `[[`, "", "station")
    out$wd[!is.na(out$wd) & out$wd == ""] <- NA
  }
  out
}

#' @rdname read_beijing_air
#' @export
read_ett <- function(file) {
  if (!is.character(file) || length(file) != 1 || is.na(file) || !file.exists(file) || dir.exists(file)) {
    abort_input("file", sprintf("must be an existing file, not %s.", deparse1(file)))
  }
  tab <- read_csv_checked(file, c("date", ett_vars), arg = "file")
  time <- parse_stamps(tab$date)
  check_time_grid(time, "file", what = "dates")
  name <- sub("\\.csv(\\.gz)?$", "", basename(file))
  new_series(numeric_columns(tab, ett_vars, file, arg = "file"), time, name = name,
             freq = diff(as.numeric(time[1:2])))
}

# Date-times "YYYY-mm-dd HH:MM[:SS[.s]]" (or with a "T") as POSIXct labelled
# UTC; one ending in a UTC offset ("+08:00", "+0800", "+08", "-0130", "Z",
# "UTC", "GMT") is that instant in UTC (as.POSIXct() with a format ignores
# what follows it: a review found the offsets dropped). Anything else after
# the time (" CEST", "+5:30") makes the stamp NA rather than being dropped;
# check_time_grid() reports it with its row.
parse_stamps <- function(stamp) {
  stamp <- trimws(stamp)
  pattern <- paste0("^([0-9]{4}-[0-9]{1,2}-[0-9]{1,2})[ T]([0-9]{1,2}:[0-9]{2})(:[0-9]{2}([.][0-9]*)?)?",
                    " ?(Z|UTC|GMT|[+-][0-9]{2}(:?[0-9]{2})?)?$")
  ok <- !is.na(stamp) & grepl(pattern, stamp)
  zone <- sub(pattern, "\\5", stamp[ok])
  offset <- ifelse(zone %in% c("", "Z", "UTC", "GMT"), "+0000", gsub(":", "", zone, fixed = TRUE))
  offset <- ifelse(nchar(offset) == 3, paste0(offset, "00"), offset)  # "+08" is "+0800"
  secs <- sub(pattern, "\\3", stamp[ok])
  clock <- paste0(sub(pattern, "\\1 \\2", stamp[ok]), ifelse(nzchar(secs), secs, ":00"), offset)
  time <- as.POSIXct(rep(NA_real_, length(stamp)), origin = "1970-01-01", tz = "UTC")
  time[ok] <- as.POSIXct(strptime(clock, "%Y-%m-%d %H:%M:%OS%z", tz = "UTC"))
  time
}

# Reads a CSV (gzip detected by file()) as text, so that every column can be
# checked before conversion; `need` lists the columns that must be there.
read_csv_checked <- function(file, need, arg, call = rlang::caller_env()) {
  tab <- tryCatch(
    utils::read.csv(file, colClasses = "character", check.names = FALSE, strip.white = TRUE,
                    na.strings = c("NA", "")),
    error = function(e) abort_input(arg, sprintf("%s could not be read as CSV: %s", basename(file),
                                                 conditionMessage(e)), call = call),
    warning = function(w) abort_input(arg, sprintf("%s could not be read as CSV: %s", basename(file),
                                                   conditionMessage(w)), call = call)
  )
  gone <- setdiff(need, names(tab))
  if (length(gone)) {
    abort_input(arg, sprintf("%s lacks column%s %s.", basename(file), if (length(gone) > 1) "s" else "",
                             paste0('"', gone, '"', collapse = ", ")), call = call)
  }
  if (nrow(tab) < 2) abort_input(arg, sprintf("%s must hold at least 2 rows.", basename(file)), call = call)
  tab
}

# Converts text columns to a numeric matrix; anything that is neither a
# finite number nor missing is an error that shows the first bad field.
numeric_columns <- function(tab, cols, file, arg, call = rlang::caller_env()) {
  out <- vapply(cols, function(col) {
    s <- tab[[col]]
    v <- text_numbers(s)
    bad <- !is.na(s) & !is.finite(v)
    if (any(bad)) {
      i <- which(bad)[1]
      abort_input(arg, sprintf("%s: column \"%s\" holds \"%s\" at data row %d, not a number.",
                               basename(file), col, s[i], i), call = call)
    }
    v
  }, numeric(nrow(tab)))
  if (nrow(tab) == 1) out <- matrix(out, nrow = 1, dimnames = list(NULL, cols))
  out
}
