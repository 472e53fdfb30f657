# Does the DiT learn on a CPU budget? Training recipes side by side on the
# theory bench's setting (bench/theory.R): H = 48, d = 8, Laplace kernel with
# lengthscale 64, S4 masks, 4,000 training sequences (+ 400 for the
# validation loss), DiT width 64 / depth 3 / 4 heads, on
# DITIMPUTE_BENCH_THREADS threads (2 by default; 1 on a shared machine, where
# two OpenMP threads wait on each other whenever one is descheduled).
# Budgets: the sweep trains for 60 s of wall clock (dit_fit(time_limit =));
# the main comparison trains fixed step counts that stand for 1, 3 and 10
# minutes (DITIMPUTE_BENCH_STEPS_PER_MIN steps a minute, 800 by default: the
# sweep's rate on one thread of the shared machine), because on a shared
# machine a wall-clock budget buys a different number of steps in every run
# and the comparison would measure the load, not the recipe. Each model is scored like bench/theory.R's error rows: on n_test
# fresh sequences per pattern P1-P4 (patterns hidden), 100 samples each,
# distribution_error() (W2 to the exact conditional law, and W2 of exact
# draws of the same size: the null) and the raw 95% region coverage
# (coverage(), 1,000 exact draws per sequence).
#
# Run from the repository root with the package installed:
#   Rscript bench/dit_learning.R [sweep] [today] [main] [report]
# sweep: 1-minute runs of candidate recipes, scored by the validation loss
#        (the same 400 held-out sequences and fixed masks/times/noise in every
#        run), to choose the new default;
# main:  the recipes at 1, 3 (and, for the new one, 10) minutes, scored on P1-P4.
# "main:today" / "main:new" run only the old / new recipes (so that they can
# run in separate processes). Each process keeps its results in
# build/dit_learning-<parts>.rds; report merges them and writes
# bench/results/dit_learning.md (or DITIMPUTE_BENCH_OUT, for runs added later
# whose earlier .rds files are gone). Wall-clock budgets depend on the
# machine's load: the load average is recorded with every run.
suppressPackageStartupMessages(library(ditimpute))
parts <- commandArgs(trailingOnly = TRUE)
if (length(parts) == 0) parts <- c("sweep", "main", "report")
threads <- as.integer(Sys.getenv("DITIMPUTE_BENCH_THREADS", "2"))
n_test <- as.integer(Sys.getenv("DITIMPUTE_BENCH_N_TEST", "6"))
source(file.path("bench", "theory_setting.R"))  # H, d, spec, patterns, s4
train <- gp_simulate(spec, 4000, seed = 104000)
val <- gp_simulate(spec, 400, seed = 204000)
truth <- gp_simulate(spec, n_test, seed = 5)
cfg <- dit_config(H, d, width = 64, depth = 3, heads = 4)
steps_per_min <- as.integer(Sys.getenv("DITIMPUTE_BENCH_STEPS_PER_MIN", "800"))
dir.create("build", showWarnings = FALSE)
# DITIMPUTE_BENCH_ONLY: a regular expression; main runs only the keys
# ("<recipe> <minutes>") it matches (to share the runs among processes).
only <- Sys.getenv("DITIMPUTE_BENCH_ONLY", "")
res_file <- sprintf("build/dit_learning-%s.rds", gsub("[^a-z0-9]+", "_", paste(c(setdiff(parts, "report"), only),
                                                                             collapse = "_")))
res <- if (file.exists(res_file)) readRDS(res_file) else list(sweep = list(), main = list())
loadavg <- function() paste(strsplit(readLines("/proc/loadavg"), " ")[[1]][1:3], collapse = " ")

# Recipes: arguments of dit_fit() besides the data, budget and seed.
# The benches' recipe until now, every new option off.
today <- list(lr = 1e-3, lr_schedule = "constant", warmup_steps = 0, patience = 0, restore_best = FALSE, ema = 0)
recipes <- list(
  "today, EMA off" = today,
  "today, EMA 0.999 no warm-up" = modifyList(today, list(ema = 0.999, ema_warmup = FALSE)),
  "today, EMA 0.999 warmed up" = modifyList(today, list(ema = 0.999, ema_warmup = TRUE))
)
# Candidates of the sweep (1 minute each; validation loss decides).
candidates <- list(
  "const 1e-3, EMA warm" = list(lr = 1e-3, lr_schedule = "constant", ema = 0.999),
  "cosine 1e-3, wu 100, EMA warm" = list(lr = 1e-3, lr_schedule = "cosine", warmup_steps = 100, ema = 0.999),
  "cosine 2e-3, wu 100, EMA warm" = list(lr = 2e-3, lr_schedule = "cosine", warmup_steps = 100, ema = 0.999),
  "cosine 2e-3, wu 100, EMA off" = list(lr = 2e-3, lr_schedule = "cosine", warmup_steps = 100, ema = 0),
  "cosine 4e-3, wu 200, EMA warm" = list(lr = 4e-3, lr_schedule = "cosine", warmup_steps = 200, ema = 0.999),
  "cosine 2e-3, wu 100, EMA warm, batch 128" = list(lr = 2e-3, lr_schedule = "cosine", warmup_steps = 100,
                                                     ema = 0.999, batch_size = 128)
)

# A budget in seconds (time_limit) or, as "steps", a step count.
train_one <- function(args, seconds = NULL, steps = NULL) {
  load0 <- loadavg()
  fit <- do.call(dit_fit, c(list(train, config = cfg, strategy = s4, time_limit = seconds, steps = steps,
                                 validation = val, seed = 7, threads = threads, progress = FALSE),
                            args))
  list(fit = fit, load = paste(load0, "->", loadavg()))
}

score <- function(fit) score_on_patterns(fit, truth, threads)

row_of <- function(name, budget, t) {
  fit <- t$fit
  ti <- fit$train_info
  data.frame(recipe = name, budget = budget, seconds = round(ti$seconds), steps = fit$steps, best_step = ti$best_step,
             restored = isTRUE(ti$restored_best), val_loss_last = utils::tail(fit$history$val_loss, 1),
             val_loss_best = ti$best_val_loss, stop = ti$stop_reason, load = t$load)
}

if ("sweep" %in% parts) {
  for (nm in names(candidates)) {
    if (!is.null(res$sweep[[nm]])) next
    t <- train_one(modifyList(candidates[[nm]], list(restore_best = TRUE)), seconds = 60)
    res$sweep[[nm]] <- row_of(nm, "60 s", t)
    print(res$sweep[[nm]])
    saveRDS(res, res_file)
  }
}

# The new default as dit_fit() has it (every argument left at its default).
recipes[["new default"]] <- list()
budgets <- list("today, EMA off" = c(1, 3, 10), "today, EMA 0.999 no warm-up" = c(1, 3, 10),
                "today, EMA 0.999 warmed up" = c(1, 3, 10), "new default" = c(1, 3, 5, 10))   # minutes
run_names <- c(if (any(c("main", "main:today") %in% parts)) grep("^today", names(budgets), value = TRUE),
               if (any(c("main", "main:new") %in% parts)) "new default")
if (length(run_names)) {
  for (nm in run_names) for (mins in budgets[[nm]]) {
    key <- paste(nm, mins)
    if (!is.null(res$main[[key]]) || (nzchar(only) && !grepl(only, key))) next
    t <- train_one(recipes[[nm]], steps = mins * steps_per_min)
    t0 <- proc.time()[["elapsed"]]
    sc <- score(t$fit)
    res$main[[key]] <- cbind(row_of(nm, sprintf("%d min = %d steps", mins, mins * steps_per_min), t), sc,
                             score_s = proc.time()[["elapsed"]] - t0)
    print(res$main[[key]])
    saveRDS(res, res_file)
  }
}

if ("report" %in% parts) {
  for (f in Sys.glob("build/dit_learning-*.rds")) {
    r <- readRDS(f)
    for (k in names(r$sweep)) res$sweep[[k]] <- r$sweep[[k]]
    for (k in names(r$main)) res$main[[k]] <- r$main[[k]]
  }
  source(file.path("bench", "md_table.R"))
  fmt <- md_table_signif3
  md <- c("# DiT training recipes on a CPU budget (bench/dit_learning.R)", "",
          sprintf("H = %d, d = %d, Laplace lengthscale 64, S4 masks, 4,000 training + 400 validation sequences, DiT 64/3/4, %d threads, %s, %s. Machine shared with other jobs: the load average (1/5/15 min) before -> after each training run is in the table; wall-clock budgets buy fewer steps under load.",
                  H, d, threads, format(Sys.time(), "%Y-%m-%d"), R.version.string), "")
  if (length(res$sweep)) {
    md <- c(md, "## Sweep: 1-minute runs, validation loss (v-weighted, the 400 validation sequences with masks, times and noise fixed)", "",
            fmt(do.call(rbind, res$sweep)), "")
  }
  if (length(res$main)) {
    m <- do.call(rbind, res$main)
    md <- c(md, sprintf("## Recipes by training budget: W2 / null and raw 95%% region coverage on P1-P4 (%d test sequences per pattern, 100 samples each)", n_test), "",
            fmt(m[, c("recipe", "budget", "seconds", "steps", "best_step", "pattern", "w2", "w2_null", "w2_ratio",
                      "mahalanobis", "coverage", "load")]), "")
  }
  # Hand-written reading of the tables, kept across reruns of the report.
  out <- Sys.getenv("DITIMPUTE_BENCH_OUT", "bench/results/dit_learning.md")
  notes <- "bench/results/dit_learning_notes.md"
  if (out == "bench/results/dit_learning.md" && file.exists(notes)) md <- c(md, readLines(notes))
  writeLines(md, out)
}
