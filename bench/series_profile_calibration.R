# Self-calibration of a series that holds a fixed seasonal shape (issue 27):
# forecast::taylor, the one benchmark series that holds one (series_profile()
# in rpkg/R/series_model.R). The shape is the position means of 12 weeks of
# half-hours; a calibration round that hides observed values but keeps the
# shape estimated with them scores errors smaller than a real gap's, and
# narrowed intervals that were not too wide (raw 90% coverage 88.9%,
# calibrated 86.8%, bench/results/series_fresh_packages_gp_nonstationary.md).
# Since 2026-12-03 each round estimates the shape again without its hidden
# values (series_profile_refit()). Here both on the same imputations:
# `kept` (the shape estimated with the hidden values, as before) and
# `refit` (the default now), against the raw intervals, by gap-length
# group; bench/series_fresh.R's gaps of taylor (same seeds), 90% intervals.
# Other series (second argument, bench/series_long.R's names, e.g.
# ETTh1_HUFL or BeijingAir_Dongsi_O3) run with the week's period (168 hours;
# they hold a shape there, bench/results/series_period_choice.md) on
# bench/series_long.R's gaps.
# Usage: Rscript bench/series_profile_calibration.R [reps] [series,...] [data_dir]
#   (from the repository root). Writes bench/results/series_profile_calibration.md
#   for taylor alone, else series_profile_calibration_<series>.md.
suppressMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
reps <- if (length(args) >= 1) as.integer(args[1]) else 10L
source("bench/series_long_parts.R")
src <- series_long_parts(kalman_limit = 60)
source("bench/with_object.R")
variants <- list(kept = function(model, v) model, refit = get("series_profile_refit", asNamespace("ditimpute")))
names_run <- if (length(args) >= 2 && nzchar(args[2])) strsplit(args[2], ",")[[1]] else "taylor"
src$data_dir <- if (length(args) >= 3) args[3] else file.path("..", "shared", "data")
rows <- list(); factors <- list()
t_start <- proc.time()[["elapsed"]]
for (name in names_run) for (r in seq_len(reps)) {
  g <- if (name == "taylor") {
    src$hide_repetition(forecast::taylor, "taylor", r, 0.15, max_len = max(2L, length(forecast::taylor) %/% 8L))
  } else {
    y0 <- (if (name %in% names(src$series)) src$series[[name]] else src$other_series(name))()
    src$hide_repetition(stats::ts(as.numeric(y0), frequency = 168), name, r)
  }
  gap <- paste(r, cumsum(c(TRUE, diff(which(g$h)) > 1)))
  imp <- impute_series(g$y, level = 0.9, n_samples = 50, seed = 1)
  score <- function(method, x) {
    data.frame(series = name, rep = r, method = method, gap = gap, group = g$grp,
               cover = x$lower[g$h] <= g$truth & g$truth <= x$upper[g$h], shape = !is.null(imp$model$profile))
  }
  rows[[length(rows) + 1]] <- score("raw", imp)
  for (v in names(variants)) {
    cal <- with_object("series_profile_refit", variants[[v]], calibrate(imp, seed = r))  # the same rounds for both
    rows[[length(rows) + 1]] <- score(v, apply_calibration(imp, cal))
    f <- cal$factors  # the gap-length groups by rank (their bounds differ by repetition), then all pooled
    factors[[length(factors) + 1]] <- data.frame(series = name, rep = r, method = v,
                                                 group = ifelse(f$group == "pooled", "pooled", paste("group", seq_len(nrow(f)))),
                                                 factor = f$interval)
  }
}
res <- do.call(rbind, rows)
fac <- do.call(rbind, factors)
groups <- c("all", levels(res$group))
binom_se <- function(x, gap) {  # each hidden gap one unit
  m <- mean(x)
  tot <- tapply(x - m, gap, sum)
  sqrt(sum(tot^2)) / length(x)
}
tab <- do.call(rbind, lapply(names_run, function(name) do.call(rbind, lapply(groups, function(k) {
  out <- data.frame(series = name, group = k)
  for (m in c("raw", names(variants))) {
    d <- res[res$series == name & res$method == m, ]
    sel <- if (k == "all") rep(TRUE, nrow(d)) else d$group == k
    out[[m]] <- mean(d$cover[sel])
    out[[paste0(m, "_se")]] <- binom_se(d$cover[sel], d$gap[sel])
  }
  out$entries <- sum(res$series == name & res$method == "raw" & (k == "all" | res$group == k))
  out$shape <- sum(res$shape[res$series == name & res$method == "raw" & !duplicated(paste(res$series, res$rep, res$method))])
  out
}))))
ftab <- aggregate(factor ~ series + method + group, fac, function(f) sprintf("%.3f (%.3f-%.3f)", mean(f), min(f), max(f)))
fmt <- function(x, d = 3) ifelse(is.na(x), "NA", formatC(x, format = "f", digits = d))
setting <- "`calibrate(seed = rep)` twice on it (the same hidden rounds for both)"
md <- c(if (identical(names_run, "taylor")) {
          taylor_header("Self-calibration with a fixed seasonal shape on forecast::taylor", "series_profile_calibration.R", reps,
                        paste("weekly period 336, 15% hidden); impute_series(level = 0.9) once per repetition, then", setting), t_start)
        } else {
          c("# Self-calibration with a fixed seasonal shape (bench/series_profile_calibration.R)", "",
            sprintf("`Rscript bench/series_profile_calibration.R %d %s` on %s (ditimpute %s): %d repetitions of bench/series_long.R's gaps",
                    reps, paste(names_run, collapse = ","), format(Sys.Date()), as.character(utils::packageVersion("ditimpute")), reps),
            sprintf("(15%% hidden, P(L) ~ L^-1.5 on 1..400), each series given with the week's period (168 hours); impute_series(level = 0.9) once per repetition, then %s. Whole run %.0f s; load average %s.",
                    setting, proc.time()[["elapsed"]] - t_start, tryCatch(readLines("/proc/loadavg"), error = function(e) "unknown")), "")
        },
        "`raw`: the imputation's 90% intervals; `kept`: self-calibrated with each round's shape estimated with its hidden values",
        "(before 2026-12-03); `refit`: each round's shape estimated without them (series_profile_refit(), the default now).",
        "Coverage of the hidden values; `_se`: its standard error counting each hidden gap as one unit; `shape`: the",
        "repetitions whose model held a shape.", "",
        "| series | group | entries | raw | raw_se | kept | kept_se | refit | refit_se | shape |", "|---|---|---|---|---|---|---|---|---|---|",
        sprintf("| %s | %s | %d | %s | %s | %s | %s | %s | %s | %d |", tab$series, tab$group, tab$entries, fmt(tab$raw), fmt(tab$raw_se),
                fmt(tab$kept), fmt(tab$kept_se), fmt(tab$refit), fmt(tab$refit_se), tab$shape), "",
        "The calibrations' applied factors (`factors$interval`: the half-widths move by 1 + factor; each repetition's",
        "gap-length groups, shortest first, then all hidden gaps pooled): mean over repetitions (range).", "",
        "| series | calibration | group | factor |", "|---|---|---|---|",
        sprintf("| %s | %s | %s | %s |", ftab$series, ftab$method, ftab$group, ftab$factor))
writeLines(md, file.path("bench/results", if (identical(names_run, "taylor")) "series_profile_calibration.md" else
  paste0("series_profile_calibration_", paste(names_run, collapse = "_"), ".md")))
cat(md, sep = "\n")
