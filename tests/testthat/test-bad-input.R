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
