# Proper multiple imputation for impute_series(method = "gp", proper = TRUE):
# every sample path is drawn under its own draw of the structural model's
# parameters from their approximate sampling distribution, so that the spread
# of the completions carries the uncertainty about the parameters as well as
# about the missing values given them (what Rubin's rules assume).
#
# Per path k:
#  * the form (stationary, level or trend model; smooth, seasonal or cycle kernel)
#    among those fitted, with probability its BIC weight exp(-BIC / 2)
#    (normalised: the BIC approximation of the forms' posterior
#    probabilities), so that the paths carry the uncertainty about the form
#    as well; then, around that form's own fit,
#  * the form's parameters (nugget, lengthscale, level and slope rates, the
#    season's; the core moves them on log scales) from the normal
#    approximation of the likelihood at its maximum: mean the fitted log
#    values, covariance the inverse of the observed information, the negative
#    Hessian of the log-likelihood by central differences (h = 0.05 on the log
#    scale). The core evaluates the log-likelihood at given parameters through
#    cpp_structural_fit() with one evaluation per candidate (no search), all
#    the difference points in one call. Parameters within 0.1 (log scale) of
#    the core's bounds stay fixed, and the information is floored at 1 in
#    every direction (a standard deviation of at most 1 on the log scale): a
#    likelihood flat in some direction would otherwise send draws to the
#    bounds;
#  * Lambda (the variables' covariance) from the inverse Wishart with n
#    degrees of freedom and scale n Lambda-hat, n the frames of the fitting
#    stretch where every pair of variables is observed (the smallest pair),
#    the posterior of a covariance estimated from n independent vectors,
#    which is how the core estimates it (correlations of one-step innovations);
#  * not the stationary model's mean line: since 2026-12-05 the core's
#    conditional of a stationary form carries the line's uncertainty itself
#    (its spread is universal kriging's, structural_conditional() in
#    cpp/src/structural.cpp), as the level and trend models' diffuse starts
#    are integrated out by the smoother; the line was drawn here before
#    (normal, with a heteroscedasticity- and autocorrelation-consistent
#    covariance).
# The draws of R's generator run under a seed derived from `seed` (the
# caller's stream is restored); each path's conditional draw is one call of
# the core's smoother (cpp_structural_impute, n_samples = 1).

# impute_series(proper = "auto") draws the parameters per path on series of
# fewer frames than this: there the plug-in intervals were too narrow (90%
# intervals covered 68% of Longley's 16 years, 77% of freeny's 39 quarters on
# long gaps, 75-78% of uspop's 19 decades), and proper draws brought them to
# 84-95%; at 72 frames (UKLungDeaths) they over-covered (95-96%) with proper
# draws and covered 92-93% without (bench/results/series_proper_short.md).
series_proper_frames <- 60

# ... and on series of up to this many frames with an end gap (a variable's
# first or last value missing): there the model extrapolates, and how far
# out its intervals reach rests on the form and parameters, which plug-in
# draws take as known. On 114 end gaps of 19 real series and 60 of 10
# simulated ones (bench/results/series_ends_proper.md) proper draws took the
# 90% intervals' coverage 6-20 frames from the data from 80.8% to 85.8%
# (simulated 78.0% to 85.7%) and at 21-60 frames from 83.3% to 86.0%, with
# the same MAE; the bridged gaps of longer series move by less (over 20
# series with gaps between observed values only, the mean distance of the
# coverage from 90% was 0.031 with proper draws and 0.030 without,
# bench/results/series_fresh_datasets_gp_proper.md). The bound is the cost:
# a proper path is one Kalman smoothing of the whole series, where plug-in
# draws take one for all paths (bench/results/series_proper_cost.md, ETTh1's
# oil temperature with a one-day end gap, 100 paths, 2 cores: 2.6 s against
# 1.6 s at 2,000 frames, 5.7 s against 3.3 s at 5,000 and 13.1 s against
# 5.3 s at 17,420).
series_proper_end_frames <- 20000

# Whether impute_series(proper = "auto") draws properly: series of fewer than
# series_proper_frames frames, and those up to series_proper_end_frames with
# an end gap (`v` the T x d values).
series_proper_auto <- function(v) {
  n_time <- nrow(v)
  end_gap <- anyNA(v[1, ]) || anyNA(v[n_time, ])
  n_time < series_proper_frames || (end_gap && n_time <= series_proper_end_frames)
}

# impute_series()'s `proper`: TRUE, FALSE or "auto" (resolved once the
# series' length is known); TRUE only with method = "gp".
check_proper <- function(proper, method, call = rlang::caller_env()) {
  if (identical(proper, "auto")) return(proper)
  if (!is.logical(proper) || length(proper) != 1 || is.na(proper)) {
    abort_input("proper", "must be TRUE, FALSE or \"auto\".", call = call)
  }
  if (proper && method == "dit") abort_input("proper", "is available for method = \"gp\" only.", call = call)
  proper
}

# Log-scale parameters of a form (structural.cpp's params_of, which puts a
# cycle's period first; these are set by name), with its bounds; season_decay is bounded relative to the period.
# A cycle's fitted period is not among them: its likelihood has a mode every
# few frames, too narrow for these differences, so proper draws keep it.
proper_parameters <- function(spec) {
  p <- list(nugget = c(1e-6, 1e4), smooth_lengthscale = c(0.3, 1e5))
  if (spec$model != "stationary") p$level_rate <- c(1e-10, 1e4)
  if (spec$model == "trend") p$slope_rate <- c(1e-14, 1e2)
  if (isTRUE(spec$seasonal)) {
    p$season_var <- c(1e-6, 1e4)
    p$periodic_lengthscale <- c(0.1, 10)
    p$season_decay <- c(0.5, 1e4) * spec$period
  }
  p
}

# The observed information of the form's free log-parameters at the fit:
# list(names, theta, cov) with cov = the (floored) inverse information.
proper_theta <- function(model, y, threads, h = 0.05, call = rlang::caller_env()) {
  spec <- model$candidate$spec
  bounds <- proper_parameters(spec)
  theta <- log(vapply(names(bounds), function(p) spec[[p]], 0))
  free <- vapply(names(bounds), function(p) {
    all(abs(theta[[p]] - log(bounds[[p]])) > 2 * h)
  }, TRUE)
  nm <- names(bounds)[free]
  k <- length(nm)
  if (k == 0) return(list(names = character(), theta = numeric(), cov = matrix(0, 0, 0)))
  # The difference points: 0, +-h e_i, and +-h e_i +-h e_j (i < j).
  pts <- list(numeric(k))
  for (i in seq_len(k)) for (s in c(1, -1)) pts[[length(pts) + 1]] <- replace(numeric(k), i, s * h)
  pairs <- if (k > 1) utils::combn(k, 2) else matrix(0L, 2, 0)
  for (q in seq_len(ncol(pairs))) {
    for (s in list(c(1, 1), c(1, -1), c(-1, 1), c(-1, -1))) {
      pts[[length(pts) + 1]] <- replace(numeric(k), pairs[, q], s * h)
    }
  }
  specs <- lapply(pts, function(delta) {
    s <- spec
    for (i in seq_len(k)) s[[nm[i]]] <- exp(theta[[nm[i]]] + delta[i])
    s
  })
  fit <- core_call(cpp_structural_fit(y, specs, list(max_frames = model$fit_frames, ridge = 0, threads = threads,
                                                     max_evaluations = 1L)), call = call)
  ll <- vapply(fit$candidates, `[[`, 0, "loglik")
  f0 <- ll[1]
  info <- matrix(0, k, k)
  for (i in seq_len(k)) info[i, i] <- -(ll[2 * i] - 2 * f0 + ll[2 * i + 1]) / h^2
  base <- 1 + 2 * k
  for (q in seq_len(ncol(pairs))) {
    f <- ll[base + 4 * (q - 1) + 1:4]  # ++, +-, -+, --
    i <- pairs[1, q]; j <- pairs[2, q]
    info[i, j] <- info[j, i] <- -(f[1] - f[2] - f[3] + f[4]) / (4 * h^2)
  }
  cov <- proper_floored_inverse(info, 1)
  list(names = nm, theta = theta[nm], cov = cov)
}

# The inverse of a symmetric information matrix whose eigenvalues are first
# floored at `floor` (non-finite entries count as no information).
proper_floored_inverse <- function(info, floor) {
  info[!is.finite(info)] <- 0
  e <- eigen((info + t(info)) / 2, symmetric = TRUE)
  e$vectors %*% diag(1 / pmax(e$values, floor), nrow(info)) %*% t(e$vectors)
}

# Degrees of freedom behind Lambda-hat: frames of the fitting stretch where
# both variables of a pair are observed, the smallest over pairs (one
# variable: its observed frames).
proper_lambda_df <- function(model, v) {
  rows <- model$fit_start + seq_len(model$fit_frames) - 1L
  obs <- !is.na(v[rows, , drop = FALSE])
  d <- ncol(v)
  n <- if (d == 1) sum(obs) else min(crossprod(obs)[upper.tri(diag(d))])
  max(n, d + 2)
}

# The forms' weights: exp(-BIC / 2), normalised (the BIC approximation of
# their posterior probabilities under equal prior weights).
proper_form_weights <- function(bic) {
  w <- exp(-(bic - min(bic)) / 2)
  w / sum(w)
}

# n_samples parameter draws of a fitted model: a list of candidates (as
# cpp_structural_fit returns them) for cpp_structural_impute(). With
# forms = TRUE each path first draws its form (stationary, local level or
# trend; smooth, seasonal or cycle) with probability its BIC weight among the forms
# fitted, then that form's parameters around its own fit; FALSE keeps the
# chosen form.
proper_candidates <- function(model, v, y, n_samples, seed, threads, forms = TRUE, call = rlang::caller_env()) {
  fits <- model$forms$candidates
  if (!forms || length(fits) < 2) return(proper_form_draws(model, v, y, n_samples, seed, threads, call = call))
  w <- proper_form_weights(model$forms$BIC)
  pick <- with_local_seed(seed, sample.int(length(w), n_samples, replace = TRUE, prob = w), call = call)
  out <- vector("list", n_samples)
  for (f in sort(unique(pick))) {
    m <- model
    m$candidate <- fits[[f]]
    out[pick == f] <- proper_form_draws(m, v, y, sum(pick == f), sub_seed(seed, f), threads, call = call)
  }
  out
}

# n_samples draws of the parameters of the model's form (model$candidate).
proper_form_draws <- function(model, v, y, n_samples, seed, threads, call = rlang::caller_env()) {
  th <- proper_theta(model, y, threads, call = call)
  cand <- model$candidate
  bounds <- proper_parameters(cand$spec)[th$names]
  d <- ncol(v)
  n_lambda <- proper_lambda_df(model, v)
  Lhat <- cand$Lambda
  with_local_seed(seed, {
    lapply(seq_len(n_samples), function(k) {
      out <- cand
      if (length(th$names)) {
        delta <- drop(stats::rnorm(length(th$names)) %*% chol_psd(th$cov))  # covariance th$cov
        # Inside the core's bounds (a draw far in a tail, e.g. a periodic
        # lengthscale under 0.1, gives a season the filter rejects).
        for (i in seq_along(th$names)) {
          b <- bounds[[i]]
          out$spec[[th$names[i]]] <- min(max(exp(th$theta[[i]] + delta[i]), b[1]), b[2])
        }
      }
      W <- stats::rWishart(1, n_lambda, solve(n_lambda * Lhat))[, , 1]
      out$Lambda <- solve(matrix(W, d, d))
      out$Lambda <- (out$Lambda + t(out$Lambda)) / 2
      out
    })
  }, call = call)
}

# Is a core draw (n_samples = 1) within 10 sds of its conditional mean?
proper_draw_ok <- function(res) {
  all(abs(res$samples[1, ] - res$mean) <= 10 * res$sd + 1e-8 * (1 + abs(res$mean)))
}

# A factor U with t(U) %*% U = S for a symmetric positive semi-definite S:
# the symmetric square root (through the eigen decomposition, so that a
# singular S works). Unlike V sqrt(D), which it replaces, it does not depend
# on the eigenvectors' signs or on the basis chosen for a repeated
# eigenvalue, so it is continuous in S: a last-bit change in S (the BLAS's
# summation order varies from run to run) once flipped an eigenvector's
# sign and gave different draws from the same seed.
chol_psd <- function(S) {
  e <- eigen((S + t(S)) / 2, symmetric = TRUE)
  U <- e$vectors %*% (sqrt(pmax(e$values, 0)) * t(e$vectors))
  (U + t(U)) / 2
}

# As series_model_intervals(), with proper draws: path k is the conditional
# draw under parameter draw k. The point and intervals are those of the
# mixture of the n_samples conditionals (mean: the mean of their means;
# variance: the mean of their variances plus the variance of their means),
# Gaussian on the model's scale; the point is the mixture's mean (mapped
# back from a Box-Cox or log scale: the median).
series_proper_intervals <- function(model, v, level, n_samples, seed, threads, call = rlang::caller_env()) {
  if (inherits(model, "ditimpute_series_model_set")) {
    return(series_set_intervals(model, v, level, n_samples, seed, threads, series_proper_intervals, call))
  }
  miss <- is.na(v)
  ij <- missing_index(miss)
  y <- scale_cols(v, model)
  cands <- proper_candidates(model, v, y, n_samples, sub_seed(seed, 1001), threads, call = call)
  m <- nrow(ij)
  means <- sds <- samples <- matrix(0, n_samples, m)
  draw_path <- function(cand, k) {
    core_call(cpp_structural_impute(y, cand, list(n_samples = 1L, seed = sub_seed(seed, 1001 + k), threads = threads)),
              call = call)
  }
  # every path in one core call, side by side on the threads (each path a
  # smoothing of the whole series under its own parameters); path k is what
  # draw_path(cands[[k]], k) gives
  paths <- core_call(cpp_structural_paths(y, cands, vapply(seq_len(n_samples), function(k) sub_seed(seed, 1001 + k), 0),
                                          list(threads = threads)), call = call)
  for (k in seq_len(n_samples)) {
    res <- paths[[k]]
    # A draw more than 10 sds from its own conditional mean (probability
    # 1.5e-23 per entry for a Gaussian draw) is the core's backward sampler
    # failing numerically. It did under a few parameter draws (a level form
    # with its rate at the bound and a long lengthscale, a variable missing
    # in the first frame: draws of 1e6 sds while the mean and sd stayed
    # right) until the core's factor of the backward covariance was made
    # safe (state_space.cpp, psd_sqrt()); the check stays as a guard. Such a
    # path gets a new draw of form and parameters.
    redraw <- 0L
    while (m && !proper_draw_ok(res)) {
      redraw <- redraw + 1L
      if (redraw > 3L) {
        abort_numeric("the Kalman smoother's conditional draws were numerically unstable under 4 parameter draws in a row; use proper = FALSE.",
                      call = call)
      }
      cands[[k]] <- proper_candidates(model, v, y, 1L, sub_seed(seed, 100000L + 10L * k + redraw), threads,
                                      call = call)[[1]]
      res <- draw_path(cands[[k]], k)
    }
    if (m) {
      means[k, ] <- res$mean
      sds[k, ] <- res$sd
      samples[k, ] <- res$samples[1, ]
    }
  }
  back <- series_back(model, v, ij)
  point <- v
  sd <- mu <- numeric(m)
  if (m) {
    mu <- colMeans(means)
    sd <- sqrt(colMeans(sds^2) + colMeans(sweep(means, 2, mu)^2))
    point[ij] <- back(mu)
    samples <- t(apply(samples, 1, back))
    if (m == 1) samples <- t(samples)
  }
  dimnames(point) <- dimnames(v)
  bands <- level_bands(v, ij, back, mu, sd, level)
  list(point = point, lower = bands[[1]]$lower, upper = bands[[1]]$upper, bands = bands, samples = samples, ij = ij,
       mean = mu, sd = sd)
}
