#' Plot missing patterns with their condition numbers
#'
#' Draws one row per pattern (missing frames as coloured boxes over the `H`
#' frames), with `kappa(Sigma_cond)` written beside each row, like the
#' paper's Figure 2.
#'
#' @param x A pattern set ([paper_patterns()]) or a list of frame-level patterns
#'   of the same length `H`.
#' @param spec Model for the condition numbers; by default a Laplace kernel of
#'   lengthscale 128 on the plain index with `Lambda = I` (the paper's setting).
#' @param main Title.
#' @param ... Passed to [graphics::plot()].
#' @return `x`, invisibly.
#' @examples
#' plot(paper_patterns())
#' plot(structure(list(A = pattern_tail(48, 8), B = pattern_random(48, 8, seed = 1)),
#'                class = "ditimpute_pattern_set"))
#' @export
plot.ditimpute_pattern_set <- function(x, spec = NULL, main = "Missing patterns", ...) {
  if (length(x) == 0) abort_input("x", "has no pattern to plot.")
  H <- x[[1]]$H
  if (any(vapply(x, function(p) p$H != H || is.null(p$frames), TRUE))) {
    abort_input("x", "patterns must all be frame-level and of the same length H.")
  }
  if (is.null(spec)) spec <- gp_spec(H, d = 1, kernel = gp_kernel("laplace", lengthscale = 128))
  kap <- kappa_cond(spec, unclass(x))
  nms <- if (is.null(names(x))) paste0("P", seq_along(x)) else names(x)
  k <- length(x)
  cols <- grDevices::hcl.colors(max(k, 2), "Dark 3")[seq_len(k)]
  old <- graphics::par(mar = c(4, 4, 3, 9), xpd = NA)
  on.exit(graphics::par(old))
  graphics::plot(NA, xlim = c(0.5, H + 0.5), ylim = c(k + 0.5, 0.5), yaxt = "n", xlab = "frame",
                 ylab = "", main = main, ...)
  graphics::axis(2, at = seq_len(k), labels = nms, las = 1)
  for (i in seq_len(k)) {
    graphics::segments(0.5, i, H + 0.5, i, col = "grey70")
    f <- x[[i]]$frames
    graphics::rect(f - 0.5, i - 0.3, f + 0.5, i + 0.3, col = cols[i], border = NA)
    graphics::text(H + 2, i, sprintf("%s  kappa = %.2f", nms[i], kap[i]), adj = 0, col = cols[i])
  }
  invisible(x)
}
