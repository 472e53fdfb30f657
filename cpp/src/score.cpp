// Nested gradient descent (the paper's Algorithm 2) and Lemma 1's counts.
// See score.hpp for the maths and the stopping rules.
#include "ditimpute/score.hpp"

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>

#include <algorithm>
#include <cmath>

namespace ditimpute {

namespace {

Vector ascending_eigenvalues(const Matrix& S) {
  Eigen::SelfAdjointEigenSolver<Matrix> es(S, Eigen::EigenvaluesOnly);
  if (es.info() != Eigen::Success) throw numeric_error("eigen-decomposition failed.");
  return es.eigenvalues();
}

// vec(G U L^T), U the (G.cols() x d) matrix whose row-major vec is u: the
// mat-vec of G (x) L in the frame-major vec order.
Vector kron_apply(const Matrix& G, const Matrix& L, const Vector& u) {
  const Eigen::Map<const RowMatrix> U(u.data(), G.cols(), L.rows());
  RowMatrix out = G * U * L.transpose();
  return Eigen::Map<const Vector>(out.data(), out.size());
}

// The blocks Sigma_obs, Sigma_cor, Sigma_miss of one pattern as mat-vecs:
// Kronecker factors for frame-level masks (never the full matrices), dense
// blocks of the observed/missing entries otherwise.
class CovarianceBlocks {
 public:
  CovarianceBlocks(const GaussianProcess& gp, const Mask& mask) : kron_(mask.frame_level()), L_(gp.Lambda()) {
    if (kron_) {
      const std::vector<int> mf = mask.missing_frames(), of = mask.observed_frames();
      oo_ = gather(gp.Gamma(), of, of);
      om_ = gather(gp.Gamma(), of, mf);
      mm_ = gather(gp.Gamma(), mf, mf);
    } else {
      const std::vector<int> me = mask.missing_entries(), oe = mask.observed_entries();
      oo_ = covariance_entries(gp, oe, oe);
      om_ = covariance_entries(gp, oe, me);
      mm_ = covariance_entries(gp, me, me);
    }
    mo_ = om_.transpose();
    // Spectrum of Sigma_obs: products of the factors' extremes when it is
    // Gamma_oo (x) Lambda (the appendix's "properties of the Kronecker product").
    const Vector eo = ascending_eigenvalues(oo_);
    lambda_min_obs = eo(0);
    lambda_max_obs = eo(eo.size() - 1);
    if (kron_) {
      const Vector el = ascending_eigenvalues(L_);
      lambda_min_obs *= el(0);
      lambda_max_obs *= el(el.size() - 1);
    }
    // ||Sigma_cor^T Sigma_obs^{-1}||_2; for frame-level masks it is A (x) I_d
    // with A = G_mo G_oo^{-1} (Lambda cancels), whose norm is ||A||_2.
    Eigen::LLT<Matrix> llt(oo_);
    if (llt.info() != Eigen::Success) throw numeric_error("Sigma_obs is not numerically positive definite.");
    const Matrix A = llt.solve(om_).transpose();
    gain = std::sqrt(std::max(0.0, ascending_eigenvalues(A * A.transpose()).maxCoeff()));
  }

  Vector obs(const Vector& u) const { return kron_ ? kron_apply(oo_, L_, u) : Vector(oo_ * u); }
  Vector cor(const Vector& s) const { return kron_ ? kron_apply(om_, L_, s) : Vector(om_ * s); }
  Vector cor_t(const Vector& u) const { return kron_ ? kron_apply(mo_, L_, u) : Vector(mo_ * u); }
  Vector miss(const Vector& s) const { return kron_ ? kron_apply(mm_, L_, s) : Vector(mm_ * s); }

  double lambda_min_obs = 0.0, lambda_max_obs = 0.0, gain = 0.0;

 private:
  bool kron_;
  Matrix L_, oo_, om_, mo_, mm_;
};

void check_time_and_tol(double t, double eps, const std::string& eps_arg) {
  if (!(std::isfinite(t) && t > 0.0)) throw input_error("t", "t must be a finite time > 0 (sigma_t = 0 at t = 0).");
  if (!(eps > 0.0 && eps < 1.0)) throw input_error(eps_arg, eps_arg + " must lie in (0, 1).");
}

long long ceil_count(double x) {
  return x >= 9.2e18 ? static_cast<long long>(9.2e18) : static_cast<long long>(std::ceil(x));
}

Lemma1Counts counts_from(const CovarianceBlocks& B, const Conditional& c, double t, double eps) {
  Lemma1Counts k;
  k.t = t;
  k.eps = eps;
  k.alpha = vp_alpha(t);
  k.sigma2 = vp_sigma2(t);
  const Vector ev = c.eigenvalues();
  k.lambda_min_cond = ev(0);
  k.lambda_max_cond = ev(ev.size() - 1);
  k.kappa_cond = k.lambda_max_cond / k.lambda_min_cond;
  k.lambda_min_obs = B.lambda_min_obs;
  k.lambda_max_obs = B.lambda_max_obs;
  k.kappa_obs = k.lambda_max_obs / k.lambda_min_obs;
  const double a2 = k.alpha * k.alpha;
  k.lambda_min_t = a2 * k.lambda_min_cond + k.sigma2;
  k.lambda_max_t = a2 * k.lambda_max_cond + k.sigma2;
  k.kappa_t = k.lambda_max_t / k.lambda_min_t;
  k.eta = 2.0 / (k.lambda_min_t + k.lambda_max_t);
  k.theta = 2.0 / (k.lambda_min_obs + k.lambda_max_obs);
  const double Hd = static_cast<double>(c.mask().H) * c.mask().d;
  const double log_aux = std::log(Hd * k.kappa_obs / (std::sqrt(k.sigma2) * eps));
  const double log_major = std::log(Hd * k.kappa_t * k.kappa_obs / eps);
  k.K_aux = ceil_count(0.5 * (k.kappa_obs + 1.0) * std::max(1.0, log_aux));
  k.K = ceil_count(k.kappa_t * std::max(1.0, log_major));
  return k;
}

// Auxiliary GD (eq. gd_inner_no_noise) on u^T Sigma_obs u / 2 - u^T b from
// u = 0: exactly `fixed` steps when fixed > 0, else until stop(u, ||residual||)
// or `max_steps`. Returns the steps taken and sets *capped when the cap hit.
template <class Stop>
long long auxiliary_gd(const CovarianceBlocks& B, const Vector& b, double theta, long long fixed, long long max_steps,
                       Stop stop, Vector& u, bool* capped) {
  u = Vector::Zero(b.size());
  long long k = 0;
  for (;; ++k) {
    if (fixed > 0 && k == fixed) break;
    // Ctrl-C stops the loops (millions of steps at a small tol: a review
    // waited past a minute with no way out).
    if ((k & 4095) == 4095) check_cancelled();
    const Vector res = B.obs(u) - b;
    if (fixed == 0) {
      if (stop(u, res.norm())) break;
      if (k == max_steps) {
        *capped = true;
        break;
      }
    }
    u -= theta * res;
  }
  return k;
}

}  // namespace

Lemma1Counts lemma1_counts(const GaussianProcess& gp, const Mask& mask, double t, double eps) {
  check_time_and_tol(t, eps, "eps");
  const auto c = make_conditional(gp, mask);
  return counts_from(CovarianceBlocks(gp, mask), *c, t, eps);
}

NestedGDResult score_nested_gd(const GaussianProcess& gp, const Mask& mask, const double* x, const Vector& v,
                               double t, const NestedGDOptions& options) {
  check_time_and_tol(t, options.tol, "tol");
  if (options.K < 0 || options.K_aux < 0 || (options.K > 0) != (options.K_aux > 0))
    throw input_error("K", "give both K and K_aux (> 0) for fixed counts, or neither.");
  if (options.max_major < 1 || options.max_aux < 1)
    throw input_error("max_major", "the iteration caps max_major and max_aux must be >= 1.");
  const auto c = make_conditional(gp, mask);  // validates the pattern
  if (v.size() != c->n_missing())
    throw input_error("v", "the state needs " + std::to_string(c->n_missing()) + " values (the missing entries), not " +
                               std::to_string(v.size()) + ".");
  const Vector mu_exact = c->mean(x);  // also validates the observed values ("x")
  const CovarianceBlocks B(gp, mask);

  NestedGDResult out;
  out.lemma = counts_from(B, *c, t, options.tol);
  const Lemma1Counts& L = out.lemma;
  out.eta = L.eta;
  out.theta = L.theta;
  const bool fixed = options.K > 0;
  const double a = L.alpha, a2 = a * a, s2 = L.sigma2, tol = options.tol;
  bool capped = false;

  // mu_cond = mu_miss + Sigma_cor^T Sigma_obs^{-1} (x_obs - mu_obs), the inverse
  // by auxiliary GD. A residual rho moves mu by <= gain ||rho|| and the score by
  // <= alpha gain ||rho|| / lambda_min_t, while ||s*|| >= ||v - alpha mu|| / lambda_max_t.
  const std::vector<int>& oe = c->observed_entries();
  const std::vector<int>& me = c->missing_entries();
  const double* mu = gp.mean().data();  // row-major H x d: vec order
  Vector y(oe.size()), mu_miss(me.size());
  for (std::size_t p = 0; p < oe.size(); ++p) y(p) = x[oe[p]] - mu[oe[p]];
  for (std::size_t k = 0; k < me.size(); ++k) mu_miss(k) = mu[me[k]];
  Vector w;
  auto mean_stop = [&](const Vector& u, double rho) {
    return a * B.gain * rho * L.kappa_t <= 0.25 * tol * (v - a * (mu_miss + B.cor_t(u))).norm();
  };
  out.mean_aux_iterations = auxiliary_gd(B, y, L.theta, options.K_aux, options.max_aux, mean_stop, w, &capped);
  const Vector r = v - a * (mu_miss + B.cor_t(w));

  // Major GD on L_t(s) = s^T M_t s / 2 + s^T r (eq. outer_gd_problem), from s = 0.
  Vector s = Vector::Zero(v.size()), u;
  long long k = 0;
  for (;; ++k) {
    if (fixed && k == options.K) break;
    if (!fixed && k == options.max_major) {
      capped = true;
      break;
    }
    if ((k & 63) == 63) check_cancelled();
    const double sn = s.norm();
    auto aux_stop = [&](const Vector&, double rho) { return a2 * B.gain * rho <= 0.25 * tol * L.lambda_min_t * sn; };
    out.aux_iterations.push_back(auxiliary_gd(B, B.cor(s), L.theta, options.K_aux, options.max_aux, aux_stop, u, &capped));
    const Vector grad = s2 * s + a2 * (B.miss(s) - B.cor_t(u)) + r;
    if (!fixed && k > 0 && grad.norm() <= 0.5 * tol * L.lambda_min_t * sn) break;
    s -= L.eta * grad;
  }
  out.major_iterations = k;
  out.aux_iterations_total = out.mean_aux_iterations;
  for (long long n : out.aux_iterations) out.aux_iterations_total += n;
  out.score = s;

  const Vector exact = c->score(v.transpose(), mu_exact, t).row(0).transpose();
  out.rel_error = (s - exact).norm() / exact.norm();
  out.converged = fixed ? out.rel_error <= tol : !capped;
  return out;
}

}  // namespace ditimpute
