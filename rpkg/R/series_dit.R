# impute_series(method = "dit"): a small diffusion transformer trained on the
# series' own windows (entries already missing stay out of the loss; extra
# training masks from the series' own gap lengths mixed with the paper's
# strategies), then windows imputed one after another along each sample path,
# each conditioned on the values its path already holds for the frames it
# shares with the window before it.

# The per-variable centre, scale and linear trend (in standardised units, on
# time scaled to [0, 1]) that both methods remove before modelling.
series_trend <- function(v) {
  n_time <- nrow(v)
  center <- colMeans(v, na.rm = TRUE)
  scale <- apply(v, 2, stats::sd, na.rm = TRUE)
  z <- sweep(sweep(v, 2, center), 2, scale, "/")
  tt <- (seq_len(n_time) - 1) / max(1, n_time - 1)
  trend <- vapply(seq_len(ncol(v)), function(j) {
    ok <- !is.na(z[, j])
    stats::coef(stats::lm.fit(cbind(1, tt[ok]), z[ok, j]))
  }, numeric(2))
  trend_path <- cbind(1, tt) %*% trend
  list(center = center, scale = scale, trend = trend, trend_path = trend_path, resid = z - trend_path)
}

# The DiT's options and their defaults: a 64/2/4 network trained 800 steps
# with dit_fit()'s recipe (cosine learning rate, warmed-up EMA). On the first
# 150 x 4 rows of EuStockMarkets (bench/dit_series_defaults.R,
# bench/results/dit_series_defaults.md; one thread of a loaded machine) it
# took 106 s against 10 s for the former 32/1/2 and 300 steps, with MAE
# 0.0075 against 0.0106 (structural GP 0.0062) and 95% intervals covering
# 91.9% against 95.2%; 1,500 and 3,000 steps lowered the MAE no further and
# covered 87% and 79% (the model fits the ~35 windows of a short series).
series_dit_options <- function(dit, period, n_time, call = rlang::caller_env()) {
  if (!is.list(dit)) abort_input("dit", "must be a list of options (H, width, depth, heads, steps, batch_size, sample_steps).",
                                 call = call)
  known <- c("H", "width", "depth", "heads", "steps", "batch_size", "sample_steps")
  bad <- setdiff(names(dit), known)
  if (length(bad)) abort_input("dit", sprintf("has an unknown option \"%s\"; known: %s.", bad[1], paste(known, collapse = ", ")),
                               call = call)
  o <- utils::modifyList(list(H = min(n_time, max(2 * round(period), 16)), width = 64, depth = 2, heads = 4, steps = 800,
                              batch_size = 32, sample_steps = 20), dit)
  for (k in known) o[[k]] <- check_count(o[[k]], arg = "dit", min = if (k == "H") 4 else 1, call = call)
  if (o$H > n_time) abort_input("dit", sprintf("H = %d is longer than the series (%d frames).", o$H, n_time), call = call)
  o
}

# Training masks: one block of each of the series' own gap lengths (capped
# at half a window), in proportion to how often each occurs, for half of the
# draws; the paper's scattered frames and one long block for the rest.
series_dit_strategy <- function(miss, H) {
  lens <- pmin(gap_runs(miss, seq_len(nrow(miss)))$length, H %/% 2)
  gens <- c(sprintf("%dx1", max(1L, H %/% 6L)), sprintf("1x%d", max(2L, H %/% 4L)))
  w <- c(0.25, 0.25)
  if (length(lens)) {
    tab <- table(lens)
    gens <- c(gens, sprintf("1x%s", names(tab)))
    w <- c(w, 0.5 * as.numeric(tab) / sum(tab))
  } else {
    w <- w * 2
  }
  mask_strategy(gens, weights = w)
}

impute_series_dit <- function(v, level, n_samples, period, dit, seed, threads, call = rlang::caller_env()) {
  check_torch(call = call)
  n_time <- nrow(v); d <- ncol(v)
  o <- series_dit_options(dit, period, n_time, call = call)
  H <- o$H
  tr <- series_trend(v)
  resid <- tr$resid
  miss <- is.na(v)
  start <- proc.time()[["elapsed"]]
  # Training windows: every H/4 frames (and the last one).
  starts <- unique(c(seq.int(1L, n_time - H + 1L, by = max(1L, H %/% 4L)), n_time - H + 1L))
  train <- array(NA_real_, c(length(starts), H, d))
  for (k in seq_along(starts)) train[k, , ] <- resid[starts[k] + seq_len(H) - 1L, , drop = FALSE]
  train <- train[apply(train, 1, function(w) any(!is.na(w))), , , drop = FALSE]
  strategy <- series_dit_strategy(miss, H)
  fit <- dit_fit(train, config = dit_config(H, d, width = o$width, depth = o$depth, heads = o$heads), strategy = strategy,
                 steps = o$steps, batch_size = o$batch_size, validation = 0, seed = sub_seed(seed, 11),
                 threads = threads, progress = FALSE)
  fit_seconds <- proc.time()[["elapsed"]] - start
  # Windows overlapping by half: window k's first half is what its path holds.
  ctx <- H %/% 2L
  stride <- max(1L, H - ctx)
  wstart <- unique(pmin(seq.int(1L, max(1L, n_time - H + 1L) + stride - 1L, by = stride), n_time - H + 1L))
  paths <- array(rep(resid, each = n_samples), c(n_samples, n_time, d))  # NA where missing, per path
  done <- matrix(FALSE, n_time, d)  # entries each path already holds
  done[!miss] <- TRUE
  n_windows <- 0L
  for (k in seq_along(wstart)) {
    rows <- wstart[k] + seq_len(H) - 1L
    todo <- miss[rows, , drop = FALSE] & !done[rows, , drop = FALSE]
    if (!any(todo)) next
    cases <- paths[, rows, , drop = FALSE]
    if (all(is.na(cases[1, , ]))) {
      abort_input("x", sprintf("frames %d-%d have no observed value: use a longer dit window (dit = list(H = ...)) or method = \"gp\".",
                               rows[1], rows[H]), call = call)
    }
    imp <- impute(fit, cases, n_samples = 2, level = 0.5, region = "quantile", steps = o$sample_steps,
                  seed = sub_seed(seed, 100 + k), threads = threads)
    m <- is.na(cases[1, , ])
    ij <- missing_index(matrix(m, H, d))
    for (z in seq_len(n_samples)) {
      draw <- imp$samples[[z]][1, ]
      for (a in seq_len(nrow(ij))) paths[z, rows[ij[a, 1]], ij[a, 2]] <- draw[a]
    }
    done[rows, ] <- TRUE
    n_windows <- n_windows + 1L
  }
  ij <- missing_index(miss)
  samples <- vapply(seq_len(nrow(ij)), function(a) paths[, ij[a, 1], ij[a, 2]] + tr$trend_path[ij[a, 1], ij[a, 2]],
                    numeric(n_samples))
  samples <- matrix(samples, n_samples)
  point <- sweep(sweep(v, 2, tr$center), 2, tr$scale, "/")
  if (nrow(ij)) point[ij] <- colMeans(samples)
  model <- structure(list(kernel_name = "dit", center = tr$center, scale = tr$scale, trend = tr$trend, dit = fit,
                          options = o, strategy = strategy, n_windows_trained = dim(train)[1],
                          fit_seconds = fit_seconds, variables = colnames(v)),
                     class = "ditimpute_series_dit_model")
  list(res = list(point = point, samples = samples, blocks = n_windows), model = model,
       win = c(past = ctx, block = stride, future = 0L))
}

#' @export
print.ditimpute_series_dit_model <- function(x, ...) {
  o <- x$options
  cat(sprintf("<ditimpute_series_dit_model> linear trend + DiT (H = %d, width %d, depth %d) trained %d steps on %d windows of the series\n",
              o$H, o$width, o$depth, o$steps, x$n_windows_trained))
  cat("  training masks: ")
  print(x$strategy)
  invisible(x)
}

# The DiT paths' result in the data's units: the completed values (observed
# entries exactly as given), the draws of the missing entries (n_samples x m,
# frame-major as missing_index()) and per-entry intervals point +/- z sd.
series_intervals <- function(res, model, v, level, n_samples) {
  miss <- is.na(v)
  ij <- missing_index(miss)
  sc <- model$scale[ij[, 2]]; ce <- model$center[ij[, 2]]
  samples <- sweep(sweep(res$samples, 2, sc, "*"), 2, ce, "+")
  point <- sweep(sweep(res$point, 2, model$scale, "*"), 2, model$center, "+")
  point[!miss] <- v[!miss]  # exactly the observed values, not a rounding of them
  dimnames(point) <- dimnames(v)
  lower <- upper <- matrix(NA_real_, nrow(v), ncol(v), dimnames = dimnames(v))
  if (nrow(ij)) {
    sds <- sqrt(pmax(0, colMeans(samples^2) - colMeans(samples)^2) * n_samples / (n_samples - 1))
    z <- stats::qnorm(1 - (1 - level) / 2)
    lower[ij] <- point[ij] - z * sds
    upper[ij] <- point[ij] + z * sds
  }
  list(point = point, lower = lower, upper = upper, samples = samples, ij = ij)
}
