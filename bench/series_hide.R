# bench/series.R's gaps, shared with the benches that re-use them
# (bench/series_model_class.R): 10% random holes over all entries, or one
# interior gap per variable of 10% of the series (at least two seasons' worth,
# capped at a quarter, at least 6 frames). Returns the T x d mask.
# Source from the repository root: source("bench/series_hide.R").
hide <- function(y, kind, seed) {
  set.seed(seed)
  v <- as.matrix(y)
  n <- nrow(v)
  miss <- matrix(FALSE, n, ncol(v))
  if (kind == "random") {
    miss[sample(length(miss), round(0.1 * length(miss)))] <- TRUE
  } else {
    len <- max(round(0.1 * n), min(2 * stats::frequency(y), n %/% 4), 6)
    for (j in seq_len(ncol(v))) {
      s <- sample(2:(n - len), 1)  # interior: interpolation needs both ends
      miss[s:(s + len - 1), j] <- TRUE
    }
  }
  miss
}
