test_that("pattern generators return the documented frames", {
  p <- pattern_random(96, 16, seed = 1)
  expect_s3_class(p, "ditimpute_pattern")
  expect_length(p$frames, 16)
  expect_true(all(p$frames >= 1 & p$frames <= 96) && !anyDuplicated(p$frames))
  b <- pattern_blocks(96, 4, 4, seed = 2)$frames
  starts <- b[c(TRUE, diff(b) != 1)]
  expect_length(starts, 4)
  expect_true(all(diff(starts) >= 5))       # length 4 plus at least one observed frame
  expect_equal(pattern_tail(96, 16)$frames, 81:96)
  expect_equal(pattern_frames(10, c(5, 2))$frames, c(2L, 5L))
  m <- pattern_mcar(20, 3, 0.3, seed = 1)$entries
  expect_identical(dim(m), c(20L, 3L))
  expect_true(any(m) && !all(m))
  expect_identical(pattern_random(50, 5, seed = 9), pattern_random(50, 5, seed = 9))
  set.seed(4); a <- pattern_blocks(50, 2, 3)
  set.seed(4); expect_identical(pattern_blocks(50, 2, 3), a)
})

test_that("an MCAR mask is the iid one given at least one missing and one observed entry, as documented", {
  # rate 0.05 on 10 x 2: P(none missing) = 0.95^20 = 0.358, so the realised
  # share is 0.05 / (1 - 0.95^20) = 0.078 (the help says so); 4,000 masks
  # give it to a standard error of about 0.0008, the tolerance 4 of them.
  share <- mean(draw_masks(mask_strategy("mcar0.05"), 4000, 10, d = 2, seed = 1))
  expect_equal(share, 0.05 / (1 - 0.95^20), tolerance = 0.003 / 0.078)
  expect_gt(share, 0.07)  # not the unconditional 0.05
})

test_that("paper patterns P1-P4 have the documented frames and kappa", {
  pp <- paper_patterns()
  expect_named(pp, c("P1", "P2", "P3", "P4"))
  expect_equal(pp$P1$frames, 81:96)
  expect_equal(pp$P2$frames, c(21:28, 61:68))
  expect_equal(pp$P3$frames, as.vector(outer(0:3, c(11, 35, 59, 83), "+")))
  expect_equal(pp$P4$frames, as.vector(outer(0:1, seq(7, 91, by = 12), "+")))
  spec <- gp_spec(96, d = 8, kernel = gp_kernel("laplace", lengthscale = 128))
  # The issue's reference values, to 0.01.
  expect_equal(round(unname(kappa_cond(spec, pp)), 2), c(394.91, 32.15, 9.47, 3.00))
  expect_equal(round(kappa_cond(spec, pattern_tail(96, 16)), 2), 394.91)
  expect_output(print(pp), "P1: <ditimpute_pattern> tail16: 16 of 96 frames missing: 81:96")
})

test_that("plot of patterns draws without error and rejects mixed lengths", {
  f <- tempfile(fileext = ".png")
  grDevices::png(f)
  expect_invisible(plot(paper_patterns()))
  grDevices::dev.off()
  expect_gt(file.size(f), 1000)
  bad <- structure(list(pattern_tail(10, 2), pattern_tail(12, 2)), class = "ditimpute_pattern_set")
  expect_input_error(plot(bad), "x")
})

test_that("bad patterns give classed errors naming the argument", {
  expect_input_error(pattern_random(10, 0), "k")
  expect_input_error(pattern_random(10, 10), "k")           # no observed frame left
  expect_input_error(pattern_blocks(20, 8, 2), "L")         # 8 blocks of 2 need 23 frames
  expect_input_error(pattern_blocks(20, 0, 2), "b")
  expect_input_error(pattern_tail(10, 10), "L")
  expect_input_error(pattern_frames(10, c(0, 3)), "frames")
  expect_input_error(pattern_frames(10, c(3, 11)), "frames")
  expect_input_error(pattern_frames(10, c(3, 3)), "frames")
  expect_input_error(pattern_mcar(10, 2, 1), "rate")
  expect_input_error(paper_patterns(5), "which")
})
