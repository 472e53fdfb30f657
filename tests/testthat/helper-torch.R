# The diffusion transformer needs LibTorch. An installation without it
# (configure found none, or DITIMPUTE_LIBTORCH=none) skips the DiT tests and
# says why; everything Gaussian-process is tested in both builds.
skip_if_no_torch <- function() {
  if (!ditimpute::torch_available()) {
    testthat::skip("ditimpute was installed without LibTorch: the diffusion transformer is left out")
  }
}
