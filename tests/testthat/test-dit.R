# A tiny model keeps these tests to seconds; learning itself is tested in C++
# (cpp/tests/dit/test_dit_learning.cpp) and measured in bench/.
tiny_spec <- function() gp_spec(24, d = 2, kernel = gp_kernel("laplace", lengthscale = 8))
tiny_fit <- function(steps = 30, seed = 1, ...) {
  dit_fit(gp_simulate(tiny_spec(), 120, seed = 1), dit_config(24, 2, width = 32, depth = 1, heads = 2),
          strategy = mask_strategy(c("6x1", "2x3")), steps = steps, batch_size = 16, val_every = 10,
          seed = seed, threads = 1, progress = FALSE, ...)
}

test_that("dit_config validates and prints", {
  skip_if_no_torch()
  cfg <- dit_config(96, 8, width = 256, depth = 12, heads = 16)
  expect_s3_class(cfg, "ditimpute_dit_config")
  expect_output(print(cfg), "width 256, depth 12, heads 16")
  expect_input_error(dit_config(96, 8, width = 30, heads = 4), "heads")   # heads must divide width
  expect_input_error(dit_config(1, 8), "H")
  expect_input_error(dit_config(96, 0), "d")
  expect_input_error(dit_config(96, 8, t0 = -1), "t0")
  expect_equal(dit_config(96, 8)$prediction, "v")
  expect_output(print(dit_config(96, 8, prediction = "eps")), "eps-prediction")
  expect_input_error(dit_config(96, 8, prediction = "x0"), "prediction")
  # sizes it cannot train: T beyond what float32 holds (T = 100 trained to a
  # NaN loss blamed on the learning rate), networks of over 2e9 weights (a
  # user review crashed R with width = 1e6 and then depth = 1e9)
  cnd <- expect_input_error(dit_config(24, 2, T = 100), "T")
  expect_match(conditionMessage(cnd), "at most 50")
  expect_s3_class(dit_config(24, 2, T = 50), "ditimpute_dit_config")
  cnd <- expect_input_error(dit_config(12, 2, width = 1e6, heads = 2), "width")
  expect_match(conditionMessage(cnd), "at most 2e9")
  expect_input_error(dit_config(12, 2, width = 16, heads = 2, depth = 1e9), "depth")
  expect_s3_class(dit_config(12, 2, width = 16, heads = 2, depth = 1), "ditimpute_dit_config")
  # a T x d matrix: the hint to cut it into windows
  cnd <- expect_input_error(dit_fit(matrix(rnorm(200), 100, 2), dit_config(24, 2, width = 16, heads = 2), steps = 1,
                                    progress = FALSE), "x")
  expect_match(conditionMessage(cnd), "make_windows()", fixed = TRUE)
  # ema: the same words for -0.1 and 1
  for (e in c(-0.1, 1)) {
    cnd <- expect_input_error(tiny_fit(steps = 1, ema = e), "ema")
    expect_match(conditionMessage(cnd), "must lie in [0, 1) (0 = off)", fixed = TRUE)
  }
  # impute_series()'s dit list names its own option for a bad shape
  y <- as.numeric(datasets::AirPassengers)[1:72]
  y[c(10:12, 30)] <- NA
  cnd <- expect_input_error(impute_series(y, method = "dit", dit = list(width = 15, steps = 5), seed = 1, threads = 1), "dit")
  expect_match(conditionMessage(cnd), "width must be an even number")
  cnd <- expect_input_error(impute_series(y, method = "dit", dit = list(width = 16, heads = 3, steps = 5), seed = 1,
                                          threads = 1), "dit")
  expect_match(conditionMessage(cnd), "heads must divide width")
})

test_that("entry tokens: configured, trained, saved, imputed", {
  skip_if_no_torch()
  expect_equal(dit_config(24, 2)$tokens, "frame")
  expect_input_error(dit_config(24, 2, tokens = "variable"), "tokens")
  cfg <- dit_config(24, 3, width = 16, depth = 1, heads = 2, tokens = "entry")
  expect_output(print(cfg), "one token per entry")
  spec <- gp_spec(24, d = 3, kernel = gp_kernel("laplace", lengthscale = 8))
  x <- gp_simulate(spec, 40, seed = 1)
  fit <- dit_fit(x, cfg, strategy = mask_strategy("6x1"), steps = 4, batch_size = 8, seed = 1, threads = 1,
                 progress = FALSE)
  expect_equal(fit$config$tokens, "entry")
  expect_output(print(fit), "one token per entry")
  f <- tempfile(fileext = ".dit")
  dit_save(fit, f)
  back <- dit_load(f)
  expect_equal(back$config$tokens, "entry")
  # The same draws from the loaded model; observed entries kept, missing ones filled.
  y <- x[1, , ]
  y[10:15, 2] <- NA
  s1 <- dit_sample(fit, y, n_samples = 4, seed = 3, threads = 1)
  s2 <- dit_sample(back, y, n_samples = 4, seed = 3, threads = 1)
  expect_identical(s1, s2)
  expect_true(all(is.finite(s1)))
  expect_equal(s1[1, -(10:15), ], y[-(10:15), ], ignore_attr = TRUE)
})

test_that("the prediction type survives saving, and loss_weight is checked", {
  skip_if_no_torch()
  fit <- dit_fit(gp_simulate(tiny_spec(), 40, seed = 1),
                 dit_config(24, 2, width = 32, depth = 1, heads = 2, prediction = "eps"),
                 steps = 3, batch_size = 8, loss_weight = "v", seed = 1, threads = 1, progress = FALSE)
  expect_equal(fit$config$prediction, "eps")
  expect_output(print(fit), "eps-prediction")
  f <- tempfile(fileext = ".dit")
  dit_save(fit, f)
  expect_equal(dit_load(f)$config$prediction, "eps")
  expect_input_error(tiny_fit(steps = 2, loss_weight = "snr"), "loss_weight")
})

test_that("a DiT trains, reports its loss curve, prints and plots", {
  skip_if_no_torch()
  fit <- tiny_fit()
  expect_s3_class(fit, "ditimpute_dit")
  expect_equal(fit$steps, 30)
  expect_gt(fit$n_parameters, 1000)
  expect_true(all(c("step", "train_loss", "val_loss") %in% names(fit$history)))
  expect_true(all(is.finite(fit$history$train_loss)))
  expect_true(any(is.finite(fit$history$val_loss)))
  expect_output(print(fit), "DiT for H = 24, d = 2")
  # 30 steps under the default 200-step warm-up: said; under a 5-step one, not
  expect_output(print(fit), "learning-rate warm-up \\(200 steps\\) was longer than the run")
  expect_false(any(grepl("warm-up", capture.output(print(tiny_fit(warmup_steps = 5))))))
  expect_output(print(summary(fit)), "Loss curve")
  f <- tempfile(fileext = ".png"); grDevices::png(f); plot(fit); grDevices::dev.off()
  expect_gt(file.size(f), 1000)
})

test_that("sampling keeps observed values, and seeds make it repeatable", {
  skip_if_no_torch()
  fit <- tiny_fit(steps = 10)
  x <- gp_simulate(tiny_spec(), 1, seed = 2)[1, , ]
  x[10:15, ] <- NA
  s1 <- dit_sample(fit, x, n_samples = 8, steps = 10, seed = 3, threads = 1)
  s2 <- dit_sample(fit, x, n_samples = 8, steps = 10, seed = 3, threads = 1)
  expect_equal(dim(s1), c(8, 24, 2))
  expect_identical(s1, s2)
  expect_equal(s1[5, -(10:15), ], x[-(10:15), ])
  expect_true(all(is.finite(s1)))
  expect_false(identical(s1, dit_sample(fit, x, n_samples = 8, steps = 10, seed = 4, threads = 1)))
})

test_that("impute() with a DiT passes a complete window of a batch through", {
  # As for the GP imputers (test-impute.R): the complete window keeps its
  # data, takes no draws, and the other windows draw what they draw beside
  # a gappy version of it (each from its own seed, by its index).
  skip_if_no_torch()
  fit <- tiny_fit(steps = 10)
  truth <- gp_simulate(tiny_spec(), 3, seed = 2)
  gappy <- truth
  gappy[, 10:15, ] <- NA
  x <- gappy
  x[2, , ] <- truth[2, , ]
  run <- function(x) impute(fit, x, n_samples = 40, steps = 10, seed = 3, threads = 1, truth = truth)
  imp <- run(x)
  ref <- run(gappy)
  expect_identical(imp$point[2, , ], truth[2, , ])
  expect_true(all(is.na(imp$lower[2, , ])))
  expect_identical(imp$radius[2], 0)
  expect_identical(dim(imp$samples[[2]]), c(40L, 0L))
  expect_equal(imp$samples[-2], ref$samples[-2], tolerance = 1e-6)  # float32 network
  expect_true(is.na(coverage(imp)$coverage[2]))
  expect_input_error(impute(fit, truth, n_samples = 40, steps = 10, seed = 3), "x")
})

test_that("save, load and saveRDS round-trip to identical samples", {
  skip_if_no_torch()
  fit <- tiny_fit(steps = 10)
  x <- gp_simulate(tiny_spec(), 1, seed = 2)[1, , ]
  x[20:24, ] <- NA
  ref <- dit_sample(fit, x, n_samples = 4, steps = 8, seed = 5, threads = 1)
  f <- tempfile(fileext = ".dit")
  dit_save(fit, f)
  expect_identical(dit_sample(dit_load(f), x, n_samples = 4, steps = 8, seed = 5, threads = 1), ref)
  r <- tempfile(fileext = ".rds")
  saveRDS(fit, r)
  back <- readRDS(r)
  expect_identical(dit_sample(back, x, n_samples = 4, steps = 8, seed = 5, threads = 1), ref)
  # a corrupt file is a clear error, not a crash
  bytes <- readBin(f, "raw", file.size(f))
  bytes[length(bytes) %/% 2] <- as.raw((as.integer(bytes[length(bytes) %/% 2]) + 1L) %% 256L)
  bad <- tempfile(); writeBin(bytes, bad)
  expect_input_error(dit_load(bad), "file")
  junk <- tempfile(); writeLines("not a model", junk)
  expect_input_error(dit_load(junk), "file")
  expect_input_error(dit_load(tempfile()), "file")
})

test_that("a saved model keeps its strategy and training record; foreign notes are ignored", {
  skip_if_no_torch()
  x <- gp_simulate(tiny_spec(), 40, seed = 1)
  st <- mask_strategy(c(mcar0.2 = 2, "6x1" = 1))
  fit <- dit_fit(x, dit_config(24, 2, width = 32, depth = 1, heads = 2), strategy = st, steps = 6, batch_size = 8,
                 seed = 1, threads = 1, progress = FALSE)
  f <- tempfile(fileext = ".dit")
  dit_save(fit, f)
  back <- dit_load(f)
  expect_identical(back$strategy, fit$strategy)
  expect_identical(back$train_info, fit$train_info)
  expect_equal(back$train_info$n_train, fit$train_info$n_train)
  expect_identical(capture.output(print(back)), capture.output(print(fit)))
  # dit_loss() takes the saved strategy, so a loaded model scores like the original
  expect_identical(dit_loss(back, x[1:8, , ], seed = 2, threads = 1), dit_loss(fit, x[1:8, , ], seed = 2, threads = 1))
  # notes that are not ditimpute's (another front end, or junk) load as no record
  ptr <- ditimpute:::dit_ptr(back)
  ditimpute:::cpp_dit_set_notes(ptr, as.raw(c(0, 1, 2, 255)))
  g <- tempfile(fileext = ".dit")
  dit_save(back, g)
  other <- dit_load(g)
  expect_null(other$strategy)
  expect_identical(other$train_info, list())
  expect_input_error(dit_loss(other, x[1:8, , ]), "strategy")
  y <- x[1, , ]
  y[5:8, ] <- NA
  expect_identical(dit_sample(other, y, n_samples = 2, seed = 3, threads = 1),
                   dit_sample(fit, y, n_samples = 2, seed = 3, threads = 1))
})

test_that("training resumes from a checkpoint and trains with NA in the data", {
  skip_if_no_torch()
  ck <- tempfile(fileext = ".dit")
  fit <- tiny_fit(steps = 10, checkpoint_path = ck)
  expect_true(file.exists(ck))
  more <- dit_fit(gp_simulate(tiny_spec(), 120, seed = 1), dit_config(24, 2, width = 32, depth = 1, heads = 2),
                  strategy = mask_strategy("6x1"), steps = 20, batch_size = 16, resume_from = ck, seed = 1,
                  threads = 1, progress = FALSE)
  expect_equal(more$steps, 20)
  x <- gp_simulate(tiny_spec(), 60, seed = 3)
  x[sample(length(x), 200)] <- NA
  withna <- dit_fit(x, dit_config(24, 2, width = 32, depth = 1, heads = 2), strategy = mask_strategy("mcar0.2"),
                    steps = 5, batch_size = 8, validation = 0, seed = 1, threads = 1, progress = FALSE)
  expect_true(all(is.finite(withna$history$train_loss)))
})

test_that("an exploding loss stops with a numeric error", {
  skip_if_no_torch()
  expect_error(tiny_fit(steps = 200, lr = 1e8, grad_clip = 0), class = "ditimpute_error_numeric")
})

test_that("bad DiT input gives classed errors naming the argument", {
  skip_if_no_torch()
  fit <- tiny_fit(steps = 2)
  x <- gp_simulate(tiny_spec(), 1, seed = 2)[1, , ]
  expect_input_error(dit_fit(matrix(0, 3, 3)), "x")
  expect_input_error(dit_fit(array(0, c(4, 24, 2)), config = dit_config(24, 3)), "x")
  expect_input_error(dit_fit(array(0, c(4, 24, 2)), strategy = "S4"), "strategy")
  expect_input_error(tiny_fit(steps = 0), "steps")
  expect_input_error(tiny_fit(lr = -1), "lr")
  expect_input_error(tiny_fit(validation = 1), "validation")
  expect_input_error(dit_sample(fit, x), "x")                        # nothing missing
  x[3, ] <- NA
  expect_input_error(dit_sample(fit, x[, 1, drop = FALSE]), "x")     # another d
  expect_input_error(dit_sample(fit, x, n_samples = 0), "n_samples")
  expect_input_error(dit_sample(fit, x, method = "rk4"), "method")
  expect_input_error(dit_sample("model", x), "object")
  expect_input_error(dit_fit(array(0, c(4, 24, 2)), device = "tpu"), "device")
})

test_that("dit_fit warns on data far from standardised and names the scaler", {
  skip_if_no_torch()
  x <- gp_simulate(tiny_spec(), 40, seed = 1)
  fit <- function(x) {
    dit_fit(x, dit_config(24, 2, width = 16, depth = 1, heads = 2), strategy = mask_strategy("6x1"), steps = 2,
            batch_size = 8, validation = 0, seed = 1, threads = 1, progress = FALSE)
  }
  raw <- x * 100 + 1000
  cnd <- expect_warning(fit(raw), class = "ditimpute_warning_scale")
  expect_s3_class(cnd, "ditimpute_warning")
  expect_match(conditionMessage(cnd), "fit_scaler(", fixed = TRUE)
  expect_match(conditionMessage(cnd), "scale_data(", fixed = TRUE)
  small <- x
  small[, , 2] <- small[, , 2] / 50  # a variable's sd below 0.1
  expect_warning(fit(small), "variable 2", class = "ditimpute_warning_scale")
  expect_no_warning(fit(x), class = "ditimpute_warning_scale")
  expect_no_warning(fit(scale_data(raw, fit_scaler(raw))), class = "ditimpute_warning_scale")
  # a value beyond single precision: an input error naming x (a review: "training loss became -nan")
  spike <- x
  spike[1, 1, 1] <- 1e300
  expect_input_error(fit(spike), "x")
  spike[1, 1, 1] <- 1e20  # squares beyond single precision (a code review: still "-nan")
  expect_input_error(fit(spike), "x")
  # far off the scale but trainable: the scale warning, as before
  spike[1, 1, 1] <- 1e6
  expect_warning(fit(spike), "variable 1", class = "ditimpute_warning_scale")
  # impute() checks the windows it is given the same way: raw windows given to
  # a DiT trained on standardised ones were imputed near 0 without a word
  f <- fit(x)
  test <- gp_simulate(tiny_spec(), 3, seed = 2)
  test[, 20:24, ] <- NA
  w <- expect_warning(impute(f, test * 100 + 1000, n_samples = 40, seed = 1, threads = 1),
                      class = "ditimpute_warning_scale")
  expect_match(conditionMessage(w), "the one of the training data", fixed = TRUE)
  expect_no_warning(impute(f, test, n_samples = 40, seed = 1, threads = 1), class = "ditimpute_warning_scale")
  # data 50 orders of magnitude below the standard scale were imputed at O(1) unwarned (a review)
  expect_warning(impute(f, test * 1e-50, n_samples = 40, seed = 1, threads = 1), class = "ditimpute_warning_scale")
  expect_warning(dit_sample(f, test[1, , ] * 1e-50, n_samples = 4, seed = 1, threads = 1), class = "ditimpute_warning_scale")
  expect_no_warning(dit_sample(f, test[1, , ], n_samples = 4, seed = 1, threads = 1), class = "ditimpute_warning_scale")
  # one window of standardised data can have a large local mean against a
  # small local sd: no warning for it (only values far off the scale count)
  for (i in 1:3) {
    one <- test[i, , , drop = FALSE]
    one[1, , 1] <- one[1, , 1] * 0.2 - 1.8  # mean -1.8, sd about 0.2
    expect_no_warning(impute(f, one, n_samples = 40, seed = 1, threads = 1), class = "ditimpute_warning_scale")
  }
  sc <- fit_scaler(raw)
  expect_no_warning(impute(f, scale_data(test * 100 + 1000, sc), n_samples = 40, seed = 1, threads = 1),
                    class = "ditimpute_warning_scale")
  # standardised windows (marked so) that have moved far beyond the training
  # values: a user review's DiT, given test windows 3-11 sds from its training
  # mean, covered 10% without a word
  moved <- test + 8
  attr(moved, "ditimpute_scaled") <- TRUE
  w <- expect_warning(impute(f, moved, n_samples = 40, seed = 1, threads = 1), class = "ditimpute_warning_scale")
  expect_match(conditionMessage(w), "off the model's scale: 100% of variable 1", fixed = TRUE)
  expect_match(conditionMessage(w), "the DiT's training values", fixed = TRUE)
  expect_identical(length(f$train_info$value_center), 2L)
  # a DiT saved before it kept these values (no value_center): no check, no error
  old <- f
  old$train_info$value_center <- NULL
  expect_no_warning(impute(old, moved, n_samples = 40, seed = 1, threads = 1), class = "ditimpute_warning_scale")
  # a variable whose training sd is unknown is left out; the other keeps its
  # check (one NA sd had switched it off for all)
  part <- f
  part$train_info$value_scale[2] <- NA
  w <- expect_warning(impute(part, moved, n_samples = 40, seed = 1, threads = 1), class = "ditimpute_warning_scale")
  expect_match(conditionMessage(w), "of variable 1's", fixed = TRUE)
  expect_no_match(conditionMessage(w), "and 1 more", fixed = TRUE)
})

test_that("oracle sampling matches the exact conditional law", {
  spec <- gp_spec(24, d = 2, kernel = gp_kernel("laplace", lengthscale = 16))
  x <- gp_simulate(spec, 1, seed = 1)[1, , ]
  cond <- gp_conditional(spec, x, missing = 17:24)
  s <- oracle_sample(spec, x, missing = 17:24, n_samples = 2000, seed = 2, threads = 1)
  flat <- t(apply(s, 1, function(z) t(z)[t(cond$missing)]))
  sds <- sqrt(diag(cond$cov))
  # 2000 draws: the sample mean is within 4 sd/sqrt(2000) of the truth per entry
  expect_true(all(abs(colMeans(flat) - cond$cond_mean[1, ]) < 4 * sds / sqrt(2000)))
  expect_lt(norm(cov(flat) - cond$cov, "F") / norm(cond$cov, "F"), 0.15)
  expect_equal(s[1, 1:16, ], x[1:16, ])
})

test_that("torch_backend reports the linked LibTorch", {
  skip_if_no_torch()
  b <- torch_backend()
  expect_match(b$torch_version, "^[0-9]+\\.[0-9]+")
  expect_type(b$cuda_available, "logical")
})

cuda_case <- function() {
  spec <- gp_spec(16, d = 2, kernel = gp_kernel("laplace", lengthscale = 8))
  fit <- dit_fit(gp_simulate(spec, 40, seed = 1), dit_config(16, 2, width = 32, depth = 1, heads = 2),
                 strategy = mask_strategy("4x1"), steps = 2, batch_size = 8, seed = 1, threads = 1, progress = FALSE)
  x <- gp_simulate(spec, 2, seed = 2)
  x[, 5:8, ] <- NA
  list(fit = fit, x = x)
}

test_that("device = 'cuda' runs on CUDA with the CPU's noise", {
  skip_if_no_torch()
  b <- torch_backend()
  skip_if_not(isTRUE(b$cuda_available), paste("no CUDA in the linked LibTorch", b$torch_version))
  cs <- cuda_case()
  gpu <- impute(cs$fit, cs$x, n_samples = 40, steps = 5, seed = 3, device = "cuda")
  cpu <- impute(cs$fit, cs$x, n_samples = 40, steps = 5, seed = 3, device = "cpu")
  # Same noise (drawn on the CPU per case), float32 on both devices.
  expect_equal(gpu$point, cpu$point, tolerance = 1e-3)
})

test_that("device = 'cuda' without CUDA names what the LibTorch offers; an unknown device is an input error", {
  skip_if_no_torch()
  cs <- cuda_case()
  expect_input_error(impute(cs$fit, cs$x, device = "tpu"), "device")
  skip_if(isTRUE(torch_backend()$cuda_available), "CUDA is available: no error to check")
  err <- expect_input_error(impute(cs$fit, cs$x, device = "cuda"), "device")
  expect_match(conditionMessage(err), "offers only \"cpu\"")
  expect_input_error(dit_sample(cs$fit, cs$x[1, , ], device = "cuda"), "device")
})

test_that("the warmed-up EMA is no worse than the raw weights after a short run; without warm-up it is", {
  skip_if_no_torch()
  # The same seed gives the same raw weights in all three runs (the EMA draws
  # no random numbers), and dit_loss() with one seed scores them on the same
  # held-out masks, times and noise: the comparison is paired. The C++ test
  # (cpp/tests/dit/test_dit_training.cpp) derives the 3% tolerance.
  held <- gp_simulate(tiny_spec(), 200, seed = 9)
  loss <- function(...) dit_loss(tiny_fit(steps = 200, validation = 0, ...), held, seed = 4, threads = 1)
  raw <- loss(ema = 0)
  warm <- loss(ema = 0.999)
  cold <- loss(ema = 0.999, ema_warmup = FALSE)
  expect_lte(warm, 1.03 * raw)
  expect_gt(cold, 1.03 * raw)
})

test_that("time_limit bounds the training time; schedule and early-stopping arguments are checked", {
  skip_if_no_torch()
  # patience = 0: early stopping off, so that only the time limit can stop it
  # (on a fast machine 190 steps fit in 0.9 s and patience 10 stopped first).
  fit <- tiny_fit(steps = NULL, time_limit = 1, lr_schedule = "cosine", warmup_steps = 10, patience = 0)
  expect_identical(fit$train_info$stop_reason, "time_limit")
  expect_lt(fit$train_info$seconds, 2.5)
  expect_gt(fit$steps, 0)
  expect_output(print(fit), "time limit")
  expect_input_error(tiny_fit(time_limit = -1), "time_limit")
  expect_input_error(tiny_fit(lr_schedule = "step"), "lr_schedule")
  expect_input_error(tiny_fit(warmup_steps = -1), "warmup_steps")
  expect_input_error(tiny_fit(lr_min = 2), "lr_min")
  expect_input_error(tiny_fit(patience = 1.5), "patience")
  expect_input_error(tiny_fit(restore_best = NA), "restore_best")
  expect_input_error(tiny_fit(ema_warmup = "yes"), "ema_warmup")
})

test_that("a validation share of overlapping windows leaves out the training windows sharing its frames", {
  m <- matrix(seq_len(400), 200, 2)
  w <- make_windows(m, 8, stride = 2)  # starts 1, 3, ..., 193: 97 windows
  # Held out: windows 88-97 (first start 175); window i ends at 2 i + 6, so 85-87 reach into them.
  expect_equal(ditimpute:::held_apart(w, 10), 1:84)
  expect_equal(ditimpute:::held_apart(make_windows(m, 8), 5), 1:20)  # disjoint windows: nothing more
  # without the marks (a subset such as w[1:97, , ] drops them) the overlap
  # shows in the values: the same windows left out (it trained on 1:87, three
  # of them sharing frames with the validation windows)
  bare <- unclass(w)[1:97, , , drop = FALSE]
  expect_null(attr(bare, "start"))
  expect_equal(ditimpute:::held_apart(bare, 10), 1:84)
  expect_equal(ditimpute:::window_stride(bare[5, , ], bare[6, , ]), 2L)
  expect_equal(ditimpute:::held_apart(unclass(make_windows(m, 8, stride = 3))[1:60, , , drop = FALSE], 6), 1:52)
  # independent sequences (no shift of one continues the next): the share alone
  sims <- gp_simulate(tiny_spec(), 30, seed = 2)
  expect_equal(ditimpute:::held_apart(sims, 5), 1:25)
  expect_true(is.na(ditimpute:::window_stride(sims[1, , ], sims[2, , ])))
  flat <- array(1, c(10, 8, 2))  # constant windows: no evidence of overlap
  expect_equal(ditimpute:::held_apart(flat, 2), 1:8)
  # independent 0/1 windows: a few entries that match by chance are no overlap
  set.seed(3)
  coins <- array(rbinom(200 * 16, 1, 0.5), c(200, 8, 2))
  found <- vapply(1:199, function(i) !is.na(ditimpute:::window_stride(coins[i, , ], coins[i + 1, , ])), TRUE)
  expect_lt(mean(found), 0.05)
  skip_if_no_torch()
  x <- make_windows(gp_simulate(tiny_spec(), 1, seed = 1)[1, , ], 8, stride = 2)  # 9 windows of 8 x 2
  fit <- dit_fit(x, dit_config(8, 2, width = 16, depth = 1, heads = 2), strategy = mask_strategy("mcar0.2"),
                 steps = 2, batch_size = 4, validation = 0.25, seed = 1, threads = 1, progress = FALSE)
  # 2 held out (starts 15, 17); windows 5-7 (ending at 16, 18, 20) share frames with them.
  expect_equal(fit$train_info$n_train, 4L)
  expect_equal(fit$train_info$n_val, 2L)
})

test_that("restore_best keeps the best validation record's weights; patience stops early", {
  skip_if_no_torch()
  fit <- tiny_fit(steps = 120, lr = 1e-2, restore_best = TRUE, patience = 2)  # val_every = 10
  h <- fit$history
  ti <- fit$train_info
  expect_equal(ti$best_step, h$step[which.min(h$val_loss)])
  expect_equal(ti$best_val_loss, min(h$val_loss), tolerance = 1e-12)
  # lr = 1e-2 makes this seed's curve turn up after step 20 (fixed seed, one thread).
  expect_identical(ti$stop_reason, "early_stop")
  expect_true(ti$restored_best)
  expect_equal(fit$steps, ti$best_step + 2 * 10)
})

test_that("a time-limited dit_fit() with its progress bar returns the model", {
  skip_if_no_torch()
  # The bar's total was the limit in whole seconds, and cli closes a bar that
  # reaches it: the updates of the last half second (seconds rounding to the
  # limit) updated a closed bar, an error that ended the call without its model.
  fit <- dit_fit(gp_simulate(tiny_spec(), 120, seed = 1), dit_config(24, 2, width = 16, depth = 1, heads = 2),
                 strategy = mask_strategy(c("6x1", "2x3")), steps = NULL, time_limit = 2, patience = 0,
                 batch_size = 16, val_every = 10, seed = 1, threads = 1, progress = TRUE)
  expect_s3_class(fit, "ditimpute_dit")
  expect_identical(fit$train_info$stop_reason, "time_limit")
})

test_that("a time-limited dit_fit() updates its progress bar (every 10 steps, not every 10 million)", {
  # with time_limit and no steps the step cap is open (.Machine$integer.max);
  # the interval was steps %/% 200, about 10.7 million steps: no update ever
  every <- ditimpute:::progress_every
  expect_identical(every(.Machine$integer.max, 8), 10L)
  expect_identical(every(5000L, 30), 10L)
  expect_identical(every(2000L, 0), 10L)
  expect_identical(every(100L, 0), 1L)
})

test_that("a DiT knows its variables' names: another order is an input error, other names a warning", {
  # a review: windows with load and temp swapped were imputed without a word
  skip_if_no_torch()
  x <- gp_simulate(tiny_spec(), 40, seed = 1)
  dimnames(x) <- list(NULL, NULL, c("temp", "load"))
  f <- dit_fit(x, dit_config(24, 2, width = 16, depth = 1, heads = 2), strategy = mask_strategy("6x1"), steps = 2,
               batch_size = 8, validation = 0, seed = 1, threads = 1, progress = FALSE)
  expect_identical(f$train_info$variables, c("temp", "load"))
  test <- gp_simulate(tiny_spec(), 2, seed = 2)
  dimnames(test) <- dimnames(x)
  test[, 20:24, ] <- NA
  expect_no_error(impute(f, test, n_samples = 20, level = 0.9, seed = 1, threads = 1))
  cnd <- expect_input_error(impute(f, test[, , 2:1], n_samples = 20, level = 0.9, seed = 1, threads = 1), "x")
  expect_match(conditionMessage(cnd), "another order (load, temp; trained on temp, load)", fixed = TRUE)
  expect_input_error(dit_sample(f, test[1, , 2:1], n_samples = 4, seed = 1, threads = 1), "x")
  # draws that cannot fit in memory: an input error naming n_samples, as for the GP samplers
  cnd <- expect_input_error(dit_sample(f, test[1, , ], n_samples = 1e9, seed = 1, threads = 1), "n_samples")
  expect_match(conditionMessage(cnd), "over the memory limit", fixed = TRUE)
  renamed <- test
  dimnames(renamed)[[3]] <- c("a", "b")
  expect_warning(impute(f, renamed, n_samples = 20, level = 0.9, seed = 1, threads = 1), class = "ditimpute_warning_variables")
  unnamed <- unname(test)
  expect_no_warning(impute(f, unnamed, n_samples = 20, level = 0.9, seed = 1, threads = 1), class = "ditimpute_warning_variables")
  # the names survive dit_save() / dit_load()
  file <- tempfile(fileext = ".dit")
  dit_save(f, file)
  expect_identical(dit_load(file)$train_info$variables, c("temp", "load"))
  unlink(file)
})

test_that("impute() warns when a DiT trained on whole-frame masks is given gaps of single variables", {
  skip_if_no_torch()
  fit <- tiny_fit(steps = 4)  # masks "6x1" and "2x3": whole frames
  x <- gp_simulate(tiny_spec(), 3, seed = 2)
  frames <- x
  frames[, 5:8, ] <- NA
  expect_no_warning(impute(fit, frames, n_samples = 40, seed = 1), class = "ditimpute_warning_patterns")
  one <- x
  one[2, 5:8, 1] <- NA   # variable 1 out, variable 2 observed
  one[3, 10, ] <- NA
  w <- expect_warning(impute(fit, one, n_samples = 40, seed = 1), class = "ditimpute_warning_patterns")
  expect_match(conditionMessage(w), "1 of 3 sequences has", fixed = TRUE)
  expect_match(conditionMessage(w), "mask_strategy(c(\"4x1\", \"1x6\", \"v1x6\", \"mcar0.2\"))", fixed = TRUE)
  # a DiT trained with entry-level masks among its patterns: nothing to say
  mixed <- dit_fit(gp_simulate(tiny_spec(), 120, seed = 1), dit_config(24, 2, width = 32, depth = 1, heads = 2),
                   strategy = mask_strategy(c("6x1", "v1x4")), steps = 4, batch_size = 16, seed = 1, threads = 1,
                   progress = FALSE)
  expect_no_warning(impute(mixed, one, n_samples = 40, seed = 1), class = "ditimpute_warning_patterns")
})

test_that("dit_loss() weighs examples as the model's training did, so it measures its validation loss", {
  skip_if_no_torch()
  spec <- tiny_spec()
  x <- gp_simulate(spec, 200, seed = 1)
  v <- gp_simulate(spec, 200, seed = 5)
  fit <- dit_fit(x, dit_config(24, 2, width = 16, depth = 1, heads = 2), strategy = mask_strategy("6x1"), steps = 100,
                 validation = v, warmup_steps = 10, batch_size = 16, seed = 1, threads = 1, progress = FALSE)
  expect_identical(fit$train_info$options$loss_weight, "auto")  # v-prediction: weighted by 1 / alpha^2
  expect_identical(dit_loss(fit, v, seed = 1, threads = 1), dit_loss(fit, v, seed = 1, threads = 1, loss_weight = "auto"))
  # over 10 draws of masks and times (2,000 examples; one draw's mean varies
  # by about 0.03) the loss is the validation record's, and the unweighted
  # loss it used to give is 20% lower (0.78 against 0.97)
  val <- utils::tail(fit$history$val_loss, 1)
  same <- mean(vapply(1:10, function(s) dit_loss(fit, v, seed = s, threads = 1), 0))
  eps <- mean(vapply(1:10, function(s) dit_loss(fit, v, seed = s, threads = 1, loss_weight = "eps"), 0))
  expect_lt(abs(same - val) / val, 0.1)
  expect_gt(abs(eps - val) / val, 0.1)
  expect_input_error(dit_loss(fit, v, loss_weight = "x"), "loss_weight")
})

test_that("dit_fit(): options with nothing to act on are errors, and a never-observed variable is refused", {
  skip_if_no_torch()
  x <- gp_simulate(tiny_spec(), 60, seed = 1)
  cfg <- dit_config(24, 2, width = 16, depth = 1, heads = 2)
  quick <- function(..., data = x, progress = FALSE) dit_fit(data, cfg, strategy = mask_strategy("6x1"), steps = 5,
                                                             batch_size = 8, seed = 1, threads = 1, progress = progress, ...)
  # patience and restore_best act on the validation loss (they were silently unused)
  expect_input_error(quick(validation = 0, patience = 2), "patience")
  expect_input_error(quick(validation = 0, restore_best = TRUE), "restore_best")
  expect_s3_class(quick(validation = 0, patience = 0, restore_best = FALSE), "ditimpute_dit")
  expect_input_error(quick(checkpoint_every = 5), "checkpoint_every")   # no file was written
  expect_input_error(quick(progress = NA), "progress")
  expect_input_error(quick(progress = "yes"), "progress")
  # Inf is no limit, as NULL (it was "must be a single finite number")
  expect_identical(quick(time_limit = Inf)$steps, 5L)
  y <- x
  y[, , 2] <- NA
  cnd <- expect_input_error(quick(data = y), "x")
  expect_match(conditionMessage(cnd), "no observed value of variable 2 in any training sequence", fixed = TRUE)
  # observed in the validation share only (the last 6 of 60) is as unlearnable
  y <- x
  y[1:54, , 2] <- NA
  cnd <- expect_input_error(quick(data = y), "x")
  expect_match(conditionMessage(cnd), "the validation sequences held out excepted", fixed = TRUE)
  # a share that holds out no sequence is said to (it advised a share above 0, which 0.1 was)
  cnd <- expect_input_error(dit_fit(x[1:8, , ], cfg, strategy = mask_strategy("6x1"), steps = 5, batch_size = 8, seed = 1,
                                    threads = 1, progress = FALSE, patience = 3), "patience")
  expect_match(conditionMessage(cnd), "the validation share 0.1 of 8 sequences holds out none", fixed = TRUE)
})

test_that("a resumed dit_fit() needs steps beyond the checkpoint's", {
  skip_if_no_torch()
  ck <- tempfile(fileext = ".ckpt")
  on.exit(unlink(ck))
  a <- tiny_fit(steps = 20, checkpoint_path = ck, checkpoint_every = 10)
  # it returned the checkpoint's model with an empty record
  cnd <- expect_input_error(tiny_fit(steps = 20, resume_from = ck), "steps")
  expect_match(conditionMessage(cnd), "has trained 20 steps already", fixed = TRUE)
  expect_identical(tiny_fit(steps = 30, resume_from = ck)$steps, 30L)
})

test_that("print() and summary() of a GP-informed DiT say what it does with its GP", {
  skip_if_no_torch()
  x <- gp_simulate(tiny_spec(), 60, seed = 1)
  g <- gp_fit(x, kernel = "laplace", lengthscale = 8, fit_lengthscale = FALSE)
  f <- dit_fit(x, dit_config(24, 2, width = 16, depth = 1, heads = 2), strategy = mask_strategy("6x1"), steps = 3,
               batch_size = 8, seed = 1, threads = 1, progress = FALSE, gp = g, gp_mode = "score")
  expect_output(print(f), "GP-informed: gp_mode \"score\", a correction to the fitted GP's exact joint conditional law")
  expect_output(print(summary(f)), "GP-informed: gp_mode \"score\"")
})
