# Does the one-step likelihood single out a variable that the shared form of
# a multivariate impute_series() model fits badly? For ETTh1 and ETTh2 (oil temperature
# and the six loads) and BeijingAir's Dongsi station (PM2.5, PM10, NO2, CO),
# whole series, no gaps hidden: the shared form is fitted as impute_series()
# fits it (model and kernel "auto", period 24), then each variable's
# log-likelihood (on the shared model's standardised scale) under the shared
# form (one evaluation, no search) and under the form fitted to it alone; and
# the share of its one-step changes that the other variables explain (the
# model's innovation_r2, on which impute_series() warns below 5%).
# Usage: Rscript bench/series_multi_forms.R [data_dir]
# Writes bench/results/series_multi_forms.md.
suppressMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
data_dir <- if (length(args) >= 1) args[1] else file.path("..", "shared", "data")
ns <- asNamespace("ditimpute")
loglik_at <- function(y, spec) {
  fit <- ns$core_call(ns$cpp_structural_fit(y, list(spec), list(max_frames = 6000L, ridge = 0, threads = 2L,
                                                               max_evaluations = 1L)))
  fit$candidates[[1]]
}
rows <- character(0)
forms <- function(v, label) {
  t0 <- proc.time()[["elapsed"]]
  shared <- ns$fit_series_model(v, 24, "auto", "auto", "auto", 1e-2, 6000L, 2L)  # impute_series()'s defaults
  secs <- proc.time()[["elapsed"]] - t0
  y <- ns$scale_cols(v, shared)
  for (j in seq_len(ncol(v))) {
    own <- ns$fit_series_model(v[, j, drop = FALSE], 24, "auto", "auto", "auto", 1e-2, 6000L, 2L)
    a <- loglik_at(y[, j, drop = FALSE], shared$candidate$spec)
    b <- loglik_at(y[, j, drop = FALSE], own$candidate$spec)
    rows <<- c(rows, sprintf("| %s | %s | %s %s | %.1f | %s %s | %.1f | %.1f | %.4f | %d | %.1f%% | %.0f |", label,
                             colnames(v)[j], shared$model_name, shared$kernel_name, a$loglik, own$model_name,
                             own$kernel_name, b$loglik, b$loglik - a$loglik, (b$loglik - a$loglik) / a$nobs,
                             as.integer(a$nobs), 100 * shared$innovation_r2[[j]], secs))
    cat(tail(rows, 1), "\n")
  }
}
for (name in c("ETTh1", "ETTh2")) {
  ett <- utils::read.csv(gzfile(file.path(data_dir, "ett", paste0(name, ".csv.gz"))))
  forms(as.matrix(ett[c("OT", "HUFL", "HULL", "MUFL", "MULL", "LUFL", "LULL")]), name)
}
b <- utils::read.csv(gzfile(list.files(file.path(data_dir, "beijing_air"), pattern = "Dongsi", full.names = TRUE)))
forms(as.matrix(b[c("PM2.5", "PM10", "NO2", "CO")]), "BeijingAir Dongsi")
load <- tryCatch(readLines("/proc/loadavg"), error = function(e) "unknown")
writeLines(c("# Each variable under the shared form and under its own (bench/series_multi_forms.R)", "",
             sprintf("`Rscript bench/series_multi_forms.R %s` on %s; whole series, no gaps hidden; log-likelihoods of the fitting stretch (at most 6,000 frames) on the shared model's standardised scale. Load average at the end: %s.",
                     paste(args, collapse = " "), format(Sys.Date()), load), "",
             "| data | variable | shared form | loglik, shared | own form | loglik, own | difference | per observed value | observed | others explain | shared fit seconds |",
             "|---|---|---|---|---|---|---|---|---|---|---|", rows),
           file.path("bench", "results", "series_multi_forms.md"))
cat("wrote bench/results/series_multi_forms.md\n")
