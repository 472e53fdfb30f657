// The state-space (Kalman) conditional of a long series (state_space.hpp)
// against the dense reference: every Markov kernel, with and without a nugget,
// entry-level masks with whole frames missing and whole frames observed, a
// full-rank Lambda, a non-zero mean, irregular times; exact draws; errors.
#include <catch2/catch.hpp>

#include "test_helpers.hpp"

#include "ditimpute/gaussian.hpp"
#include "ditimpute/impute.hpp"
#include "ditimpute/state_space.hpp"

#include <Eigen/Cholesky>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace ditimpute;

namespace {

Kernel make_kernel(KernelType type, double lengthscale, double scale) {
  Kernel k;
  k.type = type;
  k.lengthscale = lengthscale;
  k.variance = 1.7;
  k.embedding.scale = scale;
  return k;
}

// K_ij = k(|t_i - t_j|) + nugget [i == j].
Matrix gamma_at(const Kernel& k, const Vector& times, double nugget) {
  const int H = static_cast<int>(times.size());
  Matrix G(H, H);
  for (int i = 0; i < H; ++i)
    for (int j = 0; j < H; ++j) G(i, j) = kernel_value(k, std::abs(times(i) - times(j))) + (i == j ? nugget : 0.0);
  return G;
}

// Entry-level MCAR mask with frame 2 and frames 9-11 fully missing and frame
// 5 fully observed (and at least one missing and one observed entry elsewhere).
Mask test_mask(int H, int d, double rate, Rng& rng) {
  Mask m(H, d, true);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (auto& o : m.observed) o = u(rng) < rate ? 0 : 1;
  for (int t : {2, 9, 10, 11})
    for (int j = 0; j < d; ++j) m.observed[t * d + j] = 0;
  for (int j = 0; j < d; ++j) m.observed[5 * d + j] = 1;
  m.observed[0] = 1;
  m.observed[1] = 0;
  return m;
}

struct Case {
  GaussianProcess gp;
  StateSpaceGP ss;
  Mask mask;
  Batch x;
};

Case make_case(KernelType type, double nugget, bool irregular, std::uint64_t seed) {
  Rng rng(seed);
  const int H = 30, d = 3;
  const double lengthscale = type == KernelType::matern52 ? 2.5 : 4.0;
  const Kernel k = make_kernel(type, lengthscale, 0.8);
  Vector times(H);
  for (int i = 0; i < H; ++i) times(i) = (i + 1) * 0.8;
  if (irregular) {
    std::uniform_real_distribution<double> gap(0.2, 2.0);
    times(0) = 0.3;
    for (int i = 1; i < H; ++i) times(i) = times(i - 1) + gap(rng);
  }
  const Matrix Lambda = testing::random_full_rank_spd(d, rng, 0.3);
  RowMatrix mean(H, d);
  fill_standard_normal(rng, mean.data(), static_cast<std::size_t>(mean.size()));
  mean.array() += 2.0;
  GaussianProcess gp(gamma_at(k, times, nugget), Lambda, mean);
  StateSpaceGP ss(k, nugget, Lambda, mean, irregular ? times : Vector());
  Mask mask = test_mask(H, d, 0.35, rng);
  Batch x = gp.simulate(1, rng);
  return Case{std::move(gp), std::move(ss), std::move(mask), std::move(x)};
}

}  // namespace

TEST_CASE("state-space transitions reproduce the kernel", "[state_space]") {
  for (KernelType type : {KernelType::laplace, KernelType::matern32, KernelType::matern52}) {
    const Kernel k = make_kernel(type, 1.3, 1.0);
    const StateSpaceGP ss(k, 0.0, Matrix::Identity(1, 1), RowMatrix::Zero(4, 1));
    const Matrix Pinf = ss.stationary_covariance();
    CHECK(Pinf(0, 0) == Approx(k.variance));
    for (double delta : {0.05, 0.7, 2.9}) {
      // Cov(f(t + delta), f(t)) = (A Pinf)(0, 0) = k(delta).
      CHECK((ss.transition(delta) * Pinf)(0, 0) == Approx(kernel_value(k, delta)).epsilon(1e-12));
      // A Markov semigroup: A(a) A(b) = A(a + b).
      CHECK((ss.transition(delta) * ss.transition(0.4) - ss.transition(delta + 0.4)).norm() < 1e-12);
      // Stationary: the noise Q = Pinf - A Pinf A^T is a covariance.
      const Matrix A = ss.transition(delta);
      const Eigen::SelfAdjointEigenSolver<Matrix> es(Pinf - A * Pinf * A.transpose());
      CHECK(es.eigenvalues().minCoeff() > 0.0);
    }
    // no step back in time, and a step must be a number
    CHECK_THROWS_AS(ss.transition(-1.0), input_error);
    CHECK_THROWS_AS(ss.transition(std::numeric_limits<double>::quiet_NaN()), input_error);
    CHECK_THROWS_AS(ss.transition(std::numeric_limits<double>::infinity()), input_error);
    CHECK_NOTHROW(ss.transition(0.0));
  }
}

TEST_CASE("a lengthscale far beyond the frame spacing: the noise keeps its digits, the conditional is the dense one",
          "[state_space]") {
  // Q = Pinf - A Pinf A^T cancelled to rounding where lambda delta is small:
  // Matern 3/2 and 5/2 with lengthscales of 1e5-1e10 frames gave the Laplace
  // kernel's answer, or an error (a user review). Q is now the integral of
  // the SDE's noise, by quadrature there.
  for (KernelType type : {KernelType::laplace, KernelType::matern32, KernelType::matern52}) {
    // where both forms keep their digits, they agree
    for (double ell : {1.3, 4.0, 20.0}) {
      const LatentProcess proc = LatentProcess::matern(make_kernel(type, ell, 1.0));
      const Matrix Pinf = proc.initial_covariance();
      for (double delta : {0.05, 0.3, 0.7, 2.9}) {
        Matrix A, Q;
        proc.transition(delta, A, Q);
        INFO(to_string(type) << " lengthscale " << ell << " delta " << delta);
        CHECK((Q - (Pinf - A * Pinf * A.transpose())).cwiseAbs().maxCoeff() < 1e-12 * Pinf.cwiseAbs().maxCoeff());
      }
    }
    // far beyond: Q stays a covariance with the right leading term (the last
    // coordinate's noise is q delta to first order)
    for (double ell : {1e5, 1e8}) {
      const LatentProcess proc = LatentProcess::matern(make_kernel(type, ell, 1.0));
      Matrix A, Q;
      proc.transition(1.0, A, Q);
      const Eigen::SelfAdjointEigenSolver<Matrix> es(Q);
      CHECK(es.eigenvalues().minCoeff() > 0.0);
    }
    // the conditional against the dense one (a small nugget keeps the dense
    // Cholesky well posed: kappa about H / nugget)
    for (double ell : {1e3, 1e5, 1e7}) {
      Rng rng(7);
      const int H = 30, d = 2;
      const Kernel k = make_kernel(type, ell, 1.0);
      Vector times(H);
      for (int i = 0; i < H; ++i) times(i) = i + 1.0;
      const Matrix Lambda = testing::random_full_rank_spd(d, rng, 0.3);
      const RowMatrix mean = RowMatrix::Zero(H, d);
      const double nugget = 1e-3;
      GaussianProcess gp(gamma_at(k, times, nugget), Lambda, mean);
      StateSpaceGP ss(k, nugget, Lambda, mean);
      const Mask mask = test_mask(H, d, 0.3, rng);
      const Batch x = gp.simulate(1, rng);
      const auto de = make_conditional_dense(gp, mask);
      Rng r2(1);
      const SmoothedConditional sc = ss.conditional(mask, x.seq(0), 0, r2);
      const Vector mu = de->mean(x.seq(0));
      const Vector sd = de->covariance().diagonal().cwiseSqrt();
      INFO(to_string(type) << " lengthscale " << ell);
      CHECK((sc.mean - mu).norm() / mu.norm() < 1e-6);
      CHECK(((sc.sd - sd).array() / sd.array()).abs().maxCoeff() < 1e-5);
    }
  }
}

TEST_CASE("state-space conditional equals the dense conditional", "[state_space]") {
  std::uint64_t seed = 100;
  for (KernelType type : {KernelType::laplace, KernelType::matern32, KernelType::matern52})
    for (double nugget : {0.0, 0.05})
      for (bool irregular : {false, true}) {
        const Case c = make_case(type, nugget, irregular, ++seed);
        INFO(to_string(type) << " nugget " << nugget << (irregular ? " irregular times" : " regular grid"));
        const auto de = make_conditional_dense(c.gp, c.mask);
        Rng rng(1);
        const SmoothedConditional sc = c.ss.conditional(c.mask, c.x.seq(0), 0, rng);
        REQUIRE(sc.missing == de->missing_entries());
        const Vector mu = de->mean(c.x.seq(0));
        const Vector sd = de->covariance().diagonal().cwiseSqrt();
        // Both are exact; the dense Cholesky of Sigma_oo (kappa < 1e7 here)
        // loses up to ~1e-9 relative, the filter less.
        CHECK((sc.mean - mu).norm() / mu.norm() < 1e-8);
        CHECK(((sc.sd - sd).array() / sd.array()).abs().maxCoeff() < 1e-8);
        CHECK(sc.samples.rows() == 0);
      }
}

TEST_CASE("state-space draws have the exact conditional mean and covariance", "[state_space][sample]") {
  std::uint64_t seed = 500;
  for (KernelType type : {KernelType::matern32, KernelType::matern52})
    for (double nugget : {0.0, 0.05}) {
      const Case c = make_case(type, nugget, false, ++seed);
      INFO(to_string(type) << " nugget " << nugget);
      const auto de = make_conditional_dense(c.gp, c.mask);
      const Vector mu = de->mean(c.x.seq(0));
      const Matrix S = de->covariance();
      const int m = static_cast<int>(mu.size()), Z = 4000;
      Rng rng(77);
      const SmoothedConditional sc = c.ss.conditional(c.mask, c.x.seq(0), Z, rng);
      REQUIRE(sc.samples.rows() == Z);
      REQUIRE(sc.samples.cols() == m);
      // The law has strong correlations, so the covariance check tests the
      // joint draws and not only their marginals.
      const Vector s = S.diagonal().cwiseSqrt();
      const Matrix R = s.cwiseInverse().asDiagonal() * S * s.cwiseInverse().asDiagonal();
      CHECK((R - Matrix::Identity(m, m)).cwiseAbs().maxCoeff() > 0.5);
      // Whitened draws W = L^{-1} (X - mu), L L^T = S, are iid N(0, I) under
      // the exact law: mean entries have sd 1/sqrt(Z), covariance entries sd
      // sqrt(2/Z) on the diagonal and 1/sqrt(Z) off it (near normal at Z =
      // 4000). 5 sd over the ~m^2/2 <= 1,300 entries is exceeded with
      // probability < 1e-3 for exact draws; a draw with the wrong correlations
      // (of size > 0.5 here) is off by > 30 sd.
      const Matrix L = Eigen::LLT<Matrix>(S).matrixL();
      const Matrix W = L.triangularView<Eigen::Lower>().solve(Matrix(sc.samples.transpose().colwise() - mu));
      const Vector wbar = W.rowwise().mean();
      CHECK(wbar.cwiseAbs().maxCoeff() < 5.0 / std::sqrt(Z));
      Matrix C = W * W.transpose() / Z - Matrix::Identity(m, m);
      CHECK(C.diagonal().cwiseAbs().maxCoeff() < 5.0 * std::sqrt(2.0 / Z));
      C.diagonal().setZero();
      CHECK(C.cwiseAbs().maxCoeff() < 5.0 / std::sqrt(Z));
      // The same seed gives the same draws.
      Rng again(77);
      CHECK(c.ss.conditional(c.mask, c.x.seq(0), Z, again).samples == sc.samples);
    }
}

TEST_CASE("state-space path: unsupported kernels and bad input are input errors", "[state_space]") {
  using testing::require_input_error;
  const Matrix Lambda = Matrix::Identity(2, 2);
  const RowMatrix mean = RowMatrix::Zero(10, 2);
  Kernel rbf = make_kernel(KernelType::rbf, 2.0, 1.0);
  require_input_error([&] { StateSpaceGP(rbf, 0.0, Lambda, mean); }, "kernel");
  try {
    StateSpaceGP(rbf, 0.0, Lambda, mean);
  } catch (const input_error& e) {
    CHECK(std::string(e.what()).find("matern32") != std::string::npos);
  }
  Kernel sinus = make_kernel(KernelType::matern32, 2.0, 1.0);
  sinus.embedding.kind = Embedding::Kind::sinusoidal;
  require_input_error([&] { StateSpaceGP(sinus, 0.0, Lambda, mean); }, "kernel");
  const Kernel k = make_kernel(KernelType::matern32, 2.0, 1.0);
  require_input_error([&] { StateSpaceGP(make_kernel(KernelType::matern32, -1.0, 1.0), 0.0, Lambda, mean); },
                      "lengthscale");
  require_input_error([&] { StateSpaceGP(k, -0.1, Lambda, mean); }, "nugget");
  require_input_error([&] { StateSpaceGP(k, 0.0, Matrix::Identity(3, 3), mean); }, "mean");
  Matrix bad = Lambda;
  bad(0, 0) = -1.0;
  require_input_error([&] { StateSpaceGP(k, 0.0, bad, mean); }, "Lambda");
  Vector times = Vector::LinSpaced(10, 0.0, 9.0);
  times(4) = times(3);
  require_input_error([&] { StateSpaceGP(k, 0.0, Lambda, mean, times); }, "times");

  const StateSpaceGP ss(k, 0.01, Lambda, mean);
  Mask mask(10, 2, true);
  mask.observed[5] = 0;
  std::vector<double> x(20, 0.5);
  x[3] = std::nan("");
  Rng rng(1);
  require_input_error([&] { ss.conditional(mask, x.data(), 0, rng); }, "x");
  x[3] = 0.5;
  require_input_error([&] { ss.conditional(Mask(9, 2, true), x.data(), 0, rng); }, "x");
  // A request over the memory limit names its size, never a bad_alloc.
  set_memory_limit(1e4);
  const RowMatrix long_mean = RowMatrix::Zero(5000, 2);
  const StateSpaceGP big(k, 0.01, Lambda, long_mean);
  Mask long_mask(5000, 2, true);
  long_mask.observed[7] = 0;
  std::vector<double> long_x(10000, 0.0);
  require_input_error([&] { big.conditional(long_mask, long_x.data(), 0, rng); }, "x");
  set_memory_limit(1e6);
  require_input_error([&] { ss.conditional(mask, x.data(), 100000, rng); }, "n_samples");
  set_memory_limit(0);
}

TEST_CASE("impute() with the state-space sampler equals the exact GP imputer", "[state_space][impute]") {
  const Case c = make_case(KernelType::matern32, 0.05, false, 900);
  // Two cases with different entry-level patterns (NaN = missing).
  Rng data_rng(3);
  Batch x = c.gp.simulate(2, data_rng);
  for (int i = 0; i < 2; ++i)
    for (std::size_t k = 0; k < x.seq_size(); ++k)
      if (!c.mask.observed[(k + 7 * i) % x.seq_size()]) x.seq(i)[k] = std::nan("");
  ImputeOptions o;
  o.n_samples = 200;
  o.seed = 11;
  const Imputation ss = impute(StateSpaceSampler(c.ss), x, o);
  const Imputation de = impute(ExactGPSampler(c.gp), x, o);
  auto rel = [](const Batch& a, const Batch& b) {
    double num = 0, den = 0;
    for (std::size_t k = 0; k < a.data.size(); ++k)
      if (!std::isnan(b.data[k])) {
        num += (a.data[k] - b.data[k]) * (a.data[k] - b.data[k]);
        den += b.data[k] * b.data[k];
      }
    return std::sqrt(num / den);
  };
  // Point = exact conditional mean, intervals mu +/- z sd: both exact.
  CHECK(rel(ss.point, de.point) < 1e-8);
  CHECK(rel(ss.lower, de.lower) < 1e-8);
  CHECK(rel(ss.upper, de.upper) < 1e-8);
  for (int i = 0; i < 2; ++i) {
    CHECK(ss.samples[i].rows() == 200);
    // The radius from 200 exact draws (the 191st distance) against the exact
    // quantile: the 0.95 quantile's order statistic has a relative sd of a
    // few per cent at Z = 200, so 25% is loose but catches a wrong scale.
    CHECK(std::abs(ss.radius[i] / de.radius[i] - 1.0) < 0.25);
  }
  // Case 1's draws do not depend on case 0 sharing the call.
  Batch one(1, x.H, x.d);
  std::copy(x.seq(1), x.seq(1) + x.seq_size(), one.seq(0));
  Rng rng(case_seed(11, 1));
  const Matrix alone = c.ss.conditional(masks_from_nan(one)[0], one.seq(0), 200, rng).samples;
  CHECK(alone == ss.samples[1]);
}
