# predict(calibrate = TRUE) on series that neither the rule's development set
# (bench/forecast_rolling.R) nor the held-out set (bench/series_forecast.R)
# contains: Seatbelts' front-seat casualties (monthly), presidents' approval
# (quarterly, bounds 0-100), airquality's daily temperature, beaver2's body
# temperature (10-minute steps) and the monthly sunspots (2,820 months). Each
# series cut at 4 origins, the last h values before each held out (windows
# that do not overlap, ending at the series' end), forecast by
# predict(impute_series(train), h) at levels 0.8 and 0.95 with and without
# calibrate (the same fit and draws; proper draws, the default). Reports
# coverage, mean width and mean interval score (width + (2 / a) x the miss
# beyond the interval) per series and in all, and the seconds per forecast.
# A reviewer's check of session 76 first ran these series (3 origins).
# Usage: Rscript bench/forecast_calibration_fresh.R [out.md]
suppressPackageStartupMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
out <- if (length(args) >= 1) args[1] else "bench/results/forecast_calibration_fresh.md"
S <- list(Seatbelts.front = list(y = datasets::Seatbelts[, "front"], h = 12, args = list()),
          presidents = list(y = datasets::presidents, h = 8, args = list(bounds = c(0, 100))),
          airquality.Temp = list(y = stats::ts(datasets::airquality$Temp), h = 14, args = list()),
          beaver2.temp = list(y = stats::ts(datasets::beaver2$temp), h = 10, args = list()),
          sunspots = list(y = datasets::sunspots, h = 24, args = list()))
started <- Sys.time()
rows <- list()
for (nm in names(S)) {
  s <- S[[nm]]; n <- length(s$y); h <- s$h
  for (e in n - h * (3:0)) {
    tr <- stats::window(s$y, end = stats::time(s$y)[e - h])
    te <- as.numeric(s$y)[e - h + seq_len(h)]
    imp <- suppressWarnings(do.call(impute_series, c(list(tr, n_samples = 100, seed = 1, threads = 1, progress = FALSE), s$args)))
    for (cal in c(FALSE, TRUE)) {
      t0 <- proc.time()[["elapsed"]]
      f <- suppressWarnings(predict(imp, n.ahead = h, level = c(0.8, 0.95), seed = 1, threads = 1, calibrate = cal))
      sec <- proc.time()[["elapsed"]] - t0
      ok <- !is.na(te)
      for (p in c(80, 95)) {
        lo <- f[[paste0("lower_", p)]][ok]; hi <- f[[paste0("upper_", p)]][ok]; y <- te[ok]
        rows[[length(rows) + 1]] <- data.frame(series = nm, origin = e, calibrated = cal, level = p, n = sum(ok),
          covered = sum(y >= lo & y <= hi), width = sum(hi - lo),
          score = sum(hi - lo + (200 / (100 - p)) * (pmax(lo - y, 0) + pmax(y - hi, 0))), seconds = sec)
      }
    }
  }
  message(nm, " done")
}
d <- do.call(rbind, rows)
cell <- function(z, what) if (what == "covered") sprintf("%.1f", 100 * sum(z$covered) / sum(z$n)) else
  sprintf("%.4g", sum(z[[what]]) / sum(z$n))
lines <- c("# Calibrated forecasts on series no rule was chosen on (bench/forecast_calibration_fresh.R)", "",
           sprintf("`Rscript bench/forecast_calibration_fresh.R` on %s (%.1f min), ditimpute from %s, one thread. Load average at the end: %s (2 cores).",
                   format(started, "%Y-%m-%d %H:%M UTC", tz = "UTC"), as.numeric(difftime(Sys.time(), started, units = "mins")),
                   find.package("ditimpute"), paste(readLines("/proc/loadavg"), collapse = "")), "",
           readLines("bench/forecast_calibration_fresh.R", n = 12) |> sub(pattern = "^# ?", replacement = ""), "",
           "| series | values | 80% covered raw / calibrated | 95% covered raw / calibrated | 95% width raw / calibrated | interval score 80% raw / calibrated | 95% raw / calibrated | s per forecast raw / calibrated |",
           "|---|---|---|---|---|---|---|---|")
for (nm in c(names(S), "all")) {
  z <- if (nm == "all") d else d[d$series == nm, ]
  g <- function(cal, p) z[z$calibrated == cal & z$level == p, ]
  sec <- function(cal) sprintf("%.2f", mean(z$seconds[z$calibrated == cal & z$level == 80]))
  lines <- c(lines, sprintf("| %s | %d | %s / %s | %s / %s | %s / %s | %s / %s | %s / %s | %s / %s |", nm, sum(g(FALSE, 80)$n),
                            cell(g(FALSE, 80), "covered"), cell(g(TRUE, 80), "covered"),
                            cell(g(FALSE, 95), "covered"), cell(g(TRUE, 95), "covered"),
                            cell(g(FALSE, 95), "width"), cell(g(TRUE, 95), "width"),
                            cell(g(FALSE, 80), "score"), cell(g(TRUE, 80), "score"),
                            cell(g(FALSE, 95), "score"), cell(g(TRUE, 95), "score"), sec(FALSE), sec(TRUE)))
}
lines <- c(lines, "", "Widths and interval scores in each series' own units (the row `all` mixes them: read it for coverage only).")
writeLines(lines, out)
cat(lines, sep = "\n")
