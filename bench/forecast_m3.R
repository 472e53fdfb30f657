# predict() of impute_series() on series of the M3 forecasting competition
# (Makridakis and Hibon 2000; the Mcomp package), which no bench or rule of
# the package has seen: forecasts with and without calibrate = TRUE against
# forecast::auto.arima() and forecast::ets() on the same series, in one run.
# Each series' training part `x` is fitted and its test part `xx` (the
# competition's horizon: 6 years, 8 quarters, 18 months, 8 other) forecast.
# Also the horizon imputed as an end gap (impute_series(c(x, rep(NA, h)))).
# A stratified sample with a fixed seed: `n` series of each period (yearly,
# quarterly, monthly, other). Scores: MASE (point forecast MAE over the
# training part's in-sample naive MAE, seasonal for quarterly and monthly
# series), coverage of 80% and 95% intervals, and their interval scores
# (Gneiting and Raftery 2007) over the same scale; means over series.
# Since 2026-12-07 (session 78), when predict() began to choose the model class with the
# horizon in view, also the same fits forecast with the fitted class
# (`fitted class`: model_choice = "fit", predict()'s former default); and the
# 1,001 series of the M1 competition (Makridakis et al. 1982), none of which
# the choice's rule was developed on, with the second argument M1.
# Usage: Rscript bench/forecast_m3.R [n per period] [M3 | M1]   (needs Mcomp:
#   bash tools/setup-bench.sh; writes bench/results/forecast_m3.md, or
#   forecast_m1.md for every M1 series)
suppressPackageStartupMessages({
  library(ditimpute)
  if (!requireNamespace("Mcomp", quietly = TRUE)) stop("needs the Mcomp package (bash tools/setup-bench.sh)")
  if (!requireNamespace("forecast", quietly = TRUE)) stop("needs the forecast package (bash tools/setup-bench.sh)")
})
args <- commandArgs(trailingOnly = TRUE)
n_per <- if (length(args) >= 1) as.integer(args[1]) else 30L
set_name <- if (length(args) >= 2) toupper(args[2]) else "M3"
if (!set_name %in% c("M3", "M1")) stop("the second argument is M3 or M1")
m3 <- if (set_name == "M1") Mcomp::M1 else Mcomp::M3
periods <- vapply(m3, function(s) s$period, "")
set.seed(2026)
pick <- if (set_name == "M1") seq_along(m3) else
  unlist(lapply(c("YEARLY", "QUARTERLY", "MONTHLY", "OTHER"), function(p) sort(sample(which(periods == p), n_per))))
period_names <- intersect(c("yearly", "quarterly", "monthly", "other"), tolower(unique(periods[pick])))
loadavg <- function() paste(strsplit(readLines("/proc/loadavg"), " ")[[1]][1:3], collapse = " ")
load0 <- loadavg()
started <- Sys.time()
z <- c(`80` = stats::qnorm(0.9), `95` = stats::qnorm(0.975))
interval_score <- function(l, u, y, a) (u - l) + (2 / a) * pmax(l - y, 0) + (2 / a) * pmax(y - u, 0)
rows <- list()
seconds <- c(ditimpute = 0, `fitted class` = 0, calibrated = 0, `end gap` = 0, auto.arima = 0, ets = 0)
for (i in pick) {
  s <- m3[[i]]
  x <- s$x; y <- as.numeric(s$xx); h <- s$h
  f <- stats::frequency(x)
  lag <- if (f > 1 && length(x) > f) f else 1
  scale <- mean(abs(diff(as.numeric(x), lag = lag)))
  if (!is.finite(scale) || scale <= 0) next
  fc <- list()
  t0 <- proc.time()[["elapsed"]]
  imp <- tryCatch(suppressWarnings(impute_series(x, n_samples = 100, seed = i, threads = 1, progress = FALSE)),
                  error = function(e) NULL)
  if (is.null(imp)) next
  p <- suppressWarnings(predict(imp, n.ahead = h, level = c(0.8, 0.95), seed = i, threads = 1))
  fc$ditimpute <- list(est = p$estimate, l80 = p$lower_80, u80 = p$upper_80, l95 = p$lower_95, u95 = p$upper_95)
  seconds["ditimpute"] <- seconds["ditimpute"] + proc.time()[["elapsed"]] - t0
  t0 <- proc.time()[["elapsed"]]
  p <- suppressWarnings(predict(imp, n.ahead = h, level = c(0.8, 0.95), seed = i, threads = 1, model_choice = "fit"))
  fc[["fitted class"]] <- list(est = p$estimate, l80 = p$lower_80, u80 = p$upper_80, l95 = p$lower_95, u95 = p$upper_95)
  seconds["fitted class"] <- seconds["fitted class"] + proc.time()[["elapsed"]] - t0
  t0 <- proc.time()[["elapsed"]]
  p <- suppressWarnings(predict(imp, n.ahead = h, level = c(0.8, 0.95), seed = i, threads = 1, calibrate = TRUE))
  fc$calibrated <- list(est = p$estimate, l80 = p$lower_80, u80 = p$upper_80, l95 = p$lower_95, u95 = p$upper_95)
  seconds["calibrated"] <- seconds["calibrated"] + proc.time()[["elapsed"]] - t0
  # the horizon imputed as an end gap: impute_series() of x followed by h
  # missing frames, whose model choice weighs end gaps (predict() keeps the
  # model chosen for x's own gaps); 80% intervals from confint() of the same fit
  t0 <- proc.time()[["elapsed"]]
  r <- tryCatch({
    z <- stats::ts(c(as.numeric(x), rep(NA, h)), start = stats::start(x), frequency = f)
    e <- suppressWarnings(impute_series(z, level = 0.95, n_samples = 100, seed = i, threads = 1, progress = FALSE))
    k <- length(x) + seq_len(h)
    c80 <- suppressWarnings(stats::confint(e, level = 0.8))
    list(est = as.numeric(e$point)[k], l80 = c80$lower, u80 = c80$upper, l95 = as.numeric(e$lower)[k],
         u95 = as.numeric(e$upper)[k])
  }, error = function(e) NULL)
  seconds["end gap"] <- seconds["end gap"] + proc.time()[["elapsed"]] - t0
  if (!is.null(r)) fc[["end gap"]] <- r
  for (m in c("auto.arima", "ets")) {
    t0 <- proc.time()[["elapsed"]]
    r <- tryCatch({
      fit <- if (m == "auto.arima") forecast::auto.arima(x) else forecast::ets(x)
      g <- forecast::forecast(fit, h = h, level = c(80, 95))
      list(est = as.numeric(g$mean), l80 = as.numeric(g$lower[, 1]), u80 = as.numeric(g$upper[, 1]),
           l95 = as.numeric(g$lower[, 2]), u95 = as.numeric(g$upper[, 2]))
    }, error = function(e) NULL)
    seconds[m] <- seconds[m] + proc.time()[["elapsed"]] - t0
    if (!is.null(r)) fc[[m]] <- r
  }
  for (m in names(fc)) {
    r <- fc[[m]]
    rows[[length(rows) + 1]] <- data.frame(
      series = s$sn, period = tolower(s$period), method = m, n = length(x), h = h,
      mase = mean(abs(as.numeric(r$est) - y)) / scale,
      cover80 = mean(r$l80 <= y & y <= r$u80), cover95 = mean(r$l95 <= y & y <= r$u95),
      is80 = mean(interval_score(as.numeric(r$l80), as.numeric(r$u80), y, 0.2)) / scale,
      is95 = mean(interval_score(as.numeric(r$l95), as.numeric(r$u95), y, 0.05)) / scale)
  }
}
d <- do.call(rbind, rows)
# only series every method forecast
full <- names(which(table(d$series) == length(unique(d$method))))
d <- d[d$series %in% full, ]
methods <- c("ditimpute", "fitted class", "calibrated", "end gap", "auto.arima", "ets")
summ <- function(dd) {
  do.call(rbind, lapply(methods, function(m) {
    e <- dd[dd$method == m, ]
    data.frame(method = m, series = nrow(e), mase = mean(e$mase), cover80 = 100 * mean(e$cover80),
               cover95 = 100 * mean(e$cover95), is80 = mean(e$is80), is95 = mean(e$is95))
  }))
}
fmt_tab <- function(t) {
  c(paste("|", paste(names(t), collapse = " | "), "|"), paste0(paste(rep("|---", ncol(t)), collapse = ""), "|"),
    apply(t, 1, function(r) paste("|", paste(trimws(r), collapse = " | "), "|")))
}
round_tab <- function(t) {
  t$mase <- sprintf("%.3f", t$mase); t$cover80 <- sprintf("%.1f", t$cover80); t$cover95 <- sprintf("%.1f", t$cover95)
  t$is80 <- sprintf("%.2f", t$is80); t$is95 <- sprintf("%.2f", t$is95)
  t
}
all_tab <- round_tab(summ(d))
by_period <- do.call(rbind, lapply(period_names, function(p) {
  t <- summ(d[d$period == p, ])
  cbind(period = p, round_tab(t))
}))
# the calibration's effect series by series (paired): interval score ratio
paired <- merge(d[d$method == "calibrated", c("series", "is80", "is95")],
                d[d$method == "ditimpute", c("series", "is80", "is95")], by = "series", suffixes = c("_cal", "_raw"))
# the class chosen for the horizon against the fitted class, series by
# series (paired; equal where the choice kept the fitted class)
pc <- merge(d[d$method == "ditimpute", c("series", "period", "mase", "is80", "is95")],
            d[d$method == "fitted class", c("series", "mase", "is80", "is95")], by = "series", suffixes = c("", "_fit"))
moved <- abs(pc$mase - pc$mase_fit) > 1e-12 * pmax(1, pc$mase_fit)
choice_rows <- do.call(rbind, lapply(c("all", period_names), function(p) {
  z <- pc[moved & (p == "all" | pc$period == p), ]
  data.frame(period = p, series = sum(p == "all" | pc$period == p), moved = nrow(z),
             better = sum(z$mase < z$mase_fit), worse = sum(z$mase > z$mase_fit),
             ratio = if (nrow(z)) sprintf("%.3f", exp(mean(log(z$mase / z$mase_fit)))) else "-",
             is95_ratio = if (nrow(z)) sprintf("%.3f", exp(mean(log(z$is95 / z$is95_fit)))) else "-")
}))
what <- if (set_name == "M1") sprintf("All %d M1 series (%d forecast by every method)", length(pick), length(full)) else
  sprintf("%d M3 series (%d per period drawn with seed 2026; %d forecast by every method)", length(pick), n_per, length(full))
lines <- c(sprintf("# predict() on %s competition series against auto.arima and ets (bench/forecast_m3.R)", set_name), "",
           sprintf(paste("`Rscript bench/forecast_m3.R %d %s` on %s (%.1f min; %s, ditimpute %s, forecast %s, Mcomp %s;",
                         "one thread); load average %s at the start, %s at the end (2 cores)."),
                   n_per, set_name, format(started, "%Y-%m-%d %H:%M UTC", tz = "UTC"),
                   as.numeric(difftime(Sys.time(), started, units = "mins")), R.version.string,
                   as.character(utils::packageVersion("ditimpute")), as.character(utils::packageVersion("forecast")),
                   as.character(utils::packageVersion("Mcomp")), load0, loadavg()), "",
           sprintf(paste("%s, none seen by a bench or rule of the package before 2026-12-07 (M1: before",
                         "this session's rule for the forecast's model class, whose margins were checked on them).",
                         "`ditimpute`: predict(impute_series(x), h) with its defaults (proper draws; the",
                         "model class chosen with the horizon in view); `fitted class`: the same fit forecast with",
                         "the class it was fitted with (model_choice = \"fit\", the former default);",
                         "`calibrated`: the same fit with calibrate = TRUE; `end gap`:",
                         "impute_series() of x followed by h missing frames (its model chosen with the end gap in the",
                         "data; 80%% intervals by confint()); MASE and interval scores over the training part's",
                         "in-sample (seasonal) naive MAE; means over series. Seconds per series: ditimpute %.2f (fit",
                         "and forecast), fitted class %.2f (forecast), calibration %.2f more, end gap %.2f, auto.arima",
                         "%.2f, ets %.2f."),
                   what, seconds[["ditimpute"]] / length(full), seconds[["fitted class"]] / length(full),
                   seconds[["calibrated"]] / length(full), seconds[["end gap"]] / length(full),
                   seconds[["auto.arima"]] / length(full), seconds[["ets"]] / length(full)), "",
           "## All series", "", fmt_tab(all_tab), "",
           "## By period", "", fmt_tab(by_period), "",
           "## The class chosen for the horizon against the fitted class, series by series", "",
           paste("Series whose forecast moved (the choice took the other class), those whose MASE it lowered and",
                 "raised, and the geometric means over them of the MASE's and the 95% interval score's ratio",
                 "(chosen over fitted)."), "", fmt_tab(choice_rows), "",
           "## calibrate = TRUE against the same forecasts uncalibrated, series by series", "",
           sprintf(paste("Interval score lower with the calibration on %d of %d series at 80%% and %d at 95%%, higher on",
                         "%d and %d (equal: not widened); geometric mean of the ratio %.3f at 80%% and %.3f at 95%%."),
                   sum(paired$is80_cal < paired$is80_raw - 1e-12), nrow(paired), sum(paired$is95_cal < paired$is95_raw - 1e-12),
                   sum(paired$is80_cal > paired$is80_raw + 1e-12), sum(paired$is95_cal > paired$is95_raw + 1e-12),
                   exp(mean(log(paired$is80_cal / paired$is80_raw))), exp(mean(log(paired$is95_cal / paired$is95_raw)))))
stem <- sprintf("bench/results/forecast_%s", tolower(set_name))
writeLines(lines, paste0(stem, ".md"))
utils::write.csv(d, gzfile(paste0(stem, ".csv.gz")), row.names = FALSE)
cat(lines, sep = "\n")
