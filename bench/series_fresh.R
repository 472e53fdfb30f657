# impute_series() on R's own short series that no benchmark or default of the
# package was developed on, against what users would pick instead, in one run.
#
# bench/series.R (co2, nottem, UKgas, ldeaths, Nile, EuStockMarkets,
# Seatbelts) and bench/series_long.R (ETTh1/ETTh2, BeijingAir, treering,
# sunspot.month) are the series the model's choices were made or checked on;
# the 20 here are other series of R's `datasets` (monthly, quarterly, yearly;
# smooth, rough, cyclic, trending, positive and skewed, with level shifts and
# their own missing values), from 19 to 2,820 frames.
# Gaps: series_long.R's law (P(L) ~ L^-1.5), capped at an eighth of the
# series, until 15% of the observed values are hidden; each repetition draws
# new gaps. Methods: series_long.R's (impute_series() raw and self-calibrated,
# linear interpolation, imputeTS's na_interpolation, na_seadec, na_kalman,
# na_ma). Scores pooled over the repetitions: MAE ratios of the GP to the
# best imputeTS method and to linear interpolation, 90% coverage, with
# standard errors that count each hidden gap as one unit.
#
# A second set, `packages`, holds 11 series of the packages that imputeTS
# brings (forecast, tseries) and of boot, which no session had run before
# 2026-12-03: daily gold prices with their own gaps and a spike, half-hourly
# electricity demand (4,032 frames), a river's daily flow, monthly gas
# production, wine sales, wool production, the Nino-3 index, a 10-year bond
# rate, Beveridge's wheat prices, a quarterly interest rate and the Rio
# Negro's level at Manaus.
# Further methods, run when named in the third argument: bench/series_long.R's
# variants (gp_level, gp_trend, gp_stationary, ...) and gp_nonstationary, the
# default with the stationary class never chosen (BIC's best level or trend
# form; bench/series_class_rules.R's auto_nonstationary), gp_proper (proper = TRUE
# at any length) and gp_lr_rule (transform = "auto" with a likelihood-ratio
# test of additive changes, see series_model.R's boxcox_auto_lr); each is reported as its MAE over the default's and its coverage.
#
# Usage: Rscript bench/series_fresh.R [reps] [datasets|packages] [method,...]
#   (from the repository root). Writes bench/results/series_fresh.md for the
#   first set with no extra methods, else series_fresh_<set>[_<methods>].md.
suppressMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
reps <- if (length(args) >= 1) as.integer(args[1]) else 10L
set <- if (length(args) >= 2) args[2] else "datasets"
extra <- if (length(args) >= 3) strsplit(args[3], ",")[[1]] else character(0)
stopifnot(set %in% c("datasets", "packages"))
share <- 0.15

# series_long.R's gaps, methods and standard errors.
source("bench/series_long_parts.R")
src <- series_long_parts(kalman_limit = 60)

series <- if (set == "datasets") list(AirPassengers = AirPassengers, lynx = lynx, LakeHuron = LakeHuron, USAccDeaths = USAccDeaths,
               JohnsonJohnson = JohnsonJohnson, UKDriverDeaths = UKDriverDeaths, WWWusage = WWWusage,
               sunspot.year = sunspot.year, presidents = presidents, austres = austres, BJsales = BJsales,
               nhtemp = nhtemp, mdeaths = mdeaths, discoveries = discoveries, airmiles = airmiles,
               beaver1 = ts(beaver1$temp), lh = lh, sunspots = sunspots, airquality.Ozone = ts(airquality$Ozone),
               uspop = uspop) else {
  for (pkg in c("forecast", "tseries", "boot"))
    if (!requireNamespace(pkg, quietly = TRUE)) stop("the packages set needs ", pkg, " (bash tools/setup-bench.sh)")
  tsd <- function(name) { e <- new.env(); utils::data(list = name, package = "tseries", envir = e); get(name, e) }
  list(gold = forecast::gold, taylor = forecast::taylor, ice.river.flow = tsd("ice.river")[, "flow.vat"],
       gas = forecast::gas, wineind = forecast::wineind, woolyrnq = forecast::woolyrnq, nino3 = tsd("nino")[, "nino3"],
       tcm10y = tsd("tcm")[, "tcm10y"], bev = tsd("bev"), USeconomic.rs = tsd("USeconomic")[, "rs"],
       manaus = boot::manaus)
}
# The default with the stationary class never chosen (as in
# bench/series_class_rules.R): margins that no hidden-gap difference overcomes.
source("bench/with_object.R")
never_margin <- never_stationary_margin()
local_variants <- list(gp_nonstationary = function(y, name) with_object("series_gap_margin", never_margin,
                                                                            src$gp_run(y)),
                       # proper multiple imputation (form and parameters drawn per path) at any length;
                       # the default has it on series of under 60 frames and on series with an end gap.
                       gp_proper = function(y, name) src$gp_run(y, proper = TRUE),
                       # transform = "auto" with a Box-Cox scale also for positive variables spanning
                       # less than an order of magnitude whose one-frame changes reject additive ones
                       # (likelihood-ratio statistic at least qchisq(0.999, 1)): measured, not adopted
                       # (bench/results/series_transform_rule.md).
                       gp_lr_rule = function(y, name) with_object("boxcox_auto_lr", stats::qchisq(0.999, 1),
                                                                  src$gp_run(y)))
known <- c(names(src$variants), names(local_variants))
if (length(bad <- setdiff(extra, known))) stop("unknown methods: ", paste(bad, collapse = ", "), "; known: ",
                                                 paste(known, collapse = ", "))
methods <- c(src$methods, c(src$variants, local_variants)[extra])

its <- c("na_interpolation", "na_seadec", "na_kalman", "na_ma")
t_start <- proc.time()[["elapsed"]]
rows <- list()
models <- list()
for (name in names(series)) {
  y0 <- series[[name]]
  for (r in seq_len(reps)) {
    g <- src$hide_repetition(y0, name, r, share, max_len = max(2L, length(y0) %/% 8L))
    h <- g$h
    gap <- paste(r, cumsum(c(TRUE, diff(which(h)) > 1)))
    for (m in names(methods)) {
      t0 <- proc.time()[["elapsed"]]
      out <- tryCatch(suppressWarnings(methods[[m]](g$y, name)),
                      error = function(e) { message(m, " on ", name, ": ", conditionMessage(e)); NULL })
      secs <- proc.time()[["elapsed"]] - t0
      if (is.null(out)) next
      est <- out$point[h]
      cover <- if (!is.null(out$lower)) out$lower[h] <= g$truth & g$truth <= out$upper[h] else rep(NA, sum(h))
      positive <- all(as.numeric(y0) > 0, na.rm = TRUE)
      nonpos <- if (positive) sum(est <= 0 | (if (!is.null(out$lower)) out$lower[h] <= 0 else FALSE)) else NA
      rows[[length(rows) + 1]] <- data.frame(series = name, rep = r, gap = gap, method = m, group = g$grp,
                                             abs = abs(est - g$truth),
                                             cover = cover, seconds = secs, nonpositive = nonpos)
      if (!is.null(out$model) && m %in% c("gp", "gp_calibrated")) models[[length(models) + 1]] <- data.frame(series = name, model = out$model)
    }
  }
  cat(sprintf("%s done (%.0f s)\n", name, proc.time()[["elapsed"]] - t_start))
}
res <- do.call(rbind, rows)
mods <- do.call(rbind, models)

per <- do.call(rbind, lapply(names(series), function(name) {
  d <- res[res$series == name, ]
  mae <- tapply(d$abs, d$method, mean)
  present <- full_methods(d, intersect(its, names(mae)))  # scored on the GP's values
  best <- present[which.min(mae[present])]
  a <- d[d$method == "gp", ]
  ref <- function(m) d[d$method == m, ]
  cal <- d[d$method == "gp_calibrated", ]
  chosen <- table(mods$model[mods$series == name])
  data.frame(series = name, frames = length(series[[name]]), hidden = nrow(a) / reps, gaps = length(unique(a$gap)),
             best_imputeTS = best, ratio_best = unname(mae["gp"] / mae[best]),
             se_best = src$ratio_se(a$abs, ref(best)$abs, a$gap),
             ratio_linear = unname(mae["gp"] / mae["linear"]), se_linear = src$ratio_se(a$abs, ref("linear")$abs, a$gap),
             coverage90 = mean(a$cover), coverage_se = src$ratio_se(as.numeric(a$cover), rep(1, nrow(a)), a$gap),
             calibrated = if (nrow(cal)) mean(cal$cover) else NA,
             nonpositive = if (all(is.na(a$nonpositive))) NA else sum(a$nonpositive[!duplicated(a$rep)]),
             gp_seconds = sum(a$seconds[!duplicated(a$rep)]) / reps,
             models = paste(sprintf("%s %d", trimws(names(chosen)), as.integer(chosen)), collapse = "; "))
}))
# By gap-length group: the GP's MAE over the best imputeTS method's (the
# series' best overall) and over linear interpolation's, and its coverage.
by_group <- do.call(rbind, lapply(names(series), function(name) {
  d <- res[res$series == name, ]
  best <- per$best_imputeTS[per$series == name]
  do.call(rbind, lapply(levels(d$group), function(k) {
    a <- d[d$method == "gp" & d$group == k, ]
    if (!nrow(a)) return(NULL)
    b <- d[d$method == best & d$group == k, ]; l <- d[d$method == "linear" & d$group == k, ]
    data.frame(series = name, group = k, entries = nrow(a), gaps = length(unique(a$gap)),
               ratio_best = mean(a$abs) / mean(b$abs), se_best = src$ratio_se(a$abs, b$abs, a$gap),
               ratio_linear = mean(a$abs) / mean(l$abs), coverage90 = mean(a$cover))
  }))
}))
# Each further method against the default: MAE ratio (SE) and coverage.
vs <- do.call(rbind, lapply(names(series), function(name) {
  d <- res[res$series == name, ]
  a <- d[d$method == "gp", ]
  do.call(rbind, lapply(extra, function(e) {
    b <- d[d$method == e, ]
    data.frame(series = name, method = e, ratio = mean(b$abs) / mean(a$abs), se = src$ratio_se(b$abs, a$abs, a$gap),
               coverage90 = mean(b$cover), coverage_gp = mean(a$cover))
  }))
}))

fmt <- function(x, digits = 3) ifelse(is.na(x), "NA", formatC(x, format = "f", digits = digits))
load <- tryCatch(readLines("/proc/loadavg"), error = function(e) "unknown")
md <- c("# impute_series() on R series it was not developed on (bench/series_fresh.R)", "",
        sprintf("`Rscript bench/series_fresh.R %s` on %s (%s, ditimpute %s); %d repetitions per series, each with new gaps:",
                paste(args, collapse = " "), format(Sys.Date()), R.version.string,
                as.character(utils::packageVersion("ditimpute")), reps),
        "15% of the observed values hidden in gaps with P(L) ~ L^-1.5 on 1 .. an eighth of the series; 90% intervals,",
        sprintf("50 sample paths, default arguments. Whole run %.0f s; load average at the end: %s (2 cores).",
                proc.time()[["elapsed"]] - t_start, load), "",
        "`ratio_best`: the GP's MAE over the best imputeTS method's on the same hidden values (< 1: the GP is better),",
        "`ratio_linear`: over linear interpolation's; `se_*`: delta-method standard errors counting each hidden gap",
        "as one unit; `coverage90`: hidden values inside the raw 90% intervals, `calibrated`: with `calibrate = TRUE`;",
        "`nonpositive`: imputations or lower bounds <= 0 on a positive series (all repetitions); `gp_seconds`: per",
        "repetition; `models`: the forms chosen, with counts.", "",
        "| series | frames | hidden | gaps | best_imputeTS | ratio_best | se_best | ratio_linear | se_linear | coverage90 | coverage_se | calibrated | nonpositive | gp_seconds | models |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        sprintf("| %s | %d | %.1f | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %.2f | %s |", per$series, per$frames,
                per$hidden, per$gaps, per$best_imputeTS, fmt(per$ratio_best), fmt(per$se_best), fmt(per$ratio_linear),
                fmt(per$se_linear), fmt(per$coverage90), fmt(per$coverage_se), fmt(per$calibrated),
                ifelse(is.na(per$nonpositive), "-", per$nonpositive), per$gp_seconds, per$models), "",
        "## Summary", "",
        sprintf("- MAE at most the best imputeTS method's on %d of %d series (more than 2 SE better on %d, more than 2 SE worse on %d);",
                sum(per$ratio_best <= 1), nrow(per), sum(per$ratio_best + 2 * per$se_best < 1, na.rm = TRUE),
                sum(per$ratio_best - 2 * per$se_best > 1, na.rm = TRUE)),
        sprintf("  geometric mean of ratio_best %.3f, of ratio_linear %.3f; median ratio_best %.3f.",
                exp(mean(log(per$ratio_best))), exp(mean(log(per$ratio_linear))), stats::median(per$ratio_best)),
        sprintf("- Raw 90%% coverage within 85-95%% on %d of %d series (%s outside); self-calibrated on %d.",
                sum(per$coverage90 >= 0.85 & per$coverage90 <= 0.95), nrow(per),
                paste(sprintf("%s %.1f%%", per$series, 100 * per$coverage90)[per$coverage90 < 0.85 | per$coverage90 > 0.95],
                      collapse = ", "),
                sum(per$calibrated >= 0.85 & per$calibrated <= 0.95, na.rm = TRUE)),
        sprintf("- Pooled over all series: raw coverage %.1f%%, self-calibrated %.1f%%.",
                100 * mean(res$cover[res$method == "gp"]), 100 * mean(res$cover[res$method == "gp_calibrated"])), "")
md <- c(md, "## By gap length", "",
        "The GP's MAE over the series' best imputeTS method's (`ratio_best`, SE counting each hidden gap as one unit) and",
        "over linear interpolation's, and its raw 90% coverage, in each gap-length group.", "",
        "| series | group | entries | gaps | ratio_best | se_best | ratio_linear | coverage90 |", "|---|---|---|---|---|---|---|---|",
        sprintf("| %s | %s | %d | %d | %s | %s | %s | %s |", by_group$series, by_group$group, by_group$entries, by_group$gaps,
                fmt(by_group$ratio_best), fmt(by_group$se_best), fmt(by_group$ratio_linear), fmt(by_group$coverage90)), "")
if (length(extra)) {
  md <- c(md, "## Further methods against the default (`gp`)", "",
          "`ratio`: the method's MAE over the default's on the same hidden values (SE counting each hidden gap as one",
          "unit); `coverage90` / `coverage_gp`: its raw 90% coverage and the default's.", "",
          "| series | method | ratio | se | coverage90 | coverage_gp |", "|---|---|---|---|---|---|",
          sprintf("| %s | %s | %s | %s | %s | %s |", vs$series, vs$method, fmt(vs$ratio), fmt(vs$se), fmt(vs$coverage90),
                  fmt(vs$coverage_gp)), "")
  for (e in extra) {
    v <- vs[vs$method == e, ]
    md <- c(md, sprintf(paste("- %s: geometric mean of the MAE ratio %.3f (lower on %d, higher on %d of %d series; more than",
                              "2 SE lower on %d, higher on %d; largest %.3f on %s); mean |coverage - 0.9| %.3f against %.3f."),
                        e, exp(mean(log(v$ratio))), sum(v$ratio < 1), sum(v$ratio > 1), nrow(v),
                        sum(v$ratio + 2 * v$se < 1), sum(v$ratio - 2 * v$se > 1), max(v$ratio), v$series[which.max(v$ratio)],
                        mean(abs(v$coverage90 - 0.9)), mean(abs(v$coverage_gp - 0.9))))
  }
  md <- c(md, "")
}
dir.create("bench/results", showWarnings = FALSE, recursive = TRUE)
out_file <- if (set == "datasets" && !length(extra)) "series_fresh.md" else
  paste0("series_fresh_", set, if (length(extra)) paste0("_", paste(extra, collapse = "_")), ".md")
writeLines(md, file.path("bench/results", out_file))
cat(md, sep = "\n")
