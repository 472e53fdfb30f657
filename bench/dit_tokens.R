# Frame tokens against entry tokens (dit_config(tokens = "entry")): the
# same training wall-clock budget for each, on the two settings issue 28
# names, d = 8 and d = 132.
#
#   gp8:     the theory bench's setting (bench/dit_learning.R): GP data,
#            H = 48, d = 8, Laplace lengthscale 64, S4 masks, 4,000 training
#            sequences + 400 for validation; scored on n_test fresh sequences
#            per pattern P1-P4 with 100 samples each: W2 to the exact
#            conditional law over the W2 of exact draws of the same size
#            (distribution_error()), and the raw 95% region coverage.
#   beijing: BeijingAir (30 x 132 windows; load_real_data()), MCAR masks at
#            10/20/50% as in bench/real_data.R; scored on 24 evenly spread
#            test windows at 10% and 50% hidden with the entries and seeds of
#            bench/real_data.R (its fitted-GP rows score the same entries),
#            50 samples: MAE, CRPS and 90% coverage on the standardised
#            scale, with linear interpolation of the same entries in the
#            same run.
#
# Models: frame tokens 64 wide, 3 deep, 4 heads (the benches' DiT) with
# dit_fit()'s default recipe (batch 64); entry tokens 32 wide, 2 deep, 2
# heads, batch 16 (d = 8) or 8 (d = 132) and 50 warm-up steps, because one of
# their steps costs 3-25x a frame step on this CPU (measured below). Both
# train for DITIMPUTE_BENCH_SECONDS_GP8 / _BEIJING seconds of wall clock
# (300 / 600 by default) on DITIMPUTE_BENCH_THREADS threads (2), with early
# stopping and restore_best as dit_fit()'s defaults.
#
# Usage, from the repository root with the package installed:
#   Rscript bench/dit_tokens.R [gp8] [beijing] [report] [data_dir]
# Each part keeps its rows in build/dit_tokens-<part>.rds; report writes
# bench/results/dit_tokens.md from them.
suppressPackageStartupMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
parts <- intersect(args, c("gp8", "beijing", "report"))
if (!length(parts)) parts <- c("gp8", "beijing", "report")
data_dir <- setdiff(args, parts)
data_dir <- if (length(data_dir)) data_dir[1] else file.path("..", "shared", "data")
threads <- as.integer(Sys.getenv("DITIMPUTE_BENCH_THREADS", "2"))
n_test <- as.integer(Sys.getenv("DITIMPUTE_BENCH_N_TEST", "10"))
secs_gp8 <- as.numeric(Sys.getenv("DITIMPUTE_BENCH_SECONDS_GP8", "300"))
secs_beijing <- as.numeric(Sys.getenv("DITIMPUTE_BENCH_SECONDS_BEIJING", "600"))
dir.create("build", showWarnings = FALSE)
`%||%` <- function(a, b) if (is.null(a)) b else a
loadavg <- function() paste(strsplit(readLines("/proc/loadavg"), " ")[[1]][1:3], collapse = " ")
timed <- function(expr) {
  t0 <- proc.time()[["elapsed"]]
  value <- expr
  list(value = value, seconds = proc.time()[["elapsed"]] - t0)
}

models <- list(
  frame = list(config = list(width = 64, depth = 3, heads = 4, tokens = "frame"), fit = list()),
  entry = list(config = list(width = 32, depth = 2, heads = 2, tokens = "entry"), fit = list(warmup_steps = 50))
)
entry_batch <- c(gp8 = 16, beijing = 8)

# Trains `model` on x for `seconds`; its row of the training table.
train_model <- function(name, part, x, strategy, seconds, validation) {
  m <- models[[name]]
  cfg <- do.call(dit_config, c(list(H = dim(x)[2], d = dim(x)[3]), m$config))
  extra <- m$fit
  if (name == "entry") extra$batch_size <- entry_batch[[part]]
  load0 <- loadavg()
  cpu0 <- sum(proc.time()[c("user.self", "sys.self")])
  t <- timed(do.call(dit_fit, c(list(x, config = cfg, strategy = strategy, time_limit = seconds,
                                     validation = validation, seed = 7, threads = threads, progress = FALSE), extra)))
  fit <- t$value
  ti <- fit$train_info
  cat(sprintf("[%s] %s: %d steps in %.0f s (%.0f CPU s), stop %s, best step %s, load %s\n", part, name, fit$steps,
              t$seconds, sum(proc.time()[c("user.self", "sys.self")]) - cpu0, ti$stop_reason, ti$best_step, load0))
  list(fit = fit, row = data.frame(part = part, tokens = name, width = cfg$width, depth = cfg$depth,
                                   batch = ti$options$batch_size, parameters = fit$n_parameters, steps = fit$steps,
                                   best_step = ti$best_step %||% NA, seconds = round(t$seconds),
                                   ms_per_step = round(1000 * t$seconds / max(1, fit$steps)),
                                   stop = ti$stop_reason, val_loss_best = ti$best_val_loss %||% NA,
                                   load = paste(load0, "->", loadavg())))
}

if ("gp8" %in% parts) {
  source(file.path("bench", "theory_setting.R"))  # H, d, spec, patterns, s4
  train <- gp_simulate(spec, 4000, seed = 104000)
  val <- gp_simulate(spec, 400, seed = 204000)
  truth <- gp_simulate(spec, n_test, seed = 5)
  rows <- list(); train_rows <- list()
  for (name in names(models)) {
    tr <- train_model(name, "gp8", train, s4, secs_gp8, validation = val)
    train_rows[[name]] <- tr$row
    for (k in seq_along(patterns)) {
      x <- truth
      miss <- array(rep(matrix(seq_len(H) %in% patterns[[k]]$frames, H, d), each = n_test), dim(x))
      x[miss] <- NA
      imp <- timed(impute(tr$fit, x, n_samples = 100, seed = k, threads = threads))
      de <- summary(distribution_error(imp$value, spec, seed = 50 + k, threads = threads))$table
      cov <- mean(coverage(imp$value, spec = spec, n_draws = 1000, seed = 60 + k)$coverage)
      rows[[length(rows) + 1]] <- data.frame(tokens = name, pattern = names(patterns)[k], w2 = de$w2,
                                             w2_null = de$w2_null, w2_ratio = de$w2 / de$w2_null,
                                             mahalanobis = de$mahalanobis, coverage95 = cov,
                                             impute_seconds = round(imp$seconds, 1))
      cat(sprintf("[gp8] %s %s: W2/null %.2f, coverage %.3f (%.1f s)\n", name, names(patterns)[k],
                  de$w2 / de$w2_null, cov, imp$seconds))
    }
  }
  saveRDS(list(train = do.call(rbind, train_rows), score = do.call(rbind, rows)), "build/dit_tokens-gp8.rds")
}

if ("beijing" %in% parts) {
  dat <- load_real_data("beijing_air", dir = data_dir)
  test <- dat$test
  n_val <- max(20, round(0.15 * dim(dat$train)[1]))  # bench/real_data.R's split
  val <- dat$train[dim(dat$train)[1] - rev(seq_len(n_val)) + 1, , , drop = FALSE]
  train <- dat$train[seq_len(dim(dat$train)[1] - n_val), , , drop = FALSE]
  strategy <- mask_strategy(c(mcar0.1 = 1, mcar0.2 = 1, mcar0.5 = 1))
  spread <- function(a, n) a[round(seq(1, dim(a)[1], length.out = n)), , , drop = FALSE]
  rows <- list(); train_rows <- list()
  score <- function(method, imp, truth, hidden, rate, seconds) {
    met <- imputation_metrics(imp, truth = truth, hidden = hidden, by = "all")
    cat(sprintf("[beijing] %3.0f%% %-8s MAE %.4f CRPS %.4f cover90 %s (%.0f s)\n", 100 * rate, method, met$mae,
                met$crps, if (is.na(met$interval_coverage)) "-" else sprintf("%.3f", met$interval_coverage), seconds))
    rows[[length(rows) + 1]] <<- data.frame(rate = rate, method = method, mae = met$mae, mse = met$mse,
                                            crps = met$crps, coverage90 = met$interval_coverage,
                                            width90 = met$width, seconds = round(seconds))
  }
  fits <- list()
  for (name in names(models)) {
    tr <- train_model(name, "beijing", train, strategy, secs_beijing, validation = val)
    train_rows[[name]] <- tr$row
    fits[[name]] <- tr$fit
  }
  for (rate in c(0.1, 0.5)) {
    held <- hide_mcar(test, rate = rate, seed = round(1000 * rate))
    x <- spread(held$x, 24); hidden <- spread(held$hidden, 24); truth <- spread(test, 24)
    lin <- timed(impute_baseline(x, "linear"))
    score("linear", lin$value, truth, hidden, rate, lin$seconds)
    for (name in names(fits)) {
      imp <- timed(impute(fits[[name]], x, n_samples = 50, level = 0.9, seed = 1, threads = threads))
      score(name, imp$value, truth, hidden, rate, imp$seconds)
    }
  }
  saveRDS(list(train = do.call(rbind, train_rows), score = do.call(rbind, rows)), "build/dit_tokens-beijing.rds")
}

if ("report" %in% parts) {
  md_table <- function(d, digits = 4) {
    d[] <- lapply(d, function(col) {
      if (!is.numeric(col)) return(as.character(col))
      if (all(col == round(col), na.rm = TRUE)) format(col, scientific = FALSE) else signif(col, digits)
    })
    c(paste("|", paste(names(d), collapse = " | "), "|"), paste0("|", paste(rep("---", ncol(d)), collapse = "|"), "|"),
      apply(d, 1, function(r) paste("|", paste(r, collapse = " | "), "|")))
  }
  read_part <- function(p) { f <- sprintf("build/dit_tokens-%s.rds", p); if (file.exists(f)) readRDS(f) }
  g <- read_part("gp8"); b <- read_part("beijing")
  out <- c("# Frame tokens against entry tokens (bench/dit_tokens.R)", "",
           sprintf("Written %s from `Rscript bench/dit_tokens.R` on the 2-core machine (%d threads); the load average before and after each training is in its row.",
                   format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC"), threads), "")
  if (!is.null(g)) {
    out <- c(out, sprintf("## d = 8: GP data, H = 48 (%g s of training each; %d test sequences per pattern, 100 samples)", secs_gp8, n_test), "",
             md_table(g$train), "", md_table(g$score), "")
  }
  if (!is.null(b)) {
    out <- c(out, sprintf("## d = 132: BeijingAir, 30 x 132 windows (%g s of training each; 24 test windows, 50 samples, standardised scale)", secs_beijing), "",
             md_table(b$train), "", md_table(b$score), "")
  }
  writeLines(out, "bench/results/dit_tokens.md")
  cat("wrote bench/results/dit_tokens.md\n")
}
