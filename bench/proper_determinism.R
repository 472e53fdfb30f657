# Are impute_series()'s proper draws (proper = TRUE, the default under 60
# frames) repeatable when the machine's load changes? The same ten calls
# (freeny, 10% random holes as bench/series.R hides them, seed = 1,
# threads = 2, separate = "none") run once on an idle machine and once beside
# three busy loops (`yes > /dev/null`); the upper 90% bounds, the 200 sample
# paths and the fitted spec are compared, for proper draws and for plug-in
# intervals. Exits with status 1 when any bound differs by more than 1e-10 of
# the bounds' size, or any sample value by more than 1e-6 of the samples'
# (last-bit differences of the BLAS's sums are allowed, and the smoother's
# draws amplify them, by about 1e4 where its covariances are nearly singular;
# a different draw, 1e-2 of the values here, is not).
# Usage: Rscript bench/proper_determinism.R   (writes bench/results/proper_determinism.md)
suppressMessages(library(ditimpute))
y <- stats::ts(as.matrix(datasets::freeny), start = c(1962, 2), frequency = 4)
# bench/series.R's hide() (its gaps, from its seeds; in bench/series_hide.R since it moved there).
source("bench/series_hide.R")
calls <- function(proper) {
  lapply(1:10, function(r) {
    yy <- y
    yy[hide(y, "random", 1000 * r + nchar("freeny"))] <- NA
    imp <- suppressWarnings(impute_series(yy, level = 0.9, n_samples = 200, seed = 1, threads = 2,
                                          separate = "none", proper = proper))
    list(upper = imp$upper, samples = imp$samples[[1]], spec = imp$model$spec)
  })
}
idle <- list(proper = calls(TRUE), plugin = calls(FALSE))
hogs <- as.integer(replicate(3, system("yes > /dev/null 2>&1 & echo $!", intern = TRUE)))
busy <- tryCatch(list(proper = calls(TRUE), plugin = calls(FALSE)), finally = for (p in hogs) tools::pskill(p))
reldiff <- function(kind, what = "upper") {
  vapply(1:10, function(r) {
    a <- idle[[kind]][[r]][[what]]; b <- busy[[kind]][[r]][[what]]
    max(abs(a - b), na.rm = TRUE) / max(abs(a), na.rm = TRUE)
  }, 0)
}
row <- function(kind) {
  d <- vapply(1:10, function(r) max(abs(idle[[kind]][[r]]$upper - busy[[kind]][[r]]$upper), na.rm = TRUE), 0)
  s <- vapply(1:10, function(r) identical(idle[[kind]][[r]]$spec, busy[[kind]][[r]]$spec), TRUE)
  ds <- reldiff(kind, "samples")
  sprintf("| %s | %d of 10 | %.2e | %.2e | %d of 10 | %.2e | %d of 10 |", kind, sum(d == 0), max(d), max(reldiff(kind)),
          sum(ds == 0), max(ds), sum(s))
}
md <- c("# Repeatability of proper draws under load (bench/proper_determinism.R)", "",
        sprintf("`Rscript bench/proper_determinism.R` on %s: ten calls on freeny (39 x 5), idle and beside three busy loops.",
                format(Sys.time(), "%Y-%m-%d", tz = "UTC")), "",
        "| intervals | upper bounds identical | largest difference | relative to the bounds | sample paths identical | largest sample difference, relative | fitted spec identical |",
        "|---|---|---|---|---|---|---|",
        row("proper"), row("plugin"))
writeLines(md, "bench/results/proper_determinism.md")
cat(md, sep = "\n")
bad <- vapply(c("proper", "plugin"), function(kind) any(reldiff(kind) > 1e-10) || any(reldiff(kind, "samples") > 1e-6), TRUE)
if (any(bad)) {
  message("bounds or sample paths differ between the idle and the loaded runs: ", paste(names(bad)[bad], collapse = ", "))
  quit(status = 1)
}
