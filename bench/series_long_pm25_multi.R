# Does the rest of the station help PM2.5? bench/series_long_pm25.R found that
# no univariate form of impute_series() beats linear interpolation on
# BeijingAir's PM2.5 and guessed that other variables measured at the same
# station would. Here impute_series() gets PM2.5 with PM10, NO2 and CO
# (Dongsi, 35,064 hours) in one data frame, on bench/series_long.R's gaps in
# PM2.5 (its hide_gaps(), seeds and groups): (a) gaps in PM2.5 alone, the
# other variables observed there (a failed PM2.5 sensor); (b) the same gaps in
# all four (a station outage). MAE over linear interpolation's of the same
# PM2.5 entries by gap length, and raw 90% coverage, beside the univariate
# default on the same gaps.
# Usage: Rscript bench/series_long_pm25_multi.R [reps] [data_dir]
# Writes bench/results/series_long_pm25_multi.md.
source(file.path("bench", "series_long_pm25_setup.R"))  # args, reps, data_dir, gap helpers, beijing, fmt
vars <- c("PM2.5", "PM10", "NO2", "CO")

rows <- character(0)
for (r in seq_len(reps)) {
  y0 <- beijing$PM2.5
  h <- hide_gaps(y0, 0.15, seed = 1000 * r + nchar("BeijingAir_PM2.5"))  # bench/series_long.R's seed for PM2.5
  truth <- y0[h]
  grp <- group_of(run_len(h)[h])
  y <- y0
  y[h] <- NA
  lin <- linear(y)$point[h]
  only <- as.matrix(beijing[vars])
  only[h, 1] <- NA
  all4 <- as.matrix(beijing[vars])
  all4[h, ] <- NA
  forms <- list(`PM2.5 alone (the univariate default)` = stats::ts(y, frequency = 24),
                `with PM10, NO2, CO; gaps in PM2.5 only` = stats::ts(only, frequency = 24),
                `with PM10, NO2, CO; gaps in all four` = stats::ts(all4, frequency = 24))
  for (f in names(forms)) {
    t0 <- proc.time()[["elapsed"]]
    imp <- impute_series(forms[[f]], level = 0.9, n_samples = 50, seed = 1)
    secs <- proc.time()[["elapsed"]] - t0
    est <- as.matrix(imp$point)[h, 1]
    lo <- as.matrix(imp$lower)[h, 1]
    hi <- as.matrix(imp$upper)[h, 1]
    cover <- lo <= truth & truth <= hi
    ratio <- c(mean(abs(est - truth)) / mean(abs(lin - truth)),
               tapply(abs(est - truth), grp, mean) / tapply(abs(lin - truth), grp, mean))
    rows <- c(rows, sprintf("| %d | %s | %s | %.3f | %s | %.0f |", r, f, fmt(ratio), mean(cover),
                            fmt(tapply(cover, grp, mean)), secs))
    cat(tail(rows, 1), "\n")
  }
}
write_result("series_long_pm25_multi", "# PM2.5 with the rest of its station (bench/series_long_pm25_multi.R)",
             "bench/series_long.R's gaps in PM2.5 (15% hidden, P(L) ~ L^-1.5 on 1..400), Dongsi station",
             c("## PM2.5: MAE over linear interpolation's by gap length, raw 90% coverage", "",
               "| rep | impute_series() input | all | 1 | 2-5 | 6-20 | 21-60 | >60 | cover all | 1 | 2-5 | 6-20 | 21-60 | >60 | seconds |",
               "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|", rows))
