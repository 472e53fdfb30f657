# Multiple imputation for pooling: as_mids(), mice::complete(), with() and
# mice::pool() on ditimpute results. The pooled estimates are checked against
# Rubin's rules computed by hand from completions(), so a break anywhere in
# the chain (the long data frame, the conversion, the methods) fails here.

skip_if_not_installed("mice")

mids_data <- function(n = 90, seed = 1) {
  set.seed(seed)
  b <- as.numeric(stats::arima.sim(list(ar = 0.7), n))
  a <- 1 + 0.5 * b + as.numeric(stats::arima.sim(list(ar = 0.5), n, sd = 0.5))
  full <- data.frame(date = as.Date("2020-01-01") + seq_len(n) - 1, a = a, b = b)
  gappy <- full
  gappy$a[c(15:26, 50:57)] <- NA
  gappy$b[c(5, 70:72)] <- NA
  list(full = full, gappy = gappy)
}

test_that("as_mids() holds the completions in the data's own form, with imputation 0 the data", {
  d <- mids_data()
  imp <- impute_series(d$gappy, n_samples = 20, seed = 1, threads = 1)
  mids <- as_mids(imp)
  expect_s3_class(mids, "mids")
  expect_equal(mids$m, 20)
  sets <- completions(imp, 1:3)
  for (k in 1:3) {
    ck <- mice::complete(mids, k)
    expect_identical(names(ck), c("date", "a", "b"))
    expect_s3_class(ck$date, "Date")
    expect_identical(ck$date, d$gappy$date)
    expect_equal(ck$a, sets[[k]]$a, tolerance = 0)
    expect_equal(ck$b, sets[[k]]$b, tolerance = 0)
  }
  c0 <- mice::complete(mids, 0)
  expect_identical(is.na(c0$a), is.na(d$gappy$a))
  # complete() works on the imputation itself; m picks the paths
  long <- mice::complete(imp, "long")
  expect_identical(names(long)[1:2], c(".imp", ".id"))
  expect_identical(nrow(long), 20L * 90L)
  expect_equal(as_mids(imp, m = c(2, 5))$m, 2)
  expect_equal(mice::complete(as_mids(imp, m = c(2, 5)), 2)$a, completions(imp)[[5]]$a, tolerance = 0)
})

test_that("with() and mice::pool() apply Rubin's rules to the completions", {
  d <- mids_data()
  imp <- impute_series(d$gappy, n_samples = 20, seed = 2, threads = 1)
  pooled <- mice::pool(with(imp, lm(a ~ b)))
  got <- pooled$pooled[pooled$pooled$term == "b", ]
  # By hand: estimates and variances of the slope on each completed set.
  fits <- lapply(completions(imp), function(s) stats::lm(a ~ b, data = s))
  q <- vapply(fits, function(f) stats::coef(f)[["b"]], 0)
  u <- vapply(fits, function(f) stats::vcov(f)["b", "b"], 0)
  m <- length(q)
  expect_identical(m, 20L)
  expect_equal(got$estimate, mean(q), tolerance = 1e-12)
  expect_equal(got$ubar, mean(u), tolerance = 1e-12)
  expect_equal(got$b, stats::var(q), tolerance = 1e-12)
  expect_equal(got$t, mean(u) + (1 + 1 / m) * stats::var(q), tolerance = 1e-12)
  # The imputations differ, so there is between-imputation variance.
  expect_gt(got$b, 0)
  s <- summary(pooled, conf.int = TRUE)
  expect_true(all(c("estimate", "std.error", "2.5 %", "97.5 %") %in% names(s)))
})

test_that("time = columns are kept, and several sequences of impute() pool too", {
  aq <- impute_series(airquality, time = c("Month", "Day", year = 1973), n_samples = 20, seed = 1, threads = 1)
  one <- mice::complete(as_mids(aq), 4)
  expect_identical(names(one), names(airquality))
  expect_identical(one$Month, airquality$Month)
  expect_false(anyNA(one))
  pooled <- mice::pool(with(aq, lm(Ozone ~ Wind + Temp)))
  expect_identical(as.character(pooled$pooled$term), c("(Intercept)", "Wind", "Temp"))
  expect_true(all(is.finite(pooled$pooled$fmi)))

  spec <- gp_spec(12, d = 2, kernel = gp_kernel("laplace", lengthscale = 4))
  x <- gp_simulate(spec, 3, seed = 1)
  x[, 9:12, ] <- NA
  imp <- impute(spec, x, n_samples = 5, seed = 1, threads = 1)
  c2 <- mice::complete(imp, 2)
  expect_identical(names(c2), c("sequence", "frame", "V1", "V2"))
  expect_identical(nrow(c2), 36L)
  arr <- completions(imp)[[2]]
  expect_equal(c2$V2[c2$sequence == 3], arr[3, , 2], tolerance = 0)
  expect_identical(c2$frame[c2$sequence == 2], 1:12)
})

test_that("as_mids(), complete() and with() work on impute() of one H x d matrix", {
  spec <- gp_spec(24, d = 2)
  x <- gp_simulate(spec, 1, seed = 1)[1, , ]
  x[5:8, ] <- NA
  imp <- impute(spec, x, n_samples = 20, seed = 1, threads = 1)
  mids <- as_mids(imp)
  expect_s3_class(mids, "mids")
  expect_equal(mids$m, 20)
  expect_identical(mids$loggedEvents, NULL)  # no constant `sequence` column for mice to warn about
  c3 <- mice::complete(imp, 3)
  expect_identical(names(c3), c("frame", "V1", "V2"))
  expect_identical(c3$frame, 1:24)
  expect_equal(as.matrix(c3[c("V1", "V2")]), completions(imp)[[3]], tolerance = 0, ignore_attr = TRUE)
  expect_true(is.na(mice::complete(mids, 0)$V1[5]))
  pooled <- mice::pool(with(imp, lm(V1 ~ V2)))
  expect_identical(as.character(pooled$pooled$term), c("(Intercept)", "V2"))
  expect_identical(pooled$m, 20L)
  # the matrix's column names name the variables
  colnames(x) <- c("a", "b")
  named <- impute(spec, x, n_samples = 5, seed = 1, threads = 1)
  expect_identical(names(mice::complete(named, 1)), c("frame", "a", "b"))
  expect_identical(unique(confint(named)$variable), c("a", "b"))
})

test_that("a single m means the first m imputations, as in mice; a vector picks paths", {
  spec <- gp_spec(12, d = 2)
  x <- gp_simulate(spec, 2, seed = 1)
  x[, 4:6, ] <- NA
  imp <- impute(spec, x, n_samples = 10, seed = 1, threads = 1)
  five <- as_mids(imp, m = 5)
  expect_equal(five$m, 5)
  all_sets <- completions(imp)
  expect_length(all_sets, 10)
  sets <- completions(imp, m = 5)
  expect_length(sets, 5)
  expect_identical(sets, all_sets[1:5])
  for (k in c(1, 5)) {
    expect_equal(mice::complete(five, k)$V1, as.vector(t(all_sets[[k]][, , 1])), tolerance = 0)
  }
  expect_identical(completions(imp, m = 1), all_sets[1])
  expect_identical(completions(imp, m = c(7, 2)), all_sets[c(7, 2)])
  expect_equal(mice::complete(as_mids(imp, m = c(7, 2)), 1)$V2, as.vector(t(all_sets[[7]][, , 2])), tolerance = 0)
  expect_identical(nrow(summary(mice::pool(with(imp, lm(V1 ~ V2))))), 2L)
  # More imputations than sample paths, or fewer than one: errors naming `m`.
  cnd <- expect_input_error(as_mids(imp, m = 11), "m")
  expect_match(conditionMessage(cnd), "10 sample paths", fixed = TRUE)
  expect_input_error(completions(imp, m = 11), "m")
  expect_input_error(as_mids(imp, m = 0), "m")
  expect_input_error(completions(imp, m = 0), "m")
  expect_input_error(completions(imp, m = 2.5), "m")
  expect_input_error(completions(imp, m = c(1, 11)), "m")
})

test_that("the mids object names ditimpute as the method, which mice.mids() cannot rerun", {
  spec <- gp_spec(12, d = 2)
  x <- gp_simulate(spec, 2, seed = 1)
  x[, 4:6, 1] <- NA
  mids <- as_mids(impute(spec, x, n_samples = 5, seed = 1, threads = 1))
  expect_identical(unname(mids$method[c("V1", "V2")]), c("ditimpute", ""))  # V2 has nothing missing
  expect_false(any(mids$method == "pmm"))
  # Continuing the chain would overwrite the imputations with mice's own: it stops.
  expect_error(mice::mice.mids(mids, maxit = 1, printFlag = FALSE), "ditimpute")
  d <- mids_data()
  series <- as_mids(impute_series(d$gappy, n_samples = 20, seed = 1, threads = 1))
  expect_identical(unname(series$method[c("date", "a", "b")]), c("", "ditimpute", "ditimpute"))
})

test_that("as_mids() rejects what it cannot pool", {
  d <- mids_data()
  imp <- impute_series(d$gappy, n_samples = 20, seed = 1, threads = 1)
  expect_input_error(as_mids(imp, m = 21), "m")
  expect_input_error(as_mids(imp, m = c(1, 1)), "m")
  expect_input_error(as_mids(imp, M = 3), "M")
  expect_input_error(as_mids(list()), "object")
  x <- array(rnorm(2 * 6 * 2), c(2, 6, 2))
  x[, 3, 1] <- NA
  expect_input_error(as_mids(impute_baseline(x, "linear")), "object")
})

test_that("a data frame's non-numeric columns ride through unchanged, as covariates of the pooled analysis", {
  # A user review: a factor column was an error, so a covariate could not
  # reach with(..., lm()) through as_mids().
  d <- mids_data()
  g <- d$gappy
  g$season <- factor(ifelse(seq_len(nrow(g)) %% 4 < 2, "wet", "dry"))
  g$site <- "A"
  imp <- impute_series(g, n_samples = 20, seed = 1, threads = 1)
  ref <- impute_series(d$gappy, n_samples = 20, seed = 1, threads = 1)
  expect_identical(colnames(imp$x), c("a", "b"))  # modelled: the numbers only
  expect_identical(imp$point, ref$point)
  done <- completed_series(imp)
  expect_identical(done[c("date", "season", "site")], g[c("date", "season", "site")])
  expect_identical(done[c("a", "b")], completed_series(ref)[c("a", "b")])
  fit <- mice::pool(with(imp, lm(a ~ b + season)))
  expect_true("seasonwet" %in% as.character(summary(fit)$term))
  # a constant time column (the year within one month) is what mice's own
  # model would drop: logged, without mice's bare "Number of logged events"
  # warning (a user review)
  x <- data.frame(year = 2013, month = 3, day = 1:28, a = sin(1:28) + (1:28) / 10, b = cos(1:28))
  x$a[c(5, 17)] <- NA
  one <- impute_series(x, time = c("year", "month", "day"), separate = "none", n_samples = 20, seed = 1, threads = 1)
  expect_no_warning(md <- as_mids(one))
  expect_true("year" %in% md$loggedEvents$out)
  # a missing value in such a column: an error naming x (nothing imputes categories here)
  g$season[3] <- NA
  expect_match(conditionMessage(expect_input_error(impute_series(g), "x")),
               "column \"season\" is not numeric and has missing values")
})

test_that("as_mids() names a variable mice cannot take, and warns when variables were imputed in independent groups", {
  skip_if_not_installed("mice")
  # a non-syntactic name stopped with a parse error from inside mice
  n <- 120
  set.seed(1)
  d <- data.frame(date = as.Date("2020-01-01") + 0:(n - 1), b = as.numeric(arima.sim(list(ar = 0.7), n)))
  d[["ozone ppb"]] <- 1 + 0.5 * d$b + as.numeric(arima.sim(list(ar = 0.5), n, sd = 0.5))
  d[["ozone ppb"]][c(20:35, 70:80)] <- NA
  imp <- impute_series(d, n_samples = 20, seed = 1, threads = 1, separate = "none")
  cnd <- expect_input_error(as_mids(imp), "object")
  expect_match(conditionMessage(cnd), "\"ozone ppb\"", fixed = TRUE)
  expect_match(conditionMessage(cnd), "\"ozone.ppb\"", fixed = TRUE)
  # with() needs no mids (it fits each completed data set itself): the name works there, quoted as R quotes it
  fits <- with(imp, lm(`ozone ppb` ~ b))
  expect_s3_class(fits, "mira")
  expect_length(fits$analyses, 20)
  expect_identical(nrow(summary(mice::pool(fits))), 2L)
  # variables in independent groups: a warning naming the groups
  names(d)[3] <- "ozone"
  sep <- impute_series(d, n_samples = 20, seed = 1, threads = 1, separate = "all", proper = TRUE)
  w <- expect_warning(as_mids(sep), class = "ditimpute_warning_groups")
  expect_match(conditionMessage(w), "independent groups (b | ozone)", fixed = TRUE)
  expect_no_warning(as_mids(impute_series(d, n_samples = 20, seed = 1, threads = 1, separate = "none", proper = TRUE)),
                    class = "ditimpute_warning_groups")
  # with(): warned only when the analysis's variables span groups (a review:
  # lm(PM2.5 ~ NO2) was warned of with only WSPM apart)
  d$c <- as.numeric(arima.sim(list(ar = 0.3), n))
  d$c[c(40:45)] <- NA
  three <- suppressWarnings(impute_series(d, n_samples = 20, seed = 1, threads = 1, separate = "c", proper = TRUE))
  expect_setequal(lengths(three$model$groups), c(2L, 1L))
  expect_no_warning(suppressMessages(with(three, lm(ozone ~ b))), class = "ditimpute_warning_groups")
  w <- expect_warning(suppressMessages(with(three, lm(ozone ~ b + c))), class = "ditimpute_warning_groups")
  expect_match(conditionMessage(w), "independent groups (c | b, ozone)", fixed = TRUE)
  ex <- quote(lm(ozone ~ b))  # an expression held in a variable: its variables unknown, warned as before
  expect_warning(suppressMessages(with(three, eval(ex))), class = "ditimpute_warning_groups")
})

test_that("complete() and with() give what mice gives on the full mids, without building it (a user review: 77 s for one data set)", {
  skip_if_not_installed("mice")
  n <- 80
  set.seed(2)
  b <- as.numeric(arima.sim(list(ar = 0.7), n))
  d <- data.frame(date = as.Date("2020-01-01") + 0:(n - 1), a = 1 + 0.5 * b + rnorm(n, sd = 0.5), b = b)
  d$a[c(10:20, 50:55)] <- NA
  d$b[c(30:34)] <- NA
  imp <- suppressMessages(impute_series(d, n_samples = 20, seed = 1, threads = 1, separate = "none"))
  mids <- suppressMessages(as_mids(imp))
  for (k in c(1L, 7L, 20L)) expect_identical(suppressMessages(mice::complete(imp, k)), mice::complete(mids, k))
  expect_identical(suppressMessages(mice::complete(imp, "long")), mice::complete(mids, "long"))
  expect_identical(suppressMessages(mice::complete(imp, 3, include = TRUE)), mice::complete(mids, 3, include = TRUE))
  ours <- suppressMessages(with(imp, lm(a ~ b)))
  theirs <- with(mids, lm(a ~ b))
  expect_s3_class(ours, "mira")
  expect_identical(lapply(ours$analyses, coef), lapply(theirs$analyses, coef))
  expect_identical(ours$nmis, theirs$nmis)
  expect_equal(summary(mice::pool(ours)), summary(mice::pool(theirs)))
  expect_input_error(mice::complete(imp, 21), "action")
})

test_that("a variable named like an index column keeps its name and values; mice's reserved names are errors", {
  skip_if_not_installed("mice")
  # a review: a variable named `time` was replaced by the time index in with()
  # and complete(), so lm(y ~ time) regressed on the calendar
  set.seed(1)
  X <- ts(cbind(time = cumsum(rnorm(80)), y = cumsum(rnorm(80))), start = c(2000, 1), frequency = 12)
  X[c(5, 6, 30), "y"] <- NA
  r <- suppressMessages(impute_series(X, n_samples = 20, seed = 1, threads = 1))
  c1 <- suppressMessages(mice::complete(r, 1))
  expect_identical(names(c1), c(".time", "time", "y"))
  expect_identical(c1$time, as.numeric(X[, "time"]))
  ours <- suppressMessages(with(r, lm(y ~ time)))
  path1 <- completions(r, 1)[[1]]
  expect_equal(coef(ours$analyses[[1]]), coef(lm(path1[, "y"] ~ path1[, "time"])), ignore_attr = TRUE)
  # impute() of sequences: `frame` and `sequence` likewise
  spec <- gp_spec(H = 12, d = 2)
  x <- gp_simulate(spec, n = 3, seed = 2)
  dimnames(x) <- list(NULL, NULL, c("frame", "b"))
  x[1, 3:5, 2] <- NA
  imp <- impute(spec, x, n_samples = 20, seed = 1)
  c2 <- suppressMessages(mice::complete(imp, 1))
  expect_identical(names(c2), c("sequence", ".frame", "frame", "b"))
  expect_identical(c2$frame, as.numeric(t(x[, , 1])))
  # a data frame's .id column was dropped by mice's long format without a word
  d <- data.frame(date = as.Date("2021-01-01") + 0:79, y = cumsum(rnorm(80)), .id = rnorm(80))
  d$y[3:5] <- NA
  r2 <- suppressMessages(impute_series(d, n_samples = 20, seed = 1, threads = 1))
  cnd <- expect_input_error(suppressMessages(as_mids(r2)), "object")
  expect_match(conditionMessage(cnd), "\".id\"", fixed = TRUE)
})

test_that("complete() keeps a data frame's row names, as mice does", {
  skip_if_not_installed("mice")
  aq <- airquality[airquality$Month >= 6, ]
  aq$date <- as.Date(sprintf("1973-%02d-%02d", aq$Month, aq$Day))
  aq <- aq[c("date", "Ozone", "Temp")]
  r <- suppressMessages(impute_series(aq, n_samples = 20, seed = 1, threads = 1))
  c1 <- suppressMessages(mice::complete(r, 1))
  expect_identical(rownames(c1), rownames(aq))
  expect_identical(c1$Temp, aq$Temp)
  expect_identical(suppressMessages(mice::complete(r, 2)), mice::complete(suppressMessages(as_mids(r)), 2))
})
