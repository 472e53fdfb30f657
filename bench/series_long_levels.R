# Can the self-calibration repair intervals whose shape is wrong?
# bench/series_long_tails.R found ETT's standardised errors heavy-tailed
# (kurtosis 4.7-618), so impute_series()'s Gaussian intervals over-cover at
# 50% and under-cover at 99%. calibrate = TRUE rescales each gap-length
# group's intervals from held-out stretches at the level asked, so it could
# repair each level on its own. Here: bench/series_long.R's gaps and seeds in
# ETTh1 and ETTh2 OT, impute_series() at the bench's settings (n_samples 50,
# seed 1) with level 0.5 and 0.99, raw and calibrated; coverage by gap length.
# Usage: Rscript bench/series_long_levels.R [reps] [data_dir] [series,...]
# (series: bench/series_long.R's names; default ETTh1_OT,ETTh2_OT).
# Writes bench/results/series_long_levels.md (series_long_levels_<series>.md
# for other series).
source(file.path("bench", "series_long_pm25_setup.R"))  # args, reps, data_dir, fmt, write_result
source(file.path("bench", "series_long_parts.R"))
parts <- series_long_parts(60)
picked <- series_picked(args, "series_long_levels")
res <- series_repetitions(parts, data_dir, reps, picked$names, function(g, name, r) {
  runs <- expand.grid(level = c(0.5, 0.99), calibrate = c(FALSE, TRUE))
  do.call(rbind, lapply(seq_len(nrow(runs)), function(k) {
    imp <- impute_series(g$y, level = runs$level[k], n_samples = 50, seed = 1, calibrate = runs$calibrate[k])
    cover <- as.numeric(imp$lower)[g$h] <= g$truth & g$truth <= as.numeric(imp$upper)[g$h]
    data.frame(series = name, rep = r, level = runs$level[k], calibrate = runs$calibrate[k], group = g$grp,
               cover = cover, gap = paste(r, g$gap))
  }))
})
groups <- c("all", levels(res$group))
lines <- c(paste("| series | level | intervals |", paste(groups, collapse = " | "), "|"),
           paste0(paste(rep("|---", length(groups) + 3), collapse = ""), "|"))
for (s in unique(res$series)) for (level in c(0.5, 0.99)) for (calibrate in c(FALSE, TRUE)) {
  d <- res[res$series == s & res$level == level & res$calibrate == calibrate, ]
  v <- vapply(groups, function(gr) {
    x <- if (gr == "all") d else d[d$group == gr, ]
    sprintf("%.3f (%.3f)", mean(x$cover), parts$ratio_se(x$cover, rep(1, nrow(x)), x$gap))
  }, "")
  lines <- c(lines, sprintf("| %s | %g | %s | %s |", s, level, if (calibrate) "calibrate = TRUE" else "raw",
                            paste(v, collapse = " | ")))
}
write_result(picked$result,
             "# Coverage of 50% and 99% intervals, raw and self-calibrated, by gap length (issue 27)",
             sprintf("%d repetitions of bench/series_long.R's gaps in %s; coverage (SE, each hidden gap one unit)",
                     reps, paste(picked$names, collapse = ", ")), lines, script = "series_long_levels")
