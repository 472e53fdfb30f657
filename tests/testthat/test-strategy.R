test_that("presets mix the paper's generators in equal parts", {
  s4 <- strategy_preset("S4")
  expect_s3_class(s4, "ditimpute_strategy")
  expect_equal(vapply(s4$generators, `[[`, "", "label"), c("16x1", "8x2", "4x4", "1x16"))
  expect_equal(s4$weights, rep(0.25, 4))
  expect_equal(length(strategy_preset("S1")$generators), 1)
  expect_output(print(strategy_preset("S2")), "S2: 16x1 50.0% \\+ 8x2 50.0%")
})

test_that("draw_masks follows the mixture weights", {
  s <- mask_strategy(c("tail16" = 0.7, "mcar0.2" = 0.3))
  n <- 4000
  m <- draw_masks(s, n, H = 32, d = 2, seed = 1)
  expect_equal(dim(m), c(n, 32L, 2L))
  is_tail <- apply(m, 1, function(k) all(k[17:32, ]) && !any(k[1:16, ]))
  # Binomial(4000, 0.7): sd 0.0072; 5 sd.
  expect_lt(abs(mean(is_tail) - 0.7), 5 * sqrt(0.7 * 0.3 / n))
  # every 16x1 draw removes exactly 16 whole frames
  m1 <- draw_masks(strategy_preset("S1"), 50, H = 40, d = 3, seed = 2)
  expect_true(all(apply(m1, 1, function(k) sum(k[, 1]) == 16 && all(k[, 1] == k[, 3]))))
  expect_identical(draw_masks(s, 5, 32, seed = 3), draw_masks(s, 5, 32, seed = 3))
})

test_that("mask_strategy accepts fixed patterns and rejects bad input", {
  s <- mask_strategy(list(pattern_frames(20, 3:5), "2x3"), weights = c(1, 0))
  m <- draw_masks(s, 3, H = 20, seed = 1)
  expect_true(all(m[, 3:5, 1]) && !any(m[, -(3:5), 1]))
  expect_input_error(mask_strategy(c("16x1", "8x2"), weights = c(1, -1)), "weights")
  expect_input_error(mask_strategy(c("16x1", "8x2"), weights = 1), "weights")
  expect_input_error(mask_strategy("sixteen"), "generators")
  expect_input_error(mask_strategy("mcar1.5"), "generators")
  expect_input_error(mask_strategy(character()), "generators")
  expect_input_error(strategy_preset("S9"), "name")
  expect_input_error(draw_masks(strategy_preset("S2"), 2, H = 16), "H")   # 8x2 needs 23 frames
  expect_input_error(draw_masks("S1", 2, H = 96), "strategy")
})

test_that("a bad generator's error names mask_strategy(), not an internal helper", {
  # a review: errors were attributed to lapply()'s FUN() and a local zero()
  for (g in c("16y1", "0x1", "mcar2")) {
    cnd <- expect_input_error(mask_strategy(g), "generators")
    expect_identical(as.character(cnd$call[[1]]), "mask_strategy")
  }
})

test_that("\"vbxL\" hides blocks of single variables while the others stay observed", {
  s <- mask_strategy("v2x5")
  expect_identical(s$generators[[1]]$kind, "variable_blocks")
  expect_output(print(s), "v2x5 100.0%")
  m <- draw_masks(s, 300, H = 24, d = 3, seed = 4)
  per_frame <- apply(m, c(1, 2), sum)  # missing variables per frame
  # two blocks of 5 frames, each in one variable: 10 entries, never a whole frame
  # (both blocks in different variables may overlap in time: up to 2 of 3)
  expect_true(all(apply(m, 1, sum) == 10))
  expect_true(all(per_frame <= 2))
  # each variable's missing frames come in runs of 5 (blocks at least 1 frame apart)
  runs_ok <- apply(m, c(1, 3), function(v) {
    r <- rle(v)
    all(r$lengths[r$values] == 5)
  })
  expect_true(all(runs_ok))
  # the blocks' variables are uniform: each variable holds a block in
  # 1 - (2/3)^2 = 5/9 of the masks (binomial sd 0.029 at n = 300; 5 sd)
  hit <- apply(m, c(1, 3), any)
  expect_true(all(abs(colMeans(hit) - 5 / 9) < 5 * sqrt(5 / 9 * 4 / 9 / 300)))
  # they need the frames frame blocks need, and name the generator's fault
  expect_input_error(draw_masks(mask_strategy("v8x2"), 2, H = 22, d = 3), "H")
  expect_input_error(mask_strategy("v0x2"), "generators")
})
