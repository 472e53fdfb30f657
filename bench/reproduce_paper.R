# Reproduces the simulation tables of the paper's section 6 at a scale a
# 2-core CPU runs in about half an hour, and saves them to
# inst/extdata/paper-results.rds for the vignette "reproducing-the-paper".
#
#   Rscript bench/reproduce_paper.R            # from the repository root
#   DITIMPUTE_WORKERS=2 Rscript bench/reproduce_paper.R   # rows on 2 processes
#   Rscript bench/reproduce_paper.R paper      # the paper's scale, on a CUDA GPU
#
# Every DiT row is also calibrated (run_experiments(n_calibrate =)) on
# held-out sequences under its test pattern: coverage_calibrated sits beside
# the raw coverage.
#
# Scale "paper": H = 96, Laplace 128, the paper-size DiT (256/12/16) on
# device "cuda", n = 1e5 training sequences for the strategy table (1e4, 3e4,
# 1e5 for the training-size curve), 8000 steps of batch 64, 100 test
# sequences per cell, 100 samples, the default sampler (UniPC, 20 steps),
# 200 calibration sequences; results go to
# inst/extdata/paper-results-paper-scale.rds beside the CPU-scale ones. It has
# not been run yet (no GPU in the session that wrote it).
#
# Scale (the paper's in brackets): H = 48 [96] with P1-P4 and the strategies
# rescaled block by block (run_experiments()), d = 8 [8], Laplace lengthscale
# 64 = 128 * 48 / 96, a DiT of width 64, depth 2, 4 heads [256, 12, 16],
# 500 training steps of batch 64 at lr 1e-3, n = 4000 training sequences
# [1e5] for the strategy tables, 12 test sequences per cell [not stated],
# 50 samples per region, 25 reverse-SDE (Heun) steps, one run per cell [5].
if (nzchar(Sys.getenv("DITIMPUTE_LIB"))) .libPaths(c(Sys.getenv("DITIMPUTE_LIB"), .libPaths()))
suppressPackageStartupMessages(library(ditimpute))
workers <- as.integer(Sys.getenv("DITIMPUTE_WORKERS", "1"))
threads <- if (workers > 1) 1L else 2L
if (workers > 1) future::plan(future::multisession, workers = workers)

# DITIMPUTE_IMPUTERS=oracle runs only the exact imputer's rows (a minute).
imputers <- strsplit(Sys.getenv("DITIMPUTE_IMPUTERS", "dit,oracle"), ",")[[1]]

scale_name <- Sys.getenv("DITIMPUTE_SCALE", if (length(commandArgs(TRUE))) commandArgs(TRUE)[1] else "cpu")
scales <- list(
  cpu = list(H = 48, d = 8, lengthscale = 64, config = list(width = 64, depth = 2, heads = 4), steps = 500,
             fit_args = list(lr = 1e-3, batch_size = 64), n_strategies = 4000, n_sizes = c(250, 1000, 4000),
             H_values = c(24, 48, 96), n_test = 12, n_samples = 50, n_draws = 1000, sampler = list(),
             n_calibrate = 40, results = "inst/extdata/paper-results.rds"),
  paper = list(H = 96, d = 8, lengthscale = 128, config = list(width = 256, depth = 12, heads = 16), steps = 8000,
               fit_args = list(lr = 3e-4, batch_size = 64, ema = 0.999, device = "cuda"), n_strategies = 1e5,
               n_sizes = c(1e4, 3e4, 1e5), H_values = c(24, 48, 96), n_test = 100, n_samples = 100, n_draws = 2000,
               sampler = list(), n_calibrate = 200, results = "inst/extdata/paper-results-paper-scale.rds"))
if (!scale_name %in% names(scales)) stop("scale must be \"cpu\" or \"paper\", not \"", scale_name, "\"")
scale <- scales[[scale_name]]
if (scale_name == "paper" && !isTRUE(torch_backend()$cuda_available)) {
  stop("the paper scale needs a CUDA LibTorch (see README, 'A GPU from R'); torch_backend() reports none.")
}
run <- function(grid, latent = FALSE, H = scale$H) {
  run_experiments(grid[grid$imputer %in% imputers, ], d = scale$d, kernel = gp_kernel("laplace", lengthscale = scale$lengthscale),
                  config = scale$config, steps = scale$steps, fit_args = scale$fit_args, n_test = scale$n_test,
                  n_samples = scale$n_samples, n_draws = scale$n_draws, sampler = scale$sampler, latent = latent,
                  threads = threads, progress = TRUE, H = H, n_calibrate = scale$n_calibrate)
}
timed <- function(expr) {
  t0 <- proc.time()[["elapsed"]]
  res <- force(expr)
  attr(res, "wall_seconds") <- proc.time()[["elapsed"]] - t0
  message(sprintf("  %.0f s", attr(res, "wall_seconds")))
  res
}
patterns <- paste0("P", 1:4)
seed <- 2026

# kappa(Sigma_cond) of P1-P4 at the paper's H = 96 and at our H = 48.
spec96 <- gp_spec(96, d = 8, kernel = gp_kernel("laplace", lengthscale = 128))
kappa <- data.frame(pattern = patterns, kappa_96 = unname(kappa_cond(spec96, paper_patterns())))

# Table 2 and the coverage-vs-n curve share runs: one DiT per (strategy, n),
# each tested on P1-P4 with the same test sequences; the exact imputer beside.
message("GP: strategies x patterns, and training size")
grid_gp <- rbind(
  expand.grid(pattern = patterns, strategy = c("S1", "S2", "S3", "S4", "8x2", "4x4", "1x16"),
              n = scale$n_strategies, imputer = "dit", seed = seed, stringsAsFactors = FALSE),
  expand.grid(pattern = patterns, strategy = "S4", n = setdiff(scale$n_sizes, scale$n_strategies),
              imputer = "dit", seed = seed, stringsAsFactors = FALSE),
  expand.grid(pattern = patterns, strategy = "S4", n = NA, imputer = "oracle", seed = seed,
              stringsAsFactors = FALSE))
gp <- timed(run(grid_gp))

# Table 1: coverage against H; the test pattern is P4's shape (H / 12 pairs)
# and the training masks S1's (H / 6 random frames), at every H.
message("GP: sequence length")
grid_H <- do.call(rbind, lapply(scale$H_values, function(h) {
  data.frame(pattern = sprintf("%dx2", h %/% 12), strategy = sprintf("%dx1", h %/% 6), H = h,
             n = scale$n_strategies, imputer = c("dit", "oracle"), seed = seed, stringsAsFactors = FALSE)
}))
by_H <- timed(run(grid_H))

# Tables 3-4: the latent GP, S1-S4 x P1-P4, DiT and the best linear imputer.
message("Latent GP: strategies x patterns")
grid_latent <- rbind(
  expand.grid(pattern = patterns, strategy = c("S1", "S2", "S3", "S4"), n = scale$n_strategies, imputer = "dit",
              seed = seed, stringsAsFactors = FALSE),
  expand.grid(pattern = patterns, strategy = "S4", n = NA, imputer = "oracle", seed = seed,
              stringsAsFactors = FALSE))
latent <- timed(run(grid_latent, latent = TRUE))

out_file <- Sys.getenv("DITIMPUTE_RESULTS", scale$results)
info <- list(scale_name = scale_name, imputers = imputers, date = format(Sys.time(), "%Y-%m-%d %H:%M %Z"), scale = scale, workers = workers, threads = threads,
             cpu = tryCatch(sub(".*: ", "", grep("model name", readLines("/proc/cpuinfo"), value = TRUE)[1]),
                            error = function(e) NA_character_),
             cores = parallel::detectCores(), torch = torch_backend()$torch_version,
             ditimpute = as.character(utils::packageVersion("ditimpute")),
             wall_seconds = c(gp = attr(gp, "wall_seconds"), by_H = attr(by_H, "wall_seconds"),
                              latent = attr(latent, "wall_seconds")))
strip <- function(x) { x <- as.data.frame(unclass(x)); attr(x, "wall_seconds") <- NULL; x }
res <- list(info = info, kappa = kappa, gp = strip(gp), by_H = strip(by_H), latent = strip(latent))
dir.create(dirname(out_file), showWarnings = FALSE, recursive = TRUE)
saveRDS(res, out_file, compress = "xz")
message(sprintf("Saved %s (%.0f s in all)", out_file, sum(info$wall_seconds)))
