# Honest uncertainty, measured (issue "honest uncertainty"): coverage of 95%
# regions against the exact conditional law (GP data, H = 96, d = 8, Laplace
# lengthscale 128, Lambda = I, patterns P1-P4), before and after:
#  A. the exact GP imputer with Z = 100: in-sample regions (the paper's
#     Algorithm 1 on 100 exact draws) vs the closed-form regions;
#  B. the diffusion sampler (sampler = "unipc", UniPC-3 at its default 12 steps) driven by the exact score (oracle), Z = 100:
#     in-sample vs finite-sample (split) regions;
#  C. a DiT trained with strategy S4 at CPU scale: raw vs calibrated
#     (calibrate() on held-out sequences masked with P1-P4), coverage of the
#     held-out truths of >= 200 test sequences per pattern.
# Usage: Rscript bench/coverage.R [part ...]   (default: A B C)
# Environment: DITIMPUTE_BENCH_N_TEST (test sequences per pattern in C, 200),
# DITIMPUTE_BENCH_N_CAL (calibration sequences per pattern in C, 100),
# DITIMPUTE_BENCH_STEPS (DiT training steps, 1500), DITIMPUTE_BENCH_THREADS
# (threads, 2; use 1 on a shared machine, see bench/results/dit_learning.md).
# The DiT trains with dit_fit()'s own recipe (warmed-up EMA, cosine learning
# rate, early stopping on a 10% validation share); only its size, the
# strategy, the steps and the seed are set here.
suppressPackageStartupMessages(library(ditimpute))
parts <- commandArgs(trailingOnly = TRUE)
if (length(parts) == 0) parts <- c("A", "B", "C")
threads <- as.integer(Sys.getenv("DITIMPUTE_BENCH_THREADS", "2"))
cpu0 <- proc.time()
load0 <- tryCatch(readLines("/proc/loadavg"), error = function(e) NA_character_)
spec <- gp_spec(96, d = 8, kernel = gp_kernel("laplace", lengthscale = 128))
pp <- paper_patterns()
hide <- function(x, p) {
  m <- array(rep(resolve_pattern(p), each = dim(x)[1]), dim(x))
  x[m] <- NA
  x
}
resolve_pattern <- function(p) {
  m <- matrix(FALSE, 96, 8)
  m[p$frames, ] <- TRUE
  m
}
`%||%` <- function(a, b) if (is.null(a)) b else a
fmt <- function(v) sprintf("%.1f%%", 100 * v)
out <- list()

if ("A" %in% parts || "B" %in% parts) {
  truth <- gp_simulate(spec, 30, seed = 1)
  for (k in seq_along(pp)) {
    x <- hide(truth, pp[[k]])
    if ("A" %in% parts) {
      t0 <- proc.time()[["elapsed"]]
      exact <- impute(spec, x, n_samples = 100, seed = k, threads = threads)
      t_exact <- proc.time()[["elapsed"]] - t0
      insample <- imputation_from_completions(x, completions(exact), method = "exact draws, in-sample",
                                              level = 0.95, region = "quantile")
      c_in <- mean(coverage(insample, spec = spec, n_draws = 2000, seed = 10 + k, threads = threads)$coverage)
      c_ex <- mean(coverage(exact, spec = spec, n_draws = 2000, seed = 10 + k, threads = threads)$coverage)
      out[[length(out) + 1]] <- data.frame(part = "A exact GP", pattern = names(pp)[k], before = c_in, after = c_ex,
                                           seconds = t_exact)
    }
    if ("B" %in% parts) {
      t0 <- proc.time()[["elapsed"]]
      orc <- impute(spec, x, n_samples = 100, sampler = "unipc", seed = k, threads = threads)
      t_orc <- proc.time()[["elapsed"]] - t0
      orc_q <- impute(spec, x, n_samples = 100, sampler = "unipc", seed = k, threads = threads, region = "quantile")
      c_q <- mean(coverage(orc_q, spec = spec, n_draws = 2000, seed = 20 + k, threads = threads)$coverage)
      c_f <- mean(coverage(orc, spec = spec, n_draws = 2000, seed = 20 + k, threads = threads)$coverage)
      out[[length(out) + 1]] <- data.frame(part = "B oracle sampler", pattern = names(pp)[k], before = c_q,
                                           after = c_f, seconds = t_orc)
    }
  }
}

if ("C" %in% parts) {
  n_test <- as.integer(Sys.getenv("DITIMPUTE_BENCH_N_TEST", "200"))
  n_cal <- as.integer(Sys.getenv("DITIMPUTE_BENCH_N_CAL", "100"))
  steps <- as.integer(Sys.getenv("DITIMPUTE_BENCH_STEPS", "1500"))
  # The trained model is kept in build/ so a rerun skips training.
  model_file <- Sys.getenv("DITIMPUTE_BENCH_MODEL", sprintf("build/bench-coverage-dit-default-recipe-%d.dit", steps))
  t0 <- proc.time()[["elapsed"]]
  if (file.exists(model_file)) {
    fit <- dit_load(model_file)
  } else {
    fit <- dit_fit(gp_simulate(spec, 4000, seed = 2), config = dit_config(96, 8, width = 64, depth = 3, heads = 4),
                   strategy = strategy_preset("S4"), steps = steps, seed = 3, threads = threads, progress = FALSE)
    dir.create(dirname(model_file), showWarnings = FALSE, recursive = TRUE)
    dit_save(fit, model_file)
  }
  t_train <- proc.time()[["elapsed"]] - t0
  cat(sprintf("C: DiT 64/3/4 trained with S4, %d steps in %.0f s\n", steps, t_train))
  ti <- fit$train_info
  t0 <- proc.time()[["elapsed"]]
  cal <- calibrate(fit, gp_simulate(spec, n_cal, seed = 4), missing = unclass(pp), level = 0.95, n_samples = 50,
                   seed = 5, threads = threads)
  t_cal <- proc.time()[["elapsed"]] - t0
  print(cal)
  test <- gp_simulate(spec, n_test, seed = 6)
  for (k in seq_along(pp)) {
    x <- hide(test, pp[[k]])
    t1 <- proc.time()[["elapsed"]]
    raw <- impute(fit, x, n_samples = 50, seed = 7, threads = threads)
    t_imp <- proc.time()[["elapsed"]] - t1
    calibrated <- apply_calibration(raw, cal)
    c_raw <- mean(coverage(raw, truth = test)$coverage)
    cv <- coverage(calibrated, truth = test)
    c_cal <- mean(cv$coverage)
    ci <- stats::binom.test(sum(cv$coverage), nrow(cv))$conf.int
    out[[length(out) + 1]] <- data.frame(part = "C DiT S4 vs truth", pattern = names(pp)[k], before = c_raw,
                                         after = c_cal, seconds = t_imp,
                                         note = sprintf("n = %d, 95%% CI [%.1f, %.1f]; intervals %s -> %s", n_test,
                                                        100 * ci[1], 100 * ci[2],
                                                        fmt(mean(coverage(raw, truth = test)$interval_coverage)),
                                                        fmt(mean(cv$interval_coverage))))
  }
  cat(sprintf("C: calibration (%d cases, 50 samples) %.0f s\n", 4 * n_cal, t_cal))
}

res <- do.call(rbind, lapply(out, function(r) { if (is.null(r$note)) r$note <- ""; r }))
res$before <- fmt(res$before)
res$after <- fmt(res$after)
cat("\nCoverage of 95% regions (A, B: exact conditional mass, 30 sequences x 2000 draws; C: held-out truths)\n")
cat("before = in-sample regions (A, B) or the raw DiT (C); after = closed-form (A), finite-sample (B), calibrated (C)\n")
print(res, row.names = FALSE)
out_file <- file.path("bench", "results", sprintf("coverage_%s.md", paste(parts, collapse = "")))
dir.create(dirname(out_file), showWarnings = FALSE, recursive = TRUE)
writeLines(c(sprintf("# Coverage of 95%% regions (bench/coverage.R %s)", paste(parts, collapse = " ")), "",
             sprintf("Produced by `Rscript bench/coverage.R %s` on %s (%s, %d threads).", paste(parts, collapse = " "),
                     format(Sys.Date()), R.version.string, threads),
             "A, B: exact conditional mass, 30 sequences x 2000 draws; C: held-out truths.",
             "before = in-sample regions (A, B) or the raw DiT (C); after = closed-form (A), finite-sample (B),",
             "calibrated (C).",
             if ("C" %in% parts) sprintf("C: DiT 64/3/4, %d steps, S4, dit_fit()'s default recipe (lr 2e-3 cosine with warm-up, EMA 0.999 warmed up, early stopping on 10%% validation; stop: %s, weights of step %s, training %.0f s); calibrate() on %d held-out sequences per pattern (groups by pattern), %d test sequences per pattern, 50 samples.",
                                         steps, format(ti$stop_reason %||% NA), format(ti$best_step %||% NA), t_train, n_cal, n_test),
             sprintf("CPU time %.0f s (user + system), wall %.0f s; load average (1/5/15 min) %s at the start, %s at the end (2 cores shared with other jobs).",
                     sum((proc.time() - cpu0)[c(1, 2)]), (proc.time() - cpu0)[[3]],
                     paste(strsplit(load0, " ")[[1]][1:3], collapse = " "),
                     paste(strsplit(readLines("/proc/loadavg"), " ")[[1]][1:3], collapse = " ")),
             "",
             "| part | pattern | before | after | seconds | note |", "|---|---|---|---|---|---|",
             sprintf("| %s | %s | %s | %s | %.1f | %s |", res$part, res$pattern, res$before, res$after, res$seconds,
                     res$note)),
           out_file)
cat("written:", out_file, "\n")
