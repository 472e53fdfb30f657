# Do the state-space smoother's draws follow their conditional law on series
# the sampler was not developed on? For 13 series (R's datasets and the first
# rows of ETTh1; 15% random holes plus a block of a sixth of the series in the
# first variable), the fitted plug-in parameters and 5 proper parameter draws
# each give 400 joint draws through the core (cpp_structural_impute); per entry
# the draws are standardised by the smoother's exact mean and sd. For a right
# sampler: largest |z| about 5 over a million draws, the largest |mean of z|
# about 3.5 SE and |sd - 1| about 3.5 x 0.035 over a few thousand entries.
# Usage: Rscript bench/smoother_draws_law.R  (writes bench/results/smoother_draws_law.md)
suppressMessages(library(ditimpute))
mk <- function(x, seed) {
  set.seed(seed); x <- as.matrix(x); n <- nrow(x)
  h <- matrix(runif(length(x)) < 0.15, n); s <- sample.int(max(1, n - n %/% 5), 1); h[s:(s + n %/% 6), 1] <- TRUE
  x[h] <- NA; x
}
ett <- read.csv(gzfile("/work/shared/data/ett/ETTh1.csv.gz"))
series <- list(airmiles = airmiles, lh = lh, uspop = uspop, WWWusage = WWWusage, LakeHuron = LakeHuron, Nile = Nile,
  longley = longley[, c("GNP", "Unemployed", "Employed")], freeny = freeny[, 1:3], lung = cbind(ldeaths, mdeaths),
  BJsales = BJsales, sunspot = sunspot.year, ett1 = ett$OT[1:1500], ett7 = as.matrix(ett[1:300, 2:5]))
Z <- 400
rows <- character()
for (nm in names(series)) {
  x <- mk(series[[nm]], 7)
  imp <- suppressWarnings(impute_series(x, n_samples = 20, seed = 11, threads = 1, proper = FALSE))
  m <- imp$model
  if (inherits(m, "ditimpute_series_model_set")) { rows <- c(rows, sprintf("%-9s model set (variables fitted separately), skipped", nm)); next }
  v <- x; colnames(v) <- colnames(imp$x); ys <- ditimpute:::scale_cols(v, m)
  cands <- c(list(m$candidate), ditimpute:::proper_candidates(m, v, ys, 5, seed = 3, threads = 1))
  out <- sapply(cands, function(cc) {
    r <- ditimpute:::cpp_structural_impute(ys, cc, list(n_samples = as.integer(Z), seed = 9, threads = 1L))
    z <- sweep(sweep(r$samples, 2, r$mean), 2, r$sd, "/")
    c(maxz = max(abs(z)), mean = max(abs(colMeans(z))) * sqrt(Z), sd = max(abs(apply(z, 2, sd) - 1)))
  })
  rows <- c(rows, sprintf("%-9s entries %4d  max|z| %.2f  max|mean| %.2f SE  max|sd-1| %.3f", nm, sum(is.na(x)), max(out[1, ]), max(out[2, ]), max(out[3, ])))
}
md <- c("# The smoother's draws against their conditional law (bench/smoother_draws_law.R)", "",
        sprintf("Run on %s (commit %s); load average at the end: %s (2 cores).", format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC"),
                tryCatch(system("git rev-parse --short HEAD", intern = TRUE), error = function(e) "unknown"),
                tryCatch(readLines("/proc/loadavg"), error = function(e) "unknown")),
        "Per series: 6 parameter sets (fitted + 5 proper draws) x missing entries x 400 draws.", "", "```", rows, "```")
writeLines(md, "bench/results/smoother_draws_law.md")
cat(md, sep = "\n")
