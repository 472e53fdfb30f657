// Whole series of any length (impute_series() in R): the Gaussian process in
// overlapping windows, stitched by sequential conditional sampling, and the
// profile likelihood used to choose a trend-and-season kernel.
//
// A series is T frames of d variables (x: T x d, NaN = missing) with prior
// mean `mean` (T x d: the linear trend) and covariance Gamma (x) Lambda over
// any window of up to H consecutive frames (Gamma stationary, H x H). The
// frames are cut into blocks of `block` frames. Block k is imputed in the
// window [start - past, end + future): conditioning on every entry of the
// `past` frames before it (observed, or already imputed in the same sample
// path), on the observed entries of the block and on the observed entries of
// the `future` frames after it (their missing entries are integrated out).
// Each path's draw of the block's missing entries is then
//   mu_M + K (x_O - mu_O) + chol(Sigma_M|O) eps,   K = Sigma_MO Sigma_OO^{-1},
// so one factorisation per block serves all Z paths, and a gap longer than a
// window is one joint draw along each path (a Markov approximation of order
// `past` frames to the joint conditional law). One extra path without noise
// gives the conditional mean of the same recursion: the point estimate.
#pragma once

#include "ditimpute/common.hpp"

#include <cstdint>

namespace ditimpute {

struct SeriesOptions {
  int past = 24, block = 12, future = 24;  // frames; past + block + future <= H of Gamma
  int n_samples = 100;                     // sample paths Z (>= 1)
  std::uint64_t seed = 0;                  // block k draws from Rng(case_seed(seed, k))
  int threads = 0;                         // blocks are factorised in parallel chunks
};

struct SeriesImputation {
  RowMatrix point;   // T x d: x with its missing entries at the conditional mean path
  Matrix samples;    // Z x m: column k is missing entry k in frame-major order (t * d + j)
  int blocks = 0;    // blocks with missing entries (one factorisation each)
};

// Validates shapes (input_error "x", "mean", "Gamma", "Lambda", "past",
// "block", "future", "n_samples"); numeric_error when a covariance cannot be
// factorised even with a small jitter.
SeriesImputation impute_series_gp(const RowMatrix& x, const RowMatrix& mean, const Matrix& Gamma,
                                  const Matrix& Lambda, const SeriesOptions& options);

// Sum over windows and variables of the univariate marginal log-likelihood of
// the observed entries, each variable with its own mean and variance profiled
// out in closed form (GLS mean, ML variance): vec of variable j in window i ~
// N(mu_j 1, s2_j Gamma). The kernel search of impute_series() maximises it
// over Gamma (Lambda diagonal); the final Lambda is a full ECME fit.
// x: n windows of H x d (NaN = missing). Variables with fewer than 2 observed
// values in all windows are an input_error "x".
double series_profile_loglik(const Batch& x, const Matrix& Gamma, int threads);

}  // namespace ditimpute
