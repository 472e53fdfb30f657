# The Krylov condition numbers (residual 1e-6, kronecker_solve.cpp) against
# the dense path's eigenvalues on GPs fitted to real series the Krylov change
# was not developed on: ETTh1 and ETTh2 (../shared/data/ett), Matern 3/2 fitted
# by gp_fit() to 40 standardised windows of 96 hours, one later window with 30%
# and 60% of its entries hidden at random (precision path: Krylov for every
# matrix with at least 200 rows, kappa_obs at both rates, kappa_cond at 60%).
#   Rscript bench/kappa_real.R
suppressPackageStartupMessages(library(ditimpute))
for (f in c("ETTh2", "ETTh1")) {
  e <- read_ett(file.path("..", "shared", "data", "ett", paste0(f, ".csv.gz")))
  X <- e$values
  X <- scale(X)
  H <- 96; d <- ncol(X)
  w <- aperm(array(X[1:(H * 40), ], c(H, 40, d)), c(2, 1, 3))
  fit <- gp_fit(w, kernel = "matern32")
  set.seed(1)
  for (rate in c(0.3, 0.6)) {
    x <- X[5001:(5000 + H), ]
    x[matrix(runif(H * d) < rate, H, d)] <- NA
    p <- gp_conditional(fit, x, method = "precision"); dn <- gp_conditional(fit, x, method = "dense")
    cat(sprintf("%s rate %.1f m = %d: kappa_cond %.10g vs dense %.10g (rel %.1e); kappa_obs %.10g vs %.10g (rel %.1e)\n",
                f, rate, sum(is.na(x)), p$kappa_cond, dn$kappa_cond, abs(p$kappa_cond / dn$kappa_cond - 1),
                p$kappa_obs, dn$kappa_obs, abs(p$kappa_obs / dn$kappa_obs - 1)))
  }
}
