# Where the time of impute_series(separate = "auto") goes: the fit of every
# variable in one form (needed for the shares), the fits of the variables
# split off, and the refit of the rest together (from scratch over every
# candidate form: the joint fit's estimates are not used as starting values).
# One call of fit_series_groups() per series, each fit timed, with the
# Nelder-Mead evaluations it spent; 10% of the entries hidden at random
# (seed 1), hourly period 24.
# Usage: Rscript bench/series_groups_timing.R [data_dir]   (from the repository root)
# Writes bench/results/series_groups_timing.md.
suppressMessages(library(ditimpute))
ns <- asNamespace("ditimpute")
args <- commandArgs(trailingOnly = TRUE)
data_dir <- if (length(args) >= 1) args[1] else file.path("..", "shared", "data")
load_before <- readLines("/proc/loadavg", warn = FALSE)
rows <- list()
for (name in c("ETTh1", "ETTh2")) {
  frame <- utils::read.csv(gzfile(file.path(data_dir, "ett", paste0(name, ".csv.gz"))))
  v <- as.matrix(frame[, c("HUFL", "HULL", "MUFL", "MULL", "LUFL", "LULL", "OT")])
  set.seed(1)
  v[sample(length(v), round(0.1 * length(v)))] <- NA
  step <- 0L
  fit <- function(cols) {
    step <<- step + 1L
    t0 <- proc.time()[["elapsed"]]
    m <- ns$fit_series_model(v[, cols, drop = FALSE], 24, "auto", "auto", "auto", 1e-2, 6000, 2L)
    rows[[length(rows) + 1]] <<- data.frame(
      series = name, fit = step, variables = paste(colnames(v)[cols], collapse = "+"),
      seconds = proc.time()[["elapsed"]] - t0, evaluations = sum(m$candidates$evaluations),
      candidates = nrow(m$candidates))
    m
  }
  t0 <- proc.time()[["elapsed"]]
  s <- ns$fit_series_groups(colnames(v), "auto", fit)
  rows[[length(rows) + 1]] <- data.frame(series = name, fit = NA, variables = "(all fits of the call)",
                                         seconds = proc.time()[["elapsed"]] - t0,
                                         evaluations = NA, candidates = NA)
  cat(name, "done\n")
}
res <- do.call(rbind, rows)
print(res, row.names = FALSE)
md <- c(paste("|", paste(names(res), collapse = " | "), "|"), paste(rep("|---", ncol(res)), collapse = ""),
        apply(res, 1, function(r) paste("|", paste(trimws(r), collapse = " | "), "|")))
dir.create("bench/results", showWarnings = FALSE)
writeLines(c("# Where impute_series(separate = \"auto\") spends its fitting time (bench/series_groups_timing.R)", "",
             sprintf("ETTh1 and ETTh2 (17,420 hours x 7: six loads and OT), 10%% of the entries hidden at random, period 24, 2 threads; %s; load average before: %s, after: %s.",
                     format(Sys.time(), "%Y-%m-%d", tz = "UTC"), load_before, readLines("/proc/loadavg", warn = FALSE)),
             "", md), "bench/results/series_groups_timing.md")
