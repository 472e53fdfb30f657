// ECME fit of the separable Gaussian process to windows with missing entries
// (see gp_fit.hpp). Everything per window goes through the joint precision
// Q = Gamma^{-1} (x) Lambda^{-1}: with r0 the residual x - mu with zeros at the
// m missing entries and b = (Q r0)_missing,
//   E[x_m | x_o]  = mu_m - Q_mm^{-1} b,       Cov[x_m | x_o] = Q_mm^{-1},
//   log p(x_o)    = -1/2 [n_o log 2 pi + d log|Gamma| + H log|Lambda|
//                         + log|Q_mm| + r0' Q r0 - b' Q_mm^{-1} b],
// because log|Sigma_oo| = log|Sigma| - log|Sigma_m|o| and the Schur complement
// of Q_mm in Q is Sigma_oo^{-1}. (Q r0 is vec(Gamma^{-1} R0 Lambda^{-1}) in the
// row-major vec of common.hpp.) Real windows miss few entries, so m is small.
#include "ditimpute/gp_fit.hpp"

#include <Eigen/Cholesky>

#include <cmath>
#include <limits>
#include <string>

namespace ditimpute {

namespace {

constexpr double kLog2Pi = 1.83787706640934548356;

// Inverse and log-determinant of an SPD matrix.
struct Factored {
  Matrix inv;
  double logdet = 0.0;
};

bool factor(const Matrix& S, Factored& out) {
  Eigen::LLT<Matrix> llt(S);
  if (llt.info() != Eigen::Success) return false;
  out.inv = llt.solve(Matrix::Identity(S.rows(), S.cols()));
  out.logdet = 2.0 * llt.matrixLLT().diagonal().array().log().sum();
  return out.inv.allFinite() && std::isfinite(out.logdet);
}

struct Window {
  RowMatrix x;             // H x d, NaN at missing entries
  std::vector<int> miss;   // 0-based vec indices (h * d + j) of missing entries
  long n_obs = 0;
};

// What the E-step needs of one window under the current parameters.
struct WindowLaw {
  double loglik = 0.0;
  RowMatrix completed;     // E[X | x_o], H x d
  Matrix cond_cov;         // Q_mm^{-1}, only when asked for
};

// Conditional law and marginal log-likelihood of one window; `want_cov` adds
// the conditional covariance (the E-step needs it, the lengthscale search not).
bool window_law(const Window& w, const Vector& mu, const Factored& G, const Factored& L, bool want_cov,
                WindowLaw& out) {
  const int H = static_cast<int>(w.x.rows());
  const int d = static_cast<int>(w.x.cols());
  RowMatrix R0 = w.x.rowwise() - mu.transpose();
  for (int k : w.miss) R0(k / d, k % d) = 0.0;
  const RowMatrix QR = G.inv * R0 * L.inv;
  const double quad = R0.cwiseProduct(QR).sum();
  double ll = static_cast<double>(w.n_obs) * kLog2Pi + d * G.logdet + H * L.logdet + quad;
  out.completed = R0;
  const int m = static_cast<int>(w.miss.size());
  if (m > 0) {
    Matrix Qmm(m, m);
    Vector b(m);
    for (int a = 0; a < m; ++a) {
      const int ha = w.miss[a] / d, ja = w.miss[a] % d;
      b(a) = QR(ha, ja);
      for (int c = 0; c <= a; ++c) {
        const int hc = w.miss[c] / d, jc = w.miss[c] % d;
        Qmm(a, c) = Qmm(c, a) = G.inv(ha, hc) * L.inv(ja, jc);
      }
    }
    Eigen::LLT<Matrix> llt(Qmm);
    if (llt.info() != Eigen::Success) return false;
    const Vector Qb = llt.solve(b);
    ll += 2.0 * llt.matrixLLT().diagonal().array().log().sum() - b.dot(Qb);
    for (int a = 0; a < m; ++a) out.completed(w.miss[a] / d, w.miss[a] % d) = -Qb(a);
    if (want_cov) out.cond_cov = llt.solve(Matrix::Identity(m, m));
  }
  out.completed.rowwise() += mu.transpose();
  out.loglik = -0.5 * ll;
  return std::isfinite(out.loglik);
}

double total_loglik(const std::vector<Window>& ws, const Vector& mu, const Factored& G, const Factored& L) {
  double s = 0.0;
  WindowLaw law;
  for (const Window& w : ws) {
    if (!window_law(w, mu, G, L, false, law)) return -std::numeric_limits<double>::infinity();
    s += law.loglik;
  }
  return s;
}

Matrix gamma_of(const Kernel& k, int H, double nugget) {
  Matrix G = kernel_matrix(k, H);
  G.diagonal().array() += nugget;
  return G;
}

// Log-likelihood as a function of the lengthscale (mu, Lambda fixed);
// -inf where Gamma is numerically singular.
double loglik_at(const std::vector<Window>& ws, Kernel k, double lengthscale, double nugget, const Vector& mu,
                 const Factored& L) {
  k.lengthscale = lengthscale;
  Factored G;
  if (!factor(gamma_of(k, static_cast<int>(ws[0].x.rows()), nugget), G))
    return -std::numeric_limits<double>::infinity();
  return total_loglik(ws, mu, G, L);
}

// Golden-section search of log(lengthscale) over [lo, hi]; returns the best
// point seen, which is `start` unless another one is strictly better (so the
// step never lowers the likelihood even if it is not unimodal).
double best_lengthscale(const std::vector<Window>& ws, const Kernel& k, double nugget, const Vector& mu,
                        const Factored& L, double lo, double hi, double start, double& best_ll) {
  const double g = 0.5 * (std::sqrt(5.0) - 1.0);
  double a = std::log(lo), b = std::log(hi);
  double best = start;
  best_ll = loglik_at(ws, k, start, nugget, mu, L);
  auto f = [&](double t) {
    const double v = loglik_at(ws, k, std::exp(t), nugget, mu, L);
    if (v > best_ll) {
      best_ll = v;
      best = std::exp(t);
    }
    return v;
  };
  double c = b - g * (b - a), e = a + g * (b - a);
  double fc = f(c), fe = f(e);
  while (b - a > 1e-4) {  // 1e-4 in log lengthscale: 0.01% relative, far below its standard error
    if (fc >= fe) {
      b = e; e = c; fe = fc;
      c = b - g * (b - a); fc = f(c);
    } else {
      a = c; c = e; fc = fe;
      e = a + g * (b - a); fe = f(e);
    }
  }
  return best;
}

void check_options(const GpFitOptions& o, int H) {
  auto positive = [](double v) { return std::isfinite(v) && v > 0.0; };
  if (!positive(o.lengthscale_lower)) throw input_error("lower", "the lengthscale's lower bound must be > 0.");
  if (!positive(o.lengthscale_upper) || o.lengthscale_upper <= o.lengthscale_lower)
    throw input_error("upper", "the lengthscale's upper bound must be finite and above the lower bound.");
  if (!positive(o.kernel.lengthscale) || o.kernel.lengthscale < o.lengthscale_lower ||
      o.kernel.lengthscale > o.lengthscale_upper)
    throw input_error("lengthscale", "the starting lengthscale must lie between the lower and upper bounds.");
  if (!(std::isfinite(o.nugget) && o.nugget >= 0.0)) throw input_error("nugget", "nugget must be finite and >= 0.");
  if (o.max_iter < 1) throw input_error("max_iter", "max_iter must be at least 1.");
  if (!positive(o.tol)) throw input_error("tol", "tol must be > 0.");
  if (H < 2) throw input_error("x", "windows need at least 2 frames.");
}

}  // namespace

namespace {

std::vector<Window> windows_of(const Batch& x) {
  std::vector<Window> ws;
  for (int i = 0; i < x.n; ++i) {
    Window w;
    w.x = x.matrix(i);
    for (int k = 0; k < x.H * x.d; ++k) {
      const double v = x.seq(i)[k];
      if (std::isnan(v)) {
        w.miss.push_back(k);
      } else if (!std::isfinite(v)) {
        throw input_error("x", "window " + std::to_string(i + 1) + " holds an infinite value.");
      } else {
        ++w.n_obs;
      }
    }
    if (w.n_obs > 0) ws.push_back(std::move(w));  // an empty window carries no information
  }
  if (ws.empty()) throw input_error("x", "no window has an observed value.");
  return ws;
}

}  // namespace

double gp_marginal_loglik(const Batch& x, const Matrix& Gamma, const Matrix& Lambda, const Vector& mean) {
  const GaussianProcess gp(Gamma, Lambda, RowMatrix::Zero(Gamma.rows(), Lambda.rows()));  // validates
  if (x.H != gp.H() || x.d != gp.d()) throw input_error("x", "windows do not match the sizes of Gamma and Lambda.");
  if (mean.size() != gp.d()) throw input_error("mean", "mean must hold one value per variable.");
  Factored G, L;
  if (!factor(Gamma, G) || !factor(Lambda, L)) throw numeric_error("Gamma or Lambda could not be factorised.");
  return total_loglik(windows_of(x), mean, G, L);
}

GpFitResult gp_fit_em(const Batch& x, const GpFitOptions& options) {
  check_options(options, x.H);
  const int H = x.H, d = x.d;
  const std::vector<Window> ws = windows_of(x);
  const double n = static_cast<double>(ws.size());
  GpFitResult res;
  res.kernel = options.kernel;
  res.kernel.variance = 1.0;
  for (const Window& w : ws) res.n_observed += w.n_obs;

  // Start: per-variable means and variances of the observed values, no
  // cross-correlation; EM supplies it in the first Lambda step.
  Vector mu = Vector::Zero(d), sq = Vector::Zero(d), cnt = Vector::Zero(d);
  for (const Window& w : ws)
    for (int h = 0; h < H; ++h)
      for (int j = 0; j < d; ++j)
        if (!std::isnan(w.x(h, j))) {
          mu(j) += w.x(h, j);
          sq(j) += w.x(h, j) * w.x(h, j);
          cnt(j) += 1.0;
        }
  for (int j = 0; j < d; ++j) {
    if (cnt(j) < 2) throw input_error("x", "variable " + std::to_string(j + 1) + " has fewer than 2 observed values.");
    mu(j) /= cnt(j);
    sq(j) = sq(j) / cnt(j) - mu(j) * mu(j);
    if (!(sq(j) > 0.0)) throw input_error("x", "variable " + std::to_string(j + 1) + " has no spread.");
  }
  Matrix Lambda = sq.asDiagonal();
  double ell = options.kernel.lengthscale;

  Factored L;
  if (!factor(Lambda, L)) throw numeric_error("the starting Lambda could not be factorised.");
  double ll = loglik_at(ws, res.kernel, ell, options.nugget, mu, L);
  res.loglik_trace.push_back(ll);
  res.lengthscale_trace.push_back(ell);

  std::vector<RowMatrix> completed(ws.size());
  for (int it = 0; it < options.max_iter; ++it) {
    // E-step at the current parameters.
    Kernel k = res.kernel;
    k.lengthscale = ell;
    Factored G;
    if (!factor(gamma_of(k, H, options.nugget), G)) throw numeric_error("Gamma could not be factorised.");
    Matrix corr = Matrix::Zero(d, d);  // sum_i E[cov part of (X - mu)^T Gamma^{-1} (X - mu)]
    WindowLaw law;
    for (std::size_t i = 0; i < ws.size(); ++i) {
      if (!window_law(ws[i], mu, G, L, true, law))
        throw numeric_error("the precision of a window's missing entries could not be factorised.");
      completed[i] = law.completed;
      const std::vector<int>& miss = ws[i].miss;
      for (std::size_t a = 0; a < miss.size(); ++a)
        for (std::size_t c = 0; c < miss.size(); ++c)
          corr(miss[a] % d, miss[c] % d) += G.inv(miss[a] / d, miss[c] / d) * law.cond_cov(a, c);
    }
    // CM-step 1: mu by generalised least squares (it does not involve Lambda),
    // then Lambda in closed form at that mu.
    const Vector w1 = G.inv * Vector::Ones(H);
    Vector mu_new = Vector::Zero(d);
    for (const RowMatrix& Xc : completed) mu_new += Xc.transpose() * w1;
    mu = mu_new / (n * w1.sum());
    Matrix S = corr;
    for (const RowMatrix& Xc : completed) {
      const RowMatrix R = Xc.rowwise() - mu.transpose();
      S += R.transpose() * G.inv * R;
    }
    Lambda = S / (n * H);
    Lambda = 0.5 * (Lambda + Lambda.transpose());
    if (!factor(Lambda, L)) throw numeric_error("the updated Lambda is not positive definite.");
    // CM-step 2: the lengthscale on the exact likelihood (ECME).
    double ll_new;
    if (options.fit_lengthscale) {
      ell = best_lengthscale(ws, res.kernel, options.nugget, mu, L, options.lengthscale_lower,
                             options.lengthscale_upper, ell, ll_new);
    } else {
      ll_new = loglik_at(ws, res.kernel, ell, options.nugget, mu, L);
    }
    res.loglik_trace.push_back(ll_new);
    res.lengthscale_trace.push_back(ell);
    res.iterations = it + 1;
    const double gain = ll_new - ll;
    ll = ll_new;
    if (gain < options.tol * static_cast<double>(res.n_observed)) {
      res.converged = true;
      break;
    }
  }
  res.kernel.lengthscale = ell;
  res.Gamma = gamma_of(res.kernel, H, options.nugget);
  res.Lambda = Lambda;
  res.mean = mu;
  res.loglik = ll;
  return res;
}

}  // namespace ditimpute
