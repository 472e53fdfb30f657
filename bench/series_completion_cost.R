# What pooling-side calls cost on a long series, and the memory of many
# draws of a long gap (a user review's cases, smaller): a 2-variable hourly
# series of `n` frames (10% of y hidden at random, z complete), `m` sample
# paths: seconds of completions(imp, m = 1) (the baseline: one completed data
# set taken directly), mice::complete(imp, 1), with(imp, lm(z ~ y)) and
# as_mids(imp), each with its ratio to the baseline; then one series of
# 100,000 frames whose second half is one gap, imputed with `draws` paths:
# the R heap's peak (gc's max used) against the result's size.
# Usage: Rscript bench/series_completion_cost.R [n] [m] [draws] [out.md]
suppressPackageStartupMessages({
  library(ditimpute)
  library(mice)
})
args <- commandArgs(trailingOnly = TRUE)
n <- if (length(args) >= 1) as.integer(args[1]) else 30000L
m <- if (length(args) >= 2) as.integer(args[2]) else 100L
draws <- if (length(args) >= 3) as.integer(args[3]) else 300L
out <- if (length(args) >= 4) args[4] else "bench/results/series_completion_cost.md"
set.seed(1)
tt <- seq_len(n)
y <- cumsum(rnorm(n, sd = 0.05)) + sin(2 * pi * tt / 24) + rnorm(n, sd = 0.3)
z <- 0.5 * y + rnorm(n)
y[sample(n, n / 10)] <- NA
x <- data.frame(time = as.POSIXct("2000-01-01", tz = "UTC") + 3600 * (tt - 1), y = y, z = z)
seconds <- function(expr) {
  t0 <- proc.time()[["elapsed"]]
  force(expr)
  proc.time()[["elapsed"]] - t0
}
imp <- suppressMessages(impute_series(x, n_samples = m, threads = 1, seed = 1))
rows <- suppressMessages(suppressWarnings(c(
  "completions(imp, m = 1)[[1]]" = seconds(completions(imp, m = 1)[[1]]),
  "mice::complete(imp, 1)" = seconds(mice::complete(imp, 1)),
  "with(imp, lm(z ~ y))" = seconds(with(imp, lm(z ~ y))),
  "as_mids(imp)" = seconds(as_mids(imp)))))
same <- isTRUE(all.equal(completions(imp, m = 1)[[1]]$y, suppressMessages(mice::complete(imp, 1))$y))

v <- cumsum(rnorm(100000, sd = 0.05)) + sin(2 * pi * seq_len(100000) / 24) + rnorm(100000, sd = 0.3)
v[50001:100000] <- NA
invisible(gc(reset = TRUE))
long <- impute_series(ts(v, frequency = 24), n_samples = draws, threads = 1, seed = 1)
g <- gc()
lines <- c("# Completions, pooled analyses and draws of a long series (bench/series_completion_cost.R)", "",
           sprintf("`Rscript bench/series_completion_cost.R %d %d %d` on %s, ditimpute from %s, one thread; load average %s (2 cores).",
                   n, m, draws, format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC"), find.package("ditimpute"),
                   paste(strsplit(readLines("/proc/loadavg"), " ")[[1]][1:3], collapse = " ")), "",
           sprintf("%d frames, 2 variables, %d sample paths; seconds and the ratio to the first row (one completed data set taken directly); the first completed data set of mice::complete() equals it: %s.",
                   n, m, same), "",
           "| call | seconds | ratio |", "|---|---|---|",
           sprintf("| %s | %.2f | %.1f |", names(rows), rows, rows / rows[1]), "",
           sprintf("100,000 frames, the second half one gap, %d draws: R heap peak (gc max used) %.0f MB, result %.0f MB (%.1fx).",
                   draws, sum(g[, 6]), as.numeric(utils::object.size(long)) / 2^20,
                   sum(g[, 6]) / (as.numeric(utils::object.size(long)) / 2^20)))
cat(lines, sep = "\n")
if (!is.na(out)) writeLines(lines, out)
