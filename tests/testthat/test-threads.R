# The thread budget (rpkg/R/threads.R, ?threads).

test_that("the budget follows the option, then DITIMPUTE_THREADS, then the cores", {
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
  withr::local_options(ditimpute.threads = NULL)
  withr::local_envvar(DITIMPUTE_THREADS = NA)
  inside <- parallel::mclapply(1:2, function(i) thread_budget(), mc.cores = 2)
  expect_equal(unlist(inside), c(1L, 1L))
  expect_equal(thread_budget(), parallel::detectCores())  # the parent keeps its budget
})

test_that("loading the package asks OpenMP threads to wait passively in later processes", {
  # Set by .onLoad unless the user had set it (or opted out); either way non-empty here.
  expect_true(nzchar(Sys.getenv("OMP_WAIT_POLICY")))
})
