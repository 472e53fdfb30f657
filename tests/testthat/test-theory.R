# Distribution error, distribution shift and bound factors (R/theory.R).
# Small problems (H = 24, d = 2, 8 missing values) keep this file to seconds;
# the C++ tests (cpp/tests/test_theory.cpp) check the statistics' formulas.
theory_spec <- function() gp_spec(24, d = 2, kernel = gp_kernel("laplace", lengthscale = 6))
theory_cases <- function(n = 30) {
  x <- gp_simulate(theory_spec(), n, seed = 1)
  x[, 10:13, ] <- NA
  x
}

# Mean of the paired differences statistic - null in standard errors.
excess_z <- function(de, stat) {
  dlt <- de[[stat]] - de[[paste0(stat, "_null")]]
  mean(dlt) / (sd(dlt) / sqrt(length(dlt)))
}

test_that("distribution_error of exact draws is null within Monte Carlo error", {
  spec <- theory_spec()
  imp <- impute(spec, theory_cases(), n_samples = 200, seed = 2, threads = 1)
  de <- distribution_error(imp, spec, seed = 3, threads = 1)
  expect_s3_class(de, "ditimpute_distribution_error")
  expect_equal(nrow(de), 30)
  expect_true(all(de$m == 8) && all(de$Z == 200))
  expect_equal(de$kappa_cond[1], kappa_cond(spec, 10:13))
  # a 0/1 numeric matrix is data (NA = missing); the error says how to pass a mask
  mm <- matrix(0, spec$H, spec$d)
  mm[10:13, ] <- 1
  cnd <- expect_input_error(kappa_cond(spec, mm), "missing")
  expect_match(conditionMessage(cnd), "give a 0/1 mask as logical (mask == 1)", fixed = TRUE)
  expect_equal(kappa_cond(spec, mm == 1), kappa_cond(spec, 10:13))
  # 30 sequences, fixed seeds; |z| < 4 holds with probability 1 - 6e-5 for a
  # correct implementation.
  for (s in c("w2", "mahalanobis", "energy", "kl")) expect_lt(abs(excess_z(de, s)), 4)
  # Mahalanobis^2 of the mean of 200 exact draws averages m / Z = 0.04.
  expect_equal(mean(de$mahalanobis^2), 8 / 200, tolerance = 0.3)
  s <- summary(de)
  expect_equal(nrow(s$table), 1)
  expect_output(print(de), "W2")
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  expect_silent(plot(de))
})

test_that("every sampler named without a step count draws the exact law (its default step count)", {
  spec <- theory_spec()
  x <- theory_cases()
  # Same criterion as exact draws above: the excess of W2 and of the mean's
  # Mahalanobis error over exact draws of the same size within 4 standard
  # errors. Under the former default of 12 steps for every method but
  # "unipc2", "sde" drew W2 23.7x the null's (z = 157), "euler" 6.0x (z = 71),
  # "ode" 3.6x (z = 11).
  for (m in c("unipc", "sde", "ode", "euler", "dpm2m", "dpm2m_sde")) {
    imp <- impute(spec, x, n_samples = 200, sampler = m, seed = 2, threads = 1)
    de <- distribution_error(imp, spec, seed = 3, threads = 1)
    for (s in c("w2", "mahalanobis")) expect_lt(abs(excess_z(de, s)), 4, label = paste(m, s))
  }
})

test_that("distribution_error grows with known shifts and scales", {
  spec <- theory_spec()
  imp <- impute(spec, theory_cases(), n_samples = 200, seed = 2, threads = 1)
  shifted <- imp
  shifted$samples <- lapply(imp$samples, function(s) s + 0.5)
  de <- distribution_error(shifted, spec, seed = 3, threads = 1)
  # The mean part of W2 is 0.5 * sqrt(8) = 1.41 up to sampling noise of the
  # mean (sqrt(tr Sigma / Z) ~ 0.1).
  expect_equal(mean(de$w2_mean), 0.5 * sqrt(8), tolerance = 0.1)
  expect_gt(excess_z(de, "energy"), 10)
  expect_gt(excess_z(de, "w2"), 10)
  # Scaled by 1.5 about each case's exact mean: covariance ratios ~ 2.25.
  cm <- gp_conditional(spec, theory_cases())$cond_mean
  scaled <- imp
  scaled$samples <- lapply(seq_along(imp$samples), function(i) {
    m <- cm[i, ]
    sweep(sweep(imp$samples[[i]], 2, m) * 1.5, 2, m, "+")
  })
  ds <- distribution_error(scaled, spec, seed = 3, threads = 1)
  expect_equal(mean(ds$ratio_mean), 2.25, tolerance = 0.05)
  expect_gt(mean(ds$ratio_min), 1)
  expect_gt(excess_z(ds, "energy"), 10)
})

test_that("distribution_error takes arrays of samples and checks its input", {
  spec <- theory_spec()
  x <- theory_cases(1)[1, , ]
  draws <- gp_sample_conditional(spec, x, n_samples = 100, seed = 4)
  de <- distribution_error(draws, spec, x = x, seed = 5)
  expect_equal(nrow(de), 1)
  expect_equal(de$m, 8)
  expect_input_error(distribution_error(draws, spec), "x")
  expect_input_error(distribution_error(list(), spec), "object")
  expect_input_error(distribution_error(draws, spec, x = x, n_ref = 1), "n_ref")
  det <- impute_baseline(theory_cases(3))
  expect_input_error(distribution_error(det, spec), "object")
  expect_input_error(distribution_error(draws, gp_spec(30, d = 2), x = x), "x")
})

test_that("distribution_error leaves out a complete sequence that impute() passed through", {
  # A complete window has no law to compare: its row has m = 0 and NA (not
  # NaN) statistics, as coverage() gives it NA, and the summaries are those
  # of the other sequences. Those are as in the batch where it had a gap
  # (their draws, here and in impute(), go by sequence index).
  spec <- gp_spec(24, d = 2, kernel = gp_kernel("matern32", lengthscale = 6))
  truth <- gp_simulate(spec, 3, seed = 1)
  x <- truth
  x[1, 5:9, ] <- NA
  x[3, 20:24, 1] <- NA
  gappy <- x
  gappy[2, 10:12, 2] <- NA
  imp <- impute(spec, x, n_samples = 50, seed = 2, sampler = "ode", steps = 4, threads = 1)
  ref <- impute(spec, gappy, n_samples = 50, seed = 2, sampler = "ode", steps = 4, threads = 1)
  de <- distribution_error(imp, spec, seed = 3, threads = 1)
  de_ref <- distribution_error(ref, spec, seed = 3, threads = 1)
  expect_equal(nrow(de), 3)
  expect_identical(de$m, c(10L, 0L, 5L))
  expect_identical(de$Z, c(50L, 50L, 50L))
  stat_cols <- setdiff(names(de), c("sequence", "pattern", "Z", "m"))
  vals <- unlist(de[2, stat_cols])
  expect_true(all(is.na(vals)) && !any(is.nan(vals)))
  expect_true(is.na(de$pattern[2]))
  expect_length(attr(de, "cov_ratio")[[2]], 0)
  expect_equal(de[-2, stat_cols], de_ref[-2, stat_cols], ignore_attr = TRUE)
  s <- summary(de)
  expect_identical(s$overall$sequences, 2L)
  expect_equal(s$overall$w2, mean(de_ref$w2[-2]))
  expect_equal(s$overall$energy_excess, mean(de_ref$energy[-2] - de_ref$energy_null[-2]))
  expect_identical(s$table$sequences, c(1L, 1L))
  out <- capture.output(print(de))
  expect_true(any(grepl("all: 2 sequences", out, fixed = TRUE)))
  expect_false(any(grepl("NaN", out)))
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  expect_silent(plot(de))
  # An array of samples completes one sequence: a complete one has no law.
  draws <- array(rep(truth[1, , ], each = 5), c(5, 24, 2))
  expect_input_error(distribution_error(draws, spec, x = truth[1, , ]), "x")
})

test_that("bound_factors rank the paper's patterns by Theorem 1's factor", {
  spec <- gp_spec(96, d = 8, kernel = gp_kernel("laplace", lengthscale = 128))
  b <- bound_factors(spec, paper_patterns(), n = 1e4)
  expect_s3_class(b, "ditimpute_bounds")
  expect_equal(b$pattern, c("P1", "P2", "P3", "P4"))
  expect_equal(b$kappa_cond[1], 394.91, tolerance = 1e-4)   # the documented value of P1
  expect_true(all(diff(b$theorem1) < 0))
  # The relative factor is (kappa_cond ratio)^(5/2) times the kappa_obs ratio.
  expect_equal(b$theorem1_rel[1], (b$kappa_cond[1] / b$kappa_cond[4])^2.5 * b$kappa_obs[1] / b$kappa_obs[4])
  expect_equal(b$heads, rep(4L * 96L, 4))
  expect_equal(b$lemma1_K[1], lemma1_counts(spec, paper_patterns()$P1, t = 1, eps = 0.01)$K)
  expect_output(print(b), "relative")
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  expect_silent(plot(b, error = c(P1 = 4, P2 = 3, P3 = 2, P4 = 1)))
  expect_input_error(plot(b, error = 1:2), "error")
  expect_input_error(bound_factors(spec, paper_patterns(), n = -1), "n")
})

test_that("distribution_shift is reproducible, centred at 1 on the training law, and ratios are checked", {
  skip_if_no_torch()
  spec <- gp_spec(24, d = 2, kernel = gp_kernel("laplace", lengthscale = 8))
  fit <- dit_fit(gp_simulate(spec, 120, seed = 1), dit_config(24, 2, width = 32, depth = 1, heads = 2),
                 strategy = mask_strategy(c("6x1", "2x3")), steps = 30, batch_size = 16, seed = 1, threads = 1,
                 progress = FALSE)
  x <- gp_simulate(spec, 40, seed = 2)
  x[, 19:24, ] <- NA
  a <- distribution_shift(fit, x, spec, n_reference = 40, K = 4, seed = 3, threads = 1)
  expect_s3_class(a, "ditimpute_shift")
  expect_equal(nrow(a$sequences), 40)
  # Common random numbers: the same seed gives the same draws.
  expect_identical(distribution_shift(fit, x, spec, n_reference = 40, K = 4, seed = 3, threads = 1)$sequences,
                   a$sequences)
  # The loss is the excess plus an irreducible, positive part.
  expect_true(mean(a$sequences$loss) > mean(a$sequences$excess))
  expect_true(all(a$sequences$excess >= 0))
  # Reference cases as test cases: the coefficient estimates 1 (different
  # draws for numerator and denominator, so 1 lies inside the bootstrap CI).
  ref <- gp_simulate(spec, 60, seed = 5)
  ref[draw_masks(fit$strategy, 60, 24, 2, seed = 6)] <- NA
  self <- distribution_shift(fit, ref, spec, reference = ref, K = 4, seed = 7, threads = 1)
  s <- self$summary[self$summary$type == "loss", ]
  expect_true(s$lower < 1 && s$upper > 1)
  # The ratio of means is DS(a) / DS(b): swapping a and b inverts it exactly
  # (a and b2 are the same model's coefficient with other draws, so neither
  # ratio is 1 by construction; a numerator and denominator mixed up fails).
  b2 <- distribution_shift(fit, x, spec, n_reference = 40, K = 4, seed = 4, threads = 1)
  r <- shift_ratio(a, b2, seed = 1)
  r_back <- shift_ratio(b2, a, seed = 1)
  expect_false(isTRUE(all.equal(r$estimate[2], 1)))
  expect_equal(r$estimate[2] * r_back$estimate[2], 1, tolerance = 1e-12)
  expect_output(print(r), "mean of ratios")
  expect_output(print(a), "DS \\(loss\\)")
  expect_input_error(shift_ratio(a, self), "b")
  # A complete test sequence (which impute() passes through) has no loss:
  # NA in its row, out of the means and the bootstrap; the others' values
  # are as where it had its gap (draws go by sequence index).
  xc <- x
  xc[5, , ] <- gp_simulate(spec, 1, seed = 8)[1, , ]
  xg <- x
  xg[5, , ] <- xc[5, , ]
  xg[5, 19:24, ] <- NA
  ac <- distribution_shift(fit, xc, spec, n_reference = 40, K = 4, seed = 3, threads = 1)
  ag <- distribution_shift(fit, xg, spec, n_reference = 40, K = 4, seed = 3, threads = 1)
  expect_true(all(is.na(unlist(ac$sequences[5, -1]))) && !any(is.nan(unlist(ac$sequences[5, -1]))))
  expect_equal(ac$sequences[-5, ], ag$sequences[-5, ], tolerance = 1e-5)
  expect_true(all(is.finite(ac$summary$estimate)))
  expect_output(print(ac), "39 test sequences")
  expect_true(all(is.finite(shift_ratio(ac, ac, seed = 1)$estimate)))
  expect_input_error(distribution_shift(fit, gp_simulate(spec, 3, seed = 9), spec, n_reference = 40, K = 4), "x")
  expect_input_error(distribution_shift(fit, x, gp_spec(30, d = 2)), "spec")
  expect_input_error(distribution_shift(fit, x, spec, K = 0), "K")
  # A saved model keeps its training strategy: loaded, it gives the same draws.
  f <- tempfile(fileext = ".dit")
  dit_save(fit, f)
  expect_identical(distribution_shift(dit_load(f), x, spec, n_reference = 40, K = 4, seed = 3, threads = 1)$sequences,
                   a$sequences)
  # A model that records none (a file from a build before the record was saved) must be given one.
  bare <- dit_load(f)
  bare$strategy <- NULL
  expect_input_error(distribution_shift(bare, x, spec), "strategy")
})

test_that("distribution_error() of one sequence prints no standard error (a user review saw '+/- NA')", {
  spec <- theory_spec()
  imp <- impute(spec, theory_cases(1), n_samples = 50, seed = 2, threads = 1)
  out <- capture.output(print(distribution_error(imp, spec, seed = 3, threads = 1)))
  expect_false(any(grepl("NA", out)))
  expect_match(out, "W2 [0-9.e-]+ \\(null [0-9.e-]+, excess -?[0-9.e-]+\\)$", all = FALSE)
  expect_match(out, "no standard error from one sequence", all = FALSE)
  two <- capture.output(print(distribution_error(impute(spec, theory_cases(2), n_samples = 50, seed = 2, threads = 1),
                                                 spec, seed = 3, threads = 1)))
  expect_match(two, "excess -?[0-9.e-]+ \\+/- [0-9.e-]+\\)$", all = FALSE)
})

test_that("column subsets of the result tables print: a plain data frame without a column, the class with them all", {
  sp <- gp_spec(24, 2, kernel = gp_kernel("laplace", lengthscale = 10))
  xs <- gp_simulate(sp, 6, seed = 1)
  xs[, 10:13, ] <- NA
  cv <- coverage(impute(sp, xs, n_samples = 50, seed = 2), spec = sp, n_draws = 200, seed = 3)
  # subset() names the columns: the attributes were dropped, the class kept, and print() printed nothing
  low <- subset(cv, coverage <= stats::median(cv$coverage))
  expect_s3_class(low, "ditimpute_coverage")
  expect_identical(attr(low, "level"), attr(cv, "level"))
  expect_output(print(low), sprintf("95%% regions .* over %d sequences", nrow(low)))
  two <- cv[, c("sequence", "coverage")]
  expect_identical(class(two), "data.frame")
  expect_null(attr(two, "level"))
  expect_output(print(two), "sequence coverage")
  b <- bound_factors(gp_spec(96, 8, kernel = gp_kernel("laplace", lengthscale = 128)), paper_patterns())
  expect_identical(class(b[, c("pattern", "kappa_cond")]), "data.frame")   # stopped in sprintf()
  expect_output(print(b[, c("pattern", "kappa_cond")]), "P4")
  expect_output(print(b[b$kappa_cond > 5, names(b)]), "at n = 10000")
  de <- distribution_error(impute(sp, xs, n_samples = 60, sampler = "euler", steps = 10, seed = 2, threads = 1), sp,
                           seed = 3, threads = 1)
  expect_identical(class(de[, c("sequence", "w2", "w2_null")]), "data.frame")  # printed "W2 NaN" with warnings
  expect_no_warning(capture.output(print(de[, c("sequence", "w2", "w2_null")])))
  expect_identical(attr(de[2:3, names(de)], "method"), attr(de, "method"))
})
