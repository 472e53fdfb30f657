# Gaps of heavy-tailed lengths (1-300 frames, ceiling(Exp(mean 12)^1.3)) hiding
# about `share` of each column of `v`, placed uniformly; seeded. Shared by
# bench/series_fit_speed_case.R and bench/series_time_split.R.
hide_gaps <- function(v, share, seed) {
  set.seed(seed)
  for (j in seq_len(ncol(v))) {
    n <- nrow(v)
    while (mean(is.na(v[, j])) < share) {
      len <- min(300L, ceiling(stats::rexp(1, 1 / 12)^1.3))
      s <- sample.int(n - len, 1)
      v[s:(s + len - 1L), j] <- NA
    }
  }
  v
}
