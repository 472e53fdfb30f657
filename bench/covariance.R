# gp_conditional(spec, x) with its covariance at BeijingAir size against R's
# own chol2inv(chol(A)) on an SPD matrix of the same size, in the same run
# (issue 30). H = 48, d = 132, Matern 3/2 (lengthscale 6, nugget 0.01), a
# random full-rank Lambda (fixed seed), 30% of entries missing at random.
# Timed: the whole call (means, m x m covariance, kappa_cond, kappa_obs), and
# the means alone (cov = FALSE); each figure the median of `reps` runs,
# alternating with the reference; the ratio of the fastest runs too (R's
# reference is bimodal on this project's VMs: ~0.11 s when malloc hands back
# pages already touched, ~0.2 s when the 27 MB results need fresh pages, each
# first touch of a 4 KB page costing ~12 us there). Checks the precision path against the
# dense reference path (method = "dense": Cholesky of all H d entries) to
# 1e-10 relative (means, covariance) and prints the kappas of both.
#   Rscript bench/covariance.R [reps]
suppressPackageStartupMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
reps <- if (length(args) >= 1) as.integer(args[1]) else 5L
set.seed(2024)
H <- 48; d <- 132
M <- matrix(rnorm(d * d), d)
Lambda <- crossprod(M) / d + 0.1 * diag(d)
spec <- gp_spec(H, d = d, kernel = gp_kernel("matern32", lengthscale = 6), Lambda = Lambda, nugget = 0.01)
x <- gp_simulate(spec, 1, seed = 1)[1, , ]
miss <- matrix(runif(H * d) < 0.3, H, d)
x[miss] <- NA
m <- sum(miss)
A <- crossprod(matrix(rnorm(m * m), m)) / m + diag(m)
time1 <- function(f) { t0 <- proc.time()[["elapsed"]]; r <- f(); c(t = proc.time()[["elapsed"]] - t0) }
tt <- matrix(NA, reps, 3, dimnames = list(NULL, c("gp_conditional", "means only", "chol2inv(chol(A))")))
for (i in seq_len(reps)) {
  tt[i, 3] <- time1(function() chol2inv(chol(A)))
  tt[i, 1] <- time1(function() gp_conditional(spec, x))
  tt[i, 2] <- time1(function() gp_conditional(spec, x, cov = FALSE))
}
med <- apply(tt, 2, median)
pr <- gp_conditional(spec, x)
dense_res <- NULL
t_dense <- time1(function() dense_res <<- gp_conditional(spec, x, method = "dense"))
rel <- function(a, b) sqrt(sum((a - b)^2) / sum(b^2))
lines <- c(
  sprintf("### %s", format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC")),
  "",
  sprintf("package from `%s`; m = %d missing of %d entries (%s path); %d runs, medians; load average at the end: %s",
          find.package("ditimpute"), m, H * d, pr$method, reps, readLines("/proc/loadavg")),
  sprintf("OpenBLAS threads as the package sets them (thread budget %s); OMP_WAIT_POLICY = '%s'",
          tryCatch(ditimpute::thread_budget(), error = function(e) "n/a"), Sys.getenv("OMP_WAIT_POLICY")),
  "",
  "| call | median s | runs (s) |",
  "|---|---:|---|",
  sprintf("| %s | %.3f | %s |", colnames(tt), med, apply(tt, 2, function(v) paste(sprintf("%.3f", v), collapse = ", "))),
  "",
  sprintf("gp_conditional with its covariance / chol2inv(chol(A)) = **%.2f** (target <= 3); fastest runs: %.3f / %.3f = %.2f",
          med[1] / med[3], min(tt[, 1]), min(tt[, 3]), min(tt[, 1]) / min(tt[, 3])),
  sprintf("dense reference path: %.2f s; precision vs dense, relative difference: means %.1e, covariance %.1e; kappa_cond %.10g vs %.10g, kappa_obs %.10g vs %.10g",
          t_dense, rel(pr$cond_mean, dense_res$cond_mean), rel(pr$cov, dense_res$cov), pr$kappa_cond, dense_res$kappa_cond,
          pr$kappa_obs, dense_res$kappa_obs),
  "")
cat(lines, sep = "\n")
out <- file.path("bench", "results", "covariance.md")
if (!file.exists(out)) {
  writeLines(c("# gp_conditional with its covariance vs chol2inv(chol(A)), BeijingAir size",
               "", "Written by `bench/covariance.R` (see its header); machine: the project's shared 2-core VM.", ""), out)
}
cat(lines, sep = "\n", file = out, append = TRUE)
