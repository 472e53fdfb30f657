# Soak: imputes (DiT and exact GP), fits a GP and round-trips a model file in
# a loop for a few minutes and reports the resident memory (VmRSS) at the
# start, after a warm-up (the first fifth of each loop) and at the end, with
# the range and the trend (MB per minute) over each loop's second half. A leak
# shows as a steady trend; allocator noise as a range without one. R frees
# each call's result only at its next garbage collection, so the resident
# memory is a sawtooth (it rises by the calls' garbage, about 0.8 MB per DiT
# call here, and falls at each collection, which R makes rarer as the session
# grows: 13 calls, then 53). Its floor is what a leak would raise, so besides
# the raw trend the soak reports the floor after warm-up and at the end: the
# resident memory after gc() and one more call (R's garbage collected, the
# freed heap handed back by the next call as it would be in use).
# Usage: Rscript bench/soak.R [minutes per loop, default 3] [loops: all, or any
#        of dit, gp, files separated by commas]
suppressPackageStartupMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
minutes <- if (length(args)) as.numeric(args[1]) else 3
loops <- if (length(args) > 1) strsplit(args[2], ",")[[1]] else "all"
wanted <- function(name) "all" %in% loops || name %in% loops
rss_mb <- function() {
  v <- grep("^VmRSS:", readLines("/proc/self/status"), value = TRUE)
  as.numeric(gsub("[^0-9]", "", v)) / 1024
}
spec <- gp_spec(48, d = 4, kernel = gp_kernel("laplace", lengthscale = 32))
x <- gp_simulate(spec, 20, seed = 1)
held <- hide_mcar(x, rate = 0.3, seed = 2)$x
fit <- dit_fit(gp_simulate(spec, 200, seed = 3), dit_config(48, 4, width = 32, depth = 2, heads = 2),
               strategy = mask_strategy("mcar0.3"), steps = 20, batch_size = 16, seed = 1, threads = 2,
               progress = FALSE)
f <- tempfile(fileext = ".dit")

soak <- function(label, body) {
  gc()
  start <- rss_mb()
  t0 <- proc.time()[["elapsed"]]
  elapsed <- function() proc.time()[["elapsed"]] - t0
  n <- 0
  warm <- warm_floor <- NA
  floor_now <- function() {
    gc()
    body()
    rss_mb()
  }
  times <- rss <- numeric()
  while (elapsed() < 60 * minutes) {
    body()
    n <- n + 1
    # Warm-up: the first fifth of the loop (allocator pools, caches, R's heap).
    if (is.na(warm) && elapsed() >= 12 * minutes) {
      warm <- rss_mb()
      warm_floor <- floor_now()
    }
    times <- c(times, elapsed())
    rss <- c(rss, rss_mb())
  }
  gc()
  end <- rss_mb()
  end_floor <- floor_now()
  late <- times >= 30 * minutes  # the second half
  slope <- if (sum(late) >= 3) unname(coef(lm(rss[late] ~ times[late]))[2]) * 60 else NA
  data.frame(loop = label, iterations = n, seconds = round(elapsed()), rss_start_mb = round(start, 1),
             rss_after_warmup_mb = round(warm, 1), rss_end_mb = round(end, 1),
             growth_after_warmup_mb = round(end - warm, 1),
             second_half_range_mb = if (any(late)) round(diff(range(rss[late])), 1) else NA,
             second_half_slope_mb_per_min = round(slope, 2), floor_after_warmup_mb = round(warm_floor, 1),
             floor_end_mb = round(end_floor, 1), floor_growth_mb = round(end_floor - warm_floor, 1))
}

res <- rbind(
  if (wanted("dit"))
    soak("impute(DiT), 20 cases x 50 samples", function() impute(fit, held, n_samples = 50, seed = 1, threads = 2)),
  if (wanted("gp"))
    soak("impute(gp_spec), 20 cases x 100 samples + calibrate", function() {
      imp <- impute(spec, held, n_samples = 100, seed = 1, threads = 2)
      coverage(imp, truth = x)
    }),
  if (wanted("files"))
    soak("gp_fit + dit_save/dit_load", function() {
      gp_fit(held, kernel = "laplace", n_windows = 10, seed = 1)
      dit_save(fit, f)
      dit_load(f)
    })
)
cat(sprintf("Soak on %s, %s, %g minutes per loop\n", format(Sys.Date()), R.version.string, minutes))
print(res, row.names = FALSE)
