# The GP-informed DiT as a user would run it, on bench/dit_learning.R's
# setting (H = 48, d = 8, Laplace lengthscale 64, S4 masks, 4,000 training +
# 400 validation sequences, DiT 64/3/4): gp_fit() on the training sequences,
# then dit_fit(gp = that fit) with gp_mode "score" and "residual", and the
# pure DiT, each with the same wall-clock budget (time_limit, which includes
# building a GP-DiT's pool of conditionals where it has one) and dit_fit()'s defaults; the
# fitted GP imputing on its own beside them. Each is scored as
# bench/dit_learning.R scores its models (theory_setting.R's
# score_on_patterns(): W2 to the exact conditional law against exact draws
# of the same size, raw 95% region coverage) on n_test sequences per
# pattern P1-P4.
#
#   Rscript bench/dit_learning_gp.R [seconds] [n_test]     # from the repository root
#
# Defaults: 60 s per model, 20 test sequences; DITIMPUTE_BENCH_THREADS (2).
# Writes bench/results/dit_learning_gp.md. Training times are wall clock:
# the load average is recorded before and after each.
suppressPackageStartupMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
seconds <- if (length(args) >= 1) as.numeric(args[1]) else 60
n_test <- if (length(args) >= 2) as.integer(args[2]) else 20L
threads <- as.integer(Sys.getenv("DITIMPUTE_BENCH_THREADS", "2"))
source(file.path("bench", "theory_setting.R"))  # H, d, spec, patterns, s4, score_on_patterns()
train <- gp_simulate(spec, 4000, seed = 104000)
val <- gp_simulate(spec, 400, seed = 204000)
truth <- gp_simulate(spec, n_test, seed = 5)
`%||%` <- function(a, b) if (is.null(a)) b else a
loadavg <- function() paste(strsplit(readLines("/proc/loadavg"), " ")[[1]][1:3], collapse = " ")
started <- format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC")

t0 <- proc.time()[["elapsed"]]
gp <- gp_fit(train, kernel = "laplace", seed = 1)
gp_s <- proc.time()[["elapsed"]] - t0

runs <- list(
  list(label = "GP-DiT, score", gp_mode = "score"),
  list(label = "GP-DiT, residual", gp_mode = "residual"),
  list(label = "pure DiT", gp_mode = NULL)
)
rows <- list()
for (r in runs) {
  load0 <- loadavg()
  fit <- dit_fit(train, config = dit_config(H, d, width = 64, depth = 3, heads = 4), strategy = s4,
                 time_limit = seconds, validation = val, seed = 7, threads = threads, progress = FALSE,
                 gp = if (!is.null(r$gp_mode)) gp, gp_mode = r$gp_mode)
  ti <- fit$train_info
  rows[[r$label]] <- cbind(
    data.frame(model = r$label, steps = fit$steps, best_step = ti$best_step, stop = ti$stop_reason,
               val_first = fit$history$val_loss[1], val_best = ti$best_val_loss,
               load = paste(load0, "->", loadavg())),
    score_on_patterns(fit, truth, threads))
  print(rows[[r$label]])
}
rows[["fitted GP"]] <- cbind(data.frame(model = "fitted GP (gp_fit)", steps = NA, best_step = NA, stop = "",
                                        val_first = NA, val_best = NA, load = ""),
                             score_on_patterns(gp, truth, threads))
res <- do.call(rbind, rows)

wide <- do.call(rbind, lapply(split(res, factor(res$model, unique(res$model))), function(df) {
  f2 <- function(v) paste(sprintf("%.2f", v), collapse = " / ")
  f1 <- function(v) paste(sprintf("%.1f", 100 * v), collapse = " / ")
  data.frame(model = df$model[1], steps = if (is.na(df$steps[1])) "" else sprintf("%d (%s)", df$steps[1],
                                                                                     format(df$best_step[1])),
             stop = df$stop[1],
             val = if (is.na(df$val_first[1])) "" else sprintf("%.4f -> %.4f", df$val_first[1], df$val_best[1]),
             w2 = f2(df$w2_ratio), coverage = paste0(f1(df$coverage), "%"), load = df$load[1])
}))
lines <- c(
  "# The GP-informed DiT as a user runs it, on bench/dit_learning.R's setting (issue 28)",
  "",
  sprintf("Produced by `Rscript bench/dit_learning_gp.R %g %d` on %s (%s, LibTorch %s, %d thread(s)).",
          seconds, n_test, started, R.version.string, torch_backend()$torch_version, threads),
  sprintf(paste("H = %d, d = %d, Laplace lengthscale 64, S4 masks, 4,000 training + 400 validation sequences;",
                "`gp_fit(train, kernel = \"laplace\")` (%.0f s: lengthscale %.1f); each DiT 64/3/4 with",
                "`dit_fit()`'s defaults and `time_limit = %g` (at 384 entries a window the GP-DiTs draw fresh GP conditionals for every example, `gp_pool = 0`, the default since 2026-11-27; a pool, where there is one, counts in the limit);",
                "%d test sequences per pattern, 100 samples each; W2 / null = W2 to the exact conditional law",
                "over W2 of exact draws of the same size; coverage = raw 95%% region coverage of 1,000 exact draws.",
                "Validation loss: `dit_fit()`'s first record -> its best."),
          H, d, gp_s, gp$kernel$lengthscale, seconds, n_test),
  "",
  "| model | steps (best) | stop | validation loss | W2 / null P1 / P2 / P3 / P4 | coverage P1 / P2 / P3 / P4 | load before -> after |",
  "|---|---|---|---|---|---|---|",
  apply(wide, 1, function(r) paste("|", paste(r, collapse = " | "), "|")))
out <- file.path("bench", "results", "dit_learning_gp.md")
writeLines(lines, out)
cat(lines, sep = "\n")
cat("written:", out, "\n")
