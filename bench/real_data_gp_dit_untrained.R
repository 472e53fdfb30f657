# Run from the repository root: Rscript bench/real_data_gp_dit_untrained.R [data_dir]
# (numbers in bench/results/real_data_gp_dit.md). The GP-DiT before training (1 step at lr 1e-10: the output layer stays ~0)
# on ETTh1: its raw rows should match the fitted GP's marginals.
suppressPackageStartupMessages(library(ditimpute))
dat <- load_real_data("ett_h1", dir = { a <- commandArgs(TRUE); if (length(a)) a[1] else "../shared/data" })
n_val <- max(20, round(0.15 * dim(dat$train)[1]))
train <- dat$train[seq_len(dim(dat$train)[1] - n_val), , , drop = FALSE]
H <- dim(train)[2]; d <- dim(train)[3]
gp <- gp_fit(train, kernel = "matern32", fit_nugget = TRUE, nugget_bounds = c(1e-6, 1), n_windows = 100, seed = 1)
fit <- dit_fit(train, config = dit_config(H, d, width = 64, depth = 3, heads = 4), gp = gp, steps = 1, lr = 1e-10,
               validation = 0, ema = 0, seed = 1, progress = FALSE)
for (rate in c(0.1, 0.2, 0.5)) {
  held <- hide_mcar(dat$test, rate = rate, seed = round(1000 * rate))
  for (m in list(list("GP-DiT untrained", fit, 50), list("fitted GP", gp, 100))) {
    imp <- impute(m[[2]], held$x, n_samples = m[[3]], level = 0.9, seed = 1)
    met <- imputation_metrics(imp, truth = dat$test, hidden = held$hidden, by = "all")
    cat(sprintf("| ETTh1 | %.0f%% | %s | %.4f | %.4f | %.4f | %.3f | %.3f |\n", 100 * rate, m[[1]], met$mae, met$mse,
                met$crps, met$interval_coverage, met$width))
  }
}
