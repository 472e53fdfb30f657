# gp_fit() with heavy gaps on real data. BeijingAir's training windows are
# fitted as bench/real_data.R fits them (Matern 3/2, a fitted nugget of at
# least 0.01, ridge 1e-3, 100 windows of 30 x 132), after a further share of
# their observed entries is hidden completely at random so that `rate` of all
# entries is missing (the data's own gaps count towards it). Two fits in the
# same run: the exact E-step (the baseline) and the sampled one
# (e_step = "sampled", 32 draws a window; run first).
# Printed: time,
# iterations, the exact log-likelihood of each fit on the fitting windows,
# lengthscale, nugget and how far apart the two Lambdas are; then each fit
# imputes the test windows with 20% of their observed entries hidden (MAE and
# 90% coverage on the hidden entries, standardised scale).
# Run from the repository root:
#   Rscript bench/gp_fit_gaps.R [data_dir] [rate]
# It writes bench/results/gp_fit_gaps.md.
suppressPackageStartupMessages(library(ditimpute))

args <- commandArgs(trailingOnly = TRUE)
data_dir <- if (length(args) >= 1) args[1] else Sys.getenv("DITIMPUTE_DATA_DIR", "../shared/data")
rate <- if (length(args) >= 2) as.numeric(args[2]) else 0.5
# The exact fit's iteration cap (DITIMPUTE_BENCH_EXACT_MAX_ITER): on these
# windows it takes about 17 s an iteration.
exact_max_iter <- as.integer(Sys.getenv("DITIMPUTE_BENCH_EXACT_MAX_ITER", "200"))
# The sampled fit's tol (DITIMPUTE_BENCH_SAMPLED_TOL; gp_fit()'s default 1e-7).
sampled_tol <- as.numeric(Sys.getenv("DITIMPUTE_BENCH_SAMPLED_TOL", "1e-7"))

dat <- load_real_data("beijing_air", dir = data_dir)
set.seed(1)
use <- sort(sample.int(dim(dat$train)[1], 100))
x <- dat$train[use, , , drop = FALSE]
own <- mean(is.na(x))
obs <- which(!is.na(x))
extra <- round((rate - own) * length(x))
if (extra > 0) x[obs[sample.int(length(obs), extra)]] <- NA
most <- max(apply(is.na(x), 1, sum))
cat(sprintf("BeijingAir: %d windows of %d x %d; missing %.1f%% (%.1f%% the data's own); at most %d missing entries a window\n",
            dim(x)[1], dim(x)[2], dim(x)[3], 100 * mean(is.na(x)), 100 * own, most))

fit_with <- function(e_step, max_iter = 200, tol = 1e-7) {
  t0 <- proc.time()[["elapsed"]]
  f <- suppressWarnings(gp_fit(x, kernel = "matern32", fit_nugget = TRUE, ridge = 1e-3, nugget_bounds = c(0.01, 1),
                               seed = 1, e_step = e_step, max_iter = max_iter, tol = tol))
  cat(sprintf("%s E-step: %.1f s, %d iterations, %s, log-likelihood %.1f\n", e_step, proc.time()[["elapsed"]] - t0,
              f$fit$iterations, if (f$fit$converged) "converged" else "NOT converged", f$fit$loglik))
  list(fit = f, seconds = proc.time()[["elapsed"]] - t0)
}
sampled <- fit_with("sampled", tol = sampled_tol)
exact <- fit_with("exact", max_iter = exact_max_iter)

held <- hide_mcar(dat$test, rate = 0.2, seed = 2)
score <- function(f) {
  imp <- impute(f, held$x, n_samples = 100, level = 0.9, seed = 3)
  m <- imputation_metrics(imp, truth = dat$test, hidden = held$hidden, by = "all")
  c(mae = m$mae, coverage = m$interval_coverage)
}
rows <- lapply(list(exact = exact, sampled = sampled), function(r) {
  f <- r$fit
  s <- score(f)
  data.frame(e_step = f$fit$e_step, seconds = round(r$seconds, 1), iterations = f$fit$iterations,
             converged = f$fit$converged,
             loglik = round(f$fit$loglik, 1), lengthscale = round(f$kernel$lengthscale, 4),
             nugget = round(f$nugget, 5), test_mae = round(s[["mae"]], 4), test_cover90 = round(s[["coverage"]], 3))
})
tab <- do.call(rbind, rows)
lam <- norm(sampled$fit$Lambda - exact$fit$Lambda, "F") / norm(exact$fit$Lambda, "F")
n_obs <- sum(!is.na(x))
p <- 2 + dim(x)[3] + dim(x)[3] * (dim(x)[3] + 1) / 2
gap <- exact$fit$fit$loglik - sampled$fit$fit$loglik
summary_line <- sprintf(paste0("exact / sampled: time %.1fx; log-likelihood gap %.1f (%.2e per observed entry; %.1f%% of p / 2 = %.0f, ",
                               "p = %d free parameters); |Lambda_s - Lambda_e| / |Lambda_e| = %.2e"),
                        exact$seconds / sampled$seconds, gap, gap / n_obs, 100 * gap / (p / 2), p / 2, as.integer(p), lam)
print(tab, row.names = FALSE)
cat(summary_line, "\n")

md <- c("# gp_fit() with heavy gaps on BeijingAir (bench/gp_fit_gaps.R)", "",
        sprintf("Produced by `DITIMPUTE_BENCH_EXACT_MAX_ITER=%d DITIMPUTE_BENCH_SAMPLED_TOL=%g Rscript bench/gp_fit_gaps.R %s %g` on %s, %d cores.",
                exact_max_iter, sampled_tol, data_dir, rate, format(Sys.Date()), parallel::detectCores()), "",
        sprintf("%d training windows of %d x %d, %.1f%% missing (%.1f%% the data's own, the rest hidden MCAR), at most %d missing entries a window; Matern 3/2, nugget >= 0.01, ridge 1e-3. Test: the %d test windows with 20%% of their observed entries hidden, 90%% intervals.",
                dim(x)[1], dim(x)[2], dim(x)[3], 100 * mean(is.na(x)), 100 * own, most, dim(dat$test)[1]), "",
        "| E-step | seconds | iterations | converged | log-likelihood | lengthscale | nugget | test MAE | test 90% coverage |",
        "|---|---|---|---|---|---|---|---|---|",
        apply(tab, 1, function(r) paste0("| ", paste(trimws(r), collapse = " | "), " |")), "",
        summary_line)
dir.create("bench/results", showWarnings = FALSE)
writeLines(md, "bench/results/gp_fit_gaps.md")
