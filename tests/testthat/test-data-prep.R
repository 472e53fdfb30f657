# Windows, the split in time and standardisation.

toy_series <- function(n = 10, d = 2) {
  v <- matrix(seq_len(n * d) + 0.5, n, d, dimnames = list(NULL, letters[seq_len(d)]))
  ditimpute_series(v, time = as.POSIXct("2020-01-01", tz = "UTC") + 3600 * (seq_len(n) - 1), name = "toy")
}

test_that("make_windows cuts consecutive time stamps and keeps the starts", {
  s <- toy_series(10)
  w <- make_windows(s, 4)
  expect_identical(dim(w), c(2L, 4L, 2L))              # rows 9-10 left over
  expect_identical(dimnames(w)[[3]], c("a", "b"))
  expect_equal(w[2, , 1], s$values[5:8, 1])
  expect_equal(w[1, , 2], s$values[1:4, 2])
  expect_equal(attr(w, "start"), s$time[c(1, 5)])
  expect_equal(attr(w, "freq"), 3600)
  o <- make_windows(s, 4, stride = 2)
  expect_identical(dim(o), c(4L, 4L, 2L))
  expect_equal(o[4, , 2], s$values[7:10, 2])
  expect_identical(dim(make_windows(s, 10)), c(1L, 10L, 2L))
  m <- make_windows(s$values, 3, stride = 3)             # a plain matrix: starts are rows
  expect_equal(attr(m, "start"), c(1L, 4L, 7L))
  expect_equal(m[3, , 1], s$values[7:9, 1])
  expect_input_error(make_windows(s, 11), "length")
  expect_input_error(make_windows(s, 0), "length")
  expect_input_error(make_windows(s, 2.5), "length")
  expect_input_error(make_windows(s, 3, stride = 0), "stride")
  expect_input_error(make_windows(data.frame(a = 1:3), 2), "series")
})

test_that("split_by_time puts every training time before every test time", {
  s <- toy_series(100)
  parts <- split_by_time(s, train = 0.8)
  expect_identical(nrow(parts$train$values), 80L)
  expect_identical(nrow(parts$test$values), 20L)
  expect_true(max(parts$train$time) < min(parts$test$time))
  expect_equal(rbind(parts$train$values, parts$test$values), s$values)
  w <- lapply(parts, make_windows, length = 7)
  expect_identical(c(dim(w$train)[1], dim(w$test)[1]), c(11L, 2L))
  train_end <- max(attr(w$train, "start")) + 6 * 3600
  expect_true(train_end < min(attr(w$test, "start")))    # no window straddles the split
  expect_input_error(split_by_time(s, train = 1), "train")
  expect_input_error(split_by_time(s, train = 0.01), "train")
  expect_input_error(split_by_time(s$values), "x")
})

test_that("split_by_time on overlapping windows drops the windows that straddle", {
  s <- toy_series(40)
  w <- make_windows(s, 10, stride = 2)                   # 16 windows starting at rows 1, 3, ..., 31
  parts <- split_by_time(w, train = 0.5)
  expect_identical(dim(parts$train)[1], 8L)              # starts at rows 1..15, last ends at row 24
  expect_equal(attr(parts$test, "start"), s$time[c(25, 27, 29, 31)])
  expect_equal(parts$test[1, , ], w[13, , ])
  expect_equal(attr(parts$test, "freq"), 3600)
  plain <- split_by_time(make_windows(s, 10), train = 0.5)
  expect_identical(c(dim(plain$train)[1], dim(plain$test)[1]), c(2L, 2L))
  expect_input_error(split_by_time(w, train = 0.01), "train")
  expect_input_error(split_by_time(array(0, c(3, 2, 1)), 0.5), "x")
  expect_input_error(split_by_time(make_windows(s, 10, stride = 1), train = 0.99), "train")
})

test_that("fit_scaler ignores NA and names the variables it cannot standardise", {
  x <- cbind(a = c(1, 2, NA, 5), b = c(10, 20, 30, 40))
  sc <- fit_scaler(x)
  expect_s3_class(sc, "ditimpute_scaler")
  expect_equal(sc$center, c(a = mean(c(1, 2, 5)), b = 25))
  expect_equal(sc$scale, c(a = sd(c(1, 2, 5)), b = sd(c(10, 20, 30, 40))))
  expect_output(print(sc), "means and sds of 2 variables")
  arr <- array(c(x, x + 1), c(4, 2, 2))                  # windows: the same entries
  expect_equal(unname(fit_scaler(aperm(array(c(x, x), c(4, 2, 2)), c(3, 1, 2)))$center), unname(sc$center))
  expect_length(fit_scaler(arr)$center, 2)
  expect_equal(fit_scaler(toy_series(5))$center, c(a = 3.5, b = 8.5))
  cnd <- expect_input_error(fit_scaler(cbind(x, c = NA_real_)), "train")
  expect_match(conditionMessage(cnd), "\"c\" has no observed value")
  cnd <- expect_input_error(fit_scaler(cbind(x, c = 7)), "train")
  expect_match(conditionMessage(cnd), "\"c\" has zero standard deviation")
  cnd <- expect_input_error(fit_scaler(cbind(x, c = c(NA, 1, NA, NA))), "train")
  expect_match(conditionMessage(cnd), "single observed value")
  expect_input_error(fit_scaler(list(1)), "train")
})

test_that("standardisation round-trips for matrices, arrays and series", {
  set.seed(1)
  x <- array(rnorm(5 * 6 * 3, mean = c(10, -5, 100), sd = c(1, 10, 50)), c(5, 6, 3),
             dimnames = list(NULL, NULL, c("p", "q", "r")))
  x[2, 3, 1] <- NA
  sc <- fit_scaler(x)
  z <- scale_data(x, sc)
  expect_true(isTRUE(attr(z, "ditimpute_scaled")))
  flat <- matrix(z, ncol = 3)
  expect_equal(unname(colMeans(flat, na.rm = TRUE)), rep(0, 3))
  expect_equal(unname(apply(flat, 2, sd, na.rm = TRUE)), rep(1, 3))
  expect_true(is.na(z[2, 3, 1]))
  back <- unscale_data(z, sc)
  expect_null(attr(back, "ditimpute_scaled"))
  expect_equal(back, x)
  expect_equal(unscale_data(scale_data(x[1, , ], sc), sc), x[1, , ])
  s <- toy_series(8, 3)
  sc_s <- fit_scaler(s)
  expect_equal(unscale_data(scale_data(s, sc_s), sc_s), s)
  expect_s3_class(scale_data(s, sc_s), "ditimpute_series")
  # Spreads are only rescaled: an sd of 1 on the standardised scale is the variable's sd.
  expect_equal(unscale_data(matrix(1, 2, 3), sc, center = FALSE), matrix(sc$scale, 2, 3, byrow = TRUE))
  expect_input_error(scale_data(x, list(center = 0)), "scaler")
  expect_input_error(scale_data(x[, , 1:2], sc), "x")
  expect_input_error(scale_data(array(0, c(2, 2, 3), dimnames = list(NULL, NULL, c("r", "q", "p"))), sc), "x")
  expect_input_error(scale_data("a", sc), "x")
  expect_input_error(unscale_data(z, sc, center = NA), "center")
  # standardised data scaled again: an error, not data standardised twice
  cnd <- expect_input_error(scale_data(z, sc), "x")
  expect_match(conditionMessage(cnd), "already standardised", fixed = TRUE)
  expect_input_error(scale_data(scale_data(s, sc_s), sc_s), "x")
  expect_equal(scale_data(back, sc), z)  # unscaled, it can be scaled again
})

test_that("unscale_data() maps an imputation of standardised windows back to the data's units", {
  # a review: the help's example unscale_data(imp, scaler) failed (an
  # imputation was not data); now every value, interval and sample path of it
  # comes back in the data's units
  spec <- gp_spec(12, d = 2, kernel = gp_kernel("laplace", lengthscale = 6))
  w <- gp_simulate(spec, 3, seed = 1)
  w[, , 1] <- w[, , 1] * 5 + 100
  w[, , 2] <- w[, , 2] * 0.1 - 3
  dimnames(w) <- list(NULL, NULL, c("a", "b"))
  sc <- fit_scaler(w)
  z <- scale_data(w, sc)
  held <- hide_mcar(z, rate = 0.25, seed = 2)
  imp <- impute(spec, held$x, n_samples = 60, seed = 3, truth = z)
  u <- unscale_data(imp, sc)
  for (f in c("x", "point", "centre", "lower", "upper", "truth")) {
    expect_equal(u[[f]], unscale_data(imp[[f]], sc), ignore_attr = TRUE)
  }
  expect_equal(u$truth, w, ignore_attr = TRUE)
  # the sample paths: an interval at another level, taken from them, is the
  # standardised one mapped back
  a <- confint(imp, level = 0.8)
  b <- confint(u, level = 0.8)
  s <- sc$scale[a$variable]
  m <- sc$center[a$variable]
  expect_equal(b$estimate, a$estimate * s + m, ignore_attr = TRUE)
  expect_equal(b$lower, a$lower * s + m, ignore_attr = TRUE)
  expect_equal(b$upper, a$upper * s + m, ignore_attr = TRUE)
  sets <- completions(u, m = 2)
  expect_equal(sets[[1]][!held$hidden], w[!held$hidden])
  expect_false(isTRUE(all.equal(sets[[1]][held$hidden], sets[[2]][held$hidden])))
  # errors in the data's units
  expect_equal(imputation_metrics(u, by = "all")$mae, mean(abs(u$point - w)[held$hidden]))
  expect_output(print(u), "interval width in the data's units \\(unscale_data\\(\\)\\): a [0-9.]+, b [0-9.]+")
  cnd <- expect_input_error(coverage(u), "object")
  expect_match(conditionMessage(cnd), "before unscaling", fixed = TRUE)
  expect_input_error(unscale_data(u, sc), "x")
  expect_input_error(unscale_data(imp, sc, center = FALSE), "center")
  # a deterministic imputation: its point comes back, nothing else to map
  lin <- unscale_data(impute_baseline(held$x, "linear"), sc)
  expect_equal(lin$point, unscale_data(impute_linear(held$x), sc), ignore_attr = TRUE)
  expect_output(print(lin), "no confidence region")
})

test_that("a review's data-preparation probes: the standardised mark survives a split, splits round as said, named means go by name", {
  set.seed(1)
  s <- ditimpute_series(cbind(a = rnorm(200, 50, 5), b = rnorm(200, 10, 2)))
  sc <- fit_scaler(s)
  z <- scale_data(s, sc)
  p <- split_by_time(z, 0.8)
  # the mark went missing, so scaling twice and filling in the data's means passed silently
  expect_input_error(scale_data(p$train, sc), "x")
  pw <- split_by_time(make_windows(z, 10), 0.8)
  expect_true(isTRUE(attr(pw$test, "ditimpute_scaled")))
  h <- hide_mcar(pw$test, 0.2, seed = 1)
  expect_input_error(impute_mean(h$x, sc), "means")
  # 0.29 * 100 is 28.999... in floating point: still 29 training rows
  u <- ditimpute_series(matrix(rnorm(200), 100))
  expect_identical(nrow(split_by_time(u, 0.29)$train$values), 29L)
  expect_identical(nrow(split_by_time(u, 0.57)$train$values), 57L)
  # means by name, in x's order (they were taken by position)
  m <- matrix(c(1, NA, 3, 10, 20, NA), 3, 2, dimnames = list(NULL, c("a", "b")))
  expect_identical(impute_mean(m, means = c(b = 7, a = 2)), impute_mean(m, means = c(2, 7)))
  expect_input_error(impute_mean(m, means = c(b = 7, z = 2)), "means")
  # a series where only arrays are taken: said so (the message listed series as taken)
  cnd <- expect_input_error(hide_mcar(s, 0.2), "x")
  expect_match(conditionMessage(cnd), "does not take", fixed = TRUE)
  cnd <- expect_input_error(hide_mcar(as.data.frame(m), 0.3), "x")
  expect_no_match(conditionMessage(cnd), "ditimpute_series")
})
