# How long does impute_series(method = "dit") take with its defaults, and
# how good is it? A 150 x 4 series: the first 150 trading days of
# EuStockMarkets (log scale), with 10% of the entries hidden in gaps of 1-5
# days; MAE of the point imputation against the hidden values, the 95%
# interval coverage, and the training and total seconds, for the defaults and
# any option lists given on the command line as R expressions, e.g.
#   Rscript bench/dit_series_defaults.R 'list(steps = 300, width = 32, depth = 1)'
# Writes bench/results/dit_series_defaults.md (appends a section per run).
suppressPackageStartupMessages(library(ditimpute))
threads <- as.integer(Sys.getenv("DITIMPUTE_BENCH_THREADS", "2"))
args <- commandArgs(trailingOnly = TRUE)
option_sets <- c(list(default = list()), setNames(lapply(args, function(a) eval(parse(text = a))), args))
source("bench/eustock_gaps.R")
eg <- eustock_gaps()
v <- eg$v; hide <- eg$hide; x <- eg$x
loadavg <- function() paste(strsplit(readLines("/proc/loadavg"), " ")[[1]][1:3], collapse = " ")
rows <- list()
for (nm in names(option_sets)) {
  load0 <- loadavg()
  t0 <- proc.time()[["elapsed"]]
  imp <- impute_series(x, method = "dit", dit = option_sets[[nm]], seed = 1, threads = threads)
  secs <- proc.time()[["elapsed"]] - t0
  pt <- as.matrix(imp$point)
  lo <- as.matrix(imp$lower); hi <- as.matrix(imp$upper)
  o <- imp$model$options
  rows[[nm]] <- data.frame(options = nm, H = o$H, width = o$width, depth = o$depth, steps = imp$model$dit$steps,
                           train_s = round(imp$model$fit_seconds, 1), total_s = round(secs, 1),
                           mae = signif(mean(abs(pt[hide] - v[hide])), 3),
                           coverage95 = signif(mean(lo[hide] <= v[hide] & v[hide] <= hi[hide]), 3),
                           load = paste(load0, "->", loadavg()))
  print(rows[[nm]])
}
# Reference: the structural GP on the same gaps.
t0 <- proc.time()[["elapsed"]]
g <- impute_series(x, method = "gp", seed = 1, threads = threads)
gp_row <- data.frame(options = "method = \"gp\" (reference)", H = NA, width = NA, depth = NA, steps = NA, train_s = NA,
                     total_s = round(proc.time()[["elapsed"]] - t0, 1),
                     mae = signif(mean(abs(as.matrix(g$point)[hide] - v[hide])), 3),
                     coverage95 = signif(mean(as.matrix(g$lower)[hide] <= v[hide] & v[hide] <= as.matrix(g$upper)[hide]), 3),
                     load = loadavg())
tab <- rbind(do.call(rbind, rows), gp_row)
fmt <- c(paste("|", paste(names(tab), collapse = " | "), "|"), paste0(paste(rep("|---", ncol(tab)), collapse = ""), "|"),
         apply(tab, 1, function(r) paste("|", paste(trimws(r), collapse = " | "), "|")))
out <- "bench/results/dit_series_defaults.md"
head <- if (file.exists(out)) character() else
  c("# impute_series(method = \"dit\") defaults on a 150 x 4 series (bench/dit_series_defaults.R)", "",
    "First 150 rows of EuStockMarkets, log scale, 10% of entries hidden in gaps of 1-5 days (seed 1); MAE on the log scale; 95% intervals. Shared machine: load average (1/5/15 min) before -> after each run.", "")
cat(c(head, sprintf("## %s, %d threads, %s", format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC"), threads, R.version.string), "",
      fmt, ""), file = out, sep = "\n", append = TRUE)
