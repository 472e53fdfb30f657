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
