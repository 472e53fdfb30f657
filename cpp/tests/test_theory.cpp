// Tests of the distribution error against the exact conditional law and of
// the bound factors of Theorems 1-2 (theory.hpp).
#include <catch2/catch.hpp>

#include "test_helpers.hpp"

#include "ditimpute/impute.hpp"
#include "ditimpute/theory.hpp"

#include <cmath>
#include <functional>

using namespace ditimpute;

namespace {

// H = 24, d = 2, Laplace lengthscale 6, four middle frames missing: m = 8
// entries, so Z = 200 draws estimate an 8 x 8 covariance well and the test
// runs in milliseconds.
GaussianProcess process() {
  Kernel k;
  k.type = KernelType::laplace;
  k.lengthscale = 6.0;
  Matrix Lambda(2, 2);
  Lambda << 1.0, 0.3, 0.3, 0.7;
  RowMatrix mu(24, 2);
  for (int h = 0; h < 24; ++h) mu.row(h) << std::cos(h / 4.0), -0.05 * h;
  return GaussianProcess(kernel_matrix(k, 24), Lambda, mu);
}

const std::vector<int> kFrames{10, 11, 12, 13};

// n sequences with frames 10-13 hidden (NaN).
Batch hidden_batch(const GaussianProcess& gp, int n, Rng& rng) {
  Batch x = gp.simulate(n, rng);
  for (int i = 0; i < n; ++i)
    for (int h : kFrames)
      for (int j = 0; j < 2; ++j) x.at(i, h, j) = std::nan("");
  return x;
}

double mean_of(const std::vector<DistributionError>& e, const std::function<double(const DistributionError&)>& f) {
  double s = 0;
  for (const auto& v : e) s += f(v);
  return s / static_cast<double>(e.size());
}

// Mean of f(samples) - f(null) over cases in standard errors of that mean.
double z_score(const std::vector<DistributionError>& e, const std::function<double(const LawDistance&)>& f) {
  const double n = static_cast<double>(e.size());
  double s = 0, s2 = 0;
  for (const auto& v : e) {
    const double dlt = f(v.samples) - f(v.null);
    s += dlt;
    s2 += dlt * dlt;
  }
  const double mean = s / n, var = (s2 - n * mean * mean) / (n - 1.0);
  return mean / std::sqrt(var / n);
}

}  // namespace

TEST_CASE("gaussian_w2 and energy_distance on known cases", "[theory]") {
  // One dimension: W2(N(a, s^2), N(0, 1)) = sqrt(a^2 + (s - 1)^2).
  Vector m1(1), m2(1);
  m1 << 0.7;
  m2 << 0.0;
  Matrix S1(1, 1), S2(1, 1);
  S1 << 4.0;
  S2 << 1.0;
  CHECK(gaussian_w2(m1, S1, m2, S2) == Approx(std::sqrt(0.49 + 1.0)).epsilon(1e-12));
  // Commuting covariances: sum of squared differences of the standard deviations.
  Matrix A = Vector::LinSpaced(3, 1.0, 3.0).asDiagonal(), B = Vector::LinSpaced(3, 2.0, 0.5).asDiagonal();
  double want = 0;
  for (int k = 0; k < 3; ++k) want += std::pow(std::sqrt(A(k, k)) - std::sqrt(B(k, k)), 2);
  CHECK(gaussian_w2(Vector::Zero(3), A, Vector::Zero(3), B) == Approx(std::sqrt(want)).epsilon(1e-10));
  // A rotated pair gives the same value as the diagonal one (W2 is rotation invariant).
  Eigen::HouseholderQR<Matrix> qr(Matrix::Random(3, 3));
  const Matrix Q = qr.householderQ();
  CHECK(gaussian_w2(Vector::Zero(3), Q * A * Q.transpose(), Vector::Zero(3), Q * B * Q.transpose()) ==
        Approx(std::sqrt(want)).epsilon(1e-8));

  // Energy distance: two standard normal sets; the U-statistic is unbiased,
  // its sd for 300 vs 300 draws in 4 dimensions is ~0.005 (checked over
  // seeds), so 0.03 is six sd. A shift by 1 in each of the 4 coordinates
  // (length 2) has population value ~1.23 (Monte Carlo, 2e5 draws).
  Rng rng(11);
  Matrix X(300, 4), Y(300, 4);
  fill_standard_normal(rng, X.data(), X.size());
  fill_standard_normal(rng, Y.data(), Y.size());
  CHECK(std::abs(energy_distance(X, Y)) < 0.03);
  Matrix Xs = X.array() + 1.0;
  CHECK(energy_distance(Xs, Y) > 0.5);
  testing::require_input_error([&] { energy_distance(X.topRows(1), Y); }, "samples");
}

TEST_CASE("distribution_error is null for exact draws and grows with known shifts and scales", "[theory]") {
  const GaussianProcess gp = process();
  Rng rng(5);
  const int n = 40, Z = 200;
  const Batch x = hidden_batch(gp, n, rng);
  const std::vector<Mask> masks = masks_from_nan(x);
  const std::vector<Matrix> exact = ExactGPSampler(gp).draw(x, masks, Z, 17, 1);
  const auto cond = make_conditional(gp, masks[0]);
  const Matrix Sigma = cond->covariance();
  const double m = 8, trace = Sigma.trace();

  SECTION("exact draws: every statistic matches its null reference") {
    const auto e = distribution_error(gp, x, exact, Z, 99, 2);
    REQUIRE(e.size() == static_cast<std::size_t>(n));
    CHECK(e[0].Z == Z);
    CHECK(e[0].m == 8);
    // Each per-case difference samples - null has mean 0 for exact draws; 40
    // cases, fixed seeds: |z| < 4 fails a correct implementation with
    // probability ~6e-5 per statistic.
    CHECK(std::abs(z_score(e, [](const LawDistance& l) { return l.w2; })) < 4);
    CHECK(std::abs(z_score(e, [](const LawDistance& l) { return l.mahalanobis; })) < 4);
    CHECK(std::abs(z_score(e, [](const LawDistance& l) { return l.energy; })) < 4);
    CHECK(std::abs(z_score(e, [](const LawDistance& l) { return l.kl; })) < 4);
    // And in absolute terms: the mean's error is Z^-1/2 per whitened
    // direction, so E mahalanobis^2 = m / Z = 0.04; energy is centred at 0.
    CHECK(mean_of(e, [](const DistributionError& v) { return v.samples.mahalanobis * v.samples.mahalanobis; }) ==
          Approx(m / Z).epsilon(0.3));
    CHECK(std::abs(mean_of(e, [](const DistributionError& v) { return v.samples.energy; })) < 0.01);
    // Covariance ratios average to 1 (tr S / tr Sigma in the whitened metric).
    CHECK(mean_of(e, [](const DistributionError& v) { return v.samples.cov_ratio.mean(); }) ==
          Approx(1.0).epsilon(0.03));
  }

  SECTION("a shift by c in every entry: W2's mean part is c sqrt(m)") {
    const double c = 0.5;
    std::vector<Matrix> shifted = exact;
    for (auto& s : shifted) s.array() += c;
    const auto e = distribution_error(gp, x, shifted, Z, 99, 2);
    // mhat - mu = c 1 + noise of sd sqrt(tr Sigma / Z) in norm: within 0.15.
    const double w2m = mean_of(e, [](const DistributionError& v) { return v.samples.w2_mean; });
    CHECK(std::abs(w2m - c * std::sqrt(m)) < 0.15);
    // The Mahalanobis error is c ||Sigma^-1/2 1|| up to the same noise.
    const Eigen::LLT<Matrix> llt(Sigma);
    const double maha_want = c * std::sqrt(Vector::Ones(8).dot(llt.solve(Vector::Ones(8))));
    CHECK(mean_of(e, [](const DistributionError& v) { return v.samples.mahalanobis; }) ==
          Approx(maha_want).epsilon(0.1));
    CHECK(z_score(e, [](const LawDistance& l) { return l.energy; }) > 10);
    CHECK(z_score(e, [](const LawDistance& l) { return l.w2; }) > 10);
  }

  SECTION("a scale s about the mean: ratios s^2, W2 = (s - 1) sqrt(tr Sigma)") {
    const double s = 1.5;
    std::vector<Matrix> scaled = exact;
    for (int i = 0; i < n; ++i) {
      const Vector mu = cond->mean(x.seq(i));
      scaled[i] = ((exact[i].rowwise() - mu.transpose()) * s).rowwise() + mu.transpose();
    }
    const auto e = distribution_error(gp, x, scaled, Z, 99, 2);
    // The mean of the ratios estimates s^2 with sd ~ s^2 sqrt(2 / (Z m)) per
    // case (~0.06), averaged over 40 cases: 5% is many sd.
    CHECK(mean_of(e, [](const DistributionError& v) { return v.samples.cov_ratio.mean(); }) ==
          Approx(s * s).epsilon(0.05));
    // Exact W2 of N(mu, s^2 Sigma) and N(mu, Sigma) is (s - 1) sqrt(tr Sigma);
    // estimation noise adds a few percent.
    CHECK(mean_of(e, [](const DistributionError& v) { return v.samples.w2; }) ==
          Approx((s - 1) * std::sqrt(trace)).epsilon(0.1));
    // Under-dispersion reads below 1.
    std::vector<Matrix> shrunk = exact;
    for (int i = 0; i < n; ++i) {
      const Vector mu = cond->mean(x.seq(i));
      shrunk[i] = ((exact[i].rowwise() - mu.transpose()) * 0.5).rowwise() + mu.transpose();
    }
    const auto u = distribution_error(gp, x, shrunk, Z, 99, 2);
    CHECK(mean_of(u, [](const DistributionError& v) { return v.samples.cov_ratio.maxCoeff(); }) < 0.5);
    CHECK(z_score(u, [](const LawDistance& l) { return l.energy; }) > 10);
  }

  SECTION("bad input names the argument") {
    std::vector<Matrix> bad = exact;
    bad[3] = Matrix(bad[3].leftCols(5));  // a copy: assigning a block of itself to itself reads freed memory
    testing::require_input_error([&] { distribution_error(gp, x, bad, Z, 1); }, "samples");
    bad = exact;
    bad[0](0, 0) = std::nan("");
    testing::require_input_error([&] { distribution_error(gp, x, bad, Z, 1); }, "samples");
    testing::require_input_error([&] { distribution_error(gp, x, exact, 1, 1); }, "n_ref");
    testing::require_input_error([&] { distribution_error(gp, x, std::vector<Matrix>(3), Z, 1); }, "samples");
  }
}

TEST_CASE("distribution_error leaves a complete case out and a batch of complete cases is an input error", "[theory]") {
  // impute() passes a complete case through with Z x 0 samples: it has no
  // law to compare, so its statistics are NaN, and the other cases' values
  // are those of the same batch in which it had its gap (their draws go by
  // case index).
  const GaussianProcess gp = process();
  Rng rng(8);
  const int n = 4, Z = 60;
  const Batch gappy = hidden_batch(gp, n, rng);
  Batch x = gappy;
  const Batch full = gp.simulate(1, rng);
  for (std::size_t k = 0; k < x.seq_size(); ++k) x.seq(2)[k] = full.seq(0)[k];  // case 2 complete
  const std::vector<Matrix> draws = ExactGPSampler(gp).draw(gappy, masks_from_nan(gappy), Z, 4, 1);
  std::vector<Matrix> samples = draws;
  samples[2] = Matrix(Z, 0);
  const auto e = distribution_error(gp, x, samples, Z, 9, 1);
  const auto ref = distribution_error(gp, gappy, draws, Z, 9, 1);
  REQUIRE(e.size() == static_cast<std::size_t>(n));
  CHECK(e[2].m == 0);
  CHECK(e[2].Z == Z);
  for (const LawDistance* l : {&e[2].samples, &e[2].null}) {
    CHECK(std::isnan(l->w2));
    CHECK(std::isnan(l->w2_mean));
    CHECK(std::isnan(l->mahalanobis));
    CHECK(std::isnan(l->kl));
    CHECK(std::isnan(l->energy));
    CHECK(l->cov_ratio.size() == 0);
  }
  for (int i : {0, 1, 3}) {
    CHECK(e[i].m == 8);
    CHECK(e[i].samples.w2 == ref[i].samples.w2);
    CHECK(e[i].samples.energy == ref[i].samples.energy);
    CHECK(e[i].null.w2 == ref[i].null.w2);
    CHECK(e[i].samples.cov_ratio == ref[i].samples.cov_ratio);
  }
  // A complete case's samples must still have no column.
  std::vector<Matrix> bad = samples;
  bad[2] = Matrix::Zero(Z, 1);
  testing::require_input_error([&] { distribution_error(gp, x, bad, Z, 1); }, "samples");
  // Nothing missing anywhere: no law at all, an input error naming x.
  Batch none = gp.simulate(2, rng);
  testing::require_input_error(
      [&] { distribution_error(gp, none, std::vector<Matrix>(2, Matrix(Z, 0)), Z, 1); }, "x");
}

TEST_CASE("bound_factors follow Theorems 1-2 and rank a tail block above scattered frames", "[theory]") {
  const GaussianProcess gp = process();
  const Mask tail = Mask::from_missing_frames(24, 2, {20, 21, 22, 23});
  const Mask scattered = Mask::from_missing_frames(24, 2, {3, 9, 15, 21});
  const BoundFactors a = bound_factors(gp, tail, 1e4), b = bound_factors(gp, scattered, 1e4);
  const auto ct = make_conditional(gp, tail);
  CHECK(a.kappa_cond == Approx(ct->kappa_cond()));
  CHECK(a.kappa_obs == Approx(ct->kappa_obs()));
  CHECK(a.theorem1 == Approx(std::sqrt(24.0 * 4.0 * std::pow(a.kappa_cond, 5) * a.kappa_obs * a.kappa_obs)));
  CHECK(a.heads == 96);
  CHECK(a.t0 == Approx(ct->eigenvalues()(0) / 100.0));
  CHECK(a.kappa_cond > b.kappa_cond);
  CHECK(a.theorem1 > b.theorem1);
  CHECK(a.depth > b.depth);
  // Theorem 1's factor does not depend on n; the depth grows like log^3 n.
  const BoundFactors a2 = bound_factors(gp, tail, 1e6);
  CHECK(a2.theorem1 == Approx(a.theorem1));
  CHECK(a2.depth > a.depth);
  testing::require_input_error([&] { bound_factors(gp, tail, 0.0); }, "n");
}
