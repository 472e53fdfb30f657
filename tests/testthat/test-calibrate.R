# calibrate(): split-conformal regions and intervals per group, for any imputer.

cal_spec <- function(lengthscale = 10) gp_spec(24, d = 2, kernel = gp_kernel("laplace", lengthscale = lengthscale))

test_that("calibrating a wrong GP restores the level per pattern, raw coverage beside it", {
  truth_spec <- cal_spec(10)
  wrong <- gp_spec(24, d = 2, kernel = gp_kernel("laplace", lengthscale = 10), Lambda = diag(0.25, 2))
  pats <- list(pattern_tail(24, 8), pattern_random(24, 4, seed = 1))
  # The wrong model's conditional sd is half the truth's: its 90% regions cover
  # far below 90%.
  cal <- calibrate(wrong, gp_simulate(truth_spec, 150, seed = 1), missing = pats, level = 0.9, seed = 2,
                   threads = 1)
  expect_s3_class(cal, "ditimpute_calibration")
  expect_identical(cal$grouping$type, "pattern")
  expect_equal(nrow(cal$factors), 3)  # two patterns and the pooled row
  expect_true(all(cal$factors$region > 1.5 & cal$factors$interval > 0))
  d <- cal$diagnostics
  expect_true(all(d$region_raw < 0.6))
  # the last row is the one pooled factor on every case, named so (it read
  # "all", and was taken for the grouped calibration's overall coverage)
  expect_identical(d$group, c(cal$factors$group[1:2], "pooled"))
  expect_output(print(cal), "\"pooled\": every case with the one pooled factor")
  # Held-out test data: 200 sequences per pattern, fresh seeds.
  test <- gp_simulate(truth_spec, 200, seed = 3)
  for (k in 1:2) {
    x <- test
    x[array(rep(resolve_missing(pats[[k]], 24, 2), each = 200), dim(test))] <- NA
    raw <- coverage(impute(wrong, x, level = 0.9, seed = 4, threads = 1), truth = test)
    calib <- coverage(impute(cal, x, seed = 4, threads = 1), truth = test)
    # 200 Bernoulli(0.9): sd 2.1%; conformal validity gives >= 90% on average
    # and at most 90% + 1/151 here: 4 sd either side.
    expect_lt(mean(raw$coverage), 0.7)
    expect_gt(mean(calib$coverage), 0.9 - 0.085)
    expect_lt(mean(calib$coverage), 0.9 + 0.085)
    expect_gt(mean(calib$interval_coverage), 0.85)
  }
  expect_output(print(cal), "region_calibrated")
  expect_s3_class(plot(cal), "ggplot")
  expect_output(print(summary(cal)), "Factors")
  # print(): the calibration helped here, so no note; the brackets it announces are there
  out <- paste(capture.output(print(cal)), collapse = "\n")
  expect_match(out, "Clopper-Pearson intervals in brackets")
  expect_no_match(out, "Note: cross-fitted")
  # a cross-fit that moved coverage away from the level, and no interval to
  # bracket (a review's 7 windows): said, and no brackets announced
  worse <- cal
  k <- nrow(worse$diagnostics)
  worse$diagnostics$interval_raw[k] <- 0.861
  worse$diagnostics$interval_cal[k] <- 0.833
  worse$diagnostics[c("region_raw_lower", "region_raw_upper", "region_cal_lower", "region_cal_upper")] <- NA
  out <- paste(capture.output(print(worse)), collapse = "\n")
  expect_match(out, "Note: cross-fitted, the calibrated intervals cover 83.3% against 86.1% raw")
  expect_no_match(out, "brackets")
})

test_that("calibrate groups strategy masks by gap length and works with windows and a truth", {
  spec <- cal_spec()
  held <- gp_simulate(spec, 120, seed = 5)
  cal <- calibrate(spec, held, missing = mask_strategy(c("4x2", "1x8")),
                   level = 0.9, n_samples = 40, seed = 6, threads = 1)
  expect_true(cal$grouping$type %in% c("gap", "pattern"))
  # Windows with hidden entries and the truth (the real-data form).
  h <- hide_mcar(held[1:40, , ], rate = 0.2, seed = 7)
  cal2 <- calibrate(spec, h$x, truth = held[1:40, , ], level = 0.9, groups = "fraction", seed = 8, threads = 1)
  expect_identical(cal2$grouping$type, "fraction")
  imp <- impute(cal2, h$x[1:3, , ], seed = 9, threads = 1)
  expect_match(imp$method, "calibrated")
  expect_true(all(imp$upper - imp$lower >= 0, na.rm = TRUE))
})

test_that("self-calibration on the gappy data itself restores the interval level", {
  truth_spec <- cal_spec(10)
  # Conditional sd half the truth's: raw 90% intervals cover about 59%.
  wrong <- gp_spec(24, d = 2, kernel = gp_kernel("laplace", lengthscale = 10), Lambda = diag(0.25, 2))
  full <- gp_simulate(truth_spec, 200, seed = 11)
  gappy <- hide_mcar(full, rate = 0.2, seed = 12)$x
  self <- calibrate(wrong, gappy, missing = mask_strategy("mcar0.2"), level = 0.9, n_samples = 40, seed = 13,
                    threads = 1)
  expect_true(all(is.na(self$factors$region)))  # no window has every missing truth: intervals only
  expect_true(all(self$factors$interval > 0.5))
  imp <- impute(wrong, gappy, n_samples = 40, level = 0.9, seed = 14, threads = 1)
  raw <- imputation_metrics(imp, truth = full, by = "all")$interval_coverage
  cal <- imputation_metrics(apply_calibration(imp, self), truth = full, by = "all")$interval_coverage
  # ~1,900 scored entries, correlated within a sequence (effective n in the
  # hundreds: sd about 1.5 points): 0.9 +/- 0.045 is 3 sd.
  expect_lt(raw, 0.7)
  expect_gt(cal, 0.9 - 0.045)
  expect_lt(cal, 0.9 + 0.045)
  expect_input_error(calibrate(wrong, gappy), "missing")
  expect_input_error(calibrate(wrong, gappy[1:2, , ], missing = pattern_frames(24, 1), level = 0.9), "x")
})

test_that("calibration input errors name the argument", {
  spec <- cal_spec()
  held <- gp_simulate(spec, 30, seed = 1)
  pat <- pattern_tail(24, 6)
  expect_input_error(calibrate(spec, held[1, , ], missing = pat), "x")
  expect_input_error(calibrate(spec, held[, 1:10, ], missing = pat), "x")
  expect_input_error(calibrate(spec, held), "missing")
  expect_input_error(calibrate(spec, held, missing = pat, level = 1), "level")
  expect_input_error(calibrate(spec, held, missing = pat, level = 0), "level")
  # 10 cases cannot calibrate a 95% level (19 needed); the message says so.
  err <- tryCatch(calibrate(spec, held[1:10, , ], missing = pat, level = 0.95), error = identity)
  expect_s3_class(err, "ditimpute_error_input")
  expect_match(conditionMessage(err), "at least 19")
  x <- held
  x[, 20:24, ] <- NA
  expect_input_error(calibrate(spec, x, truth = array(NA_real_, dim(x))), "truth")
  expect_input_error(calibrate(spec, x, missing = pat, truth = held), "missing")
  expect_input_error(calibrate("model", held, missing = pat), "object")
  cal <- calibrate(spec, held, missing = pat, level = 0.9, seed = 1, threads = 1)
  expect_input_error(impute(cal, x, n_samples = 50), "n_samples")
  other <- cal_spec(5)
  expect_input_error(apply_calibration(impute(other, x, level = 0.9, seed = 1), cal), "calibration")
  expect_input_error(apply_calibration(impute(spec, x, level = 0.8, seed = 1), cal), "calibration")
  expect_input_error(apply_calibration(impute(cal, x, seed = 1), cal), "imputation")
})

test_that("a calibration applies only to imputations from the sampler it was fitted with", {
  # Its factors scale the spread of the draws of one sampler: applied to a
  # 2-step Euler sampler's, a DiT's calibrated 90% regions covered 14%
  # (a user review). The settings are compared; a default and the same
  # value given agree.
  spec <- cal_spec()
  held <- gp_simulate(spec, 30, seed = 1)
  pat <- pattern_tail(24, 6)
  x <- held[1:4, , ]
  x[, 19:24, ] <- NA
  cal <- calibrate(spec, held, missing = pat, level = 0.9, seed = 1, threads = 1, sampler = "unipc2")
  expect_s3_class(apply_calibration(impute(spec, x, level = 0.9, seed = 2, sampler = "unipc2"), cal),
                  "ditimpute_imputation")
  expect_s3_class(apply_calibration(impute(spec, x, level = 0.9, seed = 2, sampler = "unipc2", steps = 8), cal),
                  "ditimpute_imputation")
  cnd <- expect_input_error(apply_calibration(impute(spec, x, level = 0.9, seed = 2, sampler = "euler", steps = 2),
                                              cal), "calibration")
  expect_match(conditionMessage(cnd), "was fitted on imputations with sampler unipc2 (8 steps, tuned grid",
               fixed = TRUE)
  expect_match(conditionMessage(cnd), "this imputation used sampler euler (2 steps,", fixed = TRUE)
  expect_input_error(apply_calibration(impute(spec, x, level = 0.9, seed = 2), cal), "calibration")  # exact draws
  expect_input_error(apply_calibration(impute(spec, x, level = 0.9, seed = 2, sampler = "unipc2", steps = 4), cal),
                     "calibration")
  expect_input_error(apply_calibration(impute(spec, x, level = 0.9, seed = 2, sampler = "unipc2", region = "quantile"),
                                       cal), "calibration")
  # impute() on the calibration uses its settings
  expect_match(impute(cal, x, seed = 2)$method, "unipc2")
  # exact draws calibrated, exact draws applied
  cal0 <- calibrate(spec, held, missing = pat, level = 0.9, seed = 1, threads = 1)
  expect_s3_class(apply_calibration(impute(spec, x, level = 0.9, seed = 2), cal0), "ditimpute_imputation")
  expect_input_error(apply_calibration(impute(spec, x, level = 0.9, seed = 2, sampler = "unipc2"), cal0), "calibration")
})

test_that("coverage() at several levels gives a calibration curve", {
  spec <- cal_spec()
  truth <- gp_simulate(spec, 60, seed = 1)
  x <- truth
  x[, 17:24, ] <- NA
  imp <- impute(spec, x, level = 0.9, truth = truth, seed = 2, threads = 1)
  curve <- coverage(imp, levels = c(0.5, 0.8, 0.95))
  expect_s3_class(curve, "ditimpute_coverage_curve")
  expect_equal(curve$level, c(0.5, 0.8, 0.95))
  expect_true(all(diff(curve$interval_coverage) > 0))
  # Exact regions against exact draws: on target at every level. The regions
  # are exact, so the 60 x 500 = 30,000 draws fall inside independently with
  # probability p: SE sqrt(p (1 - p) / 30000) = 0.0029 at 0.5, 0.0017 at 0.9.
  # Bands of 4 SE either side (a correct build misses one with probability
  # 1.3e-4); regions built 0.03 low (0.468 and 0.869 in
  # tools/mutation-check.sh, 11 and 18 SE low) or high fail.
  mc <- coverage(imp, spec = spec, levels = c(0.5, 0.9), n_draws = 500, seed = 3)
  se <- sqrt(c(0.5, 0.9) * c(0.5, 0.1) / (60 * 500))
  expect_true(all(abs(mc$coverage - c(0.5, 0.9)) < 4 * se), info = paste(mc$coverage, collapse = " "))
  # Sampled imputer: rebuilt from its samples, the same samples at each level.
  smp <- impute(spec, x, level = 0.9, sampler = "ode", steps = 10, seed = 2, threads = 1)
  sc <- coverage(smp, truth = truth, levels = c(0.6, 0.9))
  expect_true(sc$coverage[2] >= sc$coverage[1])
  expect_output(print(curve), "by level")
  expect_s3_class(plot(curve), "ggplot")
  expect_input_error(coverage(imp, levels = c(0.5, 1)), "levels")
  lin <- impute_baseline(x, "linear")
  expect_input_error(coverage(lin, truth = truth, levels = 0.9), "object")
  # one sequence against exact draws: no interval over sequences (it printed
  # "[NA%, NA%]")
  one <- impute(spec, x[1, , ], level = 0.9, seed = 2, threads = 1)
  c1 <- coverage(one, spec = spec, levels = c(0.5, 0.9), n_draws = 500, seed = 3)
  expect_true(all(is.na(c1$lower)))
  out <- paste(capture.output(print(c1)), collapse = "\n")
  expect_match(out, "one sequence: none", fixed = TRUE)
  expect_false(grepl("NA%", out, fixed = TRUE))
  expect_false(grepl("sample paths", out, fixed = TRUE))  # only a series imputation's curve says so
})

test_that("an outside imputer is calibrated from its imputation of the calibration windows", {
  set.seed(11)
  n_cal <- 400
  n_test <- 400
  truth <- array(rnorm((n_cal + n_test) * 6 * 2), c(n_cal + n_test, 6, 2))
  held <- hide_mcar(truth, rate = 0.3, seed = 12)
  # Only windows with something hidden and something observed can be imputed
  # (0.7^12 = 1.4% of them have nothing hidden).
  ok <- apply(is.na(held$x), 1, function(m) any(m) && !all(m))
  cal_rows <- which(ok)[which(ok) <= n_cal]
  test_rows <- which(ok)[which(ok) > n_cal]
  # A toy outside imputer: 40 draws with half the right spread (under-covers).
  toy <- function(x) {
    lapply(1:40, function(k) { f <- x; f[is.na(f)] <- rnorm(sum(is.na(f)), sd = 0.5); f })
  }
  cal_imp <- imputation_from_completions(held$x[cal_rows, , ], toy(held$x[cal_rows, , ]), method = "toy", level = 0.8)
  cal <- calibrate(cal_imp, truth = truth[cal_rows, , ], groups = "none")
  expect_null(cal$object)
  expect_gt(cal$factors$interval[1], 0)
  test_imp <- imputation_from_completions(held$x[test_rows, , ], toy(held$x[test_rows, , ]), method = "toy",
                                          level = 0.8)
  out <- apply_calibration(test_imp, cal)
  raw <- imputation_metrics(test_imp, truth = truth[test_rows, , ], by = "all")$interval_coverage
  fixed <- imputation_metrics(out, truth = truth[test_rows, , ], by = "all")$interval_coverage
  # Raw 80% intervals of half the spread hold about half the truths (0.506
  # with this seed; P(|Z| < 0.64) = 0.48 for the exact quantiles).
  expect_lt(raw, 0.7)
  # Truths and toy draws are independent across entries, so the entries'
  # scores are exchangeable: given the N = 1,459 calibration entries, the
  # coverage of a new entry is Beta(k, N + 1 - k) with k = ceiling(0.8 (N + 1))
  # (sd sqrt(0.8 * 0.2 / N) = 0.011), and the M = 1,421 test entries add a
  # binomial sd sqrt(0.8 * 0.2 / M) = 0.011: SE 0.015. A band of 4 SE either
  # side of 0.8; a calibration to the wrong level (0.77 or 0.83) sits 2 SE off
  # and is not what this checks: it checks the correction reaches 0.8, from 0.48.
  n_cal_entries <- sum(is.na(held$x[cal_rows, , ]))
  n_test_entries <- sum(is.na(held$x[test_rows, , ]))
  se <- sqrt(0.8 * 0.2 * (1 / n_cal_entries + 1 / n_test_entries))
  expect_lt(abs(fixed - 0.8), 4 * se)
  other <- imputation_from_completions(held$x[test_rows, , ], toy(held$x[test_rows, , ]), method = "other", level = 0.8)
  expect_input_error(apply_calibration(other, cal), "calibration")
  expect_input_error(impute(cal, held$x[test_rows, , ]), "object")
  expect_input_error(calibrate(cal_imp), "truth")
})

test_that("arguments a branch of calibrate() cannot use are errors, not silently dropped", {
  spec <- cal_spec(10)
  held <- gp_simulate(spec, 60, seed = 1)
  x <- held
  x[, 19:24, ] <- NA
  imp <- impute(spec, x, n_samples = 50, level = 0.9, seed = 1, threads = 1)
  # An imputation is scored at its own level and samples.
  expect_input_error(calibrate(imp, truth = held, level = 0.5), "level")
  expect_input_error(calibrate(imp, truth = held, n_samples = 500), "n_samples")
  expect_identical(calibrate(imp, truth = held, level = 0.9)$level, 0.9)
  # rounds and share are how a series hides its own values.
  expect_input_error(calibrate(spec, held, missing = pattern_tail(24, 6), rounds = 3), "rounds")
  expect_input_error(calibrate(spec, held, missing = pattern_tail(24, 6), share = 0.5), "share")
  y <- datasets::Nile
  y[40:45] <- NA
  si <- impute_series(y, n_samples = 20, seed = 1, threads = 1)
  expect_input_error(calibrate(si, n_samples = 500), "n_samples")
})

test_that("a series' self-calibration mimics its end gaps and gives them a group of their own", {
  # Lake Huron (no transform: 576-582 ft) with two inner gaps and its last 10 years missing.
  y <- as.numeric(datasets::LakeHuron)
  x <- y
  x[c(20:24, 50:53, 89:98)] <- NA
  imp <- impute_series(x, level = 0.9, n_samples = 50, seed = 1, threads = 1)
  cal <- calibrate(imp, seed = 2, threads = 1)
  expect_true("end gaps" %in% cal$factors$group)
  expect_true("end gaps" %in% cal$diagnostics$group)
  q <- setNames(cal$factors$interval, cal$factors$group)
  out <- apply_calibration(imp, cal)
  half <- function(o, i) (o$upper[i] - o$lower[i]) / 2
  # The trailing gap's half-widths move by the end group's factor, the inner
  # gaps' by their gap-length groups' (not the end group's, unless equal).
  expect_equal(half(out, 89:98), half(imp, 89:98) * (1 + q[["end gaps"]]), tolerance = 1e-8)
  inner_q <- q[setdiff(names(q), c("end gaps", "pooled"))]
  ratio <- half(out, 20:24) / half(imp, 20:24) - 1
  expect_true(all(vapply(ratio, function(r) any(abs(r - inner_q) < 1e-8), TRUE)))
  # Without end gaps, or with groups = "none", there is no end group.
  x2 <- y
  x2[c(20:24, 50:53)] <- NA
  cal2 <- calibrate(impute_series(x2, level = 0.9, n_samples = 50, seed = 1, threads = 1), seed = 2, threads = 1)
  expect_false("end gaps" %in% cal2$factors$group)
  cal3 <- calibrate(imp, groups = "none", seed = 2, threads = 1)
  expect_false("end gaps" %in% cal3$factors$group)
  # Entries in a leading or trailing run of missing values, per variable.
  m <- cbind(c(TRUE, TRUE, FALSE, TRUE, FALSE, TRUE), c(FALSE, TRUE, FALSE, FALSE, TRUE, TRUE))
  expect_equal(ditimpute:::end_runs(m), cbind(c(TRUE, TRUE, FALSE, FALSE, FALSE, TRUE), c(FALSE, FALSE, FALSE, FALSE, TRUE, TRUE)))
})

test_that("complete windows are no calibration cases: calibrate() gives what it gives without them", {
  # impute() passes a complete window through (nothing to score); it must not
  # count as a case, enter the Clopper-Pearson n, a fold of the cross-fitting
  # or a gap bin. The exact GP's regions and intervals are closed form, so
  # the 20 gappy windows score the same wherever they sit in the batch.
  spec <- gp_spec(24, d = 2, kernel = gp_kernel("matern32", lengthscale = 6))
  wrong <- gp_spec(24, d = 2, kernel = gp_kernel("matern32", lengthscale = 6), Lambda = diag(0.5, 2))
  truth <- gp_simulate(spec, 30, seed = 21)
  x <- truth
  gappy <- setdiff(seq_len(30), seq(3, 30, by = 3))  # 20 windows with gaps, 10 complete between them
  for (a in seq_along(gappy)) x[gappy[a], 3 + seq_len(2 * (a %% 5) + 1), ] <- NA
  x[gappy[c(2, 7, 11)], 20, 1] <- NA
  for (groups in c("none", "gap")) {
    run <- function(x, truth) calibrate(wrong, x = x, truth = truth, level = 0.8, n_samples = 40, seed = 1,
                                        groups = groups, threads = 1)
    with_complete <- run(x, truth)
    without <- run(x[gappy, , ], truth[gappy, , ])
    expect_identical(with_complete$n_cases, 20L, info = groups)
    expect_identical(with_complete$diagnostics, without$diagnostics, info = groups)
    expect_identical(with_complete$factors, without$factors, info = groups)
    expect_identical(with_complete$grouping, without$grouping, info = groups)
    expect_identical(capture.output(print(with_complete)), capture.output(print(without)), info = groups)
    expect_output(print(with_complete), "20 calibration cases", info = groups)
    cases <- with_complete$diagnostics$cases  # per group, then all of them
    expect_identical(c(sum(utils::head(cases, -1)), utils::tail(cases, 1)), c(20L, 20L), info = groups)
  }
  expect_gt(length(unique(with_complete$diagnostics$group)), 2)  # the gap bins were more than one
  # An outside imputation of the same windows (several completions) too.
  fills <- lapply(1:40, function(k) { f <- x; f[is.na(f)] <- stats::rnorm(sum(is.na(f))); f })
  out_imp <- imputation_from_completions(x, fills, method = "toy", level = 0.8)
  out_ref <- imputation_from_completions(x[gappy, , ], lapply(fills, function(f) f[gappy, , ]), method = "toy",
                                         level = 0.8)
  a <- calibrate(out_imp, truth = truth, groups = "none", seed = 1)
  b <- calibrate(out_ref, truth = truth[gappy, , ], groups = "none", seed = 1)
  expect_identical(a$n_cases, 20L)
  expect_identical(a$diagnostics, b$diagnostics)
  # Applied to an imputation with a complete window, the calibration leaves
  # it as it was (radius 0, no interval, no group).
  applied <- apply_calibration(out_imp, a)
  expect_identical(applied$radius[3], 0)
  expect_true(is.na(applied$calibration$group[3]))
  expect_true(all(is.na(applied$lower[3, , ])))
})
