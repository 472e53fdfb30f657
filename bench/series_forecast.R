# Forecasts of impute_series()'s fitted model against what a statistician
# would pick instead, in one run: forecast::auto.arima(), forecast::ets(),
# StructTS (the basic structural model, or a local linear trend on series
# without a season), a seasonal naive forecast (naive on series without a
# season). No bench scored predict() before: bench/series_ends.R scores gaps
# at the ends, not forecasts against forecasting packages.
#
# Series: R's own (datasets) and those of the packages imputeTS brings
# (forecast, tseries) and boot; each series cut at three origins (its end, h
# and 2h frames earlier; h = 6 frames for yearly series, 8 quarterly, 18
# monthly, 2 periods otherwise, at most a tenth of the series) and the next h
# frames forecast from the frames before the origin. Ways to forecast
# with the package: `predict(impute_series(train), h)` (proper draws,
# predict()'s default since 2026-12-05; since 2026-12-07 the model class
# chosen with the horizon in view: gp_predict), the same with the fitted
# model's class (`model_choice = "fit"`, predict() before that:
# gp_predict_fit), the same with `proper = FALSE` (plug-in draws:
# gp_predict_plugin) and impute_series() of the training frames followed by h
# missing ones (gp_endgap: the horizon is an end gap, which the class step
# mimics; proper draws); since 2026-12-07 also the first forecast calibrated
# on the series' own past (gp_predict_calibrated: predict(calibrate = TRUE)).
# Scores per series pooled over its origins: MASE (MAE over the in-sample
# seasonal naive MAE of the training frames), the 90% intervals' coverage
# and their mean width and interval score (Gneiting-Raftery: width + 20 x
# the miss beyond the interval; lower is better) in the same units; then over the series: the
# geometric mean of each method's MASE over auto.arima's, and the coverage
# of all forecast values (values of one forecast path are correlated: read
# differences of a few points as noise).
#
# Usage: Rscript bench/series_forecast.R [origins] (from the repository root);
#   writes bench/results/series_forecast.md and the per-value rows (.csv.gz).
suppressMessages(library(ditimpute))
for (pkg in c("forecast", "tseries", "boot")) if (!requireNamespace(pkg, quietly = TRUE)) stop("needs ", pkg, " (bash tools/setup-bench.sh)")
args <- commandArgs(trailingOnly = TRUE)
origins <- if (length(args) >= 1) as.integer(args[1]) else 3L
tsd <- function(name) { e <- new.env(); utils::data(list = name, package = "tseries", envir = e); get(name, e) }
series <- list(AirPassengers = AirPassengers, co2 = co2, nottem = nottem, UKgas = UKgas, ldeaths = ldeaths,
               mdeaths = mdeaths, fdeaths = fdeaths, USAccDeaths = USAccDeaths, UKDriverDeaths = UKDriverDeaths,
               JohnsonJohnson = JohnsonJohnson, Nile = Nile, LakeHuron = LakeHuron, lynx = lynx,
               sunspot.year = sunspot.year, austres = austres, BJsales = BJsales, WWWusage = WWWusage,
               airmiles = airmiles, uspop = uspop, nhtemp = nhtemp, lh = lh, discoveries = discoveries,
               gas = forecast::gas, wineind = forecast::wineind, woolyrnq = forecast::woolyrnq,
               tcm10y = tsd("tcm")[, "tcm10y"], bev = tsd("bev"), USeconomic.rs = tsd("USeconomic")[, "rs"],
               manaus = boot::manaus, nino3 = tsd("nino")[, "nino3"])
horizon <- function(y) {
  f <- stats::frequency(y)
  h <- if (f == 1) 6 else if (f == 4) 8 else if (f == 12) 18 else 2 * f
  as.integer(max(1, min(h, floor(length(y) / 10))))
}
z90 <- stats::qnorm(0.95)
safe <- function(expr) tryCatch(expr, error = function(e) NULL)
fc_pkg <- function(fit, h) {  # a forecast object's mean and 90% interval
  if (is.null(fit)) return(NULL)
  f <- safe(forecast::forecast(fit, h = h, level = 90))
  if (is.null(f)) return(NULL)
  list(point = as.numeric(f$mean), lower = as.numeric(f$lower), upper = as.numeric(f$upper))
}
methods <- list(
  gp_predict = function(train, h) {
    imp <- impute_series(train, level = 0.9, n_samples = 100, seed = 1)
    fc <- stats::predict(imp, n.ahead = h, seed = 1)
    list(point = fc$estimate, lower = fc$lower, upper = fc$upper)
  },
  gp_predict_fit = function(train, h) {
    imp <- impute_series(train, level = 0.9, n_samples = 100, seed = 1)
    fc <- stats::predict(imp, n.ahead = h, seed = 1, model_choice = "fit")
    list(point = fc$estimate, lower = fc$lower, upper = fc$upper)
  },
  gp_predict_calibrated = function(train, h) {
    imp <- impute_series(train, level = 0.9, n_samples = 100, seed = 1)
    fc <- stats::predict(imp, n.ahead = h, seed = 1, calibrate = TRUE)
    list(point = fc$estimate, lower = fc$lower, upper = fc$upper)
  },
  gp_predict_plugin = function(train, h) {
    imp <- impute_series(train, level = 0.9, n_samples = 100, seed = 1)
    fc <- stats::predict(imp, n.ahead = h, seed = 1, proper = FALSE)
    list(point = fc$estimate, lower = fc$lower, upper = fc$upper)
  },
  gp_endgap = function(train, h) {
    x <- stats::ts(c(as.numeric(train), rep(NA, h)), start = stats::start(train), frequency = stats::frequency(train))
    imp <- impute_series(x, level = 0.9, n_samples = 100, seed = 1)
    k <- length(train) + seq_len(h)
    list(point = as.numeric(imp$point)[k], lower = as.numeric(imp$lower)[k], upper = as.numeric(imp$upper)[k])
  },
  auto.arima = function(train, h) fc_pkg(safe(forecast::auto.arima(train)), h),
  ets = function(train, h) fc_pkg(safe(forecast::ets(train)), h),
  StructTS = function(train, h) {
    type <- if (stats::frequency(train) > 1) "BSM" else "trend"
    fit <- safe(stats::StructTS(train, type = type))
    if (is.null(fit)) return(NULL)
    p <- stats::predict(fit, n.ahead = h)
    list(point = as.numeric(p$pred), lower = as.numeric(p$pred - z90 * p$se), upper = as.numeric(p$pred + z90 * p$se))
  },
  naive = function(train, h) {
    f <- if (stats::frequency(train) > 1) forecast::snaive(train, h = h, level = 90) else forecast::naive(train, h = h, level = 90)
    list(point = as.numeric(f$mean), lower = as.numeric(f$lower), upper = as.numeric(f$upper))
  })
started <- Sys.time()
rows <- list(); secs <- list()
for (nm in names(series)) {
  y <- series[[nm]]
  h <- horizon(y)
  n <- length(y)
  m <- max(1L, stats::frequency(y))
  for (o in seq_len(origins)) {
    end <- n - (o - 1L) * h
    if (end - h < 3 * h) next
    train <- stats::window(y, end = stats::time(y)[end - h])
    truth <- as.numeric(y)[(end - h + 1L):end]
    tr <- as.numeric(train)
    scale <- mean(abs(diff(tr, lag = if (length(tr) > 2 * m) m else 1L)), na.rm = TRUE)
    for (meth in names(methods)) {
      t0 <- proc.time()[["elapsed"]]
      out <- safe(suppressWarnings(methods[[meth]](train, h)))
      secs[[length(secs) + 1L]] <- data.frame(method = meth, seconds = proc.time()[["elapsed"]] - t0)
      if (is.null(out)) { message(nm, " origin ", o, ": ", meth, " failed"); next }
      rows[[length(rows) + 1L]] <- data.frame(series = nm, origin = o, h = h, step = seq_len(h), method = meth,
        truth = truth, point = out$point, lower = out$lower, upper = out$upper, scale = scale)
    }
  }
  message(nm, " done")
}
d <- do.call(rbind, rows)
d <- d[!is.na(d$truth), ]
utils::write.csv(d, gzfile("bench/results/series_forecast.csv.gz"), row.names = FALSE)
d$ae <- abs(d$point - d$truth) / d$scale
d$cover <- d$lower <= d$truth & d$truth <= d$upper
d$width <- (d$upper - d$lower) / d$scale
d$iscore <- d$width + 20 * (pmax(d$lower - d$truth, 0) + pmax(d$truth - d$upper, 0)) / d$scale
meths <- names(methods)
per <- do.call(rbind, lapply(split(d, list(d$series, d$method), drop = TRUE), function(s)
  data.frame(series = s$series[1], method = s$method[1], mase = mean(s$ae), coverage = mean(s$cover), width = mean(s$width))))
wide <- stats::reshape(per[, c("series", "method", "mase")], idvar = "series", timevar = "method", direction = "wide")
names(wide) <- sub("^mase\\.", "", names(wide))
wide <- wide[match(names(series), wide$series), c("series", meths)]
wide <- wide[!is.na(wide$series), ]
covw <- stats::reshape(per[, c("series", "method", "coverage")], idvar = "series", timevar = "method", direction = "wide")
names(covw) <- sub("^coverage\\.", "", names(covw))
covw <- covw[match(wide$series, covw$series), c("series", meths)]
f3 <- function(x) ifelse(is.na(x), "-", sprintf("%.3f", x))
tab_md <- function(t) c(paste("|", paste(names(t), collapse = " | "), "|"), paste0(paste(rep("|---", ncol(t)), collapse = ""), "|"),
                        apply(t, 1, function(r) paste("|", paste(r, collapse = " | "), "|")))
fmt <- function(t) { for (k in meths) t[[k]] <- f3(t[[k]]); t }
ok <- stats::complete.cases(wide[, meths])
gm <- sapply(meths, function(k) exp(mean(log(wide[[k]][ok] / wide$auto.arima[ok]))))
wins <- sapply(meths, function(k) sum(wide[[k]][ok] < wide$auto.arima[ok]))
best <- table(factor(apply(wide[ok, meths], 1, function(r) meths[which.min(r)]), levels = meths))
summ <- data.frame(method = meths,
                   mase_over_auto.arima = sprintf("%.3f", gm),
                   lower_mase_than_auto.arima = sprintf("%d of %d", wins, sum(ok)),
                   best_on = as.integer(best),
                   coverage90 = sprintf("%.3f", sapply(meths, function(k) mean(d$cover[d$method == k]))),
                   width = sprintf("%.2f", sapply(meths, function(k) mean(d$width[d$method == k]))),
                   interval_score = sprintf("%.2f", sapply(meths, function(k) mean(d$iscore[d$method == k]))),
                   seconds_per_forecast = sprintf("%.2f", sapply(meths, function(k) mean(do.call(rbind, secs)$seconds[do.call(rbind, secs)$method == k]))))
by_step <- do.call(rbind, lapply(split(d, list(d$method, cut(d$step / d$h, c(0, 1/3, 2/3, 1), labels = c("first third", "second third", "last third"))), drop = TRUE),
  function(s) data.frame(method = s$method[1], part = as.character(cut(s$step[1] / s$h[1], c(0, 1/3, 2/3, 1), labels = c("first third", "second third", "last third"))),
                         mase = sprintf("%.3f", mean(s$ae)), coverage90 = sprintf("%.3f", mean(s$cover)))))
by_step <- by_step[order(match(by_step$method, meths), match(by_step$part, c("first third", "second third", "last third"))), ]
md <- c("# Forecasts against forecasting packages (bench/series_forecast.R)", "",
        readLines("bench/series_forecast.R", n = 27) |> sub(pattern = "^# ?", replacement = ""), "",
        sprintf("`Rscript bench/series_forecast.R %d` on %s (ditimpute %s, forecast %s, %s); %d series, %d forecasts per method, %.0f s in all. Load average at the end: %s (2 cores).",
                origins, format(started, "%Y-%m-%d %H:%M UTC", tz = "UTC"), as.character(utils::packageVersion("ditimpute")),
                as.character(utils::packageVersion("forecast")), R.version.string, nrow(wide), nrow(unique(d[d$method == "auto.arima", c("series", "origin")])),
                as.numeric(difftime(Sys.time(), started, units = "secs")), paste(readLines("/proc/loadavg"), collapse = "")), "",
        "## Summary (series where every method gave a forecast)", "", tab_md(summ), "",
        "`mase_over_auto.arima`: geometric mean over the series of the method's MASE over auto.arima's; `best_on`: series on which the method has the smallest MASE; `coverage90`: of all forecast values; `width`: mean 90% width in MASE units; `interval_score`: mean interval score in MASE units.", "",
        "## By part of the horizon (all series)", "", tab_md(by_step), "",
        "## MASE by series", "", tab_md(fmt(wide)), "", "## 90% coverage by series", "", tab_md(fmt(covw)))
writeLines(md, "bench/results/series_forecast.md")
cat(md, sep = "\n")
