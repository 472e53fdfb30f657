# Plots: intervals over one-frame gaps are drawn (a ribbon there has no
# width), and the imputation and series plots share colours and a legend.

layer_data_of <- function(p, geom) {
  b <- ggplot2::ggplot_build(p)
  k <- which(vapply(p$layers, function(l) inherits(l$geom, geom), TRUE))
  expect_length(k, 1)
  b$data[[k]]
}

legend_labels <- function(p, aesthetic) {
  b <- ggplot2::ggplot_build(p)
  b$plot$scales$get_scales(aesthetic)$get_labels()
}

test_that("an interval over a one-frame gap is drawn as a line range", {
  spec <- gp_spec(30, d = 2, kernel = gp_kernel("matern32", lengthscale = 6))
  truth <- gp_simulate(spec, 1, seed = 1)[1, , ]
  x <- truth
  x[10:14, ] <- NA
  x[20, 1] <- NA
  x[25, 2] <- NA
  imp <- impute(spec, x, n_samples = 50, truth = truth, seed = 2, threads = 1)
  lr <- layer_data_of(plot(imp), "GeomLinerange")
  expect_identical(sort(lr$x), c(20, 25))          # only the one-frame gaps, not frames 10-14
  expect_true(all(lr$ymax > lr$ymin))
  expect_equal(sort(lr$ymin), sort(c(imp$lower[20, 1], imp$lower[25, 2])))
  # one-frame gaps draw no line or band of their own: no ggplot warning about
  # groups of one observation (a user review saw one per panel)
  expect_no_warning(ggplot2::ggplot_build(plot(imp)))
  expect_equal(sort(unique(layer_data_of(plot(imp), "GeomLine")$x)), 10:14)
  # only one-frame gaps: still no warning, and the band keeps its legend
  x1 <- truth
  x1[20, 1] <- NA
  x1[25, 2] <- NA
  one <- plot(impute(spec, x1, n_samples = 50, seed = 2, threads = 1))
  expect_no_warning(ggplot2::ggplot_build(one))
  expect_match(legend_labels(one, "fill"), "interval")

  y <- as.numeric(datasets::Nile)
  tr <- y
  y[c(20:30, 50, 70)] <- NA
  si <- impute_series(y, n_samples = 30, seed = 1, threads = 1, truth = tr)
  slr <- layer_data_of(plot(si), "GeomLinerange")
  expect_identical(nrow(slr), 2L)
  expect_true(all(slr$ymax > slr$ymin))
})

test_that("imputation and series plots share one colour scheme and a legend", {
  spec <- gp_spec(20, d = 1, kernel = gp_kernel("matern32", lengthscale = 5))
  truth <- gp_simulate(spec, 1, seed = 3)[1, , , drop = FALSE][1, , ]
  x <- matrix(truth, ncol = 1)
  x[8:10, 1] <- NA
  p1 <- plot(impute(spec, x, n_samples = 50, seed = 1, threads = 1, truth = matrix(truth, ncol = 1)))
  y <- as.numeric(datasets::Nile)
  y[20:30] <- NA
  p2 <- plot(impute_series(y, n_samples = 30, seed = 1, threads = 1, truth = as.numeric(datasets::Nile)))
  for (p in list(p1, p2)) {
    expect_identical(legend_labels(p, "colour"), c("observed", "imputed", "truth"))
    expect_match(legend_labels(p, "fill"), "95% interval", fixed = TRUE)
  }
  colour_of <- function(p, kind) {
    b <- ggplot2::ggplot_build(p)
    sc <- b$plot$scales$get_scales("colour")
    unname(sc$map(kind))
  }
  for (kind in c("observed", "imputed", "truth")) expect_identical(colour_of(p1, kind), colour_of(p2, kind))
  expect_false(colour_of(p1, "observed") == colour_of(p1, "imputed"))
})

test_that("plot() draws, also inside a loop or a function, and returns the ggplot invisibly", {
  spec <- gp_spec(30, d = 2, kernel = gp_kernel("matern32", lengthscale = 6))
  x <- gp_simulate(spec, 1, seed = 1)[1, , ]
  x[10:14, ] <- NA
  imp <- impute(spec, x, n_samples = 50, seed = 2, threads = 1)
  size_of <- function(draw) {
    f <- tempfile(fileext = ".png")
    grDevices::png(f)
    draw()
    grDevices::dev.off()
    file.size(f)
  }
  blank <- size_of(function() graphics::plot.new())  # an empty page
  in_loop <- size_of(function() for (v in 1:2) plot(imp, variables = v))
  expect_gt(in_loop, 2 * blank)
  expect_invisible(p <- plot(imp))
  expect_s3_class(p, "ggplot")
  # A deterministic imputer: no band, no warning.
  lin <- impute_baseline(array(x, c(1, 30, 2)), "linear", means = 0)
  expect_no_warning(size_of(function() plot(lin)))
})

test_that("a series plot takes its range as frames or time stamps, and says when it leaves variables out", {
  # A user review: `from = as.POSIXct(...)` failed with "must be a single whole number".
  n <- 72
  d <- data.frame(time = as.POSIXct("2024-01-01", tz = "UTC") + 3600 * (seq_len(n) - 1),
                  a = sin(seq_len(n) / 4) + seq_len(n) / 50)
  d$a[c(20:25, 50)] <- NA
  imp <- impute_series(d, n_samples = 20, seed = 1, threads = 1)
  by_time <- ggplot2::ggplot_build(plot(imp, from = as.POSIXct("2024-01-01 10:30", tz = "UTC"),
                                        to = as.POSIXct("2024-01-02 12:00", tz = "UTC")))
  by_row <- ggplot2::ggplot_build(plot(imp, from = 12, to = 37))
  expect_equal(by_time$data[[1]]$x, by_row$data[[1]]$x)  # 10:30 -> frame 12 (11:00); 12:00 next day -> frame 37
  expect_match(conditionMessage(expect_input_error(plot(imp, from = 1.5), "from")), "a frame (a row number, 1 to 72)",
               fixed = TRUE)
  expect_input_error(plot(imp, from = as.POSIXct("2025-01-01", tz = "UTC")), "from")
  expect_input_error(plot(imp, from = 40, to = 30), "to")
  # ten variables: the first 8 drawn, and the caption says so
  m <- sapply(1:10, function(j) sin(seq_len(60) / (3 + j)))
  colnames(m) <- paste0("v", 1:10)
  m[10:14, ] <- NA
  many <- impute_series(m, n_samples = 20, seed = 1, threads = 1, separate = "all")
  p <- plot(many)
  expect_identical(p$labels$caption, "the first 8 of 10 variables; choose others with `variables =`")
  expect_null(plot(many, variables = 9:10)$labels$caption)
  # the title names ten groups' forms: wrapped to lines of at most 90
  # characters, not run off the image (a user review)
  title <- strsplit(p$labels$title, "\n", fixed = TRUE)[[1]]
  expect_gt(length(title), 1)
  expect_true(all(nchar(title) <= 90))
  expect_identical(paste(title, collapse = " "), sprintf("Imputed by %s", many$method))
})

test_that("a model, a pattern and a strategy plot with base graphics (a user review: plot() failed on each)", {
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  spec <- gp_spec(24, d = 2, kernel = gp_kernel("matern32", lengthscale = 4), Lambda = matrix(c(1, 0.6, 0.6, 1), 2),
                  nugget = 0.1)
  expect_identical(withVisible(plot(spec))$visible, FALSE)
  fit <- gp_fit(gp_simulate(spec, 10, seed = 1), kernel = "matern32")
  expect_identical(plot(fit), fit)
  p <- pattern_blocks(48, b = 2, L = 4, seed = 1)
  expect_identical(plot(p), p)
  m <- pattern_mcar(12, d = 3, rate = 0.3, seed = 1)
  expect_identical(plot(m), m)
  expect_input_error(plot(m, spec = spec), "spec")
  s <- strategy_preset("S4")
  expect_identical(plot(s, seed = 1), s)
  expect_input_error(plot(s, H = 8), "H")  # 16 missing frames need more than 8
})

test_that("plot() of a strategy draws masks the strategy would draw, named by their generator", {
  d <- ditimpute:::strategy_draws(mask_strategy(c("tail6", "3x1"), weights = c(1, 3)), H = 20, n = 200, seed = 4)
  expect_identical(dim(d$rows), c(200L, 20L))
  tail6 <- d$labels == "tail6"
  expect_setequal(unique(d$labels), c("tail6", "3x1"))
  expect_equal(mean(tail6), 0.25, tolerance = 0.25)  # weight 1 of 4: 50 of 200 expected, sd 6
  expect_equal(rowSums(d$rows), ifelse(tail6, 6, 3))
  expect_true(all(d$rows[tail6, 15:20] == 1))
  # the same seed, the same masks
  expect_identical(ditimpute:::strategy_draws(strategy_preset("S4"), 48, 5, 9),
                   ditimpute:::strategy_draws(strategy_preset("S4"), 48, 5, 9))
})

test_that("a plot of tens of thousands of frames says how to draw a window (a user review: 26-31 s, no hint)", {
  set.seed(5)
  y <- cumsum(rnorm(20001, sd = 0.1)) + rnorm(20001, sd = 0.3)
  y[c(100:120, 15000:15010)] <- NA
  imp <- impute_series(y, n_samples = 20, seed = 1, threads = 1)
  expect_message(ggplot2::autoplot(imp), "plot\\(x, from = , to = \\) draws a window", class = "ditimpute_message_long_plot")
  expect_no_message(ggplot2::autoplot(imp, from = 14000, to = 16000), class = "ditimpute_message_long_plot")
})

test_that("a plot window given as Dates starts at midnight in the series' own time zone", {
  tt <- seq(as.POSIXct("2021-11-05", tz = "America/New_York"), by = "hour", length.out = 96)
  # as.POSIXct() of a Date is UTC midnight: the window began at 20:00 the day before
  k <- ditimpute:::plot_frame(as.Date("2021-11-07"), tt, "from")
  expect_identical(format(tt[k], "%Y-%m-%d %H:%M"), "2021-11-07 00:00")
  k <- ditimpute:::plot_frame(as.Date("2021-11-08"), tt, "to")
  expect_identical(format(tt[k], "%Y-%m-%d %H:%M"), "2021-11-08 00:00")
  # a UTC series and a POSIXct bound are as before
  tu <- seq(as.POSIXct("2021-11-05", tz = "UTC"), by = "hour", length.out = 96)
  expect_identical(ditimpute:::plot_frame(as.Date("2021-11-06"), tu, "from"), 25L)
  expect_identical(ditimpute:::plot_frame(tu[30], tu, "to"), 30L)
})
