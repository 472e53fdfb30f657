// Weighted sums of chi-squares by Imhof's inversion formula (see chisq.hpp).
//
// With the weights scaled to sum to one (w_k, x = q / sum of the weights),
//   P(Q > x) = 1/2 + (1/pi) int_0^inf f(u) du,   f(u) = sin(theta(u)) / (u rho(u)),
//   theta(u) = 1/2 sum_k atan(w_k u) - x u / 2,  rho(u) = prod_k (1 + w_k^2 u^2)^{1/4}.
// Facts used below:
//  * f is analytic on [0, inf) with f(0) = (1 - x) / 2;
//  * theta'(u) = (sum_k w_k / (1 + w_k^2 u^2) - x) / 2 decreases from (1 - x)/2
//    to -x/2 (theta is concave), so on a panel [a, b] |theta'| is largest at an
//    end, and beyond u* (theta'(u*) = 0) theta decreases strictly;
//  * tail bound: for u >= U and any set S of weights (s = |S| >= 1),
//    rho(u) >= prod_{k not in S} (1 + w_k^2 U^2)^{1/4} prod_{k in S} (w_k U)^{1/2} (u/U)^{s/2},
//    hence int_U^inf |f| <= (2/s) / (that product at u = U).
// Two regimes:
//  * direct: the bound reaches the target at some U after a moderate number of
//    oscillations: integrate [0, U] by globally adaptive Gauss-Legendre
//    (20 points, error estimated against 10 points) on panels that hold at
//    most one oscillation, and drop the rest (rigorous bound);
//  * cycles: few dominant weights make |f| decay like u^{-1-s/2} with s small,
//    too slowly to truncate. Then integrate [0, U0] as above, U0 the first zero
//    of sin(theta) beyond u*, and sum the integrals over the half-cycles between
//    consecutive zeros (an alternating series with smooth decreasing terms)
//    with Wynn's epsilon algorithm, as in QUADPACK's treatment of Fourier
//    integrals.
// Weights with w_k U <= 1/2 over the whole range are folded into power sums
// (Taylor series of atan and log1p), so that the cost of one evaluation of f is
// one pass over the larger weights plus a few dozen multiply-adds.
#include "ditimpute/chisq.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace ditimpute {
namespace {

constexpr double kPi = 3.141592653589793238462643383279502884;
constexpr double kTwoPi = 2.0 * kPi;
constexpr double kInf = std::numeric_limits<double>::infinity();

// Error budget of the cdf, in probability.
constexpr double kTargetError = 1e-11;  // aimed for
constexpr double kFailError = 1e-8;     // above this estimate: numeric_error

constexpr double kMaxDirectHalfCycles = 200.0;  // else sum cycles with acceleration
constexpr int kMaxPanels = 4000;
constexpr int kMaxCycles = 2000;
constexpr int kWynnWindow = 40;  // partial sums handed to the epsilon table

// ---------------------------------------------------------------------------
// Gauss-Legendre rules on (-1, 1), nodes by Newton's method on P_n.

struct Rule {
  std::vector<double> x, w;
};

Rule gauss_legendre(int n) {
  Rule r;
  r.x.resize(n);
  r.w.resize(n);
  auto legendre = [n](double z, double& pn, double& dpn) {
    double p0 = 1.0, p1 = z;
    for (int k = 2; k <= n; ++k) {
      const double p2 = ((2.0 * k - 1.0) * z * p1 - (k - 1.0) * p0) / k;
      p0 = p1;
      p1 = p2;
    }
    pn = p1;
    dpn = n * (z * p1 - p0) / (z * z - 1.0);
  };
  for (int i = 0; i < (n + 1) / 2; ++i) {
    double z = std::cos(kPi * (i + 0.75) / (n + 0.5));
    double pn = 0.0, dpn = 1.0;
    for (int it = 0; it < 100; ++it) {
      legendre(z, pn, dpn);
      const double dz = pn / dpn;
      z -= dz;
      if (std::abs(dz) <= 1e-16) break;
    }
    legendre(z, pn, dpn);
    const double w = 2.0 / ((1.0 - z * z) * dpn * dpn);
    r.x[i] = -z;
    r.w[i] = w;
    r.x[n - 1 - i] = z;
    r.w[n - 1 - i] = w;
  }
  if (n % 2 == 1) r.x[n / 2] = 0.0;
  return r;
}

struct Rules {
  Rule coarse = gauss_legendre(10);
  Rule fine = gauss_legendre(20);
};

const Rules& rules() {
  static const Rules r;
  return r;
}

struct Estimate {
  double value = 0.0;
  double error = 0.0;
};

// 20-point rule on [a, b]; error estimated by the 10-point rule (pessimistic
// for smooth integrands: it is the error of the coarser rule).
template <class F>
Estimate gauss_panel(const F& f, double a, double b) {
  const Rules& R = rules();
  const double c = 0.5 * (a + b), h = 0.5 * (b - a);
  double fine = 0.0, coarse = 0.0;
  for (std::size_t i = 0; i < R.fine.x.size(); ++i) fine += R.fine.w[i] * f(c + h * R.fine.x[i]);
  for (std::size_t i = 0; i < R.coarse.x.size(); ++i) coarse += R.coarse.w[i] * f(c + h * R.coarse.x[i]);
  return {h * fine, std::abs(h * (fine - coarse))};
}

// Globally adaptive: bisect the panel with the largest error estimate until
// the sum of the estimates is <= tol (or max_panels is reached; the caller
// judges the returned error).
template <class F>
Estimate integrate(const F& f, const std::vector<double>& breaks, double tol, int max_panels) {
  struct Panel {
    double a, b;
    Estimate e;
  };
  std::vector<Panel> panels;
  panels.reserve(breaks.size() + 64);
  for (std::size_t i = 0; i + 1 < breaks.size(); ++i)
    if (breaks[i + 1] > breaks[i]) panels.push_back({breaks[i], breaks[i + 1], gauss_panel(f, breaks[i], breaks[i + 1])});
  for (;;) {
    double total = 0.0;
    std::size_t worst = 0;
    for (std::size_t i = 0; i < panels.size(); ++i) {
      total += panels[i].e.error;
      if (panels[i].e.error > panels[worst].e.error) worst = i;
    }
    if (panels.empty() || total <= tol || static_cast<int>(panels.size()) >= max_panels) break;
    const Panel p = panels[worst];
    const double m = 0.5 * (p.a + p.b);
    if (!(m > p.a && m < p.b)) break;  // cannot split any further
    panels[worst] = {p.a, m, gauss_panel(f, p.a, m)};
    panels.push_back({m, p.b, gauss_panel(f, m, p.b)});
  }
  Estimate out;
  for (const Panel& p : panels) {
    out.value += p.e.value;
    out.error += p.e.error;
  }
  return out;
}

// ---------------------------------------------------------------------------
// Imhof's integrand for normalised weights (sum 1) and normalised q = x.

class Imhof {
 public:
  // w: sorted decreasingly, summing to one.
  Imhof(const std::vector<double>& w, double x) : w_(w), x_(x) { big_ = w_; }

  double x() const { return x_; }

  // Fold the weights with w u_valid <= kSeriesMax into power sums, used for
  // u <= u_valid (beyond it every weight is evaluated directly).
  void use_series_below(double u_valid) {
    big_.clear();
    std::array<double, 2 * kTerms + 1> pow_sum{};  // pow_sum[j] = sum of w^j
    int n_small = 0;
    const bool ok = u_valid > 0.0 && std::isfinite(u_valid);
    for (double w : w_) {
      if (ok && w * u_valid <= kSeriesMax) {
        ++n_small;
        double pw = w;
        for (int j = 1; j <= 2 * kTerms; ++j) {
          pow_sum[j] += pw;
          pw *= w;
        }
      } else {
        big_.push_back(w);
      }
    }
    series_ = n_small > 0;
    u_valid_ = series_ ? u_valid : 0.0;
    for (int r = 0; r < kTerms; ++r) {
      c_atan_[r] = pow_sum[2 * r + 1] / (2 * r + 1);  // atan z = sum (-1)^r z^{2r+1} / (2r+1)
      c_log_[r] = pow_sum[2 * r + 2] / (r + 1);       // log1p z^2 = sum (-1)^r z^{2r+2} / (r+1)
      c_dth_[r] = pow_sum[2 * r + 1];                 // w / (1 + z^2) = sum (-1)^r w z^{2r}
    }
  }

  struct Phase {
    double theta, log_rho;
  };

  Phase phase(double u) const {
    double sa = 0.0, sl = 0.0;
    const bool series = series_ && u <= u_valid_;
    const std::vector<double>& ws = series ? big_ : w_;
    for (double w : ws) {
      const double z = w * u;
      sa += std::atan(z);
      sl += std::log1p(z * z);
    }
    if (series) {
      const double mv = -u * u;
      double ta = 0.0, tl = 0.0;
      for (int r = kTerms - 1; r >= 0; --r) {
        ta = ta * mv + c_atan_[r];
        tl = tl * mv + c_log_[r];
      }
      sa += u * ta;
      sl += -mv * tl;
    }
    return {0.5 * sa - 0.5 * x_ * u, 0.25 * sl};
  }

  double theta(double u) const { return phase(u).theta; }

  double dtheta(double u) const {
    double s = 0.0;
    const bool series = series_ && u <= u_valid_;
    const std::vector<double>& ws = series ? big_ : w_;
    for (double w : ws) {
      const double z = w * u;
      s += w / (1.0 + z * z);
    }
    if (series) {
      const double mv = -u * u;
      double t = 0.0;
      for (int r = kTerms - 1; r >= 0; --r) t = t * mv + c_dth_[r];
      s += t;
    }
    return 0.5 * (s - x_);
  }

  double operator()(double u) const {
    if (u <= 0.0) return 0.5 * (1.0 - x_);
    const Phase p = phase(u);
    return std::sin(p.theta) * std::exp(-p.log_rho) / u;
  }

  // log of the bound on int_U^inf |f(u)| du (header comment). Moving weight k
  // into S multiplies the bound by (1 + 1/(w_k U)^2)^{1/4} s / (s + 1); the best
  // S is therefore a run of the largest weights (w_ is sorted, largest first),
  // grown while that factor is below one (and never empty).
  double log_tail_bound(double U) const {
    double l = 0.0;
    for (double w : w_) {
      const double z = w * U;
      l += 0.25 * std::log1p(z * z);
    }
    int s = 0;
    for (double w : w_) {
      const double z = w * U;
      const double loss = 0.25 * std::log1p(1.0 / (z * z));
      if (s > 0 && loss >= std::log1p(1.0 / s)) break;
      l -= loss;
      ++s;
    }
    return std::log(2.0 / s) - l;
  }

 private:
  static constexpr int kTerms = 28;          // series error <= 0.5^56 relative
  static constexpr double kSeriesMax = 0.5;  // largest w u handled by series

  const std::vector<double>& w_;
  double x_;
  std::vector<double> big_;
  bool series_ = false;
  double u_valid_ = 0.0;
  std::array<double, kTerms> c_atan_{}, c_log_{}, c_dth_{};
};

// Breakpoints on [a, b_end]: panels at most doubling in length (the integrand
// decays algebraically at worst), each holding at most one oscillation
// (length * max |theta'| <= 2 pi, max at an end since theta' is monotone).
std::vector<double> panel_breaks(const Imhof& f, double a, double b_end) {
  const double x = f.x();
  const double omega_all = 0.5 * std::max(std::abs(1.0 - x), x);  // bounds |theta'| everywhere
  std::vector<double> br{a};
  while (a < b_end) {
    double b = std::min(b_end, a > 0.0 ? 2.0 * a : 1.0);
    const double da = std::abs(f.dtheta(a));
    for (int it = 0;; ++it) {
      const double om = std::max(da, std::abs(f.dtheta(b)));
      if ((b - a) * om <= kTwoPi * (1.0 + 1e-9)) break;
      if (it >= 30) {
        b = std::min(b, a + kTwoPi / omega_all);
        break;
      }
      b = a + kTwoPi / om;
    }
    if (!(b > a)) break;
    br.push_back(b);
    a = b;
  }
  return br;
}

// u* = where theta stops increasing (theta'(u*) = 0), searched below `hi`
// (returns hi when theta' >= 0 there). Returns a point with theta' <= 0 when
// one exists below hi.
double stationary_point(const Imhof& f, double hi) {
  if (f.dtheta(0.0) <= 0.0) return 0.0;
  if (std::isfinite(hi)) {
    if (f.dtheta(hi) >= 0.0) return hi;
  } else {
    hi = 1.0;
    while (f.dtheta(hi) > 0.0) {
      hi *= 2.0;
      if (hi > 1e300) throw numeric_error("weighted_chisq_cdf: no turning point of the phase");
    }
  }
  double lo = 0.0;  // u* only needs to be rough: it serves the choice of
                    // method and as a start where theta' <= 0
  for (int it = 0; it < 300 && hi - lo > 1e-6 * hi; ++it) {
    const double mid = lo > 0.0 ? std::sqrt(lo * hi) : 0.5 * hi;
    (f.dtheta(mid) > 0.0 ? lo : hi) = mid;
  }
  return hi;
}

// Root of theta(u) = target from a point r at or right of it, where theta
// decreases and is concave: Newton's iterates then move monotonically left to
// the root.
double root_from_right(const Imhof& f, double target, double r) {
  for (int it = 0; it < 100; ++it) {
    const double g = f.theta(r) - target;
    const double d = f.dtheta(r);
    if (g >= 0.0 || !(d < 0.0)) break;
    const double step = g / d;  // > 0
    r -= step;
    if (step <= 1e-15 * r) break;
  }
  return r;
}

// A point at or right of the root of theta(u) = target, u > u0 >= u*.
double right_point(const Imhof& f, double u0, double target) {
  const double d = f.dtheta(u0);
  const double th = f.theta(u0);
  if (d < 0.0) {
    // tangent from the left overestimates a concave function
    const double r = u0 + (th - target) / (-d);
    if (f.theta(r) <= target) return r;
  }
  double step = kTwoPi / f.x();
  for (int it = 0; it < 2000; ++it, step *= 2.0)
    if (f.theta(u0 + step) <= target) return u0 + step;
  throw numeric_error("weighted_chisq_cdf: cannot bracket a zero of the phase");
}

// Wynn's epsilon algorithm on partial sums s; returns the highest even-column
// entry of the last antidiagonal.
double wynn_epsilon(const std::vector<double>& s) {
  std::vector<double> prev(s.size() + 1, 0.0);
  std::vector<double> cur(s);
  double best = s.back();
  for (int k = 1; cur.size() >= 2; ++k) {
    std::vector<double> next(cur.size() - 1);
    for (std::size_t i = 0; i + 1 < cur.size(); ++i) {
      const double diff = cur[i + 1] - cur[i];
      const double scale = std::max(std::abs(cur[i + 1]), std::abs(cur[i]));
      if (!(std::abs(diff) > 4.0 * std::numeric_limits<double>::epsilon() * scale)) return best;
      next[i] = prev[i + 1] + 1.0 / diff;
    }
    prev.swap(cur);
    cur.swap(next);
    if (k % 2 == 0) {
      if (!std::isfinite(cur.back())) return best;
      best = cur.back();
    }
  }
  return best;
}

// P(Q <= x) for weights summing to one (all > 0).
double cdf_normalised(const std::vector<double>& w, double x) {
  if (!(x > 0.0)) return 0.0;
  if (!std::isfinite(x)) return 1.0;
  if (w.size() == 1) return std::erf(std::sqrt(0.5 * x));

  Imhof f(w, x);
  const double tol = kPi * kTargetError;  // in units of the integral

  // 1. Truncation point with a rigorous bound on what is left out: from the
  //    scale 1 / sqrt(sum w^2) of the Gaussian-like decay, doubling until the
  //    bound holds, then narrowed to within a factor 2^{1/8}.
  const double log_tail_tol = std::log(0.25 * tol);
  double s2 = 0.0;
  for (double wk : w) s2 += wk * wk;
  double U = 1.0 / std::sqrt(s2);
  double U_fail = 0.0;  // largest U known to fail the bound
  while (f.log_tail_bound(U) > log_tail_tol) {
    U_fail = U;
    U *= 2.0;
    if (U > 1e280) {
      U = kInf;
      break;
    }
  }
  if (std::isfinite(U)) {
    if (U_fail == 0.0) {
      while (U > 1e-3 && f.log_tail_bound(0.5 * U) <= log_tail_tol) U *= 0.5;
      U_fail = 0.5 * U;
    }
    for (int it = 0; it < 3; ++it) {
      const double mid = std::sqrt(U_fail * U);
      (f.log_tail_bound(mid) <= log_tail_tol ? U : U_fail) = mid;
    }
    f.use_series_below(U);
  }

  // 2. Direct or cycles: count the half-oscillations on [0, U].
  const double ustar = stationary_point(f, U);
  const bool direct =
      std::isfinite(U) && (ustar >= U || f.theta(ustar) - f.theta(U) <= kMaxDirectHalfCycles * kPi);

  double integral = 0.0, error = 0.0;
  if (direct) {
    const Estimate head = integrate(f, panel_breaks(f, 0.0, U), 0.25 * tol, kMaxPanels);
    integral = head.value;
    error = head.error + 0.25 * tol;
  } else {
    // First zero of sin(theta) at or beyond u*, where theta decreases.
    const double n0 = std::floor(f.theta(ustar) / kPi);
    double u = ustar;
    if (f.theta(ustar) != n0 * kPi) u = root_from_right(f, n0 * kPi, right_point(f, ustar, n0 * kPi));
    const double u_valid = std::isfinite(U) ? std::min(U, u + 400.0 * kPi / x) : u + 400.0 * kPi / x;
    f.use_series_below(u_valid);

    const Estimate head = integrate(f, panel_breaks(f, 0.0, u), 0.25 * tol, kMaxPanels);
    error = head.error;

    std::vector<double> sums;
    std::vector<double> estimates;
    double partial = 0.0, quad_error = 0.0, tail = kInf, tail_error = kInf;
    for (int j = 1; j <= kMaxCycles; ++j) {
      const double target = (n0 - j) * kPi;
      const double un = root_from_right(f, target, right_point(f, u, target));
      const Estimate c = integrate(f, {u, un}, 1e-3 * tol, 64);
      partial += c.value;
      quad_error += c.error;
      u = un;
      sums.push_back(partial);
      if (u >= U) {  // the rest is below the rigorous bound
        tail = partial;
        tail_error = 0.25 * tol;
        break;
      }
      if (sums.size() < 3) continue;
      const std::size_t n = std::min<std::size_t>(sums.size(), kWynnWindow);
      estimates.push_back(wynn_epsilon(std::vector<double>(sums.end() - n, sums.end())));
      const std::size_t k = estimates.size();
      if (k >= 3) {
        const double e = std::abs(estimates[k - 1] - estimates[k - 2]) + std::abs(estimates[k - 2] - estimates[k - 3]);
        if (e < tail_error) {
          tail_error = e;
          tail = estimates[k - 1];
        }
        if (e <= 0.25 * tol && j >= 6) break;
      }
    }
    integral = head.value + tail;
    error += quad_error + tail_error;
  }

  if (!std::isfinite(integral) || !(error / kPi <= kFailError))
    throw numeric_error("weighted_chisq_cdf: Imhof's integral did not reach the required accuracy (estimate " +
                        std::to_string(error / kPi) + ")");
  return std::min(1.0, std::max(0.0, 0.5 - integral / kPi));
}

// Validated weights without zeros, scaled to sum to one, sorted decreasingly;
// scale = the sum.
struct Normalised {
  std::vector<double> w;
  double scale = 1.0;
};

Normalised normalise(const Vector& weights, const std::string& arg) {
  if (weights.size() == 0) throw input_error(arg, arg + " must not be empty");
  double wmax = 0.0;
  for (Eigen::Index i = 0; i < weights.size(); ++i) {
    const double w = weights(i);
    if (!std::isfinite(w)) throw input_error(arg, arg + " must be finite");
    if (w < 0.0) throw input_error(arg, arg + " must be >= 0");
    wmax = std::max(wmax, w);
  }
  Normalised out;
  if (wmax == 0.0) return out;
  double sum = 0.0;  // of w / wmax: no overflow
  for (Eigen::Index i = 0; i < weights.size(); ++i) sum += weights(i) / wmax;
  for (Eigen::Index i = 0; i < weights.size(); ++i) {
    const double w = weights(i) / wmax / sum;
    if (w > 0.0) out.w.push_back(w);
  }
  std::sort(out.w.begin(), out.w.end(), std::greater<double>());
  out.scale = wmax * sum;
  return out;
}

double normal_quantile(double p) {  // by bisection on erfc: only a start value
  double lo = -40.0, hi = 40.0;
  for (int it = 0; it < 80; ++it) {
    const double mid = 0.5 * (lo + hi);
    (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

}  // namespace

double weighted_chisq_cdf(const Vector& weights, double q) {
  const Normalised n = normalise(weights, "weights");
  if (std::isnan(q)) throw input_error("q", "q must not be NaN");
  if (q < 0.0) return 0.0;
  if (n.w.empty()) return 1.0;
  return cdf_normalised(n.w, q / n.scale);
}

double weighted_chisq_quantile(const Vector& weights, double p) {
  if (!(p > 0.0 && p < 1.0)) throw input_error("level", "level must lie in (0, 1)");
  const Normalised n = normalise(weights, "weights");
  if (n.w.empty()) return 0.0;
  auto g = [&](double x) { return cdf_normalised(n.w, x) - p; };

  // Start: the Satterthwaite chi-square (mean 1, variance 2 sum w^2) by
  // Wilson-Hilferty; then bracket, expanding in steps of a fraction of the sd.
  double s2 = 0.0;
  for (double w : n.w) s2 += w * w;
  const double sd = std::sqrt(2.0 * s2);
  const double wh = 2.0 * s2 / 9.0;  // 2 / (9 nu), nu = 1 / s2
  const double t = 1.0 - wh + normal_quantile(p) * std::sqrt(wh);
  double x0 = t > 0.0 ? t * t * t : 0.0;
  if (!(x0 > 1e-3)) x0 = 1e-3;

  double lo, hi, glo, ghi;
  double expand = 0.1 * sd;
  const double g0 = g(x0);
  if (g0 == 0.0) return x0 * n.scale;
  if (g0 < 0.0) {
    lo = x0;
    glo = g0;
    for (int it = 0;; ++it, expand *= 2.0) {
      hi = lo + expand;
      ghi = g(hi);
      if (ghi >= 0.0) break;
      lo = hi;
      glo = ghi;
      if (it > 2000) throw numeric_error("weighted_chisq_quantile: cannot bracket");
    }
  } else {
    hi = x0;
    ghi = g0;
    for (int it = 0;; ++it, expand *= 2.0) {
      lo = std::max(hi - expand, 0.5 * hi);
      glo = g(lo);
      if (glo <= 0.0) break;
      hi = lo;
      ghi = glo;
      if (it > 2000) throw numeric_error("weighted_chisq_quantile: cannot bracket");
    }
  }

  // Brent's root search on [lo, hi] (g(lo) <= 0 <= g(hi)). b: best point so
  // far, c: a point where g has the other sign, a: the previous b. Steps by
  // inverse quadratic interpolation through a, b, c (the secant when a == c),
  // kept only when they fall well inside [b, c] and shrink faster than
  // bisection would over two steps; bisection otherwise.
  const double ftol = 1e-10;
  const double eps = std::numeric_limits<double>::epsilon();
  double a = lo, ga = glo, b = hi, gb = ghi, c = a, gc = ga;
  double step = b - a, step_before = step;
  for (int it = 0; it < 200; ++it) {
    if ((gb > 0.0) == (gc > 0.0)) {  // keep the root between b and c
      c = a;
      gc = ga;
      step = step_before = b - a;
    }
    if (std::abs(gc) < std::abs(gb)) {  // b the best point
      a = b;
      b = c;
      c = a;
      ga = gb;
      gb = gc;
      gc = ga;
    }
    const double tol1 = 2.0 * eps * std::abs(b);
    const double half = 0.5 * (c - b);
    if (std::abs(gb) <= ftol || std::abs(half) <= tol1) return b * n.scale;
    if (std::abs(step_before) >= tol1 && std::abs(ga) > std::abs(gb)) {
      double num, den;
      const double s = gb / ga;
      if (a == c) {
        num = 2.0 * half * s;
        den = 1.0 - s;
      } else {
        const double qa = ga / gc, r = gb / gc;
        num = s * (2.0 * half * qa * (qa - r) - (b - a) * (r - 1.0));
        den = (qa - 1.0) * (r - 1.0) * (s - 1.0);
      }
      if (num > 0.0) den = -den;
      num = std::abs(num);
      if (2.0 * num < std::min(3.0 * half * den - std::abs(tol1 * den), std::abs(step_before * den))) {
        step_before = step;
        step = num / den;
      } else {
        step = step_before = half;
      }
    } else {
      step = step_before = half;
    }
    a = b;
    ga = gb;
    b += std::abs(step) > tol1 ? step : (half > 0.0 ? tol1 : -tol1);
    gb = g(b);
  }
  if (std::abs(gb) > 1e-7) throw numeric_error("weighted_chisq_quantile: root search did not converge");
  return b * n.scale;
}

double gaussian_ball_radius(const Vector& eigenvalues, double level) {
  if (eigenvalues.size() == 0) throw input_error("eigenvalues", "eigenvalues must not be empty");
  if (!eigenvalues.allFinite()) throw input_error("eigenvalues", "eigenvalues must be finite");
  const double emax = eigenvalues.maxCoeff();
  Vector w = eigenvalues;
  for (Eigen::Index i = 0; i < w.size(); ++i) {
    if (w(i) < 0.0) {
      if (w(i) < -1e-10 * std::max(emax, 0.0)) throw input_error("eigenvalues", "eigenvalues must be >= 0");
      w(i) = 0.0;
    }
  }
  return std::sqrt(weighted_chisq_quantile(w, level));
}

}  // namespace ditimpute
