# ggplot2's autoplot() on imputations: registered for ggplot2's generic, and
# the same plot (layers, data, colours, legend) as plot().

skip_if_not_installed("ggplot2")

test_that("autoplot() of a series imputation and of an imputation is their plot()", {
  y <- as.numeric(datasets::Nile)
  tr <- y
  y[c(20:30, 60)] <- NA
  si <- impute_series(y, n_samples = 30, seed = 1, threads = 1, truth = tr)
  spec <- gp_spec(20, d = 2, kernel = gp_kernel("matern32", lengthscale = 5))
  x <- gp_simulate(spec, 1, seed = 3)[1, , ]
  x[8:10, ] <- NA
  ii <- impute(spec, x, n_samples = 50, seed = 1, threads = 1)
  for (case in list(list(si, list(from = 10, to = 70)), list(ii, list(variables = 2)))) {
    obj <- case[[1]]
    a <- do.call(ggplot2::autoplot, c(list(obj), case[[2]]))
    p <- do.call(plot, c(list(obj), case[[2]]))
    expect_s3_class(a, "ggplot")
    ba <- ggplot2::ggplot_build(a)
    bp <- ggplot2::ggplot_build(p)
    expect_identical(length(ba$data), length(bp$data))
    for (k in seq_along(ba$data)) expect_equal(ba$data[[k]], bp$data[[k]])
    expect_identical(a$labels$title, p$labels$title)
  }
  # the series' from/to reached the plot: frames 10-70 only
  a <- ggplot2::autoplot(si, from = 10, to = 70)
  expect_identical(nrow(a$data), 61L)
})

test_that("autoplot() rejects a misspelled argument", {
  y <- as.numeric(datasets::Nile)
  y[20:30] <- NA
  si <- impute_series(y, n_samples = 20, seed = 1, threads = 1)
  expect_input_error(ggplot2::autoplot(si, form = 3), "form")
})
