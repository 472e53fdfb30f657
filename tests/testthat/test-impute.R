spec96 <- function() gp_spec(96, d = 8, kernel = gp_kernel("laplace", lengthscale = 128))

test_that("the oracle imputer's 95% regions cover 95% of exact draws on P1-P4, no more, no less", {
  # One sequence per pattern; 20,000 exact conditional draws test its region.
  # The region is exact (closed-form radius; the samples do not enter it), so
  # each draw lies inside independently with probability 0.95: SE
  # sqrt(0.95 * 0.05 / 20000) = 0.0015, and 4 SE either side is +/- 0.0062
  # (a correct build misses one of the four with probability 2.5e-4; this
  # seed gives 0.9485, 0.9479, 0.9482, 0.9467, low together because the four
  # patterns share the draws' seed). A region built at 0.92 or 0.98 fails.
  spec <- spec96()
  x <- gp_simulate(spec, 1, seed = 11)[1, , ]
  se <- sqrt(0.95 * 0.05 / 20000)
  for (p in paper_patterns()) {
    xm <- x
    xm[p$frames, ] <- NA
    imp <- impute(spec, xm, n_samples = 2000, seed = 12)
    cv <- coverage(imp, spec = spec, n_draws = 20000, seed = 13)
    expect_lt(abs(cv$coverage - 0.95), 4 * se)
  }
})

test_that("impute returns the documented pieces for a matrix and an array", {
  spec <- gp_spec(30, d = 3, kernel = gp_kernel("matern32", lengthscale = 6))
  truth <- gp_simulate(spec, 4, seed = 1)
  x <- truth
  x[1, 10:14, ] <- NA
  x[2, 20:30, ] <- NA
  x[3, , 2] <- NA                    # entry-level
  x[4, c(3, 9, 27), c(1, 3)] <- NA
  imp <- impute(spec, x, n_samples = 50, level = 0.9, truth = truth, seed = 2)
  expect_s3_class(imp, "ditimpute_imputation")
  expect_equal(dim(imp$point), dim(x))
  expect_equal(imp$point[!is.na(x)], x[!is.na(x)])
  expect_true(all(is.finite(imp$point)))
  expect_true(all(is.na(imp$lower[!is.na(x)])))
  expect_true(all(imp$lower[is.na(x)] <= imp$point[is.na(x)] & imp$point[is.na(x)] <= imp$upper[is.na(x)]))
  expect_length(imp$radius, 4)
  expect_equal(vapply(imp$samples, ncol, 0), c(15, 33, 30, 6))
  # The exact imputer's point is the conditional mean and its radius the exact
  # 90% quantile of ||X - mu||: 90% of 20,000 exact draws (sd 0.2%) lie inside.
  mu <- gp_conditional(spec, x[2, , ])$mean
  expect_equal(imp$point[2, , ], mu, tolerance = 1e-10)
  draws <- gp_sample_conditional(spec, x[2, , ], n_samples = 20000, seed = 5)
  d2 <- apply(draws, 1, function(s) sqrt(sum((s - mu)^2)))
  expect_equal(mean(d2 <= imp$radius[2]), 0.9, tolerance = 0.01)
  # A sampled imputer with region = "quantile" gives Algorithm 1 as in the
  # paper: sample mean, the 90% type-7 quantile of the distances to it.
  q <- impute(spec, x, n_samples = 50, level = 0.9, sampler = "ode", steps = 10, region = "quantile", seed = 2)
  s <- q$samples[[2]]
  centre <- colMeans(s)
  expect_equal(missing_values_of(q$point[2, , ], is.na(x[2, , ])), centre, tolerance = 1e-12)
  expect_equal(q$radius[2], unname(quantile(sqrt(rowSums(sweep(s, 2, centre)^2)), 0.9)), tolerance = 1e-12)
  lohi <- apply(s, 2, quantile, probs = c(0.05, 0.95), type = 7)
  expect_equal(missing_values_of(q$lower[2, , ], is.na(x[2, , ])), unname(lohi[1, ]), tolerance = 1e-12)
  # The default finite-sample construction: centre from the first 25 samples,
  # radius the ceiling(26 * 0.9) = 24th smallest distance of the other 25,
  # intervals the order statistics a = floor(51 * 0.05) = 2 and 49.
  f <- impute(spec, x, n_samples = 50, level = 0.9, sampler = "ode", steps = 10, seed = 2)
  expect_equal(f$samples[[2]], s)
  c1 <- colMeans(s[1:25, ])
  expect_equal(missing_values_of(f$point[2, , ], is.na(x[2, , ])), centre, tolerance = 1e-12)
  expect_equal(missing_values_of(f$centre[2, , ], is.na(x[2, , ])), c1, tolerance = 1e-12)
  expect_equal(f$radius[2], sort(sqrt(rowSums(sweep(s[26:50, ], 2, c1)^2)))[24], tolerance = 1e-12)
  expect_equal(missing_values_of(f$upper[2, , ], is.na(x[2, , ])), apply(s, 2, function(v) sort(v)[49]))
  expect_error(impute(spec, x, n_samples = 20, sampler = "ode", steps = 5), class = "ditimpute_error_input")
  one <- impute(spec, x[2, , ], n_samples = 50, seed = 2)
  expect_true(is.matrix(one$point))
  expect_output(print(imp), "exact GP, 4 sequences of 30 x 3, 50 samples each")
  expect_output(print(summary(imp)), "Imputation by exact GP")
  ci <- confint(imp)
  expect_equal(nrow(ci), sum(is.na(x)))
  expect_equal(names(ci), c("sequence", "frame", "variable", "estimate", "lower", "upper"))
  ci80 <- confint(imp, level = 0.8)
  expect_true(all(ci80$upper - ci80$lower <= ci$upper - ci$lower + 1e-12))
  # A sampler's imputation at another level from 50 samples: the order
  # statistics, as documented (a = floor(51 * 0.2 / 2) = 5: the 5th and 46th
  # of each entry's samples). The exact imputer gives its Gaussian law's
  # intervals at any level instead (test below).
  sq <- impute(spec, x, n_samples = 50, level = 0.9, sampler = "ode", steps = 10, seed = 2)
  s1 <- sq$samples[[1]]
  m1 <- confint(sq, level = 0.8)
  m1 <- m1[m1$sequence == 1, ]
  expect_equal(m1$lower, apply(s1, 2, function(v) sort(v)[5]))
  expect_equal(m1$upper, apply(s1, 2, function(v) sort(v)[46]))
  # Too few samples for the level: an error naming confint()'s own argument.
  cnd <- expect_input_error(confint(sq, level = 0.99), "level")
  expect_match(conditionMessage(cnd), "need at least 199", fixed = TRUE)
  expect_no_error(confint(imp, level = 0.99))  # the exact imputer needs no samples for it
  df <- as.data.frame(imp)
  expect_equal(nrow(df), length(x))
  # the missing rows of as.data.frame() are confint()'s rows, in the same order (a user review: they differed)
  dm <- df[df$missing, ]
  expect_equal(dm[c("sequence", "frame", "estimate", "lower", "upper")],
               ci[c("sequence", "frame", "estimate", "lower", "upper")], ignore_attr = TRUE)
  expect_identical(as.character(dm$variable), ci$variable)
  expect_true(all(c("estimate", "lower", "upper", "truth", "missing") %in% names(df)))
  sets <- completions(imp, m = 1:3)
  expect_length(sets, 3)
  expect_equal(sets[[2]][!is.na(x)], x[!is.na(x)])
  expect_equal(sets[[2]][2, 20:30, ], matrix(imp$samples[[2]][2, ], 11, 3, byrow = TRUE))
  med <- impute(spec, x, n_samples = 51, point = "median", sampler = "ode", steps = 10, seed = 2)
  expect_equal(missing_values_of(med$point[1, , ], is.na(x[1, , ])), apply(med$samples[[1]], 2, median))
})

test_that("an array's names stay on the imputation's arrays", {
  spec <- gp_spec(8, d = 2, kernel = gp_kernel("laplace", lengthscale = 4))
  x <- gp_simulate(spec, 3, seed = 1)
  x[, 3:4, ] <- NA
  dimnames(x) <- list(paste0("w", 1:3), NULL, c("a", "b"))
  imp <- impute(spec, x, n_samples = 20, seed = 1, threads = 1)
  for (f in c("x", "point", "lower", "upper")) expect_identical(dimnames(imp[[f]]), dimnames(x))
  expect_identical(unname(imp$point[, , "a"]), unname(imp$point[, , 1]))
})

test_that("a GP given windows far off its scale warns; its own draws and a large local mean do not", {
  # a user review: a GP fitted on scale_data() windows, given the raw ones
  # (observed values about 10 of its sds from its mean), returned intervals
  # covering 97-100% without a word
  spec <- gp_spec(16, d = 2, kernel = gp_kernel("matern32", lengthscale = 4), nugget = 0.01)
  x <- gp_simulate(spec, 20, seed = 3)
  x[, 10:12, ] <- NA
  expect_no_warning(impute(spec, x, n_samples = 20, seed = 1, threads = 1), class = "ditimpute_warning_scale")
  raw <- x
  raw[, , 2] <- raw[, , 2] * 3 + 20
  w <- expect_warning(impute(spec, raw, n_samples = 20, seed = 1, threads = 1), class = "ditimpute_warning_scale")
  expect_match(conditionMessage(w), "off the model's scale: 100% of variable 2", fixed = TRUE)
  expect_match(conditionMessage(w), "scale_data()", fixed = TRUE)
  # the model's own mean and scale count: the same shift under a model whose
  # mean is there, and a variable of large variance, are on scale
  moved <- gp_spec(16, d = 2, kernel = gp_kernel("matern32", lengthscale = 4), nugget = 0.01, mean = c(0, 20),
                   Lambda = diag(c(1, 9)))
  expect_no_warning(impute(moved, raw, n_samples = 20, seed = 1, threads = 1), class = "ditimpute_warning_scale")
  # a few outlying values (a tenth or less of a variable's) are data, not a scale error
  spiky <- x
  obs <- which(!is.na(spiky[, , 1]))
  spiky[, , 1][obs[seq(1, length(obs), by = 12)]] <- 8
  expect_no_warning(impute(spec, spiky, n_samples = 20, seed = 1, threads = 1), class = "ditimpute_warning_scale")
})

test_that("a truth that differs from x where x is observed gets a warning", {
  spec <- gp_spec(12, d = 2, kernel = gp_kernel("laplace", lengthscale = 4))
  truth <- gp_simulate(spec, 3, seed = 1)
  x <- truth
  x[, 5:7, ] <- NA
  expect_no_warning(impute(spec, x, n_samples = 20, truth = truth, seed = 2))
  far <- truth
  far[2, 1, 1] <- far[2, 1, 1] + 0.5  # one observed entry off
  expect_warning(imp <- impute(spec, x, n_samples = 20, truth = far, seed = 2),
                 "`truth` differs from `x` at 1 of the 54 entries observed in both \\(by up to 0.5\\)")
  # the scores still use the missing entries only
  expect_equal(imputation_metrics(imp)$mae, imputation_metrics(impute(spec, x, n_samples = 20, truth = truth, seed = 2))$mae)
})

test_that("metrics and coverage against the truth are computed as documented", {
  spec <- gp_spec(20, d = 2, kernel = gp_kernel("laplace", lengthscale = 10))
  truth <- gp_simulate(spec, 30, seed = 1)
  x <- truth
  x[, 8:12, ] <- NA
  imp <- impute(spec, x, n_samples = 400, truth = truth, seed = 2)
  met <- imputation_metrics(imp)
  expect_equal(nrow(met), 30)
  err <- imp$point[, 8:12, ] - truth[, 8:12, ]
  expect_equal(mean(met$mse), mean(apply(err^2, 1, mean)), tolerance = 1e-12)
  expect_equal(met$mae[3], mean(abs(err[3, , ])), tolerance = 1e-12)
  expect_equal(met$mre[3], sum(abs(err[3, , ])) / sum(abs(truth[3, 8:12, ])), tolerance = 1e-12)
  # CRPS of a sample against y equals the mean over samples of |X - y| minus half the mean pair distance
  s <- imp$samples[[1]][, 1]; y <- truth[1, 8, 1]
  crps1 <- mean(abs(s - y)) - mean(abs(outer(s, s, "-"))) / 2
  expect_equal(ditimpute:::crps_sample(matrix(s), y), crps1, tolerance = 1e-12)
  # The exact imputer's point is the conditional mean itself (not a sample
  # mean): its MSE against gp_conditional()'s mean is rounding only.
  met_gp <- imputation_metrics(imp, spec = spec)
  expect_lt(max(met_gp$mse), 1e-20)
  cond <- gp_conditional(spec, x[1, , ])
  expect_equal(missing_values_of(imp$point[1, , ], is.na(x[1, , ])), cond$cond_mean, tolerance = 1e-10,
               ignore_attr = TRUE)
  cv <- coverage(imp)
  expect_true(all(cv$coverage %in% c(0, 1)))
  expect_output(print(cv), "Coverage of the 95% regions against the true values")
})

test_that("the exact imputer's regions and intervals hold 95% coverage of the truths, no more, no less", {
  spec <- gp_spec(20, d = 2, kernel = gp_kernel("laplace", lengthscale = 10))
  n <- 4000
  truth <- gp_simulate(spec, n, seed = 21)
  x <- truth
  x[, 8:12, ] <- NA
  # Exact regions and intervals do not depend on the samples; 2 are enough.
  cv <- coverage(impute(spec, x, n_samples = 2, truth = truth, seed = 22))
  # Each of the n independent sequences' truth lies in its region with
  # probability 0.95: SE sqrt(0.95 * 0.05 / n) = 0.0034. A sequence's 10
  # per-entry indicators are correlated (neighbouring frames), so the mean
  # of them has variance at most 0.95 * 0.05 (fully correlated), and the same
  # SE bounds the per-entry coverage's. Bands of 4 SE either side (0.95 +/-
  # 0.014): a correct build misses one with probability < 1.3e-4; regions and
  # intervals built at 0.92 (about 0.921 and 0.922 in
  # tools/mutation-check.sh, 8 SE low) or at 0.98 fail.
  se <- sqrt(0.95 * 0.05 / n)
  expect_lt(abs(mean(cv$coverage) - 0.95), 4 * se)
  expect_lt(abs(mean(cv$interval_coverage) - 0.95), 4 * se)
})

test_that("a complete sequence in a batch passes through; a batch with nothing missing is an input error", {
  # Windows cut from data need not all have a gap. A complete one keeps its
  # data as the point, has no intervals (NA, as every observed entry), radius
  # 0 and n_samples x 0 samples; the other sequences are imputed exactly as
  # if it had had a gap (each draws from its own seed, by its index), and
  # every summary leaves it out (NA coverage: nothing to cover).
  spec <- gp_spec(30, d = 3, kernel = gp_kernel("matern32", lengthscale = 6))
  truth <- gp_simulate(spec, 4, seed = 1)
  gappy <- truth
  gappy[1, 10:14, ] <- NA
  gappy[2, 5, 2] <- NA
  gappy[3, 20:30, 2] <- NA
  gappy[4, c(3, 9, 27), c(1, 3)] <- NA
  x <- gappy
  x[2, , ] <- truth[2, , ]
  for (sampler in c("exact", "ode")) {
    run <- function(x) impute(spec, x, n_samples = 50, level = 0.9, sampler = sampler,
                              steps = if (sampler == "exact") NULL else 5, seed = 2, truth = truth, threads = 1)
    imp <- run(x)
    ref <- run(gappy)
    expect_identical(imp$point[2, , ], truth[2, , ], info = sampler)
    expect_identical(imp$centre[2, , ], truth[2, , ], info = sampler)
    expect_true(all(is.na(imp$lower[2, , ]) & is.na(imp$upper[2, , ])), info = sampler)
    expect_identical(imp$radius[2], 0, info = sampler)
    expect_identical(dim(imp$samples[[2]]), c(50L, 0L), info = sampler)
    expect_identical(imp$samples[-2], ref$samples[-2], info = sampler)
    expect_identical(imp$point[-2, , ], ref$point[-2, , ], info = sampler)
    expect_identical(imp$radius[-2], ref$radius[-2], info = sampler)
    cv <- coverage(imp)
    expect_true(is.na(cv$coverage[2]) && is.na(cv$interval_coverage[2]), info = sampler)
    expect_equal(cv[-2, ], coverage(ref)[-2, ], ignore_attr = TRUE, info = sampler)
    cs <- coverage(imp, spec = spec, n_draws = 200, seed = 3, threads = 1)
    expect_true(is.na(cs$coverage[2]), info = sampler)
    expect_identical(cs$coverage[-2], coverage(ref, spec = spec, n_draws = 200, seed = 3, threads = 1)$coverage[-2])
    expect_output(print(cs), "over 3 sequences")
    curve <- coverage(imp, spec = spec, n_draws = 200, seed = 3, threads = 1, levels = c(0.5, 0.9))
    expect_identical(curve$sequences, c(3, 3))
    expect_true(all(is.finite(curve$coverage)))
    met <- imputation_metrics(imp)
    expect_true(all(is.na(unlist(met[2, -1]))), info = sampler)
    expect_equal(met[-2, ], imputation_metrics(ref)[-2, ], ignore_attr = TRUE)
    expect_identical(imputation_metrics(imp, by = "all")$entries, sum(is.na(x)))
    expect_true(all(is.finite(imputation_metrics(imp, spec = spec, by = "all")$mse)))
    expect_identical(nrow(confint(imp)), sum(is.na(x)))
    expect_false(2 %in% confint(imp, level = 0.8)$sequence)
    expect_identical(completions(imp, m = 2)[[2]][2, , ], truth[2, , ])
    expect_output(print(imp), "missing entries per sequence: 0 to 15")
    expect_output(print(summary(imp)), "Imputation by")
    expect_identical(plot(imp, sequence = 2)$labels$subtitle, "nothing missing here: the data as given")
  }
  # Nothing missing anywhere: almost surely the truth passed as x (or a
  # missing-value code that is not NA), with nothing to draw or score.
  cnd <- expect_input_error(impute(spec, truth), "x")
  expect_match(conditionMessage(cnd), "none of the 4 sequences of x has a missing value")
})

test_that("a complete sequence's metrics are NA, not NaN, and its radius 0 stays out of print()'s range", {
  # The complete window is last, so the others keep their indices (and seeds)
  # in the batch without it: their draws and metrics are the same.
  spec <- gp_spec(24, d = 2, kernel = gp_kernel("matern32", lengthscale = 6))
  truth <- gp_simulate(spec, 4, seed = 1)
  x <- truth
  x[1, 5:9, ] <- NA
  x[2, 20:24, 1] <- NA
  x[3, c(2, 11, 17), 2] <- NA
  for (sampler in c("exact", "ode")) {
    run <- function(x, truth) impute(spec, x, n_samples = 50, sampler = sampler,
                                     steps = if (sampler == "exact") NULL else 4, seed = 2, truth = truth, threads = 1)
    imp <- run(x, truth)
    ref <- run(x[1:3, , ], truth[1:3, , ])
    met <- imputation_metrics(imp)
    row <- unlist(met[4, -1])
    expect_true(all(is.na(row)) && !any(is.nan(row)), info = sampler)
    # colMeans with na.rm gives the averages over the sequences with a gap.
    expect_equal(colMeans(met[-1], na.rm = TRUE), colMeans(imputation_metrics(ref)[-1]), tolerance = 1e-12,
                 info = sampler)
    ms <- imputation_metrics(imp, spec = spec)
    expect_true(all(is.na(unlist(ms[4, -1]))) && !any(is.nan(unlist(ms[4, -1]))), info = sampler)
    expect_equal(colMeans(ms[-1], na.rm = TRUE), colMeans(imputation_metrics(ref, spec = spec)[-1]),
                 tolerance = 1e-12, info = sampler)
    # summary(): NA for the complete sequence's width and metrics, as coverage() gives NA.
    s <- summary(imp)
    expect_true(is.na(s$width[4]) && !is.nan(s$width[4]), info = sampler)
    expect_true(all(is.na(unlist(s$metrics[4, -1]))) && !any(is.nan(unlist(s$metrics[4, -1]))), info = sampler)
    out <- capture.output(print(s))
    expect_false(any(grepl("NaN", out)), info = sampler)
    # print(): the radius range is over the sequences with a gap.
    rng <- range(imp$radius[1:3])
    expect_output(print(imp), sprintf("L2-ball radius: %.3g to %.3g;", rng[1], rng[2]), fixed = TRUE)
    radius_line <- function(o) grep("L2-ball radius", capture.output(print(o)), value = TRUE)
    expect_identical(radius_line(imp), radius_line(ref), info = sampler)
  }
  # A sequence whose missing entries are none of those scored (hidden) is NA too.
  imp <- impute(spec, x, n_samples = 50, seed = 2, truth = truth, threads = 1)
  hidden <- is.na(x)
  hidden[2, , ] <- FALSE
  m <- imputation_metrics(imp, hidden = hidden)
  expect_true(all(is.na(unlist(m[c(2, 4), -1]))) && !any(is.nan(unlist(m[c(2, 4), -1]))))
})

test_that("bad imputation input gives classed errors naming the argument", {
  spec <- gp_spec(20, d = 2)
  x <- gp_simulate(spec, 1, seed = 1)[1, , ]
  expect_input_error(impute(spec, x), "x")                            # no missing value
  xm <- x; xm[5, ] <- NA
  expect_input_error(impute(spec, matrix(NA_real_, 20, 2)), "x")      # no observed value
  # every all-missing sequence named at once, not the first one per call
  xs <- gp_simulate(spec, 5, seed = 2)
  xs[1, 3, 1] <- NA
  xs[c(2, 4), , ] <- NA
  cnd <- expect_input_error(impute(spec, xs), "x")
  expect_match(conditionMessage(cnd), "sequences 2, 4 have no observed value", fixed = TRUE)
  expect_input_error(impute(spec, xm[, 1, drop = FALSE]), "x")       # another d
  expect_input_error(impute(spec, rbind(xm, xm)), "x")               # another H
  expect_input_error(impute(spec, xm, level = 1), "level")
  expect_input_error(impute(spec, xm, level = 0), "level")
  expect_input_error(impute(spec, xm, n_samples = 1), "n_samples")
  expect_input_error(impute(spec, xm, point = "mode"), "point")
  expect_input_error(impute(spec, xm, truth = x[1:3, ]), "truth")
  expect_input_error(impute("gp", xm), "object")
  # a sampler's finite-sample region needs 37 draws at 0.95 and its intervals
  # 39: the first error gives both, so that 37 is not refused again for 39
  cnd <- expect_input_error(impute(spec, xm, n_samples = 10, sampler = "unipc2"), "n_samples")
  expect_match(conditionMessage(cnd), "at level 0.95 needs at least 37 samples, not 10 (39 for the per-entry intervals as well); use n_samples >= 39",
               fixed = TRUE)
  cnd <- expect_input_error(impute(spec, xm, n_samples = 37, sampler = "unipc2"), "n_samples")
  expect_match(conditionMessage(cnd), "a finite-sample interval at level 0.95 needs at least 39 samples, not 37; use n_samples >= 39",
               fixed = TRUE)
  expect_s3_class(impute(spec, xm, n_samples = 39, sampler = "unipc2", seed = 1), "ditimpute_imputation")
  imp <- impute(spec, xm, n_samples = 10, seed = 1)
  expect_input_error(coverage(imp), "truth")
  expect_input_error(coverage(imp, spec = gp_spec(21, d = 2)), "spec")
  expect_input_error(coverage(list()), "object")
  expect_input_error(imputation_metrics(imp), "truth")
  expect_input_error(completions(imp, m = 11), "m")
  expect_input_error(confint(imp, level = 2), "level")
})

test_that("plot draws an imputation with its band and truth", {
  spec <- gp_spec(30, d = 3, kernel = gp_kernel("matern32", lengthscale = 6))
  truth <- gp_simulate(spec, 1, seed = 1)[1, , ]
  x <- truth
  x[10:14, ] <- NA
  imp <- impute(spec, x, n_samples = 50, truth = truth, seed = 2)
  p <- plot(imp, variables = 1:2)
  expect_s3_class(p, "ggplot")
  f <- tempfile(fileext = ".png")
  ggplot2::ggsave(f, p, width = 6, height = 3)
  expect_gt(file.size(f), 1000)
  expect_input_error(plot(imp, variables = 5), "variables")
  expect_input_error(plot(imp, sequence = 2), "sequence")
})

test_that("coverage() and imputation_metrics() skip entries whose truth is NA (not known)", {
  spec <- gp_spec(12, d = 2, kernel = gp_kernel("laplace", lengthscale = 4))
  full <- gp_simulate(spec, 3, seed = 1)
  x <- full
  x[, 5:7, ] <- NA
  truth <- full
  truth[1, 6, 2] <- NA  # sequence 1: one missing entry whose truth is not known
  imp <- impute(spec, x, n_samples = 40, seed = 2, truth = truth)
  cv <- coverage(imp)
  expect_true(is.na(cv$coverage[1]))
  expect_false(anyNA(cv$coverage[2:3]))
  met <- imputation_metrics(imp)
  expect_equal(sum(vapply(1:3, function(i) sum(is.na(x[i, , ]) & !is.na(truth[i, , ])), 0)), 17)
  all_met <- imputation_metrics(imp, by = "all")
  expect_equal(all_met$entries, 17)
  expect_false(anyNA(met$mae))
})

test_that("confint() with one variable gives one row per missing entry (every row came twice, then with NA bounds)", {
  spec <- gp_spec(20, d = 1, kernel = gp_kernel("matern32", lengthscale = 4))
  x <- gp_simulate(spec, 2, seed = 1)
  x[1, 5:6, 1] <- NA
  x[2, 12, 1] <- NA
  imp <- impute(spec, x, n_samples = 40, seed = 1, threads = 1)
  ci <- confint(imp)
  expect_identical(nrow(ci), 3L)
  expect_false(anyNA(ci))
  expect_equal(ci$lower, c(imp$lower[1, 5, 1], imp$lower[1, 6, 1], imp$lower[2, 12, 1]))
  expect_equal(nrow(confint(imp, level = 0.8)), 3L)
})

test_that("coverage()'s print pools the per-entry intervals over entries, as the imputation's print does", {
  # a review: sequences with 1 and 78 missing entries, and the print gave the
  # mean of the sequences' shares (94.6%) against the pooled 94.2%
  spec <- gp_spec(32, d = 3, kernel = gp_kernel("matern32", lengthscale = 8))
  te <- gp_simulate(spec, 40, seed = 2)
  x <- te
  x[1:20, 5, 1] <- NA
  x[21:40, 5:30, ] <- NA
  ig <- impute(spec, x, seed = 1, truth = te, threads = 1)
  cv <- coverage(ig)
  pooled <- mean(te[is.na(x)] >= ig$lower[is.na(x)] & te[is.na(x)] <= ig$upper[is.na(x)])
  expect_equal(imputation_metrics(ig, by = "all")$interval_coverage, pooled)
  expect_false(isTRUE(all.equal(mean(cv$interval_coverage), pooled)))  # the two differ here
  expect_match(paste(capture.output(print(cv)), collapse = " "),
               sprintf("Per-entry 95%% intervals contain %.1f%% of the true values", 100 * pooled), fixed = TRUE)
  # rows reordered or selected: each still weighed by its own sequence's entries
  expect_match(paste(capture.output(print(cv[40:1, ])), collapse = " "),
               sprintf("Per-entry 95%% intervals contain %.1f%% of the true values", 100 * pooled), fixed = TRUE)
  sub <- cv[c(3, 25), ]
  k <- c(sum(is.na(x[3, , ])), sum(is.na(x[25, , ])))
  expect_match(paste(capture.output(print(sub)), collapse = " "),
               sprintf("Per-entry 95%% intervals contain %.1f%%", 100 * sum(sub$interval_coverage * k) / sum(k)), fixed = TRUE)
})

test_that("coef(), fitted() and a fitted GP's residuals() are errors that say where the numbers are", {
  # a review: they returned NULL without a word
  spec <- gp_spec(24, d = 2, kernel = gp_kernel("matern32", lengthscale = 3))
  x <- gp_simulate(spec, 20, seed = 1)
  x[1, 3:8, 1] <- NA
  f <- gp_fit(x, seed = 1)
  for (fn in list(coef, fitted, residuals)) expect_match(conditionMessage(expect_input_error(fn(f), "object")), "Gaussian-process model")
  expect_match(conditionMessage(expect_input_error(coef(spec), "object")), "object$Lambda", fixed = TRUE)
  imp <- impute(spec, x[1:2, , ], n_samples = 20, seed = 1)
  expect_input_error(coef(imp), "object")
  expect_input_error(fitted(imp), "object")
  s <- suppressWarnings(impute_series(replace(AirPassengers, 30:35, NA), n_samples = 20, seed = 1, threads = 1))
  expect_match(conditionMessage(expect_input_error(coef(s), "object")), "object$model", fixed = TRUE)
  expect_input_error(coef(s$model), "object")
  expect_match(conditionMessage(expect_input_error(fitted(s), "object")), "completed_series", fixed = TRUE)
})

test_that("confint() of the exact GP imputer at another level is the same Gaussian law's; steps need a diffusion sampler", {
  sp <- gp_spec(20, 2, kernel = gp_kernel("laplace", lengthscale = 5))
  xs <- gp_simulate(sp, 3, seed = 1)
  xs[, 8:11, ] <- NA
  imp <- impute(sp, xs, n_samples = 10, seed = 1)
  ci <- confint(imp, level = 0.8)
  ref <- confint(impute(sp, xs, n_samples = 10, seed = 1, level = 0.8))
  # the exact imputer at level 0.8 itself (order statistics of the 10 draws were asymmetric: [-0.596, 1.125] around -0.207)
  expect_equal(ci$lower, ref$lower, tolerance = 1e-10)
  expect_equal(ci$upper, ref$upper, tolerance = 1e-10)
  expect_equal(ci$estimate - ci$lower, ci$upper - ci$estimate, tolerance = 1e-10)
  # the exact sampler has no steps: they were silently unused
  expect_input_error(impute(sp, xs, steps = 5, seed = 1), "steps")
  expect_identical(impute(sp, xs, sampler = "euler", steps = 5, n_samples = 40, seed = 1)$method, "exact-score euler sampler")
})
