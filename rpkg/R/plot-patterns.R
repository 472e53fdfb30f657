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

#' Plot one missing pattern, or masks drawn from a masking strategy
#'
#' `plot()` of a frame-level pattern draws it as [plot.ditimpute_pattern_set()]
#' draws a set (missing frames as boxes, `kappa(Sigma_cond)` beside it); an
#' entry-level pattern ([pattern_mcar()]) is drawn as its `H x d` mask.
#' `plot()` of a [mask_strategy()] draws `n` masks of `H` frames from it, one
#' row each, with the generator that made each mask beside it: what the
#' diffusion model sees in training.
#'
#' @param x A pattern (e.g. [pattern_blocks()]) or a [mask_strategy()].
#' @param spec Model for the condition number (frame-level patterns), as in
#'   [plot.ditimpute_pattern_set()].
#' @param main Title.
#' @param H,n Frames of each drawn mask and their number (strategies).
#' @param seed Seed of the draws (strategies); `NULL` draws from R's generator.
#' @param ... Passed to [graphics::plot()].
#' @return `x`, invisibly.
#' @examples
#' plot(pattern_blocks(96, b = 4, L = 4, seed = 1))
#' plot(pattern_mcar(24, d = 3, rate = 0.2, seed = 1))
#' plot(strategy_preset("S4"), seed = 1)
#' @export
plot.ditimpute_pattern <- function(x, spec = NULL, main = x$label, ...) {
  if (!is.null(x$frames)) {
    set <- structure(stats::setNames(list(x), x$label), class = "ditimpute_pattern_set")
    plot.ditimpute_pattern_set(set, spec = spec, main = main, ...)
    return(invisible(x))
  }
  m <- x$entries
  if (!is.null(spec)) abort_input("spec", "applies to frame-level patterns only (this one is entry-level).")
  mask_image(t(m) * 1, main = main, ylab = "variable", ...)
  invisible(x)
}

#' @rdname plot.ditimpute_pattern
#' @export
plot.ditimpute_strategy <- function(x, H = 96, n = 12, seed = NULL, main = NULL, ...) {
  H <- check_count(H, min = 2)
  n <- check_count(n)
  drawn <- strategy_draws(x, H, n, resolve_seed(seed))
  if (is.null(main)) main <- sprintf("%d masks from %s", n, if (is.null(x$name)) "the strategy" else x$name)
  mask_image(drawn$rows, main = main, ylab = "", labels = drawn$labels, ...)
  invisible(x)
}

# n masks of H frames from strategy x (an n x H 0/1 matrix, 1 = missing),
# one at a time so each is named by the generator that drew it.
strategy_draws <- function(x, H, n, seed) {
  pick <- with_local_seed(seed, sample.int(length(x$generators), n, replace = TRUE, prob = x$weights))
  rows <- matrix(0, n, H)
  for (i in seq_len(n)) {
    s <- new_strategy(x$generators[pick[i]], 1)
    rows[i, ] <- draw_masks(s, n = 1, H = H, d = 1, seed = sub_seed(seed, i))[1, , 1] * 1
  }
  list(rows = rows, labels = vapply(x$generators[pick], function(g) g$label, ""))
}

# Rows of a 0/1 matrix (1 = missing) as rows of boxes over the frames.
mask_image <- function(m, main, ylab, labels = NULL, ...) {
  k <- nrow(m)
  H <- ncol(m)
  old <- graphics::par(mar = c(4, if (is.null(labels)) 4 else 6, 3, 1))
  on.exit(graphics::par(old))
  graphics::plot(NA, xlim = c(0.5, H + 0.5), ylim = c(k + 0.5, 0.5), yaxt = "n", xlab = "frame",
                 ylab = ylab, main = main, ...)
  graphics::axis(2, at = seq_len(k), labels = if (is.null(labels)) seq_len(k) else labels, las = 1)
  col <- unname(plot_colours["imputed"])
  for (i in seq_len(k)) {
    graphics::segments(0.5, i, H + 0.5, i, col = "grey70")
    f <- which(m[i, ] > 0)
    if (length(f)) graphics::rect(f - 0.5, i - 0.3, f + 0.5, i + 0.3, col = col, border = NA)
  }
}
