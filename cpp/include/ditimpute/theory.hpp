// The paper's theory made computable (sections 4-5): how far a sampler's law
// of the missing values is from the exact Gaussian conditional (the left side
// of Theorem 1, measured), and the factors of Theorem 1's rate and Theorem 2's
// architecture sizes for a pattern. Eigen only; the distribution-shift
// coefficient, which needs the network, is in dit_diagnostics.hpp.
//
// Notation: a case's missing entries (vec order, m of them) have the exact law
// N(mu, Sigma), Sigma = Sigma_cond; a sampler gave Z draws with sample mean
// mhat and sample covariance S (divisor Z - 1).
#pragma once

#include "ditimpute/common.hpp"
#include "ditimpute/gaussian.hpp"

#include <cstdint>
#include <vector>

namespace ditimpute {

// Distances between the samples of one case and its exact law.
struct LawDistance {
  // W2(N(mhat, S), N(mu, Sigma)) in closed form:
  // W2^2 = ||mhat - mu||^2 + tr S + tr Sigma - 2 tr (Sigma^1/2 S Sigma^1/2)^1/2.
  double w2 = 0.0;
  double w2_mean = 0.0;      // ||mhat - mu||, the mean's share of W2
  double mahalanobis = 0.0;  // ||Sigma^-1/2 (mhat - mu)||: the mean error in the conditional metric
  // KL(N(mhat, S) || N(mu, Sigma)) = (sum_k (r_k - 1 - log r_k) + mahalanobis^2) / 2,
  // r_k the covariance ratios; +Inf when S is singular (Z <= m). Pinsker:
  // TV <= sqrt(KL / 2), the distance of Theorem 1, for the Gaussian fit.
  double kl = 0.0;
  // Eigenvalues of Sigma^-1/2 S Sigma^-1/2, ascending: 1 everywhere for the
  // exact law; below 1 = under-dispersed in that direction, above 1 = over.
  Vector cov_ratio;
  // Energy distance (U-statistic, unbiased: mean 0 when the samples follow the
  // exact law) between the whitened samples Sigma^-1/2 (x - mu) and n_ref
  // whitened exact draws; assumes nothing about the samples' shape.
  double energy = 0.0;
};

struct DistributionError {
  int Z = 0, m = 0;
  LawDistance samples;  // the sampler's draws
  // The same statistics for Z fresh exact draws against the same exact
  // reference draws: one draw of each statistic's null distribution (what
  // the statistic reads for a perfect sampler with this Z), so
  // samples - null is centred at 0 for exact samples.
  LawDistance null;
};

// Every case of `x` (NaN = missing, its pattern from masks_to_impute) with its
// Z_i x m_i samples (`samples[i]`, missing entries in vec order, Z_i >= 2;
// cases may differ in Z_i). n_ref >= 2 exact draws per case for the
// energy distance. Case i draws from Rng(case_seed(seed, i)): reference, then
// null draws. A complete case (no missing entry, which impute() passes
// through with Z x 0 samples) has no law to compare: m = 0, Z its rows, every
// statistic of `samples` and `null` NaN and no cov_ratio; it draws nothing, so
// the other cases' values do not depend on it. input_error "x" when every
// case is complete; "samples" when a matrix has the wrong width, or (a case
// with a missing entry) fewer than 2 rows or non-finite values; "n_ref" when
// n_ref < 2.
std::vector<DistributionError> distribution_error(const GaussianProcess& gp, const Batch& x,
                                                  const std::vector<Matrix>& samples, int n_ref,
                                                  std::uint64_t seed, int threads = 0);

// The pieces, for tests and other callers.
// W2 between N(m1, S1) and N(m2, S2) (S1, S2 symmetric PSD).
double gaussian_w2(const Vector& m1, const Matrix& S1, const Vector& m2, const Matrix& S2);
// Energy distance U-statistic between the rows of A and of B (each >= 2 rows):
// 2 E||a - b|| - E||a - a'|| - E||b - b'|| with distinct pairs within a set.
double energy_distance(const Matrix& A, const Matrix& B);

// ------------------------------------------------- the bounds of a pattern --
// Factors of the paper's rates for one pattern. Constants are unknown, so
// only ratios between patterns (or processes) mean anything.
struct BoundFactors {
  int H = 0, d = 0, n_missing = 0;
  double kappa_cond = 0.0, kappa_obs = 0.0, lambda_min_cond = 0.0;
  // Theorem 1: sqrt(H d^2 kappa_cond^5 kappa_obs^2) (multiply by n^-1/2).
  double theorem1 = 0.0;
  // Theorem 2 with epsilon = n^-1/2 (as Theorem 1 chooses it):
  // L ~ kappa_cond^2 kappa_obs log^3(H d kappa_cond^2 kappa_obs sqrt(n)),
  // M = 4H, B ~ sqrt(H d^3) (r^2 + kappa_obs / sigma_t0),
  // R ~ sqrt(H d) kappa_obs / sigma_t0^2, with t0 = lambda_min(Sigma_cond) / sqrt(n)
  // (Theorem 1's early stopping) and r = 1.
  double depth = 0.0;
  int heads = 0;  // M
  double norm_B = 0.0, norm_R = 0.0;
  double t0 = 0.0;
};

// n > 0 training sequences ("n"). Frame- and entry-level masks ("pattern").
BoundFactors bound_factors(const GaussianProcess& gp, const Mask& mask, double n);

}  // namespace ditimpute
