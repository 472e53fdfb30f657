# impute_series() where the truth is known: univariate series simulated from
# 16 models (random walks plus noise, a local linear trend, AR(1) with phi
# 0.5 / 0.95 / 0.99, AR with t(3) innovations, seasonal ARIMA with periods 12
# and 24 (the airline model), an AR plus a fixed season, a level shift, 2%
# spikes, a sine plus noise with and without its frequency, a noiseless
# smooth curve, exp of an AR) and a 3-variable VAR(1) with gaps in one
# variable or in all, 1,000 frames each, hidden as (a) 10% single holes, (b)
# gaps of 5, 20, 60 or 150 frames (about 15% of the series), (c) 30 frames
# at the start or the end. Per model and pattern: the 90% intervals'
# coverage and impute_series()'s MAE over the best of imputeTS's
# na_interpolation, na_kalman, na_seadec and na_ma on the same hidden values
# (na_kalman gets a series of frequency > 24 without it: with it, a call takes
# about 90 s). Default arguments, level = 0.9, one thread.
# Usage: Rscript bench/series_simulated_truth.R [seeds] [out.md] [models]
#   seeds: e.g. 1:6 (default); models: comma-separated names (default all).
suppressPackageStartupMessages({
  library(ditimpute)
  library(imputeTS)
})
args <- commandArgs(trailingOnly = TRUE)
seeds <- if (length(args) >= 1) eval(parse(text = args[1])) else 1:6
out <- if (length(args) >= 2) args[2] else "bench/results/series_simulated_truth.md"

airline <- function(n, m) {  # (0,1,1)(0,1,1)_m: (1 - 0.4 B)(1 - 0.6 B^m) innovations, integrated twice
  e <- rnorm(n + 2 * m + 50)
  w <- stats::filter(e, c(1, -0.4, rep(0, m - 2), -0.6, 0.24), sides = 1)
  w[is.na(w)] <- 0
  ts(utils::tail(as.numeric(diffinv(diffinv(w, lag = m), lag = 1)), n), frequency = m)
}
var_a <- matrix(c(0.7, 0.2, 0, 0.1, 0.6, 0.2, 0, 0.1, 0.8), 3, byrow = TRUE)
var_c <- chol(matrix(c(1, 0.6, 0.3, 0.6, 1, 0.5, 0.3, 0.5, 1), 3))
sim_var <- function(n) {
  y <- matrix(0, n + 200, 3)
  e <- matrix(rnorm(3 * (n + 200)), ncol = 3) %*% var_c
  for (t in 2:(n + 200)) y[t, ] <- var_a %*% y[t - 1, ] + e[t, ]
  y <- y[-(1:200), ]
  colnames(y) <- c("a", "b", "c")
  ts(y)
}
sims <- list(
  rw_lowsnr = function(n) ts(cumsum(rnorm(n, 0, 0.1)) + rnorm(n, 0, 1)),
  rw_highsnr = function(n) ts(cumsum(rnorm(n, 0, 1)) + rnorm(n, 0, 0.1)),
  llt = function(n) { s <- cumsum(rnorm(n, 0, 0.02)); ts(cumsum(s + rnorm(n, 0, 0.1)) + rnorm(n, 0, 0.5)) },
  ar05 = function(n) ts(10 + arima.sim(list(ar = 0.5), n)),
  ar095 = function(n) ts(10 + arima.sim(list(ar = 0.95), n)),
  ar099 = function(n) ts(10 + arima.sim(list(ar = 0.99), n, n.start = 2000)),
  ar_t3 = function(n) ts(arima.sim(list(ar = 0.8), n, rand.gen = function(k, ...) rt(k, 3))),
  sarima12 = function(n) ts(as.numeric(arima.sim(list(ar = 0.5), n)) + 3 * sin(2 * pi * (1:n) / 12) +
                              1.5 * cos(4 * pi * (1:n) / 12), frequency = 12),
  airline12 = function(n) airline(n, 12),
  airline24 = function(n) airline(n, 24),
  levelshift = function(n) ts(arima.sim(list(ar = 0.5), n) + ifelse(seq_len(n) > n / 2, 6, 0)),
  spikes = function(n) {
    y <- as.numeric(arima.sim(list(ar = 0.7), n))
    i <- sample(n, round(0.02 * n))
    y[i] <- y[i] + sample(c(-1, 1), length(i), TRUE) * 8
    ts(y)
  },
  sine = function(n) ts(3 * sin(2 * pi * (1:n) / 50) + rnorm(n, 0, 0.5)),
  sine_f = function(n) ts(3 * sin(2 * pi * (1:n) / 50) + rnorm(n, 0, 0.5), frequency = 50),
  smooth = function(n) { t <- 1:n; ph <- runif(2, 0, 2 * pi); ts(sin(t / 30 + ph[1]) + 0.5 * cos(t / 17 + ph[2])) },
  expar = function(n) ts(exp(1 + arima.sim(list(ar = 0.9), n, sd = 0.5))),
  var_one = sim_var,
  var_all = sim_var)
models <- if (length(args) >= 3) strsplit(args[3], ",")[[1]] else names(sims)
patterns <- c("single", "L5", "L20", "L60", "L150", "start", "end")

# The hidden frames: single holes (10%, none adjacent), non-overlapping gaps
# of L frames (about 15% of the series, at least 10 frames from the ends),
# or the first or last 30.
gap_mask <- function(n, pattern) {
  m <- logical(n)
  place <- function(L, k) {
    tries <- 0
    while (k > 0 && tries < 10000) {
      tries <- tries + 1
      s <- sample(11:(n - L - 10), 1)
      if (!any(m[max(1, s - L):min(n, s + 2 * L - 1)])) {
        m[s:(s + L - 1)] <<- TRUE
        k <- k - 1
      }
    }
  }
  switch(pattern,
         single = for (i in sample(2:(n - 1))) {
           if (sum(m) >= 0.1 * n) break
           if (!m[i - 1] && !m[i + 1]) m[i] <- TRUE
         },
         L5 = place(5, round(0.15 * n / 5)), L20 = place(20, round(0.15 * n / 20)),
         L60 = place(60, max(1, round(0.15 * n / 60))), L150 = place(150, max(1, floor(0.15 * n / 150))),
         start = m[1:30] <- TRUE, end = m[(n - 29):n] <- TRUE)
  m
}

alternatives <- function(yy) {
  f <- function(e) tryCatch(as.numeric(e), error = function(err) rep(NA_real_, length(yy)))
  list(lin = f(na_interpolation(yy)),
       kal = f(suppressWarnings(na_kalman(if (frequency(yy) > 24) as.numeric(yy) else yy))),
       sea = f(suppressWarnings(na_seadec(yy))), ma = f(na_ma(yy)))
}

# One model, pattern and seed: a row per hidden value (and variable).
run_one <- function(model, pattern, seed, n = 1000) {
  set.seed(seed)
  y <- sims[[model]](n)
  m <- gap_mask(n, pattern)
  yy <- y
  cols <- if (model == "var_one") 1 else seq_len(NCOL(y))
  if (is.matrix(y)) yy[m, cols] <- NA else yy[m] <- NA
  imp <- suppressWarnings(impute_series(yy, level = 0.9, seed = seed, threads = 1))
  idx <- which(m)
  do.call(rbind, lapply(cols, function(j) {
    truth <- if (is.matrix(y)) y[idx, j] else as.numeric(y)[idx]
    pick <- function(v) if (is.matrix(v)) v[idx, j] else v[idx]
    a <- alternatives(if (is.matrix(y)) yy[, j] else yy)
    data.frame(model = model, pattern = pattern, seed = seed, cov = pick(imp$lower) <= truth & truth <= pick(imp$upper),
               e_gp = abs(pick(imp$point) - truth), e_lin = abs(a$lin[idx] - truth), e_kal = abs(a$kal[idx] - truth),
               e_sea = abs(a$sea[idx] - truth), e_ma = abs(a$ma[idx] - truth))
  }))
}

rows <- list()
for (mo in models) for (p in patterns) {
  if (startsWith(mo, "var_") && p %in% c("L150", "start")) next
  for (s in seeds) {
    d <- tryCatch(run_one(mo, p, s), error = function(e) {
      message(sprintf("%s %s seed %d: %s", mo, p, s, conditionMessage(e)))
      NULL
    })
    rows[[length(rows) + 1]] <- d
  }
}
d <- do.call(rbind, rows)
cell <- function(z) {
  alt <- vapply(c("e_lin", "e_kal", "e_sea", "e_ma"), function(k) mean(z[[k]], na.rm = TRUE), 0)
  sprintf("%.0f%% %.2f", 100 * mean(z$cov), mean(z$e_gp) / min(alt))
}
tab <- do.call(rbind, lapply(models, function(mo) {
  vals <- vapply(patterns, function(p) {
    z <- d[d$model == mo & d$pattern == p, ]
    if (nrow(z)) cell(z) else "-"
  }, "")
  data.frame(model = mo, t(vals), seeds = length(unique(d$seed[d$model == mo])), check.names = FALSE)
}))
lines <- c("# impute_series() on simulated series (bench/series_simulated_truth.R)", "",
           sprintf("`Rscript bench/series_simulated_truth.R` on %s, seeds %s, ditimpute from %s, one thread. Each cell: 90%% interval coverage and MAE / the best imputeTS method's (na_interpolation, na_kalman, na_seadec, na_ma) on the same hidden values.",
                   format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC"), paste(range(seeds), collapse = "-"),
                   find.package("ditimpute")), "",
           paste("|", paste(names(tab), collapse = " | "), "|"), paste0(paste(rep("|---", ncol(tab)), collapse = ""), "|"),
           apply(tab, 1, function(r) paste("|", paste(r, collapse = " | "), "|")))
writeLines(lines, out)
cat(lines, sep = "\n")
