# Multiple imputation for pooling, measured: does the 95% interval of a
# regression slope, pooled over m = 20 completions of impute_series() with
# mice::pool() (Rubin's rules), cover the true slope 95% of the time?
#
# Each replication simulates a bivariate series of T frames: b_t AR(1)
# (phi 0.7, unit innovations), a_t = 1 + 0.5 b_t + e_t with e_t iid N(0, 0.5^2),
# so that lm(a ~ b) on complete data is a correct regression (true slope 0.5).
# 30% of a is hidden in gaps of 5 to 15 frames; b is complete. Per
# replication the 95% interval of the slope comes from
#   complete  lm(a ~ b) on the complete data (the reference: ~95% by design);
#   ditimpute impute_series(n_samples = m), pool(with(imp, lm(a ~ b))): the
#             completions hold the fitted GP's parameters fixed (improper
#             imputation; ?as_mids);
#   mice_norm mice(method = "norm", m) on (a, b): Bayesian linear regression
#             imputation, proper, and the exact model for a given b here.
# Coverage is the share of replications whose interval holds 0.5, with its
# Monte Carlo standard error sqrt(p (1 - p) / reps); also the mean pooled
# standard error and the mean fraction of missing information (fmi).
#
# Usage: Rscript bench/mi_pooling.R [reps] [T] [m]   (default 200 200 20;
# writes bench/results/mi_pooling.md)
suppressMessages(library(ditimpute))
if (!requireNamespace("mice", quietly = TRUE)) stop("bench/mi_pooling.R needs the mice package")
args <- commandArgs(trailingOnly = TRUE)
reps <- if (length(args) > 0) as.integer(args[1]) else 200L
n_time <- if (length(args) > 1) as.integer(args[2]) else 200L
m <- if (length(args) > 2) as.integer(args[3]) else 20L
slope <- 0.5

simulate <- function(r) {
  set.seed(1000 + r)
  b <- as.numeric(stats::arima.sim(list(ar = 0.7), n_time))
  a <- 1 + slope * b + stats::rnorm(n_time, sd = 0.5)
  full <- data.frame(date = as.Date("2020-01-01") + seq_len(n_time) - 1, a = a, b = b)
  hide <- rep(FALSE, n_time)
  while (mean(hide) < 0.3) {
    len <- sample(5:15, 1)
    start <- sample.int(n_time - len + 1, 1)
    hide[start + seq_len(len) - 1] <- TRUE
  }
  gappy <- full
  gappy$a[hide] <- NA
  list(full = full, gappy = gappy, share = mean(hide))
}

slope_row <- function(s) {
  row <- s[as.character(s$term) == "b", ]
  data.frame(estimate = row$estimate, se = row$std.error, lower = row[["2.5 %"]], upper = row[["97.5 %"]],
             fmi = if (is.null(row$fmi)) NA_real_ else row$fmi)
}

t0 <- proc.time()[["elapsed"]]
rows <- list()
for (r in seq_len(reps)) {
  sim <- simulate(r)
  ref <- stats::lm(a ~ b, data = sim$full)
  ci <- stats::confint(ref)["b", ]
  rows[[length(rows) + 1]] <- data.frame(rep = r, method = "complete", estimate = stats::coef(ref)[["b"]],
                                         se = sqrt(stats::vcov(ref)["b", "b"]), lower = ci[[1]], upper = ci[[2]],
                                         fmi = NA_real_, seconds = NA_real_)
  t1 <- proc.time()[["elapsed"]]
  imp <- impute_series(sim$gappy, n_samples = m, seed = r, threads = 1)
  pooled <- summary(mice::pool(with(imp, lm(a ~ b))), conf.int = TRUE)
  pooled$fmi <- mice::pool(with(imp, lm(a ~ b)))$pooled$fmi
  rows[[length(rows) + 1]] <- cbind(rep = r, method = "ditimpute", slope_row(pooled),
                                    seconds = proc.time()[["elapsed"]] - t1)
  t1 <- proc.time()[["elapsed"]]
  mi <- mice::mice(sim$gappy[c("a", "b")], m = m, method = "norm", printFlag = FALSE, seed = r)
  fit <- mice::pool(with(mi, stats::lm(a ~ b)))
  s <- summary(fit, conf.int = TRUE)
  s$fmi <- fit$pooled$fmi
  rows[[length(rows) + 1]] <- cbind(rep = r, method = "mice_norm", slope_row(s),
                                    seconds = proc.time()[["elapsed"]] - t1)
  if (r %% 20 == 0) message(sprintf("%d of %d replications, %.0f s", r, reps, proc.time()[["elapsed"]] - t0))
}
res <- do.call(rbind, rows)
res$covers <- res$lower <= slope & slope <= res$upper

summ <- do.call(rbind, lapply(split(res, factor(res$method, levels = c("complete", "ditimpute", "mice_norm"))),
                              function(d) {
  p <- mean(d$covers)
  data.frame(method = d$method[1], reps = nrow(d), coverage = p, mc_se = sqrt(p * (1 - p) / nrow(d)),
             mean_estimate = mean(d$estimate), sd_estimate = stats::sd(d$estimate), mean_se = mean(d$se),
             mean_fmi = mean(d$fmi), seconds_per_rep = mean(d$seconds))
}))
fmt <- function(df) {
  out <- df
  num <- vapply(out, is.numeric, TRUE)
  out[num] <- lapply(out[num], function(v) ifelse(is.na(v), "", formatC(v, digits = 4, format = "fg")))
  c(paste("|", paste(names(out), collapse = " | "), "|"), paste("|", paste(rep("---", ncol(out)), collapse = " | "), "|"),
    apply(out, 1, function(x) paste("|", paste(x, collapse = " | "), "|")))
}
lines <- c("# Pooled 95% intervals of a regression slope over m completions (bench/mi_pooling.R)", "",
           sprintf("Run: `Rscript bench/mi_pooling.R %d %d %d` on %s, %s; %.0f s in all (one run, one thread per fit; the machine was shared).",
                   reps, n_time, m, Sys.info()[["nodename"]], format(Sys.time(), "%Y-%m-%d"),
                   proc.time()[["elapsed"]] - t0), "",
           sprintf("Bivariate series of %d frames: b AR(1) (phi 0.7), a = 1 + 0.5 b + N(0, 0.5^2) noise; 30%% of a hidden in gaps of 5-15 frames (mean share %.3f); b complete. True slope 0.5. `coverage`: share of replications whose 95%% interval holds 0.5, `mc_se` its Monte Carlo standard error; `mean_se`: mean (pooled) standard error of the slope, against `sd_estimate`, the spread of the estimates over replications; `mean_fmi`: mean fraction of missing information from mice::pool().",
                   n_time, mean(vapply(seq_len(reps), function(r) simulate(r)$share, 0))), "",
           "- `complete`: lm(a ~ b) on the complete data, the reference.",
           sprintf("- `ditimpute`: impute_series(n_samples = %d), then mice::pool(with(imp, lm(a ~ b))). Improper: the completions hold the fitted GP's parameters fixed (see ?as_mids).", m),
           sprintf("- `mice_norm`: mice(method = \"norm\", m = %d) on (a, b), proper Bayesian regression imputation; here a given b is exactly linear-normal, so it is the right model.", m),
           "", fmt(summ))
writeLines(lines, "bench/results/mi_pooling.md")
writeLines(lines)
