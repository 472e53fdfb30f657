# Shared by bench/gp_fit_gaps.R and bench/gp_fit_iterations.R: BeijingAir's
# training windows as bench/real_data.R fits them (100 windows of 30 x 132),
# with a further share of their observed entries hidden completely at random
# so that `rate` of all entries is missing (the data's own gaps count towards
# it); the fit's settings (Matern 3/2, a fitted nugget of at least 0.01, ridge
# 1e-3); and the score of a fit on the test windows with 20% of their
# observed entries hidden (MAE and 90% coverage, standardised scale).
suppressPackageStartupMessages(library(ditimpute))

gaps_data <- function(data_dir, rate) {
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
  list(x = x, test = dat$test, own = own, most = most, held = hide_mcar(dat$test, rate = 0.2, seed = 2))
}

gaps_fit <- function(x, e_step, max_iter = 200, tol = 1e-7, validation = 0, seed = 1, shrinkage = 0) {
  t0 <- proc.time()[["elapsed"]]
  f <- suppressWarnings(gp_fit(x, kernel = "matern32", fit_nugget = TRUE, ridge = 1e-3, nugget_bounds = c(0.01, 1),
                               seed = seed, e_step = e_step, max_iter = max_iter, tol = tol, validation = validation,
                               shrinkage = shrinkage))
  seconds <- proc.time()[["elapsed"]] - t0
  cat(sprintf("%s E-step: %.1f s, %d iterations, %s, log-likelihood %.1f\n", e_step, seconds,
              f$fit$iterations, if (f$fit$converged) "converged" else "NOT converged", f$fit$loglik))
  list(fit = f, seconds = seconds)
}

gaps_score <- function(f, g) {
  imp <- impute(f, g$held$x, n_samples = 100, level = 0.9, seed = 3)
  m <- imputation_metrics(imp, truth = g$test, hidden = g$held$hidden, by = "all")
  c(mae = m$mae, coverage = m$interval_coverage)
}
