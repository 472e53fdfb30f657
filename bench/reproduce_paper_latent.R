# The latent Gaussian process of the paper's section 6.2 at CPU scale (issue
# 28: "the DiT's MSE to the true conditional mean below the fitted GP's").
#
#   Rscript bench/reproduce_paper_latent.R        # from the repository root
#
# Data: Y = phi(X) + eps, phi(x) = x + exp(-x^2) + 2 sin(x), eps ~ N(0, 0.1),
# X a GP with Laplace kernel (lengthscale 64) over H = 48 frames, d = 8
# independent variables (Lambda = I): the CPU scale of bench/reproduce_paper.R
# (H = 96, lengthscale 128 in the paper). Test patterns P1-P4 at H = 48 (tail 8,
# two blocks of 4, four of 2, eight single frames), the same test sequences for
# every pattern and imputer.
#
# Imputers:
#  - DiT: dit_fit()'s default recipe (warmed-up EMA, cosine lr, early stopping),
#    width/depth/heads 64/3/4, strategy S4 rescaled to H = 48, trained on
#    n_train latent-GP sequences;
#  - fitted GP: gp_fit() (Laplace kernel, fitted nugget) on the same training
#    sequences, i.e. what a user of this package would fit;
#  - best linear: the GP with the exact mean and covariance of Y (closed form,
#    ditimpute:::latent_moment_spec), the best a linear imputer can do.
#
# The true conditional mean E[Y_miss | Y_obs] = E[phi(X_miss) | Y_obs] has no
# closed form: it is estimated per test sequence and variable (the variables
# are independent) by elliptical slice sampling (Murray, Adams and MacKay
# 2010) of X | Y_obs, whose prior is the GP and whose likelihood is
# prod_obs N(y_t; phi(x_t), 0.1). The same sampler run with phi = identity,
# where the conditional mean is closed-form, checks it (error reported).
# MSE to the truth is also reported: in expectation it is the MSE to the
# conditional mean plus the same irreducible variance for every imputer, so
# paired differences of either measure the same thing.
#
# Environment: DITIMPUTE_BENCH_STEPS (DiT steps, 6000), DITIMPUTE_BENCH_DIT_TIME
# (seconds: time_limit of each training instead of a fixed step count, 0 =
# off), DITIMPUTE_BENCH_DITS (which DiTs, comma-separated: "dit" the pure DiT,
# "gp-dit" the GP-informed one, dit_fit(gp = the fitted GP below, gp_mode =
# "residual"), "gp-dit-channels" and "gp-dit-score" the same with gp_mode = "channels" or "score"; default "dit"),
# DITIMPUTE_BENCH_SAMPLES (samples per
# imputation, 50: the DiT's point is the mean of its samples, whose Monte Carlo
# error Var(Y_miss | Y_obs) / samples adds to its MSE), DITIMPUTE_BENCH_N_TRAIN
# (4000), DITIMPUTE_BENCH_N_TEST (test sequences, 100), DITIMPUTE_BENCH_THREADS
# (1), DITIMPUTE_BENCH_ESS (slice-sampling iterations kept per chain, 2000,
# after half as many burn-in), DITIMPUTE_BENCH_CACHE (a folder: trained DiTs
# are saved there and reused by a run with the same settings),
# DITIMPUTE_BENCH_OUT (result file under bench/results, reproduce_paper.md),
# DITIMPUTE_BENCH_PATIENCE (dit_fit()'s early-stopping patience, its default 10),
# DITIMPUTE_BENCH_GP_POOL (the GP-DiT's gp_pool; empty = dit_fit()'s default),
# DITIMPUTE_BENCH_UPDATE_RDS (1: put the rows into
# inst/extdata/paper-results.rds, replacing its latent table),
# DITIMPUTE_BENCH_CONTROL (1: also impute with each residual or score GP-DiT
# with impute(control_variate = FALSE), the same seeds, as rows "... without
# the GP control variate"; the GP-DiT rows use impute()'s default, which is
# the control variate for these modes).
#
# Budgets a CPU cannot buy (a lent GPU, ../shared/GPU.md): DITIMPUTE_BENCH_EXPORT
# (a folder) writes the training sequences, the test sequences and the fitted
# GP there (little-endian float64: train.bin, test.bin, gp.bin) and stops;
# `bench_dit latent` (bench/bench_dit.cpp) trains on them elsewhere and writes
# its P1-P4 imputations; DITIMPUTE_BENCH_IMPORT ("label=file,label=file")
# scores those files here beside the fitted GP and the best linear imputer
# (mse_cm and mse_truth; no samples come back, so no coverage or CRPS), with
# DITIMPUTE_BENCH_DITS=none to train no DiT here.
suppressPackageStartupMessages(library(ditimpute))
env_int <- function(name, default) as.integer(Sys.getenv(name, default))
steps <- env_int("DITIMPUTE_BENCH_STEPS", "6000")
dit_time <- as.numeric(Sys.getenv("DITIMPUTE_BENCH_DIT_TIME", "0"))
dit_kinds <- trimws(strsplit(Sys.getenv("DITIMPUTE_BENCH_DITS", "dit"), ",")[[1]])
dit_kinds <- setdiff(dit_kinds, "none")
stopifnot(all(dit_kinds %in% c("dit", "gp-dit", "gp-dit-channels", "gp-dit-score")))
export_dir <- Sys.getenv("DITIMPUTE_BENCH_EXPORT", "")
imports <- Sys.getenv("DITIMPUTE_BENCH_IMPORT", "")
imports <- if (nzchar(imports)) {
  kv <- strsplit(strsplit(imports, ",")[[1]], "=")
  stats::setNames(vapply(kv, `[`, "", 2), vapply(kv, `[`, "", 1))
} else character(0)
cache <- Sys.getenv("DITIMPUTE_BENCH_CACHE", "")
out_name <- Sys.getenv("DITIMPUTE_BENCH_OUT", "reproduce_paper.md")
patience <- env_int("DITIMPUTE_BENCH_PATIENCE", "10")
gp_pool <- Sys.getenv("DITIMPUTE_BENCH_GP_POOL", "")
gp_pool <- if (nzchar(gp_pool)) as.integer(gp_pool)
n_train <- env_int("DITIMPUTE_BENCH_N_TRAIN", "4000")
n_test <- env_int("DITIMPUTE_BENCH_N_TEST", "100")
threads <- env_int("DITIMPUTE_BENCH_THREADS", "1")
n_keep <- env_int("DITIMPUTE_BENCH_ESS", "2000")
update_rds <- Sys.getenv("DITIMPUTE_BENCH_UPDATE_RDS", "1") == "1"
control <- Sys.getenv("DITIMPUTE_BENCH_CONTROL", "0") == "1"
n_samples <- env_int("DITIMPUTE_BENCH_SAMPLES", "50")
H <- 48L; d <- 8L; noise_var <- 0.1; seed <- 2026
cpu0 <- proc.time()
loadavg <- function() paste(strsplit(readLines("/proc/loadavg"), " ")[[1]][1:3], collapse = " ")
load0 <- loadavg()
say <- function(...) { message(format(Sys.time(), "%H:%M:%S "), sprintf(...)); flush.console() }
phi <- function(x) x + exp(-x^2) + 2 * sin(x)
`%||%` <- function(a, b) if (is.null(a)) b else a

spec <- gp_spec(H, d = d, kernel = gp_kernel("laplace", lengthscale = 64))
patterns <- paste0("P", 1:4)
frames <- lapply(1:4, function(k) ditimpute:::rescale_frames(paper_patterns(k)[[1]]$frames, H / 96))
names(frames) <- patterns

train <- latent_gp(gp_simulate(spec, n_train, seed = seed + 1), noise_var, seed = seed + 2)
truth <- latent_gp(gp_simulate(spec, n_test, seed = seed + 3), noise_var, seed = seed + 4)

# --- imputers ---------------------------------------------------------------
t0 <- proc.time()[["elapsed"]]
gfit <- gp_fit(train, kernel = "laplace", lengthscale = 32, fit_nugget = TRUE, nugget = 0.1, n_windows = 400,
               seed = seed + 6)
t_gp <- proc.time()[["elapsed"]] - t0
say("gp_fit in %.0f s", t_gp); print(gfit)
# n x H x d arrays as bench_dit reads them: sequence-major, then frame, then variable.
write_f64 <- function(x, file) writeBin(as.double(x), file, size = 8, endian = "little")
if (nzchar(export_dir)) {
  dir.create(export_dir, showWarnings = FALSE, recursive = TRUE)
  write_f64(aperm(train, c(3, 2, 1)), file.path(export_dir, "train.bin"))
  write_f64(aperm(truth, c(3, 2, 1)), file.path(export_dir, "test.bin"))
  write_f64(c(gfit$Gamma, gfit$Lambda, t(gfit$mean)), file.path(export_dir, "gp.bin"))
  say("exported to %s", export_dir)
  quit(save = "no")
}
# Imported imputations: P1-P4, each n_test x H x d in bench_dit's order.
imported <- lapply(imports, function(file) {
  v <- readBin(file, "double", n = 4 * n_test * H * d + 1, size = 8, endian = "little")
  stopifnot(length(v) == 4 * n_test * H * d)
  lapply(0:3, function(k) aperm(array(v[k * n_test * H * d + seq_len(n_test * H * d)], c(d, H, n_test)), c(3, 2, 1)))
})
# The DiTs: the same network, recipe, masks and seed; "gp-dit" also gets the
# fitted GP (residual mode: the untrained network is the GP imputer).
strategy <- ditimpute:::resolve_training_strategy("S4", H, stop)
dit_keys <- c(dit = "dit", `gp-dit` = "gp_dit", `gp-dit-channels` = "gp_dit_channels", `gp-dit-score` = "gp_dit_score")
fits <- list(); t_fit <- c(); load_fit <- c(); cached_from <- c()
for (kind in dit_kinds) {
  key <- dit_keys[[kind]]
  cached <- if (nzchar(cache)) file.path(cache, sprintf("latent-%s-%d-%g-%d%s%s.dit", kind, steps, dit_time, n_train,
                                           if (patience != 10) sprintf("-patience%d", patience) else "",
                                           if (kind != "dit" && !is.null(gp_pool)) sprintf("-pool%d", gp_pool) else "")) else ""
  load_fit[key] <- loadavg()
  t0 <- proc.time()[["elapsed"]]
  if (nzchar(cached) && file.exists(cached)) {
    fits[[key]] <- dit_load(cached)
    cached_from[key] <- cached
    say("%s: loaded from %s", kind, cached)
  } else {
    say("%s: %s on %d sequences, %d thread(s)", kind,
        if (dit_time > 0) sprintf("time limit %g s", dit_time) else sprintf("%d steps", steps), n_train, threads)
    fits[[key]] <- dit_fit(train, config = dit_config(H, d, width = 64, depth = 3, heads = 4), strategy = strategy,
                           steps = if (dit_time <= 0) steps, time_limit = if (dit_time > 0) dit_time,
                           seed = seed + 5, threads = threads, progress = FALSE, patience = patience,
                           gp = if (kind != "dit") gfit,
                           gp_mode = if (kind != "dit") switch(kind, `gp-dit-channels` = "channels", `gp-dit-score` = "score", "residual"),
                           gp_pool = if (kind != "dit") gp_pool)
    if (nzchar(cached)) { dir.create(cache, showWarnings = FALSE, recursive = TRUE); dit_save(fits[[key]], cached) }
  }
  t_fit[key] <- proc.time()[["elapsed"]] - t0
  ti <- fits[[key]]$train_info
  say("%s: %.0f s (stop: %s, weights of step %s of %d, validation loss %.4f)", kind, t_fit[[key]],
      ti$stop_reason %||% "not recorded", format(ti$best_step %||% NA), fits[[key]]$steps, ti$best_val_loss %||% NA_real_)
}
best_linear <- ditimpute:::latent_moment_spec(spec, noise_var)

# --- the true conditional mean by elliptical slice sampling -----------------
# One chain per (test sequence, variable): columns of an H x C matrix f with
# prior N(0, Gamma); obs = observed frames. Returns the mean over kept
# iterations of E[g(X_miss) | X_obs = f[obs, ]] (g = phi, or the identity for
# the check).
ess_mean <- function(y, obs, g, n_keep, n_burn = n_keep %/% 2, seed) {
  set.seed(seed)
  L <- t(chol(spec$Gamma))
  # Rao-Blackwellised: given X_obs, X_miss ~ N(A X_obs, diag s2 + ...), and
  # E[g(X)] for X ~ N(mu, s2) is closed-form (gmean), so only X_obs is sampled
  # in effect and the missing part adds no Monte Carlo error.
  G <- spec$Gamma
  A <- G[!obs, obs, drop = FALSE] %*% solve(G[obs, obs, drop = FALSE])
  s2 <- diag(G[!obs, !obs, drop = FALSE] - A %*% G[obs, !obs, drop = FALSE])
  gmean <- if (identical(g, identity)) function(mu, s2) mu else function(mu, s2) {
    mu + exp(-mu^2 / (1 + 2 * s2)) / sqrt(1 + 2 * s2) + 2 * sin(mu) * exp(-s2 / 2)
  }
  C <- ncol(y)
  loglik <- function(f) -colSums((y[obs, , drop = FALSE] - g(f[obs, , drop = FALSE]))^2) / (2 * noise_var)
  f <- L %*% matrix(stats::rnorm(H * C), H, C)
  ll <- loglik(f)
  acc <- matrix(0, sum(!obs), C)
  for (it in seq_len(n_burn + n_keep)) {
    nu <- L %*% matrix(stats::rnorm(H * C), H, C)
    thr <- ll + log(stats::runif(C))
    theta <- stats::runif(C, 0, 2 * pi)
    lo <- theta - 2 * pi; hi <- theta
    todo <- seq_len(C)
    repeat {
      fp <- f[, todo, drop = FALSE] * rep(cos(theta[todo]), each = H) + nu[, todo, drop = FALSE] * rep(sin(theta[todo]), each = H)
      lp <- loglik_cols(fp, todo)
      ok <- lp > thr[todo]
      if (any(ok)) {
        f[, todo[ok]] <- fp[, ok, drop = FALSE]
        ll[todo[ok]] <- lp[ok]
      }
      rest <- todo[!ok]
      if (length(rest) == 0) break
      neg <- theta[rest] < 0
      lo[rest][neg] <- theta[rest][neg]
      hi[rest][!neg] <- theta[rest][!neg]
      theta[rest] <- stats::runif(length(rest), lo[rest], hi[rest])
      todo <- rest
    }
    if (it > n_burn) acc <- acc + gmean(A %*% f[obs, , drop = FALSE], s2)
  }
  acc / n_keep
}
# loglik over a subset of columns (closure over y, obs, g set per call below)
loglik_cols <- NULL
cond_mean <- function(y_arr, miss_frames, g, seed) {
  # y_arr: n x H x d; returns n x H x d with the conditional mean at the missing frames
  obs <- !(seq_len(H) %in% miss_frames)
  y <- matrix(aperm(y_arr, c(2, 1, 3)), H)  # H x (n d), column = (sequence, variable)
  loglik_cols <<- function(f, cols) -colSums((y[obs, cols, drop = FALSE] - g(f[obs, , drop = FALSE]))^2) /
    (2 * noise_var)
  m <- ess_mean(y, obs, g, n_keep, seed = seed)
  out <- y
  out[!obs, ] <- m
  aperm(array(out, c(H, dim(y_arr)[1], d)), c(2, 1, 3))
}

# Check on Gaussian data (phi = identity): Y = X + eps is a GP with nugget
# noise_var, whose conditional mean is closed-form.
gauss_spec <- gp_spec(H, d = d, Gamma = spec$Gamma + diag(noise_var, H))
y_gauss <- gp_simulate(gauss_spec, 10, seed = seed + 7)
t0 <- proc.time()[["elapsed"]]
check <- vapply(patterns, function(p) {
  m_ess <- cond_mean(y_gauss, frames[[p]], identity, seed + 8)
  err <- vapply(seq_len(10), function(i) {
    mi <- matrix(FALSE, H, d); mi[frames[[p]], ] <- TRUE
    xi <- y_gauss[i, , ]; xi[mi] <- NA
    ex <- gp_conditional(gauss_spec, xi, missing = mi)$mean[mi]
    mean((m_ess[i, , ][mi] - ex)^2)
  }, 0)
  mean(err)
}, 0)
say("slice-sampler check (phi = identity, 10 sequences): MSE to the exact conditional mean %s (%.0f s)",
    paste(sprintf("%.2g", check), collapse = " / "), proc.time()[["elapsed"]] - t0)

# --- impute and score -------------------------------------------------------
# Rows without the control variate (DITIMPUTE_BENCH_CONTROL): key "<fit>_nocv" for the fit <fit>.
nocv_keys <- if (control) paste0(intersect(names(fits), c("gp_dit", "gp_dit_score")), "_nocv") else character(0)
fit_of <- function(nm) sub("_nocv$", "", nm)
rows <- list()
per_seq <- list()
for (k in seq_along(patterns)) {
  p <- patterns[k]
  mask <- array(FALSE, dim(truth)); mask[, frames[[p]], ] <- TRUE
  x <- truth; x[mask] <- NA
  t0 <- proc.time()[["elapsed"]]
  cm <- cond_mean(truth, frames[[p]], phi, seed + 10 + k)
  t_cm <- proc.time()[["elapsed"]] - t0
  kap <- kappa_cond(spec, matrix(mask[1, , ], H))
  imps <- list()
  secs <- c()
  for (key in c(names(fits), nocv_keys)) {
    t0 <- proc.time()[["elapsed"]]
    imps[[key]] <- impute(fits[[fit_of(key)]], x, n_samples = n_samples, seed = seed + 20 + k, threads = threads,
                          control_variate = if (key %in% nocv_keys) FALSE)
    secs[key] <- proc.time()[["elapsed"]] - t0
  }
  t0 <- proc.time()[["elapsed"]]
  imps$gp_fit <- impute(gfit, x, n_samples = n_samples, seed = seed + 20 + k, threads = threads)
  secs["gp_fit"] <- proc.time()[["elapsed"]] - t0
  t0 <- proc.time()[["elapsed"]]
  imps$oracle <- impute(best_linear, x, n_samples = n_samples, seed = seed + 20 + k, threads = threads)
  secs["oracle"] <- proc.time()[["elapsed"]] - t0
  for (nm in names(imps)) {
    imp <- imps[[nm]]
    met_t <- imputation_metrics(imp, truth = truth)            # per sequence, against the truth
    met_c <- imputation_metrics(imp, truth = cm)               # per sequence, against the conditional mean
    cov_t <- coverage(imp, truth = truth)$coverage
    per_seq[[length(per_seq) + 1]] <- data.frame(imputer = nm, pattern = p, sequence = seq_len(n_test),
                                                 mse_truth = met_t$mse, mse_cond_mean = met_c$mse)
    rows[[length(rows) + 1]] <- data.frame(
      imputer = nm, latent = TRUE, n = if (nm == "oracle") NA_real_ else n_train, H = H, d = d, pattern = p,
      strategy = if (fit_of(nm) %in% names(fits)) "S4" else NA_character_, seed = seed, kappa = kap,
      coverage = mean(cov_t), coverage_se = stats::sd(cov_t) / sqrt(n_test), coverage_truth = mean(cov_t),
      interval_coverage = mean(met_t$interval_coverage), mse = mean(met_t$mse), mae = mean(met_t$mae),
      crps = mean(met_t$crps), width = mean(met_t$width), radius = mean(imp$radius), target = "truth",
      train_seconds = if (fit_of(nm) %in% names(fits)) t_fit[[fit_of(nm)]] else if (nm == "gp_fit") t_gp else 0,
      final_loss = if (fit_of(nm) %in% names(fits)) fits[[fit_of(nm)]]$train_info$final_loss %||% NA_real_ else NA_real_,
      seconds = secs[[nm]], mse_cond_mean = mean(met_c$mse), cond_mean_seconds = t_cm, stringsAsFactors = FALSE)
  }
  for (key in names(imported)) {
    pt <- imported[[key]][[k]]
    stopifnot(all(pt[!mask] == truth[!mask]))
    mse_of <- function(target) apply((pt - target)^2 * mask, 1, sum) / sum(mask[1, , ])
    per_seq[[length(per_seq) + 1]] <- data.frame(imputer = key, pattern = p, sequence = seq_len(n_test),
                                                 mse_truth = mse_of(truth), mse_cond_mean = mse_of(cm))
    rows[[length(rows) + 1]] <- data.frame(
      imputer = key, latent = TRUE, n = NA_real_, H = H, d = d, pattern = p, strategy = "S4", seed = seed,
      kappa = kap, coverage = NA_real_, coverage_se = NA_real_, coverage_truth = NA_real_,
      interval_coverage = NA_real_, mse = mean(mse_of(truth)), mae = mean(apply(abs(pt - truth) * mask, 1, sum)) / sum(mask[1, , ]),
      crps = NA_real_, width = NA_real_, radius = NA_real_, target = "truth", train_seconds = NA_real_,
      final_loss = NA_real_, seconds = NA_real_, mse_cond_mean = mean(mse_of(cm)), cond_mean_seconds = t_cm,
      stringsAsFactors = FALSE)
  }
  say("%s done (conditional mean %.0f s; imputation %s s)", p, t_cm, paste(sprintf("%.0f", secs), collapse = "/"))
}
res <- do.call(rbind, rows)
ps <- do.call(rbind, per_seq)

# Paired differences DiT - fitted GP and DiT - best linear, per pattern, with
# the standard error over test sequences.
paired <- do.call(rbind, lapply(patterns, function(p) {
  g <- function(nm, col) ps[[col]][ps$imputer == nm & ps$pattern == p]
  do.call(rbind, lapply(c(names(fits), nocv_keys, names(imported)), function(key) do.call(rbind, lapply(c("gp_fit", "oracle"), function(other) {
    dc <- g(key, "mse_cond_mean") - g(other, "mse_cond_mean")
    dt <- g(key, "mse_truth") - g(other, "mse_truth")
    data.frame(pattern = p, dit = key, against = other, diff_cond_mean = mean(dc),
               se_cond_mean = stats::sd(dc) / sqrt(n_test), diff_truth = mean(dt), se_truth = stats::sd(dt) / sqrt(n_test))
  }))))
}))
print(res[c("imputer", "pattern", "mse_cond_mean", "mse", "coverage", "interval_coverage", "crps")], digits = 3)
print(paired, digits = 3)

cpu <- sum((proc.time() - cpu0)[c(1, 2)])
wall <- (proc.time() - cpu0)[[3]]
label <- c(dit = "DiT 64/3/4, S4", gp_dit = "GP-DiT 64/3/4, S4 (residual)",
           gp_dit_channels = "GP-DiT 64/3/4, S4 (channels)", gp_dit_score = "GP-DiT 64/3/4, S4 (score)",
           gp_dit_nocv = "GP-DiT 64/3/4, S4 (residual) without the GP control variate",
           gp_dit_score_nocv = "GP-DiT 64/3/4, S4 (score) without the GP control variate",
           gp_fit = "fitted GP (gp_fit)",
           oracle = "best linear (exact moments)", stats::setNames(names(imported), names(imported)))
f3 <- function(v) sprintf("%.3f", v)
out_file <- file.path("bench", "results", out_name)
# The settings of this run, as the command line that repeats it.
env <- Sys.getenv()
env <- env[grepl("^DITIMPUTE_BENCH_", names(env)) & nzchar(env)]
command <- paste(c(sprintf("%s=%s", names(env), shQuote(env)), "Rscript bench/reproduce_paper_latent.R"), collapse = " ")
dit_lines <- vapply(names(fits), function(key) {
  ti <- fits[[key]]$train_info
  sprintf("%s: dit_fit()'s default recipe%s, %s (stop: %s, weights of step %s of %d, best validation loss %.4f), %.0f s of training, load average %s before it.",
          label[[key]], paste(c(if (patience != 10) sprintf(" with patience = %d", patience),
                                if (key != "dit" && !is.null(gp_pool)) sprintf(", gp_pool = %d", gp_pool)), collapse = ""),
          if (dit_time > 0) sprintf("time_limit = %g s", dit_time) else sprintf("%d steps requested", steps),
          ti$stop_reason %||% "not recorded", format(ti$best_step %||% NA), fits[[key]]$steps,
          ti$best_val_loss %||% NA_real_, t_fit[[key]], load_fit[[key]])
}, "")
# A cached model was trained by an earlier run: its seconds above are the loading's.
for (key in names(cached_from)) {
  dit_lines[[key]] <- paste(dit_lines[[key]], sprintf("(Not trained in this run: loaded from %s.)", cached_from[[key]]))
}
lines <- c(
  "# The paper's latent GP (section 6.2) at CPU scale (bench/reproduce_paper_latent.R)", "",
  sprintf("Produced by `%s` on %s (%s, LibTorch %s, %d thread(s)).", command,
          format(Sys.time(), "%Y-%m-%d %H:%M %Z"), R.version.string, torch_backend()$torch_version, threads),
  sprintf("CPU time %.0f s (user + system), wall %.0f s; load average (1/5/15 min) %s at the start, %s at the end (2 cores).",
          cpu, wall, load0, loadavg()),
  "",
  sprintf("Y = phi(X) + eps, phi(x) = x + exp(-x^2) + 2 sin(x), eps ~ N(0, %g); X a GP, Laplace lengthscale 64, H = %d, d = %d, Lambda = I. %d training sequences, %d test sequences (the same for every pattern and imputer), %d samples per imputation (a DiT's point is their mean); patterns P1-P4 at H = 48.",
          noise_var, H, d, n_train, n_test, n_samples),
  "DiTs: width/depth/heads 64/3/4, strategy S4; a GP-DiT is dit_fit(gp = the fitted GP below) with the gp_mode its label names.",
  "The residual and score GP-DiTs impute with impute()'s default control variate: each missing entry's samples shifted by beta (mean(b) - mu), b the draws of the model's GP base from the same random numbers, mu its exact mean, beta the slope of the samples on b.",
  if (control) "Rows \"without the GP control variate\": the same model and seeds with impute(control_variate = FALSE), whose point carries the Monte Carlo error Var(Y_miss | Y_obs) / samples.",
  dit_lines,
  if (length(imports)) sprintf("Imported (trained elsewhere by `bench_dit latent` on this run's exported data; its log says how): %s.",
                               paste(sprintf("%s = `%s`", names(imports), imports), collapse = "; ")),
  sprintf("Fitted GP: gp_fit(kernel = \"laplace\", fit_nugget = TRUE) on %d of the training sequences, %.0f s.", min(400L, n_train), t_gp),
  "Best linear: the GP with the exact mean and covariance of Y (not available to a user; the floor of any linear imputer).",
  sprintf("Conditional mean: elliptical slice sampling of X | Y_obs, %d iterations kept after %d burn-in per (sequence, variable), Rao-Blackwellised over X_miss; the same sampler with phi = identity, where the answer is closed-form, is off by an MSE of %s on P1-P4 (10 sequences).",
          n_keep, n_keep %/% 2, paste(sprintf("%.2g", check), collapse = " / ")),
  "",
  "## Scores per pattern (means over test sequences)", "",
  "mse_cm = MSE of the point imputation to the conditional mean E[Y_miss | Y_obs]; mse_truth = to the true values; coverage = share of test sequences whose true missing values lie in the 95% region; intervals = share of missing entries inside their 95% interval.", "",
  "| pattern | kappa | imputer | mse_cm | mse_truth | crps | coverage | intervals |", "|---|---|---|---|---|---|---|---|",
  sprintf("| %s | %.1f | %s | %s | %s | %s | %.1f%% | %.1f%% |", res$pattern, res$kappa, label[res$imputer],
          sprintf("%.4f", res$mse_cond_mean), f3(res$mse), f3(res$crps), 100 * res$coverage, 100 * res$interval_coverage),
  "",
  "## Paired differences, DiT minus the other (mean over test sequences +- standard error)", "",
  "Negative = the DiT is closer. The truth column estimates the same difference with the irreducible variance added to each term.", "",
  "| pattern | DiT | against | to the conditional mean | to the truth |", "|---|---|---|---|---|",
  sprintf("| %s | %s | %s | %+.4f +- %.4f | %+.4f +- %.4f |", paired$pattern, label[paired$dit], label[paired$against],
          paired$diff_cond_mean, paired$se_cond_mean, paired$diff_truth, paired$se_truth))
writeLines(lines, out_file)
dir.create("build", showWarnings = FALSE)
saveRDS(list(rows = res, per_sequence = ps, paired = paired, check = check,
             train_info = lapply(fits, function(f) f$train_info)),
        file.path("build", sub("\\.md$", ".rds", out_name)))
say("written: %s", out_file)

if (update_rds) {
  rds <- "inst/extdata/paper-results.rds"
  old <- readRDS(rds)
  keep <- intersect(names(old$latent), names(res))
  old$latent <- res[c(keep, setdiff(names(res), keep))]
  old$info$latent_rows <- list(
    date = format(Sys.time(), "%Y-%m-%d %H:%M %Z"), command = command, threads = threads,
    wall_seconds = wall, cpu_seconds = cpu, steps = steps, time_limit = dit_time, n_samples = n_samples,
    n_train = n_train, n_test = n_test, config = list(width = 64, depth = 3, heads = 4), recipe = "dit_fit() defaults",
    train_info = lapply(fits, function(f) f$train_info),
    note = paste("The latent table was replaced by bench/reproduce_paper_latent.R: DiT S4 only (S1-S3 not re-run),",
                 "the fitted GP (imputer \"gp_fit\") and the best linear imputer (\"oracle\"), with mse_cond_mean",
                 "against the conditional mean estimated by elliptical slice sampling."))
  saveRDS(old, rds, compress = "xz")
  say("updated: %s", rds)
}
