# gp_fit() by maximum likelihood on BeijingAir's 100 training windows with
# heavy gaps: the EM fit (method = "em", the default e_step = "auto") against
# the L-BFGS fit on the exact gradient (method = "lbfgs"), in the same run, at
# each missing rate. Data and settings as bench/gp_fit_gaps_setup.R (Matern
# 3/2, fitted nugget >= 0.01, ridge 1e-3). For each fit: wall seconds, CPU
# seconds of this process (OpenBLAS's threads included), iterations,
# log-likelihood evaluations (L-BFGS: each an exact E-step), the exact
# log-likelihood and penalised objective, the gradient norm sqrt(g' I_c^-1 g)
# at the fit (for EM computed afterwards by one exact pass, not timed), and
# whether the fit says it converged (EM: gain below tol; L-BFGS: gradient norm
# below gradient_tol). The load average (uptime) is printed before each fit:
# the machine is shared.
# Run from the repository root:
#   Rscript bench/gp_fit_ml.R [data_dir] [rates, e.g. 0.1,0.3,0.5]
# Environment: DITIMPUTE_BENCH_EM_MAX_ITER (the EM fit's iteration cap,
# default 200), DITIMPUTE_BENCH_LBFGS_MAX_ITER (default 200),
# DITIMPUTE_BENCH_METHODS (default "lbfgs,em": which fits, in that order).
# It writes bench/results/gp_fit_ml.md (DITIMPUTE_BENCH_OUT to change).
source("bench/gp_fit_gaps_setup.R")

args <- commandArgs(trailingOnly = TRUE)
data_dir <- if (length(args) >= 1) args[1] else Sys.getenv("DITIMPUTE_DATA_DIR", "../shared/data")
rates <- if (length(args) >= 2) as.numeric(strsplit(args[2], ",")[[1]]) else c(0.1, 0.3, 0.5)
em_max_iter <- as.integer(Sys.getenv("DITIMPUTE_BENCH_EM_MAX_ITER", "200"))
lbfgs_max_iter <- as.integer(Sys.getenv("DITIMPUTE_BENCH_LBFGS_MAX_ITER", "200"))
methods <- strsplit(Sys.getenv("DITIMPUTE_BENCH_METHODS", "lbfgs,em"), ",")[[1]]
out <- Sys.getenv("DITIMPUTE_BENCH_OUT", "bench/results/gp_fit_ml.md")

load_avg <- function() trimws(sub(".*load average: ", "", system("uptime", intern = TRUE)))

one_fit <- function(x, method) {
  load <- load_avg()
  t0 <- proc.time()
  f <- suppressWarnings(gp_fit(x, kernel = "matern32", fit_nugget = TRUE, ridge = 1e-3, nugget_bounds = c(0.01, 1),
                               seed = 1, method = method,
                               max_iter = if (method == "em") em_max_iter else lbfgs_max_iter))
  t <- proc.time() - t0
  gn <- if (method == "lbfgs") f$fit$gradient_norm else ditimpute:::gp_fit_gradient(f, x)$gradient_norm
  r <- data.frame(method = method, e_step = f$fit$e_step, seconds = round(t[["elapsed"]], 1),
                  cpu_seconds = round(t[["user.self"]] + t[["sys.self"]], 1), load_before = load,
                  iterations = f$fit$iterations,
                  evaluations = if (method == "lbfgs") f$fit$evaluations else NA_integer_,
                  loglik = round(f$fit$loglik, 1), objective = round(f$fit$objective, 1),
                  gradient_norm = signif(gn, 3), converged = f$fit$converged,
                  lengthscale = round(f$kernel$lengthscale, 3), nugget = round(f$nugget, 4))
  print(r, row.names = FALSE)
  if (method == "lbfgs") cat("  gradient norm trace:", paste(signif(f$fit$gradient_trace, 3), collapse = " "), "\n")
  cat("  objective trace:", paste(round(f$fit$objective_trace, 1), collapse = " "), "\n")
  flush.console()
  list(row = r, fit = f)
}

rows <- list()
notes <- character()
for (rate in rates) {
  g <- gaps_data(data_dir, rate)
  res <- lapply(methods, function(m) one_fit(g$x, m))
  for (k in seq_along(res)) rows[[length(rows) + 1]] <- cbind(missing = sprintf("%.0f%%", 100 * rate), res[[k]]$row)
  if (length(res) == 2) {
    a <- res[[1]]$fit; b <- res[[2]]$fit
    notes <- c(notes, sprintf("* %.0f%% missing: |Lambda_%s - Lambda_%s| / |Lambda_%s| = %.3g; at most %d missing entries a window.",
                              100 * rate, methods[1], methods[2], methods[2],
                              norm(a$Lambda - b$Lambda, "F") / norm(b$Lambda, "F"), g$most))
  }
}
tab <- do.call(rbind, rows)
print(tab, row.names = FALSE)
md <- c("# gp_fit() maximum likelihood on BeijingAir: EM against L-BFGS on the exact gradient (bench/gp_fit_ml.R)", "",
        sprintf("Produced by `DITIMPUTE_BENCH_EM_MAX_ITER=%d DITIMPUTE_BENCH_LBFGS_MAX_ITER=%d DITIMPUTE_BENCH_METHODS=%s Rscript bench/gp_fit_ml.R %s %s` on %s, %d cores shared with other sessions (load average before each fit in the table: 1, 5 and 15 minutes).",
                em_max_iter, lbfgs_max_iter, paste(methods, collapse = ","), data_dir, paste(rates, collapse = ","),
                format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC"), parallel::detectCores()), "",
        "100 training windows of 30 x 132 (bench/gp_fit_gaps_setup.R: the data's own gaps plus entries hidden MCAR up to the rate), Matern 3/2, nugget fitted in [0.01, 1], ridge 1e-3 (so `objective` is the penalised log-likelihood both methods maximise). `cpu_seconds`: user + system time of the R process (OpenBLAS threads included). `gradient_norm`: sqrt(g' I_c^-1 g), g the exact gradient of the objective, I_c the complete-data information (block diagonal); for EM computed after the fit. EM converges when an iteration gains less than 1e-7 per observed entry, L-BFGS when the gradient norm is below 0.1.", "",
        paste0("| ", paste(names(tab), collapse = " | "), " |"),
        paste0("|", paste(rep("---", ncol(tab)), collapse = "|"), "|"),
        apply(tab, 1, function(r) paste0("| ", paste(trimws(r), collapse = " | "), " |")), "",
        notes)
dir.create(dirname(out), showWarnings = FALSE, recursive = TRUE)
writeLines(md, out)
