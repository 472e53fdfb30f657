#' Plot an imputation
#'
#' Draws each variable of one sequence over time: observed values as points,
#' the imputed point estimate with its per-entry interval band on the missing
#' entries (a vertical line range where a gap is one frame long, so that its
#' interval shows), and the true values there when known. The colours and
#' the legend are those of every plot of the package: observed grey,
#' imputed blue, truth orange crosses.
#'
#' @param x An imputation from [impute()].
#' @param sequence Which sequence of an array to draw.
#' @param variables Which variables (indices or names); by default up to the first 8.
#' @param ... Unused: a named argument here is an input error.
#' @return The ggplot object, invisibly, after drawing it (add layers and
#'   print it to change the plot; [autoplot.ditimpute_imputation()] returns it
#'   without drawing).
#' @examples
#' spec <- gp_spec(48, d = 2, kernel = gp_kernel("laplace", lengthscale = 20))
#' truth <- gp_simulate(spec, 1, seed = 1)[1, , ]
#' x <- truth
#' x[30:40, ] <- NA
#' plot(impute(spec, x, n_samples = 200, truth = truth, seed = 2))
#' @export
plot.ditimpute_imputation <- function(x, sequence = 1, variables = NULL, ...) {
  drawn(ggplot_imputation(x, sequence, variables, ...))
}

# The ggplot of plot.ditimpute_imputation() (and autoplot()).
ggplot_imputation <- function(x, sequence = 1, variables = NULL, ..., .fn = "plot()") {
  check_dots(environment(), .fn)
  x <- as3(x)
  n <- dim(x$x)[1]
  sequence <- check_count(sequence, max = n)
  names_all <- variable_names(x)
  if (is.null(variables)) variables <- seq_len(min(8, length(names_all)))
  if (is.character(variables)) variables <- match(variables, names_all)
  if (!is.numeric(variables) || anyNA(variables) || any(variables < 1 | variables > length(names_all))) {
    abort_input("variables", sprintf("must be variable indices in 1..%d or names of the variables.", length(names_all)))
  }
  df <- as.data.frame(x)
  df <- df[df$sequence == sequence & df$variable %in% names_all[variables], , drop = FALSE]
  # Runs are found along each variable's frames (as.data.frame() orders by frame, then variable).
  df <- df[order(df$variable, df$frame), , drop = FALSE]
  miss <- df[df$missing, , drop = FALSE]
  obs <- df[!df$missing, , drop = FALSE]
  # Estimate and band only where values are missing; break lines between gaps.
  # (none in a complete sequence, which impute() passes through)
  miss$run <- if (nrow(miss)) cumsum(c(1, diff(miss$frame) != 1 | diff(as.integer(miss$variable)) != 0)) else integer()
  single <- miss[single_frame_runs(miss$run), , drop = FALSE]
  # The estimate's line over runs of two frames or more (a single frame is a
  # point, with its interval a bar: a one-point line is a ggplot warning; a
  # one-point band draws nothing and keeps the band's legend).
  runs <- miss[!single_frame_runs(miss$run), , drop = FALSE]
  has_truth <- !is.null(x$truth)
  # A deterministic imputer (impute_baseline()) has no intervals: no band.
  band <- if (any(is.finite(miss$lower))) list(
    ggplot2::geom_ribbon(data = miss, ggplot2::aes(ymin = .data$lower, ymax = .data$upper, group = .data$run,
                                                   fill = "interval"), alpha = 0.3),
    ggplot2::geom_linerange(data = single, ggplot2::aes(ymin = .data$lower, ymax = .data$upper),
                            colour = plot_colours[["imputed"]], alpha = 0.6, linewidth = 1.2))
  p <- ggplot2::ggplot(df, ggplot2::aes(x = .data$frame)) + band +
    ggplot2::geom_line(data = runs, ggplot2::aes(y = .data$estimate, group = .data$run),
                       colour = plot_colours[["imputed"]]) +
    ggplot2::geom_point(data = miss, ggplot2::aes(y = .data$estimate, colour = "imputed", shape = "imputed"),
                        size = 1) +
    ggplot2::geom_point(data = obs, ggplot2::aes(y = .data$observed, colour = "observed", shape = "observed"),
                        size = 0.8) +
    ggplot2::facet_wrap(~variable, scales = "free_y") +
    value_scales(c("observed", "imputed", if (has_truth) "truth")) + interval_scale(x$level) +
    ggplot2::labs(x = "frame", y = "value",
                  title = sprintf("Imputation by %s (sequence %d)", x$method, sequence),
                  subtitle = if (!nrow(miss)) {
                    "nothing missing here: the data as given"
                  } else if (length(band)) {
                    sprintf("imputed: %s of the samples with its %g%% per-entry interval", x$point_type, 100 * x$level)
                  } else {
                    "imputed values (a deterministic imputer: no intervals)"
                  }) +
    plot_theme()
  if (has_truth) {
    p <- p + ggplot2::geom_point(data = miss, ggplot2::aes(y = .data$truth, colour = "truth", shape = "truth"),
                                 size = 1.5)
  }
  p
}
