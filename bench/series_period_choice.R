# The day or the week as the period of hourly series (issue 27). Since
# 2026-12-03 impute_series()'s help tells users of sub-daily data to give the
# longest period their series repeats over (forecast::taylor, half-hourly
# demand, imputed 4.9x worse with the day's period than with the week's).
# With the week (168 hours) the season's kernel holds the week's first 3
# harmonics, and the daily cycle (its 7th) falls to the seasonal shape held
# fixed (series_profile()) wherever it is sharp enough: on hourly series
# whose daily cycle changes in size through the year (ozone, temperature),
# a fixed shape may impute worse than the day's drifting seasonal kernel.
# Here both on the same gaps (bench/series_long.R's: 15% hidden, P(L) ~
# L^-1.5 on 1..400), with imputeTS::na_seadec given each period and linear
# interpolation, by gap-length group: hourly series of the shared data that
# hold a shape with the week's period (bench/results/series_period_choice.md
# lists the share and signal-to-noise of each).
# Since 2026-12-03 a cycle that kernel = "auto" weighs at a harmonic of the
# calendar's period is held at that harmonic (series_calendar_harmonic());
# `gp_168_free` is the same call with the cycle's period fitted, as before,
# in the same run (accuracy and seconds per imputation beside the default).
# Usage: Rscript bench/series_period_choice.R [reps] [data_dir] [series,...]
#   (from the repository root; series by bench/series_long.R's names).
# Writes bench/results/series_period_choice.md, or with series named
# bench/results/series_period_choice_<series joined by _>.md.
suppressMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
reps <- if (length(args) >= 1) as.integer(args[1]) else 3L
data_dir <- if (length(args) >= 2 && nzchar(args[2])) args[2] else file.path("..", "shared", "data")
names_run <- if (length(args) >= 3) strsplit(args[3], ",")[[1]] else
  c("BeijingAir_Dongsi_NO2", "BeijingAir_Dongsi_O3", "BeijingAir_Dongsi_TEMP", "BeijingAir_Dongsi_WSPM",
    "ETTh1_HUFL", "ETTh1_MUFL", "ETTh1_OT")
source("bench/series_long_parts.R")
src <- series_long_parts(kalman_limit = 60)
with_period <- function(y, p) stats::ts(as.numeric(y), frequency = p)
source("bench/with_object.R")
free_rule <- fitted_harmonic_rule()
t_start <- proc.time()[["elapsed"]]
load_start <- tryCatch(readLines("/proc/loadavg"), error = function(e) "unknown")
shapes <- list()
res <- series_repetitions(src, data_dir, reps, names_run, function(g, name, r) {
  out <- list()
  if (r == 1) {  # the rule's figures on the series as given (before the hidden gaps)
    full <- as.numeric(g$y); full[g$h] <- g$truth
    for (p in c(24, 168)) {
      sh <- ditimpute:::series_profile_shape(full, p, 3)
      shapes[[length(shapes) + 1]] <<- data.frame(series = name, period = p, share = sh$share, snr = sh$snr)
    }
  }
  for (p in c(24, 168, -168)) {  # -168: the week, a harmonic cycle's period fitted
    t0 <- proc.time()[["elapsed"]]; c0 <- sum(proc.time()[c("user.self", "sys.self")])
    run <- function() impute_series(with_period(g$y, abs(p)), level = 0.9, n_samples = 50, seed = 1)
    imp <- if (p < 0) with_object("series_calendar_harmonic", free_rule, run()) else run()
    secs <- proc.time()[["elapsed"]] - t0; cpu <- sum(proc.time()[c("user.self", "sys.self")]) - c0
    out[[length(out) + 1]] <- data.frame(series = name, rep = r, gap = paste(r, g$gap), group = g$grp,
                                         method = if (p < 0) "gp_168_free" else paste0("gp_", p),
                                         abs = abs(as.numeric(imp$point)[g$h] - g$truth),
                                         cover = imp$lower[g$h] <= g$truth & g$truth <= imp$upper[g$h],
                                         shape = !is.null(imp$model$profile), seconds = secs, cpu = cpu,
                                         kernel = imp$model$kernel_name)
    if (p < 0) next
    sd <- as.numeric(suppressWarnings(imputeTS::na_seadec(with_period(g$y, p))))
    out[[length(out) + 1]] <- data.frame(series = name, rep = r, gap = paste(r, g$gap), group = g$grp,
                                         method = paste0("na_seadec_", p), abs = abs(sd[g$h] - g$truth),
                                         cover = NA, shape = NA, seconds = NA, cpu = NA, kernel = NA)
  }
  lin <- src$linear(g$y)
  out[[length(out) + 1]] <- data.frame(series = name, rep = r, gap = paste(r, g$gap), group = g$grp, method = "linear",
                                       abs = abs(as.numeric(lin$point)[g$h] - g$truth), cover = NA, shape = NA, seconds = NA,
                                       cpu = NA, kernel = NA)
  cat(sprintf("%s rep %d done (%.0f s)\n", name, r, proc.time()[["elapsed"]] - t_start))
  do.call(rbind, out)
})
shapes <- do.call(rbind, shapes)
methods <- c("gp_24", "gp_168", "na_seadec_24", "na_seadec_168", "linear")
groups <- c("all", levels(res$group))
tab <- do.call(rbind, lapply(names_run, function(s) do.call(rbind, lapply(groups, function(k) {
  d <- res[res$series == s & (k == "all" | res$group == k), ]
  base <- d[d$method == "gp_24", ]
  row <- data.frame(series = s, group = k, entries = nrow(base))
  for (m in methods) {
    dm <- d[d$method == m, ]
    row[[m]] <- mean(dm$abs)
  }
  g168 <- d[d$method == "gp_168", ]
  row$ratio_168_24 <- mean(g168$abs) / mean(base$abs)
  row$se <- src$ratio_se(g168$abs, base$abs, g168$gap)
  row$cover_24 <- mean(base$cover); row$cover_168 <- mean(g168$cover)
  free <- d[d$method == "gp_168_free", ]
  row$gp_168_free <- mean(free$abs)
  row$ratio_held_free <- mean(g168$abs) / mean(free$abs)
  row$se_held_free <- src$ratio_se(g168$abs, free$abs, free$gap)
  row$cover_168_free <- mean(free$cover)
  row
}))))
held <- aggregate(shape ~ series, res[res$method == "gp_168" & !duplicated(paste(res$series, res$rep, res$method)), ], sum)
once <- res[res$method %in% c("gp_24", "gp_168", "gp_168_free") & !duplicated(paste(res$series, res$rep, res$method)), ]
secs <- aggregate(cbind(seconds, cpu) ~ series + method, once, mean)
cycles <- aggregate(kernel ~ series + method, once, function(k) sum(k == "cycle"))
fmt <- function(x, d = 3) ifelse(is.na(x), "NA", formatC(x, format = "fg", digits = d, flag = "#"))
load <- tryCatch(readLines("/proc/loadavg"), error = function(e) "unknown")
md <- c("# The day or the week as the period of hourly series (bench/series_period_choice.R)", "",
        sprintf("`Rscript bench/series_period_choice.R %s` on %s (ditimpute %s): %d repetitions of bench/series_long.R's gaps",
                paste(if (length(args)) args else reps, collapse = " "), format(Sys.Date()), as.character(utils::packageVersion("ditimpute")), reps),
        sprintf("(15%% hidden, P(L) ~ L^-1.5 on 1..400) of each series; 90%% intervals, 50 sample paths. Whole run %.0f s; load average %s at the start, %s at the end.",
                proc.time()[["elapsed"]] - t_start, load_start, load), "",
        "`gp_24` / `gp_168`: impute_series() with defaults, given the series with frequency 24 (the day) / 168 (the week);",
        "`na_seadec_*` the same for imputeTS::na_seadec; MAE of the hidden values; `ratio_168_24`: gp_168's MAE over gp_24's,",
        "`se` its standard error counting each hidden gap as one unit; `cover_*`: raw 90% coverage.",
        "`gp_168_free`: gp_168 with a cycle weighed at a harmonic of the week fitted in period (the rule before",
        "2026-12-03's held harmonic); `ratio_held_free`: gp_168's MAE over gp_168_free's, `se_held_free` its SE.", "",
        "| series | group | entries | gp_24 | gp_168 | na_seadec_24 | na_seadec_168 | linear | ratio_168_24 | se | cover_24 | cover_168 |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
        sprintf("| %s | %s | %d | %s | %s | %s | %s | %s | %.3f | %.3f | %.3f | %.3f |", tab$series, tab$group, tab$entries,
                fmt(tab$gp_24), fmt(tab$gp_168), fmt(tab$na_seadec_24), fmt(tab$na_seadec_168), fmt(tab$linear),
                tab$ratio_168_24, tab$se, tab$cover_24, tab$cover_168), "",
        "| series | group | gp_168 (held) | gp_168_free | ratio_held_free | se_held_free | cover_168 | cover_168_free |",
        "|---|---|---|---|---|---|---|---|",
        sprintf("| %s | %s | %s | %s | %.3f | %.3f | %.3f | %.3f |", tab$series, tab$group, fmt(tab$gp_168), fmt(tab$gp_168_free),
                tab$ratio_held_free, tab$se_held_free, tab$cover_168, tab$cover_168_free), "",
        "The shape rule on each whole series (series_profile_shape(), 3 harmonics; held at share >= 0.05 and snr >= 4),",
        "the repetitions in which impute_series() held a shape with the week's period, those in which it chose a cycle",
        "(held / free), and seconds per imputation, elapsed and (CPU):", "",
        "| series | share 24 | snr 24 | share 168 | snr 168 | shape held (168) | cycle chosen (168 held / free) | seconds 24 | seconds 168 held | seconds 168 free | free / held |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        vapply(names_run, function(s) {
          a <- shapes[shapes$series == s & shapes$period == 24, ]; b <- shapes[shapes$series == s & shapes$period == 168, ]
          sec <- function(m, f = "seconds") secs[[f]][secs$series == s & secs$method == m]
          cyc <- function(m) cycles$kernel[cycles$series == s & cycles$method == m]
          sprintf("| %s | %.4f | %.2f | %.4f | %.2f | %d of %d | %d / %d | %.1f (%.1f) | %.1f (%.1f) | %.1f (%.1f) | %.2f |", s, a$share, a$snr,
                  b$share, b$snr, held$shape[held$series == s], reps, cyc("gp_168"), cyc("gp_168_free"),
                  sec("gp_24"), sec("gp_24", "cpu"), sec("gp_168"), sec("gp_168", "cpu"), sec("gp_168_free"),
                  sec("gp_168_free", "cpu"), sec("gp_168_free") / sec("gp_168"))
        }, ""))
out_file <- if (length(args) >= 3) sprintf("bench/results/series_period_choice_%s.md", paste(names_run, collapse = "_")) else
  "bench/results/series_period_choice.md"
writeLines(md, out_file)
cat(md, sep = "\n")
