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
source("bench/gp_fit_gaps_setup.R")

args <- commandArgs(trailingOnly = TRUE)
data_dir <- if (length(args) >= 1) args[1] else Sys.getenv("DITIMPUTE_DATA_DIR", "../shared/data")
rate <- if (length(args) >= 2) as.numeric(args[2]) else 0.5
# The exact fit's iteration cap (DITIMPUTE_BENCH_EXACT_MAX_ITER): on these
# windows it takes about 17 s an iteration.
exact_max_iter <- as.integer(Sys.getenv("DITIMPUTE_BENCH_EXACT_MAX_ITER", "200"))
# The sampled fit's tol (DITIMPUTE_BENCH_SAMPLED_TOL; gp_fit()'s default 1e-7).
sampled_tol <- as.numeric(Sys.getenv("DITIMPUTE_BENCH_SAMPLED_TOL", "1e-7"))

g <- gaps_data(data_dir, rate)
x <- g$x; own <- g$own; most <- g$most; dat <- list(test = g$test)
fit_with <- function(e_step, max_iter = 200, tol = 1e-7) gaps_fit(x, e_step, max_iter, tol)
sampled <- fit_with("sampled", tol = sampled_tol)
exact <- fit_with("exact", max_iter = exact_max_iter)

score <- function(f) gaps_score(f, g)
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
