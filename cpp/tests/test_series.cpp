// Tests of whole-series imputation (series.hpp) and the trend-and-season
// kernel (kernel.hpp): with a window as long as the series the block-by-block
// recursion is the chain rule, so its mean path must equal the exact
// conditional mean and its draws the exact conditional covariance; observed
// entries stay; seeds fix the draws whatever the thread count.
#include <catch2/catch.hpp>

#include "ditimpute/gaussian.hpp"
#include "ditimpute/kernel.hpp"
#include "ditimpute/series.hpp"
#include "test_helpers.hpp"

#include <cmath>
#include <limits>

using namespace ditimpute;

namespace {

SeasonalKernel season_kernel() {
  SeasonalKernel k;
  k.w_smooth = 0.3;
  k.smooth_lengthscale = 8.0;
  k.w_season = 0.6;
  k.period = 6.0;
  k.periodic_lengthscale = 1.0;
  k.decay_lengthscale = 20.0;
  k.w_nugget = 0.1;
  return k;
}

Matrix lambda2() {
  Matrix L(2, 2);
  L << 1.0, 0.6, 0.6, 2.0;
  return L;
}

// One T x d draw with a long gap in both variables and scattered holes.
RowMatrix series_with_gaps(const GaussianProcess& gp, std::uint64_t seed) {
  Rng rng(seed);
  Batch b = gp.simulate(1, rng);
  RowMatrix x = b.matrix(0);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (int t = 10; t < 22; ++t) x.row(t).setConstant(nan);  // 12 frames: longer than a block of 5
  x(3, 1) = nan;
  x(25, 0) = nan;
  x(0, 0) = nan;                                            // a leading hole
  x(gp.H() - 1, 1) = nan;                                   // a trailing one
  return x;
}

}  // namespace

TEST_CASE("seasonal kernel: value at 0 is the sum of the weights, periodic at lag = period") {
  const SeasonalKernel k = season_kernel();
  const Vector g = seasonal_kernel_lags(k, 30);
  CHECK(g(0) == Approx(1.0));
  // At lag = period the periodic factor is 1, so only the envelope and the smooth term decay.
  const double smooth6 = [] { const double s = std::sqrt(5.0) * 6.0 / 8.0; return (1 + s + s * s / 3) * std::exp(-s); }();
  CHECK(g(6) == Approx(0.3 * smooth6 + 0.6 * std::exp(-0.5 * 0.09)));
  const Matrix G = kernel_matrix(k, 30);
  CHECK(G(4, 10) == Approx(g(6)));
  CHECK(G.llt().info() == Eigen::Success);
  SeasonalKernel bad = k;
  bad.w_season = -1.0;
  testing::require_input_error([&] { seasonal_kernel_lags(bad, 5); }, "kernel");
}

TEST_CASE("impute_series_gp with a full window is the exact conditional law") {
  const int T = 30, d = 2;
  const Matrix Gamma = kernel_matrix(season_kernel(), T);
  RowMatrix mean(T, d);
  for (int t = 0; t < T; ++t) mean.row(t) << 0.1 * t, -1.0 + 0.05 * t;  // a linear trend
  const GaussianProcess gp(Gamma, lambda2(), mean);
  const RowMatrix x = series_with_gaps(gp, 7);

  SeriesOptions o;
  o.past = T; o.block = 5; o.future = T;  // past + block + future > T: Gamma must cover 2T + 5
  o.n_samples = 4000;
  o.seed = 11;
  const Matrix Gbig = kernel_matrix(season_kernel(), 2 * T + 5);
  const SeriesImputation res = impute_series_gp(x, mean, Gbig, lambda2(), o);

  Mask mask(T, d);
  for (int t = 0; t < T; ++t)
    for (int j = 0; j < d; ++j) mask.observed[t * d + j] = std::isnan(x(t, j)) ? 0 : 1;
  const auto cond = make_conditional_dense(gp, mask);
  std::vector<double> xv(x.data(), x.data() + T * d);
  for (double& v : xv) if (std::isnan(v)) v = 0.0;
  const Vector mu = cond->mean(xv.data());
  const std::vector<int>& miss = cond->missing_entries();
  REQUIRE(res.samples.cols() == static_cast<long>(miss.size()));
  REQUIRE(res.blocks == 5);  // blocks 0, 2, 3, 4 and 5 hold missing entries, block 1 none
  for (std::size_t a = 0; a < miss.size(); ++a) CHECK(res.point(miss[a] / d, miss[a] % d) == Approx(mu(a)).margin(1e-8));
  // Observed entries are untouched.
  for (int t = 0; t < T; ++t)
    for (int j = 0; j < d; ++j)
      if (!std::isnan(x(t, j))) CHECK(res.point(t, j) == x(t, j));
  // Sample covariance against the exact one: with Z = 4000 the standard error
  // of a covariance entry is at most sqrt(2 / Z) * max variance (~0.022 s2), so
  // 0.1 of the largest variance is > 4 standard errors.
  const Matrix S = cond->covariance();
  const Matrix centred = res.samples.rowwise() - res.samples.colwise().mean();
  const Matrix Shat = centred.transpose() * centred / (o.n_samples - 1.0);
  CHECK((Shat - S).cwiseAbs().maxCoeff() < 0.1 * S.diagonal().maxCoeff());
  CHECK((res.samples.colwise().mean().transpose() - mu).cwiseAbs().maxCoeff() < 0.1 * std::sqrt(S.diagonal().maxCoeff()));
}

TEST_CASE("impute_series_gp: seeds fix the draws whatever the thread count, short windows still fill") {
  const int T = 60, d = 2;
  const Matrix Gamma = kernel_matrix(season_kernel(), 18);
  const RowMatrix mean = RowMatrix::Zero(T, d);
  const GaussianProcess gp(kernel_matrix(season_kernel(), T), lambda2(), mean);
  const RowMatrix x = series_with_gaps(gp, 3);
  SeriesOptions o;
  o.past = 6; o.block = 6; o.future = 6;
  o.n_samples = 20;
  o.seed = 5;
  o.threads = 1;
  const SeriesImputation a = impute_series_gp(x, mean, Gamma, lambda2(), o);
  o.threads = 2;
  const SeriesImputation b = impute_series_gp(x, mean, Gamma, lambda2(), o);
  CHECK(a.samples == b.samples);
  CHECK(a.point.allFinite());
  o.seed = 6;
  const SeriesImputation c = impute_series_gp(x, mean, Gamma, lambda2(), o);
  CHECK(!(a.samples == c.samples));
  CHECK(a.point.isApprox(c.point));  // the mean path draws no noise
  o.future = 7;  // past + block + future > 18
  testing::require_input_error([&] { impute_series_gp(x, mean, Gamma, lambda2(), o); }, "Gamma");
}

TEST_CASE("series_profile_loglik equals the univariate Gaussian likelihood at the profiled mean and variance") {
  const int H = 12;
  const Matrix Gamma = kernel_matrix(season_kernel(), H);
  const GaussianProcess gp(Gamma, Matrix::Identity(1, 1) * 4.0, RowMatrix::Constant(H, 1, 3.0));
  Rng rng(2);
  Batch x = gp.simulate(3, rng);
  x.at(0, 2, 0) = std::numeric_limits<double>::quiet_NaN();
  const double ll = series_profile_loglik(x, Gamma, 1);
  // Direct: evaluate the Gaussian log-density on a grid of (mu, s2) and check that
  // none beats the profile value, and that the value is attained near the optimum.
  auto loglik = [&](double mu, double s2) {
    double s = 0;
    for (int i = 0; i < 3; ++i) {
      std::vector<int> o;
      for (int h = 0; h < H; ++h) if (!std::isnan(x.at(i, h, 0))) o.push_back(h);
      Matrix G(o.size(), o.size());
      Vector r(o.size());
      for (std::size_t a = 0; a < o.size(); ++a) {
        r(a) = x.at(i, o[a], 0) - mu;
        for (std::size_t c = 0; c < o.size(); ++c) G(a, c) = s2 * Gamma(o[a], o[c]);
      }
      Eigen::LLT<Matrix> llt(G);
      s += -0.5 * (o.size() * std::log(2 * M_PI) + 2 * llt.matrixLLT().diagonal().array().log().sum() +
                   r.dot(llt.solve(r)));
    }
    return s;
  };
  double best = -1e300;
  for (double mu = 0.0; mu <= 6.0; mu += 0.05)
    for (double s2 = 0.5; s2 <= 15.0; s2 *= 1.02) best = std::max(best, loglik(mu, s2));
  CHECK(best <= ll + 1e-9);
  CHECK(best == Approx(ll).epsilon(1e-3));
}
