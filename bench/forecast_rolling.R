# predict() of impute_series() results at rolling forecast origins, against
# base R's forecasters in the same run: 12 series nobody tuned for
# (AirPassengers, UKDriverDeaths, nottem, co2 from 1980, USAccDeaths,
# austres, LakeHuron, lynx, sunspot.year, Nile, a 2,000-value window of
# treering, log DAX), 24 origins each between 60% of the series and n - h
# (fewer where the series is short), horizons h = 12 (monthly), 8
# (quarterly) or 10; each origin's training part is complete. ditimpute with
# its defaults (proper draws, 100 paths); arima (the airline model, or
# (1,1,1) without a season), StructTS (BSM or trend) and HoltWinters with
# their prediction intervals; naive and seasonal naive for MAE. Reports 80%
# and 95% coverage by horizon group (1, 2-3, 4-6, 7-12), MAE over each
# series' naive MAE, and per-series coverage. Origins of a series overlap,
# so the values are not independent. One thread.
# Since 2026-12-07 also predict(calibrate = TRUE) of the same fits, and the
# intervals' interval scores by horizon; since session 78 (the same day), when predict()
# began to choose the model class with the horizon in view, also the same
# fits forecast with the fitted class (model_choice = "fit", the former
# default: "ditimpute fitted class").
# Usage: Rscript bench/forecast_rolling.R [out.md] [name=value]
#   name=value: a rule of the package measured as an arm, its internal
#   object `name` set to the R expression `value` for the whole run (e.g.
#   boxcox_auto_lr=qchisq(0.999,1), bench/results/series_transform_rule.md).
suppressPackageStartupMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
out <- if (length(args) >= 1) args[1] else "bench/results/forecast_rolling.md"
arm <- if (length(args) >= 2) args[2] else NULL
if (!is.null(arm)) {
  kv <- regmatches(arm, regexpr("=", arm), invert = TRUE)[[1]]
  utils::assignInNamespace(kv[1], eval(parse(text = kv[2])), "ditimpute")
}
series <- list(AirPassengers = AirPassengers, UKDriverDeaths = UKDriverDeaths, nottem = nottem,
               co2 = window(co2, 1980), USAccDeaths = USAccDeaths, austres = austres, LakeHuron = LakeHuron,
               lynx = lynx, sunspot.year = sunspot.year, Nile = Nile, treering = ts(treering[5001:7000]),
               logDAX = ts(log(as.numeric(EuStockMarkets[, "DAX"]))))
z80 <- stats::qnorm(0.9)
z95 <- stats::qnorm(0.975)
gaussian <- function(p) {
  list(est = as.numeric(p$pred), l80 = p$pred - z80 * p$se, u80 = p$pred + z80 * p$se,
       l95 = p$pred - z95 * p$se, u95 = p$pred + z95 * p$se)
}
started <- Sys.time()
seconds <- 0
seconds_cal <- 0
rows <- list()
for (nm in names(series)) {
  x <- series[[nm]]
  n <- length(x)
  f <- stats::frequency(x)
  h <- if (f == 12) 12 else if (f == 4) 8 else 10
  for (o in unique(round(seq(max(floor(0.6 * n), 40), n - h, length.out = 24)))) {
    tr <- stats::window(x, end = stats::time(x)[o])
    te <- as.numeric(x[o + 1:h])
    one <- function(method, expr) {
      r <- tryCatch(expr, error = function(e) NULL)
      if (is.null(r)) return(NULL)
      na <- rep(NA_real_, h)
      data.frame(series = nm, origin = o, method = method, h = 1:h, y = te, est = r$est,
                 l80 = if (is.null(r$l80)) na else as.numeric(r$l80), u80 = if (is.null(r$u80)) na else as.numeric(r$u80),
                 l95 = if (is.null(r$l95)) na else as.numeric(r$l95), u95 = if (is.null(r$u95)) na else as.numeric(r$u95))
    }
    t0 <- proc.time()[["elapsed"]]
    imp <- tryCatch(suppressWarnings(impute_series(tr, n_samples = 100, seed = o, threads = 1, progress = FALSE)),
                    error = function(e) NULL)
    fc_list <- function(fc) list(est = fc$estimate, l80 = fc$lower_80, u80 = fc$upper_80, l95 = fc$lower_95, u95 = fc$upper_95)
    rows[[length(rows) + 1]] <- one("ditimpute", fc_list(predict(imp, n.ahead = h, level = c(0.8, 0.95), seed = o, threads = 1)))
    seconds <- seconds + proc.time()[["elapsed"]] - t0
    rows[[length(rows) + 1]] <- one("ditimpute fitted class", fc_list(
      predict(imp, n.ahead = h, level = c(0.8, 0.95), seed = o, threads = 1, model_choice = "fit")))
    # the same fit, its forecast calibrated on the series' own past (predict(calibrate = TRUE))
    t0 <- proc.time()[["elapsed"]]
    rows[[length(rows) + 1]] <- one("ditimpute calibrated", fc_list(suppressWarnings(
      predict(imp, n.ahead = h, level = c(0.8, 0.95), seed = o, threads = 1, calibrate = TRUE))))
    seconds_cal <- seconds_cal + proc.time()[["elapsed"]] - t0
    rows[[length(rows) + 1]] <- one("arima", gaussian(stats::predict(
      if (f > 1) stats::arima(tr, order = c(0, 1, 1), seasonal = list(order = c(0, 1, 1), period = f), method = "ML")
      else stats::arima(tr, order = c(1, 1, 1), method = "ML"), n.ahead = h)))
    rows[[length(rows) + 1]] <- one("StructTS", gaussian(suppressWarnings(stats::predict(
      stats::StructTS(tr, type = if (f > 1) "BSM" else "trend"), n.ahead = h))))
    rows[[length(rows) + 1]] <- one("HoltWinters", {
      fit <- if (f > 1) stats::HoltWinters(tr) else stats::HoltWinters(tr, gamma = FALSE)
      p8 <- stats::predict(fit, n.ahead = h, prediction.interval = TRUE, level = 0.8)
      p9 <- stats::predict(fit, n.ahead = h, prediction.interval = TRUE, level = 0.95)
      list(est = as.numeric(p8[, "fit"]), l80 = p8[, "lwr"], u80 = p8[, "upr"], l95 = p9[, "lwr"], u95 = p9[, "upr"])
    })
    rows[[length(rows) + 1]] <- one("naive", list(est = rep(as.numeric(tr)[o], h)))
    if (f > 1) rows[[length(rows) + 1]] <- one("snaive", list(est = as.numeric(tr)[o - f + ((0:(h - 1)) %% f) + 1]))
  }
  message(sprintf("%s done", nm))
}
d <- do.call(rbind, rows)
d$hg <- cut(d$h, c(0, 1, 3, 6, 12), labels = c("1", "2-3", "4-6", "7-12"))
d$c80 <- d$y >= d$l80 & d$y <= d$u80
d$c95 <- d$y >= d$l95 & d$y <= d$u95
d$ae <- abs(d$y - d$est)
naive_mae <- tapply(d$ae[d$method == "naive"], d$series[d$method == "naive"], mean)
d$sae <- d$ae / naive_mae[d$series]
methods <- c("ditimpute", "ditimpute fitted class", "ditimpute calibrated", "arima", "StructTS", "HoltWinters", "naive", "snaive")
iv <- d[!is.na(d$l80), ]
pct <- function(v) sprintf("%.1f", 100 * mean(v))
cov_row <- function(m) {
  z <- iv[iv$method == m, ]
  by80 <- vapply(levels(d$hg), function(g) pct(z$c80[z$hg == g]), "")
  by95 <- vapply(levels(d$hg), function(g) pct(z$c95[z$hg == g]), "")
  sprintf("| %s | %s | %s | %s | %s |", m, paste(by80, collapse = " | "), pct(z$c80), paste(by95, collapse = " | "), pct(z$c95))
}
# interval scores (a = 0.2 and 0.05: 2 / a = 10 and 40) in units of the series' naive MAE
iv$s80 <- (iv$u80 - iv$l80 + 10 * pmax(iv$l80 - iv$y, 0) + 10 * pmax(iv$y - iv$u80, 0)) / naive_mae[iv$series]
iv$s95 <- (iv$u95 - iv$l95 + 40 * pmax(iv$l95 - iv$y, 0) + 40 * pmax(iv$y - iv$u95, 0)) / naive_mae[iv$series]
score_row <- function(m) {
  z <- iv[iv$method == m, ]
  f <- function(v, g) sprintf("%.2f", mean(v[z$hg == g]))
  sprintf("| %s | %s | %.2f | %s | %.2f |", m, paste(vapply(levels(d$hg), function(g) f(z$s80, g), ""), collapse = " | "),
          mean(z$s80), paste(vapply(levels(d$hg), function(g) f(z$s95, g), ""), collapse = " | "), mean(z$s95))
}
mae_row <- function(m) {
  z <- d[d$method == m, ]
  sprintf("| %s | %s | %.3f |", m, paste(vapply(levels(d$hg), function(g) sprintf("%.3f", mean(z$sae[z$hg == g])), ""),
                                          collapse = " | "), mean(z$sae))
}
per_series <- vapply(names(series), function(s) {
  z <- iv[iv$series == s, ]
  cells <- vapply(methods[1:6], function(m) {
    y <- z[z$method == m, ]
    if (!nrow(y)) "-" else sprintf("%s / %s", pct(y$c80), pct(y$c95))
  }, "")
  mae <- vapply(c("ditimpute", "ditimpute fitted class", "arima", "snaive"), function(m) {
    y <- d[d$series == s & d$method == m, ]
    if (!nrow(y)) "-" else sprintf("%.3f", mean(y$sae))
  }, "")
  sprintf("| %s | %d | %s | %s |", s, length(unique(z$origin)), paste(cells, collapse = " | "), paste(mae, collapse = " | "))
}, "")
dit <- d[d$method == "ditimpute", ]
positive <- dit$series %in% c("AirPassengers", "UKDriverDeaths", "USAccDeaths", "lynx", "sunspot.year", "Nile")
lines <- c("# predict() at rolling origins against base R's forecasters (bench/forecast_rolling.R)", "",
           sprintf(paste("`Rscript bench/forecast_rolling.R` on %s (%.1f min; ditimpute's fits and forecasts %.0f s, the",
                         "calibrated forecasts of the same fits %.0f s more),",
                         "ditimpute from %s, one thread%s. %d origins, %d forecast values per method (fewer where a fit",
                         "failed); origins of a series overlap."),
                   format(started, "%Y-%m-%d %H:%M UTC", tz = "UTC"), as.numeric(difftime(Sys.time(), started, units = "mins")),
                   seconds, seconds_cal, find.package("ditimpute"),
                   if (is.null(arm)) "" else sprintf(", with the arm `%s` (ditimpute's rule replaced)", arm),
                   length(unique(paste(dit$series, dit$origin))), nrow(dit)), "",
           "## Coverage (%) of 80% and 95% intervals by horizon", "",
           "| method | 80%: 1 | 2-3 | 4-6 | 7-12 | all | 95%: 1 | 2-3 | 4-6 | 7-12 | all |",
           "|---|---|---|---|---|---|---|---|---|---|---|", vapply(methods[1:6], cov_row, ""), "",
           "## Interval score over each series' naive MAE, by horizon", "",
           paste("The interval score (Gneiting and Raftery 2007) of a central (1 - a) interval [l, u]: u - l + (2 / a) (l - y) where",
                 "y < l, + (2 / a) (y - u) where y > u; lower is better: it rewards narrow intervals and charges misses, so",
                 "widening that buys coverage shows here whether it was worth its width."), "",
           "| method | 80%: 1 | 2-3 | 4-6 | 7-12 | all | 95%: 1 | 2-3 | 4-6 | 7-12 | all |",
           "|---|---|---|---|---|---|---|---|---|---|---|", vapply(methods[1:6], score_row, ""), "",
           "## MAE over each series' naive MAE, by horizon", "",
           "| method | 1 | 2-3 | 4-6 | 7-12 | all |", "|---|---|---|---|---|---|",
           vapply(methods, mae_row, ""), "",
           "## Per series: coverage 80% / 95%, and MAE over naive", "",
           "| series | origins | ditimpute | fitted class | calibrated | arima | StructTS | HoltWinters | MAE ditimpute | fitted class | arima | snaive |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|", per_series, "",
           sprintf(paste("ditimpute's 95%% lower bounds below 0 on series that cannot be negative (AirPassengers,",
                         "UKDriverDeaths, USAccDeaths, lynx, sunspot.year, Nile): %d of %d forecast values (sunspot.year %d)."),
                   sum(dit$l95[positive] < 0), sum(positive), sum(dit$l95[dit$series == "sunspot.year"] < 0)))
writeLines(lines, out)
cat(lines, sep = "\n")
