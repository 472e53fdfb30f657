# The paper's theory against measurements at CPU scale (issue #15), for the
# vignette "theory-in-practice" (it reads inst/extdata/theory-results.rds).
# GP data H = 48, d = 8, Laplace kernel with lengthscale 64 on the plain index
# (the paper's 128 at H = 96, halved with H), Lambda = I; patterns P1-P4 moved
# to H = 48 (tail 8, two blocks of 4, four of 2, eight single frames: 64
# missing entries each); small DiTs (width 64, depth 3, 4 heads, 1000 steps,
# lr 1e-3, EMA 0.999, batch 64).
#   train   the DiTs (cached in build/theory-*.dit, so reruns skip training):
#           S4 with n = 250, 1000, 4000 training sequences; S1 with n = 4000
#   bounds  Theorem 1-2 factors and Lemma 1 counts for P1-P4
#   error   distribution_error() and coverage of each S4 DiT on P1-P4 (test
#           sequences per pattern, Z = 100 samples), of the S1 DiT on P1, and
#           of the exact-score sampler (oracle, UniPC 20 steps)
#   shift   DS of the S1 and S4 DiTs (n = 4000) on 60 P1 test sequences (200
#           reference cases, K = 8), the ratio, with both loss weights
# Parts can run in separate processes: "train:S4:1000", "error:S4:1000",
# "error:oracle" do one model each; each process merges its parts into the
# results file.
# Usage: Rscript bench/theory.R [part ...]   (default: all four)
# Environment: DITIMPUTE_BENCH_N_TEST (test sequences per pattern, 6),
# DITIMPUTE_BENCH_STEPS (training steps, 1000), DITIMPUTE_BENCH_THREADS (2).
suppressPackageStartupMessages(library(ditimpute))
parts <- commandArgs(trailingOnly = TRUE)
if (length(parts) == 0) parts <- c("train", "bounds", "error", "shift")
threads <- as.integer(Sys.getenv("DITIMPUTE_BENCH_THREADS", "2"))
n_test <- as.integer(Sys.getenv("DITIMPUTE_BENCH_N_TEST", "6"))
steps <- as.integer(Sys.getenv("DITIMPUTE_BENCH_STEPS", "1000"))
source(file.path("bench", "theory_setting.R"))  # H, d, spec, patterns, s4
# S1 and S4 at H = 48: block lengths halved as for the patterns.
strategies <- list(S1 = mask_strategy("8x1"),
                   S4 = s4)
sizes <- c(250L, 1000L, 4000L)
results_file <- "inst/extdata/theory-results.rds"
res <- if (file.exists(results_file)) readRDS(results_file) else list()
res$settings <- list(H = H, d = d, lengthscale = 64, steps = steps, n_test = n_test, sizes = sizes,
                     config = "width 64, depth 3, 4 heads, dit_fit()'s default recipe (peak lr 2e-3, cosine, EMA 0.999 warmed up)", threads = threads,
                     date = format(Sys.time(), "%Y-%m-%d"), R = R.version.string)
elapsed <- function(t0) proc.time()[["elapsed"]] - t0

model_file <- function(strategy, n) sprintf("build/theory-%s-n%d-%d-recipe2.dit", strategy, n, steps)
train_one <- function(strategy, n) {
  f <- model_file(strategy, n)
  if (file.exists(f)) return(dit_load(f))
  t0 <- proc.time()[["elapsed"]]
  fit <- dit_fit(gp_simulate(spec, n, seed = 100 + n), config = dit_config(H, d, width = 64, depth = 3, heads = 4),
                 strategy = strategies[[strategy]], steps = steps, batch_size = 64,
                 seed = 7, threads = threads, progress = FALSE)  # dit_fit()'s default recipe (warmed EMA, cosine)
  dir.create("build", showWarnings = FALSE)
  dit_save(fit, f)
  cat(sprintf("trained %s n = %d: %.0f s\n", strategy, n, elapsed(t0)))
  fit
}
runs <- rbind(data.frame(strategy = "S4", n = sizes), data.frame(strategy = "S1", n = 4000L))
if ("train" %in% parts) {
  for (k in seq_len(nrow(runs))) train_one(runs$strategy[k], runs$n[k])
}
# "train:S4:1000" trains one model only (separate processes can train
# different models at once; results depend on the thread count).
for (p in grep("^train:", parts, value = TRUE)) {
  one <- strsplit(p, ":", fixed = TRUE)[[1]]
  train_one(one[2], as.integer(one[3]))
}

# Test sequences: n_test fresh ones per pattern, the pattern hidden.
hide <- function(x, p) {
  miss <- array(rep(pattern_missing(p, d), each = dim(x)[1]), dim(x))
  x[miss] <- NA
  x
}
pattern_missing <- function(p, d) {
  m <- matrix(FALSE, p$H, d)
  m[p$frames, ] <- TRUE
  m
}

if ("bounds" %in% parts) {
  res$bounds <- bound_factors(spec, patterns, n = 4000)
  print(res$bounds)
}

# Error rows per imputer: "error" runs them all, "error:S4:1000" (or
# "error:oracle") one of them, so that separate processes can share the work.
error_keys <- c("oracle", paste0("S4:", sizes), "S1:4000")
wanted <- if ("error" %in% parts) error_keys else sub("^error:", "", grep("^error:", parts, value = TRUE))
if (length(wanted) > 0) {
  res$error_rows <- list()
  truth <- gp_simulate(spec, n_test, seed = 5)
  for (key in wanted) {
    one <- strsplit(key, ":", fixed = TRUE)[[1]]
    fit <- if (key == "oracle") NULL else train_one(one[1], as.integer(one[2]))
    # The S1 model only on P1, the pattern of the distribution-shift comparison.
    pats <- if (one[1] == "S1") names(patterns)[1] else names(patterns)
    for (p in pats) {
      k <- match(p, names(patterns))
      x <- hide(truth, patterns[[k]])
      t0 <- proc.time()[["elapsed"]]
      imp <- if (is.null(fit)) {
        impute(spec, x, n_samples = 100, sampler = "unipc", seed = k, threads = threads)
      } else {
        impute(fit, x, n_samples = 100, seed = k, threads = threads)
      }
      de <- distribution_error(imp, spec, seed = 50 + k, threads = threads)
      cov <- mean(coverage(imp, spec = spec, n_draws = 1000, seed = 60 + k)$coverage)
      res$error_rows[[paste(key, p)]] <- cbind(
        data.frame(imputer = if (is.null(fit)) "oracle sampler" else paste("DiT", one[1]),
                   n = if (is.null(fit)) NA else as.integer(one[2]), pattern = p),
        summary(de)$table, coverage = cov, seconds = elapsed(t0))
      cat(sprintf("error: %s %s done (%.0f s)\n", key, p, elapsed(t0)))
    }
  }
}

if ("shift" %in% parts) {
  x <- hide(gp_simulate(spec, 60, seed = 9), patterns$P1)
  t0 <- proc.time()[["elapsed"]]
  ds <- lapply(c(S1 = "S1", S4 = "S4"), function(s) {
    distribution_shift(train_one(s, 4000), x, spec, n_reference = 200, K = 8, strategy = strategies[[s]], seed = 11,
                       threads = threads)
  })
  # The same with eq. 14's weighting (||s - target||^2 integrated in t).
  dss <- lapply(c(S1 = "S1", S4 = "S4"), function(s) {
    distribution_shift(train_one(s, 4000), x, spec, n_reference = 200, K = 8, weight = "score",
                       strategy = strategies[[s]], seed = 11, threads = threads)
  })
  res$shift <- list(S1 = ds$S1, S4 = ds$S4, ratio = shift_ratio(ds$S1, ds$S4, seed = 12),
                    ratio_excess = shift_ratio(ds$S1, ds$S4, type = "excess", seed = 12),
                    S1_score = dss$S1, S4_score = dss$S4,
                    ratio_score = shift_ratio(dss$S1, dss$S4, seed = 12),
                    ratio_score_excess = shift_ratio(dss$S1, dss$S4, type = "excess", seed = 12),
                    seconds = elapsed(t0))
  for (nm in c("ratio", "ratio_excess", "ratio_score", "ratio_score_excess")) print(res$shift[[nm]])
  # The test arrays are not needed to read the results: keep the file small.
  for (nm in c("S1", "S4", "S1_score", "S4_score")) res$shift[[nm]]$x <- NULL
}

# Parts may run in separate processes: merge this run's parts into the file
# as it is now.
dir.create(dirname(results_file), showWarnings = FALSE, recursive = TRUE)
final <- if (file.exists(results_file)) readRDS(results_file) else list()
for (nm in intersect(c("settings", "bounds", "shift"), names(res))) {
  if (nm %in% parts || nm == "settings") final[[nm]] <- res[[nm]]
}
for (key in names(res$error_rows)) final$error_rows[[key]] <- res$error_rows[[key]]
if (length(final$error_rows) > 0) {
  final$error <- do.call(rbind, final$error_rows)
  rownames(final$error) <- NULL
  final$error <- final$error[order(final$error$imputer, final$error$n, final$error$pattern), ]
}
res <- final
saveRDS(res, results_file)
cat("wrote", results_file, "\n")

# The markdown report, from whatever the results file holds.
md <- c("# The paper's theory at CPU scale (bench/theory.R)", "",
        sprintf("Produced by `Rscript bench/theory.R` on %s (%s). GP H = %d, d = %d, Laplace lengthscale %g; DiT %s, %d steps; %d test sequences per pattern, 100 samples each.",
                res$settings$date, res$settings$R, H, d, 64, res$settings$config, steps, n_test), "")
table_md <- function(df, digits = 3) {
  df[] <- lapply(df, function(v) if (is.numeric(v)) signif(v, digits) else v)
  c(paste("|", paste(names(df), collapse = " | "), "|"), paste0(paste(rep("|---", ncol(df)), collapse = ""), "|"),
    apply(df, 1, function(r) paste("|", paste(r, collapse = " | "), "|")), "")
}
if (!is.null(res$bounds)) {
  md <- c(md, "## Bound factors (n = 4000)", "",
          table_md(as.data.frame(res$bounds)[, c("pattern", "kappa_cond", "kappa_obs", "theorem1_rel", "depth_rel",
                                               "norm_R_rel", "lemma1_K", "lemma1_K_aux")]))
}
if (!is.null(res$error)) {
  md <- c(md, "## Distribution error against the exact conditional law", "",
          "w2 / energy: mean over test sequences; _null: the same statistic for exact draws of the same size; coverage: 95% regions, 1000 exact draws per sequence.", "",
          table_md(res$error[, c("imputer", "n", "pattern", "kappa_cond", "w2", "w2_null", "w2_se", "mahalanobis",
                                 "mahalanobis_null", "energy", "energy_null", "energy_se", "ratio_min", "ratio_max",
                                 "coverage", "seconds")]))
  dit <- res$error[res$error$imputer == "DiT S4", ]
  if (length(unique(dit$n)) >= 2) sl <- sapply(split(dit, dit$pattern), function(g) {
    f <- summary(lm(log(w2) ~ log(n), data = g))$coefficients
    c(slope = f[2, 1], se = f[2, 2])
  })
  if (length(unique(dit$n)) >= 2) {
    md <- c(md, "Fitted log-log slope of W2 against n (theory: -0.5):", "",
            table_md(data.frame(pattern = colnames(sl), slope = sl["slope", ], se = sl["se", ])))
  }
}
if (!is.null(res$shift)) {
  md <- c(md, "## Distribution shift on P1: S1-trained over S4-trained DiT (paper: 47.93)", "",
          table_md(cbind(type = "loss", as.data.frame(res$shift$ratio))),
          table_md(cbind(type = "excess", as.data.frame(res$shift$ratio_excess))),
          if (!is.null(res$shift$ratio_score)) c("With eq. 14's weight (weight = \"score\"):", "",
            table_md(cbind(type = "loss", as.data.frame(res$shift$ratio_score))),
            table_md(cbind(type = "excess", as.data.frame(res$shift$ratio_score_excess)))),
          table_md(cbind(model = rep(c("S1", "S4"), each = 2), rbind(res$shift$S1$summary, res$shift$S4$summary))))
}
writeLines(md, "bench/results/theory.md")
cat("wrote bench/results/theory.md\n")
