# gp_fit(): maximum likelihood with missing entries marginalised (the core's
# ECM / ECME is tested in cpp/tests/test_gp_fit.cpp; here the R contract).

sim_windows <- function(n = 80, H = 16, seed = 1, rate = 0.2) {
  truth <- gp_spec(H, d = 2, kernel = gp_kernel("matern32", lengthscale = 3),
                   Lambda = matrix(c(1, 0.6, 0.6, 2), 2), mean = c(1, -1))
  x <- gp_simulate(truth, n, seed = seed)
  set.seed(seed)
  x[sample(length(x), round(rate * length(x)))] <- NA
  list(truth = truth, x = x)
}

test_that("gp_fit recovers the model and returns a usable gp_spec", {
  s <- sim_windows()
  fit <- gp_fit(s$x, seed = 1)
  expect_s3_class(fit, c("ditimpute_gp_fit", "ditimpute_gp"))
  expect_true(fit$fit$converged)
  # 80 x 16 = 1280 whitened frames: entries of Lambda have sd < 5% of their
  # scale; the lengthscale and means are pinned to ~ 10% (tolerances ~3 sd).
  expect_equal(fit$Lambda, s$truth$Lambda, tolerance = 0.15, ignore_attr = TRUE)
  expect_equal(fit$kernel$lengthscale, 3, tolerance = 0.15)
  expect_equal(fit$mean[1, ], c(1, -1), tolerance = 0.3, ignore_attr = TRUE)
  expect_true(all(diff(fit$fit$objective_trace) > -1e-8 * abs(fit$fit$objective_trace[-1])))
  # the reported log-likelihood is the exact one of the data at the fit, and
  # beats the true parameters
  expect_equal(as.numeric(logLik(fit)), gp_loglik(fit, s$x), tolerance = 1e-10)
  expect_gt(gp_loglik(fit, s$x), gp_loglik(s$truth, s$x))
  expect_equal(attr(logLik(fit), "df"), 1 + 2 + 3)
  expect_equal(attr(logLik(fit), "nobs"), sum(!is.na(s$x)))
  # impute() works as for any gp_spec, with intervals
  held <- hide_mcar(s$x[1:4, , ], rate = 0.2, seed = 2)
  imp <- impute(fit, held$x, n_samples = 50, level = 0.9, seed = 3)
  expect_false(anyNA(imp$point))
  expect_output(print(fit), "fitted by ECM on 80 windows")
  # the default's fixed nugget of 0: the print says how to fit one (a user
  # review: Seatbelts' MAE 0.879 without a nugget, 0.583 with one)
  expect_output(print(fit), "nugget: 0 (fixed; measured data usually carry noise: fit it with fit_nugget = TRUE", fixed = TRUE)
})

test_that("gp_fit's ECM (the default) reaches the ECME fit (search = \"exact\") at 50% missing", {
  s <- sim_windows(n = 50, seed = 4, rate = 0.5)
  a <- gp_fit(s$x, fit_nugget = TRUE, seed = 1)
  b <- gp_fit(s$x, fit_nugget = TRUE, seed = 1, search = "exact")
  expect_true(a$fit$converged && b$fit$converged)
  expect_identical(a$fit$search, "expected")
  # Both stop when an iteration gains < 1e-7 per observed entry; EM's linear
  # rate leaves ~10 such gains (1e-6 per entry). 1e-4 per entry is 100 times
  # that and below the likelihood's sampling noise: the same maximum. Then the
  # parameters agree to well under their standard errors (~10% here).
  expect_lt(abs(logLik(a) - logLik(b)) / sum(!is.na(s$x)), 1e-4)
  expect_equal(a$kernel$lengthscale, b$kernel$lengthscale, tolerance = 0.05)
  expect_equal(a$Lambda, b$Lambda, tolerance = 0.05, ignore_attr = TRUE)
  expect_gt(as.numeric(logLik(a)), gp_loglik(s$truth, s$x))
  expect_input_error(gp_fit(s$x, search = "newton"), "search")
})

test_that("gp_fit's sampled E-step lands next to the exact fit, repeatably, and says so", {
  s <- sim_windows(n = 50, seed = 4, rate = 0.5)
  a <- gp_fit(s$x, fit_nugget = TRUE, seed = 1, e_step = "exact")
  b <- gp_fit(s$x, fit_nugget = TRUE, seed = 1, e_step = "sampled")
  expect_identical(a$fit$e_step, "exact")
  expect_identical(b$fit$e_step, "sampled")
  expect_equal(b$fit$draws, 32)
  expect_true(b$fit$converged)
  # The reported log-likelihood is the exact one at the sampled fit, which
  # sits below the maximum by its Monte Carlo gap. With p = 7 free parameters
  # (2 means, 3 entries of Lambda, lengthscale, nugget) the likelihood's own
  # sampling scale is p / 2 = 3.5; a gap under a tenth of it moves the
  # parameters by well under their standard errors (~10% here).
  expect_equal(as.numeric(logLik(b)), gp_loglik(b, s$x), tolerance = 1e-10)
  gap <- as.numeric(logLik(a)) - as.numeric(logLik(b))
  expect_gt(gap, -1e-6)
  expect_lt(gap, 0.35)
  expect_equal(b$kernel$lengthscale, a$kernel$lengthscale, tolerance = 0.05)
  expect_equal(b$Lambda, a$Lambda, tolerance = 0.05, ignore_attr = TRUE)
  # seed (or set.seed()) fixes the draws
  expect_identical(gp_fit(s$x, fit_nugget = TRUE, seed = 1, e_step = "sampled")$Lambda, b$Lambda)
  set.seed(3); c1 <- gp_fit(s$x, e_step = "sampled")
  set.seed(3); c2 <- gp_fit(s$x, e_step = "sampled")
  expect_identical(c1$Lambda, c2$Lambda)
  expect_output(print(b), "ECM \\(sampled E-step, 32 draws\\) on 50 windows")
  # "auto" keeps the exact E-step when no window misses 1,000 entries
  expect_identical(gp_fit(s$x, seed = 1)$fit$e_step, "exact")
  expect_input_error(gp_fit(s$x, e_step = "mc"), "e_step")
  expect_input_error(gp_fit(s$x, e_step = "sampled", draws = 0), "draws")
  expect_input_error(gp_fit(s$x, draws = 1e5), "draws")
})

test_that("gp_fit's early stopping holds out entries, returns the best iteration and says so", {
  s <- sim_windows(n = 50, seed = 4, rate = 0.5)
  observed <- sum(!is.na(s$x))
  a <- gp_fit(s$x, fit_nugget = TRUE, seed = 1, validation = 0.1)
  f <- a$fit
  expect_true(f$converged)
  # about 10% of the observed entries held out (binomial, 4 sd), the rest fitted
  expect_equal(f$n_observed + f$n_validation, observed)
  expect_lt(abs(f$n_validation - 0.1 * observed), 4 * sqrt(observed * 0.1 * 0.9))
  expect_length(f$validation_trace, length(f$objective_trace))
  expect_true(f$best_iteration >= 0 && f$best_iteration <= f$iterations)
  expect_equal(f$validation_trace[f$best_iteration + 1], min(f$validation_trace))
  if (f$stopped_early) expect_equal(f$iterations - f$best_iteration, 3)
  expect_lt(f$validation_trace[f$best_iteration + 1], f$validation_trace[1])
  expect_output(print(a), "early stopping on [0-9]+ held-out entries")
  # seed fixes the held-out entries; validation = 0 is the maximum-likelihood fit
  expect_identical(gp_fit(s$x, fit_nugget = TRUE, seed = 1, validation = 0.1)$Lambda, a$Lambda)
  ml <- gp_fit(s$x, fit_nugget = TRUE, seed = 1)
  expect_equal(ml$fit$n_observed, observed)
  expect_length(ml$fit$validation_trace, 0)
  # 7 parameters from 800 observed entries: the likelihood is well
  # determined, nothing to overfit, and the early-stopped fit lands next to the
  # maximum-likelihood one (within 10%, about a standard error here; the 10%
  # held out alone moves them by about a third of one).
  expect_equal(a$kernel$lengthscale, ml$kernel$lengthscale, tolerance = 0.1)
  expect_equal(a$Lambda, ml$Lambda, tolerance = 0.1, ignore_attr = TRUE)
  expect_input_error(gp_fit(s$x, validation = 0.6), "validation")
  expect_input_error(gp_fit(s$x, validation = -0.1), "validation")
  expect_input_error(gp_fit(s$x, validation = 0.1, patience = 0), "patience")
})

test_that("gp_fit uses a repeatable random subset of n_windows windows", {
  s <- sim_windows(n = 30)
  a <- gp_fit(s$x, n_windows = 10, seed = 5)
  b <- gp_fit(s$x, n_windows = 10, seed = 5)
  expect_length(a$fit$windows, 10)
  expect_identical(a$fit$windows, b$fit$windows)
  # the print says the windows are a subset (30 given)
  expect_output(print(a), "on 10 of 30 windows \\(chosen at random: n_windows\\)")
  expect_identical(a$Lambda, b$Lambda)
  set.seed(9); c1 <- gp_fit(s$x, n_windows = 10)
  set.seed(9); c2 <- gp_fit(s$x, n_windows = 10)
  expect_identical(c1$fit$windows, c2$fit$windows)
})

test_that("gp_fit with a fixed lengthscale, a fitted nugget and a ridge", {
  s <- sim_windows(n = 40)
  fixed <- gp_fit(s$x, lengthscale = 2, fit_lengthscale = FALSE)
  expect_equal(fixed$kernel$lengthscale, 2)
  expect_equal(attr(logLik(fixed), "df"), 2 + 3)
  nug <- gp_fit(s$x, fit_nugget = TRUE)
  expect_gte(nug$nugget, 1e-6)
  expect_lte(nug$nugget, 1)
  # a tied copy of a variable: the ridge keeps Lambda invertible
  x3 <- array(c(s$x, s$x[, , 1]), c(dim(s$x)[1:2], 3))
  x3[, , 3] <- x3[, , 1]
  r <- gp_fit(x3, ridge = 1e-3, lengthscale = 3, fit_lengthscale = FALSE)
  expect_gt(min(eigen(r$Lambda, only.values = TRUE)$values), 0)
  expect_gt(cov2cor(r$Lambda)[1, 3], 0.99)
})

test_that("gp_fit warns when Lambda comes out singular, and suggests ridge", {
  s <- sim_windows(n = 40, rate = 0)
  tied <- s$x
  tied[, , 2] <- tied[, , 1]  # exactly collinear variables
  cnd <- expect_warning(f <- gp_fit(tied, seed = 1), class = "ditimpute_warning_singular")
  expect_match(conditionMessage(cnd), "ridge", fixed = TRUE)
  expect_s3_class(cnd, "ditimpute_warning")
  ev <- eigen(f$Lambda, symmetric = TRUE, only.values = TRUE)$values
  expect_lt(min(ev), 1e-8 * max(ev))
  # A ridge alone: the lengthscale runs to its upper bound and Lambda grows
  # past the ridge, which is said too; with a nugget bounded away from 0 it fits.
  cnd <- expect_warning(gp_fit(tied, seed = 1, ridge = 1e-3), class = "ditimpute_warning_singular")
  expect_match(conditionMessage(cnd), "fit_nugget", fixed = TRUE)
  expect_no_warning(gp_fit(tied, ridge = 1e-3, fit_nugget = TRUE, nugget_bounds = c(0.01, 1)),
                    class = "ditimpute_warning_singular")
  expect_no_warning(gp_fit(tied, ridge = 1e-3, lengthscale = 3, fit_lengthscale = FALSE),
                    class = "ditimpute_warning_singular")
  expect_no_warning(gp_fit(s$x, seed = 1), class = "ditimpute_warning_singular")
  # Entries missing in tied variables: the core cannot factorise, and the
  # error says what to do.
  gappy <- sim_windows(n = 40)$x
  gappy[, , 2] <- gappy[, , 1]
  cnd <- expect_error(gp_fit(gappy, seed = 1), class = "ditimpute_error_numeric")
  expect_match(conditionMessage(cnd), "ridge = 1e-3", fixed = TRUE)
})

test_that("gp_fit's shrinkage pulls Lambda's correlations towards zero and says so", {
  s <- sim_windows(n = 40, rate = 0)
  ml <- gp_fit(s$x, lengthscale = 3, fit_lengthscale = FALSE)
  sh <- gp_fit(s$x, lengthscale = 3, fit_lengthscale = FALSE, shrinkage = 0.5)
  # Complete windows, Gamma fixed: Lambda is half the likelihood's plus half
  # the observed variances (kernel variance 1, no nugget), so the covariance
  # halves exactly and the variances move only by the gap between the two.
  expect_equal(sh$Lambda[1, 2], 0.5 * ml$Lambda[1, 2], tolerance = 1e-10)
  obs_var <- apply(s$x, 3, function(v) mean((v - mean(v))^2))
  expect_equal(diag(sh$Lambda), 0.5 * diag(ml$Lambda) + 0.5 * obs_var, tolerance = 1e-10, ignore_attr = TRUE)
  expect_equal(sh$fit$shrinkage, 0.5)
  expect_lt(sh$fit$objective, sh$fit$loglik)
  expect_lt(sh$fit$loglik, ml$fit$loglik)
  expect_output(print(sh), "shrinkage 0.5")
  expect_input_error(gp_fit(s$x, shrinkage = 1), "shrinkage")
  expect_input_error(gp_fit(s$x, shrinkage = -0.1), "shrinkage")
  expect_input_error(gp_fit(s$x, shrinkage = NA), "shrinkage")
})

test_that("gp_fit rejects bad input naming the argument", {
  s <- sim_windows(n = 10)
  expect_input_error(gp_fit(s$x[1, , ]), "x")
  expect_input_error(gp_fit(s$x, kernel = "cosine"), "kernel")
  expect_input_error(gp_fit(s$x, lengthscale = 0.01), "lengthscale")
  expect_input_error(gp_fit(s$x, lower = 5, upper = 2, lengthscale = 3), "upper")
  expect_input_error(gp_fit(s$x, ridge = -1), "ridge")
  expect_input_error(gp_fit(s$x, n_windows = 0), "n_windows")
  empty <- s$x
  empty[, , 2] <- NA
  expect_input_error(gp_fit(empty), "x")
  expect_input_error(gp_loglik(s$truth, s$x[, 1:5, ]), "x")
})

test_that("gp_fit(method = \"lbfgs\") reaches a stationary point, reports it and matches the EM fit", {
  s <- sim_windows(n = 50, seed = 4, rate = 0.5)
  a <- gp_fit(s$x, fit_nugget = TRUE, seed = 1, method = "lbfgs", gradient_tol = 1e-3)
  b <- gp_fit(s$x, fit_nugget = TRUE, seed = 1, tol = 1e-10, max_iter = 2000)
  expect_identical(a$fit$method, "lbfgs")
  expect_true(a$fit$converged)
  expect_lt(a$fit$gradient_norm, 1e-3)
  expect_equal(length(a$fit$gradient_trace), a$fit$iterations + 1)
  expect_gte(a$fit$evaluations, a$fit$iterations + 1)
  expect_true(all(diff(a$fit$objective_trace) > 0))
  # the norm is the one recomputed from the exact gradient at the returned parameters
  g <- ditimpute:::gp_fit_gradient(a, s$x)
  expect_lt(g$gradient_norm, 1e-3)
  expect_equal(g$loglik, a$fit$loglik, tolerance = 1e-10)
  # the EM fit with a tight tol reaches the same maximum (its gradient there is
  # larger: EM's last gains are tiny while it is still away from it)
  expect_gte(a$fit$loglik, b$fit$loglik - 1e-3)
  expect_equal(a$kernel$lengthscale, b$kernel$lengthscale, tolerance = 1e-2)
  expect_equal(a$Lambda, b$Lambda, tolerance = 1e-2)
  expect_equal(as.numeric(logLik(a)), gp_loglik(a, s$x), tolerance = 1e-10)
  expect_output(print(a), "fitted by L-BFGS \\(gradient norm [0-9.e-]+, [0-9]+ evaluations\\) on 50 windows")
  expect_output(print(a), "converged")
  # too few iterations: not converged, and a warning that says why
  expect_warning(c1 <- gp_fit(s$x, fit_nugget = TRUE, seed = 1, method = "lbfgs", max_iter = 1), "gradient norm")
  expect_false(c1$fit$converged)
  expect_gt(c1$fit$gradient_norm, 0.1)
  expect_output(print(c1), "NOT converged")
})

test_that("gp_fit(method = \"lbfgs\") rejects early stopping and bad settings", {
  s <- sim_windows(n = 10)
  expect_error(gp_fit(s$x, method = "lbfgs", validation = 0.1), class = "ditimpute_error_input")
  expect_error(gp_fit(s$x, method = "lbfgs", validation = 0.1), "validation")
  expect_error(gp_fit(s$x, method = "newton"), class = "ditimpute_error_input")
  expect_error(gp_fit(s$x, method = "lbfgs", gradient_tol = 0), class = "ditimpute_error_input")
})

test_that("a fitted nugget that stops at the upper end of its bounds is a warning and shown in print()", {
  # Half the variance is white noise (nugget 1: share 1 / (1 + 1)); searched
  # only up to 0.1, the fit stops there.
  spec <- gp_spec(24, d = 2, kernel = gp_kernel("matern32", lengthscale = 6), nugget = 1)
  x <- gp_simulate(spec, 40, seed = 1)
  expect_warning(fit <- gp_fit(x, kernel = "matern32", fit_nugget = TRUE, nugget_bounds = c(1e-6, 0.1), seed = 1),
                 "upper end of `nugget_bounds`")
  expect_true(fit$fit$nugget_at_bound)
  expect_output(print(fit), "stopped at the upper end of nugget_bounds, 0.1")
  expect_no_warning(wide <- gp_fit(x, kernel = "matern32", fit_nugget = TRUE, nugget_bounds = c(1e-6, 10), seed = 1))
  expect_false(wide$fit$nugget_at_bound)
  expect_gt(as.numeric(logLik(wide)), as.numeric(logLik(fit)))
})

test_that("gp_fit() is the same fit whatever the data's level (a level of 1e7 with sd 1)", {
  # a user review: a level of 1e7 lost Lambda's correlation, 1e5 gave a false
  # "`Lambda`: is not symmetric" error, 1e8 "variable 1 has no spread"
  spec <- gp_spec(16, d = 2, kernel = gp_kernel("matern32", lengthscale = 4), Lambda = matrix(c(1, .6, .6, 1), 2))
  x <- gp_simulate(spec, 30, seed = 1)
  x[, 5:7, 1] <- NA
  a <- gp_fit(x, max_iter = 30, seed = 1)
  for (shift in c(1e5, 1e7, 1e9)) {
    b <- gp_fit(x + shift, max_iter = 30, seed = 1)
    expect_equal(b$kernel$lengthscale, a$kernel$lengthscale, tolerance = 1e-6)
    expect_equal(unname(b$Lambda), unname(a$Lambda), tolerance = 1e-6)
    expect_equal(as.numeric(b$mean[1, ]) - shift, as.numeric(a$mean[1, ]), tolerance = 1e-6 * shift)
  }
  expect_gt(a$Lambda[1, 2] / sqrt(a$Lambda[1, 1] * a$Lambda[2, 2]), 0.3)
})

test_that("summary() of a gp_fit() result shows each variable's sd and the correlations; nobs() its observed entries", {
  # a user review: summary() printed R's list structure, print() showed Lambda as "6 x 6, kappa ..." only
  spec <- gp_spec(16, d = 2, kernel = gp_kernel("matern32", lengthscale = 4), Lambda = matrix(c(4, 1.2, 1.2, 1), 2))
  x <- gp_simulate(spec, 20, seed = 2)
  dimnames(x)[[3]] <- c("a", "b")
  x[, 3:4, 2] <- NA
  f <- gp_fit(x, max_iter = 30, seed = 1)
  s <- summary(f)
  expect_s3_class(s, "summary.ditimpute_gp_fit")
  expect_equal(s$variables$sd, sqrt(unname(diag(f$Lambda))))
  expect_equal(s$correlation[1, 2], f$Lambda[1, 2] / sqrt(f$Lambda[1, 1] * f$Lambda[2, 2]))
  expect_identical(nobs(f), as.integer(sum(!is.na(x))))
  expect_identical(s$nobs, nobs(f))
  expect_equal(s$bic, BIC(f))
  out <- capture.output(print(s))
  expect_true(any(grepl("^Per variable", out)))
  expect_true(any(grepl("^ +a +[-0-9.e]+ +[0-9.]+$", out)))
  expect_true(any(grepl("Correlations between variables", out)))
  row_a <- grep("^a +1", out, value = TRUE)
  expect_length(row_a, 1L)
  expect_equal(as.numeric(strsplit(trimws(row_a), " +")[[1]][3]), round(s$correlation[1, 2], 3))
  expect_error(summary(f, foo = 1), class = "ditimpute_error_input")
})

test_that("a smooth kernel without a nugget: a symmetric Lambda however ill-conditioned Gamma is, and an error naming the nugget", {
  # A review: gp_fit(kernel = "rbf") ended in "`Lambda`: is not symmetric." The
  # fit's Lambda was symmetrised with an Eigen expression that read entries it
  # had already overwritten (aliasing), which left the rounding of an
  # ill-conditioned Gamma^-1 in one triangle.
  s <- sim_windows(n = 60, H = 24, seed = 1)
  fit <- suppressWarnings(gp_fit(s$x, kernel = "rbf", lengthscale = 3, fit_lengthscale = FALSE))
  expect_s3_class(fit, "ditimpute_gp_fit")
  expect_true(isSymmetric(unname(fit$Lambda), tol = 0))
  # the default start is numerically singular without a nugget: the error names
  # the nugget (it named `lengthscale`, which the call had not given)
  cnd <- expect_input_error(gp_fit(s$x, kernel = "rbf"), "nugget")
  expect_match(conditionMessage(cnd), "starting lengthscale 6", fixed = TRUE)
  expect_s3_class(gp_fit(s$x, kernel = "rbf", fit_nugget = TRUE), "ditimpute_gp_fit")
})

test_that("gp_fit() takes gp_kernel()'s alias 'exponential' and refuses a nugget start outside its bounds", {
  x <- gp_simulate(gp_spec(16, 1, kernel = gp_kernel("laplace", lengthscale = 4)), 40, seed = 1)
  a <- gp_fit(x, kernel = "exponential", lengthscale = 4, fit_lengthscale = FALSE)
  b <- gp_fit(x, kernel = "laplace", lengthscale = 4, fit_lengthscale = FALSE)
  expect_equal(a$Lambda, b$Lambda)
  # the start 5 was moved to the bound 1 without a word
  cnd <- expect_input_error(gp_fit(x, nugget = 5, fit_nugget = TRUE, nugget_bounds = c(0.1, 1)), "nugget")
  expect_match(conditionMessage(cnd), "the start 5 lies outside nugget_bounds [0.1, 1]", fixed = TRUE)
})
