# Missing patterns: which frames (or entries) of a sequence are missing.
# Internally a pattern is resolved to an H x d logical matrix, TRUE = missing.

new_pattern <- function(H, frames = NULL, entries = NULL, label = NULL) {
  if (is.null(label)) label <- if (!is.null(frames)) sprintf("%d frames", length(frames)) else "entries"
  structure(list(H = as.integer(H), frames = if (!is.null(frames)) as.integer(sort(frames)),
                 entries = entries, label = label),
            class = "ditimpute_pattern")
}

#' Missing patterns
#'
#' Generators of missing patterns for sequences of `H` frames. Frame-level
#' patterns remove whole frames; `pattern_mcar()` removes single entries.
#' Indices are 1-based.
#'
#' * `pattern_random()`: `k` distinct frames chosen uniformly at random.
#' * `pattern_blocks()`: `b` non-overlapping blocks of `L` consecutive frames,
#'   placed uniformly at random among all placements that leave at least
#'   `min_gap` observed frames between consecutive blocks.
#' * `pattern_tail()`: the last `L` frames.
#' * `pattern_frames()`: the given frames.
#' * `pattern_mcar()`: each of the `H x d` entries missing with probability `rate`,
#'   given that at least one entry is missing and one observed (a mask with
#'   nothing to impute or nothing to condition on is no case): the realised
#'   share is above `rate` when `rate * H * d` is small (about 0.078 for
#'   `rate = 0.05` on 10 x 2 frames).
#'
#' A pattern can be used wherever a function takes `missing`; so can an
#' integer vector of frames, a logical vector of length `H` (TRUE = missing),
#' a logical `H x d` matrix, or a data matrix with `NA`s.
#'
#' @param H Number of frames.
#' @param k Number of missing frames.
#' @param b,L Number and length of blocks (for the tail: its length).
#' @param min_gap Observed frames required between blocks (0 lets them touch).
#' @param frames Missing frames (1-based).
#' @param d Number of variables (entry-level patterns only).
#' @param rate Probability that an entry is missing.
#' @param seed Optional seed; without one, [set.seed()] makes draws repeatable.
#' @return An object of class `ditimpute_pattern`.
#' @seealso [paper_patterns()], [mask_strategy()], [kappa_cond()]
#' @examples
#' pattern_random(96, 16, seed = 1)
#' pattern_blocks(96, b = 4, L = 4, seed = 1)
#' pattern_tail(96, 16)
#' pattern_frames(10, c(2, 5))
#' pattern_mcar(10, d = 3, rate = 0.2, seed = 1)
#' @name patterns
NULL

#' @rdname patterns
#' @export
pattern_random <- function(H, k, seed = NULL) {
  H <- check_count(H, min = 2)
  k <- check_count(k)
  seed <- resolve_seed(seed)
  new_pattern(H, core_call(cpp_pattern_random(H, k, seed)), label = sprintf("%dx1", k))
}

#' @rdname patterns
#' @export
pattern_blocks <- function(H, b, L, min_gap = 1, seed = NULL) {
  H <- check_count(H, min = 2)
  b <- check_count(b)
  L <- check_count(L)
  min_gap <- check_count(min_gap, min = 0)
  seed <- resolve_seed(seed)
  new_pattern(H, core_call(cpp_pattern_blocks(H, b, L, min_gap, seed)), label = sprintf("%dx%d", b, L))
}

#' @rdname patterns
#' @export
pattern_tail <- function(H, L) {
  H <- check_count(H, min = 2)
  L <- check_count(L)
  new_pattern(H, core_call(cpp_pattern_tail(H, L)), label = sprintf("tail%d", L))
}

#' @rdname patterns
#' @export
pattern_frames <- function(H, frames) {
  H <- check_count(H, min = 2)
  new_pattern(H, check_frames(frames, H, arg = "frames"), label = "fixed")
}

#' @rdname patterns
#' @export
pattern_mcar <- function(H, d, rate, seed = NULL) {
  H <- check_count(H)
  d <- check_count(d)
  rate <- check_number(rate, lower = 0, upper = 1)
  seed <- resolve_seed(seed)
  new_pattern(H, entries = core_call(cpp_mask_mcar(H, d, rate, seed)), label = sprintf("mcar%g", rate))
}

check_frames <- function(frames, H, arg = "missing", call = rlang::caller_env()) {
  if (length(frames) == 0) abort_input(arg, "has no frame: give at least one frame index.", call = call)
  if (!is.numeric(frames) || any(!is.finite(frames)) || any(frames != round(frames))) {
    abort_input(arg, "frame indices must be whole numbers.", call = call)
  }
  if (any(frames < 1 | frames > H)) {
    bad <- frames[frames < 1 | frames > H][1]
    abort_input(arg, sprintf("frame index %s is outside 1..%d.", format(bad), H), call = call)
  }
  if (anyDuplicated(frames)) abort_input(arg, "frame indices must not repeat.", call = call)
  if (length(frames) >= H) abort_input(arg, "every frame is missing: nothing is observed.", call = call)
  as.integer(sort(frames))
}

#' Missing patterns P1-P4 of the paper's experiments
#'
#' Four fixed patterns of 16 missing frames for sequences of `H = 96` frames,
#' from clustered to scattered. With a Laplace kernel of lengthscale 128 on the
#' plain index and `Lambda = I`, their condition numbers `kappa(Sigma_cond)` are:
#'
#' | pattern | missing frames | kappa |
#' |---|---|---|
#' | P1 | tail block 81:96 | 394.91 |
#' | P2 | two blocks of 8: 21:28, 61:68 | 32.15 |
#' | P3 | four blocks of 4 from 11, 35, 59, 83 | 9.47 |
#' | P4 | eight pairs from 7, 19, 31, 43, 55, 67, 79, 91 | 3.00 |
#'
#' (The paper quotes 415.40 for P1 with an unstated embedding.)
#'
#' @param which Which patterns (any of 1:4).
#' @return A list of `ditimpute_pattern` objects named `P1`...`P4`, of class
#'   `ditimpute_pattern_set`; [plot()] draws them with their kappa.
#' @examples
#' pp <- paper_patterns()
#' pp$P1$frames
#' plot(pp)
#' @export
paper_patterns <- function(which = 1:4) {
  if (!is.numeric(which) || length(which) == 0 || any(!which %in% 1:4)) {
    abort_input("which", "must be a subset of 1:4.")
  }
  labels <- c("tail16", "2x8", "4x4", "8x2")
  out <- lapply(which, function(p) new_pattern(96, core_call(cpp_paper_pattern(p)), label = labels[p]))
  names(out) <- paste0("P", which)
  structure(out, class = "ditimpute_pattern_set")
}

#' @export
print.ditimpute_pattern <- function(x, ...) {
  check_dots(environment(), "print()", also = print_dots)
  if (!is.null(x$frames)) {
    cat(sprintf("<ditimpute_pattern> %s: %d of %d frames missing: %s\n", x$label, length(x$frames), x$H,
                compress_runs(x$frames)))
  } else {
    cat(sprintf("<ditimpute_pattern> %s: %d of %d entries missing (H = %d, d = %d)\n", x$label,
                sum(x$entries), length(x$entries), nrow(x$entries), ncol(x$entries)))
  }
  invisible(x)
}

#' @export
print.ditimpute_pattern_set <- function(x, ...) {
  check_dots(environment(), "print()", also = print_dots)
  cat(sprintf("<ditimpute_pattern_set> %d patterns\n", length(x)))
  for (nm in names(x)) {
    cat(sprintf("  %s: ", nm)); print(x[[nm]])
  }
  invisible(x)
}

compress_runs <- function(frames) {
  runs <- split(frames, cumsum(c(1, diff(frames) != 1)))
  paste(vapply(runs, function(r) if (length(r) == 1) format(r) else sprintf("%d:%d", r[1], r[length(r)]),
               ""), collapse = ", ")
}

# Resolves any accepted form of `missing` to an H x d logical matrix (TRUE =
# missing). `x` (a data matrix) supplies the pattern when `missing` is NULL.
resolve_missing <- function(missing, H, d, x = NULL, arg = "missing", call = rlang::caller_env()) {
  if (is.null(missing)) {
    if (is.null(x)) abort_input(arg, "give a pattern, or data with NAs where values are missing.", call = call)
    out <- is.na(x)
    # a vector of one variable's values (d = 1) gives its pattern as H x 1
    if (is.null(dim(out)) && length(out) == H * d) out <- matrix(out, H, d)
  } else if (inherits(missing, "ditimpute_pattern")) {
    if (missing$H != H) {
      abort_input(arg, sprintf("the pattern is for H = %d frames, the model has H = %d.", missing$H, H), call = call)
    }
    if (!is.null(missing$frames)) {
      out <- matrix(FALSE, H, d)
      out[missing$frames, ] <- TRUE
    } else {
      if (ncol(missing$entries) != d) {
        abort_input(arg, sprintf("the pattern has d = %d variables, the model d = %d.", ncol(missing$entries), d),
                    call = call)
      }
      out <- missing$entries
    }
  } else if (is.matrix(missing)) {
    if (!identical(dim(missing), c(as.integer(H), as.integer(d)))) {
      abort_input(arg, sprintf("a pattern matrix must be %d x %d (H x d), not %d x %d.", H, d,
                               nrow(missing), ncol(missing)), call = call)
    }
    out <- if (is.logical(missing)) missing else is.na(missing)
    if (anyNA(out)) abort_input(arg, "a logical pattern must not contain NA.", call = call)
  } else if (is.logical(missing) && length(dim(missing)) == 3) {
    # is.na() of an n x H x d array of windows: one pattern per window
    abort_input(arg, sprintf(paste("is an array of %d windows' patterns; give one pattern (a logical vector of H = %d",
                                   "frames, an H x d matrix, frame indices or a pattern object), e.g. one window's",
                                   "is.na(x[i, , ]), and sapply() over the windows for one value each."),
                             dim(missing)[1], H), call = call)
  } else if (is.logical(missing)) {
    if (length(missing) != H || anyNA(missing)) {
      abort_input(arg, sprintf("a logical pattern must have length H = %d without NA.", H), call = call)
    }
    out <- matrix(missing, H, d)
  } else if (is.numeric(missing)) {
    out <- matrix(FALSE, H, d)
    out[check_frames(missing, H, arg = arg, call = call), ] <- TRUE
  } else {
    abort_input(arg, "must be frame indices, a logical vector, an H x d matrix or a pattern.", call = call)
  }
  if (!any(out)) {
    # a 0/1 matrix is read as data (NA = missing): say how to give a mask
    zero_one <- is.matrix(missing) && is.numeric(missing) && !anyNA(missing) && all(missing %in% c(0, 1)) &&
      any(missing == 1)
    abort_input(arg, paste0("the pattern has no missing value: there is nothing to impute.",
                            if (zero_one) " A numeric matrix is read as data with NA where missing; give a 0/1 mask as logical (mask == 1)." else ""),
                call = call)
  }
  if (all(out)) abort_input(arg, "the pattern has no observed value: every entry is missing.", call = call)
  out
}

# Missing frames of a resolved pattern, or NULL when it is entry-level.
pattern_frames_of <- function(miss) {
  rows <- rowSums(miss)
  if (all(rows == 0 | rows == ncol(miss))) which(rows > 0) else NULL
}
