# The 150 x 4 series of bench/dit_series_defaults.R and bench/series_reuse.R:
# the first 150 trading days of EuStockMarkets on the log scale (`v`), 10% of
# its entries hidden in gaps of 1-5 days (`hide`, seed 1), and the series with
# them missing (`x`). Source from the repository root.
eustock_gaps <- function() {
  v <- log(unclass(EuStockMarkets)[1:150, ])
  set.seed(1)
  hide <- matrix(FALSE, nrow(v), ncol(v))
  while (mean(hide) < 0.10) {
    j <- sample(ncol(v), 1); len <- sample(5, 1); s <- sample(nrow(v) - len, 1)
    hide[s + seq_len(len) - 1, j] <- TRUE
  }
  x <- v
  x[hide] <- NA
  list(v = v, hide = hide, x = x)
}
