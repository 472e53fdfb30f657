# What proper draws cost (impute_series(proper = TRUE) against FALSE, in the
# same run): since 2026-12-05 proper = "auto" draws properly on series of up
# to 20,000 frames with an end gap (rpkg/R/proper.R), and each proper path is
# one Kalman smoothing of the whole series where plug-in draws take one for
# all paths. ETTh1's oil temperature (hourly; ../shared/data/ett), its first n
# frames, 10% of them missing at random and the last day (24 frames) missing;
# default arguments (100 paths), seconds of the whole call, best of `reps`.
#
# Usage: Rscript bench/series_proper_cost.R [reps] (from the repository root);
#   writes bench/results/series_proper_cost.md.
suppressMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
reps <- if (length(args) >= 1) as.integer(args[1]) else 2L
d <- utils::read.csv(gzfile(file.path("..", "shared", "data", "ett", "ETTh1.csv.gz")))
load_before <- paste(readLines("/proc/loadavg"), collapse = "")
rows <- list()
for (n in c(2000L, 5000L, 17420L)) {
  y <- stats::ts(d$OT[seq_len(n)], frequency = 24)
  set.seed(1)
  y[sample(n, n %/% 10)] <- NA
  y[(n - 23):n] <- NA
  secs <- sapply(c(FALSE, TRUE), function(p) min(replicate(reps, system.time(impute_series(y, seed = 1, proper = p))[["elapsed"]])))
  rows[[length(rows) + 1]] <- data.frame(frames = n, plug_in_s = round(secs[1], 2), proper_s = round(secs[2], 2),
                                         ratio = round(secs[2] / secs[1], 2))
  print(rows[[length(rows)]])
}
tab <- do.call(rbind, rows)
md <- c("# The cost of proper draws (bench/series_proper_cost.R)", "",
        sprintf("`Rscript bench/series_proper_cost.R %d` on %s (ditimpute %s, %s); ETTh1's OT, first n frames, 10%% missing at random and the last 24 frames missing; `impute_series(y, seed = 1, proper = p)` with default arguments (100 paths), best of %d runs each. Load average before: %s; at the end: %s (2 cores).",
                reps, format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC"), as.character(utils::packageVersion("ditimpute")),
                R.version.string, reps, load_before, paste(readLines("/proc/loadavg"), collapse = "")), "",
        "| frames | proper = FALSE (s) | proper = TRUE (s) | ratio |", "|---|---|---|---|",
        sprintf("| %s | %.2f | %.2f | %.2f |", format(tab$frames, big.mark = ","), tab$plug_in_s, tab$proper_s, tab$ratio))
writeLines(md, "bench/results/series_proper_cost.md")
cat(md, sep = "\n")
