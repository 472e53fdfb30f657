# impute_series(method = "dit"): a small diffusion transformer trained on the
# series' own windows (entries already missing stay out of the loss; extra
# training masks from the series' own gap lengths mixed with the paper's
# strategies), then the series drawn block by block by the core's block
# sampler (cpp/include/ditimpute/series_blocks.hpp), the loop the GP's window
# imputers share.

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
  trend_path <- series_trend_path(trend, n_time)
  list(center = center, scale = scale, trend = trend, trend_path = trend_path, resid = z - trend_path)
}

# The trend lines (2 x d: intercepts, slopes on time scaled to [0, 1]) over
# n_time frames: n_time x d.
series_trend_path <- function(trend, n_time) {
  cbind(1, (seq_len(n_time) - 1) / max(1, n_time - 1)) %*% trend
}

# The DiT's options and their defaults: a 64/2/4 network trained 800 steps
# with dit_fit()'s recipe (cosine learning rate, warmed-up EMA). On the first
# 150 x 4 rows of EuStockMarkets (bench/dit_series_defaults.R,
# bench/results/dit_series_defaults.md; one thread of a loaded machine) it
# took 106 s against 10 s for the former 32/1/2 and 300 steps, with MAE
# 0.0075 against 0.0106 (structural GP 0.0062) and 95% intervals covering
# 91.9% against 95.2%; 1,500 and 3,000 steps lowered the MAE no further and
# covered 87% and 79% (the model fits the ~35 windows of a short series).
# With single-variable blocks among the masks (2026-12-07): MAE 0.00663
# against 0.00703, trained in 7 s on an idle core.
series_dit_options <- function(dit, period, n_time, call = rlang::caller_env()) {
  if (!is.list(dit)) {
    abort_input("dit", "must be a list of options (H, width, depth, heads, steps, batch_size, sample_steps, time_limit).",
                call = call)
  }
  counts <- c("H", "width", "depth", "heads", "steps", "batch_size", "sample_steps")
  known <- c(counts, "time_limit")
  # unnamed or repeated entries were dropped without a word (a review:
  # list(16) trained the defaults, list(width = 16, width = 32) width 16)
  nms <- names(dit) %||% rep("", length(dit))
  if (any(is.na(nms) | !nzchar(nms))) {
    abort_input("dit", sprintf("has an unnamed entry (entry %d): name each option, e.g. list(H = 24, steps = 400); known: %s.",
                               which(is.na(nms) | !nzchar(nms))[1], paste(known, collapse = ", ")), call = call)
  }
  if (anyDuplicated(nms)) {
    abort_input("dit", sprintf("names the option \"%s\" twice: give it once.", nms[anyDuplicated(nms)]), call = call)
  }
  bad <- setdiff(names(dit), known)
  if (length(bad)) abort_input("dit", sprintf("has an unknown option \"%s\"; known: %s.", bad[1], paste(known, collapse = ", ")),
                               call = call)
  time_limit <- dit$time_limit
  dit$time_limit <- NULL
  o <- utils::modifyList(list(H = min(n_time, max(2 * round(period), 16)), width = 64, depth = 2, heads = 4, steps = 800,
                              batch_size = 32, sample_steps = 20), dit)
  # the error names the option: "`dit`: steps must be at least 1, not -1."
  for (k in counts) {
    o[[k]] <- tryCatch(check_count(o[[k]], arg = "dit", min = if (k == "H") 4 else 1, call = call),
                       ditimpute_error_input = function(e) {
                         abort_input("dit", paste(k, sub("^`dit`: ", "", conditionMessage(e))), call = call)
                       })
  }
  if (o$H > n_time) abort_input("dit", sprintf("H = %d is longer than the series (%d frames).", o$H, n_time), call = call)
  # the network's shape, in the words of the other options (dit_config()
  # would name its own arguments, which this call does not have)
  if (o$width < 2 || o$width %% 2 != 0) {
    abort_input("dit", sprintf("width must be an even number >= 2 (sin/cos positions), not %d.", o$width), call = call)
  }
  if (o$width %% o$heads != 0) {
    abort_input("dit", sprintf("heads must divide width (%d), not %d.", o$width, o$heads), call = call)
  }
  # Seconds of training at most (the step count still caps it); NULL or Inf: none (as in dit_fit()).
  if (identical(time_limit, Inf)) time_limit <- NULL
  if (!is.null(time_limit)) {
    if (!is.numeric(time_limit) || length(time_limit) != 1 || is.na(time_limit) || !(time_limit > 0) ||
        !is.finite(time_limit)) {
      abort_input("dit", "time_limit must be a number of seconds > 0.", call = call)
    }
    o$time_limit <- time_limit
  }
  o
}

# Training masks: one block of each of the series' own gap lengths (capped
# at half a window), in proportion to how often each occurs, for half of the
# draws; the paper's scattered frames and one long block for the rest. A run
# of frames where every variable is missing is drawn as whole frames ("1xL",
# once, not once per variable); a variable's run of missing values in frames
# where others are observed as a block of that variable ("v1xL"), so that
# sensors failing at staggered times give both (a review). On single-variable
# gaps of four multivariate series, frame blocks alone left the DiT's error
# 1.13x higher (bench/results/dit_series_variable_gaps.md).
series_dit_strategy <- function(miss, H) {
  all_missing <- rowSums(miss) == ncol(miss)
  whole <- rle(all_missing)
  whole_lens <- whole$lengths[whole$values]
  partial <- miss & !all_missing
  part_lens <- unlist(lapply(seq_len(ncol(partial)), function(j) {
    r <- rle(partial[, j])
    r$lengths[r$values]
  }))
  lens <- pmin(c(whole_lens, part_lens), H %/% 2)
  kinds <- rep(c("1x%d", "v1x%d"), c(length(whole_lens), length(part_lens)))
  gens <- c(sprintf("%dx1", max(1L, H %/% 6L)), sprintf("1x%d", max(2L, H %/% 4L)))
  w <- c(0.25, 0.25)
  if (length(lens)) {
    tab <- table(sprintf(kinds, lens))
    gens <- c(gens, names(tab))
    w <- c(w, 0.5 * as.numeric(tab) / sum(tab))
  } else {
    w <- w * 2
  }
  mask_strategy(gens, weights = w)
}

# The DiT models the series on the scale the GP path would (series_transforms():
# Box-Cox or log for positive variables spanning an order of magnitude with
# transform = "auto", a bounded scale for variables with bounds, the data's
# own with "none"): trend, training and drawing happen there, and the sample
# paths and the interval ends are mapped back variable by variable. The maps
# are increasing, so the paths' order-statistic intervals map endpoint by
# endpoint; the point of a transformed variable is the paths' median (the
# median maps back as the intervals do; as with method = "gp", a conditional
# median), of an untransformed one their mean.
impute_series_dit <- function(v, level, n_samples, period, dit, seed, threads, transform = "none", bounds = NULL,
                              progress = FALSE, reuse = NULL, call = rlang::caller_env()) {
  check_torch(call = call)
  miss <- is.na(v)
  # the stages as the GP path reports them (a review: only dit_fit()'s bar
  # showed, and on ETTh1's 1,000 x 7 the 11 s of sampling had no output)
  step <- function(text) if (progress) cli::cli_progress_step(text, .envir = here)
  here <- environment()
  if (is.null(reuse)) {
    model <- series_dit_train(v, period, dit, seed, threads, transform, bounds, step, progress, call = call)
    resid <- model$resid
    model$resid <- NULL
  } else {
    model <- reuse  # trained before on these frames: its trend, centre and scale apply to v as they are
    model$reused <- TRUE
    resid <- series_dit_resid(model, v)
  }
  tf <- model$transform
  step(drawing_step_text(n_samples, sum(miss)))
  res <- series_dit_draw(model, resid, level, n_samples, sub_seed(seed, 100), threads, call = call)
  point <- series_dit_back(res$point, model)
  lower <- series_dit_back(res$lower, model)
  upper <- series_dit_back(res$upper, model)
  ij <- missing_index(miss)
  samples <- res$samples[[1]]
  if (nrow(ij)) {
    samples <- samples + rep(series_trend_path(model$trend, nrow(v))[ij], each = nrow(samples))
    samples <- sweep(sweep(samples, 2, model$scale[ij[, 2]], "*"), 2, model$center[ij[, 2]], "+")
    samples <- from_model_scale_vec(samples, rep(ij[, 2], each = nrow(samples)), tf)
    mapped <- !is.na(tf$lambda[ij[, 2]]) | !is.na(tf$lower[ij[, 2]])
    if (any(mapped)) point[ij[mapped, , drop = FALSE]] <- apply(samples[, mapped, drop = FALSE], 2, stats::median)
  }
  point[!miss] <- v[!miss]  # exactly the observed values, not a rounding of them
  dimnames(point) <- dimnames(lower) <- dimnames(upper) <- dimnames(v)
  list(iv = list(point = point, lower = lower, upper = upper, samples = samples, ij = ij), model = model,
       win = res$window, blocks = length(res$starts))
}

# impute_series(method = "dit")'s training: the series on its model scale
# (series_transforms()), less its centre, scale and linear trend
# (series_trend()), cut into windows of H frames every H/4 (and the last),
# on which a DiT learns with the series' own gap lengths among its masks.
# The model, with the residuals (`resid`) the draws start from.
series_dit_train <- function(v, period, dit, seed, threads, transform, bounds, step, progress, call = rlang::caller_env()) {
  n_time <- nrow(v); d <- ncol(v)
  o <- series_dit_options(dit, period, n_time, call = call)
  H <- o$H
  tf <- series_transforms(v, transform, bounds, call = call)  # the same errors as method = "gp" ("log" of values <= 0)
  u <- to_model_scale(v, tf)
  tr <- series_trend(u)
  resid <- tr$resid
  start <- proc.time()[["elapsed"]]
  # Training windows: every H/4 frames (and the last one).
  starts <- unique(c(seq.int(1L, n_time - H + 1L, by = max(1L, H %/% 4L)), n_time - H + 1L))
  train <- array(NA_real_, c(length(starts), H, d))
  for (k in seq_along(starts)) train[k, , ] <- resid[starts[k] + seq_len(H) - 1L, , drop = FALSE]
  train <- train[apply(train, 1, function(w) any(!is.na(w))), , , drop = FALSE]
  # Standardised residuals (their sd can fall far below 1 where the trend
  # explains a variable): no scale warning from dit_fit() that the user
  # could not act on.
  attr(train, "ditimpute_scaled") <- TRUE
  strategy <- series_dit_strategy(is.na(v), H)
  step(sprintf("Training the DiT on %s window%s of %d frames x %s", format(dim(train)[1], big.mark = ","),
               if (dim(train)[1] == 1) "" else "s", H, plural(d, "variable")))
  fit <- dit_fit(train, config = dit_config(H, d, width = o$width, depth = o$depth, heads = o$heads), strategy = strategy,
                 steps = o$steps, time_limit = o$time_limit, batch_size = o$batch_size, validation = 0, seed = sub_seed(seed, 11),
                 threads = threads, progress = progress)
  structure(list(kernel_name = "dit", center = tr$center, scale = tr$scale, trend = tr$trend,
                 transform = tf, dit = fit, options = o, strategy = strategy,
                 n_windows_trained = dim(train)[1], fit_seconds = proc.time()[["elapsed"]] - start,
                 variables = colnames(v), settings = series_fit_settings(v, transform, bounds), resid = resid),
            class = "ditimpute_series_dit_model")
}

# The core draws the series block by block (blocks of H/2 frames, each from
# a window with H/4 frames before and after it, so a gap that ends inside
# the window is bridged from both sides) and summarises the paths as
# impute() does: finite-sample order-statistic intervals. `resid`: the
# series' residuals from the model's trend (series_trend()).
series_dit_draw <- function(model, resid, level, n_samples, seed, threads, call = rlang::caller_env()) {
  opts <- impute_options(n_samples, level, "mean", seed, threads, call = call)
  core_call(cpp_series_dit_impute(dit_ptr(model$dit), resid, sampler_options(steps = model$options$sample_steps),
                                  list(), opts), call = call)
}

# Back to the data's units: residual + trend, times scale, plus centre, then
# the model's scale back to the data's (increasing maps per variable, so
# intervals map endpoint by endpoint).
series_dit_back <- function(a, model) {
  d <- length(model$scale)
  n_time <- length(a) %/% d
  m <- sweep(sweep(matrix(a, n_time, d) + series_trend_path(model$trend, n_time), 2, model$scale, "*"), 2,
             model$center, "+")
  from_model_scale_vec(m, col(m), model$transform)
}

# A version of the series as residuals from the model's centre, scale and
# trend (series_dit_back() maps them back).
series_dit_resid <- function(model, v) {
  sweep(sweep(to_model_scale(v, model$transform), 2, model$center), 2, model$scale, "/") -
    series_trend_path(model$trend, nrow(v))
}

# The 'level' intervals of a DiT series model on versions of its series with
# further values hidden (the rounds of a self-calibration, as
# series_model_bands() gives them for the GP): the trend, centre and scale
# stay the model's, the same network draws `n_samples` paths per version,
# version k from seed sub_seed(seed, ids[k]) (its round's number).
series_dit_bands <- function(model, vs, level, n_samples, seed, threads, ids = seq_along(vs),
                             call = rlang::caller_env()) {
  Map(function(v, r) {
    res <- series_dit_draw(model, series_dit_resid(model, v), level, n_samples, sub_seed(seed, r), threads, call = call)
    list(lower = series_dit_back(res$lower, model), upper = series_dit_back(res$upper, model))
  }, vs, ids)
}

#' @export
print.ditimpute_series_dit_model <- function(x, ...) {
  check_dots(environment(), "print()", also = print_dots)
  o <- x$options
  # the steps trained (a time limit or early stop can end before the cap)
  done <- if (!is.null(x$dit$steps)) x$dit$steps else o$steps
  why <- switch(x$dit$train_info$stop_reason %||% "", time_limit = "time limit", early_stop = "stopped early", "stopped")
  cap <- if (done < o$steps) sprintf(" (of %d: %s)", o$steps, why) else ""
  cat(sprintf("<ditimpute_series_dit_model> linear trend + DiT (H = %d, width %d, depth %d) trained %d steps%s on %s of the series%s\n",
              o$H, o$width, o$depth, as.integer(done), cap, plural(x$n_windows_trained, "window"),
              if (is.null(x$transform)) "" else series_scale_text(x$transform)))
  cat("  training masks: ")
  print(x$strategy)
  invisible(x)
}
