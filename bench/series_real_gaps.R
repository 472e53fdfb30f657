# impute_series() on the series that imputeTS ships with their own, real gaps
# and the complete truth beside them, against what users would pick instead,
# all in one run.
#
# Issue 27 was filed from a new user's run on series like these (a sensor
# series of a few thousand frames with about a fifth missing and many gaps
# over 60 frames; one of over half a million frames with about a tenth
# missing), but no benchmark had scored the package on them: every other
# long-series bench hides gaps drawn from a law (bench/series_long.R). Here
# the gaps are the sensors' own (their lengths, places and clustering), and
# the truth is imputeTS's *Complete twin of each series:
#   tsNH4     NH4 concentration in a waste-water plant, 10-minute readings
#             (4,552 frames, frequency 144: a day), 883 missing in 155 gaps of 1-157;
#   tsHeating a heating system's supply temperature, 1-minute readings
#             (606,837 frames, frequency 1,440: a day), 57,391 missing in
#             2,087 gaps of 1-258;
#   tsAirgap  AirPassengers with 13 monthly values missing (gaps of 1-3).
# None of these was used to choose any of the package's defaults.
# Methods: bench/series_long.R's (impute_series() raw and self-calibrated at
# its settings, linear interpolation, imputeTS's na_interpolation, na_seadec,
# na_kalman where it finishes within `kalman_limit` seconds, na_ma).
# Scores: MAE and RMSE of the missing values, 90% coverage, by gap-length
# group (1, 2-5, 6-20, 21-60, over 60) and overall, with delta-method
# standard errors that count each gap as one unit. One run: the gaps are the
# series' own, so there is nothing to repeat but the sample paths (seed 1).
#
# Usage: Rscript bench/series_real_gaps.R [series,...]   (from the repository
#   root; default tsNH4,tsAirgap,tsHeating). Writes
#   bench/results/series_real_gaps.md (series_real_gaps_<series>.md for others).
suppressMessages(library(ditimpute))
if (!requireNamespace("imputeTS", quietly = TRUE)) stop("this bench needs imputeTS (bash tools/setup-bench.sh)")
args <- commandArgs(trailingOnly = TRUE)
default <- c("tsNH4", "tsAirgap", "tsHeating")
names_run <- if (length(args) >= 1 && nzchar(args[1])) strsplit(args[1], ",")[[1]] else default
source("bench/series_long_parts.R")
src <- series_long_parts(kalman_limit = 120)
source("bench/with_object.R")
# Beside the default, the same call with the level's rate left at its
# maximum-likelihood value (the default before 2026-12-04).
src$methods$gp_ml_rate <- src$variants$gp_ml_rate
its <- c("na_interpolation", "na_seadec", "na_kalman", "na_ma")

t_start <- proc.time()[["elapsed"]]
rows <- list(); info <- list()
for (name in names_run) {
  s <- imputets_series(name)
  h <- s$h
  truth <- s$truth
  grp <- src$group_of(src$run_len(h)[h])
  gap <- cumsum(c(TRUE, diff(which(h)) > 1))
  for (m in names(src$methods)) {
    t0 <- proc.time()[["elapsed"]]
    out <- tryCatch(suppressWarnings(src$methods[[m]](s$y, name)),
                    error = function(e) { message(m, " on ", name, ": ", conditionMessage(e)); NULL })
    secs <- proc.time()[["elapsed"]] - t0
    if (is.null(out)) next
    est <- out$point[h]
    cover <- if (!is.null(out$lower)) out$lower[h] <= truth & truth <= out$upper[h] else rep(NA, sum(h))
    width <- if (!is.null(out$lower)) out$upper[h] - out$lower[h] else rep(NA, sum(h))
    rows[[length(rows) + 1]] <- data.frame(series = name, method = m, group = grp, gap = gap, err = est - truth,
                                           cover = cover, width = width, below = sum(est <= 0 |
                                             (if (!is.null(out$lower)) out$lower[h] <= 0 else FALSE)),
                                           seconds = secs)
    if (m == "gp") info[[name]] <- list(model = out$model, frames = length(s$y), missing = sum(h),
                                        gaps = max(gap), longest = max(src$run_len(h)))
    cat(sprintf("%s %s: %.1f s\n", name, m, secs))
  }
}
res <- do.call(rbind, rows)
res$abs <- abs(res$err)

fmt <- function(x, digits = 3) ifelse(is.na(x), "-", formatC(x, format = "f", digits = digits))
pct <- function(x) ifelse(is.na(x), "-", sprintf("%.1f%%", 100 * x))
# One row per series and group (and "all"): the GP's MAE over the best
# imputeTS method's (best on the whole series) and linear interpolation's,
# with SEs, and the raw and calibrated coverage.
score <- function(d, name, label, best) {
  a <- d[d$method == "gp", ]; b <- d[d$method == best, ]; l <- d[d$method == "linear", ]
  cal <- d[d$method == "gp_calibrated", ]
  ml <- d[d$method == "gp_ml_rate", ]
  data.frame(series = name, group = label, entries = nrow(a), gaps = length(unique(a$gap)),
             mae_gp = mean(a$abs), mae_best = mean(b$abs), mae_linear = mean(l$abs),
             ratio_best = mean(a$abs) / mean(b$abs), se_best = src$ratio_se(a$abs, b$abs, a$gap),
             ratio_linear = mean(a$abs) / mean(l$abs), se_linear = src$ratio_se(a$abs, l$abs, a$gap),
             ratio_ml = if (nrow(ml)) mean(a$abs) / mean(ml$abs) else NA,
             se_ml = if (nrow(ml)) src$ratio_se(a$abs, ml$abs, a$gap) else NA,
             rmse_ratio_best = sqrt(mean(a$err^2) / mean(b$err^2)),
             coverage = mean(a$cover), coverage_se = src$ratio_se(as.numeric(a$cover), rep(1, nrow(a)), a$gap),
             calibrated = if (nrow(cal)) mean(cal$cover) else NA, width_ratio = if (nrow(cal)) mean(cal$width) / mean(a$width) else NA)
}
tab <- do.call(rbind, lapply(names_run, function(name) {
  d <- res[res$series == name, ]
  mae <- tapply(d$abs, d$method, mean)
  present <- intersect(its, names(mae)[!is.na(mae)])
  best <- present[which.min(mae[present])]
  out <- score(d, name, "all", best)
  for (k in levels(d$group)) if (any(d$group == k & d$method == "gp")) out <- rbind(out, score(d[d$group == k, ], name, k, best))
  out$best <- best
  out
}))
methods_tab <- do.call(rbind, lapply(names_run, function(name) {
  d <- res[res$series == name, ]
  do.call(rbind, lapply(unique(d$method), function(m) {
    a <- d[d$method == m, ]
    data.frame(series = name, method = m, mae = mean(a$abs), rmse = sqrt(mean(a$err^2)),
               mae_over_60 = if (any(a$group == ">60")) mean(a$abs[a$group == ">60"]) else NA,
               coverage = mean(a$cover), below = a$below[1], seconds = a$seconds[1])
  }))
}))

load <- tryCatch(readLines("/proc/loadavg"), error = function(e) "unknown")
md <- c("# impute_series() on imputeTS's series with their own gaps (bench/series_real_gaps.R)", "",
        sprintf("`Rscript bench/series_real_gaps.R %s` on %s (%s, ditimpute %s, imputeTS %s). The missing values are the",
                paste(args, collapse = " "), format(Sys.Date()), R.version.string,
                as.character(utils::packageVersion("ditimpute")), as.character(utils::packageVersion("imputeTS"))),
        "series' own; the truth is imputeTS's `*Complete` twin. 90% intervals, 50 sample paths, seed 1, default arguments.",
        sprintf("Whole run %.0f s; load average at the end: %s (2 cores).", proc.time()[["elapsed"]] - t_start, load), "",
        "| series | frames | missing | gaps | longest | model chosen |", "|---|---|---|---|---|---|",
        vapply(names(info), function(n) with(info[[n]], sprintf("| %s | %d | %d | %d | %d | %s |", n, frames, missing,
                                                                 gaps, longest, model)), ""), "",
        "## Every method", "",
        "`below`: imputations or lower interval ends <= 0 (every series here is positive); `seconds`: the call's time.", "",
        "| series | method | MAE | RMSE | MAE over 60 | coverage90 | below | seconds |", "|---|---|---|---|---|---|---|---|",
        sprintf("| %s | %s | %s | %s | %s | %s | %d | %.1f |", methods_tab$series, methods_tab$method, fmt(methods_tab$mae, 4),
                fmt(methods_tab$rmse, 4), fmt(methods_tab$mae_over_60, 4), pct(methods_tab$coverage), methods_tab$below,
                methods_tab$seconds), "",
        "## By gap length", "",
        "`ratio_best`: impute_series()'s MAE over the best imputeTS method's on the whole series (`best`), `ratio_linear`:",
        "over linear interpolation's, `rmse_ratio_best`: the RMSE's over the best's; SEs count each gap as one unit.",
        "`coverage90`: raw 90% intervals (SE), `calibrated`: with `calibrate = TRUE`, `width`: its intervals' mean width over the raw ones'.",
        "`ratio_ml_rate`: over the same call's with the level's rate left at its maximum-likelihood value (`gp_ml_rate`).", "",
        "| series | group | entries | gaps | best | ratio_best (SE) | ratio_linear (SE) | ratio_ml_rate (SE) | rmse_ratio_best | coverage90 (SE) | calibrated | width |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
        sprintf("| %s | %s | %d | %d | %s | %s (%s) | %s (%s) | %s (%s) | %s | %s (%s) | %s | %s |", tab$series, tab$group, tab$entries,
                tab$gaps, tab$best, fmt(tab$ratio_best), fmt(tab$se_best), fmt(tab$ratio_linear), fmt(tab$se_linear),
                fmt(tab$ratio_ml), fmt(tab$se_ml),
                fmt(tab$rmse_ratio_best), pct(tab$coverage), fmt(100 * tab$coverage_se, 1), pct(tab$calibrated),
                fmt(tab$width_ratio, 2)), "")
out_file <- if (identical(names_run, default)) "series_real_gaps.md" else
  paste0("series_real_gaps_", paste(names_run, collapse = "_"), ".md")
dir.create("bench/results", showWarnings = FALSE, recursive = TRUE)
writeLines(md, file.path("bench/results", out_file))
cat(md, sep = "\n")
