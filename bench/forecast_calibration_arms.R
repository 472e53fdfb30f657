# Which calibration of forecast intervals (the prototype study behind
# predict(calibrate = TRUE)): the fitted model forecasts the series' own past
# from K origins spread over its second half (plug-in, nothing refitted),
# and the forecast's intervals are moved out by conformal quantiles of how
# far the observed values fell outside the model's own 80% intervals there
# (scores in half-widths on the model's scale, rescaled to each level).
# Arms, for 80% and 95% intervals:
#   P    predict()'s intervals (proper draws, the default), uncalibrated;
#   plugin  the same with proper = FALSE;
#   A..  the plug-in intervals moved out; B.. the proper intervals moved out;
#   C..  the wider of the proper intervals and A;
#   .W. widened only / .B. widened or narrowed; ..g per horizon group
#   (1, 2-3, 4-6, 7-12, 13-24, 25-48), ..p one factor for all horizons;
#   M    B widened only per group, the groups' factors made non-decreasing
#        in the horizon (weighted isotonic fit): the rule of
#        predict(calibrate = TRUE), which also scores leads beyond the
#        horizon (up to 500 or half the series) and needs fewer values per
#        group (a conformal quantile's minimum, not 10);
#   Mc   the same with each group's factor the largest of its own and the
#        nearer groups' (a running maximum), tried and not adopted;
#   M0   as M with each group's factor clamped at 0 before the isotonic
#        fit (so over-covering groups cannot pool a short-lead shortfall
#        away).
# Sets: "dev", forecast_rolling.R's 12 series and 24 origins each (the set
# the rule was looked at on), and "held", the 20 other series of
# series_forecast.R at its three origins (end, h and 2h frames earlier),
# looked at for some arms before the rule was fixed. Scored by coverage and by the
# interval score (width + (2 / a) x the miss beyond the interval; lower is
# better), each series' mean over the uncalibrated one's, geometric mean.
# Uses the package's internal functions (a prototype, not its code path).
# Usage: Rscript bench/forecast_calibration_arms.R [K] [out.md]
suppressPackageStartupMessages(library(ditimpute))
for (pkg in c("forecast", "tseries", "boot")) if (!requireNamespace(pkg, quietly = TRUE)) stop("needs ", pkg, " (bash tools/setup-bench.sh)")
ns <- asNamespace("ditimpute")
args <- commandArgs(trailingOnly = TRUE)
K <- if (length(args) >= 1) as.integer(args[1]) else 10L
out <- if (length(args) >= 2) args[2] else "bench/results/forecast_calibration.md"
tsd <- function(name) { e <- new.env(); utils::data(list = name, package = "tseries", envir = e); get(name, e) }
sets <- list(
  dev = list(series = list(AirPassengers = AirPassengers, UKDriverDeaths = UKDriverDeaths, nottem = nottem,
                           co2 = window(co2, 1980), USAccDeaths = USAccDeaths, austres = austres, LakeHuron = LakeHuron,
                           lynx = lynx, sunspot.year = sunspot.year, Nile = Nile, treering = ts(treering[5001:7000]),
                           logDAX = ts(log(as.numeric(EuStockMarkets[, "DAX"])))),
             h = function(x) { f <- frequency(x); if (f == 12) 12 else if (f == 4) 8 else 10 },
             origins = function(n, h) unique(round(seq(max(floor(0.6 * n), 40), n - h, length.out = 24)))),
  held = list(series = list(UKgas = UKgas, ldeaths = ldeaths, mdeaths = mdeaths, fdeaths = fdeaths,
                            JohnsonJohnson = JohnsonJohnson, BJsales = BJsales, WWWusage = WWWusage, airmiles = airmiles,
                            uspop = uspop, nhtemp = nhtemp, lh = lh, discoveries = discoveries, gas = forecast::gas,
                            wineind = forecast::wineind, woolyrnq = forecast::woolyrnq, tcm10y = tsd("tcm")[, "tcm10y"],
                            bev = tsd("bev"), USeconomic.rs = tsd("USeconomic")[, "rs"], manaus = boot::manaus,
                            nino3 = tsd("nino")[, "nino3"]),
              h = function(y) { f <- frequency(y); h <- if (f == 1) 6 else if (f == 4) 8 else if (f == 12) 18 else 2 * f
                as.integer(max(1, min(h, floor(length(y) / 10)))) },
              origins = function(n, h) n - c(2 * h, h, 0) - h))
hgroup <- function(k) findInterval(k, c(1, 2, 4, 7, 13, 25, 49))
# standardised errors of the model's plug-in forecasts of the series' own past
backtest <- function(imp, h) {
  model <- imp$model; v <- imp$x; n <- nrow(v)
  os <- unique(round(seq(max(floor(0.5 * n), 10), n - 1, length.out = K)))
  vs <- lapply(os, function(o) { w <- v; w[(o + 1):n, ] <- NA; w })
  b <- ns$series_model_bands(model, vs, 0.8, 1L)
  z <- c(); hh <- c()
  for (i in seq_along(os)) {
    k <- (os[i] + 1):min(n, os[i] + h)
    lo <- ns$on_model_scale(b[[i]]$lower[k, 1], rep(1L, length(k)), model$transform)
    hi <- ns$on_model_scale(b[[i]]$upper[k, 1], rep(1L, length(k)), model$transform)
    y <- ns$on_model_scale(v[k, 1], rep(1L, length(k)), model$transform)
    ok <- !is.na(y)
    z <- c(z, ((y - (lo + hi) / 2) / ((hi - lo) / 2 / qnorm(0.9)))[ok]); hh <- c(hh, (k - os[i])[ok])
  }
  list(z = z, h = hh)
}
factors <- function(bt, L, h, widen_only = TRUE, pooled = FALSE, monotone = FALSE, running = FALSE, clamp_first = FALSE) {
  s <- abs(bt$z) / qnorm((1 + L) / 2) - 1
  g <- hgroup(bt$h)
  q_all <- ns$conformal_quantile(s, L)
  if (!is.finite(q_all)) q_all <- 0
  gs <- sort(unique(hgroup(1:h)))
  q <- vapply(gs, function(b) {
    sel <- if (pooled) rep(TRUE, length(s)) else g == b
    x <- if (sum(sel) >= 10) ns$conformal_quantile(s[sel], L) else q_all
    if (is.finite(x)) x else q_all
  }, 0)
  if (clamp_first) q <- pmax(q, 0)
  if (monotone) q <- ns$isotonic_increasing(q, vapply(gs, function(b) max(1, sum(g == b)), 0))
  if (running) q <- cummax(q)
  if (widen_only) q <- pmax(q, 0)
  q[match(hgroup(1:h), gs)]
}
started <- Sys.time()
res <- list()
for (set in names(sets)) {
  S <- sets[[set]]
  for (nm in names(S$series)) {
    x <- S$series[[nm]]; n <- length(x); h <- S$h(x)
    for (o in S$origins(n, h)) {
      tr <- window(x, end = time(x)[o]); te <- as.numeric(x[o + 1:h])
      imp <- suppressWarnings(impute_series(tr, n_samples = 100, seed = o, threads = 1, progress = FALSE))
      fp <- suppressWarnings(predict(imp, n.ahead = h, level = c(0.8, 0.95), seed = o, threads = 1, calibrate = FALSE))
      fq <- suppressWarnings(predict(imp, n.ahead = h, level = c(0.8, 0.95), seed = o, threads = 1, proper = FALSE,
                                     calibrate = FALSE))
      bt <- backtest(imp, h)
      tf <- imp$model$transform
      ms <- function(a) ns$on_model_scale(a, rep(1L, length(a)), tf)
      bk <- function(a) ns$from_model_scale_vec(a, rep(1L, length(a)), tf)
      for (L in c(0.8, 0.95)) {
        p <- round(100 * L)
        lp <- ms(fp[[paste0("lower_", p)]]); up <- ms(fp[[paste0("upper_", p)]])
        lq <- ms(fq[[paste0("lower_", p)]]); uq <- ms(fq[[paste0("upper_", p)]])
        hp <- (up - lp) / 2; mp <- (up + lp) / 2; hq <- (uq - lq) / 2; mq <- (uq + lq) / 2
        arms <- list(P = list(lp, up), plugin = list(lq, uq))
        for (wo in c(TRUE, FALSE)) for (pool in c(FALSE, TRUE)) {
          q <- factors(bt, L, h, wo, pool)
          tag <- paste0(if (wo) "W" else "B", if (pool) "p" else "g")
          a <- list(mq - (1 + q) * hq, mq + (1 + q) * hq)
          arms[[paste0("A", tag)]] <- a
          arms[[paste0("B", tag)]] <- list(mp - (1 + q) * hp, mp + (1 + q) * hp)
          arms[[paste0("C", tag)]] <- list(pmin(lp, a[[1]]), pmax(up, a[[2]]))
        }
        q <- factors(bt, L, h, monotone = TRUE)
        arms$M <- list(mp - (1 + q) * hp, mp + (1 + q) * hp)
        q <- factors(bt, L, h, running = TRUE)
        arms$Mc <- list(mp - (1 + q) * hp, mp + (1 + q) * hp)
        q <- factors(bt, L, h, monotone = TRUE, clamp_first = TRUE)
        arms$M0 <- list(mp - (1 + q) * hp, mp + (1 + q) * hp)
        for (arm in names(arms)) {
          lo <- bk(arms[[arm]][[1]]); hi <- bk(arms[[arm]][[2]])
          res[[length(res) + 1]] <- data.frame(set = set, series = nm, origin = o, h = 1:h, level = p, arm = arm,
            covered = te >= lo & te <= hi,
            score = hi - lo + (2 / (1 - L)) * (pmax(lo - te, 0) + pmax(te - hi, 0)))
        }
      }
    }
    message(set, " ", nm, " done")
  }
}
d <- do.call(rbind, res)
arms <- unique(d$arm)
rows <- c()
for (set in names(sets)) for (p in c(80, 95)) {
  z <- d[d$set == set & d$level == p, ]
  base <- tapply(z$score[z$arm == "P"], z$series[z$arm == "P"], mean)
  for (arm in arms) {
    y <- z[z$arm == arm, ]
    r <- tapply(y$score, y$series, mean)[names(base)] / base
    rows <- c(rows, sprintf("| %s | %d%% | %s | %.1f | %.3f | %.3f-%.3f | %d of %d |", set, p, arm, 100 * mean(y$covered),
                            exp(mean(log(r))), min(r), max(r), sum(r > 1 + 1e-9), length(r)))
  }
}
lines <- c("# Calibrating forecast intervals on the model's forecasts of the series' own past: the arms (bench/forecast_calibration_arms.R)", "",
           sprintf("`Rscript bench/forecast_calibration_arms.R %d` on %s (%.1f min), ditimpute from %s, one thread; %d origins per backtest. Load average at the end: %s (2 cores).",
                   K, format(started, "%Y-%m-%d %H:%M UTC", tz = "UTC"), as.numeric(difftime(Sys.time(), started, units = "mins")),
                   find.package("ditimpute"), K, paste(readLines("/proc/loadavg"), collapse = "")), "",
           readLines("bench/forecast_calibration_arms.R", n = 30) |> sub(pattern = "^# ?", replacement = ""), "",
           "| set | level | arm | coverage % | interval score / P (geometric mean over series) | range | series worse |",
           "|---|---|---|---|---|---|---|", rows)
writeLines(lines, out)
cat(lines, sep = "\n")
