# The theory bench's setting, shared by bench/theory.R, bench/dit_learning.R
# and bench/dit_tokens.R (source it from the repository root after
# library(ditimpute)): H = 48 frames, d = 8 variables, a Laplace kernel of
# lengthscale 64, the paper's patterns P1-P4 and mixed strategy S4 with block
# lengths halved (the paper's H is 96).
H <- 48L
d <- 8L
spec <- gp_spec(H, d = d, kernel = gp_kernel("laplace", lengthscale = 64))
# A paper pattern's frames at H = 48: each block starts at half its frame and
# is half as long.
rescale <- function(frames) {
  starts <- frames[c(TRUE, diff(frames) != 1)]
  len <- length(frames) / length(starts)
  unlist(lapply(starts, function(s) (s - 1) %/% 2 + seq_len(len %/% 2)))
}
patterns <- lapply(paper_patterns(), function(p) pattern_frames(H, rescale(p$frames)))
s4 <- mask_strategy(c("8x1", "8x1", "4x2", "1x8"), weights = rep(0.25, 4))

# W2 to the exact conditional law against exact draws of the same size (the
# null), the Mahalanobis error and the raw 95% region coverage of 1,000
# exact draws, per pattern P1-P4, of any imputer (a DiT, a GP) on the test
# sequences `truth` with each pattern's frames hidden: bench/theory.R's error
# rows, as bench/dit_learning.R scores a model.
score_on_patterns <- function(fit, truth, threads, n_samples = 100) {
  n_test <- dim(truth)[1]
  rows <- lapply(seq_along(patterns), function(k) {
    x <- truth
    miss <- array(rep(matrix(seq_len(H) %in% patterns[[k]]$frames, H, d), each = n_test), dim(x))
    x[miss] <- NA
    imp <- impute(fit, x, n_samples = n_samples, seed = k, threads = threads)
    de <- summary(distribution_error(imp, spec, seed = 50 + k, threads = threads))$table
    cov <- mean(coverage(imp, spec = spec, n_draws = 1000, seed = 60 + k)$coverage)
    data.frame(pattern = names(patterns)[k], w2 = de$w2, w2_null = de$w2_null, w2_ratio = de$w2 / de$w2_null,
               mahalanobis = de$mahalanobis, coverage = cov)
  })
  do.call(rbind, rows)
}
