# gp_smooth()'s state-space conditional against the dense one as the
# lengthscale grows far beyond the frame spacing: Matern 5/2 and 3/2, nuggets
# from 0 to 1e-6; 20 frames x 2 white-noise variables, frames 5-8 of the
# first hidden (the first missing value's conditional mean printed). The dense
# Cholesky is itself inexact without a nugget (no reference there: "-"); the
# question is where the smoother's own answer stops being stable in the
# lengthscale. Calls the core directly, without gp_smooth()'s check.
# Usage: Rscript bench/gp_smooth_long_lengthscale.R   (from the repository root)
# Writes bench/results/gp_smooth_long_lengthscale.md.
suppressMessages(library(ditimpute))
ns <- asNamespace("ditimpute")
set.seed(5)
x <- matrix(stats::rnorm(40), 20, 2)
x[5:8, 1] <- NA
x[12, 2] <- NA
smooth_point <- function(k, nug) {
  cases <- ns$prepare_cases(x, 20, 2, what = "")
  opts <- ns$impute_options(20, 0.95, "mean", 1, 1)
  tryCatch(ns$core_call(ns$cpp_impute_state_space(k, nug, diag(2), matrix(0, 20, 2), cases$arr, opts))$point[1, 5, 1],
           error = function(e) NA_real_)
}
dense_point <- function(k, nug) {
  tryCatch(gp_conditional(gp_spec(20, 2, kernel = k, nugget = nug), x, method = "dense")$mean[5, 1],
           error = function(e) NA_real_)
}
rows <- list()
for (type in c("matern52", "matern32")) {
  for (l in c(1e3, 1e4, 2e4, 5e4, 1e5, 1e6, 1e8, 1e10)) {
    if (type == "matern52" && l > 1e6) next
    for (nug in c(0, 1e-12, 1e-10, 1e-8)) {
      k <- gp_kernel(type, lengthscale = l)
      rows[[length(rows) + 1]] <- data.frame(kernel = type, lengthscale = l, nugget = nug,
                                             smoother = smooth_point(k, nug), dense = dense_point(k, nug))
    }
  }
}
tab <- do.call(rbind, rows)
fmt <- function(v) ifelse(is.na(v), "-", sprintf("%.5f", v))
out <- c("# gp_smooth() at lengthscales far beyond the frame spacing (bench/gp_smooth_long_lengthscale.R)", "",
         sprintf("`Rscript bench/gp_smooth_long_lengthscale.R` on %s, ditimpute from %s. The conditional mean of the first hidden value (frame 5 of variable 1; 20 frames x 2 white-noise variables, frames 5-8 of variable 1 and frame 12 of variable 2 hidden, unit Lambda): the state-space smoother (the core, without gp_smooth()'s check) and the dense conditional (`-`: its Cholesky failed or the smoother stopped with an error).",
                 format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC"), dirname(find.package("ditimpute"))), "",
         "| kernel | lengthscale | nugget | smoother | dense |", "|---|---|---|---|---|",
         sprintf("| %s | %g | %g | %s | %s |", tab$kernel, tab$lengthscale, tab$nugget, fmt(tab$smoother), fmt(tab$dense)))
dir.create(file.path("bench", "results"), showWarnings = FALSE)
writeLines(out, file.path("bench", "results", "gp_smooth_long_lengthscale.md"))
cat(out, sep = "\n")
