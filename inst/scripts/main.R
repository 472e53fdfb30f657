# ditimpute's main job on built-in defaults (README, first command): the
# getting-started flow end to end in a few minutes on a 2-core CPU.
#  1. kappa(Sigma_cond) of the paper's patterns P1-P4 (H = 96, d = 8, Laplace
#     lengthscale 128) and a picture of them;
#  2. simulate Gaussian-process data at a small scale (H = 32, d = 4), train a
#     small DiT with mixed masking, impute a tail gap and scattered pairs;
#  3. report error and coverage of the DiT (raw, and calibrated on held-out
#     sequences with calibrate()) and of the exact GP imputer, and save a
#     picture of one calibrated DiT imputation with its band.
suppressPackageStartupMessages(library(ditimpute))
out_dir <- Sys.getenv("DITIMPUTE_OUT", "ditimpute-output")
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
t_start <- proc.time()[["elapsed"]]
set.seed(2026)

cat("== 1. Condition numbers of the paper's patterns ==\n")
spec96 <- gp_spec(96, d = 8, kernel = gp_kernel("laplace", lengthscale = 128))
pp <- paper_patterns()
print(data.frame(pattern = names(pp), frames = vapply(pp, function(p) p$label, ""),
                 kappa_cond = round(kappa_cond(spec96, pp), 2),
                 paper = c(415.40, 32.15, 9.47, 3.00)), row.names = FALSE)
png_patterns <- file.path(out_dir, "patterns.png")
grDevices::png(png_patterns, width = 900, height = 380)
plot(pp, main = "Paper patterns P1-P4 (H = 96, Laplace lengthscale 128)")
invisible(grDevices::dev.off())

cat("\n== 2. Train a DiT on simulated Gaussian-process data ==\n")
H <- 32
spec <- gp_spec(H, d = 4, kernel = gp_kernel("laplace", lengthscale = 128 * H / 96))
print(spec)
train <- gp_simulate(spec, n = 2000)
strategy <- mask_strategy(c("6x1", "3x2", "1x6"))
fit <- dit_fit(train, config = dit_config(H, 4, width = 64, depth = 2, heads = 4), strategy = strategy,
               steps = 1000, batch_size = 64, lr = 1e-3, progress = interactive())
print(fit)

cat("\n== 3. Impute 100 new sequences: DiT (raw and calibrated) against the exact GP imputer ==\n")
# P1-like: a tail of 6 frames; P4-like: 3 scattered pairs.
tests <- list(`tail 6` = (H - 5):H, `3 pairs` = c(5, 6, 16, 17, 27, 28))
t_cal <- proc.time()[["elapsed"]]
cal <- calibrate(fit, gp_simulate(spec, n = 100), missing = unname(tests), level = 0.95, n_samples = 100)
t_cal <- proc.time()[["elapsed"]] - t_cal
print(cal)
truth <- gp_simulate(spec, n = 100)
rows <- list()
for (nm in names(tests)) {
  x <- truth
  x[, tests[[nm]], ] <- NA
  dit_raw <- impute(fit, x, n_samples = 100, truth = truth)
  imps <- list(`DiT raw` = dit_raw, `DiT cal` = apply_calibration(dit_raw, cal),
               `exact GP` = impute(spec, x, n_samples = 100, truth = truth))
  for (im in names(imps)) {
    met <- colMeans(imputation_metrics(imps[[im]], spec = spec)[-1])
    cov <- coverage(imps[[im]], spec = spec, n_draws = 1000)
    truth_cov <- coverage(imps[[im]])
    rows[[length(rows) + 1]] <- data.frame(pattern = nm, kappa = kappa_cond(spec, tests[[nm]]), imputer = im,
                                           mse = met[["mse"]], crps = met[["crps"]], width = met[["width"]],
                                           cov95 = mean(cov$coverage), se = stats::sd(cov$coverage) / sqrt(nrow(cov)),
                                           truth_reg = mean(truth_cov$coverage),
                                           truth_int = mean(truth_cov$interval_coverage))
  }
  if (nm == names(tests)[1]) imp_plot <- imps$`DiT cal`
}
res <- do.call(rbind, rows)
cat("DiT cal = calibrated on held-out sequences. mse: against the exact conditional mean;\n",
    "crps: against the truth; width: of the 95% per-entry intervals; cov95: share of 1000\n",
    "exact conditional draws inside the 95% L2-ball region, averaged over sequences (se its\n",
    "standard error); truth_reg / truth_int: share of the true values inside the region /\n",
    "the per-entry intervals. One table of at most 80 columns:\n", sep = "")
print(res, digits = 3, row.names = FALSE)

png_imp <- file.path(out_dir, "imputation.png")
ggplot2::ggsave(png_imp, plot(imp_plot, sequence = 1), width = 9, height = 5, dpi = 100)
cat(sprintf("\nSaved %s and %s\n", png_patterns, png_imp))
cat(sprintf("Main job: %.0f s (training %.0f s, calibration %.0f s)\n", proc.time()[["elapsed"]] - t_start,
            fit$train_info$seconds, t_cal))
