# impute_series()'s warning when the series changes beyond its fitting
# stretch (fit_frames, default 6,000): on a 100,000-frame series whose noise
# grows fivefold after its first half (the gaps all in the noisy half, so the
# fit takes the quiet stretch: a user review's case, 90% intervals covering
# 30%), on the same series without the change, and on five real long series
# (ETTh1's OT and HUFL, BeijingAir Dongsi's PM2.5, TEMP and O3) where nothing
# should be said. Prints each case's seconds and whether it warned.
# Usage: DITIMPUTE_DATA=<dir> Rscript bench/series_fit_stretch_check.R
suppressPackageStartupMessages(library(ditimpute))
source(file.path("bench", "hide_gaps.R"))
data_dir <- Sys.getenv("DITIMPUTE_DATA", file.path("..", "shared", "data"))
run <- function(label, x, ...) {
  ws <- character()
  t0 <- proc.time()[["elapsed"]]
  imp <- withCallingHandlers(impute_series(x, threads = 1, seed = 1, level = 0.9, ...),
                             warning = function(w) { ws <<- c(ws, conditionMessage(w)); invokeRestart("muffleWarning") })
  cat(sprintf("== %s: %.1f s, stretch warning: %s\n", label, proc.time()[["elapsed"]] - t0,
              any(grepl("fitted on frames", ws))))
  for (w in ws[grepl("fitted on frames", ws)]) cat(w, "\n")
}
n <- 100000; set.seed(1); tt <- seq_len(n)
sdn <- ifelse(tt <= n / 2, 0.2, 1.0)
y <- cumsum(rnorm(n, sd = 0.05)) + sin(2 * pi * tt / 24) + rnorm(n, sd = sdn)
miss <- rep(FALSE, n); while (mean(miss) < 0.05) { s <- sample(n / 2 - 60, 1) + n / 2; miss[s:(s + sample(1:48, 1))] <- TRUE }
y[miss] <- NA
run("regime change, 1e5 frames (the review's case)", ts(y, frequency = 24))
set.seed(2); y2 <- cumsum(rnorm(n, sd = 0.05)) + sin(2 * pi * tt / 24) + rnorm(n, sd = 0.5)
y2[miss] <- NA
run("same without the change", ts(y2, frequency = 24))
ett <- utils::read.csv(gzfile(file.path(data_dir, "ett", "ETTh1.csv.gz")))
for (v in c("OT", "HUFL")) run(paste("ETTh1", v, "17,420 h"), ts(hide_gaps(as.matrix(ett[, v, drop = FALSE]), 0.1, 3)[, 1], frequency = 24))
air <- utils::read.csv(gzfile(file.path(data_dir, "beijing_air", "PRSA_Data_Dongsi_20130301-20170228.csv.gz")))
for (v in c("PM2.5", "TEMP", "O3")) run(paste("BeijingAir Dongsi", v, "35,064 h"), ts(air[[v]], frequency = 24))
