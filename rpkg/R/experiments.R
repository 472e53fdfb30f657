#' Run a grid of imputation experiments
#'
#' Runs the simulation study of the paper's section 6 over a grid of
#' settings. Each row: simulate training sequences from a Gaussian process
#' (or the latent GP of section 6.2), train a DiT on them with the row's
#' masking strategy (skipped for the exact imputer), simulate `n_test` test
#' sequences, hide the row's test pattern, impute them ([impute()]) and score
#' the imputations.
#'
#' **Grid columns** (a data frame, or a list of equal-length columns; only
#' `pattern` is required):
#' * `pattern`: the test pattern, `"P1"`..`"P4"` ([paper_patterns()]; for `H`
#'   a multiple of 48 other than 96 every block keeps its place and its length
#'   scales with `H / 96`), or a generator string of [mask_strategy()] (`"tail8"`, `"4x2"`,
#'   `"8x1"`, `"mcar0.1"`), drawn afresh for every test sequence;
#' * `n`: training sequences (required for the DiT);
#' * `H`: sequence length (default 96);
#' * `strategy`: the training masks, a preset of [strategy_preset()] (`"S1"`..
#'   `"S4"`, `"8x2"`, `"4x4"`, `"1x16"`; block lengths scale with `H / 96` like
#'   the patterns, so at `H = 48` blocks of 2 become single frames and `"S1"`,
#'   `"S2"` and `"8x2"` all draw 8 random frames) or generator strings
#'   joined by `+` in equal parts (`"8x1+4x2"`); default `"S4"`;
#' * `imputer`: `"dit"` (default) or `"oracle"`, the exact Gaussian imputer;
#' * `seed`: a whole number that fixes everything in the row (data, masks,
#'   training, sampling); `NA` (default) draws one from R's generator and
#'   reports it, so `set.seed()` makes the whole grid repeatable.
#'
#' Rows that share `n`, `H`, `strategy`, `imputer` and `seed` share one trained
#' model and one set of test sequences (so patterns are compared on the same
#' data); rows with the same `H` and a given `seed` share their test sequences
#' across imputers too, so the DiT and the exact imputer are compared on the
#' same data.
#'
#' **Scores.** On Gaussian-process data (`latent = FALSE`) the exact
#' conditional law is known: `coverage` is the paper's coverage, the share of
#' `n_draws` exact conditional draws inside each sequence's `level` L2-ball
#' region (averaged over test sequences, with its standard error
#' `coverage_se`), and `mse`/`mae` are against the exact conditional mean. On
#' latent-GP data there is no closed-form conditional: `coverage` is then the
#' share of test sequences whose true missing values lie inside their region,
#' and `mse`/`mae` are against the true values, so they include the
#' irreducible conditional variance (column `target` says which). There the
#' `"oracle"` is the best *linear* imputer: the Gaussian process with the latent
#' process's exact mean and covariance (closed form, `Lambda = I`), which is
#' not the true (non-Gaussian) conditional. Always reported: `coverage_truth`
#' (share of truths inside the region), `interval_coverage` (share of missing
#' entries inside their per-entry interval), `crps`, `width` (mean per-entry
#' interval width), `radius` (mean region radius), `kappa` (mean
#' `kappa(Sigma_cond)` of the test patterns under the underlying GP).
#'
#' **Parallel runs.** Groups of rows run through
#' [future.apply::future_lapply()] with `future.seed = TRUE`: choose how with
#' `future::plan()` (e.g. `plan(multisession, workers = 2)` and `threads = 1`);
#' the package never sets a plan. Results do not depend on the plan.
#'
#' @param grid The settings, one experiment per row (see Details).
#' @param d Variables per frame.
#' @param kernel A [gp_kernel()] for the temporal covariance (`Lambda = I`).
#' @param config The DiT's size: a list of [dit_config()] arguments other than
#'   `H` and `d`.
#' @param steps Training steps of each DiT.
#' @param fit_args Further arguments of [dit_fit()] (e.g. `batch_size`, `lr`).
#' @param n_test Test sequences per row.
#' @param n_samples Samples per test sequence ([impute()]).
#' @param level Confidence level of the regions.
#' @param latent Use the latent GP `phi(X) + eps` ([latent_gp()]) instead of the GP.
#' @param noise_var Noise variance of the latent GP.
#' @param n_draws Exact conditional draws per test sequence for the coverage.
#' @param sampler Sampler options for the DiT, a list with `method` and `steps`
#'   (see [dit_sample()]).
#' @param n_calibrate Held-out sequences per DiT row to calibrate its regions
#'   on ([calibrate()], under the row's test pattern); 0 (default) skips it.
#'   With it, `coverage_calibrated` and `coverage_truth_calibrated` sit beside
#'   the raw `coverage` and `coverage_truth`.
#' @param threads CPU threads of each row (default: the process's budget, see
#'   [threads]; use 1 with a parallel plan).
#' @param progress Report each finished group.
#' @param H Sequence length of rows without an `H` column.
#' @return A data frame of class `ditimpute_experiments`, one row per grid
#'   row: the settings (`imputer`, `latent`, `n`, `H`, `d`, `pattern`,
#'   `strategy`, `seed`), `kappa`, the scores above, `target`,
#'   `train_seconds`, `final_loss` and `seconds` (wall time of the row's
#'   group, training included).
#' @seealso [impute()], [coverage()], [imputation_metrics()]
#' @examples
#' grid <- expand.grid(pattern = c("tail4", "4x1"), imputer = "oracle", stringsAsFactors = FALSE)
#' set.seed(1)
#' run_experiments(grid, d = 2, kernel = gp_kernel("laplace", lengthscale = 16),
#'                 n_test = 20, n_samples = 100, n_draws = 200, H = 24)
#' @export
run_experiments <- function(grid, d = 8, kernel = gp_kernel("laplace", lengthscale = 128),
                            config = list(width = 64, depth = 2, heads = 4), steps = 1000, fit_args = list(),
                            n_test = 100, n_samples = 100, level = 0.95, latent = FALSE, noise_var = 0.1,
                            n_draws = 1000, sampler = list(), threads = NULL, progress = interactive() && !isTRUE(getOption("knitr.in.progress")), H = 96,
                            n_calibrate = 0) {
  grid <- check_grid(grid, H_default = H)
  d <- check_count(d)
  if (!inherits(kernel, "ditimpute_kernel")) abort_input("kernel", "must be made by gp_kernel().")
  if (!is.list(config)) abort_input("config", "must be a list of dit_config() arguments (width, depth, heads, ...).")
  if (!is.list(fit_args)) abort_input("fit_args", "must be a list of dit_fit() arguments.")
  if (!is.list(sampler) || !all(names(sampler) %in% c("method", "steps"))) {
    abort_input("sampler", "must be a list with `method` and/or `steps`.")
  }
  settings <- list(d = d, kernel = kernel, config = config, steps = check_count(steps), fit_args = fit_args,
                   n_test = check_count(n_test), n_samples = check_count(n_samples, min = 2),
                   level = check_level(level), latent = isTRUE(check_flag(latent)),
                   noise_var = check_number(noise_var, lower = 0, upper = Inf, open = FALSE),
                   n_draws = check_count(n_draws, min = 2), sampler = sampler,
                   threads = resolve_threads(threads),
                   n_calibrate = if (identical(n_calibrate, 0) || identical(n_calibrate, 0L)) 0L else
                     check_count(n_calibrate, min = 2))
  if (any(grid$imputer == "dit")) check_torch()
  # Configurations are checked once here, not in every worker.
  for (h in unique(grid$H[grid$imputer == "dit"])) {
    do.call(dit_config, c(list(H = h, d = d), config))
  }
  key <- paste(grid$imputer, grid$n, grid$H, grid$strategy, grid$seed, sep = "\r")
  groups <- split(seq_len(nrow(grid)), factor(key, levels = unique(key)))
  progress <- isTRUE(progress)
  results <- future.apply::future_lapply(groups, function(rows) {
    out <- run_group(grid[rows, , drop = FALSE], settings)
    if (progress) message(sprintf("run_experiments: %s n = %s, H = %d, %s: %.1f s", out$imputer[1],
                                  format(out$n[1]), out$H[1], out$strategy[1], out$seconds[1]))
    out
  }, future.seed = TRUE, future.packages = "ditimpute")
  res <- do.call(rbind, results)
  res <- res[order(unlist(groups)), , drop = FALSE]
  rownames(res) <- NULL
  attr(res, "settings") <- settings[c("d", "kernel", "config", "steps", "fit_args", "n_test", "n_samples",
                                      "level", "latent", "noise_var", "n_draws", "sampler")]
  class(res) <- c("ditimpute_experiments", "data.frame")
  res
}

check_flag <- function(x, arg = rlang::caller_arg(x), call = rlang::caller_env()) {
  force(arg)
  if (!is.logical(x) || length(x) != 1 || is.na(x)) abort_input(arg, "must be TRUE or FALSE.", call = call)
  x
}

grid_columns <- c("pattern", "n", "H", "strategy", "imputer", "seed")

# Validates the grid and fills default columns; every problem is an input
# error naming "grid", raised before any expensive work starts.
check_grid <- function(grid, H_default = 96, call = rlang::caller_env()) {
  bad <- function(msg) abort_input("grid", msg, call = call)
  if (is.list(grid) && !is.data.frame(grid)) {
    lens <- lengths(grid)
    if (length(grid) == 0 || is.null(names(grid)) || length(unique(lens)) != 1) {
      bad("must be a data frame or a named list of columns of equal length.")
    }
    grid <- as.data.frame(grid, stringsAsFactors = FALSE)
  }
  if (!is.data.frame(grid)) bad("must be a data frame or a named list of columns of equal length.")
  if (nrow(grid) == 0) bad("has no rows.")
  extra <- setdiff(names(grid), grid_columns)
  if (length(extra) > 0) {
    bad(sprintf("has unknown column%s %s; the columns are %s.", if (length(extra) > 1) "s" else "",
                paste0("`", extra, "`", collapse = ", "), paste0("`", grid_columns, "`", collapse = ", ")))
  }
  if (is.null(grid$pattern)) bad("needs a `pattern` column (e.g. \"P1\" or \"tail8\").")
  fill <- list(H = H_default, strategy = "S4", imputer = "dit", seed = NA_real_, n = NA_real_)
  for (nm in names(fill)) if (is.null(grid[[nm]])) grid[[nm]] <- rep(fill[[nm]], nrow(grid))
  for (nm in c("pattern", "strategy", "imputer")) {
    v <- grid[[nm]]
    if (is.factor(v)) v <- as.character(v)
    if (!is.character(v) || anyNA(v)) bad(sprintf("column `%s` must be strings without NA.", nm))
    grid[[nm]] <- v
  }
  if (!all(grid$imputer %in% c("dit", "oracle"))) {
    bad(sprintf("column `imputer` must be \"dit\" or \"oracle\", not \"%s\".",
                setdiff(grid$imputer, c("dit", "oracle"))[1]))
  }
  whole <- function(v, min, na_ok) {
    is.numeric(v) && all(is.na(v) | (is.finite(v) & v == round(v) & v >= min)) && (na_ok || !anyNA(v))
  }
  if (!whole(grid$H, 2, FALSE)) bad("column `H` must be whole numbers of at least 2.")
  if (!whole(grid$seed, 0, TRUE)) bad("column `seed` must be NA or non-negative whole numbers.")
  if (!whole(grid$n, 2, TRUE)) bad("column `n` must be whole numbers of at least 2.")
  if (anyNA(grid$n[grid$imputer == "dit"])) bad("column `n` (training sequences) is needed for every \"dit\" row.")
  grid$H <- as.integer(grid$H)
  for (h in unique(grid$H)) {
    for (p in unique(grid$pattern[grid$H == h])) resolve_test_pattern(p, h, bad)
    for (s in unique(grid$strategy[grid$H == h & grid$imputer == "dit"])) resolve_training_strategy(s, h, bad)
  }
  grid[grid_columns]
}

# A test pattern as a masking strategy (fixed patterns are strategies with one
# fixed generator), so every pattern is drawn the same way.
resolve_test_pattern <- function(p, H, bad) {
  if (grepl("^P[1-4]$", p)) {
    if (H %% 48 != 0) bad(sprintf("pattern \"%s\" is defined for H = 96 (and rescaled for multiples of 48), not H = %d; use a generator such as \"tail%d\".",
                                 p, H, max(1, H %/% 6)))
    frames <- paper_patterns(as.integer(substring(p, 2)))[[1]]$frames
    return(mask_strategy(list(pattern_frames(H, rescale_frames(frames, H / 96)))))
  }
  strategy_or_bad(p, H, bad, "pattern")
}

# Frames of a pattern of H = 96 moved to H = 96 r: every block keeps its
# relative place and its length is scaled by r (P1-P4 at H = 48: tail 8, two
# blocks of 4, four of 2, eight single frames).
rescale_frames <- function(frames, r) {
  starts <- frames[c(TRUE, diff(frames) != 1)]
  len <- length(frames) / length(starts)
  unlist(lapply(starts, function(s) (s - 1) * r + seq_len(len * r)))
}

presets <- c("S1", "S2", "S3", "S4", "8x2", "4x4", "1x16")

resolve_training_strategy <- function(s, H, bad) {
  if (s %in% presets) {
    if (H %% 48 != 0) bad(sprintf("strategy \"%s\" has 16 missing frames of H = 96 (rescaled for multiples of 48), not H = %d; use generators such as \"%dx1+%dx2\".",
                                 s, H, max(1, H %/% 6), max(1, H %/% 12)))
    st <- strategy_preset(s)
    if (H == 96) return(st)
    # Block lengths (and the count of random frames) scale with H, as for P1-P4.
    r <- H / 96
    labels <- vapply(st$generators, function(g) {
      bl <- as.integer(strsplit(g$label, "x", fixed = TRUE)[[1]])
      if (bl[2] == 1) sprintf("%dx1", as.integer(bl[1] * r)) else sprintf("%dx%d", bl[1], as.integer(bl[2] * r))
    }, "")
    return(mask_strategy(labels, weights = st$weights))
  }
  strategy_or_bad(strsplit(s, "+", fixed = TRUE)[[1]], H, bad, "strategy")
}

strategy_or_bad <- function(gens, H, bad, what) {
  tryCatch({
    st <- mask_strategy(gens)
    draw_masks(st, 1, H, 1, seed = 1)   # fails now if a generator does not fit in H frames
    st
  }, ditimpute_error_input = function(e) {
    bad(sprintf("%s \"%s\" is not usable for H = %d: %s", what, paste(gens, collapse = "+"), H,
                conditionMessage(e)))
  })
}

# Deterministic sub-seeds of a row seed, one per random step, so rows are
# reproducible alone and share what they should (test data across imputers);
# derived by the core's one scheme (case_seed).
sub_seed <- function(seed, k) core_call(cpp_case_seed(seed, k))

run_group <- function(rows, s) {
  t_start <- proc.time()[["elapsed"]]
  r1 <- rows[1, ]
  H <- r1$H
  seed <- if (is.na(r1$seed)) as.numeric(sample.int(.Machine$integer.max, 1)) else r1$seed
  spec <- gp_spec(H, d = s$d, kernel = s$kernel)
  observe <- function(x, k) if (s$latent) latent_gp(x, s$noise_var, seed = sub_seed(seed, k)) else x
  truth <- observe(gp_simulate(spec, s$n_test, seed = sub_seed(seed, 1)), 2)
  train_seconds <- 0
  final_loss <- NA_real_
  if (r1$imputer == "dit") {
    strategy <- resolve_training_strategy(r1$strategy, H, function(m) abort_input("grid", m))
    train <- observe(gp_simulate(spec, r1$n, seed = sub_seed(seed, 3)), 4)
    cfg <- do.call(dit_config, c(list(H = H, d = s$d), s$config))
    fit <- do.call(dit_fit, c(list(x = train, config = cfg, strategy = strategy, steps = s$steps,
                                   seed = sub_seed(seed, 5), threads = s$threads, progress = FALSE),
                              s$fit_args))
    train_seconds <- fit$train_info$seconds
    final_loss <- fit$train_info$final_loss
    imputer <- fit
    extra <- list(method = s$sampler$method, steps = s$sampler$steps, threads = s$threads)
  } else {
    imputer <- if (s$latent) latent_moment_spec(spec, s$noise_var) else spec
    extra <- list()
  }
  out <- lapply(seq_len(nrow(rows)), function(i) {
    pat <- resolve_test_pattern(rows$pattern[i], H, function(m) abort_input("grid", m))
    masks <- draw_masks(pat, s$n_test, H, s$d, seed = sub_seed(seed, 6))
    x <- truth
    x[masks] <- NA
    imp <- do.call(impute, c(list(imputer, x, n_samples = s$n_samples, level = s$level, truth = truth,
                                  seed = sub_seed(seed, 7)), extra))
    scores <- score_imputation(imp, spec, truth, masks, s, seed)
    scores$coverage_calibrated <- scores$coverage_truth_calibrated <- NA_real_
    if (s$n_calibrate > 0 && r1$imputer == "dit") {
      # Held-out sequences under the row's test pattern calibrate the DiT's
      # regions (calibrate()); the same test sequences are scored again.
      cal_truth <- observe(gp_simulate(spec, s$n_calibrate, seed = sub_seed(seed, 9)), 10)
      cal_x <- cal_truth
      cal_x[draw_masks(pat, s$n_calibrate, H, s$d, seed = sub_seed(seed, 11))] <- NA
      cal <- do.call(calibrate, c(list(fit, cal_x, truth = cal_truth, level = s$level, n_samples = s$n_samples,
                                       groups = "none", seed = sub_seed(seed, 12), threads = s$threads),
                                  extra[setdiff(names(extra), "threads")]))
      calibrated <- score_imputation(apply_calibration(imp, cal), spec, truth, masks, s, seed)
      scores$coverage_calibrated <- calibrated$coverage
      scores$coverage_truth_calibrated <- calibrated$coverage_truth
    }
    scores
  })
  out <- do.call(rbind, out)
  settings <- data.frame(imputer = r1$imputer, latent = s$latent, n = r1$n, H = H, d = s$d,
                         pattern = rows$pattern, strategy = if (r1$imputer == "dit") r1$strategy else NA_character_,
                         seed = seed, stringsAsFactors = FALSE)
  cbind(settings, out, train_seconds = train_seconds, final_loss = final_loss,
        seconds = proc.time()[["elapsed"]] - t_start)
}

score_imputation <- function(imp, spec, truth, masks, s, seed) {
  met <- colMeans(imputation_metrics(imp, spec = if (s$latent) NULL else spec)[-1])
  cov_truth <- coverage(imp, truth = truth)$coverage
  if (s$latent) {
    cov <- cov_truth
  } else {
    cov <- coverage(imp, spec = spec, n_draws = s$n_draws, seed = sub_seed(seed, 8))$coverage
  }
  kap <- vapply(seq_len(dim(masks)[1]), function(i) kappa_cond(spec, matrix(masks[i, , ], dim(masks)[2])), 0)
  data.frame(kappa = mean(kap), coverage = mean(cov), coverage_se = stats::sd(cov) / sqrt(length(cov)),
             coverage_truth = mean(cov_truth), interval_coverage = met[["interval_coverage"]],
             mse = met[["mse"]], mae = met[["mae"]], crps = met[["crps"]], width = met[["width"]],
             radius = mean(imp$radius), target = if (s$latent) "truth" else "conditional mean")
}

# The Gaussian process with the exact mean and covariance of the latent GP
# Y = phi(X) + eps, phi(x) = x + exp(-x^2) + 2 sin(x), for X ~ N(0, Gamma x I).
# Its conditional mean is the best linear imputer of Y. With Lambda = I the
# variables stay independent, so Cov(Y) = Gamma_Y x I with, for a pair of
# entries of variances a, b and covariance c (bivariate normal moments):
#   Cov(X, X') = c,  Cov(X, 2 sin X') = 2 c e^{-b/2},
#   Cov(2 sin X, 2 sin X') = 4 e^{-(a+b)/2} sinh(c),
#   Cov(e^{-X^2}, e^{-X'^2}) = det(I + 2C)^{-1/2} - ((1 + 2a)(1 + 2b))^{-1/2},
# and the cross terms with e^{-x^2} vanish by symmetry.
latent_moment_spec <- function(spec, noise_var) {
  G <- spec$Gamma
  v <- diag(G)
  a <- matrix(v, nrow(G), ncol(G))
  b <- t(a)
  det2 <- (1 + 2 * a) * (1 + 2 * b) - 4 * G^2
  GY <- G + 2 * G * exp(-b / 2) + 2 * G * exp(-a / 2) + 4 * exp(-(a + b) / 2) * sinh(G) +
    det2^(-1 / 2) - ((1 + 2 * a) * (1 + 2 * b))^(-1 / 2)
  diag(GY) <- diag(GY) + noise_var
  gp_spec(spec$H, d = spec$d, Gamma = GY, mean = matrix(1 / sqrt(1 + 2 * v), spec$H, spec$d))
}

#' @export
print.ditimpute_experiments <- function(x, digits = 3, ...) {
  check_dots(environment(), "print()", also = print_dots)
  s <- attr(x, "settings")
  cat(sprintf("<ditimpute_experiments> %d rows; %s data, d = %d, %d test sequences x %d samples, level %g\n",
              nrow(x), if (isTRUE(s$latent)) "latent-GP" else "GP", s$d, s$n_test, s$n_samples, s$level))
  cols <- c("imputer", "n", "H", "pattern", "strategy", "seed", "kappa", "coverage", "coverage_se",
            if (any(!is.na(x$coverage_calibrated))) "coverage_calibrated", "mse", "crps", "width", "seconds")
  print(as.data.frame(unclass(x))[cols], digits = digits, row.names = FALSE)
  invisible(x)
}
