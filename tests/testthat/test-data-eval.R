# Evaluation masks, the two baselines and load_real_data() on a small fake data folder.

test_that("hide_mcar hides exactly round(rate * observed) entries, never a real NA", {
  set.seed(2)
  x <- array(rnorm(40 * 30 * 7), c(40, 30, 7))
  x[sample(length(x), 0.2 * length(x))] <- NA            # real gaps
  out <- hide_mcar(x, rate = 0.1, seed = 3)
  n_obs <- sum(!is.na(x))
  expect_identical(sum(out$hidden), as.integer(round(0.1 * n_obs)))
  expect_false(any(out$hidden & is.na(x)))
  expect_identical(is.na(out$x), is.na(x) | out$hidden)
  expect_equal(out$truth, x[out$hidden])
  expect_equal(out$x[!out$hidden], x[!out$hidden])
  expect_identical(dim(out$hidden), dim(x))
  expect_identical(hide_mcar(x, 0.1, seed = 3), out)
  # its truth vector scores an imputation of its x as the whole truth array does
  spec <- gp_spec(dim(x)[2], d = dim(x)[3], kernel = gp_kernel("laplace", lengthscale = 5))
  imp <- impute(spec, out$x, n_samples = 30, seed = 1, threads = 1)
  full <- array(NA_real_, dim(x))
  full[out$hidden] <- out$truth
  expect_identical(imputation_metrics(imp, truth = out$truth, hidden = out$hidden, by = "all"),
                   imputation_metrics(imp, truth = full, hidden = out$hidden, by = "all"))
  expect_match(conditionMessage(expect_input_error(imputation_metrics(imp, truth = out$truth[-1], hidden = out$hidden),
                                                   "truth")), "same shape as x")
  set.seed(9); a <- hide_mcar(x, 0.3)
  set.seed(9); expect_identical(hide_mcar(x, 0.3), a)
  # A given seed leaves the caller's random stream untouched.
  set.seed(5); hide_mcar(x, 0.2, seed = 1); after <- runif(1)
  set.seed(5); expect_identical(runif(1), after)
  m <- hide_mcar(matrix(1:12 + 0, 4, 3), 0.5, seed = 1)
  expect_identical(sum(m$hidden), 6L)
  # a rate that rounds to every observed entry leaves nothing to impute from
  cnd <- expect_input_error(hide_mcar(matrix(1:12 + 0, 4, 3), 0.99, seed = 1), "rate")
  expect_match(conditionMessage(cnd), "hides every entry: 0.99 of 12 observed entries", fixed = TRUE)
})

test_that("hide_mcar picks each observed entry with the same probability", {
  x <- matrix(c(NA, 1:19 + 0), 5, 4)                     # 19 observed entries
  counts <- Reduce(`+`, lapply(1:2000, function(s) hide_mcar(x, rate = 4 / 19, seed = s)$hidden))
  expect_identical(counts[1], 0L)
  # Each observed entry is hidden with probability 4/19 in each of 2000 draws:
  # mean 421, sd 18.2; 5 sd bounds fail by chance with probability < 1e-5.
  p <- 4 / 19
  expect_true(all(abs(counts[-1] - 2000 * p) < 5 * sqrt(2000 * p * (1 - p))))
  chisq <- sum((counts[-1] - 2000 * p)^2 / (2000 * p))
  expect_lt(chisq, qchisq(0.999, 18))
})

test_that("hide_mcar checks its input", {
  x <- array(1, c(2, 3, 2))
  expect_input_error(hide_mcar(x, 0), "rate")
  expect_input_error(hide_mcar(x, 1), "rate")
  expect_input_error(hide_mcar(x, 0.01), "rate")         # rounds to no entry
  expect_input_error(hide_mcar(x, 0.5, seed = -1), "seed")
  expect_input_error(hide_mcar(1:5, 0.5), "x")
  expect_input_error(hide_mcar(array(NA_real_, c(2, 2, 2)), 0.5), "rate")
})

test_that("impute_linear interpolates within windows and extrapolates constantly", {
  x <- array(NA_real_, c(2, 5, 2))
  x[1, , 1] <- c(NA, 1, NA, 4, NA)
  x[2, , 1] <- c(NA, NA, 7, NA, NA)                      # a single value: constant
  x[1, , 2] <- c(2, NA, NA, NA, 10)
  imp <- impute_linear(x, means = c(-1, -2))             # window 2, variable 2 has no value
  expect_equal(imp[1, , 1], c(1, 1, 2.5, 4, 4))
  expect_equal(imp[2, , 1], rep(7, 5))
  expect_equal(imp[1, , 2], c(2, 4, 6, 8, 10))
  expect_equal(imp[2, , 2], rep(-2, 5))
  expect_equal(impute_linear(x)[2, , 2], rep(0, 5))      # standardised data: training mean 0
  expect_equal(impute_linear(x[1, , ]), imp[1, , ])      # one H x d window
  # Against stats::approx on random gaps.
  set.seed(4)
  y <- array(rnorm(6 * 12 * 3), c(6, 12, 3))
  y[sample(length(y), 80)] <- NA
  fy <- impute_linear(y, means = c(5, 6, 7))
  for (i in 1:6) for (j in 1:3) {
    v <- y[i, , j]
    o <- which(!is.na(v))
    ref <- if (length(o) >= 2) stats::approx(o, v[o], seq_along(v), rule = 2)$y else
      if (length(o) == 1) rep(v[o], 12) else rep(4 + j, 12)
    expect_equal(fy[i, , j], ref)
  }
  expect_false(anyNA(fy))
})

test_that("impute_mean fills each variable with its training mean, in the data's units", {
  x <- array(c(1, NA, 3, NA, NA, 6, NA, 8), c(2, 2, 2))
  sc <- structure(list(center = c(a = 10, b = 20), scale = c(a = 1, b = 1)), class = "ditimpute_scaler")
  imp <- impute_mean(x, sc)
  expect_equal(imp[is.na(x)], c(10, 10, 20, 20))
  expect_equal(imp[!is.na(x)], x[!is.na(x)])
  # The default 0 (standardised data) on data that are not: a warning naming
  # the variable (b averages 7, sd 1.4).
  expect_warning(zero <- impute_mean(x), "averages 7 where observed")
  expect_equal(zero[is.na(x)], rep(0, 4))
  expect_no_warning(impute_mean(x, means = 0))  # said explicitly
  # Linear interpolation uses the means only for a window's variable with no
  # observed value: no warning when every one has some (a review saw one)
  far <- array(c(101, NA, 103, 104, 7, 8, NA, 10), c(1, 4, 2))
  expect_no_warning(lin <- impute_linear(far))
  expect_equal(lin[1, , 1], c(101, 102, 103, 104))
  far[1, , 2] <- NA
  expect_warning(impute_linear(far), "averages 102.7 where observed")
  z <- scale_data(array(c(1, 2, 3, 4, 10, 20, 30, NA), c(2, 2, 2)), sc)
  expect_input_error(impute_mean(z, sc), "means")        # standardised data: the means are 0
  expect_input_error(impute_linear(z, sc), "means")
  expect_input_error(impute_mean(x, c(1, 2, 3)), "means")
  expect_input_error(impute_mean(x, NA), "means")
  expect_input_error(impute_linear(list(1), 0), "x")
})

test_that("load_real_data splits in time, windows and standardises with training statistics", {
  dir <- tempfile("data")
  dir.create(file.path(dir, "ett"), recursive = TRUE)
  n <- 200
  dates <- format(as.POSIXct("2016-07-01", tz = "UTC") + 3600 * (seq_len(n) - 1), "%Y-%m-%d %H:%M:%S")
  vals <- outer(seq_len(n), 1:7, function(r, j) sin(r / 7 + j) * j + r / 50)
  writeLines(c("date,HUFL,HULL,MUFL,MULL,LUFL,LULL,OT", paste(dates, apply(vals, 1, paste, collapse = ","),
                                                              sep = ",")), file.path(dir, "ett", "ETTh1.csv"))
  d <- load_real_data("ett_h1", dir = dir, length = 10)
  expect_identical(dim(d$train), c(16L, 10L, 7L))       # 160 training hours
  expect_identical(dim(d$test), c(4L, 10L, 7L))
  expect_true(max(attr(d$train, "start")) + 9 * 3600 < min(attr(d$test, "start")))
  expect_equal(unname(colMeans(matrix(d$train, ncol = 7))), rep(0, 7))
  expect_equal(unname(d$scaler$center), colMeans(vals[1:160, ]))
  expect_equal(unscale_data(d$test, d$scaler)[4, 10, ], vals[200, ], ignore_attr = TRUE)
  expect_identical(d$name, "ETTh1")
  # The default length 48 is longer than the 40 test hours.
  cnd <- expect_input_error(load_real_data("ett_h1", dir = dir), "length")
  # The bound is the test part's, said as such (it named 40 stamps as if they were the series').
  expect_match(conditionMessage(cnd), "at most the test part's 40 time stamps (ETTh1 has 200, split at train = 0.8), not 48",
               fixed = TRUE)
  expect_input_error(load_real_data("ett_h2", dir = dir), "dir")
  expect_input_error(load_real_data("ett_h1", dir = file.path(dir, "absent")), "dir")
  expect_input_error(load_real_data("mnist", dir = dir), "name")
  expect_input_error(load_real_data("ett_h1", dir = dir, length = 500), "length")
})

test_that("windows cut from a standardised series keep the mark that guards impute_mean()", {
  s <- ditimpute_series(as.matrix(datasets::EuStockMarkets)[1:200, ])
  sc <- fit_scaler(s)
  w <- make_windows(scale_data(s, sc), 24)
  expect_true(isTRUE(attr(w, "ditimpute_scaled")))
  h <- hide_mcar(w, rate = 0.2, seed = 1)
  expect_input_error(impute_mean(h$x, means = sc), "means")
  # Unscaled, the series' windows carry no mark and take the scaler.
  raw <- hide_mcar(make_windows(s, 24), rate = 0.2, seed = 1)
  expect_equal(range(impute_mean(raw$x, means = sc)[raw$hidden]), range(sc$center))
})
