# Imputation pipeline benchmark: the installed ("new") package against the
# version before the pipeline rewrite ("old", commit acc1d3b), side by side in
# one run, each version in its own R process, threads = 2 for both.
#
#   1. exact-GP imputation of 200 sequences (H = 96, d = 8, laplace kernel,
#      lengthscale 128) that share one pattern (frames 81:96 missing),
#      100 samples each: seconds, old/new (target >= 5x), and a check that
#      both versions' samples give intervals (and in-sample L2 regions) of the
#      same mean width, plus impute()'s own reported widths, which differ by
#      design (the new exact-GP imputer reports the exact law's intervals);
#   2. DiT imputation (untrained 128 wide, 4 deep, 4 heads; Euler, 5 steps,
#      100 samples) of 1 case and of 50 cases, each case with its own random
#      10% of frames missing: seconds per case (target for the new package:
#      per case with 50 cases <= per case with 1 case).
#
# Run from the repository root:
#   Rscript bench/pipeline.R
# Environment:
#   DITIMPUTE_OLD_LIB   R library holding the old package (default build/old/lib;
#                       absent: the old columns are skipped)
#   DITIMPUTE_NEW_LIB   R library holding the new package (default: R's default
#                       libraries, i.e. what `library(ditimpute)` loads)
#   DITIMPUTE_BENCH_DIT_CASES       cases of the many-case DiT run (default 50)
#   DITIMPUTE_BENCH_OLD_DIT_BUDGET  seconds for the OLD many-case DiT run (default
#                       60): the old code samples case after case, so when 50
#                       cases would take longer it times the first k (>= 5) and
#                       says so ("k/50"); Inf times all of them
#   DITIMPUTE_BENCH_TIMEOUT         seconds per version before it is stopped (600)
#   OMP_WAIT_POLICY     passed to both versions; unset, the benchmark sets PASSIVE
#                       ("default" leaves libgomp's own policy): on a shared 2-core
#                       machine LibTorch's OpenMP threads spin while other processes
#                       hold the cores, which made the old DiT sampling ~4x slower
#                       (10 s instead of 2.7 s for 1 case) and its timings erratic
#
# Building the old package (once; ~3 min on 2 cores):
#   git -C /work/main worktree add --detach /tmp/ditimpute-old acc1d3b
#   cd /tmp/ditimpute-old && export R_MAKEVARS_USER=$PWD/tools/R-Makevars MAKEFLAGS=-j2
#   tools/assemble-rpkg.sh $PWD/build/rpkg/ditimpute
#   (cd build/rpkg && R CMD build --no-build-vignettes --no-manual ditimpute)
#   mkdir -p /work/main/build/old/lib
#   R CMD INSTALL --library=/work/main/build/old/lib build/rpkg/ditimpute_*.tar.gz

threads <- 2L

# ---------------------------------------------------------------------------
# Worker: runs inside one R process with one version of the package loaded.
# Every section is guarded; results are saved after each one, so a crash or a
# timeout keeps what was measured before it.

run_worker <- function(lib, out, n_cases, dit_budget) {
  res <- list(errors = list(), gp = NULL, dit = NULL, pkg = NULL)
  save <- function() saveRDS(res, out)
  guard <- function(section, expr) {
    tryCatch(expr, error = function(e) {
      res$errors[[section]] <<- conditionMessage(e)
      save()
      res[[section]]   # what the section saved before it failed, if anything
    })
  }
  if (nzchar(lib)) .libPaths(c(lib, .libPaths()))
  options(ditimpute.threads = threads)
  # Best of up to 10 runs while their total stays under 3 s (one run when a run
  # takes longer); the value is the first run's. The sections below evaluate
  # in this function's frame: their variables must not reuse `res`, `out`,
  # `lib`, `save`, `guard`, `timed`.
  timed <- function(f, min_total = 3, max_reps = 10) {
    times <- numeric(0)
    value <- NULL
    repeat {
      invisible(gc(FALSE))
      t0 <- proc.time()[["elapsed"]]
      v <- f()
      times <- c(times, proc.time()[["elapsed"]] - t0)
      if (length(times) == 1) value <- v
      rm(v)
      if (length(times) >= max_reps || sum(times) >= min_total) break
    }
    list(seconds = min(times), times = times, value = value)
  }

  res$pkg <- guard("load", {
    suppressPackageStartupMessages(library(ditimpute, lib.loc = if (nzchar(lib)) lib else NULL))
    d <- utils::packageDescription("ditimpute", lib.loc = if (nzchar(lib)) lib else NULL)
    list(path = dirname(find.package("ditimpute")), version = d$Version, built = d$Built %||% NA)
  })
  save()
  if (is.null(res$pkg)) return(invisible())

  spec <- gp_spec(96, d = 8, kernel = gp_kernel("laplace", lengthscale = 128))

  # 1. Exact GP, 200 cases, one shared pattern.
  res$gp <- guard("gp", {
    x <- gp_simulate(spec, 200, seed = 1)
    x[, 81:96, ] <- NA
    impute(spec, x[1:2, , , drop = FALSE], n_samples = 100, seed = 99, threads = threads)   # warm-up
    t <- timed(function() impute(spec, x, n_samples = 100, seed = 1, threads = threads))
    imp <- t$value
    width <- imp$upper - imp$lower
    cond <- gp_conditional(spec, x[1, , ])
    list(seconds = t$seconds, times = t$times,
         width = mean(width[is.na(x)], na.rm = TRUE),
         radius = mean(imp$radius),
         sample_stats = sample_stats(imp$samples),
         exact_width = 2 * stats::qnorm(0.975) * mean(sqrt(diag(vcov(cond)))))
  })
  save()

  # 2. DiT: 1 case, then n_cases cases, each with its own pattern.
  res$dit <- guard("dit", {
    xt <- gp_simulate(spec, 64, seed = 5)
    # One step on a batch of 8 without a validation loss: only the weights'
    # shapes matter for timing (the arguments are left out where dit_fit()
    # no longer has them).
    fit_args <- list(xt, config = dit_config(H = 96, d = 8, width = 128, depth = 4, heads = 4), steps = 1,
                     batch_size = 8, validation = 0, seed = 1, threads = threads, progress = FALSE)
    fit_args <- fit_args[names(fit_args) == "" | names(fit_args) %in% names(formals(dit_fit))]
    t_fit <- system.time(fit <- do.call(dit_fit, fit_args))[["elapsed"]]
    xs <- gp_simulate(spec, n_cases, seed = 2)
    set.seed(3)
    for (i in seq_len(n_cases)) xs[i, sample(96, 10), ] <- NA     # 10% of frames
    run <- function(n) {
      imp <- impute(fit, xs[seq_len(n), , , drop = FALSE], n_samples = 100, method = "euler", steps = 5,
                    seed = 1, threads = threads)
      stopifnot(length(imp$radius) == n)
      NULL
    }
    impute(fit, xs[1, , , drop = FALSE], n_samples = 100, method = "euler", steps = 1, seed = 99,
           threads = threads)   # warm-up
    # The one-case time is the median of several runs (a single 50-case run
    # averages over the load of a shared machine as a median does; the best of
    # several 1-case runs would favour the 1-case side).
    one <- timed(function() run(1), min_total = 10)
    dres <- list(fit_seconds = t_fit, one = stats::median(one$times), one_times = one$times, n_cases = n_cases)
    res$dit <- dres
    save()
    n_many <- n_cases
    if (is.finite(dit_budget) && n_cases * one$seconds > dit_budget) {
      n_many <- min(n_cases, max(5L, as.integer(floor(dit_budget / one$seconds))))
    }
    many <- timed(function() run(n_many))
    c(dres, list(many = many$seconds, many_times = many$times, n_many = n_many))
  })
  save()
  invisible()
}

`%||%` <- function(a, b) if (is.null(a)) b else a

# The same statistics computed from the samples of either version (their own
# summaries differ: the new exact-GP imputer reports the exact law's intervals
# and radius, the old one the samples' quantiles): the mean width of the
# entries' type-7 95% quantile intervals and the mean in-sample radius (type-7
# 95% quantile of the samples' distances to their mean).
sample_stats <- function(samples) {
  if (!is.list(samples) || !length(samples)) return(c(width = NA_real_, radius = NA_real_))
  per_case <- vapply(samples, function(s) {
    s <- as.matrix(s)
    z <- nrow(s)
    q7 <- function(sorted, p) {
      h <- (z - 1) * p + 1
      lo <- floor(h)
      hi <- min(lo + 1, z)
      sorted[lo, ] + (h - lo) * (sorted[hi, ] - sorted[lo, ])
    }
    sorted <- apply(s, 2, sort)
    dist <- sqrt(rowSums(sweep(s, 2, colMeans(s))^2))
    c(mean(q7(sorted, 0.975) - q7(sorted, 0.025)), stats::quantile(dist, 0.95, names = FALSE))
  }, numeric(2))
  c(width = mean(per_case[1, ]), radius = mean(per_case[2, ]))
}

# ---------------------------------------------------------------------------
# Driver.

script_path <- function() {
  f <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  if (length(f) != 1) stop("run this benchmark as `Rscript bench/pipeline.R`", call. = FALSE)
  normalizePath(f)
}

load_average <- function() {
  l <- tryCatch(readLines("/proc/loadavg", warn = FALSE), error = function(e) "")
  if (length(l) && nzchar(l[1])) paste(strsplit(l[1], " ")[[1]][1:3], collapse = " ") else "unknown"
}

has_pkg <- function(lib) file.exists(file.path(lib, "ditimpute", "DESCRIPTION"))

# A library path: as given when it exists from here, else from the repository root.
resolve_lib <- function(path, root) {
  if (!nzchar(path)) return("")
  if (dir.exists(path)) return(normalizePath(path))
  alt <- file.path(root, path)
  if (dir.exists(alt)) normalizePath(alt) else path
}

launch <- function(label, lib, n_cases, dit_budget, timeout) {
  out <- tempfile(paste0("pipeline-", label, "-"), fileext = ".rds")
  log <- tempfile(paste0("pipeline-", label, "-"), fileext = ".log")
  cat(sprintf("running %s ... ", label))
  t0 <- proc.time()[["elapsed"]]
  status <- suppressWarnings(system2(file.path(R.home("bin"), "Rscript"),
                                     c(shQuote(script_path()), "--worker", shQuote(lib), shQuote(out),
                                       n_cases, dit_budget),
                                     stdout = log, stderr = log, timeout = timeout))
  wall <- proc.time()[["elapsed"]] - t0
  cat(sprintf("%.0f s\n", wall))
  res <- if (file.exists(out)) readRDS(out) else list(errors = list())
  if (!identical(as.integer(status), 0L)) {
    res$errors$process <- if (identical(as.integer(status), 124L)) sprintf("stopped after %d s", timeout) else
      sprintf("exit status %s", status)
  }
  if (length(res$errors)) {
    res$log_tail <- utils::tail(readLines(log, warn = FALSE), 15)
  }
  res$wall <- wall
  res
}

main <- function() {
  root <- normalizePath(file.path(dirname(script_path()), ".."))
  old_lib <- resolve_lib(Sys.getenv("DITIMPUTE_OLD_LIB", "build/old/lib"), root)
  new_lib <- resolve_lib(Sys.getenv("DITIMPUTE_NEW_LIB", ""), root)
  n_cases <- as.integer(Sys.getenv("DITIMPUTE_BENCH_DIT_CASES", "50"))
  old_budget <- as.numeric(Sys.getenv("DITIMPUTE_BENCH_OLD_DIT_BUDGET", "60"))
  timeout <- as.integer(Sys.getenv("DITIMPUTE_BENCH_TIMEOUT", "600"))

  omp <- Sys.getenv("OMP_WAIT_POLICY")
  if (!nzchar(omp)) omp <- "PASSIVE"
  if (identical(tolower(omp), "default")) Sys.unsetenv("OMP_WAIT_POLICY") else Sys.setenv(OMP_WAIT_POLICY = omp)
  cat(sprintf("ditimpute imputation pipeline, old (acc1d3b) vs new, threads = %d, %d cores here, OMP_WAIT_POLICY %s\n",
              threads, parallel::detectCores(), omp))
  cat(sprintf("load average before: %s\n\n", load_average()))
  res <- list(old = NULL, new = NULL)
  if (has_pkg(old_lib)) {
    res$old <- launch("old", old_lib, n_cases, old_budget, timeout)
  } else {
    cat(sprintf(paste0("old package not found in '%s' (set DITIMPUTE_OLD_LIB; how to build it: see the header ",
                       "of bench/pipeline.R): old columns skipped\n"), old_lib))
  }
  if (nzchar(new_lib) && !has_pkg(new_lib)) {
    cat(sprintf("new package not found in DITIMPUTE_NEW_LIB = '%s': new column skipped\n", new_lib))
  } else {
    res$new <- launch("new", new_lib, n_cases, Inf, timeout)
  }
  cat("\n")

  for (v in c("old", "new")) {
    r <- res[[v]]
    if (is.null(r)) next
    if (!is.null(r$pkg)) {
      cat(sprintf("%s: ditimpute %s from %s (built %s)\n", v, r$pkg$version, r$pkg$path, r$pkg$built))
    }
    for (s in names(r$errors)) cat(sprintf("%s FAILED in %s: %s\n", v, s, r$errors[[s]]))
    if (length(r$errors) && length(r$log_tail)) {
      cat(sprintf("  last lines of the %s process:\n", v), paste0("  | ", r$log_tail, "\n"), sep = "")
    }
  }
  if (!is.null(res$old$pkg) && !is.null(res$new$pkg) && identical(res$old$pkg$path, res$new$pkg$path)) {
    cat("note: old and new are the same installation\n")
  }

  get <- function(v, ...) {
    x <- res[[v]]
    for (k in c(...)) x <- if (k %in% names(x)) x[[k]] else NULL
    if (is.null(x)) NA_real_ else x
  }
  num <- function(x, fmt = "%.3f") if (is.na(x)) "-" else sprintf(fmt, x)
  verdict <- function(ok) if (is.na(ok)) "" else if (ok) "met" else "NOT met"
  rows <- list()
  row <- function(what, old, new, ratio = "", target = "", status = "") {
    rows[[length(rows) + 1]] <<- c(what, old, new, ratio, target, status)
  }

  g_old <- get("old", "gp", "seconds")
  g_new <- get("new", "gp", "seconds")
  g_ratio <- g_old / g_new
  row("GP exact, 200 cases x 100 samples [s]", num(g_old), num(g_new), num(g_ratio, "%.1fx"), ">= 5x",
      verdict(g_ratio >= 5))

  n_old <- get("old", "dit", "n_many")
  n_new <- get("new", "dit", "n_many")
  d1_old <- get("old", "dit", "one")
  d1_new <- get("new", "dit", "one")
  dm_old <- get("old", "dit", "many") / n_old
  dm_new <- get("new", "dit", "many") / n_new
  row("DiT euler/5, 1 case x 100 samples [s/case]", num(d1_old), num(d1_new), num(d1_old / d1_new, "%.1fx"))
  cases_lab <- function(n) if (is.na(n) || n == n_cases) "" else sprintf(" (%d/%d)", n, n_cases)
  row(sprintf("DiT euler/5, %d cases x 100 samples [s/case]", n_cases),
      paste0(num(dm_old), cases_lab(n_old)), paste0(num(dm_new), cases_lab(n_new)),
      num(dm_old / dm_new, "%.1fx"))
  row(sprintf("DiT s/case: 1 case / %d cases", n_cases), num(d1_old / dm_old, "%.2f"),
      num(d1_new / dm_new, "%.2f"), "", ">= 1 (new)", verdict(d1_new / dm_new >= 1))
  row("DiT fit, 1 step of 8 (not a target) [s]", num(get("old", "dit", "fit_seconds")),
      num(get("new", "dit", "fit_seconds")))

  rel_row <- function(what, a, b, fmt = "%.4f") {
    rel <- abs(b - a) / a
    row(what, num(a, fmt), num(b, fmt), if (is.na(rel)) "" else sprintf("diff %.2f%%", 100 * rel), "diff < 2%",
        verdict(rel < 0.02))
  }
  rel_row("GP samples: mean 95% quantile width", get("old", "gp", "sample_stats", "width"),
          get("new", "gp", "sample_stats", "width"))
  rel_row("GP samples: mean 95% in-sample radius", get("old", "gp", "sample_stats", "radius"),
          get("new", "gp", "sample_stats", "radius"))
  ex <- get("new", "gp", "exact_width")
  if (is.na(ex)) ex <- get("old", "gp", "exact_width")
  row("GP reported intervals: mean width", num(get("old", "gp", "width"), "%.4f"),
      num(get("new", "gp", "width"), "%.4f"), "", if (is.na(ex)) "" else sprintf("exact %.4f", ex))
  row("GP reported regions: mean radius", num(get("old", "gp", "radius"), "%.4f"),
      num(get("new", "gp", "radius"), "%.4f"))

  tab <- do.call(rbind, rows)
  tab <- rbind(c("", "old", "new", "old/new", "target", ""), tab)
  widths <- apply(nchar(tab), 2, max)
  for (i in seq_len(nrow(tab))) {
    cells <- vapply(seq_along(widths), function(j) {
      formatC(tab[i, j], width = widths[j], flag = if (j == 1) "-" else " ")
    }, "")
    cat(sub(" +$", "", paste(cells, collapse = "  ")), "\n", sep = "")
  }

  cat(paste0("\nGP timings are the best of up to 10 runs within 3 s; the DiT 1-case time is the median of its runs within 10 s, the 50-case time one run divided by 50. ",
             "\"GP samples\" rows compute the same statistics from both versions' samples (Monte Carlo sd ",
             "between seeds ~0.1% for the width, ~0.3% for the radius); \"reported\" rows are impute()'s own ",
             "summaries, which differ by design: the old ones are the samples' type-7 quantiles (~4% narrower ",
             "than the exact law at 100 draws), the new exact-GP imputer reports the exact law's (mu +/- z sd, ",
             "exact radius quantile).\n"))
  cat(sprintf("Load average after: %s (other processes on these cores slow both versions down).\n",
              load_average()))
  if (!is.na(n_old) && n_old < n_cases) {
    cat(sprintf(paste0("Old DiT %d-case row: the old code samples case after case, so its per-case time was ",
                       "measured on the first %d cases (DITIMPUTE_BENCH_OLD_DIT_BUDGET = %s s; Inf for all).\n"),
                n_cases, n_old, format(old_budget)))
  }
  invisible(res)
}

args <- commandArgs(trailingOnly = TRUE)
if (length(args) && args[1] == "--worker") {
  run_worker(lib = args[2], out = args[3], n_cases = as.integer(args[4]), dit_budget = as.numeric(args[5]))
} else {
  main()
}
