// Structural series models (structural.hpp) and the general latent process of
// the state-space path: the stationary process's likelihood and conditional
// against the dense Gaussian reference, the level's bridge across a gap, and
// maximum likelihood recovering a simulated local level and choosing it.
#include <catch2/catch.hpp>

#include "test_helpers.hpp"

#include "ditimpute/gaussian.hpp"
#include "ditimpute/state_space.hpp"
#include "ditimpute/structural.hpp"

#include <Eigen/Cholesky>

#include <cmath>
#include <vector>

using namespace ditimpute;

namespace {

// A stationary structural spec: smooth + season + nugget.
StructuralSpec seasonal_spec() {
  StructuralSpec s;
  s.trend = StructuralSpec::Trend::none;
  s.seasonal = true;
  s.period = 7.0;
  s.smooth_var = 0.6;
  s.smooth_lengthscale = 5.0;
  s.season_var = 0.8;
  s.periodic_lengthscale = 0.9;
  s.season_decay = 30.0;
  s.nugget = 0.05;
  return s;
}

Matrix gamma_of(const LatentProcess& p, int H, double nugget) {
  Matrix G(H, H);
  for (int i = 0; i < H; ++i)
    for (int j = 0; j < H; ++j) G(i, j) = p.covariance(i - j) + (i == j ? nugget : 0.0);
  return G;
}

// The dense log-density of the observed entries of x (vec order) under
// N(vec(mean), Gamma (x) Lambda).
double dense_loglik(const Matrix& Gamma, const Matrix& Lambda, const RowMatrix& mean, const Mask& mask,
                    const double* x) {
  const int H = static_cast<int>(Gamma.rows()), d = static_cast<int>(Lambda.rows());
  std::vector<int> obs;
  for (int t = 0; t < H; ++t)
    for (int j = 0; j < d; ++j)
      if (mask.is_observed(t, j)) obs.push_back(t * d + j);
  const int o = static_cast<int>(obs.size());
  Matrix S(o, o);
  Vector r(o);
  for (int a = 0; a < o; ++a) {
    r(a) = x[obs[a]] - mean(obs[a] / d, obs[a] % d);
    for (int b = 0; b < o; ++b)
      S(a, b) = Gamma(obs[a] / d, obs[b] / d) * Lambda(obs[a] % d, obs[b] % d);
  }
  const Eigen::LLT<Matrix> llt(S);
  const Vector w = llt.matrixL().solve(r);
  return -0.5 * (o * std::log(2.0 * 3.14159265358979323846) +
                 2.0 * Matrix(llt.matrixL()).diagonal().array().log().sum() + w.squaredNorm());
}

// Draws of the smoother's backward pass against the dense conditional law
// (means mu, sds sd): the moments of a call without draws (sc), and per entry
// a sample mean within 4 standard errors of mu and a sample sd within 10% of
// sd (the sd's standard error is 1.6% at 2,000 draws).
void check_draws(const StateSpaceGP& ss, const Mask& mask, const double* x, const SmoothedConditional& sc,
                 const Vector& mu, const Vector& sd) {
  const int Z = 2000;
  Rng rng(2);
  const SmoothedConditional sz = ss.conditional(mask, x, Z, rng);
  // Draws take the RTS pass, moments alone (several variables) the
  // information form: the same moments to rounding.
  CHECK((sz.mean - sc.mean).cwiseAbs().maxCoeff() < 1e-12 * (1.0 + sc.mean.cwiseAbs().maxCoeff()));
  CHECK(((sz.sd - sc.sd).array() / sc.sd.array()).abs().maxCoeff() < 1e-12);
  REQUIRE(sz.samples.cols() == mu.size());
  for (Eigen::Index k = 0; k < mu.size(); ++k) {
    const Vector z = (sz.samples.col(k).array() - mu(k)) / sd(k);
    INFO("entry " << k);
    CHECK(std::abs(z.mean()) < 4.0 / std::sqrt(static_cast<double>(Z)));
    const double s_z = std::sqrt((z.array() - z.mean()).square().sum() / (Z - 1));
    CHECK(s_z > 0.9);
    CHECK(s_z < 1.1);
  }
}

// The smoother's conditional means and sds (no draws) against the dense
// conditional's, to 1e-8 relative; returns them, and the dense means and sds
// in mu and sd.
SmoothedConditional check_against_dense(const StateSpaceGP& ss, const GaussianProcess& gp, const Mask& mask,
                                        const double* x, Vector& mu, Vector& sd) {
  const auto de = make_conditional_dense(gp, mask);
  Rng rng(1);
  SmoothedConditional sc = ss.conditional(mask, x, 0, rng);
  REQUIRE(sc.missing == de->missing_entries());
  mu = de->mean(x);
  sd = de->covariance().diagonal().cwiseSqrt();
  CHECK((sc.mean - mu).norm() / mu.norm() < 1e-8);
  CHECK(((sc.sd - sd).array() / sd.array()).abs().maxCoeff() < 1e-8);
  return sc;
}

Mask random_mask(int H, int d, double rate, Rng& rng) {
  Mask m(H, d, true);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (auto& v : m.observed) v = u(rng) < rate ? 0 : 1;
  for (int t = 10; t < 16; ++t)
    for (int j = 0; j < d; ++j) m.observed[static_cast<std::size_t>(t) * d + j] = 0;  // a whole-frame gap
  m.observed[0] = 1;
  return m;
}

}  // namespace

TEST_CASE("harmonic blocks carry the periodic kernel's Fourier weights", "[structural]") {
  StructuralSpec s = seasonal_spec();
  s.smooth_var = 1e-12;  // (nearly) the season alone
  s.season_envelope = 1;
  const LatentProcess p = structural_process(s);
  // 3 harmonics of a 7-frame period: the covariance at lag tau is
  // sum_k v_k exp(-tau / decay) cos(2 pi k tau / 7), the v_k summing to season_var.
  REQUIRE(p.dimension() == 3 + 2 * 3);
  for (double tau : {0.0, 1.0, 3.5, 7.0, 20.0}) {
    double expect = 0.0, total = 0.0;
    const double z = 1.0 / (0.9 * 0.9);
    for (int k = 1; k <= 3; ++k) total += 2.0 * std::exp(-z) * std::cyl_bessel_i(k, z);
    for (int k = 1; k <= 3; ++k)
      expect += 0.8 * 2.0 * std::exp(-z) * std::cyl_bessel_i(k, z) / total * std::exp(-tau / 30.0) *
                std::cos(2.0 * 3.14159265358979323846 * k * tau / 7.0);
    CHECK(p.covariance(tau) == Approx(expect).margin(1e-9));
  }
  // A full period apart the season repeats up to its decay: corr = exp(-7 / 30).
  CHECK(p.covariance(7.0) / p.covariance(0.0) == Approx(std::exp(-7.0 / 30.0)).epsilon(1e-6));
  // The smoother envelope (the default): the same harmonics times the Matern
  // 3/2 correlation (1 + r) exp(-r), r = sqrt(3) tau / decay; 4 coordinates each.
  s.season_envelope = 2;
  const LatentProcess p2 = structural_process(s);
  REQUIRE(p2.dimension() == 3 + 4 * 3);
  for (double tau : {1.0, 7.0, 20.0}) {
    const double r = std::sqrt(3.0) * tau / 30.0;
    CHECK(p2.covariance(tau) / p2.covariance(0.0) ==
          Approx(p.covariance(tau) / p.covariance(0.0) * (1.0 + r) * std::exp(-r) / std::exp(-tau / 30.0)).epsilon(1e-6));
  }
}

TEST_CASE("state-space likelihood, conditional and draws of a stationary structural process equal the dense ones",
          "[structural]") {
  Rng rng(11);
  const int H = 40, d = 2;
  const StructuralSpec s = seasonal_spec();
  const LatentProcess p = structural_process(s);
  const Matrix Lambda = testing::random_full_rank_spd(d, rng, 0.3);
  RowMatrix mean(H, d);
  fill_standard_normal(rng, mean.data(), static_cast<std::size_t>(mean.size()));
  const Matrix Gamma = gamma_of(p, H, s.nugget);
  GaussianProcess gp(Gamma, Lambda, mean);
  const StateSpaceGP ss(p, s.nugget, Lambda, mean);
  const Mask mask = random_mask(H, d, 0.3, rng);
  const Batch x = gp.simulate(1, rng);
  long used = 0;
  const double ll = ss.log_likelihood(mask, x.seq(0), &used);
  CHECK(used == static_cast<long>(mask.observed_entries().size()));
  CHECK(ll == Approx(dense_loglik(Gamma, Lambda, mean, mask, x.seq(0))).epsilon(1e-9));
  Vector mu, sd;
  const SmoothedConditional sc = check_against_dense(ss, gp, mask, x.seq(0), mu, sd);
  check_draws(ss, mask, x.seq(0), sc, mu, sd);
}

TEST_CASE("the stationary form's spread carries its line's uncertainty (universal kriging), wider beyond the data",
          "[structural]") {
  // The dense reference: entries with covariance Gamma (x) Lambda and mean
  // X beta, beta (an intercept and a slope per variable). The imputations
  // are the plug-in ones of each variable's least-squares line through its
  // observed values (beta_ls; not the candidate's stored line c.trend, so
  // that a version with values hidden does not use a line fitted to them):
  //   mean = X_m beta_ls + K_mo K_oo^-1 (y_o - X_o beta_ls);
  // the covariance is that of beta unknown (integrated out under a flat
  // prior: universal kriging), the plug-in one plus the line's uncertainty:
  //   R = X_m - K_mo K_oo^-1 X_o,  V = (X_o^T K_oo^-1 X_o)^-1,
  //   cov = K_mm - K_mo K_oo^-1 K_om + R V R^T.
  Rng rng(23);
  const int T = 60, d = 2;
  StructuralSpec s = seasonal_spec();
  StructuralCandidate c;
  c.spec = s;
  c.Lambda = testing::random_full_rank_spd(d, rng, 0.3);
  c.trend = Matrix::Zero(2, d);  // a stored line far from the data: not used by the conditional
  c.trend(0, 0) = 100.0;
  const LatentProcess p = structural_process(s);
  const Matrix Gamma = gamma_of(p, T, s.nugget);
  RowMatrix mean(T, d);
  for (int t = 0; t < T; ++t) {
    mean(t, 0) = 3.0 + 0.05 * t;
    mean(t, 1) = -1.0 - 0.02 * t;
  }
  GaussianProcess gp(Gamma, c.Lambda, mean);
  RowMatrix y(T, d);
  {
    const Batch x = gp.simulate(1, rng);
    for (int t = 0; t < T; ++t)
      for (int j = 0; j < d; ++j) y(t, j) = x.seq(0)[t * d + j];
  }
  for (int t = 45; t < T; ++t) y(t, 0) = std::nan("");  // variable 0's last 15 frames: an end gap
  for (int t = 20; t < 26; ++t) y(t, 1) = std::nan("");  // an inner gap of variable 1
  std::vector<int> obs, mis;
  for (int t = 0; t < T; ++t)
    for (int j = 0; j < d; ++j) (std::isnan(y(t, j)) ? mis : obs).push_back(t * d + j);
  auto K = [&](const std::vector<int>& a, const std::vector<int>& b) {
    Matrix M(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i)
      for (std::size_t k = 0; k < b.size(); ++k)
        M(i, k) = Gamma(a[i] / d, b[k] / d) * c.Lambda(a[i] % d, b[k] % d);
    return M;
  };
  auto X = [&](const std::vector<int>& a) {
    Matrix M = Matrix::Zero(a.size(), 2 * d);
    for (std::size_t i = 0; i < a.size(); ++i) {
      M(i, 2 * (a[i] % d)) = 1.0;
      M(i, 2 * (a[i] % d) + 1) = a[i] / d;
    }
    return M;
  };
  Vector yo(obs.size());
  for (std::size_t i = 0; i < obs.size(); ++i) yo(i) = y(obs[i] / d, obs[i] % d);
  const Eigen::LLT<Matrix> Koo(K(obs, obs));
  const Matrix Xo = X(obs), Xm = X(mis), Kmo = K(mis, obs);
  const Matrix V = (Xo.transpose() * Koo.solve(Xo)).inverse();
  // Least squares per variable: the design's columns are the variables' own.
  const Vector b = Xo.colPivHouseholderQr().solve(yo);
  const Matrix R = Xm - Kmo * Koo.solve(Xo);
  const Vector mu = Xm * b + Kmo * Koo.solve(yo - Xo * b);
  const Matrix cov = K(mis, mis) - Kmo * Koo.solve(Kmo.transpose()) + R * V * R.transpose();
  const Vector sd = cov.diagonal().cwiseSqrt();
  const SmoothedConditional sc = structural_conditional(y, c, 0, 1, 1);
  REQUIRE(sc.missing == mis);
  // Draws: centred on the imputations, with the universal kriging spread.
  const SmoothedConditional sz = structural_conditional(y, c, 2000, 3, 1);
  CHECK((sz.mean - sc.mean).cwiseAbs().maxCoeff() < 1e-12 * (1.0 + sc.mean.cwiseAbs().maxCoeff()));
  CHECK(((sz.sd - sc.sd).array() / sc.sd.array()).abs().maxCoeff() < 1e-12);
  for (Eigen::Index k = 0; k < sz.mean.size(); ++k) {
    const Vector z = (sz.samples.col(k).array() - sc.mean(k)) / sc.sd(k);
    INFO("entry " << k);
    CHECK(std::abs(z.mean()) < 4.0 / std::sqrt(2000.0));
    const double s_z = std::sqrt((z.array() - z.mean()).square().sum() / 1999.0);
    CHECK(s_z > 0.9);
    CHECK(s_z < 1.1);
  }
  INFO("mean error " << (sc.mean - mu).cwiseAbs().maxCoeff() << ", sd error "
                     << ((sc.sd - sd).array() / sd.array()).abs().maxCoeff());
  // The state space's diffuse start is a prior variance of 1e6 x the model's
  // scale, not an infinite one: agreement to about 1e-5.
  CHECK((sc.mean - mu).cwiseAbs().maxCoeff() < 1e-4 * (1.0 + mu.cwiseAbs().maxCoeff()));
  CHECK(((sc.sd - sd).array() / sd.array()).abs().maxCoeff() < 1e-4);
  // Beyond the data the line's uncertainty grows with the horizon: the end
  // gap's last sd is above its first and well above what the same
  // conditional with the line known (the plug-in) gives there, while inside
  // the data (variable 1's gap) the two nearly agree.
  const Matrix plug = K(mis, mis) - Kmo * Koo.solve(Kmo.transpose());
  int first = -1, last = -1, inner = -1;
  for (std::size_t k = 0; k < mis.size(); ++k) {
    if (mis[k] % d == 0) last = static_cast<int>(k);
    if (mis[k] % d == 0 && first < 0) first = static_cast<int>(k);
    if (mis[k] % d == 1 && inner < 0) inner = static_cast<int>(k);
  }
  // fixed_line: the stored line taken as known (the plug-in conditional of
  // mean X c.trend), what the hidden-gap comparisons of a series without end
  // gaps use.
  {
    Vector bc(2 * d);
    for (int j = 0; j < d; ++j) {
      bc(2 * j) = c.trend(0, j);
      bc(2 * j + 1) = c.trend(1, j);
    }
    const Vector mu_c = Xm * bc + Kmo * Koo.solve(yo - Xo * bc);
    const Matrix plug_c = K(mis, mis) - Kmo * Koo.solve(Kmo.transpose());
    const SmoothedConditional fx = structural_conditional(y, c, 0, 1, 1, 120, true);
    CHECK((fx.mean - mu_c).cwiseAbs().maxCoeff() < 1e-6 * (1.0 + mu_c.cwiseAbs().maxCoeff()));
    CHECK(((fx.sd - plug_c.diagonal().cwiseSqrt()).array() / fx.sd.array()).abs().maxCoeff() < 1e-6);
  }
  CHECK(sc.sd(last) > 1.1 * sc.sd(first));
  CHECK(sc.sd(last) > 1.2 * std::sqrt(plug(last, last)));
  CHECK(sc.sd(inner) < 1.05 * std::sqrt(plug(inner, inner)));
}

TEST_CASE("one-step innovations whiten the observed values exactly (stationary form) and are white for a level",
          "[structural]") {
  // Stationary: the standardised one-step prediction errors of the observed
  // values in time order are L^-1 (y_o - m_o) for the Cholesky factor L of
  // their dense covariance Lambda(0, 0) Gamma_oo, whatever the gaps.
  Rng rng(21);
  const int H = 40;
  StructuralCandidate c;
  c.spec = seasonal_spec();
  c.Lambda = Matrix::Constant(1, 1, 2.5);
  c.trend = Matrix(2, 1);
  c.trend << 0.3, 0.05;
  const LatentProcess p = structural_process(c.spec);
  const Matrix Gamma = gamma_of(p, H, c.spec.nugget);
  const RowMatrix mean = structural_mean(c, H);
  GaussianProcess gp(Gamma, c.Lambda, mean);
  const Batch x = gp.simulate(1, rng);
  RowMatrix y(H, 1);
  for (int t = 0; t < H; ++t) y(t, 0) = x.seq(0)[t];
  std::vector<int> obs;
  for (int t = 0; t < H; ++t) {
    if (t % 5 == 2 || (t >= 20 && t < 26)) y(t, 0) = std::nan("");  // holes and a 6-frame gap
    else obs.push_back(t);
  }
  const RowMatrix w = structural_innovations(y, c);
  REQUIRE(w.rows() == H);
  const int o = static_cast<int>(obs.size());
  Matrix K(o, o);
  Vector r(o);
  for (int a = 0; a < o; ++a) {
    r(a) = y(obs[a], 0) - mean(obs[a], 0);
    for (int b = 0; b < o; ++b) K(a, b) = c.Lambda(0, 0) * Gamma(obs[a], obs[b]);
  }
  const Vector white = K.llt().matrixL().solve(r);
  for (int a = 0; a < o; ++a) CHECK(w(obs[a], 0) == Approx(white(a)).margin(1e-8));
  for (int t = 0; t < H; ++t)
    if (std::isnan(y(t, 0))) CHECK(std::isnan(w(t, 0)));
  // Two variables: each one's own filter, at its own scale.
  StructuralCandidate c2 = c;
  c2.Lambda = Matrix(2, 2);
  c2.Lambda << 2.5, 0.4, 0.4, 0.7;
  c2.trend = Matrix(2, 2);
  c2.trend << 0.3, -1.0, 0.05, 0.0;
  RowMatrix y2(H, 2);
  y2.col(0) = y.col(0);
  y2.col(1) = (y.col(0).array() - 0.3).matrix();
  const RowMatrix w2 = structural_innovations(y2, c2);
  for (int a = 0; a < o; ++a) CHECK(w2(obs[a], 0) == Approx(white(a)).margin(1e-8));
  c.Lambda(0, 0) = 0.7;
  c.trend << -1.0, 0.0;
  const RowMatrix w1 = structural_innovations(y2.col(1), c);
  for (int t = 0; t < H; ++t)
    if (!std::isnan(w1(t, 0))) CHECK(w2(t, 1) == Approx(w1(t, 0)).margin(1e-10));

  // A local level with its true parameters: the errors after the diffuse
  // start have mean 0, variance 1 and no lag-1 correlation (T = 4,000:
  // standard errors 0.016, 0.022 and 0.016; the bounds are 4 of them).
  StructuralCandidate lv;
  lv.spec.trend = StructuralSpec::Trend::level;
  lv.spec.level_rate = 0.5;
  lv.spec.smooth_var = 1e-10;
  lv.spec.smooth_lengthscale = 1.0;
  lv.spec.nugget = 0.1;
  lv.Lambda = Matrix::Identity(1, 1);
  lv.trend = Matrix::Zero(2, 1);
  const int T = 4000;
  RowMatrix z(T, 1);
  std::normal_distribution<double> n01(0.0, 1.0);
  double level = 50.0;
  for (int t = 0; t < T; ++t) {
    level += std::sqrt(0.5) * n01(rng);
    z(t, 0) = level + std::sqrt(0.1) * n01(rng);
  }
  const RowMatrix e = structural_innovations(z, lv);
  CHECK(std::isnan(e(0, 0)));  // the level's diffuse start conditions on the first value
  double m1 = 0, m2 = 0, lag = 0;
  int n = 0;
  for (int t = 1; t < T; ++t) {
    m1 += e(t, 0);
    m2 += e(t, 0) * e(t, 0);
    if (t > 1) lag += e(t, 0) * e(t - 1, 0);
    ++n;
  }
  m1 /= n;
  CHECK(std::abs(m1) < 4 * 0.016);
  CHECK(std::abs(m2 / n - 1.0) < 4 * 0.022);
  CHECK(std::abs(lag / (n - 1)) < 4 * 0.016);
}

TEST_CASE("a local level bridges a long gap from both ends, with intervals widest in its middle", "[structural]") {
  // Level + (negligible) smooth term + nugget: inside a gap the conditional
  // mean of a random walk is the straight line between the smoothed levels at
  // its two ends, and its variance is the Brownian bridge's, largest mid-gap.
  StructuralSpec s;
  s.trend = StructuralSpec::Trend::level;
  s.level_rate = 0.5;
  s.smooth_var = 1e-10;
  s.smooth_lengthscale = 1.0;
  s.nugget = 0.1;
  StructuralCandidate c;
  c.spec = s;
  c.Lambda = Matrix::Identity(1, 1);
  c.trend = Matrix::Zero(2, 1);
  const int T = 200;
  RowMatrix y(T, 1);
  Rng rng(5);
  std::normal_distribution<double> n01(0.0, 1.0);
  double level = 50.0;  // far from zero: the stationary model would revert to it
  for (int t = 0; t < T; ++t) {
    level += std::sqrt(0.5) * n01(rng);
    y(t, 0) = level + std::sqrt(0.1) * n01(rng);
  }
  for (int t = 60; t < 140; ++t) y(t, 0) = std::nan("");
  const SmoothedConditional sc = structural_conditional(y, c, 0, 1, 1);
  REQUIRE(sc.mean.size() == 80);
  // Linear: second differences vanish.
  for (int k = 1; k + 1 < 80; ++k) CHECK(std::abs(sc.mean(k + 1) - 2 * sc.mean(k) + sc.mean(k - 1)) < 1e-6);
  // It starts and ends near the observed neighbours (within the nugget and one step).
  CHECK(std::abs(sc.mean(0) - y(59, 0)) < 3.0);
  CHECK(std::abs(sc.mean(79) - y(140, 0)) < 3.0);
  // Bridge variance: the middle's sd is about sqrt(0.5 * 40 * 40 / 80) = 3.2, the ends' about 1.
  CHECK(sc.sd(40) > 2.8);
  CHECK(sc.sd(40) < 3.6);
  CHECK(sc.sd(40) > 2.0 * sc.sd(0));
  CHECK(sc.sd(40) > 2.0 * sc.sd(79));
}

TEST_CASE("maximum likelihood recovers a simulated local level and BIC prefers it to the stationary model",
          "[structural]") {
  const int T = 3000;
  RowMatrix y(T, 1);
  Rng rng(21);
  std::normal_distribution<double> n01(0.0, 1.0);
  double level = 0.0;
  const double q = 0.04, nug = 0.25;  // signal-to-noise 0.16
  for (int t = 0; t < T; ++t) {
    level += std::sqrt(q) * n01(rng);
    y(t, 0) = level + std::sqrt(nug) * n01(rng);
  }
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int t = 0; t < T; ++t)
    if (u(rng) < 0.2) y(t, 0) = std::nan("");
  StructuralFitOptions o;
  StructuralSpec lv;
  lv.trend = StructuralSpec::Trend::level;
  StructuralSpec st;
  st.trend = StructuralSpec::Trend::none;
  o.candidates = {st, lv};
  o.threads = 1;
  const StructuralFit fit = fit_structural(y, o);
  REQUIRE(fit.candidates.size() == 2);
  CHECK(fit.chosen == 1);
  CHECK(fit.best().bic < fit.candidates[0].bic - 50.0);
  // Scale and variances are identified only as products with Lambda. The
  // smooth term (unit variance, the reference) may take part of the walk's
  // slow variation (the fitted lengthscale is long), so the checks are on the
  // noise variance and the walk's rate, each from 2,400 observations: their
  // ML estimates have relative sds near 10% here (Harvey 1989, ch. 4, for a
  // local level at signal-to-noise 0.16), so 30% and 40% bands hold for this
  // seed and fail for a model that puts the walk into the noise or back.
  const StructuralSpec& b = fit.best().spec;
  const double scale = fit.best().Lambda(0, 0);
  INFO("nugget " << b.nugget << " level " << b.level_rate << " lengthscale " << b.smooth_lengthscale << " scale "
                 << scale << " evaluations " << fit.best().evaluations);
  CHECK(scale * b.nugget == Approx(nug).epsilon(0.3));
  CHECK(scale * b.level_rate == Approx(q).epsilon(0.4));
  CHECK(fit.best().converged);
}

TEST_CASE("candidates with different diffuse starts are scored on the same values, so their BICs compare",
          "[structural]") {
  // A stationary form conditions on nothing, a level on its first value, a
  // trend on its first two: scored each on its own values, their
  // likelihoods covered different data, and in R the log-Jacobian of the
  // data's units (added per scored value) then moved the choice with the
  // units. Every candidate now scores the values after each variable's
  // first two observed ones.
  Rng rng(31);
  std::normal_distribution<double> n01(0.0, 1.0);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (const int d : {1, 2}) {
    const int T = 300;
    RowMatrix y(T, d);
    for (int j = 0; j < d; ++j) {
      double level = 0.0;
      for (int t = 0; t < T; ++t) {
        level += 0.2 * n01(rng);
        y(t, j) = level + 0.5 * n01(rng);
      }
    }
    for (int t = 0; t < T; ++t)
      for (int j = 0; j < d; ++j)
        if (t == 0 || u(rng) < 0.1) y(t, j) = std::nan("");  // the first frame missing too
    long observed = 0;
    for (int t = 0; t < T; ++t)
      for (int j = 0; j < d; ++j) observed += std::isnan(y(t, j)) ? 0 : 1;
    StructuralFitOptions o;
    o.threads = 1;
    for (const auto trend : {StructuralSpec::Trend::none, StructuralSpec::Trend::level, StructuralSpec::Trend::trend}) {
      StructuralSpec s;
      s.trend = trend;
      o.candidates.push_back(s);
    }
    const StructuralFit fit = fit_structural(y, o);
    REQUIRE(fit.candidates.size() == 3);
    INFO("d = " << d);
    // (The joint filter conditions on whole frames until 2 d values are
    // reached: 2 d or a few more.)
    for (const StructuralCandidate& c : fit.candidates) {
      CHECK(c.nobs == fit.candidates[0].nobs);
      CHECK(c.nobs <= observed - 2 * d);
      CHECK(c.nobs >= observed - 3 * d);
    }
    if (d == 2) {
      // The joint likelihood with the fitted Lambda, given the first two
      // observed values of each variable (the first two observed frames here).
      Mask mask(T, d, true);
      RowMatrix ys = y;
      for (int t = 0; t < T; ++t)
        for (int j = 0; j < d; ++j)
          if (std::isnan(ys(t, j))) {
            mask.observed[static_cast<std::size_t>(t) * d + j] = 0;
            ys(t, j) = 0.0;
          }
      for (const StructuralCandidate& c : fit.candidates) {
        const StateSpaceGP ss(structural_process(c.spec), c.spec.nugget, c.Lambda, structural_mean(c, T));
        long used = 0;
        CHECK(c.loglik == Approx(ss.log_likelihood(mask, ys.data(), &used, nullptr, 2)).epsilon(1e-10));
        CHECK(used == c.nobs);
      }
    }
  }
}

TEST_CASE("a cycle's period is fitted within its bounds and beats a fixed wrong period on BIC", "[structural]") {
  // A cycle of 37 frames whose amplitude drifts, on a random-walk level, with
  // noise and 10% missing: 54 cycles, so the period is known to a fraction of
  // a frame (the periodogram's resolution is P^2 / T = 0.7 frames). Started
  // 1.5 frames off (where a periodogram peak could put it), the fit must end
  // within 0.5 frames of 37; a form with the period fixed at the start loses.
  const int T = 2000;
  const double P = 37.0, pi = 3.14159265358979323846;
  RowMatrix y(T, 1);
  Rng rng(5);
  std::normal_distribution<double> n01(0.0, 1.0);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  double level = 0.0, amp = 1.0;
  for (int t = 0; t < T; ++t) {
    level += 0.05 * n01(rng);
    amp = std::max(0.3, amp + 0.02 * n01(rng));
    y(t, 0) = level + amp * (std::sin(2 * pi * t / P) + 0.3 * std::sin(4 * pi * t / P)) + 0.3 * n01(rng);
    if (u(rng) < 0.1) y(t, 0) = std::nan("");
  }
  StructuralSpec fixed;
  fixed.trend = StructuralSpec::Trend::level;
  fixed.seasonal = true;
  fixed.period = 35.5;
  fixed.harmonics = 3;
  fixed.season_decay = 4 * 35.5;
  fixed.season_var = 1.0;
  StructuralSpec free = fixed;
  free.period_min = 35.5 / 1.5;
  free.period_max = 35.5 * 1.5;
  CHECK(structural_parameter_count(free) == structural_parameter_count(fixed) + 1);
  StructuralFitOptions o;
  o.candidates = {fixed, free};
  o.threads = 1;
  const StructuralFit fit = fit_structural(y, o);
  const StructuralSpec& b = fit.candidates[1].spec;
  INFO("period " << b.period << " decay " << b.season_decay << " bic fixed " << fit.candidates[0].bic << " free "
                 << fit.candidates[1].bic);
  CHECK(std::abs(b.period - P) < 0.5);
  CHECK(fit.candidates[0].spec.period == 35.5);
  CHECK(fit.chosen == 1);
  CHECK(fit.candidates[1].bic < fit.candidates[0].bic - 10.0);
  // Bounds that do not hold the start are an input error.
  StructuralSpec bad = free;
  bad.period = 60.0;
  testing::require_input_error([&] { structural_process(bad); }, "model");
}

TEST_CASE("a season's harmonics: 0 (automatic) up to the period's Nyquist frequency", "[structural]") {
  // a review: -1 was read as automatic, and 100 at period 12 gave a state of
  // 204 coordinates with frequencies above Nyquist
  StructuralSpec s = seasonal_spec();
  s.period = 12.0;
  for (int k : {0, 1, 6}) {
    s.harmonics = k;
    CHECK_NOTHROW(structural_process(s));
  }
  for (int k : {-1, 7, 100}) {
    s.harmonics = k;
    testing::require_input_error([&] { structural_process(s); }, "model");
  }
}

TEST_CASE("a cycle's fitted period never leaves it below the same form with the period held at its start",
          "[structural]") {
  // Hourly-like series: a daily cycle of drifting amplitude on a random-walk
  // level, an AR(1) wander and noise, 10% missing. The period is started at
  // the truth (24), so the held form is a sub-model of the free one at its
  // start: the free fit's likelihood can only be lower if its optimiser stops
  // in a worse local optimum (the free period once ended 112.8 log-likelihood
  // units below the held one on ETTh1's oil temperature,
  // bench/results/series_cycle_two_stage_2026-12-02_one_stage.md). The core also fits the held form
  // and, when it is the better, frees the period from its optimum, which
  // makes that impossible. Fitted free from the start only, seeds 1 and 2
  // ended at -86.2 and -75.2 against the held form's -81.0 and -68.6.
  const int T = 1000;
  const double P = 24.0, pi = 3.14159265358979323846;
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    RowMatrix y(T, 1);
    Rng rng(seed);
    std::normal_distribution<double> n01(0.0, 1.0);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    double level = 0.0, amp = 1.0, ar = 0.0;
    for (int t = 0; t < T; ++t) {
      level += 0.05 * n01(rng);
      amp = std::max(0.3, amp + 0.01 * n01(rng));
      ar = 0.9 * ar + 0.2 * n01(rng);
      y(t, 0) = level + amp * (std::sin(2 * pi * t / P) + 0.3 * std::sin(4 * pi * t / P)) + ar + 0.1 * n01(rng);
      if (u(rng) < 0.1) y(t, 0) = std::nan("");
    }
    StructuralSpec held;
    held.trend = StructuralSpec::Trend::level;
    held.seasonal = true;
    held.period = P;
    held.harmonics = 3;
    held.season_envelope = 1;
    held.season_decay = 4 * P;
    held.smooth_lengthscale = 20;
    held.smooth_var = 1.0;
    held.season_var = 1.0;
    held.slope_rate = 1e-5;
    StructuralSpec free = held;
    free.period_min = P / 1.5;
    free.period_max = P * 1.5;
    StructuralFitOptions o;
    o.candidates = {held, free};
    o.threads = 1;
    o.max_evaluations = 1200;
    const StructuralFit fit = fit_structural(y, o);
    INFO("seed " << seed << ": held " << fit.candidates[0].loglik << ", free " << fit.candidates[1].loglik
                 << " at period " << fit.candidates[1].spec.period);
    CHECK(fit.candidates[1].loglik >= fit.candidates[0].loglik - 1e-6);
    CHECK(std::abs(fit.candidates[1].spec.period - P) < 0.1);
  }
}

TEST_CASE("backward draws stay on the conditional law beside a diffuse start the first frame leaves unobserved",
          "[structural][sample]") {
  // A parameter draw of the proper path (mi_pooling replication 617): a level
  // at its rate bound, a lengthscale of 1e5 and the nugget at its bound, so
  // the diffuse start is 1e10; variable 1 is missing in the first frame. The
  // backward covariance at frame 0 then cancels 1e10 against 1e10 and its
  // LDL^T gave draws 1.1e6 sds from the mean (values exact to the bit: the
  // failure needed this Lambda's last digits).
  StructuralSpec s;
  s.trend = StructuralSpec::Trend::level;
  s.level_rate = 0x1.b7cdfd9d7bdb8p-34;
  s.slope_rate = 0x1.4f8b588e368f1p-17;
  s.smooth_var = 1.0;
  s.smooth_lengthscale = 0x1.86a0000000001p+16;
  s.nugget = 0x1.3880000000005p+13;
  StructuralCandidate c;
  c.spec = s;
  c.Lambda.resize(2, 2);
  c.Lambda << 0x1.9597005e6d669p-14, 0x1.6c23180554f4fp-15, 0x1.6c23180554f4fp-15, 0x1.c900e71666d23p-14;
  c.trend = Matrix::Zero(2, 2);
  RowMatrix y(20, 2);
  Rng rng(1);
  std::normal_distribution<double> n01(0.0, 1.0);
  for (int t = 0; t < 20; ++t)
    for (int j = 0; j < 2; ++j) y(t, j) = n01(rng);
  for (int t : {0, 3, 4, 5, 6, 7}) y(t, 0) = std::nan("");
  const int Z = 400;
  const SmoothedConditional sc = structural_conditional(y, c, Z, 5, 1);
  REQUIRE(sc.mean.size() == 6);
  // Each entry's 400 draws: every one within 6 sds (a Gaussian exceeds that
  // with probability 2e-9 per draw), their mean within 4 standard errors of
  // the conditional mean and their sd within 20% of the conditional sd (its
  // standard error is 3.5% at 400 draws).
  for (Eigen::Index k = 0; k < sc.mean.size(); ++k) {
    const Vector z = (sc.samples.col(k).array() - sc.mean(k)) / sc.sd(k);
    INFO("entry " << k << " sd " << sc.sd(k) << " largest |z| " << z.cwiseAbs().maxCoeff());
    CHECK(z.cwiseAbs().maxCoeff() < 6.0);
    CHECK(std::abs(z.mean()) < 4.0 / std::sqrt(static_cast<double>(Z)));
    const double sd = std::sqrt((z.array() - z.mean()).square().sum() / (Z - 1));
    CHECK(sd > 0.8);
    CHECK(sd < 1.2);
  }
}

TEST_CASE("backward draws are continuous in the parameters: last-bit changes move them by rounding only",
          "[structural][sample]") {
  // A parameter draw of the proper path on UKLungDeaths (ldeaths, mdeaths): a
  // nearly fixed level, smooth term and season (rates and lengthscales near
  // their bounds), so the backward covariances are nearly singular. A
  // pivoted factor chose its order by their diagonals (the Lambda here is
  // that draw's rounded to 4 digits, the data simulated), and a 1e-13
  // relative change of Lambda moved the draws
  // by up to 0.31 of their sds (the same seed gave other draws when the BLAS's
  // rounding changed with the load).
  StructuralSpec s;
  s.trend = StructuralSpec::Trend::level;
  s.seasonal = true;
  s.period = 12.0;
  s.harmonics = 5;
  s.level_rate = 0x1.b7cdfd9d7bdb8p-34;
  s.slope_rate = 0x1.4f8b588e368f1p-17;
  s.smooth_var = 1.0;
  s.smooth_lengthscale = 0x1.2011cc0f2857p+13;
  s.season_var = 0x1.3322bd1b91535p-11;
  s.periodic_lengthscale = 0x1.0bf16462c9254p+2;
  s.season_decay = 0x1.d2a78fb47121bp+11;
  s.nugget = 0x1.c824cdb89a9b7p-16;
  StructuralCandidate c;
  c.spec = s;
  c.Lambda.resize(2, 2);
  c.Lambda << 2786.0, 2530.0, 2530.0, 2350.0;
  c.trend = Matrix::Zero(2, 2);
  // Data from the model's own seasonal shape, 15% of the entries and a block of variable 1 missing.
  const int T = 72;
  RowMatrix y(T, 2);
  Rng rng(4);
  std::normal_distribution<double> n01(0.0, 1.0);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int t = 0; t < T; ++t)
    for (int j = 0; j < 2; ++j) {
      y(t, j) = (1.0 + 0.2 * j) * std::sin(2.0 * 3.14159265358979 * t / 12.0) + 0.05 * n01(rng);
      if (u(rng) < 0.15 || (j == 0 && t >= 30 && t < 42)) y(t, j) = std::nan("");
    }
  const int Z = 50;
  const SmoothedConditional a = structural_conditional(y, c, Z, 1, 1);
  REQUIRE(a.mean.size() > 12);
  for (double eps : {1e-13, -1e-13, 3e-14, 1e-12}) {
    StructuralCandidate c2 = c;
    c2.Lambda *= 1.0 + eps;
    const SmoothedConditional b = structural_conditional(y, c2, Z, 1, 1);
    // Each draw's move in units of its entry's sd: measured 1.3e-4 to
    // 2.1e-4 here (the means move by 2e-7 to 1.1e-6 sds: the diffuse start's
    // rounding), against 0.014 to 0.31 with the pivoted factor.
    double worst = 0.0, worst_mean = 0.0;
    for (Eigen::Index k = 0; k < a.mean.size(); ++k) {
      worst = std::max(worst, (a.samples.col(k) - b.samples.col(k)).cwiseAbs().maxCoeff() / a.sd(k));
      worst_mean = std::max(worst_mean, std::abs(a.mean(k) - b.mean(k)) / a.sd(k));
    }
    INFO("relative change " << eps << ": largest move of a draw " << worst << " sds, of a mean " << worst_mean);
    CHECK(worst < 1e-3);
  }
}

TEST_CASE("structural models: bad input is an input error", "[structural]") {
  using testing::require_input_error;
  StructuralSpec s;
  s.seasonal = true;
  s.period = 1.0;
  require_input_error([&] { structural_process(s); }, "model");
  StructuralFitOptions o;
  o.candidates = {StructuralSpec()};
  RowMatrix y(5, 1);
  y << 1.0, std::nan(""), 3.0, 4.0, 5.0;
  require_input_error([&] { fit_structural(y, o); }, "x");  // 4 values for 4 parameters + a level
  RowMatrix inf = RowMatrix::Ones(10, 1);
  inf(3, 0) = std::numeric_limits<double>::infinity();
  require_input_error([&] { fit_structural(inf, o); }, "x");
}

TEST_CASE("one variable takes the allocation-free filter and smoother: likelihood, conditional and draws still "
          "equal the dense ones",
          "[structural]") {
  Rng rng(17);
  const int H = 60;
  const StructuralSpec s = seasonal_spec();
  const LatentProcess p = structural_process(s);
  const Matrix Lambda = Matrix::Constant(1, 1, 2.3);
  RowMatrix mean(H, 1);
  fill_standard_normal(rng, mean.data(), static_cast<std::size_t>(mean.size()));
  const Matrix Gamma = gamma_of(p, H, s.nugget);
  GaussianProcess gp(Gamma, Lambda, mean);
  const StateSpaceGP ss(p, s.nugget, Lambda, mean);
  const Mask mask = random_mask(H, 1, 0.3, rng);
  const Batch x = gp.simulate(1, rng);
  CHECK(ss.log_likelihood(mask, x.seq(0)) == Approx(dense_loglik(Gamma, Lambda, mean, mask, x.seq(0))).epsilon(1e-9));
  Vector mu, sd;
  const SmoothedConditional sc = check_against_dense(ss, gp, mask, x.seq(0), mu, sd);
  check_draws(ss, mask, x.seq(0), sc, mu, sd);
}

TEST_CASE("structural_moments gives each version's conditional moments, whatever the thread count",
          "[structural]") {
  // Versions of one series with other entries hidden (a self-calibration's
  // rounds): each version's means and sds are those of its own
  // structural_conditional() call, to the bit, on one thread or several.
  StructuralSpec s = seasonal_spec();
  s.trend = StructuralSpec::Trend::level;
  s.level_rate = 0.05;
  StructuralCandidate c;
  c.spec = s;
  const int T = 300, d = 2;
  c.Lambda = Matrix::Identity(d, d);
  c.Lambda(0, 1) = c.Lambda(1, 0) = 0.4;
  c.trend = Matrix::Zero(2, d);
  Rng rng(23);
  RowMatrix y(T, d);
  fill_standard_normal(rng, y.data(), static_cast<std::size_t>(y.size()));
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<RowMatrix> versions;
  for (int r = 0; r < 5; ++r) {
    RowMatrix v = y;
    for (int t = 0; t < T; ++t)
      for (int j = 0; j < d; ++j)
        if (u(rng) < 0.15 || (t >= 40 * r && t < 40 * r + 25)) v(t, j) = std::nan("");
    versions.push_back(v);
  }
  std::vector<SmoothedConditional> ref;
  for (const RowMatrix& v : versions) ref.push_back(structural_conditional(v, c, 0, 7, 1));
  for (const int threads : {1, 2, 3}) {
    INFO("threads " << threads);
    const std::vector<SmoothedConditional> got = structural_moments(versions, c, threads);
    REQUIRE(got.size() == versions.size());
    for (std::size_t r = 0; r < versions.size(); ++r) {
      CHECK(got[r].missing == ref[r].missing);
      CHECK(got[r].mean == ref[r].mean);
      CHECK(got[r].sd == ref[r].sd);
      CHECK(got[r].samples.size() == 0);
      CHECK(got[r].sd.minCoeff() > 0.0);
    }
  }
  // One version gets every thread: the same moments.
  const std::vector<SmoothedConditional> one = structural_moments({versions[2]}, c, 2);
  const SmoothedConditional ref2 = structural_conditional(versions[2], c, 0, 1, 2);
  CHECK(one[0].mean == ref2.mean);
  CHECK(one[0].sd == ref2.sd);
}

TEST_CASE("structural_paths gives each candidate's own draw and moments, whatever the thread count", "[structural]") {
  // Proper multiple imputation's paths: one draw under each candidate (a
  // draw of the parameters), path i from seeds[i], equal to the bit to its
  // own structural_conditional() call on one thread or several.
  StructuralSpec s = seasonal_spec();
  s.trend = StructuralSpec::Trend::level;
  const int T = 240, d = 2;
  Rng rng(31);
  RowMatrix y(T, d);
  fill_standard_normal(rng, y.data(), static_cast<std::size_t>(y.size()));
  for (int t = 100; t < 130; ++t) y(t, 0) = std::nan("");
  y(0, 1) = std::nan("");
  std::vector<StructuralCandidate> cands;
  std::vector<std::uint64_t> seeds;
  for (int k = 0; k < 4; ++k) {
    StructuralCandidate c;
    c.spec = s;
    c.spec.level_rate = 0.02 * (k + 1);
    c.Lambda = Matrix::Identity(d, d);
    c.Lambda(0, 1) = c.Lambda(1, 0) = 0.1 * k;
    c.trend = Matrix::Zero(2, d);
    cands.push_back(c);
    seeds.push_back(1000 + 17 * k);
  }
  std::vector<SmoothedConditional> ref;
  for (std::size_t k = 0; k < cands.size(); ++k) ref.push_back(structural_conditional(y, cands[k], 1, seeds[k], 1));
  for (const int threads : {1, 2, 3}) {
    INFO("threads " << threads);
    const std::vector<SmoothedConditional> got = structural_paths(y, cands, seeds, threads);
    REQUIRE(got.size() == cands.size());
    for (std::size_t k = 0; k < cands.size(); ++k) {
      CHECK(got[k].missing == ref[k].missing);
      CHECK(got[k].mean == ref[k].mean);
      CHECK(got[k].sd == ref[k].sd);
      CHECK(got[k].samples == ref[k].samples);
      REQUIRE(got[k].samples.rows() == 1);
    }
  }
  // the candidates differ, so their paths do
  CHECK(ref[0].mean != ref[3].mean);
  testing::require_input_error([&] { structural_paths(y, cands, {1, 2}, 1); }, "seeds");
  // under a memory limit that holds one path's smoother but not two, the
  // paths run one at a time (a review: memory grew with the threads), with
  // the same results
  const double n_state = d * structural_process(s).dimension();
  const double one_path = 8.0 * T * (n_state * (n_state + 1.0) / 2.0 + n_state);
  const double before = memory_limit();
  set_memory_limit(1.5 * one_path);
  const std::vector<SmoothedConditional> tight = structural_paths(y, cands, seeds, 4);
  set_memory_limit(before);
  for (std::size_t k = 0; k < cands.size(); ++k) CHECK(tight[k].samples == ref[k].samples);
}

TEST_CASE("the filter's block-wise transition: a trend, a Matern 5/2 and harmonics with a Matern 3/2 envelope "
          "equal the dense law",
          "[structural]") {
  // The filter multiplies each diagonal block of the transition on its own
  // (state_space.cpp, propagate()): a trend's 2 x 2 block with its off-diagonal
  // term, a Matern 5/2 of 3 coordinates and harmonics of 4 (envelope 2), for
  // one variable (the fixed-capacity filter) and two (the general one); the
  // level, the 2-coordinate harmonics and the smaller Matern blocks are in
  // the tests above and in test_state_space.cpp. The
  // reference is the dense covariance of the same process with a small diffuse
  // prior (10, so that it is well conditioned): Cov(f_i, f_j) = h^T A(t_i -
  // t_j) P_j h for i >= j, P_j the state's marginal covariance at frame j.
  // The likelihood leaves out the frames that start the diffuse coordinates,
  // so it is the dense log-density of all observed values minus that of those
  // frames'; the conditional moments are the dense ones.
  StructuralSpec s = seasonal_spec();
  s.trend = StructuralSpec::Trend::trend;
  s.level_rate = 0.05;
  s.slope_rate = 1e-3;
  s.season_envelope = 2;
  s.season_decay = 12.0;
  const LatentProcess p0 = structural_process(s);
  const LatentProcess p(p0.blocks(), 10.0);
  REQUIRE(p.dimension() == 2 + 3 + 4 * 3);
  const int H = 45;
  Matrix Gamma(H, H);
  {
    Matrix A, Q;
    p.transition(1.0, A, Q);
    const Vector h = p.readout();
    Matrix P = p.initial_covariance();
    std::vector<Matrix> marg;
    for (int t = 0; t < H; ++t) {
      if (t > 0) P = A * P * A.transpose() + Q;
      marg.push_back(P);
    }
    for (int j = 0; j < H; ++j) {
      Matrix Ak = Matrix::Identity(p.dimension(), p.dimension());
      for (int i = j; i < H; ++i) {
        Gamma(i, j) = Gamma(j, i) = h.dot(Ak * marg[static_cast<std::size_t>(j)] * h);
        Ak = A * Ak;
      }
    }
    Gamma.diagonal().array() += s.nugget;
  }
  for (int d : {1, 2}) {
    INFO("d = " << d);
    Rng rng(23 + d);
    const Matrix Lambda = d == 1 ? Matrix::Constant(1, 1, 1.7) : testing::random_full_rank_spd(d, rng, 0.3);
    RowMatrix mean(H, d);
    fill_standard_normal(rng, mean.data(), static_cast<std::size_t>(mean.size()));
    GaussianProcess gp(Gamma, Lambda, mean);
    const StateSpaceGP ss(p, s.nugget, Lambda, mean);
    const Mask mask = random_mask(H, d, 0.3, rng);
    const Batch x = gp.simulate(1, rng);
    // The frames the filter conditions on: the first ones with observed
    // entries until 2 d (the trend's two diffuse coordinates per variable).
    Mask first(H, d, false);
    long left = static_cast<long>(p.diffuse_count()) * d;
    for (int t = 0; t < H && left > 0; ++t) {
      long here = 0;
      for (int j = 0; j < d; ++j)
        if (mask.is_observed(t, j)) {
          first.observed[static_cast<std::size_t>(t) * d + j] = 1;
          ++here;
        }
      left -= here;
    }
    const double ll = ss.log_likelihood(mask, x.seq(0));
    CHECK(ll == Approx(dense_loglik(Gamma, Lambda, mean, mask, x.seq(0)) -
                       dense_loglik(Gamma, Lambda, mean, first, x.seq(0)))
                    .epsilon(1e-9));
    Vector mu, sd;
    check_against_dense(ss, gp, mask, x.seq(0), mu, sd);
  }
}

TEST_CASE("moments alone (the smoother's information form) equal the RTS pass's, a diffuse start handed over",
          "[structural]") {
  // Level and trend forms (diffuse starts), a seasonal of harmonics, a
  // nugget, irregular times, entries missing at random, whole frames missing
  // at the start (the diffuse frames the RTS pass takes over), inside and at
  // the end; 3 variables (state 3 x 13 or 3 x 14), and one variable with a
  // state over the fixed-capacity 20 coordinates (5 harmonics of envelope 2).
  for (auto trend : {StructuralSpec::Trend::level, StructuralSpec::Trend::trend})
    for (int d : {1, 3}) {
      StructuralSpec s = seasonal_spec();
      s.trend = trend;
      s.level_rate = 0.02;
      s.slope_rate = 1e-4;
      s.season_envelope = 2;
      if (d == 1) {
        s.period = 24.0;
        s.harmonics = 5;
      }
      const LatentProcess p = structural_process(s);
      INFO("d = " << d << ", state " << p.dimension() * d);
      if (d == 1) REQUIRE(p.dimension() > 20);
      const int H = 400;
      Rng rng(31 + d);
      const Matrix Lambda = d == 1 ? Matrix::Constant(1, 1, 1.3) : testing::random_full_rank_spd(d, rng, 0.3);
      RowMatrix mean = RowMatrix::Zero(H, d);
      Vector times(H);
      std::uniform_real_distribution<double> gap(0.5, 1.5), u(0.0, 1.0);
      times(0) = 0.0;
      for (int t = 1; t < H; ++t) times(t) = times(t - 1) + (t % 50 == 0 ? 7.0 : gap(rng));
      const StateSpaceGP ss(p, s.nugget, Lambda, mean, times);
      Mask mask(H, d, true);
      for (auto& o : mask.observed) o = u(rng) < 0.2 ? 0 : 1;
      for (int t = 0; t < H; ++t)
        if (t < 6 || (t >= 150 && t < 230) || t >= H - 12)
          for (int j = 0; j < d; ++j) mask.observed[static_cast<std::size_t>(t) * d + j] = 0;
      std::vector<double> x(static_cast<std::size_t>(H) * d);
      fill_standard_normal(rng, x.data(), x.size());
      for (int t = 0; t < H; ++t)
        for (int j = 0; j < d; ++j) x[static_cast<std::size_t>(t) * d + j] += 0.01 * t + std::sin(times(t));
      Rng r1(1), r2(1);
      const SmoothedConditional info = ss.conditional(mask, x.data(), 0, r1);
      const SmoothedConditional rts = ss.conditional(mask, x.data(), 0, r2, true);
      REQUIRE(info.missing == rts.missing);
      CHECK((info.mean - rts.mean).cwiseAbs().maxCoeff() < 1e-9 * (1.0 + rts.mean.cwiseAbs().maxCoeff()));
      CHECK(((info.sd - rts.sd).array() / rts.sd.array()).abs().maxCoeff() < 1e-9);
    }
}
