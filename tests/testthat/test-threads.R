# The thread budget (rpkg/R/threads.R, ?threads).

# Pretends the session waits passively (as when started with
# OMP_WAIT_POLICY=PASSIVE) for the duration of the calling test.
local_passive <- function(env = parent.frame()) {
  st <- ditimpute:::.threads_state
  old <- st$active_wait
  st$active_wait <- FALSE
  withr::defer(st$active_wait <- old, envir = env)
}

test_that("the budget follows the option, then DITIMPUTE_THREADS, then the cores", {
  local_passive()
  withr::local_options(ditimpute.threads = NULL)
  withr::local_envvar(DITIMPUTE_THREADS = NA)
  expect_equal(thread_budget(), parallel::detectCores())
  withr::local_envvar(DITIMPUTE_THREADS = "3")
  expect_equal(thread_budget(), 3L)
  withr::local_options(ditimpute.threads = 2)
  expect_equal(thread_budget(), 2L)
  expect_equal(ditimpute:::resolve_threads(NULL), 2L)
  expect_equal(ditimpute:::resolve_threads(5), 5L)  # a call's own threads win
})

test_that("bad budgets are input errors naming the option or variable", {
  withr::local_options(ditimpute.threads = 0)
  expect_input_error(thread_budget(), "ditimpute.threads")
  withr::local_options(ditimpute.threads = NULL)
  withr::local_envvar(DITIMPUTE_THREADS = "two")
  expect_input_error(thread_budget(), "DITIMPUTE_THREADS")
})

test_that("a forked worker gets one thread", {
  skip_on_os("windows")
  local_passive()
  withr::local_options(ditimpute.threads = NULL)
  withr::local_envvar(DITIMPUTE_THREADS = NA)
  inside <- parallel::mclapply(1:2, function(i) thread_budget(), mc.cores = 2)
  expect_equal(unlist(inside), c(1L, 1L))
  expect_equal(thread_budget(), parallel::detectCores())  # the parent keeps its budget
})

test_that("actively waiting OpenMP threads and other running processes give one thread", {
  st <- ditimpute:::.threads_state
  old <- st$active_wait
  withr::defer(st$active_wait <- old)
  withr::local_options(ditimpute.threads = NULL)
  withr::local_envvar(DITIMPUTE_THREADS = NA)
  st$active_wait <- TRUE
  # /proc/loadavg's running count changes from one read to the next, so the
  # test fixes what others_running() says instead of reading it twice.
  ns <- asNamespace("ditimpute")
  real <- get("others_running", envir = ns)
  set_others <- function(f) {
    unlockBinding("others_running", ns)
    assign("others_running", f, envir = ns)
    lockBinding("others_running", ns)
  }
  withr::defer(set_others(real))
  set_others(function() TRUE)
  expect_equal(thread_budget(), 1L)
  set_others(function() FALSE)
  expect_equal(thread_budget(), parallel::detectCores())
  st$active_wait <- FALSE  # passive waiting: other processes do not matter
  set_others(function() TRUE)
  expect_equal(thread_budget(), parallel::detectCores())
  st$active_wait <- TRUE
  withr::local_options(ditimpute.threads = 2)  # an explicit budget wins
  expect_equal(thread_budget(), 2L)
})

test_that("the process's own running threads do not count as other processes", {
  others <- ditimpute:::others_running
  expect_false(others(running = 2L, own = 2L))  # e.g. our BLAS threads still spinning after gp_fit()
  expect_true(others(running = 3L, own = 2L))
  expect_false(others(running = 1L, own = 1L))
  expect_true(others(running = 2L, own = 1L))
  expect_false(others(running = NA_integer_, own = 1L))  # /proc unreadable: no evidence of others
  skip_if_not(dir.exists("/proc/self/task"))
  # The thread reading its own state is running, and it is one of this process's threads.
  own <- ditimpute:::own_running_threads()
  expect_gte(own, 1L)
  expect_lte(own, length(list.files("/proc/self/task")))
})

test_that("loading the package asks OpenMP threads to wait passively in later processes", {
  # Set by .onLoad unless the user had set it (or opted out); either way non-empty here.
  expect_true(nzchar(Sys.getenv("OMP_WAIT_POLICY")))
})
