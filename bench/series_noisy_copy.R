# A known limit of impute_series()'s model, measured: one variable a noisy
# copy of another (b = 2 a + e, a an AR(1) with phi 0.95 and no noise of its
# own, e white with sd 1). The structural model gives all variables one form
# and one cross-variable Lambda for every term, the white noise included, so
# it cannot say "a has no noise, b has a": b's imputations given a fully
# observed a are far wider than the relation allows. Per seed (300 frames,
# 120 single values of b and the block 100-140 hidden): coverage and mean
# width of b's 95% intervals (in the block and overall), the width that the
# relation gives (2 x 1.96 x the residual sd of b on a, known here), and the
# slope of b on a pooled over 20 completions with mice::pool() against the
# complete cases' and mice's own regression imputation ("norm", m = 20).
# Usage: Rscript bench/series_noisy_copy.R [seeds] [out.md]
suppressPackageStartupMessages({
  library(ditimpute)
  library(mice)
})
args <- commandArgs(trailingOnly = TRUE)
seeds <- if (length(args) >= 1) eval(parse(text = args[1])) else 1:5
out <- if (length(args) >= 2) args[2] else "bench/results/series_noisy_copy.md"

one <- function(seed) {
  set.seed(seed)
  n <- 300
  a <- as.numeric(arima.sim(list(ar = 0.95), n))
  b <- 2 * a + rnorm(n)
  d <- data.frame(date = as.Date("2020-01-01") + 0:(n - 1), a = a, b = b)
  h <- d
  h$b[sample(n, 120)] <- NA
  h$b[100:140] <- NA
  m <- is.na(h$b)
  blk <- 100:140
  imp <- impute_series(h, level = 0.95, n_samples = 20, seed = seed, threads = 1, progress = FALSE)
  cover <- imp$lower[, "b"] <= b & b <= imp$upper[, "b"]
  width <- imp$upper[, "b"] - imp$lower[, "b"]
  se_of <- function(p) summary(p)[2, "std.error"]
  pooled <- suppressMessages(mice::pool(with(imp, lm(b ~ a))))
  cc <- summary(stats::lm(b ~ a, h))$coefficients
  mi <- mice::mice(h[, c("a", "b")], m = 20, method = "norm", printFlag = FALSE, seed = seed)
  pm <- mice::pool(with(mi, lm(b ~ a)))
  data.frame(seed = seed, model = sub("GP series ", "", imp$method), cov_all = mean(cover[m]), cov_block = mean(cover[blk]),
             width_all = mean(width[m]), width_block = mean(width[blk]), width_relation = 2 * 1.96 * 1,
             slope_ditimpute = summary(pooled)[2, "estimate"], se_ditimpute = se_of(pooled),
             slope_cc = cc[2, 1], se_cc = cc[2, 2], slope_mice = summary(pm)[2, "estimate"], se_mice = se_of(pm))
}
started <- Sys.time()
r <- do.call(rbind, lapply(seeds, one))
fmt <- function(v) trimws(formatC(v, digits = 3, format = "fg"))
lines <- c("# A noisy copy of a noise-free variable (bench/series_noisy_copy.R)", "",
           sprintf("`Rscript bench/series_noisy_copy.R` on %s, ditimpute from %s, one thread, seeds %s.",
                   format(started, "%Y-%m-%d %H:%M UTC", tz = "UTC"), find.package("ditimpute"),
                   paste(range(seeds), collapse = "-")), "",
           "b = 2 a + e (a: AR(1), phi 0.95, no noise; e: sd 1); 300 frames, b hidden at 120 single frames and 100-140.",
           "95% intervals of b; the relation's width is 2 x 1.96 x sd(e) = 3.92. Slope of b on a: ditimpute's 20",
           "completions pooled by mice::pool(), the complete cases, mice's \"norm\" imputation (m = 20).", "",
           "| seed | model | coverage (all / block) | mean width (all / block) | slope (SE): ditimpute | complete cases | mice norm |",
           "|---|---|---|---|---|---|---|",
           sprintf("| %d | %s | %s / %s | %s / %s | %s (%s) | %s (%s) | %s (%s) |", r$seed, r$model, fmt(r$cov_all),
                   fmt(r$cov_block), fmt(r$width_all), fmt(r$width_block), fmt(r$slope_ditimpute), fmt(r$se_ditimpute),
                   fmt(r$slope_cc), fmt(r$se_cc), fmt(r$slope_mice), fmt(r$se_mice)), "",
           sprintf(paste("Means over the seeds: coverage %s, mean width %s (%s in the block; the relation: 3.92),",
                         "pooled SE of the slope %s against %s for the complete cases and %s for mice's norm."),
                   fmt(mean(r$cov_all)), fmt(mean(r$width_all)), fmt(mean(r$width_block)), fmt(mean(r$se_ditimpute)),
                   fmt(mean(r$se_cc)), fmt(mean(r$se_mice))))
writeLines(lines, out)
cat(lines, sep = "\n")
