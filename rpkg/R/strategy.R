#' Masking strategies
#'
#' A masking strategy is a weighted mixture of pattern generators; every draw
#' picks a generator with probability proportional to its weight and draws a
#' mask from it. Strategies make the training masks of a diffusion model (the
#' paper's mixed masking).
#'
#' Generators are written as strings:
#' * `"kx1"` (e.g. `"16x1"`): `k` distinct random frames;
#' * `"bxL"` with `L > 1` (e.g. `"8x2"`): `b` random blocks of `L` frames, at
#'   least `min_gap` observed frames apart;
#' * `"tailL"` (e.g. `"tail16"`): the last `L` frames;
#' * `"mcarR"` (e.g. `"mcar0.2"`): entries missing completely at random with rate `R`
#'   (given at least one missing and one observed entry, as [pattern_mcar()]);
#' * `"vbxL"` (e.g. `"v1x16"`, `"v4x4"`): `b` blocks of `L` frames, each in one
#'   variable drawn at random, while the other variables stay observed (one
#'   sensor of several failing); blocks in the same variable are placed as
#'   `"bxL"` places frame blocks (`min_gap` apart), so they need the frames
#'   `b` frame blocks need;
#' * a `ditimpute_pattern` (e.g. from [pattern_frames()]): always those frames.
#'
#' `strategy_preset()` gives the strategies of the paper (16 missing frames):
#' `"S1"` (16x1), `"S2"` (16x1, 8x2), `"S3"` (16x1, 8x2, 4x4), `"S4"` (16x1,
#' 8x2, 4x4, 1x16), all in equal parts, and the single-pattern ones `"8x2"`,
#' `"4x4"`, `"1x16"` of its Table 2.
#'
#' @param generators A character vector of generator strings, optionally
#'   named-numeric (`c("16x1" = 1, "8x2" = 1)`: names are generators, values
#'   weights), or a list of strings and patterns.
#' @param weights Non-negative weights, one per generator (default: equal).
#' @param min_gap Observed frames between blocks for `"bxL"` and `"vbxL"` generators.
#' @param name A preset name.
#' @return An object of class `ditimpute_strategy`.
#' @seealso [draw_masks()], [paper_patterns()]
#' @examples
#' mask_strategy(c("16x1", "8x2"), weights = c(0.5, 0.5))
#' strategy_preset("S4")
#' @export
mask_strategy <- function(generators, weights = NULL, min_gap = 1) {
  if (is.numeric(generators) && !is.null(names(generators)) && is.null(weights)) {
    weights <- unname(generators)
    generators <- names(generators)
  }
  if (is.character(generators)) generators <- as.list(generators)
  if (!is.list(generators) || length(generators) == 0) {
    abort_input("generators", "must be a non-empty character vector or list of generators.")
  }
  min_gap <- check_count(min_gap, min = 0)
  gens <- lapply(generators, parse_generator, min_gap = min_gap, call = rlang::current_env())
  if (is.null(weights)) weights <- rep(1, length(gens))
  if (!is.numeric(weights) || length(weights) != length(gens) || any(!is.finite(weights)) ||
      any(weights < 0) || sum(weights) <= 0) {
    abort_input("weights", sprintf("must be %d non-negative numbers with a positive sum.", length(gens)))
  }
  new_strategy(gens, weights / sum(weights))
}

new_strategy <- function(gens, weights, name = NULL) {
  structure(list(generators = gens, weights = weights, name = name), class = "ditimpute_strategy")
}

# `call`: mask_strategy()'s frame, so that an error names mask_strategy()
# (a review: it named lapply()'s FUN() and the local zero()).
parse_generator <- function(g, min_gap, call = rlang::caller_env()) {
  if (inherits(g, "ditimpute_pattern")) {
    if (is.null(g$frames)) abort_input("generators", "a fixed pattern in a strategy must be frame-level.", call = call)
    return(list(kind = "fixed", frames = g$frames, label = "fixed"))
  }
  if (!is.character(g) || length(g) != 1) abort_input("generators", "each generator must be a single string or a pattern.", call = call)
  # counts of 0 hide nothing (refused here, not later by draw_masks() in words
  # naming its internal k or L)
  zero <- function() abort_input("generators", sprintf("\"%s\": its counts must be whole numbers from 1 to 2147483647 (0 would hide nothing).", g), call = call)
  if (grepl("^[0-9]+x1$", g)) {
    k <- suppressWarnings(as.integer(sub("x1$", "", g)))
    if (is.na(k) || k < 1) zero()
    return(list(kind = "random", k = k, label = g))
  }
  if (grepl("^v?[0-9]+x[0-9]+$", g)) {
    variable <- startsWith(g, "v")
    bl <- suppressWarnings(as.integer(strsplit(sub("^v", "", g), "x", fixed = TRUE)[[1]]))
    if (anyNA(bl) || any(bl < 1)) zero()
    return(list(kind = if (variable) "variable_blocks" else "blocks", b = bl[1], L = bl[2], min_gap = min_gap,
                label = g))
  }
  if (grepl("^tail[0-9]+$", g)) {
    L <- suppressWarnings(as.integer(sub("tail", "", g)))
    if (is.na(L) || L < 1) zero()
    return(list(kind = "tail", L = L, label = g))
  }
  if (grepl("^mcar", g)) {
    rate <- suppressWarnings(as.numeric(sub("^mcar", "", g)))
    if (is.na(rate) || rate <= 0 || rate >= 1) abort_input("generators", sprintf("\"%s\": the rate must be in (0, 1).", g), call = call)
    return(list(kind = "mcar", rate = rate, label = g))
  }
  abort_input("generators", sprintf("\"%s\" is not a generator (try \"16x1\", \"8x2\", \"tail16\", \"mcar0.2\" or \"v1x16\").", g), call = call)
}

#' @rdname mask_strategy
#' @export
strategy_preset <- function(name) {
  name <- check_string(name, core_call(cpp_strategy_preset_names()))
  s <- core_call(cpp_strategy_preset(name))
  new_strategy(s$generators, s$weights, name = name)
}

#' @export
print.ditimpute_strategy <- function(x, ...) {
  check_dots(environment(), "print()", also = print_dots)
  labels <- vapply(x$generators, function(g) g$label, "")
  title <- if (is.null(x$name)) "" else sprintf(" %s", x$name)
  cat(sprintf("<ditimpute_strategy>%s: %s\n", title,
              paste(sprintf("%s %.1f%%", labels, 100 * x$weights), collapse = " + ")))
  invisible(x)
}

#' Draw masks from a masking strategy
#'
#' @param strategy A [mask_strategy()].
#' @param n Number of masks.
#' @param H,d Frames and variables of each mask.
#' @param seed Optional seed; without one, [set.seed()] makes draws repeatable.
#' @return An `n x H x d` logical array, `TRUE` where a value is missing.
#' @examples
#' m <- draw_masks(strategy_preset("S2"), n = 4, H = 96, d = 2, seed = 1)
#' apply(m[, , 1], 1, sum)
#' @export
draw_masks <- function(strategy, n, H, d = 1, seed = NULL) {
  if (!inherits(strategy, "ditimpute_strategy")) abort_input("strategy", "must be made by mask_strategy() or strategy_preset().")
  n <- check_count(n)
  H <- check_count(H, min = 2)
  d <- check_count(d)
  seed <- resolve_seed(seed)
  core_call(cpp_draw_masks(strategy$generators, strategy$weights, n, H, d, seed))
}
