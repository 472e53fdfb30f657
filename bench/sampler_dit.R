# The DiT-side check of the default sampler (UniPC-2 on its tuned 8-step
# grid): the grid was tuned with the exact (linear) GP score, so does it keep
# a trained network's law as well as the former default (UniPC-3, 12
# geometric steps) did? Both are compared, on the same trained DiT and the
# same test sequences, with a fine-step run of the same network (UniPC-3 at
# 40 geometric steps): the samplers differ only in how they integrate the
# network's flow, so the distance to the fine run is the integration error
# the few-call samplers add. The exact GP referees every row (coverage of exact conditional draws by
# the 95% region, MSE of the sample mean against the exact conditional mean).
#
# Run from the repository root: Rscript bench/sampler_dit.R [train_steps]
# Writes bench/results/sampler_dit.md.
suppressPackageStartupMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
train_steps <- if (length(args)) as.integer(args[1]) else 1000L
t_start <- proc.time()[["elapsed"]]
load_note <- function() sprintf("load average %s", paste(utils::head(strsplit(readLines("/proc/loadavg"), " ")[[1]], 3),
                                                         collapse = " "))

H <- 32
d <- 4
spec <- gp_spec(H, d = d, kernel = gp_kernel("laplace", lengthscale = 128 * H / 96))
train <- gp_simulate(spec, n = 2000, seed = 1)
fit <- dit_fit(train, config = dit_config(H, d, width = 64, depth = 2, heads = 4),
               strategy = mask_strategy(c("6x1", "3x2", "1x6", "mcar0.3")), steps = train_steps,
               batch_size = 64, lr = 1e-3, seed = 1, progress = FALSE)
cat(sprintf("trained %d steps in %.0f s (%s)\n", train_steps, fit$train_info$seconds, load_note()))

n_test <- 50
truth <- gp_simulate(spec, n = n_test, seed = 2)
hide_frames <- function(frames) { x <- truth; x[, frames, ] <- NA; x }
patterns <- list(`tail 6 (P1-like)` = hide_frames((H - 5):H),
                 `3 pairs (P4-like)` = hide_frames(c(5, 6, 16, 17, 27, 28)),
                 `middle 6` = hide_frames(14:19),
                 `30% of entries` = hide_mcar(truth, rate = 0.3, seed = 3)$x)
samplers <- list(`unipc2 tuned 8 (default)` = list(method = "unipc2", steps = NULL),
                 `unipc 12 geometric (former default)` = list(method = "unipc", steps = 12),
                 `unipc 40 geometric (fine)` = list(method = "unipc", steps = 40))
rows <- list()
for (pn in names(patterns)) {
  x <- patterns[[pn]]
  for (sn in names(samplers)) {
    s <- samplers[[sn]]
    t0 <- proc.time()[["elapsed"]]
    imp <- impute(fit, x, n_samples = 100, method = s$method, steps = s$steps, seed = 7, truth = truth)
    secs <- proc.time()[["elapsed"]] - t0
    met <- colMeans(imputation_metrics(imp, spec = spec)[-1])
    cov <- coverage(imp, spec = spec, n_draws = 1000, seed = 11)
    rows[[length(rows) + 1]] <- data.frame(pattern = pn, sampler = sn, seconds = secs,
                                           mse_vs_cond_mean = met[["mse"]], width = met[["width"]],
                                           coverage95 = mean(cov$coverage),
                                           se = stats::sd(cov$coverage) / sqrt(nrow(cov)))
    cat(sprintf("%-18s %-36s %6.1f s  mse %.4f  width %.3f  coverage95 %.4f (se %.4f)\n", pn, sn, secs,
                met[["mse"]], met[["width"]], mean(cov$coverage), rows[[length(rows)]]$se))
  }
}
res <- do.call(rbind, rows)
# Distance of each few-call sampler to the fine run, per pattern.
fine <- grepl("fine", res$sampler)
ref <- aggregate(cbind(coverage95, mse_vs_cond_mean, width) ~ pattern, res[fine, ], mean)
few <- res[!fine, ]
few <- merge(few, ref, by = "pattern", suffixes = c("", "_fine"))
few$coverage_minus_fine <- few$coverage95 - few$coverage95_fine
few$mse_over_fine <- few$mse_vs_cond_mean / few$mse_vs_cond_mean_fine
few$width_over_fine <- few$width / few$width_fine

fmt <- function(df) {
  num <- vapply(df, is.numeric, TRUE)
  df[num] <- lapply(df[num], function(v) formatC(v, digits = 4, format = "fg"))
  c(paste0("| ", paste(names(df), collapse = " | "), " |"), paste0("|", strrep("---|", ncol(df))),
    apply(df, 1, function(r) paste0("| ", paste(r, collapse = " | "), " |")))
}
md <- c("# The default sampler on a trained DiT (`Rscript bench/sampler_dit.R`)", "",
        sprintf("%s, %s, 2 cores. DiT 64/2/4 trained %d steps on 2,000 GP sequences (H = %d, d = %d, Laplace",
                format(Sys.Date()), load_note(), train_steps, H, d),
        sprintf("lengthscale 128 H / 96, mixed masking 6x1/3x2/1x6/MCAR 30%%); %d test sequences a pattern, 100 samples each,",
                n_test),
        "sampler seed 7 for every row. `coverage95`: share of 1,000 exact conditional draws inside the 95% region",
        "(averaged over sequences; `se` its standard error); `mse_vs_cond_mean`: sample mean against the exact",
        "conditional mean; `width`: mean 95% per-entry interval width.", "",
        fmt(res[, c("pattern", "sampler", "seconds", "mse_vs_cond_mean", "width", "coverage95", "se")]), "",
        "Few-call samplers against the fine run of the same network:", "",
        fmt(few[, c("pattern", "sampler", "coverage_minus_fine", "mse_over_fine", "width_over_fine")]), "",
        sprintf("Whole run %.0f s.", proc.time()[["elapsed"]] - t_start))
writeLines(md, "bench/results/sampler_dit.md")
cat(md, sep = "\n")
