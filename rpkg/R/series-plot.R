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
#' @param variables Which variables (indices or names); by default up to the first 8.
#' @param from,to Optional range of frames (row numbers) to draw.
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
ggplot_series_imputation <- function(x, variables = NULL, from = 1, to = NULL, ...) {
  check_dots(environment(), "plot()")
  vars <- colnames(x$x)
  n_time <- nrow(x$x)
  if (is.null(variables)) variables <- seq_len(min(8, length(vars)))
  if (is.character(variables)) variables <- match(variables, vars)
  if (!is.numeric(variables) || anyNA(variables) || any(variables < 1 | variables > length(vars))) {
    abort_input("variables", sprintf("must be variable indices in 1..%d or names of the variables.", length(vars)))
  }
  from <- check_count(from, max = n_time)
  to <- if (is.null(to)) n_time else check_count(to, min = from, max = n_time)
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
    ggplot2::labs(x = "time", y = "value", title = sprintf("Imputed by %s", x$method),
                  subtitle = sprintf("imputed values with their %g%% per-entry intervals", 100 * x$level)) +
    plot_theme()
  if (has_truth) {
    p <- p + ggplot2::geom_point(data = miss, ggplot2::aes(y = .data$truth, colour = "truth", shape = "truth"),
                                 size = 1.2)
  }
  p
}
