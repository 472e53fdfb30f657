# How far gp_fit() needs to climb on real data with heavy gaps before its
# imputations stop changing. BeijingAir at `rate` missing as in
# bench/gp_fit_gaps.R (100 training windows of 30 x 132, the default
# e_step = "auto", which samples here); one fit per iteration cap, each from
# the same start with the same draws, so a fit capped at k iterations is the
# first k iterations of every longer one. For each: time, exact
# log-likelihood, the last iteration's gain per observed entry, lengthscale,
# nugget, how far Lambda is from the longest fit's, and the test windows'
# MAE and 90% coverage with 20% of their observed entries hidden. Last, in
# the same run, the early-stopped fit (gp_fit(validation = 0.05), default
# patience 3): 5% of the observed entries held out, the parameters where
# their error was lowest; with DITIMPUTE_BENCH_EARLY_SEEDS (e.g. "1,2,3",
# default "1,2,3,4,5") once per seed (the seed draws the held-out entries and
# the sampled E-step's draws); and the shrunk fit (gp_fit(shrinkage = s),
# s from DITIMPUTE_BENCH_SHRINKAGE, default "0.3", "" for none) with the
# longest fit's iteration cap.
# Run from the repository root:
#   Rscript bench/gp_fit_iterations.R [data_dir] [rate] [caps, e.g. 5,10,20,40]
# It writes bench/results/gp_fit_iterations.md.
source("bench/gp_fit_gaps_setup.R")

args <- commandArgs(trailingOnly = TRUE)
data_dir <- if (length(args) >= 1) args[1] else Sys.getenv("DITIMPUTE_DATA_DIR", "../shared/data")
rate <- if (length(args) >= 2) as.numeric(args[2]) else 0.5
caps <- if (length(args) >= 3) as.integer(strsplit(args[3], ",")[[1]]) else c(5L, 10L, 20L, 40L)

g <- gaps_data(data_dir, rate)
fits <- lapply(caps, function(k) gaps_fit(g$x, "auto", max_iter = k))
ref <- fits[[length(fits)]]$fit
seeds <- as.integer(strsplit(Sys.getenv("DITIMPUTE_BENCH_EARLY_SEEDS", "1,2,3,4,5"), ",")[[1]])
early <- lapply(seeds, function(s) {
  r <- gaps_fit(g$x, "auto", validation = 0.05, seed = s)
  cat(sprintf("early stopping, seed %d: parameters of iteration %d of %d; held-out error %s\n", s, r$fit$fit$best_iteration,
              r$fit$fit$iterations, paste(round(r$fit$fit$validation_trace, 4), collapse = " ")))
  r$seed <- s
  r
})
shrink <- as.numeric(strsplit(Sys.getenv("DITIMPUTE_BENCH_SHRINKAGE", "0.3"), ",")[[1]])
shrunk <- lapply(shrink, function(s) gaps_fit(g$x, "auto", max_iter = max(caps), shrinkage = s))
n_obs <- ref$fit$n_observed
label <- function(f, seed) {
  if (isTRUE(f$fit$validation > 0)) return(sprintf("early-stopped, seed %d (iteration %d)", seed, f$fit$best_iteration))
  if (isTRUE(f$fit$shrinkage > 0)) return(sprintf("shrinkage %g, max_iter", f$fit$shrinkage))
  "max_iter"
}
rows <- lapply(c(fits, early, shrunk), function(r) {
  f <- r$fit
  s <- gaps_score(f, g)
  tr <- f$fit$objective_trace
  data.frame(fit = label(f, r$seed),
             iterations = f$fit$iterations, seconds = round(r$seconds, 1), loglik = round(f$fit$loglik, 1),
             last_gain_per_entry = signif(diff(utils::tail(tr, 2)) / n_obs, 3),
             lengthscale = round(f$kernel$lengthscale, 3), nugget = round(f$nugget, 4),
             lambda_vs_longest = signif(norm(f$Lambda - ref$Lambda, "F") / norm(ref$Lambda, "F"), 3),
             test_mae = round(s[["mae"]], 4), test_cover90 = round(s[["coverage"]], 3))
})
tab <- do.call(rbind, rows)
print(tab, row.names = FALSE)
md <- c("# gp_fit() on BeijingAir at heavy gaps: fit and imputation quality against iterations (bench/gp_fit_iterations.R)", "",
        sprintf("Produced by `Rscript bench/gp_fit_iterations.R %s %g %s` on %s, %d cores.", data_dir, rate,
                paste(caps, collapse = ","), format(Sys.Date()), parallel::detectCores()), "",
        sprintf(paste0("%d training windows of %d x %d, %.1f%% missing (%.1f%% the data's own), at most %d missing entries a window; ",
                       "Matern 3/2, nugget >= 0.01, ridge 1e-3, e_step = \"%s\". Test: the %d test windows with 20%% of their ",
                       "observed entries hidden, 90%% intervals. `lambda_vs_longest`: |Lambda - Lambda_%d| / |Lambda_%d| (Frobenius). ",
                       "The early-stopped fit's log-likelihood is on the 95%% of observed entries it was fitted on."),
                dim(g$x)[1], dim(g$x)[2], dim(g$x)[3], 100 * mean(is.na(g$x)), 100 * g$own, g$most, ref$fit$e_step,
                dim(g$test)[1], max(caps), max(caps)), "",
        paste0("| ", paste(names(tab), collapse = " | "), " |"),
        paste0("|", strrep("---|", ncol(tab))),
        apply(tab, 1, function(r) paste0("| ", paste(trimws(r), collapse = " | "), " |")))
dir.create("bench/results", showWarnings = FALSE)
writeLines(md, "bench/results/gp_fit_iterations.md")
