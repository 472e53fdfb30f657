# Threads that share (issue 30): five processes training the same small DiT at
# once on this machine's cores, against five runs of the same training one
# after another, in one script.
#
#   Rscript bench/threads.R [label] [steps=N] [no-sessions]
#
# Phases, each timed by the wall clock of the whole phase:
#   sequential  the same training five times in this session, one after
#               another (the first run is "one process alone");
#   workers     five parallel::makePSOCKcluster() workers (as a user's
#               `parallel` or `future` multisession workers) training at once;
#   sessions    five independent Rscript processes (not workers: as parallel
#               R sessions of a user) training at once, against the same five
#               Rscript processes one after another (each starts R and loads
#               LibTorch, which the in-session sequential runs do not; that
#               start-up is counted on both sides of this ratio).
# Every run is the same: a 24 x 8 GP training set (200 sequences), a DiT of
# width 32, depth 2, `steps` steps (default 100) of batch 32, seed 1, threads left to the
# package's default. Ratio = phase wall time / sequential wall time (target
# <= 1.5). A concurrent phase still running after 3x the sequential time
# (sessions: and at least 120 s, as they start R and LibTorch) is stopped
# (its processes killed) and reported as "> ratio". The package is whichever `library(ditimpute)` finds (R_LIBS decides:
# the installed one for the "before" figures, the branch's build for "after").
# Appends a block to bench/results/threads.md. Loads every core for a few
# minutes: run it rarely.
suppressPackageStartupMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
label <- if (length(args) >= 1) args[1] else "run"
with_sessions <- !("no-sessions" %in% args)  # the sessions phase can be left out (time)
steps_arg <- grep("^steps=", args, value = TRUE)
steps <- if (length(steps_arg)) as.integer(sub("^steps=", "", steps_arg[1])) else 100L

train_code <- substitute({
  spec <- ditimpute::gp_spec(24, d = 8, kernel = ditimpute::gp_kernel("matern32", lengthscale = 6))
  x <- ditimpute::gp_simulate(spec, 200, seed = 1)
  t0 <- proc.time()[["elapsed"]]
  fit <- ditimpute::dit_fit(x, config = ditimpute::dit_config(24, 8, width = 32, depth = 2, heads = 2),
                            steps = STEPS, batch_size = 32, validation = 0, seed = 1, progress = FALSE)
  c(seconds = proc.time()[["elapsed"]] - t0, threads = fit$train_info$threads)
}, list(STEPS = steps))
train_once <- function() eval(train_code, envir = new.env())

wall <- function(expr) {
  t0 <- proc.time()[["elapsed"]]
  force(expr)
  proc.time()[["elapsed"]] - t0
}

cores <- parallel::detectCores()
load_start <- readLines("/proc/loadavg")
cat(sprintf("package %s from %s; %d cores; OMP_WAIT_POLICY='%s'; load average before: %s\n",
            as.character(utils::packageVersion("ditimpute")), find.package("ditimpute"), cores,
            Sys.getenv("OMP_WAIT_POLICY"), paste(readLines("/proc/loadavg"), collapse = "")))

report <- function(...) { cat(sprintf(...), "\n", sep = ""); flush.console() }
seq_res <- list()
t_seq <- wall(for (i in 1:5) seq_res[[i]] <- train_once())
alone_res <- seq_res[[1]]
t_alone <- alone_res[["seconds"]]
report("sequential: %.1f s (first run alone %.1f s, threads %s)", t_seq, t_alone, alone_res[["threads"]])
limit <- 3 * t_seq
# Kills `pids` after `limit` seconds unless the phase ended (a file flags it).
watchdog <- function(pids, flag) {
  system2(file.path(R.home("bin"), "Rscript"), c("--vanilla", "-e", shQuote(sprintf(
    "t0 <- Sys.time(); while (!file.exists('%s') && difftime(Sys.time(), t0, units = 'secs') < %f) Sys.sleep(0.2); if (!file.exists('%s')) tools::pskill(c(%s))",
    flag, limit, flag, paste(pids, collapse = ", ")))), wait = FALSE)
}

cl <- parallel::makePSOCKcluster(5)
invisible(parallel::clusterEvalQ(cl, suppressPackageStartupMessages(library(ditimpute))))
parallel::clusterExport(cl, "train_code")
pids <- unlist(parallel::clusterEvalQ(cl, Sys.getpid()))
flag <- tempfile()
watchdog(pids, flag)
workers_res <- NULL
t_workers <- wall(workers_res <- tryCatch(parallel::clusterEvalQ(cl, eval(train_code, envir = new.env())),
                                          error = function(e) NULL))
invisible(file.create(flag))
workers_stopped <- is.null(workers_res)
if (!workers_stopped) parallel::stopCluster(cl)
report("workers: %.1f s%s", t_workers, if (workers_stopped) " (stopped)" else "")

script <- tempfile(fileext = ".R")
writeLines(c("cat('PID', Sys.getpid(), '\\n')", "r <- eval(", deparse(train_code), ")", "cat('RESULT', r, '\\n')"), script)
rscript <- file.path(R.home("bin"), "Rscript")
outs <- vapply(1:5, function(i) tempfile(), "")
sessions_stopped <- FALSE
# The same five sessions one after another: the like-for-like reference.
seq_outs <- vapply(1:5, function(i) tempfile(), "")
t_seq_sessions <- if (with_sessions) wall(for (i in 1:5) system2(rscript, c("--vanilla", script), stdout = seq_outs[i],
                                                                 stderr = seq_outs[i], wait = TRUE)) else NA
if (with_sessions) report("sessions one after another: %.1f s", t_seq_sessions)
limit <- 3 * max(t_seq, t_seq_sessions, na.rm = TRUE)
t_sessions <- if (with_sessions) wall({
  for (i in 1:5) system2(rscript, c("--vanilla", script), stdout = outs[i], stderr = outs[i], wait = FALSE)
  t0 <- proc.time()[["elapsed"]]
  repeat {
    done <- vapply(outs, function(f) file.exists(f) && any(grepl("^RESULT", readLines(f, warn = FALSE))), TRUE)
    if (all(done)) break
    if (proc.time()[["elapsed"]] - t0 > max(limit, 120)) {  # sessions also start R and LibTorch
      for (f in outs) {
        l <- grep("^PID", readLines(f, warn = FALSE), value = TRUE)
        if (length(l)) tools::pskill(as.integer(strsplit(trimws(l[1]), "\\s+")[[1]][2]))
      }
      sessions_stopped <- TRUE
      break
    }
    Sys.sleep(0.05)
  }
}) else NA
sessions_seconds <- vapply(outs, function(f) {  # each session's own training time
  l <- if (file.exists(f)) grep("^RESULT", readLines(f, warn = FALSE), value = TRUE) else character()
  if (length(l)) as.numeric(strsplit(trimws(l[1]), "\\s+")[[1]][2]) else NA
}, 1)
sessions_threads <- vapply(outs, function(f) {
  l <- if (file.exists(f)) grep("^RESULT", readLines(f, warn = FALSE), value = TRUE) else character()
  if (length(l)) as.numeric(strsplit(trimws(l[1]), "\\s+")[[1]][3]) else NA
}, 1)
if (with_sessions) report("sessions: %.1f s%s", t_sessions, if (sessions_stopped) " (stopped)" else "")

thr <- function(r) paste(unique(vapply(r, function(z) z[["threads"]], 1)), collapse = "/")
lines <- c(
  sprintf("### %s (%s)", label, format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC")),
  "",
  sprintf("package from `%s`; %d cores; OMP_WAIT_POLICY = '%s' in the session; load average at the start: %s; at the end: %s",
          find.package("ditimpute"), cores, Sys.getenv("OMP_WAIT_POLICY"), load_start, readLines("/proc/loadavg")),
  "",
  "| phase | wall s | ratio to sequential | threads per process |",
  "|---|---:|---:|---|",
  sprintf("| one process alone (first sequential run) | %.1f | | %s |", t_alone, alone_res[["threads"]]),
  sprintf("| sequential (5 runs in this session; %d steps each) | %.1f | 1.00 | %s |", steps, t_seq, thr(seq_res)),
  if (workers_stopped) sprintf("| 5 PSOCK workers at once | > %.1f (stopped) | > %.2f | |", t_workers, t_workers / t_seq) else
    sprintf("| 5 PSOCK workers at once | %.1f | %.2f | %s |", t_workers, t_workers / t_seq, thr(workers_res)),
  if (!with_sessions) "| 5 Rscript sessions | not run | | |" else c(
    sprintf("| 5 Rscript sessions one after another (each starts R and LibTorch) | %.1f | 1.00 (the sessions' reference) | |",
            t_seq_sessions),
    if (sessions_stopped) sprintf("| 5 Rscript sessions at once | > %.1f (stopped) | > %.2f | |", t_sessions,
                                  t_sessions / t_seq_sessions) else
    sprintf("| 5 Rscript sessions at once (training alone: longest %.1f s) | %.1f | %.2f to the sessions one after another (training alone %.2f to the in-session runs) | %s |",
            max(sessions_seconds), t_sessions, t_sessions / t_seq_sessions, max(sessions_seconds) / t_seq,
            paste(unique(sessions_threads), collapse = "/"))),
  "")
cat(lines, sep = "\n")
out <- file.path("bench", "results", "threads.md")
if (!file.exists(out)) {
  writeLines(c("# Threads that share: five concurrent DiT trainings vs five sequential ones",
               "", "Written by `bench/threads.R` (see its header). Machine: the project's 2-core VM,",
               "shared with other sessions: the load average at the start of each run is printed.", ""), out)
}
cat(lines, sep = "\n", file = out, append = TRUE)
