# What a GP-informed DiT's pool of conditionals buys in speed: ms per training
# step of dit_fit(gp = ...) with the GP conditionals computed afresh for every
# example (gp_pool = 0) against a pool of 1,024, by window size H * d. DiT
# 64/3/4, batch 64, 400 sequences simulated from a Laplace GP (lengthscale
# 16), gp_fit() with the kernel named; a step's cost is (t(50) - t(10)) / 40
# from two dit_fit() calls, the rest of t(10) the setup (the pool's
# conditionals among it).
#
#   Rscript bench/gp_pool_cost.R [kernel] [gp_mode] [sizes]
#
# kernel: gp_fit()'s (default "laplace"); gp_mode: "residual" (default) or
# "score"; sizes: indices into the list below (default all), e.g. "2,4".
# Prints one line per size; results in bench/results/gp_pool_cost.md.
suppressPackageStartupMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
kern <- if (length(args) >= 1) args[1] else "laplace"
mode <- if (length(args) >= 2) args[2] else "residual"
sizes <- list(c(48, 7), c(48, 8), c(64, 10), c(100, 10), c(48, 28), c(30, 132))
if (length(args) >= 3) sizes <- sizes[as.integer(strsplit(args[3], ",")[[1]])]
cat(sprintf("load average before: %s\n", paste(strsplit(readLines("/proc/loadavg"), " ")[[1]][1:3], collapse = " ")))
for (s in sizes) {
  H <- s[1]
  d <- s[2]
  spec <- gp_spec(H, d = d, kernel = gp_kernel("laplace", lengthscale = 16))
  x <- gp_simulate(spec, 400, seed = 1)
  gp <- gp_fit(x, kernel = kern, n_windows = 100, seed = 1)
  cfg <- dit_config(H, d, width = 64, depth = 3, heads = 4)
  timed <- function(pool, steps) {
    t0 <- proc.time()[["elapsed"]]
    dit_fit(x, cfg, gp = gp, gp_mode = mode, gp_pool = pool, steps = steps, validation = 0, patience = 0,
            seed = 1, threads = 2, progress = FALSE)
    proc.time()[["elapsed"]] - t0
  }
  r <- sapply(c(0, 1024), function(p) {
    a <- timed(p, 10)
    b <- timed(p, 50)
    c(step = (b - a) / 40, setup = a - 10 * (b - a) / 40)
  })
  cat(sprintf("%s %s H*d = %4d (%d x %d): pool 0: %.0f ms/step (setup %.1f s); pool 1024: %.0f ms/step (setup %.1f s): %.2fx\n",
              kern, mode, H * d, H, d, 1000 * r["step", 1], r["setup", 1], 1000 * r["step", 2], r["setup", 2],
              r["step", 1] / r["step", 2]))
}
