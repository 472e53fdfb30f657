#' Threads: one budget per process
#'
#' Every multi-threaded part of the package (the core's `parallel_for` over
#' cases, LibTorch's intra-op threads in DiT training and sampling, and the
#' OpenBLAS threads under the large dense factorisations) takes its thread
#' count from one figure per process, so that several R processes on one
#' machine (a user's `parallel` or `future` workers, parallel sessions) share
#' the cores instead of each taking all of them.
#'
#' The budget is, in this order:
#' 1. the `threads` argument of a call, for that call;
#' 2. `options(ditimpute.threads = n)`;
#' 3. the environment variable `DITIMPUTE_THREADS`;
#' 4. `1` inside a worker: a forked child (`parallel::mclapply()`,
#'    `future::plan(multicore)`) or a socket worker (`parallel::makeCluster()`,
#'    `future::plan(multisession)`), since such workers come in numbers;
#' 5. `1` when this session's OpenMP threads wait actively (R was started
#'    without `OMP_WAIT_POLICY=PASSIVE`) and other processes are running at
#'    the time of the call (`/proc/loadavg`'s running count beyond this
#'    process's own running threads, which may still be spinning after a BLAS
#'    call): spinning threads on shared cores
#'    made a small DiT's training 50-90x slower on 2 threads than on one
#'    (`bench/results/threads.md`);
#' 6. otherwise every core (`parallel::detectCores()`).
#'
#' Each call sets LibTorch's threads (`at::set_num_threads`) and OpenBLAS's
#' (`openblas_set_num_threads`, when R's BLAS is OpenBLAS) to the figure it
#' uses. When the package loads and `OMP_WAIT_POLICY` is unset, it sets
#' `OMP_WAIT_POLICY=PASSIVE` in the environment (unless
#' `options(ditimpute.omp_passive = FALSE)`): OpenMP threads that wait then
#' sleep instead of spinning, which is what lets several processes share the
#' cores (spinning threads of one process steal the cores the others need).
#' GNU OpenMP reads the variable once, when R loads its BLAS at start-up, so
#' the setting reaches the processes started afterwards (workers, `Rscript`
#' children), not the running session; to have it there too, set
#' `OMP_WAIT_POLICY=PASSIVE` before R starts (e.g. in `~/.Renviron`).
#'
#' `bench/threads.R` measures five concurrent trainings against five
#' sequential ones (`bench/results/threads.md`).
#'
#' @param apply If `TRUE`, also set OpenBLAS's threads to the budget.
#' @return `thread_budget()`: the number of threads calls use by default.
#' @examples
#' thread_budget()
#' old <- options(ditimpute.threads = 1)
#' thread_budget()
#' options(old)
#' @name threads
#' @export
thread_budget <- function(apply = FALSE) {
  # thread_budget(4) read as a request for 4 threads returned the budget
  # unchanged (a review): `apply` is a switch
  if (!is.logical(apply) || length(apply) != 1 || is.na(apply)) {
    abort_input("apply", "must be TRUE or FALSE (to set a number of threads: options(ditimpute.threads = n)).")
  }
  n <- getOption("ditimpute.threads", NA)
  if (is.null(n) || (length(n) == 1 && is.na(n))) {
    env <- Sys.getenv("DITIMPUTE_THREADS", "")
    n <- if (nzchar(env)) suppressWarnings(as.numeric(env)) else NA
    if (nzchar(env) && (length(n) != 1 || is.na(n) || n < 1 || n != round(n))) {
      abort_input("DITIMPUTE_THREADS", "the environment variable must be a whole number >= 1.")
    }
  } else if (!is.numeric(n) || length(n) != 1 || is.na(n) || n < 1 || n != round(n)) {
    abort_input("ditimpute.threads", "the option must be a whole number >= 1.")
  }
  if (is.na(n)) n <- if (in_worker() || (omp_waits_actively() && others_running())) 1L else parallel::detectCores()
  n <- if (is.na(n)) 1L else as.integer(n)
  if (isTRUE(apply)) cpp_set_thread_budget(n)
  n
}

# TRUE in a forked child (mclapply, future multicore: the core's fork handler
# marks it) or a socket worker of parallel / future (parallelly), whose
# command line runs parallel's worker loop (`.workRSOCK`, `.slaveRSOCK` before
# R 4.1).
in_worker <- function() {
  isTRUE(cpp_in_forked_child()) || any(grepl("workRSOCK|slaveRSOCK", commandArgs()))
}

# Whether this session's OpenMP threads spin while they wait: GNU OpenMP read
# OMP_WAIT_POLICY when R started, before .onLoad could set it (recorded there).
omp_waits_actively <- function() isTRUE(.threads_state$active_wait)

# Whether other processes are runnable right now: the running count of
# /proc/loadavg (every runnable thread on the machine) exceeds this process's
# own runnable threads (/proc/self/task/*/stat). The process's own count
# matters: just after a multi-threaded BLAS call (gp_fit() before dit_fit())
# its OpenMP threads are still spinning and are counted as running, which
# alone used to read as "others running" and gave an idle machine one thread.
# FALSE where /proc cannot be read.
others_running <- function(running = loadavg_running(), own = own_running_threads()) {
  isTRUE(running > max(1L, own))
}

loadavg_running <- function() {
  l <- tryCatch(readLines("/proc/loadavg", warn = FALSE), error = function(e) "")
  suppressWarnings(as.integer(sub("/.*", "", strsplit(l, " ")[[1]][4])))
}

# Threads of this process in state R (running or runnable); 1 (the caller)
# where /proc/self/task cannot be read.
own_running_threads <- function() {
  tasks <- list.files("/proc/self/task", full.names = TRUE)
  state <- vapply(tasks, function(t) {
    s <- tryCatch(readLines(file.path(t, "stat"), n = 1L, warn = FALSE), error = function(e) "")
    if (length(s) != 1L) return("")
    sub("^.*\\) (\\S).*$", "\\1", s)
  }, "")
  max(1L, sum(state == "R"))
}

.threads_state <- new.env(parent = emptyenv())

.onLoad <- function(libname, pkgname) {
  policy <- toupper(Sys.getenv("OMP_WAIT_POLICY"))
  .threads_state$active_wait <- !identical(policy, "PASSIVE")
  if (!identical(getOption("ditimpute.omp_passive"), FALSE) && !nzchar(Sys.getenv("OMP_WAIT_POLICY"))) {
    Sys.setenv(OMP_WAIT_POLICY = "PASSIVE")
  }
  try(thread_budget(apply = TRUE), silent = TRUE)
  invisible()
}
