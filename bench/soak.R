# Soak: imputes (DiT and exact GP), fits a GP and round-trips a model file in
# a loop for a few minutes and reports the resident memory (VmRSS) at the
# start, after a warm-up and at the end. A leak shows as growth between the
# warm-up and the end that does not level off.
# Usage: Rscript bench/soak.R [minutes per imputer, default 3]
suppressPackageStartupMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
minutes <- if (length(args)) as.numeric(args[1]) else 3
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
  n <- 0
  warm <- NA
  trace <- numeric()
  while (proc.time()[["elapsed"]] - t0 < 60 * minutes) {
    body()
    n <- n + 1
    if (n == 5) warm <- rss_mb()
    if (n %% 10 == 0) trace <- c(trace, rss_mb())
  }
  gc()
  end <- rss_mb()
  data.frame(loop = label, iterations = n, seconds = round(proc.time()[["elapsed"]] - t0),
             rss_start_mb = round(start, 1), rss_warm_mb = round(warm, 1), rss_end_mb = round(end, 1),
             growth_after_warmup_mb = round(end - warm, 1),
             rss_last_half_slope_mb_per_100 = if (length(trace) >= 4) {
               h <- trace[(length(trace) %/% 2):length(trace)]
               round(100 * unname(coef(lm(h ~ seq_along(h)))[2]) / 10, 2)
             } else NA)
}

res <- rbind(
  soak("impute(DiT), 20 cases x 50 samples", function() impute(fit, held, n_samples = 50, seed = 1, threads = 2)),
  soak("impute(gp_spec), 20 cases x 100 samples + calibrate", function() {
    imp <- impute(spec, held, n_samples = 100, seed = 1, threads = 2)
    coverage(imp, truth = x)
  }),
  soak("gp_fit + dit_save/dit_load", function() {
    gp_fit(held, kernel = "laplace", n_windows = 10, seed = 1)
    dit_save(fit, f)
    dit_load(f)
  })
)
cat(sprintf("Soak on %s, %s, %g minutes per loop\n", format(Sys.Date()), R.version.string, minutes))
print(res, row.names = FALSE)
