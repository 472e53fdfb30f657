# Timing and memory of impute_series() on a long hourly series (d = 8, 20%
# of the entries missing: half scattered, half in gaps of 1-48 hours).
# Usage: Rscript bench/series_timing.R <years> [threads]   (one length per
# process, so the peak resident memory VmHWM belongs to that length alone).
suppressMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
years <- if (length(args)) as.numeric(args[1]) else 1
threads <- if (length(args) > 1) as.integer(args[2]) else 2L
n_time <- round(years * 365 * 24); d <- 8
set.seed(1)
tt <- seq_len(n_time)
daily <- sin(2 * pi * tt / 24)
common <- as.numeric(stats::filter(rnorm(n_time), 0.95, method = "recursive"))
v <- sapply(seq_len(d), function(j) 10 + j * daily + 0.5 * common + 0.001 * j * tt +
              as.numeric(stats::filter(rnorm(n_time), 0.8, method = "recursive")))
colnames(v) <- paste0("v", seq_len(d))
truth <- v
hide <- matrix(FALSE, n_time, d)
hide[sample(length(hide), 0.1 * length(hide))] <- TRUE
while (mean(hide) < 0.2) {
  j <- sample(d, 1); s <- sample(n_time, 1); len <- sample(48, 1)
  hide[s:min(n_time, s + len - 1), j] <- TRUE
}
v[hide] <- NA
rss <- function() {
  s <- readLines("/proc/self/status")
  as.numeric(sub("[^0-9]*([0-9]+).*", "\\1", s[grepl("^VmHWM", s)])) / 1024
}
before <- rss()
t0 <- proc.time()[["elapsed"]]; c0 <- sum(proc.time()[c("user.self", "sys.self")])
s <- ditimpute_series(v, time = as.POSIXct("2010-01-01", tz = "UTC") + 3600 * (tt - 1))
imp <- impute_series(s, n_samples = 100, level = 0.9, seed = 1, threads = threads, truth = truth)  # hourly stamps: period 24
secs <- proc.time()[["elapsed"]] - t0; cpu <- sum(proc.time()[c("user.self", "sys.self")]) - c0
met <- imputation_metrics(imp, by = "all")
cat(sprintf("T = %d frames (%.2f years hourly), d = %d, %.1f%% missing, threads %d: %.1f s elapsed, %.1f s CPU (model fit %.1f s elapsed), peak RSS %.0f MB (%.0f MB before the call); MAE %.3f, 90%% coverage %.1f%%; model %s %s\n",
            n_time, years, d, 100 * mean(hide), threads, secs, cpu, imp$model$fit_seconds, rss(), before, met$mae,
            100 * met$interval_coverage, imp$model$model_name, imp$model$kernel_name))
