# What predict(calibrate = TRUE) costs: seconds per forecast with and without
# the calibration, one and three levels, plug-in and proper draws, on
# sunspots (2,820 months), a simulated random walk with noise (20,000 frames)
# and three correlated simulated series of 5,000 frames in one model; each
# timing the median of 3 runs, the uncalibrated forecast of the same fit the
# baseline in the same run. One thread. Since 2026-12-07 also the forecast
# with the fitted model's class (model_choice = "fit"), the baseline of what
# predict()'s choice of the class for the horizon costs.
# Usage: Rscript bench/forecast_calibration_speed.R [out.md]
suppressPackageStartupMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
out <- if (length(args) >= 1) args[1] else "bench/results/forecast_calibration_speed.md"
set.seed(1)
walk <- cumsum(rnorm(20000, sd = 0.1)) + rnorm(20000)
common <- cumsum(rnorm(5000, sd = 0.1))
three <- cbind(a = common + rnorm(5000), b = 0.5 * common + rnorm(5000), c = -common + rnorm(5000))
S <- list(sunspots = datasets::sunspots, walk20000 = walk, three5000 = three)
started <- Sys.time()
time_of <- function(fun) stats::median(vapply(1:3, function(i) system.time(fun())[["elapsed"]], 0))  # a function: a promise runs once
lines <- c("# The cost of predict(calibrate = TRUE) (bench/forecast_calibration_speed.R)", "",
           readLines("bench/forecast_calibration_speed.R", n = 9) |> sub(pattern = "^# ?", replacement = ""), "",
           paste("| series | draws | levels | fitted class s | uncalibrated s | class choice ratio | calibrated s |",
                 "calibration ratio |"), "|---|---|---|---|---|---|---|---|")
for (nm in names(S)) {
  imp <- suppressWarnings(impute_series(S[[nm]], separate = "none", n_samples = 50, seed = 1, threads = 1, progress = FALSE))
  for (proper in c(FALSE, TRUE)) for (lv in list(0.9, c(0.5, 0.8, 0.95))) {
    f <- function(cal, choice = "horizon") suppressWarnings(predict(imp, n.ahead = 24, level = lv, proper = proper, seed = 1,
                                                                    threads = 1, calibrate = cal, model_choice = choice))
    z <- time_of(function() f(FALSE, "fit")); a <- time_of(function() f(FALSE)); b <- time_of(function() f(TRUE))
    lines <- c(lines, sprintf("| %s | %s | %d | %.3f | %.3f | %.2f | %.3f | %.2f |", nm, if (proper) "proper" else "plug-in",
                              length(lv), z, a, a / z, b, b / a))
  }
  message(nm, " done")
}
lines <- c(lines, "", sprintf("Run on %s (%.1f min), ditimpute from %s. Load average at the end: %s (2 cores).",
                              format(started, "%Y-%m-%d %H:%M UTC", tz = "UTC"),
                              as.numeric(difftime(Sys.time(), started, units = "mins")), find.package("ditimpute"),
                              paste(readLines("/proc/loadavg"), collapse = "")))
writeLines(lines, out)
cat(lines, sep = "\n")
