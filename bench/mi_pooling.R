# Multiple imputation for pooling, measured: does the 95% interval of a
# regression slope, pooled over m = 20 completions of impute_series() with
# mice::pool() (Rubin's rules), cover the true slope 95% of the time, with
# proper imputation (impute_series(proper = TRUE)) and without?
#
# Each replication simulates a bivariate series of T frames,
# a_t = 1 + 0.5 b_t + e_t with e_t iid N(0, 0.5^2), so that lm(a ~ b) on
# complete data is a correct regression (true slope 0.5), and b_t
#   ar1  AR(1), phi 0.7, unit innovations (T = 200 by default): a series with
#        memory, which the structural model's separable covariance
#        (Gamma %x% Lambda) cannot represent exactly: it gives a and b one
#        temporal correlation, while here a's residual is white;
#   iid  white N(0, 1) (T = 60 by default): a short series whose structure
#        the model holds exactly (its nugget), where the parameters are
#        estimated from few values, so that their uncertainty matters.
# 30% of a is hidden in gaps of 5 to 15 frames (the last one shortened so
# that exactly 30% is hidden); b is complete. Per
# replication the 95% interval of the slope comes from
#   complete         lm(a ~ b) on the complete data (the reference: ~95% by design);
#   ditimpute        impute_series(n_samples = m), pool(with(imp, lm(a ~ b))):
#                    the completions hold the fitted parameters fixed (improper);
#   ditimpute_proper the same with proper = TRUE (a parameter draw per completion);
#   mice_norm        mice(method = "norm", m) on (a, b): Bayesian linear regression
#                    imputation, proper, and the exact model of a given b here.
# The series go to impute_series() as a plain matrix (no time stamps, so no
# seasonal candidate: the cheapest fitting path; the form is chosen by BIC
# among the stationary, level and trend models with the smooth kernel).
# Coverage is the share of replications whose interval holds 0.5, with its
# Monte Carlo standard error sqrt(p (1 - p) / reps); also the mean pooled
# standard error against the spread of the estimates, and the mean fraction of
# missing information (fmi). Replication r simulates under set.seed(1000 + r)
# and imputes with seed r (ditimpute and mice alike).
#
# Usage: Rscript bench/mi_pooling.R [scenario] [reps] [T] [m]
#   (defaults: ar1 200 200 20; iid 200 60 20). Each finished replication is
#   appended to bench/results/mi_pooling_<scenario>.csv (git-ignored; a rerun resumes after
#   the replications there); then bench/results/mi_pooling.md is rewritten from
#   every scenario's csv: `Rscript bench/mi_pooling.R report` rewrites it alone.
suppressMessages(library(ditimpute))
if (!requireNamespace("mice", quietly = TRUE)) stop("bench/mi_pooling.R needs the mice package")
args <- commandArgs(trailingOnly = TRUE)
scenario <- if (length(args) > 0) args[1] else "ar1"
slope <- 0.5
out_dir <- "bench/results"
csv_of <- function(s) file.path(out_dir, sprintf("mi_pooling_%s.csv", s))
methods <- c("complete", "ditimpute", "ditimpute_proper", "mice_norm")

simulate <- function(r, n_time, scenario) {
  set.seed(1000 + r)
  b <- if (scenario == "ar1") as.numeric(stats::arima.sim(list(ar = 0.7), n_time)) else stats::rnorm(n_time)
  a <- 1 + slope * b + stats::rnorm(n_time, sd = 0.5)
  full <- data.frame(a = a, b = b)
  hide <- rep(FALSE, n_time)
  target <- round(0.3 * n_time)
  while (sum(hide) < target) {  # gaps of 5-15 frames; the last one cut so that exactly 30% is hidden
    len <- min(sample(5:15, 1), target - sum(hide))
    start <- sample.int(n_time - len + 1, 1)
    hide[start + seq_len(len) - 1] <- TRUE
  }
  gappy <- full
  gappy$a[hide] <- NA
  list(full = full, gappy = gappy, share = mean(hide))
}

pooled_row <- function(fits) {
  p <- mice::pool(fits)
  s <- summary(p, conf.int = TRUE)
  i <- which(as.character(s$term) == "b")
  data.frame(estimate = s$estimate[i], se = s$std.error[i], lower = s[i, "2.5 %"], upper = s[i, "97.5 %"],
             fmi = p$pooled$fmi[as.character(p$pooled$term) == "b"])
}

timed <- function(expr) {
  t1 <- proc.time()[["elapsed"]]
  val <- expr
  cbind(val, seconds = proc.time()[["elapsed"]] - t1)
}

read_reps <- function(csv) {
  raw <- readLines(csv)
  raw <- raw[!startsWith(raw, "#")]
  if (length(raw) < 2) NULL else utils::read.csv(text = raw)
}

run <- function(scenario, reps, n_time, m) {
  csv <- csv_of(scenario)
  done <- if (file.exists(csv)) read_reps(csv) else NULL
  first <- if (is.null(done)) 1L else max(done$rep) + 1L
  if (first > reps) return(invisible())
  if (is.null(done)) {
    writeLines(sprintf("# bench/mi_pooling.R %s: started %s, uptime at start: %s", scenario,
                       format(Sys.time(), "%Y-%m-%d %H:%M:%S UTC", tz = "UTC"),
                       trimws(paste(system("uptime", intern = TRUE), collapse = " "))), csv)
  }
  t0 <- proc.time()[["elapsed"]]
  for (r in first:reps) {
    sim <- simulate(r, n_time, scenario)
    ref <- stats::lm(a ~ b, data = sim$full)
    ci <- stats::confint(ref)["b", ]
    x <- as.matrix(sim$gappy)
    rows <- rbind(
      data.frame(method = "complete", estimate = stats::coef(ref)[["b"]], se = sqrt(stats::vcov(ref)["b", "b"]),
                 lower = ci[[1]], upper = ci[[2]], fmi = NA_real_, seconds = NA_real_),
      cbind(method = "ditimpute", timed(pooled_row(with(impute_series(x, n_samples = m, seed = r, threads = 1),
                                                        lm(a ~ b))))),
      cbind(method = "ditimpute_proper",
            timed(pooled_row(with(impute_series(x, n_samples = m, seed = r, threads = 1, proper = TRUE), lm(a ~ b))))),
      cbind(method = "mice_norm",
            timed(pooled_row(with(mice::mice(sim$gappy, m = m, method = "norm", printFlag = FALSE, seed = r),
                                  stats::lm(a ~ b))))))
    rows <- cbind(scenario = scenario, rep = r, n_time = n_time, m = m, share = sim$share, rows)
    suppressWarnings(utils::write.table(rows, csv, append = TRUE, sep = ",", row.names = FALSE,
                                        col.names = r == 1L && is.null(done)))  # "appending column names" 
    if (r %% 10 == 0) message(sprintf("%s: %d of %d replications, %.0f s", scenario, r, reps, proc.time()[["elapsed"]] - t0))
  }
  cat(sprintf("# finished %s, uptime at end: %s\n", format(Sys.time(), "%Y-%m-%d %H:%M:%S UTC", tz = "UTC"),
              trimws(paste(system("uptime", intern = TRUE), collapse = " "))), file = csv, append = TRUE)
}

fmt <- function(df) {
  out <- df
  num <- vapply(out, is.numeric, TRUE)
  out[num] <- lapply(out[num], function(v) ifelse(is.na(v), "", formatC(v, digits = 4, format = "fg")))
  c(paste("|", paste(names(out), collapse = " | "), "|"), paste("|", paste(rep("---", ncol(out)), collapse = " | "), "|"),
    apply(out, 1, function(x) paste("|", paste(x, collapse = " | "), "|")))
}

report <- function() {
  lines <- c("# Pooled 95% intervals of a regression slope over m completions (bench/mi_pooling.R)", "",
             "Written by `bench/mi_pooling.R` from its per-replication working files `bench/results/mi_pooling_<scenario>.csv` (not kept in the repository: about 0.5 MB each); their comment lines, copied under each heading, give the start, each run's end and the machine's load (`uptime`) then (a run resumed to more replications adds an end line). 2-core machine shared with other jobs; one thread per fit, so `seconds` are wall times under that load.", "",
             "Series: a = 1 + 0.5 b + N(0, 0.5^2) noise, true slope 0.5; 30% of a hidden in gaps of 5-15 frames (the last one shortened to hide exactly 30%), b complete. Scenario `ar1`: b AR(1) (phi 0.7), a series with memory whose cross-structure the model's separable covariance cannot hold exactly. Scenario `iid`: b white noise on a short series, which the model holds exactly, so that the parameters' uncertainty is what remains. Replication r: simulated under set.seed(1000 + r), imputed with seed = r.", "",
             "- `complete`: lm(a ~ b) on the complete data, the reference.",
             "- `ditimpute`: impute_series(x, n_samples = m) of the series as a matrix, then mice::pool(with(imp, lm(a ~ b))); improper (parameters fixed at their fit).",
             "- `ditimpute_proper`: the same with proper = TRUE (each completion under its own draw of the parameters).",
             "- `mice_norm`: mice(method = \"norm\", m) on (a, b), proper Bayesian regression imputation; here a given b is exactly linear-normal, so it is the right model.", "",
             "`coverage`: share of replications whose 95% interval holds 0.5, `mc_se` its Monte Carlo standard error sqrt(p (1 - p) / reps); `mean_se`: mean pooled standard error, against `sd_estimate`, the spread of the estimates over replications (equal when the intervals have the right width); `mean_fmi`: mean fraction of missing information (mice::pool()); `seconds`: mean per replication (impute and pool).", "")
  for (s in c("ar1", "iid")) {
    csv <- csv_of(s)
    if (!file.exists(csv)) next
    raw <- readLines(csv)
    res <- read_reps(csv)
    res$covers <- res$lower <= slope & slope <= res$upper
    summ <- do.call(rbind, lapply(methods, function(mt) {
      d <- res[res$method == mt, ]
      p <- mean(d$covers)
      data.frame(method = mt, reps = nrow(d), coverage = p, mc_se = sqrt(p * (1 - p) / nrow(d)),
                 mean_estimate = mean(d$estimate), sd_estimate = stats::sd(d$estimate), mean_se = mean(d$se),
                 mean_fmi = mean(d$fmi), seconds = mean(d$seconds))
    }))
    lines <- c(lines, sprintf("## Scenario %s: T = %d frames, m = %d, %d replications (mean share hidden %.3f)", s,
                              res$n_time[1], res$m[1], max(res$rep), mean(res$share[res$method == "complete"])), "",
               paste0("    ", raw[startsWith(raw, "#")]), "", fmt(summ), "")
  }
  writeLines(lines, file.path(out_dir, "mi_pooling.md"))
  writeLines(lines)
}

if (scenario != "report") {
  defaults <- list(ar1 = c(200L, 200L, 20L), iid = c(200L, 60L, 20L))[[scenario]]
  if (is.null(defaults)) stop("scenario must be ar1, iid or report")
  num <- function(i) if (length(args) > i) as.integer(args[i + 1]) else defaults[i]
  run(scenario, num(1), num(2), num(3))
}
report()
