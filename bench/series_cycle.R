# impute_series()'s default (kernel = "auto", which since 2026-12-02 also
# weighs a cycle the calendar does not give, chosen on the series' own hidden
# gaps: series_gap_selection()) against the former default (the calendar's
# forms by BIC only), kernel = "cycle" (the cycle forced) and what users
# would pick instead, by gap length, in one run.
#
# Series: bench/series_long.R's sunspot.month (3,177 months, an ~11-year
# cycle its calendar period of 12 does not hold; the series on which the
# cycle was first tried, with a fixed period of 132), then series nobody
# tuned it on: R's lynx (114 years, a ~10-year cycle), sunspot.year (289
# years) and sunspots (2,820 months, 1749-1983: most of sunspot.month's
# years, so not independent of it), hourly series whose calendar
# period (24) is the cycle, where "cycle" should find it and do as the
# season does (ETTh1's HUFL load, BeijingAir's temperature at Dingling), and
# (in the run of the default's choice) series without a cycle beyond the
# calendar's: treering, Nile, LakeHuron, co2, nottem, UKDriverDeaths.
# Gaps: series_long.R's law, P(L) ~ L^-1.5, capped at an eighth of the
# series for the short ones (as bench/series_fresh.R), until 15% of the
# observed values are hidden; new gaps each repetition.
# Methods: impute_series() with its defaults ("gp"), with the former default
# ("gp_former": the cycle's screen, series_auto_cycle(), replaced by one
# that never passes, in this process only), with kernel = "cycle"
# ("gp_cycle"), linear interpolation, imputeTS's na_interpolation,
# na_seadec, na_kalman (where it finishes in 60 s) and na_ma.
# Scores: MAE per gap-length group (1, 2-5, 6-20, 21-60, over 60) and
# overall: the default's over the former default's, the cycle's over the
# former default's, and each over the best imputeTS method's and linear
# interpolation's, with standard errors that count each hidden gap as one
# unit; 90% coverage of each; the kernels the default chose; the fitted periods.
#
# Usage: Rscript bench/series_cycle.R [reps] [series,...]   (repository root)
# Writes bench/results/series_cycle_auto.md (series_cycle_auto_<series>.md for a subset).
suppressMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
reps <- if (length(args) >= 1) as.integer(args[1]) else 5L
source("bench/series_long_parts.R")
src <- series_long_parts(kalman_limit = 60)
src$data_dir <- Sys.getenv("DITIMPUTE_DATA", file.path("..", "shared", "data"))
all_series <- list(sunspot.month = function() datasets::sunspot.month, lynx = function() datasets::lynx,
                   sunspot.year = function() datasets::sunspot.year, sunspots = function() datasets::sunspots,
                   ETTh1_HUFL = function() src$other_series("ETTh1_HUFL")(),
                   BeijingAir_Dingling_TEMP = function() src$other_series("BeijingAir_Dingling_TEMP")(),
                   treering = function() datasets::treering, Nile = function() datasets::Nile,
                   LakeHuron = function() datasets::LakeHuron, co2 = function() datasets::co2,
                   nottem = function() datasets::nottem, UKDriverDeaths = function() datasets::UKDriverDeaths)
picked <- if (length(args) >= 2 && nzchar(args[2])) strsplit(args[2], ",")[[1]] else names(all_series)
stopifnot(all(picked %in% names(all_series)))
its <- c("na_interpolation", "na_seadec", "na_kalman", "na_ma")
fitted <- new.env()
cycle_run <- function(y, name) {
  imp <- impute_series(y, level = 0.9, n_samples = 50, seed = 1, kernel = "cycle")
  fitted[[name]] <- c(fitted[[name]], imp$model$period)
  list(point = as.numeric(imp$point), lower = as.numeric(imp$lower), upper = as.numeric(imp$upper))
}
chosen <- new.env()
default_run <- function(y, name) {
  imp <- impute_series(y, level = 0.9, n_samples = 50, seed = 1)
  chosen[[name]] <- c(chosen[[name]], if (imp$model$kernel_name == "cycle") sprintf("cycle %.1f", imp$model$period) else
    imp$model$kernel_name)
  list(point = as.numeric(imp$point), lower = as.numeric(imp$lower), upper = as.numeric(imp$upper))
}
screen <- get("series_auto_cycle", asNamespace("ditimpute"))
former_run <- function(y, name) {
  utils::assignInNamespace("series_auto_cycle", function(...) NULL, "ditimpute")
  on.exit(utils::assignInNamespace("series_auto_cycle", screen, "ditimpute"))
  src$methods$gp(y, name)
}
methods <- c(list(gp = default_run, gp_former = former_run, gp_cycle = cycle_run), src$methods[c("linear", its)])

t_start <- proc.time()[["elapsed"]]
rows <- list()
secs <- list()
for (name in picked) {
  y0 <- all_series[[name]]()
  for (r in seq_len(reps)) {
    cap <- if (length(y0) < 4000) max(2L, length(y0) %/% 8L) else 400L
    g <- src$hide_repetition(y0, name, r, 0.15, max_len = cap)
    gap <- paste(r, g$gap)
    for (m in names(methods)) {
      t0 <- proc.time()[["elapsed"]]
      out <- tryCatch(suppressWarnings(methods[[m]](g$y, name)),
                      error = function(e) { message(m, " on ", name, ": ", conditionMessage(e)); NULL })
      if (is.null(out)) next
      secs[[length(secs) + 1]] <- data.frame(series = name, method = m, seconds = proc.time()[["elapsed"]] - t0)
      cover <- if (!is.null(out$lower)) out$lower[g$h] <= g$truth & g$truth <= out$upper[g$h] else NA
      rows[[length(rows) + 1]] <- data.frame(series = name, rep = r, gap = gap, grp = g$grp, method = m,
                                             abs = abs(out$point[g$h] - g$truth), cover = cover)
    }
  }
  cat(sprintf("%s done (%.0f s)\n", name, proc.time()[["elapsed"]] - t_start))
}
res <- do.call(rbind, rows)
secs <- do.call(rbind, secs)

fmt <- function(x, digits = 3) ifelse(is.na(x), "NA", formatC(x, format = "f", digits = digits))
# One line per series and group ("all" = every hidden value).
table_rows <- list()
for (name in picked) {
  d <- res[res$series == name, ]
  for (grp in c("all", levels(d$grp))) {
    s <- if (grp == "all") d else d[d$grp == grp, ]
    if (!nrow(s)) next
    mae <- tapply(s$abs, s$method, mean)
    present <- full_methods(s, intersect(its, names(mae)))  # scored on the GP's values
    best <- present[which.min(mae[present])]
    ref <- function(m) s[s$method == m, ]
    a <- ref("gp")
    ratio <- function(m, over) c(mae[[m]] / mae[[over]], src$ratio_se(ref(m)$abs, ref(over)$abs, a$gap))
    table_rows[[length(table_rows) + 1]] <- data.frame(
      series = name, group = grp, values = nrow(a) / reps, gaps = length(unique(a$gap)),
      gp = mae[["gp"]], gp_former = mae[["gp_former"]], gp_cycle = mae[["gp_cycle"]], linear = mae[["linear"]],
      best_imputeTS = best, best_mae = mae[[best]],
      gp_over_former = ratio("gp", "gp_former")[1], se_former = ratio("gp", "gp_former")[2],
      cycle_over_former = ratio("gp_cycle", "gp_former")[1], se_cycle = ratio("gp_cycle", "gp_former")[2],
      gp_over_best = ratio("gp", best)[1], se_best = ratio("gp", best)[2],
      gp_over_linear = mae[["gp"]] / mae[["linear"]], former_over_linear = mae[["gp_former"]] / mae[["linear"]],
      cover_gp = mean(a$cover), cover_former = mean(ref("gp_former")$cover), cover_cycle = mean(ref("gp_cycle")$cover))
  }
}
tab <- do.call(rbind, table_rows)
time_tab <- aggregate(seconds ~ series + method, secs, mean)
load <- tryCatch(readLines("/proc/loadavg"), error = function(e) "unknown")
listing <- function(env, f) vapply(picked, function(n) paste(f(env[[n]]), collapse = ", "), "")
md <- c("# impute_series()'s default (a cycle weighed on hidden gaps) against the former default, kernel = \"cycle\" and imputeTS, by gap length (bench/series_cycle.R)", "",
        sprintf("`Rscript bench/series_cycle.R %d %s` on %s (%s, ditimpute %s); %d repetitions per series, each with new gaps:",
                reps, paste(picked, collapse = ","), format(Sys.Date()), R.version.string,
                as.character(utils::packageVersion("ditimpute")), reps),
        "15% of the observed values hidden in gaps with P(L) ~ L^-1.5 on 1 .. 400 frames (an eighth of the series",
        "under 4,000 frames); 90% intervals, 50 sample paths.",
        sprintf("Whole run %.0f s; load average at the end: %s (2 cores).", proc.time()[["elapsed"]] - t_start, load), "",
        "`gp`: impute_series() with its defaults; `gp_former`: the former default (the calendar's forms by BIC, no cycle",
        "weighed); `gp_cycle`: kernel = \"cycle\"; MAE per group; ratios of MAEs (the default's or the cycle's over the",
        "former default's, the default's over the best imputeTS method's in the group and over linear interpolation's);",
        "`se_*`: delta-method standard errors counting each hidden gap as one unit; `cover_*`: hidden values inside the raw",
        "90% intervals.", "",
        "| series | group | values/rep | gaps | gp | gp_former | gp_cycle | linear | best imputeTS | its MAE | gp / former | se | cycle / former | se | gp / best | se | gp / linear | former / linear | cover gp | cover former | cover cycle |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        sprintf("| %s | %s | %.1f | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |",
                tab$series, tab$group, tab$values, tab$gaps, fmt(tab$gp, 4), fmt(tab$gp_former, 4), fmt(tab$gp_cycle, 4),
                fmt(tab$linear, 4), tab$best_imputeTS, fmt(tab$best_mae, 4), fmt(tab$gp_over_former), fmt(tab$se_former),
                fmt(tab$cycle_over_former), fmt(tab$se_cycle), fmt(tab$gp_over_best), fmt(tab$se_best),
                fmt(tab$gp_over_linear), fmt(tab$former_over_linear), fmt(100 * tab$cover_gp, 1),
                fmt(100 * tab$cover_former, 1), fmt(100 * tab$cover_cycle, 1)), "",
        "Kernels the default chose, one per repetition:", "",
        sprintf("- %s: %s", picked, listing(chosen, identity)), "",
        "Periods kernel = \"cycle\" fitted (frames), one per repetition:", "",
        sprintf("- %s: %s", picked, listing(fitted, function(p) formatC(p, format = "f", digits = 1))), "",
        "Seconds per call (mean over repetitions):", "",
        sprintf("- %s: %s", picked, vapply(picked, function(n) {
          s <- time_tab[time_tab$series == n, ]
          paste(sprintf("%s %.2f", s$method, s$seconds), collapse = ", ")
        }, "")), "")
dir.create("bench/results", showWarnings = FALSE, recursive = TRUE)
out <- if (identical(picked, names(all_series))) "series_cycle_auto.md" else
  paste0("series_cycle_auto_", paste(picked, collapse = "_"), ".md")
writeLines(md, file.path("bench/results", out))
cat(md, sep = "\n")
