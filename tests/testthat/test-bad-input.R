# Bad input through every exported function: wrong types and shapes,
# NA/NaN/Inf in data and in arguments, empty input, huge sizes, zero-length
# patterns, levels at 0 and 1. Each case must be a classed input error
# (ditimpute_error_input) naming the argument at fault.

bad_spec <- gp_spec(12, d = 2, kernel = gp_kernel("laplace", lengthscale = 4))
bad_x <- gp_simulate(bad_spec, 3, seed = 1)
bad_held <- bad_x
bad_held[, 10:12, ] <- NA
bad_imp <- impute(bad_spec, bad_held, n_samples = 30, seed = 1, threads = 1)
bad_nan <- bad_x
bad_nan[1, 1, 1] <- NaN
bad_inf <- bad_x
bad_inf[2, 3, 1] <- Inf

bad_cases <- list(
  # gp_kernel / kernel_matrix
  list(quote(gp_kernel("nope")), "type"),
  list(quote(gp_kernel("laplace", lengthscale = -1)), "lengthscale"),
  list(quote(gp_kernel("laplace", lengthscale = NA)), "lengthscale"),
  list(quote(gp_kernel("laplace", lengthscale = Inf)), "lengthscale"),
  list(quote(gp_kernel("laplace", lengthscale = "a")), "lengthscale"),
  list(quote(gp_kernel("laplace", variance = 0)), "variance"),
  list(quote(kernel_matrix("laplace", 10)), "kernel"),
  list(quote(kernel_matrix(gp_kernel(), 0)), "H"),
  list(quote(kernel_matrix(gp_kernel(), 2.5)), "H"),
  # gp_spec: types, shapes, huge sizes
  list(quote(gp_spec("10")), "H"),
  list(quote(gp_spec(1)), "H"),
  list(quote(gp_spec(NA)), "H"),
  list(quote(gp_spec(c(10, 12))), "H"),
  list(quote(gp_spec(10, d = 0)), "d"),
  list(quote(gp_spec(10, d = 2, Lambda = diag(3))), "Lambda"),
  list(quote(gp_spec(10, d = 2, Lambda = matrix(c(1, NA, NA, 1), 2))), "Lambda"),
  list(quote(gp_spec(10, d = 2, Lambda = matrix(c(1, 2, 2, 1), 2))), "Lambda"),
  list(quote(gp_spec(10, Gamma = diag(9))), "Gamma"),
  list(quote(gp_spec(10, nugget = -1)), "nugget"),
  list(quote(gp_spec(10, nugget = Inf)), "nugget"),
  list(quote(gp_spec(1e6, d = 1000)), "H"),
  list(quote(gp_spec(10, d = 1e6)), "H"),
  # gp_simulate
  list(quote(gp_simulate(bad_spec, -1)), "n"),
  list(quote(gp_simulate(bad_spec, Inf)), "n"),
  list(quote(gp_simulate(bad_spec, 1e12)), "n"),
  list(quote(gp_simulate("spec", 2)), "spec"),
  # patterns
  list(quote(pattern_tail(12, 0)), "L"),
  list(quote(pattern_tail(12, 12)), "L"),
  list(quote(pattern_frames(12, integer())), "frames"),
  list(quote(pattern_frames(12, 13)), "frames"),
  list(quote(pattern_frames(12, c(1, NA))), "frames"),
  list(quote(pattern_random(12, 0, seed = 1)), "k"),
  list(quote(pattern_blocks(12, 0, 2)), "b"),
  list(quote(pattern_mcar(12, 2, rate = 1.5)), "rate"),
  list(quote(pattern_mcar(12, 2, rate = NaN)), "rate"),
  # conditionals and condition numbers
  list(quote(gp_conditional(bad_spec, bad_x[1, , ], pattern_tail(13, 2))), "missing"),
  list(quote(gp_conditional("spec", bad_x[1, , ], pattern_tail(12, 2))), "spec"),
  list(quote(kappa_cond(bad_spec, matrix(TRUE, 12, 2))), "missing"),
  list(quote(kappa_cond(bad_spec, matrix(FALSE, 12, 2))), "missing"),
  list(quote(kappa_obs(bad_spec, matrix(TRUE, 12, 2))), "missing"),
  list(quote(gp_sample_conditional(bad_spec, bad_x[1, , ], pattern_tail(12, 2), n_samples = 0)), "n_samples"),
  # impute: data
  list(quote(impute(bad_spec, bad_x[, , 1])), "x"),
  list(quote(impute(bad_spec, array(0, c(0, 12, 2)))), "x"),
  list(quote(impute(bad_spec, array(NA_real_, c(1, 12, 2)))), "x"),
  list(quote(impute(bad_spec, array("a", c(1, 12, 2)))), "x"),
  list(quote(impute(bad_spec, array(0, c(1, 11, 2)))), "x"),
  list(quote(impute(bad_spec, bad_inf)), "x"),
  list(quote(impute(bad_spec, bad_nan)), "x"),
  # impute: arguments
  list(quote(impute(bad_spec, bad_held, level = 0)), "level"),
  list(quote(impute(bad_spec, bad_held, level = 1)), "level"),
  list(quote(impute(bad_spec, bad_held, level = NA)), "level"),
  list(quote(impute(bad_spec, bad_held, n_samples = 1)), "n_samples"),
  list(quote(impute(bad_spec, bad_held, n_samples = NaN)), "n_samples"),
  list(quote(impute(bad_spec, bad_held, sampler = "magic")), "sampler"),
  list(quote(impute(bad_spec, bad_held, threads = -1)), "threads"),
  list(quote(impute(bad_spec, bad_held, truth = bad_x[1:2, , ])), "truth"),
  list(quote(impute(bad_spec, bad_held, point = "mode")), "point"),
  list(quote(impute(bad_spec, bad_held, region = "ball")), "region"),
  list(quote(impute(list(), bad_held)), "object"),
  # metrics, coverage, completions
  list(quote(imputation_metrics(bad_imp, truth = bad_x[, , 1])), "truth"),
  list(quote(imputation_metrics(bad_imp, truth = bad_x, by = "nope")), "by"),
  list(quote(imputation_metrics(1, truth = bad_x)), "object"),
  list(quote(coverage(bad_imp, truth = bad_x, levels = c(0.5, 1))), "levels"),
  list(quote(coverage(bad_imp, truth = bad_x, levels = numeric())), "levels"),
  list(quote(coverage(bad_imp, truth = bad_x, level = 0.9)), "level"),  # not partial matching of levels
  list(quote(coverage(bad_imp, truth = "x")), "truth"),
  list(quote(completions(1)), "object"),
  list(quote(imputation_from_completions(bad_held, list())), "completions"),
  list(quote(imputation_from_completions(bad_held, list(bad_x[, , 1]))), "completions"),
  list(quote(imputation_from_completions(bad_held, list(bad_held))), "completions"),
  # calibration
  list(quote(calibrate(bad_spec, bad_x, missing = NULL)), "missing"),
  list(quote(calibrate(bad_spec, bad_x[, 1:6, ], missing = pattern_tail(12, 2))), "x"),
  list(quote(calibrate(bad_spec, bad_x, missing = pattern_tail(12, 2), level = 1)), "level"),
  list(quote(calibrate(bad_spec, bad_held, truth = bad_held)), "truth"),
  list(quote(calibrate(bad_spec, bad_x, missing = pattern_tail(12, 2), groups = "size")), "groups"),
  list(quote(apply_calibration(bad_imp, "cal")), "calibration"),
  # masks and strategies
  list(quote(mask_strategy(character())), "generators"),
  list(quote(mask_strategy("zzz")), "generators"),
  list(quote(mask_strategy("mcar0.1", weights = -1)), "weights"),
  list(quote(strategy_preset("S9")), "name"),
  list(quote(draw_masks(mask_strategy("mcar0.1"), 0, 12, 2)), "n"),
  list(quote(hide_mcar(bad_x, rate = 1)), "rate"),
  list(quote(hide_mcar(bad_x, rate = NaN)), "rate"),
  list(quote(hide_mcar("x", rate = 0.1)), "x"),
  # baselines
  list(quote(impute_mean(bad_held, means = c(1, 2, 3))), "means"),
  list(quote(impute_linear("x")), "x"),
  list(quote(impute_baseline(bad_held, "spline")), "method"),
  # data preparation
  list(quote(make_windows(matrix(1:10, 5), length = 10)), "length"),
  list(quote(make_windows(matrix(1:10, 5), length = 0)), "length"),
  list(quote(make_windows(list(1), length = 2)), "series"),
  list(quote(scale_data(bad_x, fit_scaler(bad_x[, , 1]))), "x"),
  list(quote(fit_scaler(array(NA_real_, c(2, 3, 2)))), "train"),
  list(quote(split_by_time(bad_x, train = 1.5)), "train"),
  list(quote(load_real_data("nope")), "name"),
  # the fitted GP
  list(quote(gp_fit(array(NA_real_, c(5, 10, 2)))), "x"),
  list(quote(gp_fit(bad_x, kernel = "cubic")), "kernel"),
  list(quote(gp_fit("x")), "x"),
  list(quote(gp_fit(bad_inf)), "x"),
  list(quote(gp_fit(bad_nan)), "x"),
  list(quote(gp_simulate(bad_spec, 3e9)), "n"),
  list(quote(gp_loglik(bad_spec, bad_x[, 1:6, ])), "x"),
  # scores and the theory
  list(quote(score_exact(bad_spec, bad_x[1, , ], pattern_tail(12, 2), v = c(bad_x[1, 11:12, ]), t = -1)), "t"),
  list(quote(lemma1_counts(bad_spec, pattern_tail(12, 2), t = 1, eps = 0)), "eps"),
  list(quote(oracle_sample(bad_spec, bad_x[1, , ], pattern_tail(12, 2), n_samples = 0)), "n_samples"),
  # the DiT
  list(quote(dit_config(10, 2, width = 3)), "width"),
  list(quote(dit_config(10, 2, heads = 0)), "heads"),
  list(quote(dit_config(0, 2)), "H"),
  list(quote(dit_config(10, 2, t0 = 0)), "t0"),
  list(quote(dit_fit(bad_x, dit_config(12, 3))), "x"),
  list(quote(dit_fit(bad_x, dit_config(12, 2), steps = 0)), "steps"),
  list(quote(dit_fit(bad_x, dit_config(12, 2), device = "tpu")), "device"),
  list(quote(dit_load(tempfile())), "file"),
  list(quote(dit_save("fit", tempfile())), "object"),
  list(quote(dit_sample("fit", bad_held[1, , ])), "object"),
  list(quote(run_experiments(list())), "grid")
)

test_that("every bad input is a classed input error naming its argument", {
  wrong <- character()
  for (k in seq_along(bad_cases)) {
    expr <- bad_cases[[k]][[1]]
    arg <- bad_cases[[k]][[2]]
    cnd <- tryCatch({ eval(expr); NULL }, error = function(e) e)
    # Without LibTorch a DiT entry stops first, with its own class (test-torch.R).
    if (!torch_available() && grepl("^dit_", deparse1(expr)) && inherits(cnd, "ditimpute_error_no_torch")) next
    ok <- inherits(cnd, "ditimpute_error_input") && identical(cnd$arg, arg)
    if (!ok) {
      got <- if (is.null(cnd)) "no error" else sprintf("%s (arg %s): %s", class(cnd)[1], format(cnd$arg),
                                                      conditionMessage(cnd))
      wrong <- c(wrong, sprintf("%s -> %s", deparse1(expr), got))
    }
    expect_true(ok, label = deparse1(expr))
  }
  if (length(wrong)) cat("\n", paste(wrong, collapse = "\n"), "\n")
  expect_gte(length(bad_cases), 60)
})

test_that("the memory guard names the size and follows options(ditimpute.max_memory)", {
  cnd <- expect_input_error(gp_spec(1e6, d = 1000), "H")
  expect_match(conditionMessage(cnd), "GB")
  old <- options(ditimpute.max_memory = 1e5)
  on.exit(options(old))
  expect_input_error(kernel_matrix(gp_kernel(), 200), "H")
  expect_input_error(gp_simulate(bad_spec, 1000), "n")
  options(ditimpute.max_memory = -1)
  expect_input_error(gp_simulate(bad_spec, 1), "ditimpute.max_memory")
  options(ditimpute.max_memory = NULL)
  expect_equal(dim(gp_simulate(bad_spec, 2, seed = 1)), c(2, 12, 2))
})

test_that("dit_loss(), completed_series() and impute_series() name the argument at fault", {
  skip_if_no_torch()
  fit <- dit_fit(bad_x, dit_config(12, 2, width = 16, depth = 1, heads = 2), strategy = mask_strategy("3x1"),
                 steps = 1, batch_size = 3, validation = 0, seed = 1, threads = 1, progress = FALSE)
  expect_input_error(dit_loss("fit", bad_x), "object")
  expect_input_error(dit_loss(fit, bad_x[, , 1]), "x")
  expect_input_error(dit_loss(fit, array(0, c(2, 12, 3))), "x")
  expect_input_error(dit_loss(fit, bad_x, strategy = "S4"), "strategy")
  expect_input_error(dit_loss(fit, bad_x, t_sampling = "normal"), "t_sampling")
  expect_input_error(dit_loss(fit, bad_x, threads = 0), "threads")
  y <- as.numeric(datasets::co2[1:60])
  y[c(5, 17, 30:33)] <- NA
  imp <- impute_series(y, n_samples = 20, seed = 1)
  expect_input_error(completed_series(list()), "object")
  expect_input_error(completed_series(imp, what = "median"), "what")
  expect_input_error(completed_series(imp, what = "sample", m = 0), "m")
  expect_input_error(completed_series(imp, what = "sample", m = 21), "m")
  expect_input_error(impute_series("a"), "x")
  expect_input_error(impute_series(y, method = "arima"), "method")
  expect_input_error(impute_series(y, level = 1), "level")
  expect_input_error(impute_series(y, level = NA), "level")
  expect_input_error(impute_series(y, n_samples = 5), "n_samples")
  expect_input_error(impute_series(y, kernel = "linear"), "kernel")
  expect_input_error(impute_series(y, period = 0), "period")
  expect_input_error(impute_series(y, ridge = -1), "ridge")
  expect_input_error(impute_series(c(1, Inf, 3, 4, 5)), "x")
  expect_input_error(impute_series(numeric()), "x")
})

# One missing-value policy: NA marks a missing value; NaN and Inf in data are
# input errors naming the argument, locating the first offending entries and
# saying how to mark them missing (check_no_nan_inf(), errors.R).
held_nan <- bad_held
held_nan[1, 2, 1] <- NaN
held_inf <- bad_held
held_inf[2, 3, 2] <- Inf
one_held <- bad_held[1, , ]
one_nan <- one_held
one_nan[2, 1] <- NaN
one_inf <- one_held
one_inf[4, 2] <- -Inf

expect_nan_inf_error <- function(expr, arg, at) {
  cnd <- tryCatch({ force(expr); NULL }, error = function(e) e)
  label <- deparse1(substitute(expr))
  expect_true(inherits(cnd, "ditimpute_error_input"), label = label)
  if (is.null(cnd)) return(invisible(NULL))
  expect_identical(cnd$arg, arg, label = label)
  msg <- gsub("\\s+", " ", conditionMessage(cnd))
  expect_match(msg, at, fixed = TRUE, label = label)               # where
  expect_match(msg, "(NaN|Inf) values?", label = label)            # what and how many
  expect_match(msg, "<- NA", fixed = TRUE, label = label)           # how to mark them missing
  invisible(cnd)
}

test_that("NaN and Inf in data are input errors that locate them, in every function that takes data", {
  sc <- fit_scaler(bad_x)
  samples <- gp_sample_conditional(bad_spec, one_held, n_samples = 5, seed = 1)
  # the Gaussian-process imputers and the exact conditional law
  expect_nan_inf_error(impute(bad_spec, held_nan, n_samples = 30), "x", "x[1, 2, 1] is NaN")
  expect_nan_inf_error(impute(bad_spec, held_inf, n_samples = 30), "x", "x[2, 3, 2] is Inf")
  expect_nan_inf_error(impute(bad_spec, one_nan, n_samples = 30), "x", "x[2, 1] is NaN")
  expect_nan_inf_error(impute(bad_spec, bad_held, n_samples = 30, truth = held_nan), "truth", "truth[1, 2, 1] is NaN")
  expect_nan_inf_error(gp_conditional(bad_spec, one_nan), "x", "x[2, 1] is NaN")
  expect_nan_inf_error(gp_conditional(bad_spec, one_inf, missing = 10:12), "x", "x[4, 2] is -Inf")
  expect_nan_inf_error(gp_sample_conditional(bad_spec, one_nan, n_samples = 5), "x", "x[2, 1] is NaN")
  expect_nan_inf_error(oracle_sample(bad_spec, one_inf, n_samples = 5), "x", "x[4, 2] is -Inf")
  expect_nan_inf_error(score_exact(bad_spec, one_nan, 10:12, v = rep(0, 6), t = 1), "x", "x[2, 1] is NaN")
  expect_nan_inf_error(gp_loglik(bad_spec, held_inf), "x", "x[2, 3, 2] is Inf")
  expect_nan_inf_error(gp_fit(held_nan), "x", "x[1, 2, 1] is NaN")
  expect_nan_inf_error(gp_fit(held_inf), "x", "x[2, 3, 2] is Inf")
  expect_nan_inf_error(gp_smooth(one_nan, kernel = gp_kernel("matern32")), "x", "x[2, 1] is NaN")
  expect_nan_inf_error(gp_smooth(held_inf, kernel = gp_kernel("matern32")), "x", "x[2, 3, 2] is Inf")
  expect_nan_inf_error(distribution_error(samples, bad_spec, x = one_nan), "x", "x[2, 1] is NaN")
  # scoring against a truth
  expect_nan_inf_error(imputation_metrics(bad_imp, truth = held_inf), "truth", "truth[2, 3, 2] is Inf")
  expect_nan_inf_error(coverage(bad_imp, truth = held_nan), "truth", "truth[1, 2, 1] is NaN")
  # baselines and outside completions
  expect_nan_inf_error(impute_linear(held_nan), "x", "x[1, 2, 1] is NaN")
  expect_nan_inf_error(impute_mean(held_inf, means = 0), "x", "x[2, 3, 2] is Inf")
  expect_nan_inf_error(impute_baseline(held_nan), "x", "x[1, 2, 1] is NaN")
  expect_nan_inf_error(imputation_from_completions(held_nan, list(bad_x)), "x", "x[1, 2, 1] is NaN")
  expect_nan_inf_error(hide_mcar(held_inf, rate = 0.1), "x", "x[2, 3, 2] is Inf")
  # data preparation
  expect_nan_inf_error(fit_scaler(held_nan), "train", "train[1, 2, 1] is NaN")
  expect_nan_inf_error(scale_data(held_inf, sc), "x", "x[2, 3, 2] is Inf")
  expect_nan_inf_error(unscale_data(held_nan, sc), "x", "x[1, 2, 1] is NaN")
  m <- matrix(c(1:5, NaN, 7:10), 5, 2, dimnames = list(NULL, c("a", "b")))
  expect_nan_inf_error(make_windows(m, 2), "series", "series[1, \"b\"] is NaN")
  w <- make_windows(matrix(as.numeric(1:40), 20, 2), 4)
  w[3, 2, 1] <- Inf
  expect_nan_inf_error(split_by_time(w), "x", "x[3, 2, 1] is Inf")
  # a series object, and the truth of a calibration (NA there: a truth not known)
  expect_nan_inf_error(ditimpute_series(m), "values", "values[1, \"b\"] is NaN")
  truth_nan <- bad_held
  truth_nan[1, 1, 1] <- NaN
  expect_nan_inf_error(calibrate(bad_spec, bad_held, truth = truth_nan, level = 0.9), "truth", "truth[1, 1, 1] is NaN")
  expect_nan_inf_error(calibrate(bad_spec, held_nan, truth = bad_x, level = 0.9), "x", "x[1, 2, 1] is NaN")
})

test_that("the NaN/Inf error counts them, shows the first in order, names columns, and fits data frames", {
  several <- held_nan
  several[1, 1, 2] <- Inf
  several[3, 5, 1] <- NaN
  several[3, 6, 1] <- -Inf
  msg <- gsub("\\s+", " ", conditionMessage(expect_input_error(impute(bad_spec, several), "x")))
  expect_match(msg, "has 2 NaN and 2 Inf values", fixed = TRUE)
  expect_match(msg, "the first: x[1, 1, 2] is Inf, x[1, 2, 1] is NaN, x[3, 5, 1] is NaN, ...", fixed = TRUE)
  expect_match(msg, "x[!is.finite(x)] <- NA", fixed = TRUE)
  msg <- gsub("\\s+", " ", conditionMessage(expect_input_error(impute(bad_spec, held_nan), "x")))
  expect_match(msg, "has 1 NaN value (x[1, 2, 1] is NaN)", fixed = TRUE)
  expect_match(msg, "x[is.nan(x)] <- NA", fixed = TRUE)
  named <- one_nan
  colnames(named) <- c("pm25", "no2")
  msg <- gsub("\\s+", " ", conditionMessage(expect_input_error(gp_conditional(bad_spec, named), "x")))
  expect_match(msg, "x[2, \"pm25\"] is NaN", fixed = TRUE)
  msg <- gsub("\\s+", " ", conditionMessage(expect_input_error(impute(bad_spec, as.data.frame(named)), "x")))
  expect_match(msg, "x$pm25[!is.finite(x$pm25)] <- NA", fixed = TRUE)
  # the hint does what it says: the same data with NA instead impute
  fixed <- held_nan
  fixed[is.nan(fixed)] <- NA
  expect_s3_class(impute(bad_spec, fixed, n_samples = 30, seed = 1, threads = 1), "ditimpute_imputation")
})

test_that("NA stays the missing-value marker everywhere NaN and Inf are refused", {
  expect_s3_class(impute(bad_spec, bad_held, n_samples = 30, seed = 1, threads = 1, truth = bad_x),
                  "ditimpute_imputation")
  cond <- gp_conditional(bad_spec, one_held)
  expect_false(anyNA(cond$mean))
  expect_equal(dim(gp_sample_conditional(bad_spec, one_held, n_samples = 3, seed = 1)), c(3, 12, 2))
  expect_true(is.finite(gp_loglik(bad_spec, bad_held)))
  expect_false(anyNA(gp_smooth(one_held, kernel = gp_kernel("matern32"), n_samples = 30, seed = 1)$point))
  expect_s3_class(gp_fit(bad_held, seed = 1), "ditimpute_gp_fit")
  expect_false(anyNA(impute_linear(bad_held)))
  expect_identical(is.na(scale_data(bad_held, fit_scaler(bad_held))), is.na(bad_held))
  expect_identical(is.na(unscale_data(bad_held, fit_scaler(bad_held))), is.na(bad_held))
  expect_gt(sum(hide_mcar(bad_held, rate = 0.2, seed = 1)$hidden), 0)
  m <- matrix(c(1:5, NA, 7:10), 5, 2)
  expect_equal(dim(make_windows(m, 2)), c(2, 2, 2))
  # NA in a truth is an unknown truth at an observed entry, as before
  truth <- bad_x
  truth[1, 1, 1] <- NA
  expect_s3_class(imputation_metrics(bad_imp, truth = truth), "data.frame")
})

test_that("the DiT functions refuse NaN and Inf and take NA", {
  skip_if_no_torch()
  fit <- dit_fit(bad_held, dit_config(12, 2, width = 16, depth = 1, heads = 2), strategy = mask_strategy("3x1"),
                 steps = 1, batch_size = 3, validation = 0, seed = 1, threads = 1, progress = FALSE)
  expect_s3_class(fit, "ditimpute_dit")
  expect_nan_inf_error(dit_fit(held_nan, dit_config(12, 2, width = 16, depth = 1, heads = 2), steps = 1,
                               progress = FALSE), "x", "x[1, 2, 1] is NaN")
  expect_nan_inf_error(dit_fit(held_inf, dit_config(12, 2, width = 16, depth = 1, heads = 2), steps = 1,
                               progress = FALSE), "x", "x[2, 3, 2] is Inf")
  expect_nan_inf_error(dit_sample(fit, one_nan, n_samples = 2), "x", "x[2, 1] is NaN")
  expect_nan_inf_error(dit_loss(fit, held_inf), "x", "x[2, 3, 2] is Inf")
  expect_nan_inf_error(impute(fit, held_nan, n_samples = 40), "x", "x[1, 2, 1] is NaN")
  expect_equal(dim(dit_sample(fit, one_held, n_samples = 2, steps = 2, seed = 1, threads = 1)), c(2, 12, 2))
})

# The core's input errors are whole sentences that start with the argument's
# name ("Gamma is not symmetric."); R's message names the argument once.
expect_arg_once <- function(expr, arg) {
  cnd <- expect_input_error(expr, arg)
  msg <- conditionMessage(cnd)
  expect_match(msg, sprintf("`%s`", arg), fixed = TRUE)
  expect_no_match(msg, sprintf("`%s`: %s ", arg, arg), fixed = TRUE)
  expect_no_match(msg, "`([A-Za-z_.0-9]+)`: \\1\\b", perl = TRUE)
  invisible(cnd)
}

test_that("errors from the C++ core do not repeat the argument's name", {
  cnd <- expect_arg_once(gp_spec(12, d = 2, Gamma = matrix(1:144, 12)), "Gamma")
  expect_match(conditionMessage(cnd), "`Gamma`: is not symmetric.", fixed = TRUE)
  expect_arg_once(gp_spec(12, d = 2, Lambda = matrix(c(1, 2, 2, 1), 2)), "Lambda")
  expect_arg_once(gp_smooth(one_held, kernel = gp_kernel("matern32"), Lambda = matrix(c(1, 2, 2, 1), 2)), "Lambda")
  cnd <- expect_arg_once(pattern_random(12, 12, seed = 1), "k")
  expect_match(conditionMessage(cnd), "`k`: must be in 1..11", fixed = TRUE)
  # a message that does not start with the name is left whole
  expect_match(conditionMessage(expect_input_error(kernel_matrix(gp_kernel(), 1e6), "H")),
               "`H`: the 1000000 x 1000000 kernel matrix needs", fixed = TRUE)
  expect_identical(ditimpute:::drop_arg_prefix("x", "x has 3 values."), "has 3 values.")
  expect_identical(ditimpute:::drop_arg_prefix("gp", "gp = \"score\" keeps"), "gp = \"score\" keeps")
  expect_identical(ditimpute:::drop_arg_prefix("x", "x_obs has 3 values."), "x_obs has 3 values.")
  skip_if_no_torch()
  expect_arg_once(dit_config(10, 2, width = 3), "width")
  expect_arg_once(dit_config(10, 2, width = 32, heads = 3), "heads")
})

test_that("what a user review passed in gets input errors naming the argument, not later failures", {
  # completions() of the same path twice (Rubin's rules would see too little
  # between-imputation variance), as as_mids() refuses it
  expect_input_error(completions(bad_imp, m = c(2, 2)), "m")
  expect_length(completions(bad_imp, m = c(2, 3)), 2L)
  # strategy generators that hide nothing: refused when the strategy is built
  for (g in c("0x1", "0x3", "2x0", "tail0", "99999999999x1", "tail99999999999")) {
    cnd <- expect_input_error(mask_strategy(g), "generators")
    expect_match(conditionMessage(cnd), "whole numbers from 1 to 2147483647")
  }
  expect_s3_class(mask_strategy(c("1x1", "tail1")), "ditimpute_strategy")
  # magnitudes whose squares leave double precision
  y <- as.numeric(datasets::Nile)
  y[c(5, 40:45)] <- NA
  for (k in c(1e200, 1e-200)) {
    cnd <- expect_input_error(impute_series(y * k, seed = 1, threads = 1), "x")
    expect_match(conditionMessage(cnd), "rescale it")
  }
  expect_no_error(impute_series(y * 1e100, n_samples = 20, seed = 1, threads = 1))
  # calibrate() of a series: a share of 0 names `share`, gaps as long as the series name `missing`
  z <- as.numeric(datasets::AirPassengers)[1:60]
  z[c(10:12, 30)] <- NA
  imp <- impute_series(z, n_samples = 20, seed = 1, threads = 1)
  expect_input_error(calibrate(imp, share = 0, seed = 1), "share")
  expect_input_error(calibrate(imp, missing = 100, seed = 1), "missing")
  expect_input_error(calibrate(imp, missing = 60, seed = 1), "missing")
  # kappa of an array of windows' patterns: says to give one and sapply()
  cnd <- expect_input_error(kappa_cond(bad_spec, is.na(bad_held)), "missing")
  expect_match(conditionMessage(cnd), "array of 3 windows' patterns")
  expect_true(is.finite(kappa_cond(bad_spec, is.na(bad_held[1, , ]))))
})

test_that("a review's probes: sizes past what can run, overflowing values, arguments that were ignored", {
  # a sampler's steps: 1e9 ran on past a minute (Ctrl-C unheard before the first step)
  cnd <- expect_input_error(impute(bad_spec, bad_held[1, , ], n_samples = 20, sampler = "euler", steps = 1e9, seed = 1,
                                   threads = 1), "steps")
  expect_match(conditionMessage(cnd), "at most 100,000 sampler steps", fixed = TRUE)
  expect_input_error(oracle_sample(bad_spec, bad_held[1, , ], n_samples = 5, steps = 1e9, seed = 1, threads = 1), "steps")
  # draws that cannot fit in memory: an error naming n_samples, not std::bad_alloc
  cnd <- expect_input_error(gp_sample_conditional(bad_spec, bad_held[1, , ], n_samples = 1e9, seed = 1), "n_samples")
  expect_match(conditionMessage(cnd), "over the memory limit", fixed = TRUE)
  # values whose mean or variance overflows: said, naming the data
  huge <- matrix(c(1e300, 5, -1e300, 1, 2, 3), 3, 2)
  cnd <- expect_input_error(fit_scaler(huge), "train")
  expect_match(conditionMessage(cnd), "overflows", fixed = TRUE)
  xh <- bad_x
  xh[1, 1, 1] <- 1e300
  expect_input_error(gp_fit(xh, seed = 1), "x")
  # arguments that were silently ignored
  expect_input_error(confint(bad_imp, parm = 3), "parm")
  expect_input_error(confint(bad_imp, "zz"), "parm")
  expect_identical(nrow(confint(bad_imp)), sum(is.na(bad_held)))
  expect_identical(confint(bad_imp, parm = NULL), confint(bad_imp))
  expect_input_error(residuals(bad_imp), "object")
  expect_input_error(thread_budget(4), "apply")
  expect_input_error(thread_budget("yes"), "apply")
  expect_type(thread_budget(), "integer")
  # a later review's: an argument with no effect, or a value read as FALSE
  expect_input_error(distribution_error(bad_imp, bad_spec, x = "garbage"), "x")
  expect_input_error(gp_conditional(bad_spec, bad_held[1, , ], dense = "yes"), "dense")
  expect_input_error(gp_conditional(bad_spec, bad_held[1, , ], dense = NA), "dense")
  expect_input_error(gp_kernel("rbf", period = 5, radius = 5), "radius")
  expect_input_error(gp_kernel("rbf", period = 5), "period")
  expect_input_error(gp_kernel("rbf", embedding = "sinusoidal", scale = 2), "scale")
  expect_s3_class(gp_kernel("rbf", embedding = "sinusoidal", period = 5, radius = 2), "ditimpute_kernel")
})

test_that("the DiT's arguments for a GP are errors without one, and its data errors name x", {
  skip_if_no_torch()
  cfg <- dit_config(12, 2, width = 16, depth = 1, heads = 2)
  expect_input_error(dit_fit(bad_x, cfg, strategy = mask_strategy("mcar0.2"), steps = 2, progress = FALSE,
                             gp_mode = "foo"), "gp_mode")
  expect_input_error(dit_fit(bad_x, cfg, strategy = mask_strategy("mcar0.2"), steps = 2, progress = FALSE,
                             gp_pool = 5), "gp_pool")
  # the core's check named its own argument, `train`
  expect_input_error(dit_fit(bad_x * NA, cfg, strategy = mask_strategy("mcar0.2"), steps = 2, progress = FALSE), "x")
})

test_that("a learning rate no network survives is an input error, not LibTorch's overflow message", {
  skip_if_no_torch()
  cfg <- dit_config(H = 12, d = 2, width = 16, depth = 1, heads = 2)
  expect_input_error(dit_fit(bad_x, cfg, strategy = mask_strategy("6x1"), steps = 3, batch_size = 2, lr = 1e300,
                             seed = 1, threads = 1, progress = FALSE), "lr")
})
