# The real files (not shipped): found through DITIMPUTE_DATA_DIR or a folder
# `shared/data` beside any parent of the test directory; skipped when absent.

find_data_dir <- function() {
  env <- Sys.getenv("DITIMPUTE_DATA_DIR")
  if (nzchar(env) && dir.exists(env)) return(env)
  d <- normalizePath(getwd())
  repeat {
    cand <- file.path(d, "shared", "data")
    if (dir.exists(file.path(cand, "beijing_air")) && dir.exists(file.path(cand, "ett"))) return(cand)
    up <- dirname(d)
    if (up == d) return(NULL)
    d <- up
  }
}

test_that("the real BeijingAir and ETT files load with the paper's dimensions", {
  dir <- find_data_dir()
  skip_if(is.null(dir), "real data not found (set DITIMPUTE_DATA_DIR)")
  air <- read_beijing_air(file.path(dir, "beijing_air"))
  expect_identical(dim(air$values), c(35064L, 132L))
  expect_equal(air$freq, 3600)
  expect_identical(format(range(air$time), "%Y-%m-%d %H:%M"), c("2013-03-01 00:00", "2017-02-28 23:00"))
  expect_true(mean(is.na(air$values)) > 0 && mean(is.na(air$values)) < 0.05)
  ett <- read_ett(file.path(dir, "ett", "ETTh1.csv.gz"))
  expect_identical(dim(ett$values), c(17420L, 7L))
  expect_equal(ett$freq, 3600)

  d <- load_real_data("beijing_air", dir = dir)
  # 80% of 35,064 hours -> 935 windows of 30, the rest -> 233: the paper's 1,168 in all.
  expect_identical(dim(d$train), c(935L, 30L, 132L))
  expect_identical(dim(d$test), c(233L, 30L, 132L))
  expect_true(max(attr(d$train, "start")) + 29 * 3600 < min(attr(d$test, "start")))
  held <- hide_mcar(d$test, rate = 0.1, seed = 1)
  # On hourly air data interpolation must beat the mean by far (standardised units).
  mae <- function(imp) mean(abs(imp[held$hidden] - held$truth))
  expect_lt(mae(impute_linear(held$x)), 0.5 * mae(impute_mean(held$x)))
  e <- load_real_data("ett_h1", dir = dir)
  expect_identical(dim(e$train), c(290L, 48L, 7L))
  expect_identical(dim(e$test), c(72L, 48L, 7L))
})
