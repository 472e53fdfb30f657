# Misspelled arguments must not be swallowed by `...`: every exported function
# (and S3 method) that checks its dots gives an input error naming the
# misspelled argument and, when one is near, the valid name it meant.

dots_spec <- gp_spec(12, d = 2, kernel = gp_kernel("laplace", lengthscale = 4))
dots_x <- gp_simulate(dots_spec, 1, seed = 1)[1, , ]
dots_truth <- dots_x
dots_x[9:12, ] <- NA
dots_y <- as.numeric(datasets::Nile)[1:60]
dots_y[c(20:24, 40)] <- NA

expect_misspelled <- function(expr, arg, hint = NULL) {
  cnd <- expect_input_error(expr, arg)
  expect_match(conditionMessage(cnd), arg, fixed = TRUE)
  if (!is.null(hint)) expect_match(conditionMessage(cnd), sprintf("did you mean `%s`", hint), fixed = TRUE)
  invisible(cnd)
}

test_that("impute_series() rejects misspelled arguments and names the one meant", {
  expect_misspelled(impute_series(dots_y, conf.level = 0.9), "conf.level", "level")
  expect_misspelled(impute_series(dots_y, nsamples = 30), "nsamples", "n_samples")
  expect_misspelled(impute_series(dots_y, Method = "dit"), "Method", "method")
  cnd <- expect_misspelled(impute_series(dots_y, zzzzzz = 1), "zzzzzz")
  expect_no_match(conditionMessage(cnd), "did you mean")
})

test_that("impute() methods reject misspelled arguments", {
  expect_misspelled(impute(dots_spec, dots_x, nsamples = 20), "nsamples", "n_samples")
  expect_misspelled(impute(dots_spec, dots_x, seeds = 1), "seeds", "seed")
  # `device` belongs to the DiT method, not to a Gaussian process.
  expect_misspelled(impute(dots_spec, dots_x, device = "cpu"), "device")
  # The sampler is `sampler` for a GP and `method` for a DiT: each points to the other.
  expect_misspelled(impute(dots_spec, dots_x, method = "ode"), "method", "sampler")
  skip_if_no_torch()
  cfg <- dit_config(12, 2, width = 16, depth = 1, heads = 2)
  fit <- dit_fit(gp_simulate(dots_spec, 8, seed = 2), cfg, strategy = mask_strategy("mcar0.2"), steps = 1,
                 seed = 1, threads = 1, progress = FALSE)
  expect_misspelled(impute(fit, dots_x, nsample = 40), "nsample", "n_samples")
  expect_misspelled(impute(fit, dots_x, sampler = "ode"), "sampler", "method")
  # The default strategy (S4) needs windows of 23 frames: an error naming
  # `strategy`, before any training.
  cnd <- expect_input_error(dit_fit(gp_simulate(dots_spec, 8, seed = 2), cfg, steps = 1, seed = 1, threads = 1,
                                    progress = FALSE), "strategy")
  expect_match(conditionMessage(cnd), "at least 23 frames", fixed = TRUE)
  expect_s3_class(dit_fit(gp_simulate(dots_spec, 8, seed = 2), cfg, strategy = mask_strategy(c("4x1", "2x2", "tail4")),
                          steps = 1, seed = 1, threads = 1, progress = FALSE), "ditimpute_dit")
})

test_that("calibrate() rejects names neither it nor the model's impute() takes", {
  held <- gp_simulate(dots_spec, 20, seed = 3)
  expect_misspelled(calibrate(dots_spec, held, missing = pattern_tail(12, 3), levl = 0.9), "levl", "level")
  expect_misspelled(calibrate(dots_spec, held, missing = pattern_tail(12, 3), samplr = "exact"), "samplr", "sampler")
  # a name of the GP's impute() is fine: it is passed on
  cal <- calibrate(dots_spec, held, missing = pattern_tail(12, 3), level = 0.9, n_samples = 20, sampler = "exact",
                   seed = 1, threads = 1)
  expect_s3_class(cal, "ditimpute_calibration")
  imp <- impute_series(dots_y, n_samples = 20, seed = 1, threads = 1)
  expect_misspelled(calibrate(imp, rund = 3), "rund", "rounds")
  # sampler is no argument of a series self-calibration
  expect_misspelled(calibrate(imp, sampler = "exact"), "sampler")
})

test_that("summary(), plot() and confint() methods reject arguments they do not use", {
  imp <- impute(dots_spec, dots_x, n_samples = 20, seed = 1, threads = 1, truth = dots_truth)
  expect_misspelled(confint(imp, levels = 0.9), "levels", "level")
  # an unnamed extra argument has no name to report: the error names `...`
  expect_input_error(confint(imp, NULL, 0.9, 5), "...")
  expect_misspelled(summary(imp, digit = 2), "digit")
  expect_misspelled(plot(imp, sequnce = 1), "sequnce", "sequence")
  sim <- impute_series(dots_y, n_samples = 20, seed = 1, threads = 1)
  expect_misspelled(plot(sim, form = 3), "form", "from")
  s <- ditimpute_series(cbind(a = c(1, NA, 3, 4), b = 1:4))
  expect_misspelled(summary(s, digits = 2), "digits")
  curve <- coverage(imp, levels = c(0.5, 0.9), truth = dots_truth)
  expect_misspelled(plot(curve, colour = "red"), "colour")
})

test_that("coverage() names `levels` in full: `level =` is an error, not a one-level curve", {
  imp <- impute(dots_spec, dots_x, n_samples = 30, seed = 1, threads = 1, truth = dots_truth)
  expect_misspelled(coverage(imp, level = 0.9), "level", "levels")
  expect_misspelled(coverage(imp, sepc = dots_spec), "sepc", "spec")
  expect_s3_class(coverage(imp, levels = c(0.5, 0.9)), "ditimpute_coverage_curve")
})

test_that("print(), as.data.frame() and logLik() methods reject misspelled arguments", {
  imp <- impute_series(dots_y, n_samples = 30, seed = 1, threads = 1)
  expect_misspelled(print(imp, digtis = 3), "digtis")
  expect_misspelled(as.data.frame(imp, roww.names = 1), "roww.names", "row.names")
  expect_misspelled(print(imp$model, digtis = 3), "digtis", "digits")
  expect_misspelled(logLik(imp$model, rmel = TRUE), "rmel")
  expect_misspelled(print(summary(imp), n = 2), "n")
  # what print.default() forwards to each element's method, and show(), stay
  # accepted (a review: print(list(imp, cov), digits = 3) and show(imp) failed)
  expect_output(print(imp$model, digits = 3))
  expect_output(print(list(imputation = imp, model = imp$model), digits = 3))
  expect_output(methods::show(imp))
  expect_s3_class(logLik(imp$model, REML = FALSE), "logLik")
  expect_misspelled(logLik(imp$model, REML = TRUE), "REML")
  wimp <- impute(dots_spec, dots_x, seed = 1)
  expect_misspelled(as.data.frame(wimp, optinal = TRUE), "optinal", "optional")
  # what base R passes stays accepted: data.frame() gives stringsAsFactors
  expect_s3_class(as.data.frame(imp, optional = TRUE, stringsAsFactors = FALSE), "data.frame")
  expect_output(print(imp))
})

test_that("a review's methods that swallowed unknown arguments reject them, named as the function called", {
  imp <- impute(dots_spec, dots_x, n_samples = 40, seed = 1, threads = 1)
  expect_misspelled(as.data.frame(summary(imp), foo = 1), "foo")
  expect_misspelled(vcov(gp_conditional(dots_spec, dots_x), foo = 1), "foo")
  fit <- impute_series(dots_y, n_samples = 30, seed = 1, threads = 1, progress = FALSE)
  expect_misspelled(as.data.frame(summary(fit), levle = 3), "levle")
  expect_s3_class(as.data.frame(summary(fit), optional = TRUE), "data.frame")
  skip_if_not_installed("mice")
  expect_misspelled(tidyr::complete(imp, foo = 1), "foo")
  # mice's words checked here, so the error names `action` (mice said "'arg' should be one of")
  expect_input_error(tidyr::complete(imp, action = "foo"), "action")
  expect_input_error(tidyr::complete(imp, action = NA), "action")
  expect_identical(nrow(tidyr::complete(imp, action = "long")), 40L * 12L)  # 40 paths of 12 frames
  expect_identical(tidyr::complete(imp, "l"), tidyr::complete(imp, action = "long"))  # abbreviated, as mice allows
  skip_if_not_installed("ggplot2")
  # autoplot()'s own name (it said plot())
  cnd <- expect_misspelled(ggplot2::autoplot(fit, foo = 1), "foo")
  expect_match(conditionMessage(cnd), "not an argument of autoplot()", fixed = TRUE)
  cnd <- expect_misspelled(ggplot2::autoplot(imp, sequnce = 1), "sequnce", "sequence")
  expect_match(conditionMessage(cnd), "autoplot()", fixed = TRUE)
  # arguments by position, as plot() takes them
  expect_s3_class(ggplot2::autoplot(imp, 1), "ggplot")
  expect_s3_class(ggplot2::autoplot(fit, NULL, 10, 40), "ggplot")
})
