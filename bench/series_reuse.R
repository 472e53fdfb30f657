# What impute_series(x, model = <earlier result>) saves: the same series
# imputed again (another level, more sample paths, the self-calibration)
# with the fitted model or trained DiT, against fitting or training anew, in
# one run. Series: bench/dit_series_defaults.R's 150 x 4 EuStockMarkets
# (log scale, 10% hidden in gaps of 1-5 days) with the DiT's defaults and
# with 3,000 training steps, and
# AirPassengers and 2,820 months of sunspots with gaps, with the GP's.
# Each row: seconds of the first call (fit + impute), of a second call that
# fits anew, of the same call with model = the first result, and the ratio;
# whether the reused call with the first call's seed and level reproduced
# its imputation exactly (the check of tests/testthat/test-series-reuse.R).
# Usage: Rscript bench/series_reuse.R   (writes bench/results/series_reuse.md)
suppressPackageStartupMessages(library(ditimpute))
threads <- as.integer(Sys.getenv("DITIMPUTE_BENCH_THREADS", "1"))
loadavg <- function() paste(strsplit(readLines("/proc/loadavg"), " ")[[1]][1:3], collapse = " ")
load0 <- loadavg()

source("bench/eustock_gaps.R")
eu <- eustock_gaps()$x
air <- AirPassengers
air[c(20:25, 60, 100:110)] <- NA
spots <- sunspots
set.seed(2)
for (s in sample(length(spots) - 30, 40)) spots[s + 0:sample(0:29, 1)] <- NA

cases <- list(
  list(name = "EuStockMarkets 150 x 4", method = "dit", x = eu, args = list()),
  list(name = "EuStockMarkets 150 x 4, 3,000 steps", method = "dit", x = eu, args = list(dit = list(steps = 3000))),
  list(name = "AirPassengers 144", method = "gp", x = air, args = list()),
  list(name = "sunspots 2,820", method = "gp", x = spots, args = list(bounds = c(0, Inf)))
)
secs <- function(expr) { t0 <- proc.time()[["elapsed"]]; force(expr); proc.time()[["elapsed"]] - t0 }
rows <- list()
for (cs in cases) {
  call <- function(..., n_samples = 100) do.call(impute_series, c(list(cs$x, n_samples = n_samples, threads = threads),
                                                                   list(...)))
  first <- NULL
  t_first <- secs(first <- do.call(call, c(list(method = cs$method, level = 0.95, seed = 1), cs$args)))
  # the second look: 80% intervals with 200 paths, fitted anew or reused
  t_new <- secs(do.call(call, c(list(method = cs$method, level = 0.8, n_samples = 200, seed = 2), cs$args)))
  t_reuse <- secs(call(model = first, level = 0.8, n_samples = 200, seed = 2))
  # the self-calibration of the first result, fitted anew or reused
  t_cal_new <- secs(do.call(call, c(list(method = cs$method, level = 0.95, seed = 1, calibrate = TRUE), cs$args)))
  t_cal_reuse <- secs(call(model = first, level = 0.95, seed = 1, calibrate = TRUE))
  same <- identical(call(model = first, level = 0.95, seed = 1)$point, first$point)
  rows[[length(rows) + 1]] <- data.frame(series = cs$name, method = cs$method, first_s = round(t_first, 2),
                                         refit_80_s = round(t_new, 2), reused_80_s = round(t_reuse, 2),
                                         ratio_80 = round(t_reuse / t_new, 3),
                                         refit_calibrated_s = round(t_cal_new, 2),
                                         reused_calibrated_s = round(t_cal_reuse, 2),
                                         ratio_calibrated = round(t_cal_reuse / t_cal_new, 3), same_imputation = same)
  print(rows[[length(rows)]])
}
tab <- do.call(rbind, rows)
fmt <- c(paste("|", paste(names(tab), collapse = " | "), "|"), paste0(paste(rep("|---", ncol(tab)), collapse = ""), "|"),
         apply(tab, 1, function(r) paste("|", paste(trimws(r), collapse = " | "), "|")))
writeLines(c("# impute_series(model = <earlier result>): imputing the same series again (bench/series_reuse.R)", "",
             sprintf(paste("`Rscript bench/series_reuse.R` on %s (%s, ditimpute %s, %d thread%s); load average %s at the",
                           "start, %s at the end (2 cores)."),
                     format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC"), R.version.string,
                     as.character(utils::packageVersion("ditimpute")), threads, if (threads == 1) "" else "s", load0,
                     loadavg()), "",
             paste("`first_s`: impute_series() at 95% with 100 paths (fit or training included); `refit_80_s`: 80%",
                   "intervals with 200 paths fitted anew; `reused_80_s`: the same with `model =` the first result;",
                   "`*_calibrated_s`: `calibrate = TRUE` at 95%, fitted anew or reused; `same_imputation`: the reused",
                   "call with the first call's seed and level gave its point imputation exactly. The DiT: the",
                   "defaults of `method = \"dit\"` (800 steps, width 64, depth 2), and 3,000 steps."), "",
             fmt), "bench/results/series_reuse.md")
