# Baselines and outside imputers in the impute() interface, and metrics that
# score only hidden entries and handle imputations without intervals.

test_that("impute_baseline wraps impute_linear and impute_mean without intervals", {
  set.seed(1)
  x <- array(rnorm(3 * 12 * 2), c(3, 12, 2))
  held <- hide_mcar(x, rate = 0.25, seed = 1)
  lin <- impute_baseline(held$x, "linear")
  expect_s3_class(lin, "ditimpute_imputation")
  expect_equal(lin$point, impute_linear(held$x), ignore_attr = TRUE)
  expect_true(all(is.na(lin$lower)) && all(is.na(lin$radius)))
  m <- imputation_metrics(lin, truth = x, by = "all")
  err <- impute_linear(held$x)[held$hidden] - held$truth
  expect_equal(m$entries, sum(held$hidden))
  expect_equal(m$mae, mean(abs(err)))
  expect_equal(m$mse, mean(err^2))
  expect_equal(m$mre, sum(abs(err)) / sum(abs(held$truth)))
  # a point forecast's CRPS is its absolute error; no interval, no coverage
  expect_equal(m$crps, m$mae)
  expect_true(is.na(m$width) && is.na(m$interval_coverage))
  mn <- impute_baseline(held$x, "mean", means = c(1, 2))
  expect_equal(mn$point, impute_mean(held$x, means = c(1, 2)), ignore_attr = TRUE)
  one <- impute_baseline(held$x[1, , ], "linear")
  expect_equal(dim(one$point), c(12, 2))
  # print() says there is no region instead of showing NA radii and NaN widths
  out <- capture.output(print(impute_baseline(held$x, "linear", truth = x)))
  expect_true(any(grepl("no confidence region", out)))
  expect_false(any(grepl("NaN|NA%|NA to NA", out)))
  # and so does summary(): no confidence level, radius or interval widths
  out <- capture.output(print(summary(impute_baseline(held$x, "linear", truth = x))))
  expect_true(any(grepl("No intervals or region (deterministic)", out, fixed = TRUE)))
  expect_false(any(grepl("NaN|Confidence level|radius", out)))
})

test_that("imputation_metrics scores only hidden entries, never real gaps", {
  set.seed(2)
  x <- array(rnorm(2 * 10 * 3), c(2, 10, 3))
  x[1, 2:3, 1] <- NA                     # real gaps: no truth
  truth <- x
  held <- hide_mcar(x, rate = 0.3, seed = 2)
  imp <- impute_baseline(held$x, "mean")
  all <- imputation_metrics(imp, truth = truth, hidden = held$hidden, by = "all")
  expect_equal(all$entries, sum(held$hidden))
  # NA truth at the real gaps: not known, so not scored without `hidden` either
  expect_equal(imputation_metrics(imp, truth = truth, by = "all"), all)
  expect_equal(all$mae, mean(abs(held$truth)))
  seqs <- imputation_metrics(imp, truth = truth, hidden = held$hidden)
  expect_equal(nrow(seqs), 2)
  bad <- held$hidden
  bad[!held$hidden & !is.na(held$x)][1] <- TRUE
  expect_input_error(imputation_metrics(imp, truth = truth, hidden = bad), "hidden")
  expect_input_error(imputation_metrics(imp, truth = truth, hidden = held$hidden, by = "window"), "by")
})

test_that("imputation_from_completions turns several completions into samples", {
  set.seed(3)
  x <- array(rnorm(2 * 8 * 2), c(2, 8, 2))
  held <- hide_mcar(x, rate = 0.3, seed = 3)
  fills <- lapply(1:20, function(k) { f <- held$x; f[is.na(f)] <- rnorm(sum(is.na(f))); f })
  imp <- imputation_from_completions(held$x, fills, method = "toy", level = 0.9)
  expect_equal(imp$n_samples, 20)
  expect_equal(imp$point[held$hidden], Reduce(`+`, fills)[held$hidden] / 20)
  vals <- simplify2array(lapply(fills, function(f) f[held$hidden]))
  # Finite-sample intervals of 20 completions at 90%: a = floor(21 * 0.05) = 1, the extremes.
  expect_equal(imp$lower[held$hidden], apply(vals, 1, min))
  expect_equal(imp$upper[held$hidden], apply(vals, 1, max))
  q <- imputation_from_completions(held$x, fills, method = "toy", level = 0.9, region = "quantile")
  expect_equal(q$lower[held$hidden], unname(apply(vals, 1, quantile, 0.05, type = 7)))
  # named as this function's argument (it named n_samples, which it has not; a review)
  cnd <- expect_input_error(imputation_from_completions(held$x, fills[1:5], level = 0.9), "completions")
  expect_match(conditionMessage(cnd), "holds 5 completed data sets.*at least [0-9]+.*quantile")
  m <- imputation_metrics(imp, truth = x, by = "all")
  expect_false(is.na(m$interval_coverage))
  expect_lt(m$crps, m$mae)              # a spread of samples scores below its own MAE here
  changed <- fills[[1]]
  changed[!is.na(held$x)][1] <- 99
  expect_input_error(imputation_from_completions(held$x, list(changed)), "completions")
  unfilled <- held$x
  expect_input_error(imputation_from_completions(held$x, list(unfilled)), "completions")
})

test_that("baselines and outside completions pass a complete window through as impute() does", {
  # Windows cut from data need not all have a gap: impute() passes a complete
  # one through (point = data), and so must every imputer in its interface;
  # a batch with nothing missing anywhere stays an input error.
  spec <- gp_spec(24, d = 2, kernel = gp_kernel("matern32", lengthscale = 6))
  w <- gp_simulate(spec, 20, seed = 3)
  held <- hide_mcar(w, rate = 0.01, seed = 1)
  gappy <- apply(is.na(held$x), 1, any)
  expect_true(any(!gappy) && any(gappy))
  expect_s3_class(impute(spec, held$x, n_samples = 40, seed = 1, truth = w), "ditimpute_imputation")
  for (method in c("linear", "mean")) {
    b <- impute_baseline(held$x, method, truth = w)
    expect_identical(b$point[!gappy, , ], w[!gappy, , ], info = method)
    met <- imputation_metrics(b)
    # A complete window has nothing to score: NA (not NaN) in every metric.
    expect_true(all(is.na(unlist(met[!gappy, -1]))) && !any(is.nan(unlist(met[!gappy, -1]))), info = method)
    # The other windows score as in the batch without the complete ones.
    ref <- imputation_metrics(impute_baseline(held$x[gappy, , ], method, truth = w[gappy, , ]))
    expect_equal(met[gappy, -1], ref[, -1], ignore_attr = TRUE, info = method)
    expect_equal(imputation_metrics(b, by = "all"),
                 imputation_metrics(impute_baseline(held$x[gappy, , ], method, truth = w[gappy, , ]), by = "all"))
    expect_output(print(b), "no confidence region")
  }
  # Several completions: samples, with the complete window's n x 0.
  fills <- lapply(1:3, function(k) { f <- held$x; f[is.na(f)] <- k; f })
  imp <- imputation_from_completions(held$x, fills, region = "quantile")
  k <- which(!gappy)[1]
  expect_identical(dim(imp$samples[[k]]), c(3L, 0L))
  expect_identical(imp$radius[k], 0)
  expect_identical(imp$point[k, , ], w[k, , ])
  # One completion (the deterministic path) passes the complete window too.
  one <- imputation_from_completions(held$x, fills[1])
  expect_identical(one$point[k, , ], w[k, , ])
  # Nothing missing anywhere: an input error naming x, on every path.
  cnd <- expect_input_error(impute_baseline(w), "x")
  expect_match(conditionMessage(cnd), "none of the 20 sequences of x has a missing value")
  expect_input_error(impute_baseline(w, "mean"), "x")
  expect_input_error(imputation_from_completions(w, list(w)), "x")
  expect_input_error(imputation_from_completions(w, list(w, w, w), region = "quantile"), "x")
  expect_input_error(impute_baseline(w[1, , ]), "x")
})
