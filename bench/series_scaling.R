# Time and memory of impute_series() on one long univariate series, one
# length per process (so the peak resident memory, VmHWM, is that length's):
# a random-walk level + daily cycle + noise, hourly, 10% of the frames
# missing in gaps of 1-200 frames (log-uniform lengths), defaults otherwise.
# Usage: Rscript bench/series_scaling.R <frames> [threads] [calibrate] [plain] [free]
# (calibrate: 1 for impute_series(calibrate = TRUE), ten rounds of
# self-calibration after the fit; the line then also gives the share of the
# observed values a round hid. plain: 1 to give the values as a plain vector,
# without the ts's frequency of 24: no calendar season, so kernel = "auto"
# weighs the daily cycle found by the periodogram on hidden gaps; "week" to
# give them the week's frequency of 168, so that kernel = "auto" weighs the
# day as a cycle at the week's 7th harmonic (its amplitude drifts through the
# year), its period held at 24. free: 1
# to fit that cycle's period instead, as before 2026-12-03's held harmonic).
# Prints one result line; bench/results/series_scaling.md collects them.
suppressMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
n_time <- if (length(args)) as.numeric(args[1]) else 5000
threads <- if (length(args) > 1) as.integer(args[2]) else 2L
calibrate <- length(args) > 2 && args[3] == "1"
plain <- length(args) > 3 && args[4] == "1"
week <- length(args) > 3 && args[4] == "week"
free <- length(args) > 4 && args[5] == "1"
set.seed(1)
tt <- seq_len(n_time)
# With the week's period the day's amplitude drifts through the year (1 to 3),
# as ETTh1's and BeijingAir's do: a fixed weekly shape cannot hold all of it.
amplitude <- if (week) 2 + sin(2 * pi * tt / (24 * 365)) else 2
y0 <- 20 + cumsum(rnorm(n_time, sd = 0.05)) + amplitude * sin(2 * pi * tt / 24) + rnorm(n_time, sd = 0.3)
hide <- rep(FALSE, n_time)
while (mean(hide) < 0.1) {
  len <- round(exp(runif(1, 0, log(200)))); s <- sample(n_time - len, 1)
  hide[s:(s + len - 1)] <- TRUE
}
y <- if (plain) y0 else stats::ts(y0, frequency = if (week) 168 else 24)
y[hide] <- NA
rss <- function() {
  s <- readLines("/proc/self/status")
  as.numeric(sub("[^0-9]*([0-9]+).*", "\\1", s[grepl("^VmHWM", s)])) / 1024
}
if (free) source("bench/with_object.R")
before <- rss()
t0 <- proc.time()[["elapsed"]]; c0 <- sum(proc.time()[c("user.self", "sys.self")])
run <- function() impute_series(y, level = 0.9, n_samples = 50, seed = 1, threads = threads, calibrate = calibrate)
imp <- if (free) with_object("series_calendar_harmonic", fitted_harmonic_rule(), run()) else run()
el <- proc.time()[["elapsed"]] - t0; cpu <- sum(proc.time()[c("user.self", "sys.self")]) - c0
after <- rss()
err <- imp$point[hide] - y0[hide]
cat(sprintf("- T = %d frames%s, %.1f%% missing, threads %d%s: %.1f s elapsed, %.1f s CPU (fit %.1f s), peak RSS %.0f MB (%.0f MB before the call); model %s %s; MAE %.3f, 90%% coverage %.1f%%; load average %s\n",
            n_time, if (plain) " (a plain vector)" else if (week) sprintf(" (the week's period, a harmonic cycle's period %s)",
                                                                         if (free) "fitted" else "held") else "",
            100 * mean(hide), threads,
            if (calibrate) sprintf(", calibrate = TRUE (a round hid %.1f%%)", 100 * imp$calibration$hidden_share) else "",
            el, cpu, imp$model$fit_seconds, after, before, imp$model$model_name,
            paste0(imp$model$kernel_name, if (imp$model$kernel_name == "cycle") sprintf(" (period %.2f)", imp$model$period) else ""), mean(abs(err)), 100 * mean(imp$lower[hide] <= y0[hide] & y0[hide] <= imp$upper[hide]),
            paste(strsplit(readLines("/proc/loadavg"), " ")[[1]][1:3], collapse = " ")))
