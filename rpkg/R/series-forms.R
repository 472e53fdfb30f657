# A series in the user's own form: the time axis of a data frame (a Date or
# POSIXct column, a column of dates as text, or columns such as Month and Day
# named by impute_series(time = )), what to say when there is none or when it
# is irregular, and truths given in the form of the imputed series.

#' @rdname impute_series
#' @param time For a data frame `x`: the column that is the time axis, or the
#'   columns to build it from, when `x` has no single `Date`/`POSIXct` column.
#'   One name: a `Date` or `POSIXct` column, a column of dates as text
#'   (`"2024-01-31"`, `"2024/01/31"`) or a numeric one (e.g. `"Year"` of an
#'   annual series). Several: columns named `Year`, `Quarter`, `Month`, `Day`,
#'   `Hour`, `Minute` (any case), or any columns named by role as
#'   `c(month = "Mo", day = "Dy")` (a quarter 1-4 stands for its first month:
#'   `time = c("Year", "Quarter")` for quarterly data); a part that is no column is given as a
#'   number, e.g. `time = c("Month", "Day", year = 1973)` for `airquality`;
#'   missing parts are month 1, day 1, hour 0. The columns named in `time`
#'   are not modelled and come back unchanged in [completed_series()].
#' @name impute_series
NULL

time_roles <- c("year", "quarter", "month", "day", "hour", "minute")

# impute_series(time = ): returns `x` with attribute "ditimpute_time" (the
# time stamps, the columns they came from, a label), which frame_input()
# takes in place of a Date column. `x` unchanged when `time` is NULL.
frame_time <- function(x, time, arg = "x", call = rlang::caller_env()) {
  if (is.null(time) || is.null(x)) return(x)
  if (!is.data.frame(x)) {
    abort_input("time", sprintf("names time columns of a data frame, but `%s` is a %s.", arg, class(x)[1]),
                call = call)
  }
  if (!(is.character(time) || is.numeric(time) || is.list(time)) || !length(time)) {
    abort_input("time", "must name the time column, or the columns to build it from (e.g. c(\"Month\", \"Day\", year = 1973)).",
                call = call)
  }
  vals <- vapply(as.list(time), function(v) {
    if (length(v) != 1 || is.na(v)) abort_input("time", "must hold single column names or numbers.", call = call)
    as.character(v)
  }, "")
  roles <- names(time)
  if (is.null(roles)) roles <- rep("", length(vals))
  is_col <- vals %in% names(x)
  if (length(vals) == 1 && roles == "") {
    if (!is_col) abort_input("time", sprintf("\"%s\" is not a column of %s%s", vals, arg, suggest_column(vals, names(x))),
                             call = call)
    return(structure(x, ditimpute_time = single_time_column(x, vals, call)))
  }
  unnamed <- roles == ""
  if (any(unnamed & !is_col)) {
    bad <- vals[unnamed & !is_col][1]
    abort_input("time", sprintf("\"%s\" is not a column of %s%s", bad, arg, suggest_column(bad, names(x))), call = call)
  }
  roles[unnamed] <- tolower(vals[unnamed])
  roles <- tolower(roles)
  if (any(!roles %in% time_roles)) {
    bad <- which(!roles %in% time_roles)[1]
    abort_input("time", sprintf("cannot tell what column \"%s\" holds: name its role, e.g. c(day = \"%s\"); roles are %s.",
                                vals[bad], vals[bad], paste(time_roles, collapse = ", ")), call = call)
  }
  if (anyDuplicated(roles)) abort_input("time", sprintf("gives the %s twice.", roles[anyDuplicated(roles)]), call = call)
  parts <- list()
  for (k in seq_along(vals)) {
    v <- if (is_col[k]) x[[vals[k]]] else suppressWarnings(as.numeric(vals[k]))
    what <- if (is_col[k]) sprintf("column \"%s\"", vals[k]) else sprintf("the %s", roles[k])
    if (!is.numeric(v) || anyNA(v) || any(!is.finite(v)) || any(v != round(v))) {
      row <- if (is.numeric(v) && length(v) > 1) which(is.na(v) | !is.finite(v) | v != round(v))[1] else NA
      abort_input("time", sprintf("%s must hold whole numbers%s.", what,
                                  if (is.na(row)) "" else sprintf(" (row %d holds %s)", row, format(v[row]))),
                  call = call)
    }
    parts[[roles[k]]] <- rep_len(v, nrow(x))
  }
  if (!is.null(parts$quarter)) {
    # a quarter starts its first month (quarterly data: frames 3 months apart)
    q <- parts$quarter
    if (!is.null(parts$month)) abort_input("time", "gives both a quarter and a month: name one of them.", call = call)
    if (any(q < 1 | q > 4)) {
      row <- which(q < 1 | q > 4)[1]
      abort_input("time", sprintf("the quarter must be 1-4 (row %d holds %s).", row, format(q[row])), call = call)
    }
    parts$month <- 3 * (q - 1) + 1
  }
  if (is.null(parts$year)) {
    cols <- paste0('"', vals[is_col], '"', collapse = ", ")
    abort_input("time", sprintf("gives no year: add a Year column or the year itself, e.g. time = c(%s, year = 2020).",
                                cols), call = call)
  }
  p <- function(role, default) if (is.null(parts[[role]])) rep(default, nrow(x)) else parts[[role]]
  clock <- !is.null(parts$hour) || !is.null(parts$minute)
  text <- sprintf("%04d-%02d-%02d", as.integer(p("year", 1)), as.integer(p("month", 1)), as.integer(p("day", 1)))
  stamps <- if (clock) {
    as.POSIXct(sprintf("%s %02d:%02d:00", text, as.integer(p("hour", 0)), as.integer(p("minute", 0))),
               format = "%Y-%m-%d %H:%M:%S", tz = "UTC")
  } else {
    as.Date(text, format = "%Y-%m-%d")
  }
  if (anyNA(stamps)) {
    i <- which(is.na(stamps))[1]
    abort_input("time", sprintf("row %d gives no valid date (year-month-day %s).", i, text[i]), call = call)
  }
  structure(x, ditimpute_time = list(time = stamps, columns = vals[is_col],
                                     what = sprintf("the time stamps built from %s",
                                                    paste0("column", if (sum(is_col) > 1) "s " else " ",
                                                           paste0('"', vals[is_col], '"', collapse = ", ")))))
}

# One column named as the time axis: Date/POSIXct as it is, dates as text
# parsed, numbers as a numeric axis.
single_time_column <- function(x, col, call) {
  v <- x[[col]]
  if (is.factor(v)) v <- as.character(v)
  if (is.character(v)) {
    parsed <- parse_text_dates(v)
    if (is.null(parsed)) {
      abort_input("time", sprintf("column \"%s\" holds text that is not dates like \"2024-01-31\" or date-times like \"2024-01-31 13:00\"; convert it with as.Date(format = ) or as.POSIXct().",
                                  col), call = call)
    }
    v <- parsed
  } else if (inherits(v, c("yearmon", "yearqtr"))) {
    v <- zoo_month_dates(v)
  } else if (!inherits(v, c("Date", "POSIXt")) && !is.numeric(v)) {
    abort_input("time", sprintf("column \"%s\" must hold dates, times or numbers.", col), call = call)
  }
  list(time = v, columns = col, what = sprintf("the time stamps in column \"%s\"", col))
}

# Text that is all dates (NA allowed, at least one value) -> Date; all
# date-times ("2024-01-31 13:00", "2024-01-31T13:00:00Z", seconds optional)
# -> POSIXct in UTC (text names no zone: the clock as written, no daylight
# saving); else NULL. A date-time is not cut to its date (an hourly CSV read
# as text was "duplicated" before).
parse_text_dates <- function(v) {
  ok <- !is.na(v) & nzchar(trimws(v))
  if (!any(ok)) return(NULL)
  w <- trimws(v[ok])
  if (all(grepl("^\\d{4}([-/])\\d{1,2}\\1\\d{1,2}$", w))) {
    for (fmt in c("%Y-%m-%d", "%Y/%m/%d")) {
      d <- as.Date(v, format = fmt)
      if (!anyNA(d[ok])) return(d)
    }
    return(NULL)
  }
  if (!all(grepl("^\\d{4}([-/])\\d{1,2}\\1\\d{1,2}[ T]\\d{1,2}:\\d{2}(:\\d{2}(\\.\\d+)?)?Z?$", w))) return(NULL)
  txt <- sub("Z$", "", sub("T", " ", trimws(v)))
  txt <- gsub("/", "-", txt, fixed = TRUE)
  for (fmt in c("%Y-%m-%d %H:%M:%OS", "%Y-%m-%d %H:%M")) {
    d <- as.POSIXct(txt, format = fmt, tz = "UTC")
    if (!anyNA(d[ok])) return(d)
  }
  NULL
}

# What text_date_advice() says to convert a column of text stamps with.
text_stamp_kind <- function(v) {
  if (inherits(parse_text_dates(as.character(v)), "POSIXt")) {
    list(what = "date-times", fun = "as.POSIXct", example = "as.POSIXct(%s, tz = \"UTC\")")
  } else {
    list(what = "dates", fun = "as.Date", example = "as.Date(%s)")
  }
}

# zoo's yearmon and yearqtr stamps (year + (month - 1) / 12, year + (quarter -
# 1) / 4) as the Dates of their first days: monthly and quarterly axes.
zoo_month_dates <- function(v) {
  num <- as.numeric(unclass(v))
  year <- floor(num + 1e-9)
  month <- round((num - year) * 12) + 1
  out <- as.Date(rep(NA_character_, length(num)))
  ok <- is.finite(num)
  out[ok] <- as.Date(sprintf("%04d-%02d-01", as.integer(year[ok]), as.integer(month[ok])))
  out
}

suggest_column <- function(name, cols) {
  hint <- closest_name(name, cols)
  if (is.null(hint)) "." else sprintf("; did you mean \"%s\"?", hint)
}

# Why a data frame has no time axis, and how to give it one.
frame_time_advice <- function(x, is_time) {
  if (sum(is_time) > 1) {
    cols <- names(x)[is_time]
    return(sprintf("has %d Date/POSIXct columns (%s); name the time axis with time = \"%s\".", length(cols),
                   paste0('"', cols, '"', collapse = ", "), cols[1]))
  }
  text_dates <- names(x)[vapply(x, function(v) (is.character(v) || is.factor(v)) &&
                                  !is.null(parse_text_dates(as.character(v))), TRUE)]
  if (length(text_dates)) return(text_date_advice(text_dates[1], x[[text_dates[1]]]))
  parts <- names(x)[tolower(names(x)) %in% time_roles & vapply(x, is.numeric, TRUE)]
  if (length(parts)) {
    year <- if ("year" %in% tolower(parts)) "" else ", year = 2020"
    cols <- paste0('"', parts, '"', collapse = ", ")
    arg <- if (length(parts) == 1 && !nzchar(year)) cols else sprintf("c(%s%s)", cols, year)
    return(sprintf("has no Date or POSIXct column. Build the time axis from %s with time = %s%s, or add a Date column.",
                   cols, arg, if (nzchar(year)) " (the data's own year)" else ""))
  }
  paste("needs a time axis: a Date or POSIXct column (add one, e.g.",
        "x$date <- seq(as.Date(\"2020-01-01\"), by = \"day\", length.out = nrow(x))),",
        "time = naming the columns to build it from, or the values as a ts or a matrix.")
}

text_date_advice <- function(col, v) {
  k <- text_stamp_kind(v)
  sprintf("column \"%s\" holds %s as text: convert with %s() (x$%s <- %s), or name it with time = \"%s\".",
          col, k$what, k$fun, col, sprintf(k$example, paste0("x$", col)), col)
}

# A column other than the time axis that is not numeric.
non_numeric_advice <- function(x, col) {
  v <- x[[col]]
  if ((is.character(v) || is.factor(v)) && !is.null(parse_text_dates(as.character(v)))) {
    k <- text_stamp_kind(v)
    return(sprintf("column \"%s\" holds %s as text: convert with %s() or drop it (it is not the time axis).", col,
                   k$what, k$fun))
  }
  sprintf("column \"%s\" is not numeric; drop it or convert it.", col)
}

# The spacing of a data frame's time axis: equally spaced (returns the step:
# seconds for dates and times, the unit for numbers), or an input error that
# reports the irregular step in the series' own unit and says how to complete
# a regular grid with NA rows. Consecutive months are handled by the caller.
frame_grid <- function(time, what, col, arg, call) {
  numeric_axis <- is.numeric(time) && !inherits(time, c("Date", "POSIXt"))
  if (anyNA(time)) {
    abort_input(arg, sprintf("%s are missing or invalid at row %d: drop the row%s (a blank last line of a file is one), or give its time.",
                             what, which(is.na(time))[1], if (sum(is.na(time)) > 1) sprintf("s without one (%d)", sum(is.na(time))) else ""),
                call = call)
  }
  if (length(time) < 2) abort_input(arg, "must hold at least 2 time points.", call = call)
  secs <- if (numeric_axis) as.numeric(time) else as.numeric(as.POSIXct(time))
  fmt <- function(i) if (numeric_axis) format(time[i]) else if (inherits(time, "Date")) format(time[i]) else
    format_time(time[i])
  step <- diff(secs)
  if (any(step == 0)) {
    i <- which(step == 0)[1]
    abort_input(arg, sprintf(paste0("%s are duplicated: rows %d and %d both hold %s. Keep one row per time (drop exact ",
                                    "copies, e.g. x[!duplicated(x), ], or average the rows of a time)%s."),
                             what, i, i + 1, fmt(i),
                             if (inherits(time, "POSIXt")) paste("; local clock times repeat an hour when daylight saving",
                                                                 "time ends: read them in their time zone or with UTC offsets") else ""),
                call = call)
  }
  if (any(step < 0)) {
    i <- which(step < 0)[1]
    abort_input(arg, sprintf("%s are not sorted: row %d (%s) comes after row %d (%s); sort the rows by time.", what,
                             i + 1, fmt(i + 1), i, fmt(i)), call = call)
  }
  # Date-times near 1.7e9 seconds hold about 2e-7 s: steps of a sub-second
  # clock differ by that much (0.0999999 and 0.1000001 s), so they are
  # compared to the microsecond.
  if (!numeric_axis && inherits(time, "POSIXt")) step <- round(step, 6)
  if (all(abs(step - step[1]) <= 1e-9 * abs(step[1]))) return(step[1])
  # Calendar days at one local clock time: a daily (or k-daily) series in a
  # time zone with daylight saving has 23- and 25-hour days in seconds.
  if (!numeric_axis && inherits(time, "POSIXt")) {
    days <- calendar_day_step(time)
    if (!is.null(days)) return(days * 86400)
  }
  # Calendar days at one local clock time with days absent: said in days,
  # with the grid that keeps the clock time across daylight saving ("DSTday":
  # by = "1 day" steps 24 hours and leaves the clock an hour off after the
  # change, so merge() matched none of the later rows).
  if (!numeric_axis && inherits(time, "POSIXt") && length(unique(format(time, "%H:%M:%OS6"))) == 1) {
    dd <- diff(as.numeric(as.Date(format(time, "%Y-%m-%d"))))
    if (all(dd >= 1)) {
      tab_d <- table(dd)
      usual_d <- as.numeric(names(tab_d)[which.max(tab_d)])
      if (all(dd %% usual_d == 0)) {
        i <- which(dd != usual_d)[1]
        by <- if (usual_d == 1) "DSTday" else sprintf("%d DSTdays", as.integer(usual_d))
        fix <- if (!is.null(col)) {
          sprintf(" Complete a regular grid with NA rows at the same clock time, e.g. grid <- data.frame(%s = seq(min(x$%s), max(x$%s), by = \"%s\")); x <- merge(grid, x, all.x = TRUE).",
                  col, col, col, by)
        } else {
          " Complete a regular grid: add the missing days as rows of NA values."
        }
        abort_input(arg, sprintf("%s are not equally spaced: rows %d and %d are %s apart, the most common step %s (%d of %d).%s",
                                 what, i, i + 1, plural(dd[i], "calendar day"), plural(usual_d, "calendar day"),
                                 max(tab_d), length(dd), fix), call = call)
      }
    }
  }
  # The usual step is the most common one (the shortest when no two are
  # equal); a longer one is missing rows.
  tab <- table(step)
  usual <- if (max(tab) == 1) min(step) else as.numeric(names(tab)[which.max(tab)])
  i <- which(abs(step - usual) > 1e-9 * usual)[1]
  unit <- if (numeric_axis) function(s) format(s) else if (inherits(time, "Date")) function(s) plural(s / 86400, "day") else
    describe_seconds
  fix <- if (all(abs(step / usual - round(step / usual)) < 1e-9)) {
    if (!is.null(col) && !numeric_axis) {
      by <- if (inherits(time, "Date")) plural(usual / 86400, "day") else describe_seconds(usual)
      sprintf(" Complete a regular grid with NA rows, e.g. grid <- data.frame(%s = seq(min(x$%s), max(x$%s), by = \"%s\")); x <- merge(grid, x, all.x = TRUE).",
              col, col, col, by)
    } else {
      " Complete a regular grid: add the missing time points as rows of NA values."
    }
  } else {
    " impute_series() needs a regular grid: aggregate or interpolate the times onto one, with NA where nothing was observed."
  }
  # business or trading days: the grid above would add weekends that never
  # exist and impute them (a review)
  if (!numeric_axis && inherits(time, "Date") && abs(usual - 86400) < 1) {
    fix <- paste(fix, paste("If the absent days never have values (business or trading days), give the values without",
                            "the time column instead (a matrix or vector: each row one step)."))
  }
  if (max(tab) == 1) {  # no usual step to name ("most rows 141" of six different steps)
    abort_input(arg, sprintf("%s are not equally spaced: no two steps between consecutive rows are equal (from %s to %s).%s",
                             what, unit(min(step)), unit(max(step)), fix), call = call)
  }
  abort_input(arg, sprintf("%s are not equally spaced: rows %d and %d are %s apart, the most common step %s (%d of %d).%s",
                           what, i, i + 1, unit(step[i]), unit(usual), max(tab), length(step), fix), call = call)
}

# The step in days of date-times that fall at one local clock time on
# equally spaced calendar days (in the stamps' own time zone), or NULL.
calendar_day_step <- function(time) {
  if (length(unique(format(time, "%H:%M:%OS6"))) != 1) return(NULL)
  dd <- diff(as.numeric(as.Date(format(time, "%Y-%m-%d"))))
  if (length(dd) && all(dd == dd[1]) && dd[1] >= 1) dd[1] else NULL
}

# Calendar stamps (series.R's calendar_months(): one day of the month, or
# month ends) whose usual step of k months is broken somewhere: an input
# error in months, or NULL when the stamps are not of that kind.
check_month_gaps <- function(time, what, col, arg, call) {
  m <- if (length(time) >= 3) calendar_months(time)
  if (is.null(m)) return(NULL)
  dm <- diff(m)
  if (any(dm < 1)) return(NULL)
  tab <- table(dm)
  usual <- as.numeric(names(tab)[which.max(tab)])
  if (all(dm == usual)) return(NULL)
  i <- which(dm != usual)[1]
  by <- switch(as.character(usual), `1` = "month", `3` = "quarter", `12` = "year", sprintf("%d months", usual))
  month_end <- length(unique(as.POSIXlt(time)$mday)) > 1
  fix <- if (any(dm %% usual != 0)) {
    " impute_series() needs a regular grid: aggregate the values onto one, with NA where nothing was observed."
  } else if (!is.null(col) && !month_end) {
    sprintf(" Complete a regular grid with NA rows, e.g. grid <- data.frame(%s = seq(min(x$%s), max(x$%s), by = \"%s\")); x <- merge(grid, x, all.x = TRUE).",
            col, col, col, by)
  } else {
    sprintf(" Complete a regular grid: add the missing %ss as rows of NA values.", if (usual %in% c(1, 3, 12)) by else "time point")
  }
  abort_input(arg, sprintf("%s are not equally spaced: rows %d and %d are %s apart, the most common step %s (%d of %d).%s",
                           what, i, i + 1, plural(dm[i], "month"), plural(usual, "month"), max(tab), length(dm), fix),
              call = call)
}

plural <- function(n, unit) {
  sprintf("%s %s", format(n), if (n == 1) unit else if (grepl("[^aeiou]y$", unit)) sub("y$", "ies", unit) else paste0(unit, "s"))
}

describe_seconds <- function(s) {
  if (s %% 86400 == 0) return(plural(s / 86400, "day"))
  if (s %% 3600 == 0) return(plural(s / 3600, "hour"))
  if (s %% 60 == 0) return(plural(s / 60, "min"))
  plural(s, "sec")
}

# The imputed variables' columns of a data frame or named matrix given in the
# form of a series imputation's x (truth, hidden), as a matrix; a variable
# missing among the names is an input error naming `arg`.
series_named_columns <- function(x, vars, arg, call) {
  absent <- setdiff(vars, colnames(x))
  if (length(absent)) {
    abort_input(arg, sprintf("has no column \"%s\"; the imputed variables are %s.", absent[1],
                             paste0('"', vars, '"', collapse = ", ")), call = call)
  }
  if (is.data.frame(x)) as.matrix(x[vars]) else x[, vars, drop = FALSE]
}

# The true values of the imputed variables `vars` from a data frame `truth`
# (T x length(vars), by name): a variable's column all NA (logical, as a
# column of NA is) is a truth not known; an absent column (a misspelled
# name would otherwise score nothing silently) or one that is neither
# numbers nor all NA is an input error. The rows are the series' frames, in
# its order (the time axis is the series', not read again from `truth`).
series_truth_frame <- function(truth, vars, arg, call, ref = NULL, time = NULL) {
  absent <- setdiff(vars, names(truth))
  if (length(absent)) {
    abort_input(arg, sprintf(paste("has no column \"%s\"; the imputed variables are %s (a column of NA says a",
                                   "truth is not known)."), absent[1], paste0('"', vars, '"', collapse = ", ")),
                call = call)
  }
  series_truth_rows(truth, vars, arg, call, ref, time)
  cols <- lapply(vars, function(nm) {
    col <- truth[[nm]]
    if (all(is.na(col))) return(rep(NA_real_, nrow(truth)))
    if (!is.numeric(col)) {
      abort_input(arg, sprintf("column \"%s\" must hold numbers (or be all NA: a truth not known).", nm), call = call)
    }
    as.numeric(col)
  })
  m <- matrix(unlist(cols), nrow(truth), length(vars), dimnames = list(NULL, vars))
  check_no_nan_inf(m, arg, call = call)
  m
}

# A truth data frame's rows must be the series' frames in order: its columns
# other than the variables that x also has (`ref`, x's data frame: its time
# stamps, the columns a time was built from, covariates), or its one Date or
# POSIXct column against the series' stamps `time`, agree wherever both are
# known; else an input error (a truth sorted otherwise was scored on the
# wrong rows).
series_truth_rows <- function(truth, vars, arg, call, ref = NULL, time = NULL) {
  same <- function(a, b) {
    if (length(a) != length(b)) return(TRUE)  # the shape check says what is wrong
    if (inherits(a, c("Date", "POSIXt"))) a <- as.numeric(as.POSIXct(a))
    if (inherits(b, c("Date", "POSIXt"))) b <- as.numeric(as.POSIXct(b))
    if (!is.numeric(a) || !is.numeric(b)) return(TRUE)
    ok <- !is.na(a) & !is.na(b)
    all(abs(a[ok] - b[ok]) <= 1e-9 * pmax(1, abs(b[ok])))
  }
  bad <- NULL
  if (is.data.frame(ref)) {
    for (nm in setdiff(intersect(names(truth), names(ref)), vars)) if (!same(truth[[nm]], ref[[nm]])) bad <- c(bad, nm)
  } else if (!is.null(time)) {
    stamps <- names(truth)[vapply(truth, function(col) inherits(col, c("Date", "POSIXt")), TRUE)]
    if (length(stamps) == 1 && !same(truth[[stamps]], time)) bad <- stamps
  }
  if (length(bad)) {
    abort_input(arg, sprintf(paste("has its rows in another order than the series' frames: its column \"%s\" differs",
                                   "from x's. Give the truth's rows in x's order."), bad[1]), call = call)
  }
}

# `v` (a T x d matrix from `arg`) shaped as the imputed series, or an input error.
check_series_shape <- function(v, object, arg, call) {
  if (!identical(as.integer(dim(v)), as.integer(dim(object$x)))) {
    abort_input(arg, sprintf("has %d time points x %d variables; the imputed series has %d x %d.", nrow(v), ncol(v),
                             nrow(object$x), ncol(object$x)), call = call)
  }
  unname(v)
}

# A mask of entries to score (`hidden` of imputation_metrics()) for a series
# imputation in the form of its `x`: a logical vector or ts (one variable),
# a T x d logical matrix, or a logical matrix or data frame whose columns
# include the imputed variables by name (is.na() of a data frame with its
# time column) -> the T x d logical matrix.
series_hidden <- function(object, hidden, arg = "hidden", call = rlang::caller_env()) {
  if (is.null(hidden) || !inherits(object, "ditimpute_series_imputation")) return(hidden)
  vars <- colnames(object$x)
  if (length(dim(hidden)) == 3) return(hidden)  # the internal n x H x d form
  # columns by name (a time column or others may come along)
  if (!is.null(colnames(hidden))) hidden <- series_named_columns(hidden, vars, arg, call)
  if (is.null(dim(hidden))) hidden <- matrix(as.vector(hidden), ncol = 1)
  if (!is.logical(hidden)) abort_input(arg, "must be logical (TRUE = score), in the form of the imputed x.", call = call)
  check_series_shape(hidden, object, arg, call)
}

# A truth given for a series imputation in the form of its `x` (a ts, a
# vector, a matrix, a ditimpute_series, or a data frame holding the imputed
# variables by name, with its time column) -> the T x d matrix of values.
series_truth <- function(object, truth, arg = "truth", call = rlang::caller_env()) {
  if (is.null(truth) || !inherits(object, "ditimpute_series_imputation")) return(truth)
  vars <- colnames(object$x)
  check_no_nan_inf(if (is.data.frame(truth)) truth[intersect(vars, names(truth))] else truth, arg, call = call)
  if (is.data.frame(truth)) {
    v <- series_truth_frame(truth, vars, arg, call, time = object$time)
  } else if (is.numeric(truth) && length(dim(truth)) == 3) {
    return(truth)  # the internal n x H x d form
  } else {
    v <- series_input(truth, arg, call)$values
  }
  storage.mode(v) <- "double"
  check_series_shape(v, object, arg, call)
}
