# How much of a long series does impute_series(calibrate = TRUE) actually
# hide? Each calibration round hides stretches of observed values, with
# lengths drawn from the series' own gaps, until `share` of each variable's
# observed values are hidden (default min(0.1, max(missing share, 0.02)));
# series_calibration_mask() in rpkg/R/series_calibrate.R. Until 2026-11-29 a
# round also stopped at its 100th stretch (that version's figures:
# bench/results/series_calibration_share_cap100_2026-11-29.md). On each repetition of bench/series_long.R's
# gaps in each long series (its gaps hidden, the series' own kept): the share asked,
# the share one round's mask hides, the stretches it holds and the series'
# mean gap length, and the time the mask takes against its run-list path
# throughout (the baseline). No imputation is run.
# Usage: Rscript bench/series_calibration_share.R [reps] [data_dir]
# Writes bench/results/series_calibration_share.md.
source(file.path("bench", "series_long_pm25_setup.R"))  # args, reps, data_dir, fmt, write_result
source(file.path("bench", "series_long_parts.R"))
parts <- series_long_parts(60)
ns <- asNamespace("ditimpute")
timed <- function(expr) {
  t0 <- proc.time()[["elapsed"]]
  value <- expr
  list(value = value, seconds = proc.time()[["elapsed"]] - t0)
}
# The mask as calibrate_series() draws it, and on the run-list path throughout
# (max_runs = Inf: the baseline, exact path), same seed.
both_paths <- function(miss, lens, share, seed, exact = TRUE) {
  d <- timed(ns$with_local_seed(seed, ns$series_calibration_mask(miss, lens, share)))
  e <- if (exact) timed(ns$with_local_seed(seed, ns$series_calibration_mask(miss, lens, share, max_runs = Inf)))
  # The former rule: at most 100 stretches a round (the same draws until then).
  capped <- ns$with_local_seed(seed, ns$series_calibration_mask(miss, lens, share, max_runs = Inf, max_stretches = 100))
  list(mask = d$value, seconds = d$seconds, seconds_exact = if (exact) e$seconds else NA,
       same = if (exact) identical(d$value, e$value) else NA,
       capped = sum(capped) / sum(!miss), same_capped = identical(d$value, capped))
}
res <- series_repetitions(parts, data_dir, reps, names(parts$series), function(g, name, r) {
  miss <- matrix(is.na(as.numeric(g$y)), ncol = 1)
  runs <- rle(miss[, 1])
  lens <- runs$lengths[runs$values]
  share <- min(0.1, max(mean(miss), 0.02))  # calibrate_series()'s default
  m <- both_paths(miss, lens, share, r)
  data.frame(series = name, rep = r, frames = nrow(miss), gaps = length(lens), asked = share,
             hidden = sum(m$mask) / sum(!miss), stretches = sum(rle(m$mask[, 1])$values), mean_gap = mean(lens),
             seconds = m$seconds, seconds_exact = m$seconds_exact, same = m$same, capped = m$capped,
             same_capped = m$same_capped)
})
# Many gaps: 10% of the frames missing at random (bench/series_scaling.R's
# share), one mask; the exact path only up to 150,000 frames (its time grows
# with the square of the number of gaps).
synthetic <- do.call(rbind, lapply(c(15000, 150000, 600000), function(n_time) {
  miss <- ns$with_local_seed(1, matrix(stats::runif(n_time) < 0.1, ncol = 1))
  runs <- rle(miss[, 1])
  lens <- runs$lengths[runs$values]
  share <- min(0.1, max(mean(miss), 0.02))
  m <- both_paths(miss, lens, share, 1, exact = n_time <= 150000)
  data.frame(series = sprintf("random 10%%, %d frames", n_time), rep = 1L, frames = n_time, gaps = length(lens),
             asked = share, hidden = sum(m$mask) / sum(!miss), stretches = sum(rle(m$mask[, 1])$values),
             mean_gap = mean(lens), seconds = m$seconds, seconds_exact = m$seconds_exact, same = m$same,
             capped = m$capped, same_capped = m$same_capped)
}))
res <- rbind(res, synthetic)
yes_no <- function(v) ifelse(is.na(v), "", ifelse(v, "yes", "no"))
lines <- c(paste("| series | rep | frames | gaps | share asked | share hidden | stretches | mean gap length | seconds |",
                 "seconds, exact path | ratio | same mask | share hidden, cap 100 | same mask as cap 100 |"),
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
           sprintf("| %s | %d | %d | %d | %.3f | %.3f | %d | %.1f | %.3f | %s | %s | %s | %.3f | %s |", res$series, res$rep,
                   res$frames, res$gaps, res$asked, res$hidden, res$stretches, res$mean_gap, res$seconds,
                   ifelse(is.na(res$seconds_exact), "not run", sprintf("%.3f", res$seconds_exact)),
                   ifelse(is.na(res$seconds_exact), "", sprintf("%.2f", res$seconds / res$seconds_exact)),
                   yes_no(res$same), res$capped, yes_no(res$same_capped)),
           "", "## Summary by series", "",
           "| series | masks | share hidden | share hidden, cap 100 | masks the cap changed |", "|---|---|---|---|---|",
           vapply(split(res, factor(res$series, unique(res$series))), function(d)
             sprintf("| %s | %d | %.3f-%.3f | %.3f-%.3f | %d |", d$series[1], nrow(d), min(d$hidden), max(d$hidden),
                     min(d$capped), max(d$capped), sum(!d$same_capped)), ""))
write_result("series_calibration_share",
             "# How much a self-calibration round hides on the long series (issue 27)",
             sprintf(paste("%d repetition(s) of bench/series_long.R's gaps in each of its six series, one calibration mask each;",
                           "then series with 10%% of the frames missing at random. `seconds`: the mask as calibrate() draws it;",
                           "`exact path`: the same seed on the run-list path throughout (max_runs = Inf), the baseline;",
                           "`same mask`: the two are identical; `cap 100`: the same seed with the former cap of 100",
                           "stretches a round"), reps),
             lines)
