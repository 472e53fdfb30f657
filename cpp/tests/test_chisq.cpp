// Weighted sums of chi-squares (Imhof): closed forms, Monte Carlo, quantiles.
#include <catch2/catch.hpp>

#include "ditimpute/chisq.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

using namespace ditimpute;

namespace {

// Closed-form P(chi^2_k <= x), the regularized lower incomplete gamma
// P(k/2, x/2) for integer k, as base - sum_j (x/2)^a_j e^{-x/2} / Gamma(a_j + 1):
//   k even: base 1,                a_j = 0, 1, ..., k/2 - 1 (Poisson sum);
//   k odd:  base erf(sqrt(x / 2)), a_j = 1/2, 3/2, ..., k/2 - 1.
// Terms are formed in logs so that k in the thousands is fine.
double chisq_cdf_closed(int k, double x) {
  if (x <= 0.0) return 0.0;
  const double h = 0.5 * x;
  double base, a;
  if (k % 2 == 0) {
    base = 1.0;
    a = 0.0;
  } else {
    base = std::erf(std::sqrt(h));
    a = 0.5;
  }
  double sum = 0.0;
  for (; a < 0.5 * k - 1e-9; a += 1.0) sum += std::exp(a * std::log(h) - h - std::lgamma(a + 1.0));
  return base - sum;
}

Vector geometric_weights(int n, double from, double to) {  // from .. to, log-spaced
  Vector w(n);
  for (int i = 0; i < n; ++i) w(i) = from * std::pow(to / from, static_cast<double>(i) / (n - 1));
  return w;
}

Vector dominant_weights() {  // one weight 1, thirty of 0.01
  Vector w = Vector::Constant(31, 0.01);
  w(0) = 1.0;
  return w;
}

// Monte Carlo draws of Q = sum_k w_k z_k^2; a run of m equal weights w is drawn
// as one w chi^2_m.
std::vector<double> draw_q(Vector w, int n, std::uint64_t seed) {
  std::sort(w.data(), w.data() + w.size());
  std::vector<std::pair<double, int>> groups;  // (weight, multiplicity)
  for (Eigen::Index k = 0; k < w.size(); ++k) {
    if (!groups.empty() && groups.back().first == w(k))
      ++groups.back().second;
    else
      groups.push_back({w(k), 1});
  }
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<std::chi_squared_distribution<double>> chisq;
  for (const auto& g : groups) chisq.emplace_back(g.second);
  std::vector<double> q(n);
  for (int i = 0; i < n; ++i) {
    double s = 0.0;
    for (std::size_t g = 0; g < groups.size(); ++g) {
      if (groups[g].second == 1) {
        const double z = normal(rng);
        s += groups[g].first * z * z;
      } else {
        s += groups[g].first * chisq[g](rng);
      }
    }
    q[i] = s;
  }
  return q;
}

std::string error_arg(const std::function<void()>& f) {
  try {
    f();
  } catch (const input_error& e) {
    return e.arg();
  }
  return "(no input_error)";
}

}  // namespace

TEST_CASE("equal weights match the chi-square cdf", "[chisq]") {
  for (int k : {1, 2, 5, 40, 768, 10000}) {
    const Vector w = Vector::Ones(k);
    double max_err = 0.0;
    std::vector<double> xs = {1e-4 * k, 0.01 * k, 0.25 * k};
    for (double c : {-4.0, -3.0, -2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0, 5.0, 8.0}) {
      const double x = k + c * std::sqrt(2.0 * k);
      if (x > 0.0) xs.push_back(x);
    }
    for (double x : xs) {
      const double got = weighted_chisq_cdf(w, x);
      const double want = chisq_cdf_closed(k, x);
      INFO("k = " << k << ", x = " << x << ", got " << got << ", want " << want);
      CHECK(std::abs(got - want) <= 1e-7);
      max_err = std::max(max_err, std::abs(got - want));
    }
    INFO("k = " << k << ": max abs error " << max_err);
    CHECK(max_err <= 1e-7);
  }
}

TEST_CASE("pairs of equal weights match the hypoexponential cdf", "[chisq]") {
  // Each weight v_k twice: Q = sum_k 2 v_k E_k with E_k ~ Exp(1), so for
  // distinct v, P(Q > x) = sum_k prod_{j != k} v_k / (v_k - v_j) exp(-x / (2 v_k)).
  const std::vector<double> v = {1.0, 0.5, 0.25, 0.1};
  Vector w(8);
  for (int k = 0; k < 4; ++k) w(2 * k) = w(2 * k + 1) = v[k];
  double max_err = 0.0;
  for (double x = 1e-3; x < 100.0; x *= 1.2) {
    double upper = 0.0;
    for (int k = 0; k < 4; ++k) {
      double c = 1.0;
      for (int j = 0; j < 4; ++j)
        if (j != k) c *= v[k] / (v[k] - v[j]);
      upper += c * std::exp(-x / (2.0 * v[k]));
    }
    max_err = std::max(max_err, std::abs(weighted_chisq_cdf(w, x) - (1.0 - upper)));
  }
  INFO("max abs error " << max_err);
  CHECK(max_err <= 1e-9);
}

TEST_CASE("a dominant weight with a negligible one is nearly chi-square 1", "[chisq]") {
  // 1 and 1e-10: slow algebraic decay of Imhof's integrand (accelerated tail).
  Vector w(2);
  w << 1.0, 1e-10;
  for (double q : {0.01, 0.5, 1.0, 3.84, 10.0}) {
    // chi2_1 <= Q <= (1 + 1e-10) chi2_1
    CHECK(weighted_chisq_cdf(w, q) == Approx(std::erf(std::sqrt(0.5 * q))).margin(1e-9));
  }
}

TEST_CASE("cdf edge cases: q <= 0, zero weights, a single weight", "[chisq]") {
  const Vector w = geometric_weights(10, 1.0, 0.1);
  CHECK(weighted_chisq_cdf(w, -1.0) == 0.0);
  CHECK(weighted_chisq_cdf(w, 0.0) == 0.0);
  CHECK(weighted_chisq_cdf(w, std::numeric_limits<double>::infinity()) == 1.0);
  // zeros are dropped
  Vector wz(12);
  wz << 0.0, w.head(5), 0.0, w.tail(5);
  for (double q : {0.5, 2.0, 5.0}) CHECK(weighted_chisq_cdf(wz, q) == Approx(weighted_chisq_cdf(w, q)).margin(1e-12));
  // all zero: Q = 0
  CHECK(weighted_chisq_cdf(Vector::Zero(3), 0.0) == 1.0);
  CHECK(weighted_chisq_cdf(Vector::Zero(3), 2.0) == 1.0);
  CHECK(weighted_chisq_cdf(Vector::Zero(3), -1.0) == 0.0);
  CHECK(weighted_chisq_quantile(Vector::Zero(3), 0.9) == 0.0);
  // a single non-zero weight: 3 chi^2_1
  Vector one(3);
  one << 0.0, 3.0, 0.0;
  CHECK(weighted_chisq_cdf(one, 3.0 * 3.841458820694124) == Approx(0.95).margin(1e-12));
  CHECK(weighted_chisq_quantile(one, 0.95) == Approx(3.0 * 3.841458820694124).epsilon(1e-8));
}

TEST_CASE("cdf and quantile are scale invariant", "[chisq]") {
  const Vector w = geometric_weights(96, 1.0, 1e-4);
  for (double c : {1e-6, 3.0, 1e5}) {
    for (double q : {0.5, 5.0, 12.0, 30.0}) {
      CHECK(weighted_chisq_cdf(c * w, c * q) == Approx(weighted_chisq_cdf(w, q)).margin(1e-12));
    }
    CHECK(weighted_chisq_quantile(c * w, 0.9) == Approx(c * weighted_chisq_quantile(w, 0.9)).epsilon(1e-9));
  }
}

TEST_CASE("unequal weights agree with Monte Carlo", "[chisq]") {
  const int n = 2000000;
  const std::vector<Vector> cases = {geometric_weights(96, 1.0, 1e-4), dominant_weights()};
  std::uint64_t seed = 20240611;
  for (const Vector& w : cases) {
    std::vector<double> q = draw_q(w, n, seed++);
    std::sort(q.begin(), q.end());
    const double mean = w.sum(), sd = std::sqrt(2.0 * w.squaredNorm());
    for (double c : {-1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0, 4.0}) {
      const double x = mean + c * sd;
      if (x <= 0.0) continue;
      const double mc = static_cast<double>(std::upper_bound(q.begin(), q.end(), x) - q.begin()) / n;
      const double cdf = weighted_chisq_cdf(w, x);
      const double se = std::sqrt(std::max(cdf * (1.0 - cdf), 1e-12) / n);
      INFO("w.size() = " << w.size() << ", x = " << x << ", imhof " << cdf << ", mc " << mc << ", se " << se);
      CHECK(std::abs(cdf - mc) <= 4.0 * se);
    }
  }
}

TEST_CASE("quantile round trip", "[chisq]") {
  const std::vector<Vector> cases = {geometric_weights(96, 1.0, 1e-4), dominant_weights(), Vector::Ones(1),
                                     Vector::Ones(2),  Vector::Ones(5), Vector::Ones(768)};
  for (const Vector& w : cases) {
    for (double p : {0.5, 0.9, 0.95, 0.99}) {
      const double q = weighted_chisq_quantile(w, p);
      const double back = weighted_chisq_cdf(w, q);
      INFO("w.size() = " << w.size() << ", p = " << p << ", q = " << q << ", cdf(q) = " << back);
      CHECK(std::abs(back - p) < 1e-6);
      CHECK(gaussian_ball_radius(w, p) == Approx(std::sqrt(q)).epsilon(1e-12));
    }
  }
  // chi^2_2 is exponential with mean 2: the quantile is -2 log(1 - p)
  CHECK(weighted_chisq_quantile(Vector::Ones(2), 0.95) == Approx(-2.0 * std::log(0.05)).epsilon(1e-8));
}

TEST_CASE("gaussian_ball_radius is the radius of an L2 ball of a Gaussian", "[chisq]") {
  // Sigma = diag(4, 1): P(||X - mu|| <= r) = P(4 z1^2 + z2^2 <= r^2).
  Vector ev(2);
  ev << 4.0, 1.0;
  const double r = gaussian_ball_radius(ev, 0.9);
  CHECK(weighted_chisq_cdf(ev, r * r) == Approx(0.9).margin(1e-9));
  // round-off negatives from an eigen-solver read as zero
  Vector ev2(3);
  ev2 << 4.0, 1.0, -1e-14;
  CHECK(gaussian_ball_radius(ev2, 0.9) == Approx(r).epsilon(1e-12));
}

TEST_CASE("input errors name the argument", "[chisq]") {
  Vector neg(3);
  neg << 1.0, -0.5, 2.0;
  Vector nan(2);
  nan << 1.0, std::numeric_limits<double>::quiet_NaN();
  Vector inf(2);
  inf << 1.0, std::numeric_limits<double>::infinity();
  const Vector ok = Vector::Ones(3);
  CHECK(error_arg([&] { weighted_chisq_cdf(neg, 1.0); }) == "weights");
  CHECK(error_arg([&] { weighted_chisq_cdf(nan, 1.0); }) == "weights");
  CHECK(error_arg([&] { weighted_chisq_cdf(inf, 1.0); }) == "weights");
  CHECK(error_arg([&] { weighted_chisq_cdf(Vector(), 1.0); }) == "weights");
  CHECK(error_arg([&] { weighted_chisq_cdf(ok, std::nan("")); }) == "q");
  CHECK(error_arg([&] { weighted_chisq_quantile(neg, 0.5); }) == "weights");
  CHECK(error_arg([&] { weighted_chisq_quantile(Vector(), 0.5); }) == "weights");
  CHECK(error_arg([&] { weighted_chisq_quantile(ok, 0.0); }) == "level");
  CHECK(error_arg([&] { weighted_chisq_quantile(ok, 1.0); }) == "level");
  CHECK(error_arg([&] { weighted_chisq_quantile(ok, std::nan("")); }) == "level");
  CHECK(error_arg([&] { gaussian_ball_radius(ok, 1.5); }) == "level");
  CHECK(error_arg([&] { gaussian_ball_radius(neg, 0.5); }) == "eigenvalues");
  CHECK(error_arg([&] { gaussian_ball_radius(Vector(), 0.5); }) == "eigenvalues");
}
