// Distribution error of sampled imputations against the exact conditional law,
// and the factors of Theorems 1-2 for a pattern (theory.hpp).
#include "ditimpute/theory.hpp"

#include "ditimpute/impute.hpp"

#include <Eigen/Eigenvalues>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace ditimpute {

namespace {

// Symmetric square root (p = 0.5) or inverse square root (p = -0.5) from an
// eigen-decomposition, eigenvalues clamped at 0 for the square root.
Matrix spectral_power(const Eigen::SelfAdjointEigenSolver<Matrix>& es, double p) {
  Vector l = es.eigenvalues().cwiseMax(0.0);
  for (Eigen::Index k = 0; k < l.size(); ++k) l(k) = l(k) > 0 ? std::pow(l(k), p) : 0.0;
  return es.eigenvectors() * l.asDiagonal() * es.eigenvectors().transpose();
}

// tr (A^1/2 S A^1/2)^1/2 with A^1/2 given.
double trace_sqrt_product(const Matrix& A_half, const Matrix& S) {
  const Matrix P = A_half * S * A_half;
  Eigen::SelfAdjointEigenSolver<Matrix> es(0.5 * (P + P.transpose()), Eigen::EigenvaluesOnly);
  return es.eigenvalues().cwiseMax(0.0).cwiseSqrt().sum();
}

// Pairwise Euclidean distances between the rows of A and B, via the Gram matrix.
Matrix row_distances(const Matrix& A, const Matrix& B) {
  const Vector a2 = A.rowwise().squaredNorm(), b2 = B.rowwise().squaredNorm();
  Matrix D = -2.0 * A * B.transpose();
  D.colwise() += a2;
  D.rowwise() += b2.transpose();
  return D.cwiseMax(0.0).cwiseSqrt();
}

// The exact law of one pattern, factorised once for all its cases.
struct ExactLaw {
  Matrix Sigma, Sigma_half, Sigma_inv_half;
  double trace = 0.0;
  explicit ExactLaw(const Conditional& cond) : Sigma(cond.covariance()) {
    Eigen::SelfAdjointEigenSolver<Matrix> es(Sigma);
    if (es.info() != Eigen::Success || !(es.eigenvalues()(0) > 0))
      throw numeric_error("the conditional covariance is not positive definite.");
    Sigma_half = spectral_power(es, 0.5);
    Sigma_inv_half = spectral_power(es, -0.5);
    trace = Sigma.trace();
  }
};

// Distances of Z draws (rows of X) from N(mu, Sigma); `ref` holds whitened
// exact draws (standard normal rows) for the energy distance.
LawDistance law_distance(const Matrix& X, const Vector& mu, const ExactLaw& law, const Matrix& ref) {
  LawDistance out;
  const double Z = static_cast<double>(X.rows());
  const Vector mhat = X.colwise().mean().transpose();
  const Matrix C = X.rowwise() - mhat.transpose();
  const Matrix S = C.transpose() * C / (Z - 1.0);
  const Vector dm = mhat - mu;
  out.w2_mean = dm.norm();
  const double w2sq = dm.squaredNorm() + S.trace() + law.trace - 2.0 * trace_sqrt_product(law.Sigma_half, S);
  out.w2 = std::sqrt(std::max(0.0, w2sq));
  out.mahalanobis = (law.Sigma_inv_half * dm).norm();
  const Matrix R = law.Sigma_inv_half * S * law.Sigma_inv_half;
  Eigen::SelfAdjointEigenSolver<Matrix> es(0.5 * (R + R.transpose()), Eigen::EigenvaluesOnly);
  out.cov_ratio = es.eigenvalues().cwiseMax(0.0);
  double kl = out.mahalanobis * out.mahalanobis;
  for (Eigen::Index k = 0; k < out.cov_ratio.size(); ++k) {
    const double r = out.cov_ratio(k);
    kl += r > 0 ? r - 1.0 - std::log(r) : std::numeric_limits<double>::infinity();
  }
  out.kl = 0.5 * kl;
  // Whitened draws: rows (x - mu)^T Sigma^-1/2.
  const Matrix W = (X.rowwise() - mu.transpose()) * law.Sigma_inv_half;
  out.energy = energy_distance(W, ref);
  return out;
}

// The distances of a complete case, which has no law to compare: NaN, no
// covariance ratios.
LawDistance undefined_distance() {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  LawDistance d;
  d.w2 = d.w2_mean = d.mahalanobis = d.kl = d.energy = nan;
  return d;
}

}  // namespace

double energy_distance(const Matrix& A, const Matrix& B) {
  if (A.rows() < 2 || B.rows() < 2 || A.cols() != B.cols())
    throw input_error("samples", "the energy distance needs two sets of at least 2 draws of the same dimension.");
  const double na = static_cast<double>(A.rows()), nb = static_cast<double>(B.rows());
  const double ab = row_distances(A, B).mean();
  // Diagonals are 0, so the sums over distinct pairs are the full sums.
  const double aa = row_distances(A, A).sum() / (na * (na - 1.0));
  const double bb = row_distances(B, B).sum() / (nb * (nb - 1.0));
  return 2.0 * ab - aa - bb;
}

double gaussian_w2(const Vector& m1, const Matrix& S1, const Vector& m2, const Matrix& S2) {
  if (m1.size() != m2.size() || S1.rows() != m1.size() || S2.rows() != m2.size() || S1.cols() != S1.rows() ||
      S2.cols() != S2.rows())
    throw input_error("S1", "the means and covariances must have matching dimensions.");
  Eigen::SelfAdjointEigenSolver<Matrix> es(0.5 * (S2 + S2.transpose()));
  const Matrix half = spectral_power(es, 0.5);
  const double w2sq = (m1 - m2).squaredNorm() + S1.trace() + S2.trace() - 2.0 * trace_sqrt_product(half, S1);
  return std::sqrt(std::max(0.0, w2sq));
}

std::vector<DistributionError> distribution_error(const GaussianProcess& gp, const Batch& x,
                                                  const std::vector<Matrix>& samples, int n_ref,
                                                  std::uint64_t seed, int threads) {
  // A complete case (which impute() passes through, with Z x 0 samples) has
  // no law to compare: it keeps NaN statistics. Every case complete is an
  // input error, as for impute().
  const std::vector<Mask> masks = masks_to_impute(x, "x");
  if (samples.size() != masks.size())
    throw input_error("samples", "there must be one sample matrix per sequence of x (" +
                                     std::to_string(masks.size()) + "), not " + std::to_string(samples.size()) + ".");
  if (n_ref < 2) throw input_error("n_ref", "n_ref must be at least 2.");
  for (std::size_t i = 0; i < masks.size(); ++i) {
    const Matrix& s = samples[i];
    const std::string which = "sequence " + std::to_string(i + 1);
    if (s.cols() != masks[i].n_missing())
      throw input_error("samples", "the samples of " + which + " have " + std::to_string(s.cols()) +
                                       " columns; it has " + std::to_string(masks[i].n_missing()) + " missing values.");
    if (masks[i].n_missing() == 0) continue;  // complete: nothing drawn, nothing to check
    if (s.rows() < 2) throw input_error("samples", "the samples of " + which + " are fewer than 2 draws.");
    if (!s.allFinite()) throw input_error("samples", "the samples of " + which + " are not all finite.");
    check_memory(8.0 * (static_cast<double>(s.rows()) + n_ref) * (static_cast<double>(s.rows()) + n_ref), "samples",
                 "the pairwise distances of the energy statistic");
  }
  std::vector<DistributionError> out(masks.size());
  for (const auto& group : group_by_pattern(masks)) {
    if (masks[group.front()].n_missing() == 0) {  // complete cases: no law, NaN statistics
      for (int i : group) {
        out[i].Z = static_cast<int>(samples[i].rows());
        out[i].samples = out[i].null = undefined_distance();
      }
      continue;
    }
    check_cancelled();
    const auto cond = make_conditional(gp, masks[group.front()]);
    const ExactLaw law(*cond);
    const int m = cond->n_missing();
    parallel_for(static_cast<int>(group.size()), threads, [&](int k) {
      const int i = group[k];
      Rng rng(case_seed(seed, static_cast<std::uint64_t>(i)));
      const Matrix& X = samples[i];
      const int Z = static_cast<int>(X.rows());
      // Whitened exact draws are standard normal: the reference needs no factor.
      Matrix ref(n_ref, m);
      fill_standard_normal(rng, ref.data(), static_cast<std::size_t>(ref.size()));
      const Vector mu = cond->mean(x.seq(i));
      const Matrix null_draws = cond->sample(mu, Z, rng);
      DistributionError& e = out[i];
      e.Z = Z;
      e.m = m;
      e.samples = law_distance(X, mu, law, ref);
      e.null = law_distance(null_draws, mu, law, ref);
    });
  }
  return out;
}

BoundFactors bound_factors(const GaussianProcess& gp, const Mask& mask, double n) {
  if (!(n > 0) || !std::isfinite(n)) throw input_error("n", "n must be a positive number of training sequences.");
  const auto cond = make_conditional(gp, mask);
  BoundFactors b;
  b.H = gp.H();
  b.d = gp.d();
  b.n_missing = cond->n_missing();
  b.lambda_min_cond = cond->eigenvalues()(0);
  b.kappa_cond = cond->kappa_cond();
  b.kappa_obs = cond->kappa_obs();
  const double H = b.H, d = b.d, kc = b.kappa_cond, ko = b.kappa_obs;
  b.theorem1 = std::sqrt(H * d * d * std::pow(kc, 5) * ko * ko);
  const double lg = std::max(1.0, std::log(H * d * kc * kc * ko * std::sqrt(n)));
  b.depth = kc * kc * ko * lg * lg * lg;
  b.heads = 4 * b.H;
  b.t0 = b.lambda_min_cond / std::sqrt(n);
  const double sigma_t0 = vp_sigma(b.t0);
  b.norm_B = std::sqrt(H * d * d * d) * (1.0 + ko / sigma_t0);
  b.norm_R = std::sqrt(H * d) * ko / (sigma_t0 * sigma_t0);
  return b;
}

}  // namespace ditimpute
