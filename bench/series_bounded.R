# impute_series(bounds = ) on real bounded series nobody tuned for, against
# the same model on the data's own scale and what users would pick instead,
# by gap length, in one run.
#
# Series: presidents (R's datasets: quarterly Gallup approval, %, 120
# quarters with 6 of their own missing); relative humidity at a BeijingAir
# stations (%, hourly, one year = 8,760 frames; Wanliu and Huairou by default), computed from the station's
# measured temperature and dew point by the Magnus formula
# RH = 100 exp(17.625 Td / (243.04 + Td)) / exp(17.625 T / (243.04 + T)) and
# capped at 100 (dew point above temperature is measurement error; the count
# of capped values is printed), rows without either reading missing; a
# long series that spends hours at its upper bound (fog, rain).
# Gaps: bench/series_long.R's law (P(L) ~ L^-1.5 on 1..max_len, an eighth of
# presidents, 400 on the humidity) until 15% of the observed values are
# hidden; new gaps per repetition. Methods: impute_series() with bounds =
# c(0, 100) and without (90% intervals, 50 paths, defaults otherwise), linear
# interpolation, imputeTS's na_interpolation, na_kalman (where it finishes in
# 120 s), na_seadec and na_ma. Scores by gap-length group: MAE, 90% coverage
# (SE counting each gap as one unit), and how many imputations or interval
# ends fall outside [0, 100].
#
# Non-negative series with zeros (`nonnegative` as the first argument):
# bounds = c(0, Inf) against the data's own scale, on the yearly counts of
# discoveries (100 years, 9 zeros) and sunspot.year (289 years, 3 zeros) and
# the hourly wind speed (WSPM, m/s, 35,064 hours) at BeijingAir stations
# (Shunyi and Dingling by default), none of them used to build the bound;
# `outside` then counts negative imputations or interval ends.
#
# Usage: Rscript bench/series_bounded.R [reps_presidents] [reps_humidity] [station,...]
#        Rscript bench/series_bounded.R nonnegative [reps_counts] [reps_wind] [station,...]
# Writes bench/results/series_bounded.md (series_bounded_nonnegative.md).
suppressMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
nonneg <- length(args) >= 1 && args[1] == "nonnegative"
if (nonneg) args <- args[-1]
bnd <- if (nonneg) c(0, Inf) else c(0, 100)
reps_p <- if (length(args) >= 1) as.integer(args[1]) else 20L
reps_h <- if (length(args) >= 2) as.integer(args[2]) else 3L
stations <- strsplit(if (length(args) >= 3) args[3] else if (nonneg) "Shunyi,Dingling" else "Wanliu,Huairou", ",")[[1]]
t_start <- proc.time()[["elapsed"]]

# series_long.R's gaps, methods, groups and standard errors.
source("bench/series_long_parts.R")
src <- series_long_parts(kalman_limit = 120)

humidity <- function(station) {
  f <- list.files(file.path(src$data_dir, "beijing_air"), pattern = station, full.names = TRUE)
  d <- utils::read.csv(gzfile(f))[seq_len(8760), ]
  magnus <- function(t) exp(17.625 * t / (243.04 + t))
  rh <- 100 * magnus(d$DEWP) / magnus(d$TEMP)
  capped <- sum(rh > 100, na.rm = TRUE)
  list(y = stats::ts(pmin(rh, 100), frequency = 24), capped = capped, at_bound = sum(rh >= 100, na.rm = TRUE))
}
short <- function(y, reps) list(y = y, reps = reps, max_len = length(y) %/% 8L)
if (nonneg) {
  hums <- NULL
  series <- c(list(discoveries = short(datasets::discoveries, reps_p), sunspot.year = short(datasets::sunspot.year, reps_p)),
              lapply(stats::setNames(stations, paste0("wind_", stations)),
                     function(s) list(y = src$beijing("WSPM", station = s), reps = reps_h, max_len = 400L)))
} else {
  hums <- lapply(stats::setNames(stations, paste0("humidity_", stations)), humidity)
  series <- c(list(presidents = short(datasets::presidents, reps_p)),
              lapply(hums, function(hm) list(y = hm$y, reps = reps_h, max_len = 400L)))
}
methods <- c(list(gp_bounded = function(y, name) src$gp_run(y, bounds = bnd)), src$methods[setdiff(names(src$methods), "gp_calibrated")])

rows <- list()
for (name in names(series)) {
  y0 <- series[[name]]$y
  for (r in seq_len(series[[name]]$reps)) {
    g <- src$hide_repetition(y0, name, r, 0.15, max_len = series[[name]]$max_len)
    h <- g$h
    gap <- paste(r, cumsum(c(TRUE, diff(which(h)) > 1)))
    for (m in names(methods)) {
      t0 <- proc.time()[["elapsed"]]
      out <- tryCatch(suppressWarnings(methods[[m]](g$y, name)),
                      error = function(e) { message(m, " on ", name, ": ", conditionMessage(e)); NULL })
      secs <- proc.time()[["elapsed"]] - t0
      if (is.null(out)) next
      est <- out$point[h]
      has_iv <- !is.null(out$lower)
      cover <- if (has_iv) out$lower[h] <= g$truth & g$truth <= out$upper[h] else rep(NA, sum(h))
      outside <- est < bnd[1] | est > bnd[2] | (if (has_iv) out$lower[h] < bnd[1] | out$upper[h] > bnd[2] else FALSE)
      rows[[length(rows) + 1]] <- data.frame(series = name, rep = r, gap = gap, method = m, group = g$grp,
                                             abs = abs(est - g$truth), cover = cover, outside = outside,
                                             width = if (has_iv) out$upper[h] - out$lower[h] else NA, seconds = secs)
    }
    cat(sprintf("%s rep %d done (%.0f s)\n", name, r, proc.time()[["elapsed"]] - t_start))
  }
}
res <- do.call(rbind, rows)
res$group <- as.character(res$group)
score <- function(d, ref) {
  a <- d
  data.frame(entries = nrow(a), gaps = length(unique(a$gap)), mae = mean(a$abs),
             mae_over_linear = mean(a$abs) / mean(ref$abs), se = src$ratio_se(a$abs, ref$abs, a$gap),
             coverage90 = if (all(is.na(a$cover))) NA else mean(a$cover),
             coverage_se = if (all(is.na(a$cover))) NA else src$ratio_se(as.numeric(a$cover), rep(1, nrow(a)), a$gap),
             mean_width = if (all(is.na(a$width))) NA else mean(a$width),
             outside = sum(a$outside))
}
tab <- do.call(rbind, lapply(names(series), function(name) {
  do.call(rbind, lapply(c("all", "1", "2-5", "6-20", "21-60", ">60"), function(gr) {
    d <- res[res$series == name & (gr == "all" | res$group == gr), ]
    if (!nrow(d)) return(NULL)
    ref <- d[d$method == "linear", ]
    do.call(rbind, lapply(unique(d$method), function(m) {
      a <- d[d$method == m, ]
      if (nrow(a) != nrow(ref)) return(NULL)
      cbind(data.frame(series = name, group = gr, method = m), score(a, ref))
    }))
  }))
}))
secs <- aggregate(seconds ~ series + method, data = res[!duplicated(res[c("series", "rep", "method")]), ], FUN = mean)
fmt <- function(x, digits = 3) ifelse(is.na(x), "-", formatC(x, format = "f", digits = digits))
load <- tryCatch(readLines("/proc/loadavg"), error = function(e) "unknown")
about <- sprintf(paste0("`Rscript bench/series_bounded.R %s%d %d %s` on %s (%s, ditimpute %s). %s: %d repetitions",
                        if (nonneg) " (gaps up to an eighth of the series); wind speed (WSPM)" else "; relative humidity",
                        " at %s (%s): %d repetitions. 15%% of the observed values hidden per repetition, 90%% intervals",
                        if (nonneg) "; `gp_bounded` is bounds = c(0, Inf)" else "",
                        ". Whole run %.0f s; load average at the end: %s (2 cores)."),
                 if (nonneg) "nonnegative " else "", reps_p, reps_h, paste(stations, collapse = ","), format(Sys.Date()),
                 R.version.string, as.character(utils::packageVersion("ditimpute")),
                 if (nonneg) "discoveries and sunspot.year" else "presidents", reps_p,
                 paste(stations, collapse = " and "),
                 if (nonneg) {
                   paste(sprintf("%s: %d zeros, %d missing", stations,
                                 vapply(series[-(1:2)], function(s) sum(s$y == 0, na.rm = TRUE), 0L),
                                 vapply(series[-(1:2)], function(s) sum(is.na(s$y)), 0L)), collapse = "; ")
                 } else {
                   paste0("first 8,760 hours, from TEMP and DEWP; ",
                          paste(sprintf("%s: %d values capped at 100, %d at or above it before capping, %d missing",
                                        stations, vapply(hums, `[[`, 0L, "capped"), vapply(hums, `[[`, 0L, "at_bound"),
                                        vapply(hums, function(hm) sum(is.na(hm$y)), 0L)), collapse = "; "))
                 },
                 reps_h, proc.time()[["elapsed"]] - t_start, load)
md <- c("# impute_series(bounds = ) on bounded real series (bench/series_bounded.R)", "", about,
        "",
        "`mae_over_linear`: MAE over linear interpolation's on the same hidden values, `se`: its delta-method SE counting each",
        "hidden gap as one unit; `coverage90`: hidden values inside the 90% intervals; `outside`: imputations or interval ends",
        sprintf("outside [%s, %s] (all repetitions).", format(bnd[1]), format(bnd[2])), "",
        "| series | gaps | method | entries | gaps | MAE | mae_over_linear | se | coverage90 | coverage_se | mean_width | outside |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
        sprintf("| %s | %s | %s | %d | %d | %s | %s | %s | %s | %s | %s | %d |", tab$series, tab$group, tab$method, tab$entries,
                tab$gaps, fmt(tab$mae), fmt(tab$mae_over_linear), fmt(tab$se), fmt(tab$coverage90), fmt(tab$coverage_se),
                fmt(tab$mean_width, 1), tab$outside), "",
        "## Seconds per call", "",
        "| series | method | seconds |", "|---|---|---|",
        sprintf("| %s | %s | %.2f |", secs$series, secs$method, secs$seconds), "")
dir.create("bench/results", showWarnings = FALSE, recursive = TRUE)
writeLines(md, if (nonneg) "bench/results/series_bounded_nonnegative.md" else "bench/results/series_bounded.md")
cat(md, sep = "\n")
