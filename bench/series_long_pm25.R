# Why impute_series() loses to linear interpolation on BeijingAir's PM2.5
# (bench/results/series_long.md: 1.03-1.05x on gaps over 5 frames), on
# bench/series_long.R's gaps (its hide_gaps(), seeds and groups, sourced from
# it): (1) the GP with the model forms and scales impute_series() can be told
# to use, as MAE ratios to linear interpolation of the same entries by gap
# length, with raw 90% coverage; (2) a nearest-observation fill (the MAE-best
# fill if the series moved in jumps) against linear interpolation on every
# long series of that bench.
# Usage: Rscript bench/series_long_pm25.R [reps] [data_dir]
# Writes bench/results/series_long_pm25.md.
source(file.path("bench", "series_long_pm25_setup.R"))  # args, reps, data_dir, gap helpers, beijing, fmt
ett <- function(name) utils::read.csv(gzfile(file.path(data_dir, "ett", paste0(name, ".csv.gz"))))$OT
series <- list(ETTh1_OT = ett("ETTh1"), ETTh2_OT = ett("ETTh2"), BeijingAir_PM2.5 = beijing$PM2.5,
               BeijingAir_O3 = beijing$O3, treering = as.numeric(datasets::treering),
               sunspot.month = as.numeric(datasets::sunspot.month))
gaps <- function(name, r) {
  y0 <- series[[name]]
  h <- hide_gaps(y0, 0.15, seed = 1000 * r + nchar(name))
  y <- y0
  y[h] <- NA
  list(y0 = y0, y = y, h = h, truth = y0[h], grp = group_of(run_len(h)[h]), lin = linear(y)$point[h])
}

variants <- list(`default ("auto": Box-Cox)` = list(), `transform = "none"` = list(transform = "none"),
                 `model = "level", kernel = "smooth"` = list(model = "level", kernel = "smooth"),
                 `model = "trend"` = list(model = "trend"))
rows1 <- character(0)
for (r in seq_len(reps)) {
  g <- gaps("BeijingAir_PM2.5", r)
  y <- stats::ts(g$y, frequency = 24)
  for (v in names(variants)) {
    t0 <- proc.time()[["elapsed"]]
    imp <- do.call(impute_series, c(list(y, level = 0.9, n_samples = 50, seed = 1), variants[[v]]))
    secs <- proc.time()[["elapsed"]] - t0
    est <- as.numeric(imp$point)[g$h]
    cover <- as.numeric(imp$lower)[g$h] <= g$truth & g$truth <= as.numeric(imp$upper)[g$h]
    ratio <- c(mean(abs(est - g$truth)) / mean(abs(g$lin - g$truth)),
               tapply(abs(est - g$truth), g$grp, mean) / tapply(abs(g$lin - g$truth), g$grp, mean))
    rows1 <- c(rows1, sprintf("| %d | %s | %s | %s | %.0f |", r, v, fmt(ratio), fmt(tapply(cover, g$grp, mean)), secs))
    cat(tail(rows1, 1), "\n")
  }
}
rows2 <- character(0)
for (name in names(series)) for (r in 1:2) {
  g <- gaps(name, r)
  ok <- which(!is.na(g$y))
  nn <- stats::approx(ok, g$y[ok], xout = seq_along(g$y), rule = 2, method = "constant", f = 0.5)$y[g$h]
  ratio <- c(mean(abs(nn - g$truth)) / mean(abs(g$lin - g$truth)),
             tapply(abs(nn - g$truth), g$grp, mean) / tapply(abs(g$lin - g$truth), g$grp, mean))
  rows2 <- c(rows2, sprintf("| %s | %d | %s |", name, r, fmt(ratio)))
}
write_result("series_long_pm25", "# PM2.5 against linear interpolation (bench/series_long_pm25.R)",
             "bench/series_long.R's gaps (15% hidden, P(L) ~ L^-1.5 on 1..400)",
             c("## BeijingAir PM2.5 (Dongsi): impute_series() forms, MAE over linear interpolation's by gap length, raw 90% coverage", "",
               "| rep | impute_series() arguments | all | 1 | 2-5 | 6-20 | 21-60 | >60 | cover 1 | 2-5 | 6-20 | 21-60 | >60 | seconds |",
               "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|", rows1, "",
               "## Nearest observation (each hidden value takes the closer gap end) over linear interpolation, MAE", "",
               "| series | rep | all | 1 | 2-5 | 6-20 | 21-60 | >60 |", "|---|---|---|---|---|---|---|---|", rows2))
