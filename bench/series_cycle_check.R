# What the check of a fitted period costs and buys, in one run: two builds of
# the package (two library paths) impute the same gaps with impute_series()'s
# defaults, one build after the other in child processes. The builds compared
# in bench/results/series_cycle_check.md: the cycle's period fitted free from
# the periodogram's start only (main at 1f54a65), and checked against the
# same form with the period held at its start, freed from the held optimum
# when that fits better (the free and the held fits run in parallel).
# Series where kernel = "auto" weighs a cycle: sunspot.month, sunspots,
# sunspot.year and lynx (bench/series_cycle.R's first repetitions of
# bench/series_long.R's gap law, capped at an eighth of the series for the
# yearly ones), and ETTh1's and ETTh2's oil temperature given as plain
# vectors (no calendar period: bench/series_long.R's first repetition).
# Per series and repetition: seconds of the call (median of `runs` calls),
# the MAE on the hidden values, the log-likelihood of the chosen form (on
# the data's scale) and the Nelder-Mead evaluations over all candidate forms.
#
# Usage: Rscript bench/series_cycle_check.R <lib_before> <lib_after> [reps] [runs]
#   (repository root; reps per R series, default 3; runs per call, default 3)
# Writes bench/results/series_cycle_check.md.
args <- commandArgs(trailingOnly = TRUE)
if (length(args) >= 1 && args[1] == "--worker") {
  # Child: one build, every case; results to args[3].
  reps <- as.integer(args[4]); runs <- as.integer(args[5])
  suppressMessages(library(ditimpute))
  source("bench/series_long_parts.R")
  src <- series_long_parts(kalman_limit = 60)
  src$data_dir <- Sys.getenv("DITIMPUTE_DATA", file.path("..", "shared", "data"))
  cases <- list()
  for (name in c("sunspot.month", "sunspots", "sunspot.year", "lynx")) {
    y0 <- get(name, envir = asNamespace("datasets"))
    for (r in seq_len(reps)) {
      cap <- if (length(y0) < 1000) max(2L, length(y0) %/% 8L) else 400L
      cases[[length(cases) + 1]] <- list(name = name, r = r, g = src$hide_repetition(y0, name, r, max_len = cap))
    }
  }
  for (name in c("ETTh1_OT", "ETTh2_OT")) {
    y0 <- as.numeric(src$series[[name]]())
    cases[[length(cases) + 1]] <- list(name = paste(name, "(plain)"), r = 1L, g = src$hide_repetition(y0, name, 1L))
  }
  rows <- lapply(cases, function(cs) {
    secs <- numeric(runs)
    for (k in seq_len(runs)) {
      t0 <- proc.time()[["elapsed"]]
      imp <- suppressWarnings(impute_series(cs$g$y, level = 0.9, n_samples = 50, seed = 1))
      secs[k] <- proc.time()[["elapsed"]] - t0
    }
    m <- imp$model
    data.frame(series = cs$name, rep = cs$r, seconds = stats::median(secs),
               mae = mean(abs(as.numeric(imp$point)[cs$g$h] - cs$g$truth)),
               kernel = if (m$kernel_name == "cycle") sprintf("cycle %.1f", m$period) else m$kernel_name,
               loglik = m$loglik, evaluations = sum(m$candidates$evaluations), stringsAsFactors = FALSE)
  })
  saveRDS(do.call(rbind, rows), args[3])
  quit(save = "no")
}
if (length(args) < 2) stop("usage: Rscript bench/series_cycle_check.R <lib_before> <lib_after> [reps] [runs]")
libs <- args[1:2]
reps <- if (length(args) >= 3) as.integer(args[3]) else 3L
runs <- if (length(args) >= 4) as.integer(args[4]) else 3L
load_start <- readLines("/proc/loadavg")
t_start <- proc.time()[["elapsed"]]
res <- lapply(libs, function(lib) {
  out <- tempfile(fileext = ".rds")
  status <- system2(file.path(R.home("bin"), "Rscript"),
                    c("bench/series_cycle_check.R", "--worker", lib, out, reps, runs),
                    env = c(paste0("R_LIBS=", lib), "R_PROFILE_USER="))
  if (status != 0) stop("the worker for ", lib, " failed")
  readRDS(out)
})
b <- res[[1]]; a <- res[[2]]
stopifnot(identical(b$series, a$series), identical(b$rep, a$rep))
tab <- data.frame(series = b$series, rep = b$rep, kernel_before = b$kernel, kernel_after = a$kernel,
                  loglik_gain = a$loglik - b$loglik, mae_before = b$mae, mae_after = a$mae, mae_ratio = a$mae / b$mae,
                  seconds_before = b$seconds, seconds_after = a$seconds, time_ratio = a$seconds / b$seconds,
                  evaluations_before = b$evaluations, evaluations_after = a$evaluations, stringsAsFactors = FALSE)
per <- do.call(rbind, lapply(split(tab, factor(tab$series, unique(tab$series))), function(d) {
  data.frame(series = d$series[1], cases = nrow(d), changed = sum(d$mae_before != d$mae_after),
             mae_ratio = sum(d$mae_after) / sum(d$mae_before), seconds_before = sum(d$seconds_before),
             seconds_after = sum(d$seconds_after), time_ratio = sum(d$seconds_after) / sum(d$seconds_before),
             evaluation_ratio = sum(d$evaluations_after) / sum(d$evaluations_before))
}))
fmt <- function(x, digits = 3) formatC(x, format = "f", digits = digits)
md <- c("# The check of a fitted period: cost and gain (bench/series_cycle_check.R)", "",
        sprintf("`Rscript bench/series_cycle_check.R <before> <after> %d %d` on %s (ditimpute %s); before: `%s`, after: `%s`, one build after the other (child processes), nothing else intended on the 2 cores; load average %s at the start, %s at the end. Whole run %.0f s.",
                reps, runs, format(Sys.Date()), utils::packageVersion("ditimpute", lib.loc = libs[2]), libs[1], libs[2],
                paste(strsplit(load_start, " ")[[1]][1:3], collapse = " "),
                paste(strsplit(readLines("/proc/loadavg"), " ")[[1]][1:3], collapse = " "), proc.time()[["elapsed"]] - t_start), "",
        "impute_series(y, level = 0.9, n_samples = 50, seed = 1) on the same gaps; seconds: median of the runs; `loglik_gain`: the chosen form's log-likelihood after minus before (a different form when the kernel changed); evaluations: Nelder-Mead's, summed over every candidate form.", "",
        "## Per series", "",
        "| series | cases | changed | MAE after / before | seconds before | seconds after | time ratio | evaluations ratio |",
        "|---|---|---|---|---|---|---|---|",
        sprintf("| %s | %d | %d | %s | %s | %s | %s | %s |", per$series, per$cases, per$changed, fmt(per$mae_ratio, 4),
                fmt(per$seconds_before, 2), fmt(per$seconds_after, 2), fmt(per$time_ratio, 2), fmt(per$evaluation_ratio, 2)), "",
        "## Per case", "",
        "| series | rep | kernel before | kernel after | loglik gain | MAE before | MAE after | seconds before | seconds after | evaluations before | evaluations after |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        sprintf("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %d | %d |", tab$series, tab$rep, tab$kernel_before, tab$kernel_after,
                fmt(tab$loglik_gain, 2), fmt(tab$mae_before, 4), fmt(tab$mae_after, 4), fmt(tab$seconds_before, 2),
                fmt(tab$seconds_after, 2), as.integer(tab$evaluations_before), as.integer(tab$evaluations_after)), "")
writeLines(md, "bench/results/series_cycle_check.md")
cat(md, sep = "\n")
