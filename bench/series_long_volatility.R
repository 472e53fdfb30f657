# Prototype (not a package feature): would a local volatility scale make
# impute_series()'s Gaussian intervals sharper where the standardised errors
# are heavy-tailed (ETT, PM2.5)? Per hidden value, v = local RMS of the
# observed one-frame differences within W frames either side (on the model's
# scale) over the series' RMS of them; z = standardised error as in
# series_long_tails.R. If the heavy tails are volatility clustering, z / v^a
# has a kurtosis nearer 3, and the interval that covers 90% of a group
# (oracle scale: the 90% quantile of |z / v^a|, times v^a per value) is
# narrower on average than the one that scales |z| alone.
# Usage: Rscript bench/series_long_volatility.R [reps] [data_dir] [series,...]
source(file.path("bench", "series_long_pm25_setup.R"))
source(file.path("bench", "series_long_parts.R"))
parts <- series_long_parts(60)
picked <- series_picked(args, "series_long_volatility")
W <- 48L
local_vol <- function(y) {
  d2 <- c(NA, diff(y))^2
  ok <- is.finite(d2)
  cs <- cumsum(ifelse(ok, d2, 0)); cn <- cumsum(ok)
  n <- length(y)
  hi <- pmin(seq_len(n) + W, n); lo <- pmax(seq_len(n) - W, 1L)
  s <- cs[hi] - c(0, cs)[lo]; k <- cn[hi] - c(0, cn)[lo]
  sqrt(s / pmax(k, 1)) / sqrt(mean(d2[ok]))
}
res <- series_repetitions(parts, data_dir, reps, picked$names, function(g, name, r) {
  fit <- parts$gp_run(g$y)
  v <- local_vol(fitted_scale(g$y, fit$transform))
  data.frame(series = name, rep = r, group = g$grp, v = v[g$h],
             z = standardised_errors(g$truth, fit$lower[g$h], fit$upper[g$h], fit$transform))
})
res <- res[is.finite(res$z) & is.finite(res$v) & res$v > 0, ]
lines <- c("| series | group | values | a | kurtosis | oracle 90% width / a=0's | coverage 50% / 99% at the oracle 90% scale |",
           "|---|---|---|---|---|---|---|")
for (s in unique(res$series)) for (gr in c("all", levels(res$group))) {
  sel <- res$series == s & (gr == "all" | res$group == gr)
  z <- res$z[sel]; v <- res$v[sel]
  w0 <- NA
  for (a in c(0, 0.5, 1)) {
    u <- z / v^a
    q <- stats::quantile(abs(u), 0.9)
    w <- mean(q * v^a)
    if (a == 0) w0 <- w
    c50 <- mean(abs(u) < q * stats::qnorm(0.75) / stats::qnorm(0.95))
    c99 <- mean(abs(u) < q * stats::qnorm(0.995) / stats::qnorm(0.95))
    lines <- c(lines, sprintf("| %s | %s | %d | %.1f | %.1f | %.3f | %.3f / %.3f |", s, gr, length(z), a,
                              mean(u^4) / mean(u^2)^2, w / w0, c50, c99))
  }
}
write_result(picked$result, "# Local volatility scale for the intervals: a prototype measurement (issue 27)",
             sprintf("%d repetitions of bench/series_long.R's gaps in %s, impute_series() at its settings; W = %d",
                     reps, paste(picked$names, collapse = ", "), W),
             lines, script = "series_long_volatility")
