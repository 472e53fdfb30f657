# Does a DiT impute the patterns it was not trained on? dit_fit()'s default
# masks (strategy_preset("S4")) hide whole frames; real data lose single
# variables (one sensor of several) and scattered entries. A review
# (bench/results/reviews_2026-12-07.md) found a one-minute default DiT at
# 1.9x the exact GP's MAE on one variable missing for 17 frames, with 99.8%
# coverage of 95% intervals.
#
# Same data as that review: a Matern 3/2 GP (lengthscale 8) over H = 32
# frames of d = 3 correlated variables, 1,000 training sequences, 30 test
# sequences. Two DiTs of dit_fit()'s default network, trained the same steps
# from the same seed: S4 (the default) and S4 with single-variable blocks and
# MCAR entries mixed in (half the draws each). Scored on six patterns against
# the exact GP (the true model) and linear interpolation, in one run: MAE and
# 95% interval coverage.
#   Rscript bench/dit_training_patterns.R [steps]
# Appends to bench/results/dit_training_patterns.md.
suppressPackageStartupMessages(library(ditimpute))
source(file.path("bench", "md_table.R"))
args <- commandArgs(trailingOnly = TRUE)
steps <- if (length(args)) as.integer(args[1]) else 600L
threads <- as.integer(Sys.getenv("DITIMPUTE_BENCH_THREADS", "1"))
Lam <- matrix(c(1, .6, .3, .6, 1, .5, .3, .5, 1), 3)
spec <- gp_spec(32, d = 3, kernel = gp_kernel("matern32", lengthscale = 8), Lambda = Lam)
train <- gp_simulate(spec, 1000, seed = 1)
test <- gp_simulate(spec, 30, seed = 2)

strategies <- list(
  S4 = strategy_preset("S4"),
  `S4 + variable blocks + MCAR` = mask_strategy(c("16x1", "8x2", "4x4", "1x16", "v1x16", "v4x4", "mcar0.2"),
                                                weights = c(rep(1 / 8, 4), rep(1 / 6, 3)))
)
patterns <- list()
patterns[["MCAR 20% of entries"]] <- hide_mcar(test, 0.2, seed = 1)$x
patterns[["MCAR 50% of entries"]] <- hide_mcar(test, 0.5, seed = 1)$x
x <- test; x[, 8:24, 2] <- NA; patterns[["variable 2 missing, frames 8-24"]] <- x
x <- test; set.seed(3)
for (i in seq_len(dim(x)[1])) { s <- sample(25, 1); x[i, s:(s + 7), sample(3, 1)] <- NA }
patterns[["one random variable, 8 frames"]] <- x
x <- test; x[, 25:32, ] <- NA; patterns[["last 8 frames"]] <- x
x <- test; x[, 12:20, ] <- NA; patterns[["frames 12-20"]] <- x

loadavg <- function() paste(strsplit(readLines("/proc/loadavg"), " ")[[1]][1:3], collapse = " ")
fits <- lapply(strategies, function(s) {
  t0 <- proc.time()[["elapsed"]]
  f <- dit_fit(train, strategy = s, steps = steps, seed = 1, threads = threads, progress = FALSE)
  attr(f, "seconds") <- proc.time()[["elapsed"]] - t0
  f
})
rows <- list()
for (p in names(patterns)) {
  xt <- patterns[[p]]
  m <- is.na(xt)
  score <- function(model) {
    a <- imputation_metrics(impute(model, xt, seed = 1, truth = test, threads = threads), by = "all")
    c(mae = a$mae, coverage95 = a$interval_coverage)
  }
  gp <- score(spec)
  li <- impute_linear(xt)
  r <- data.frame(pattern = p, missing = sum(m), exact_gp_mae = gp[["mae"]], exact_gp_coverage = gp[["coverage95"]],
                  linear_mae = mean(abs(li[m] - test[m])), check.names = FALSE)
  for (s in names(fits)) {
    d <- score(fits[[s]])
    r[[paste(s, "MAE")]] <- d[["mae"]]
    r[[paste(s, "coverage")]] <- d[["coverage95"]]
  }
  print(r, digits = 3)
  rows[[p]] <- r
}
tab <- do.call(rbind, rows)
num <- vapply(tab, is.numeric, TRUE) & names(tab) != "missing"
tab[num] <- lapply(tab[num], function(v) sprintf("%.3f", v))
fmt <- md_table_lines(tab)
out <- "bench/results/dit_training_patterns.md"
head <- if (file.exists(out)) character() else
  c("# DiTs trained on frame masks and on mixed masks, scored on patterns of both kinds (bench/dit_training_patterns.R)", "",
    "GP data (Matern 3/2, lengthscale 8, H = 32, d = 3 correlated variables), 1,000 training and 30 test sequences;",
    "dit_fit()'s default network, both strategies trained the same steps from seed 1; MAE and 95% interval coverage",
    "over the hidden entries; the exact GP is the true model.", "")
cat(c(head, sprintf("## %s, %d steps, %d thread(s); training %s s; load at the end %s",
                    format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC"), steps, threads,
                    paste(sprintf("%s %.0f", names(fits), vapply(fits, attr, 0, "seconds")), collapse = ", "), loadavg()),
      "", fmt, ""), file = out, sep = "\n", append = TRUE)
