# How much of a long series does impute_series(calibrate = TRUE) actually
# hide? Each calibration round hides stretches of observed values, with
# lengths drawn from the series' own gaps, until `share` of each variable's
# observed values are hidden (default min(0.1, max(missing share, 0.02)));
# series_calibration_mask() in rpkg/R/series_calibrate.R. Until 2026-11-29 a
# round also stopped at its 100th stretch (that version's figures:
# bench/results/series_calibration_share_cap100_2026-11-29.md). On bench/series_long.R's first repetition of
# each long series (its gaps hidden, the series' own kept): the share asked,
# the share one round's mask hides, the stretches it holds and the series'
# mean gap length. No imputation is run.
# Usage: Rscript bench/series_calibration_share.R [reps] [data_dir]
# Writes bench/results/series_calibration_share.md.
source(file.path("bench", "series_long_pm25_setup.R"))  # args, reps, data_dir, fmt, write_result
source(file.path("bench", "series_long_parts.R"))
parts <- series_long_parts(60)
ns <- asNamespace("ditimpute")
res <- series_repetitions(parts, data_dir, reps, names(parts$series), function(g, name, r) {
  miss <- matrix(is.na(as.numeric(g$y)), ncol = 1)
  runs <- rle(miss[, 1])
  lens <- runs$lengths[runs$values]
  share <- min(0.1, max(mean(miss), 0.02))  # calibrate_series()'s default
  mask <- ns$with_local_seed(r, ns$series_calibration_mask(miss, lens, share))
  data.frame(series = name, rep = r, frames = nrow(miss), asked = share, hidden = sum(mask) / sum(!miss),
             stretches = sum(rle(mask[, 1])$values), mean_gap = mean(lens))
})
lines <- c("| series | rep | frames | share asked | share hidden | stretches | mean gap length |",
           "|---|---|---|---|---|---|---|",
           sprintf("| %s | %d | %d | %.3f | %.3f | %d | %.1f |", res$series, res$rep, res$frames, res$asked, res$hidden,
                   res$stretches, res$mean_gap))
write_result("series_calibration_share",
             "# How much a self-calibration round hides on the long series (issue 27)",
             sprintf("%d repetition(s) of bench/series_long.R's gaps in each of its six series, one calibration mask each", reps),
             lines)
