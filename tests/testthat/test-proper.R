# Proper multiple imputation (impute_series(proper = TRUE), rpkg/R/proper.R):
# the parameter draws follow the distribution they are meant to, the
# completions carry more between-imputation spread of an analysis than the
# improper ones, and the results are repeatable.

proper_series <- function(n = 60, seed = 5, gaps = c(10:20, 40:46)) {
  set.seed(seed)
  b <- stats::rnorm(n)
  a <- 1 + 0.5 * b + stats::rnorm(n, sd = 0.5)
  x <- cbind(a = a, b = b)
  x[gaps, "a"] <- NA
  x
}

test_that("the parameter draws have the intended means and covariance", {
  y <- as.numeric(datasets::Nile)
  y[c(20:30, 60:64)] <- NA
  imp <- impute_series(y, n_samples = 20, seed = 1, threads = 1)
  v <- matrix(y, ncol = 1, dimnames = list(NULL, colnames(imp$x)))
  ys <- ditimpute:::scale_cols(v, imp$model)
  th <- ditimpute:::proper_theta(imp$model, ys, threads = 1)
  expect_gt(length(th$names), 0)
  # The fit is a maximum: the information (inverse covariance) is positive definite.
  expect_true(all(eigen(th$cov, symmetric = TRUE)$values > 0))
  K <- 2000
  cands <- ditimpute:::proper_candidates(imp$model, v, ys, K, seed = 3, threads = 1, forms = FALSE)
  draws <- t(vapply(cands, function(c) log(unlist(c$spec[th$names])), numeric(length(th$names))))
  # Mean within 4 Monte Carlo standard errors sqrt(var / K) of the fitted log-parameters.
  se <- sqrt(diag(th$cov) / K)
  expect_true(all(abs(colMeans(draws) - th$theta) < 4 * se))
  # Variances: the sample variance of K normal draws has relative sd sqrt(2 / (K - 1)) ~ 0.032; 4 of them.
  expect_true(all(abs(apply(draws, 2, stats::var) / diag(th$cov) - 1) < 4 * sqrt(2 / (K - 1))))
  # The whole covariance: a sample covariance s_ij of K normal draws has variance
  # (S_ii S_jj + S_ij^2) / (K - 1); every entry within 4 of its standard errors.
  S <- th$cov
  tol <- 4 * sqrt((outer(diag(S), diag(S)) + S^2) / (K - 1))
  expect_true(all(abs(stats::cov(draws) - S) < tol))
  # Lambda (1 x 1 here) from the inverse Wishart W^-1(n Lambda, n), d = 1: mean n Lambda / (n - 2),
  # variance mean^2 * 2 / (n - 4); 4 Monte Carlo standard errors.
  n <- ditimpute:::proper_lambda_df(imp$model, v)
  expect_equal(n, sum(!is.na(y)))
  lam <- vapply(cands, function(c) c$Lambda[1, 1], 0)
  mu <- n * imp$model$Lambda[1, 1] / (n - 2)
  expect_lt(abs(mean(lam) - mu), 4 * mu * sqrt(2 / (n - 4)) / sqrt(K))
})

test_that("each path draws its form with probability its BIC weight", {
  # WWWusage's first 40 minutes with a gap: the stationary, level and trend
  # forms all keep a BIC weight over 0.1. (The model class is not weighed on
  # hidden gaps here: on this gap they choose the level class, whose forms
  # alone would then be drawn, one of them with weight 0.99.)
  y <- as.numeric(datasets::WWWusage[1:40])
  y[21:26] <- NA
  old <- ditimpute:::series_gap_models
  utils::assignInNamespace("series_gap_models", FALSE, "ditimpute")
  withr::defer(utils::assignInNamespace("series_gap_models", old, "ditimpute"))
  imp <- impute_series(y, n_samples = 20, seed = 1, threads = 1)
  tab <- imp$model$candidates
  w <- ditimpute:::proper_form_weights(imp$model$forms$BIC)
  expect_equal(w, exp(-tab$BIC / 2) / sum(exp(-tab$BIC / 2)))
  expect_gt(sum(w > 0.05), 1)
  v <- matrix(y, ncol = 1, dimnames = list(NULL, colnames(imp$x)))
  ys <- ditimpute:::scale_cols(v, imp$model)
  K <- 1000
  cands <- ditimpute:::proper_candidates(imp$model, v, ys, K, seed = 3, threads = 1)
  drawn <- vapply(cands, function(c) c$spec$model, "")
  share <- vapply(tab$model, function(f) mean(drawn == f), 0)
  # Each form's share within 4 binomial standard errors of its weight.
  expect_true(all(abs(share - w) <= 4 * sqrt(w * (1 - w) / K) + 1e-12))
  # A path's parameters are drawn around its own form's fit: the median log
  # lengthscale of a form's paths (sd at most 1 on the log scale, the floor;
  # the median of >= 100 draws has SE <= 0.13) within 0.5 of that form's.
  for (f in which(share * K >= 100)) {
    ls <- vapply(cands[drawn == tab$model[f]], function(c) c$spec$smooth_lengthscale, 0)
    expect_lt(abs(stats::median(log(ls)) - log(imp$model$forms$candidates[[f]]$spec$smooth_lengthscale)), 0.5)
  }
  # forms = FALSE keeps the chosen form on every path.
  one <- ditimpute:::proper_candidates(imp$model, v, ys, 50, seed = 3, threads = 1, forms = FALSE)
  expect_true(all(vapply(one, function(c) c$spec$model, "") == imp$model$model_name))
})

test_that("parameter draws stay inside the core's bounds", {
  # A periodic lengthscale moved next to the core's lower bound (0.1): draws of
  # sd up to 1 on the log scale cross it, and are held at it.
  y <- stats::ts(log(as.numeric(datasets::AirPassengers)), frequency = 12)
  y[c(30:40, 100:104)] <- NA
  imp <- impute_series(y, n_samples = 20, seed = 1, threads = 1, kernel = "seasonal", proper = FALSE)
  m <- imp$model
  m$candidate$spec$periodic_lengthscale <- 0.13
  v <- matrix(as.numeric(y), ncol = 1, dimnames = list(NULL, colnames(imp$x)))
  ys <- ditimpute:::scale_cols(v, m)
  th <- ditimpute:::proper_theta(m, ys, threads = 1)
  expect_true("periodic_lengthscale" %in% th$names)
  cands <- ditimpute:::proper_candidates(m, v, ys, 200, seed = 3, threads = 1, forms = FALSE)
  for (p in th$names) {
    drawn <- vapply(cands, function(c) c$spec[[p]], 0)
    b <- ditimpute:::proper_parameters(m$candidate$spec)[[p]]
    expect_true(all(drawn >= b[1] & drawn <= b[2]), label = p)
  }
  pl <- vapply(cands, function(c) c$spec$periodic_lengthscale, 0)
  expect_true(any(pl == 0.1))
  low <- cands[[which.min(pl)]]
  res <- ditimpute:::cpp_structural_impute(ys, low, list(n_samples = 1L, seed = 1, threads = 1L))
  expect_true(all(is.finite(res$mean)))
})

test_that("the draws' factor is continuous in the covariance (last-bit changes move no draw)", {
  # The BLAS's summation order can change the last bit of the parameter
  # covariance from one run to the next; the factor the draws use must not
  # turn that into different draws (eigenvectors' signs, or the basis of a
  # repeated eigenvalue, are arbitrary: V sqrt(D) jumped by O(1)).
  set.seed(11)
  Q <- qr.Q(qr(matrix(stats::rnorm(25), 5)))
  for (vals in list(c(3, 1, 1, 0.5, 0.2), c(1, 0.74, 0.35, 0.11, 0.02), c(2, 1, 0, 0, 0))) {
    S <- Q %*% diag(vals) %*% t(Q)
    S <- (S + t(S)) / 2
    U <- ditimpute:::chol_psd(S)
    expect_lt(max(abs(crossprod(U) - S)), 1e-12)
    for (k in 1:5) {
      E <- matrix(stats::rnorm(25), 5) * 1e-15
      U2 <- ditimpute:::chol_psd(S + (E + t(E)) / 2)
      expect_lt(max(abs(U2 - U)), 1e-6)  # continuity (a repeated zero eigenvalue moves it ~sqrt(1e-15))
    }
  }
})

test_that("a path whose conditional draw fails numerically gets new parameters", {
  # Replication 617 of bench/mi_pooling.R's iid scenario: a drawn level form
  # (rate at its bound, lengthscale 1e5) with `a` missing in the first frame
  # made the core's backward sampler return a draw of 1.1e5 (means and sds
  # right, about 1): every completion's slope estimate was -36. The core's
  # sampler is now fixed (cpp/tests/test_structural.cpp has that draw's
  # parameters); the proper path's redraw remains as a guard.
  set.seed(1617)
  b <- stats::rnorm(60)
  a <- 1 + 0.5 * b + stats::rnorm(60, sd = 0.5)
  hide <- rep(FALSE, 60)
  while (sum(hide) < 18) {
    len <- min(sample(5:15, 1), 18 - sum(hide))
    start <- sample.int(60 - len + 1, 1)
    hide[start + seq_len(len) - 1] <- TRUE
  }
  x <- cbind(a = a, b = b)
  x[hide, "a"] <- NA
  expect_true(hide[1])
  imp <- impute_series(x, n_samples = 20, seed = 617, threads = 1, proper = TRUE)
  s <- imp$samples[[1]]
  # Every draw within 10 of its entry's interval half-widths (1.645 sd) of the point.
  half <- (imp$upper - imp$lower)[hide, "a"] / 2
  expect_true(all(abs(sweep(s, 2, imp$point[hide, "a"])) <= 10 * rep(half, each = nrow(s))))
})

test_that("proper completions spread an analysis more than improper ones", {
  x <- proper_series()
  slopes <- function(imp) vapply(completions(imp), function(d) stats::coef(stats::lm(a ~ b, as.data.frame(d)))[["b"]], 0)
  s0 <- slopes(impute_series(x, n_samples = 400, seed = 1, threads = 1))
  s1 <- slopes(impute_series(x, n_samples = 400, seed = 1, threads = 1, proper = TRUE))
  # Between-imputation variance of the slope: measured 1.3-1.4 times larger with proper draws on
  # this series (seeds 1-3, 200 paths). Each variance from 400 paths has relative sd ~ sqrt(2 / 399),
  # so log(ratio) has sd ~ 0.1: a true ratio of 1.3 (log 0.26) stays above 1 by 2.6 sd.
  expect_gt(stats::var(s1) / stats::var(s0), 1)
  # The slope's centre is the same (the draws are centred on the fit): within 4 standard errors.
  expect_lt(abs(mean(s1) - mean(s0)), 4 * sqrt(stats::var(s0) / 400 + stats::var(s1) / 400))
})

test_that("proper imputation is repeatable, keeps R's stream, and its intervals are the mixture's", {
  x <- proper_series()
  set.seed(9)
  u1 <- stats::runif(1)
  set.seed(9)
  a <- impute_series(x, n_samples = 30, seed = 4, threads = 1, proper = TRUE)
  u2 <- stats::runif(1)
  expect_identical(u1, u2)
  b <- impute_series(x, n_samples = 30, seed = 4, threads = 1, proper = TRUE)
  expect_identical(a$samples, b$samples)
  expect_true(a$model$proper)
  miss <- is.na(x)
  expect_true(all(a$lower[miss] < a$point[miss] & a$point[miss] < a$upper[miss]))
  expect_false(anyNA(a$point))
  # The mixture's interval is at least as wide, on average, as the improper one of the fit. Since the
  # improper intervals carry the stationary form's line uncertainty too (2026-12-05), the parameter draws
  # widen them by about 2% here, as much as the Monte Carlo error of 30 paths: so 400 paths, five seeds.
  i0 <- impute_series(x, n_samples = 30, seed = 4, threads = 1)
  w_mix <- mean(vapply(1:5, function(s) {
    m <- impute_series(x, n_samples = 400, seed = s, threads = 1, proper = TRUE)
    mean(m$upper[miss] - m$lower[miss])
  }, 0))
  expect_gt(w_mix, mean(i0$upper[miss] - i0$lower[miss]))
})

test_that("proper is checked", {
  x <- proper_series()
  expect_input_error(impute_series(x, proper = NA), "proper")
  expect_input_error(impute_series(x, proper = "yes"), "proper")
  expect_input_error(impute_series(x, method = "dit", proper = TRUE), "proper")
})

test_that("proper = \"auto\" draws the parameters per path on series of fewer than 60 frames, or with an end gap", {
  short <- proper_series(n = 40, gaps = c(5:8, 25:30))
  auto <- impute_series(short, n_samples = 20, seed = 2, threads = 1)
  expect_true(auto$model$proper)
  on <- impute_series(short, n_samples = 20, seed = 2, threads = 1, proper = TRUE)
  expect_identical(auto$point, on$point)
  expect_identical(auto$upper, on$upper)
  expect_match(printed(auto), "proper draws (form and parameters drawn per path)", fixed = TRUE)
  expect_match(printed(summary(auto)), "95% intervals from the mixture of 20 proper draws", fixed = TRUE)
  expect_input_error(summary(auto, level = 0.5), "level")  # not silently ignored
  long <- proper_series(n = 60)
  auto <- impute_series(long, n_samples = 20, seed = 2, threads = 1)
  expect_false(auto$model$proper)
  off <- impute_series(long, n_samples = 20, seed = 2, threads = 1, proper = FALSE)
  expect_identical(auto$upper, off$upper)
  expect_false(grepl("proper", printed(auto)))
  expect_match(printed(summary(auto)), "95% intervals exact (the fitted model's conditional law", fixed = TRUE)
  # a gap at either end of any variable: the model extrapolates there, so the
  # form and parameters are drawn per path (up to 20,000 frames)
  for (ends in list(1:3, 58:60)) {
    x <- proper_series(n = 60, gaps = c(10:20, ends))
    auto <- impute_series(x, n_samples = 20, seed = 2, threads = 1)
    expect_true(auto$model$proper)
    on <- impute_series(x, n_samples = 20, seed = 2, threads = 1, proper = TRUE)
    expect_identical(auto$upper, on$upper)
  }
  x <- proper_series(n = 60)
  x[60, "b"] <- NA
  expect_true(impute_series(x, n_samples = 20, seed = 2, threads = 1)$model$proper)
  rule <- ditimpute:::series_proper_auto
  expect_true(rule(matrix(c(NA, rep(1, 19999)))))
  expect_false(rule(matrix(c(NA, rep(1, 20000)))))  # the cost bound
  expect_false(rule(matrix(c(1, NA, rep(1, 99)))))  # an inner gap on a long series
  expect_true(rule(matrix(c(1, NA, rep(1, 57)))))   # any series under 60 frames
})

test_that("as_mids() says once that improper completions leave out the parameters' uncertainty", {
  skip_if_not_installed("mice")
  withr::local_options(rlib_message_verbosity = "verbose")  # every time, not once per session
  x <- proper_series()
  improper <- impute_series(x, n_samples = 20, seed = 1, threads = 1)
  expect_message(as_mids(improper), class = "ditimpute_improper_message")
  proper <- impute_series(x, n_samples = 20, seed = 1, threads = 1, proper = TRUE)
  expect_no_message(as_mids(proper), class = "ditimpute_improper_message")
  pooled <- mice::pool(with(proper, lm(a ~ b)))
  expect_true(all(is.finite(pooled$pooled$fmi)))
  # while knitr renders, every time: once per session, a report rendered a
  # second time in the same session lost the caveat (a review)
  withr::local_options(rlib_message_verbosity = "default", knitr.in.progress = TRUE)
  expect_message(as_mids(improper), class = "ditimpute_improper_message")
  expect_message(as_mids(improper), class = "ditimpute_improper_message")
})

test_that("confint() of a proper imputation at another level uses the mixture's Gaussian law, as at its own level", {
  # a review: at any other level it switched to the paths' order statistics,
  # so a 94.99% interval came out wider than the 95% one
  m <- ts(cbind(a = as.numeric(mdeaths), b = as.numeric(fdeaths)), start = 1974, frequency = 12)
  m[10:14, 1] <- NA; m[40:45, 2] <- NA; m[70:72, ] <- NA   # an end gap: proper draws
  im <- suppressWarnings(impute_series(m, n_samples = 50, seed = 1, threads = 1, transform = "none"))
  expect_true(isTRUE(im$model$proper))
  c95 <- confint(im, level = 0.95)
  c9499 <- confint(im, level = 0.9499)
  c50 <- confint(im, level = 0.5)
  expect_true(all(c9499$upper - c9499$lower <= c95$upper - c95$lower))
  expect_equal(c9499$upper - c9499$lower, c95$upper - c95$lower, tolerance = 1e-3)
  # symmetric about the point on the data's own scale, widths in the ratio of the normal quantiles
  expect_equal(c50$upper - c50$estimate, c50$estimate - c50$lower, tolerance = 1e-8)
  expect_equal((c50$upper - c50$lower) / (c95$upper - c95$lower), rep(qnorm(0.75) / qnorm(0.975), nrow(c50)),
               tolerance = 1e-8)
})

test_that("proper draws are the same on one thread or two", {
  # the paths run side by side in one core call; each path's numbers are its own
  m <- ts(cbind(a = as.numeric(mdeaths), b = as.numeric(fdeaths)), start = 1974, frequency = 12)
  m[1:2, 1] <- NA; m[30:36, 2] <- NA
  one <- suppressWarnings(impute_series(m, n_samples = 30, seed = 3, threads = 1, proper = TRUE))
  two <- suppressWarnings(impute_series(m, n_samples = 30, seed = 3, threads = 2, proper = TRUE))
  expect_identical(one$samples, two$samples)
  expect_identical(one$lower, two$lower)
  expect_identical(one$point, two$point)
})

test_that("progress says when the paths are proper draws, each a smoothing of the whole series", {
  # a review: 100 proper paths of 35,064 x 3 took 178 s behind a bare "Drawing 100 sample paths"
  x <- replace(as.numeric(Nile), c(1:2, 40:45), NA)
  msgs <- character()
  withCallingHandlers(suppressWarnings(impute_series(x, n_samples = 20, seed = 1, threads = 1, proper = TRUE,
                                                     progress = TRUE)),
                      message = function(m) {
                        msgs <<- c(msgs, conditionMessage(m))
                        invokeRestart("muffleMessage")
                      })
  expect_true(any(grepl("Drawing 20 proper paths of 8 missing values (each smooths 100 frames)", msgs, fixed = TRUE)))
})
