# One look for every ggplot of the package: the same colours for observed,
# imputed and true values (and for raw / calibrated coverage), the same
# interval fill, a legend that names them, and theme_bw().

plot_colours <- c(observed = "grey25", imputed = "#0072B2", truth = "#D55E00")
plot_shapes <- c(observed = 16, imputed = 16, truth = 4)
coverage_colours <- c(raw = "grey45", calibrated = "#0072B2", regions = "#0072B2", intervals = "#D55E00")

# Colour and shape scales for values: one merged legend with the kinds drawn.
value_scales <- function(kinds) {
  kinds <- intersect(names(plot_colours), kinds)
  list(ggplot2::scale_colour_manual(values = plot_colours[kinds], breaks = kinds, name = NULL),
       ggplot2::scale_shape_manual(values = plot_shapes[kinds], breaks = kinds, name = NULL))
}

# The interval band's fill, with its level in the legend.
# The interval bands' fill (and, for ribbons that map it, alpha) at one
# level, keyed "interval", or at several, keyed by their labels ("80%
# interval", ...; the widest the lightest, drawn first under the others).
interval_scale <- function(level) {
  label <- paste0(format_percent_label(level), "% interval")
  key <- if (length(level) == 1) "interval" else label
  list(ggplot2::scale_fill_manual(values = stats::setNames(rep(unname(plot_colours["imputed"]), length(key)), key),
                                  breaks = key, labels = label, name = NULL),
       ggplot2::scale_alpha_manual(values = stats::setNames(seq(0.25, 0.12, length.out = length(key)), key),
                                   breaks = key, labels = label, name = NULL))
}

# Runs of consecutive missing frames of one length: a ribbon has no width
# there, so those intervals are drawn as vertical line ranges.
single_frame_runs <- function(run) {
  n <- table(run)
  run %in% as.integer(names(n)[n == 1])
}

plot_theme <- function() ggplot2::theme_bw() + ggplot2::theme(legend.position = "bottom")

# A plot title wrapped at 90 characters: a model's description ran off a
# knitted page (series plots, calibration curves).
wrapped_title <- function(text) paste(strwrap(text, width = 90), collapse = "\n")

# plot() methods draw, as base R's do (also inside a loop or a function,
# where a returned ggplot would not be printed), and return the ggplot
# invisibly, to be extended and printed again; autoplot() returns it undrawn.
drawn <- function(p) {
  print(p)
  invisible(p)
}
