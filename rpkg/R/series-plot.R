#' Plot a series imputation
#'
#' One panel per variable over the series' time axis, in the style of
#' imputeTS's `ggplot_na_imputations()`: the observed values as a line with
#' points, the imputed values in colour with their interval band over each
#' gap (a vertical line range over a gap of one frame, where a band has no
#' width), and the true values there when known. Colours and legend are those
#' of [plot.ditimpute_imputation()]: observed grey, imputed blue, truth
#' orange crosses.
#'
#' @param x A result of [impute_series()].
#' @param variables Which variables (indices or names); by default up to the
#'   first 8 (the plot's caption says when there are more).
#' @param from,to Optional range to draw: frames (row numbers), or time stamps
#'   (`Date`/`POSIXct`, for a series with such a time axis: from the first
#'   frame at or after `from` to the last at or before `to`).
#' @param ... Unused: a named argument here is an input error.
#' @return The ggplot object, invisibly, after drawing it (add layers and
#'   print it to change the plot; [autoplot.ditimpute_imputation()] returns it
#'   without drawing).
#' @examples
#' y <- datasets::co2
#' y[c(100:130, sample(468, 30))] <- NA
#' plot(impute_series(y, n_samples = 30, seed = 1), from = 60, to = 180)
#' @export
plot.ditimpute_series_imputation <- function(x, variables = NULL, from = 1, to = NULL, ...) {
  drawn(ggplot_series_imputation(x, variables, from, to, ...))
}

# The ggplot of plot.ditimpute_series_imputation() (and autoplot()).
ggplot_series_imputation <- function(x, variables = NULL, from = 1, to = NULL, ..., .fn = "plot()") {
  check_dots(environment(), .fn)
  vars <- colnames(x$x)
  n_time <- nrow(x$x)
  cut_vars <- is.null(variables) && length(vars) > 8
  if (is.null(variables)) variables <- seq_len(min(8, length(vars)))
  if (is.character(variables)) variables <- match(variables, vars)
  if (!is.numeric(variables) || anyNA(variables) || any(variables < 1 | variables > length(vars))) {
    abort_input("variables", sprintf("must be variable indices in 1..%d or names of the variables.", length(vars)))
  }
  from <- plot_frame(from, x$time, "from")
  to <- if (is.null(to)) n_time else plot_frame(to, x$time, "to")
  if (to < from) abort_input("to", sprintf("is before `from` (frame %d against %d).", to, from))
  # Tens of thousands of frames take ggplot tens of seconds to draw (26-31 s
  # for 100,000 frames with 10% in holes, in a user review): say how to look
  # at a window.
  if (to - from + 1 > 20000) {
    cli::cli_inform(c(i = sprintf("Drawing %s frames takes a while; plot(x, from = , to = ) draws a window of them.",
                                  format(to - from + 1, big.mark = ","))),
                    class = "ditimpute_message_long_plot")
  }
  rows <- from:to
  time <- x$time[rows]
  if (inherits(time, "Date")) time <- as.POSIXct(time)
  df <- do.call(rbind, lapply(variables, function(j) {
    data.frame(time = time, frame = rows, variable = vars[j], value = x$point[rows, j], missing = x$missing[rows, j],
               lower = x$lower[rows, j], upper = x$upper[rows, j],
               truth = if (is.null(x$truth)) NA_real_ else x$truth[rows, j])
  }))
  df$variable <- factor(df$variable, levels = vars[variables])
  # A gap's band and line include the observed neighbours on each side, so the
  # imputed stretch joins the observed line.
  df$run <- cumsum(c(1, diff(df$missing) != 0 | diff(as.integer(df$variable)) != 0))
  miss <- df[df$missing, , drop = FALSE]
  single <- miss[single_frame_runs(miss$run), , drop = FALSE]
  has_truth <- !is.null(x$truth)
  p <- ggplot2::ggplot(df, ggplot2::aes(x = .data$time)) +
    ggplot2::geom_line(ggplot2::aes(y = .data$value, group = .data$variable), colour = "grey60", linewidth = 0.3) +
    ggplot2::geom_ribbon(data = miss, ggplot2::aes(ymin = .data$lower, ymax = .data$upper, group = .data$run,
                                                   fill = "interval"), alpha = 0.25) +
    ggplot2::geom_linerange(data = single, ggplot2::aes(ymin = .data$lower, ymax = .data$upper),
                            colour = plot_colours[["imputed"]], alpha = 0.6, linewidth = 1.2) +
    ggplot2::geom_point(data = df[!df$missing, ], ggplot2::aes(y = .data$value, colour = "observed",
                                                               shape = "observed"), size = 0.7) +
    ggplot2::geom_point(data = miss, ggplot2::aes(y = .data$value, colour = "imputed", shape = "imputed"),
                        size = 0.9) +
    ggplot2::facet_wrap(~variable, ncol = 1, scales = "free_y") +
    value_scales(c("observed", "imputed", if (has_truth) "truth")) + interval_scale(x$level) +
    ggplot2::labs(x = "time", y = "value", title = wrapped_title(sprintf("Imputed by %s", x$method)),
                  subtitle = sprintf("imputed values with their %g%% per-entry intervals", 100 * x$level),
                  caption = if (cut_vars) sprintf("the first 8 of %d variables; choose others with `variables =`",
                                                  length(vars))) +
    plot_theme()
  if (has_truth) {
    p <- p + ggplot2::geom_point(data = miss, ggplot2::aes(y = .data$truth, colour = "truth", shape = "truth"),
                                 size = 1.2)
  }
  p
}

# A plot's `from` or `to` as a frame number: a row number, or a time stamp
# (Date/POSIXct) on a series with such a time axis (`from`: the first frame
# at or after it; `to`: the last at or before it).
plot_frame <- function(v, time, arg, call = rlang::caller_env()) {
  n_time <- length(time)
  if (!inherits(v, c("Date", "POSIXt"))) {
    if (!is.numeric(v) || length(v) != 1 || is.na(v) || v != round(v) || v < 1 || v > n_time) {
      # A time of a ts (its own numeric times: 1975 of a yearly series) is
      # not read as a frame: the message gives the frame it is.
      hint <- ""
      if (is.numeric(v) && length(v) == 1 && !is.na(v) && is.numeric(time) && !identical(as.numeric(time), as.numeric(seq_len(n_time))) &&
          v >= min(time) && v <= max(time)) {
        k <- if (arg == "from") which(time >= v - 1e-9)[1] else utils::tail(which(time <= v + 1e-9), 1)
        hint <- sprintf("; the series' time %s is frame %d: %s = %d", format(v), k, arg, k)
      }
      abort_input(arg, sprintf("must be a frame (a row number, 1 to %d) or, on a series with dates, a Date or POSIXct time stamp%s.",
                               n_time, hint), call = call)
    }
    return(as.integer(v))
  }
  if (!inherits(time, c("Date", "POSIXt"))) {
    abort_input(arg, "is a date, but the series' time axis is not: give a frame (row number).", call = call)
  }
  if (length(v) != 1 || is.na(v)) abort_input(arg, "must be one time stamp or one frame (row number).", call = call)
  t <- as.numeric(as.POSIXct(time))
  # a Date is midnight in the series' own time zone (as.POSIXct() of a Date
  # is UTC midnight: a New York series' window began at 20:00 the day before)
  tz <- if (inherits(time, "POSIXt")) attr(as.POSIXct(time), "tzone") %||% "" else "UTC"
  s <- as.numeric(if (inherits(v, "Date")) as.POSIXct(format(v), tz = tz) else as.POSIXct(v))
  k <- if (arg == "from") which(t >= s)[1] else utils::tail(which(t <= s), 1)
  if (!length(k) || is.na(k)) {
    abort_input(arg, sprintf("is %s, outside the series (%s to %s).", format(v), format(time[1]), format(time[n_time])),
                call = call)
  }
  k
}
