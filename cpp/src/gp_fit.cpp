// ECME fit of the separable Gaussian process to windows with missing entries
// (see gp_fit.hpp). Everything per window goes through the joint precision
// Q = Gamma^{-1} (x) Lambda^{-1}: with r0 the residual x - mu with zeros at the
// m missing entries and b = (Q r0)_missing,
//   E[x_m | x_o]  = mu_m - Q_mm^{-1} b,       Cov[x_m | x_o] = Q_mm^{-1},
//   log p(x_o)    = -1/2 [n_o log 2 pi + d log|Gamma| + H log|Lambda|
//                         + log|Q_mm| + r0' Q r0 - b' Q_mm^{-1} b],
// because log|Sigma_oo| = log|Sigma| - log|Sigma_m|o| and the Schur complement
// of Q_mm in Q is Sigma_oo^{-1}. (Q r0 is vec(Gamma^{-1} R0 Lambda^{-1}) in the
// row-major vec of common.hpp.) Real windows miss few entries, so m is small;
// with heavy gaps the E-step may estimate Q_mm^{-1} from draws made with the
// Cholesky factor it needs anyway (GpFitEStep::sampled, gp_fit.hpp).
#include "ditimpute/gp_fit.hpp"
#include "gaussian_internal.hpp"
#include "lapack.hpp"

#include <Eigen/Cholesky>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <limits>
#include <mutex>
#include <string>
#include <thread>

namespace ditimpute {

namespace {

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
  std::vector<int> frame, var;  // miss[a] = frame[a] * d + var[a]
  long n_obs = 0;
};

// What the E-step needs of one window under the current parameters.
struct WindowLaw {
  double loglik = 0.0;
  RowMatrix completed;     // E[X | x_o], H x d
  Matrix cond_cov;         // Q_mm^{-1} (or its estimate), only when asked for; only the lower triangle is read
};

// Conditional law and marginal log-likelihood of one window; `want_cov` adds
// the conditional covariance (the E-step needs it, the lengthscale search not).
// With draws > 0 the covariance is estimated from that many draws of
// N(0, Q_mm^{-1}) (Y = L^{-T} Z, Z standard normal from Rng(draw_seed)):
// Y Y^T / draws, about 2 draws m^2 flops instead of the inverse's 2/3 m^3;
// unbiased (GpFitEStep::sampled).
bool window_law(const Window& w, const Vector& mu, const Factored& G, const Factored& L, bool want_cov, int draws,
                std::uint64_t draw_seed, WindowLaw& out) {
  const int H = static_cast<int>(w.x.rows());
  const int d = static_cast<int>(w.x.cols());
  RowMatrix R0 = w.x.rowwise() - mu.transpose();
  for (int k : w.miss) R0(k / d, k % d) = 0.0;
  const RowMatrix QR = G.inv * R0 * L.inv;
  const double quad = R0.cwiseProduct(QR).sum();
  double ll = static_cast<double>(w.n_obs) * detail::kLog2Pi + d * G.logdet + H * L.logdet + quad;
  out.completed = R0;
  const int m = static_cast<int>(w.miss.size());
  if (m > 0) {
    Matrix Qmm(m, m);
    Vector b(m);
    // Only the lower triangle, column by column (what the factorisations read).
    const int* fr = w.frame.data();
    const int* va = w.var.data();
    for (int c = 0; c < m; ++c) {
      b(c) = QR(fr[c], va[c]);
      const double* gc = G.inv.col(fr[c]).data();
      const double* lc = L.inv.col(va[c]).data();
      double* q = Qmm.col(c).data();
      for (int a = c; a < m; ++a) q[a] = gc[fr[a]] * lc[va[a]];
    }
    // Qmm becomes its lower Cholesky factor L (LAPACK for large m, see lapack.hpp).
    if (!detail::cholesky_in_place(Qmm)) return false;
    Vector Qb = Qmm.triangularView<Eigen::Lower>().solve(b);
    Qmm.triangularView<Eigen::Lower>().transpose().solveInPlace(Qb);
    ll += 2.0 * Qmm.diagonal().array().log().sum() - b.dot(Qb);
    for (int a = 0; a < m; ++a) out.completed(fr[a], va[a]) = -Qb(a);
    if (want_cov && draws > 0) {
      Matrix Y(m, draws);
      Rng rng(draw_seed);
      fill_standard_normal(rng, Y.data(), static_cast<std::size_t>(Y.size()));
      detail::solve_lower_transposed_in_place(Qmm, Y);
      detail::lower_outer_product(Y, 1.0 / draws, Qmm);  // Qmm's lower triangle: the estimate
      out.cond_cov.swap(Qmm);
    } else if (want_cov) {  // Q_mm^{-1} = L^{-T} L^{-1}: a triangular inverse and a triangular product, 2/3 m^3
      detail::inverse_from_cholesky_in_place(Qmm);
      out.cond_cov.swap(Qmm);
    }
  }
  out.completed.rowwise() += mu.transpose();
  out.loglik = -0.5 * ll;
  return std::isfinite(out.loglik);
}

// Threads for a pass over the windows: windows with many missing entries go
// one at a time to LAPACK, which uses every core inside each factorisation
// (at m ~ 2,000 a Cholesky pass is 2.4x and an E-step about 2x faster than
// Eigen's code with one window per core); small ones are spread over the cores.
int window_threads(const std::vector<Window>& ws) {
  std::size_t largest = 0;
  for (const Window& w : ws) largest = std::max(largest, w.miss.size());
  return detail::use_lapack(static_cast<Eigen::Index>(largest)) ? 1 : 0;
}

// Windows spread over the cores (each O(m^3), independent); the sum is
// taken in window order afterwards, so the result does not depend on the
// thread count.
double total_loglik(const std::vector<Window>& ws, const Vector& mu, const Factored& G, const Factored& L) {
  std::vector<double> ll(ws.size());
  parallel_for(static_cast<int>(ws.size()), window_threads(ws), [&](int i) {
    WindowLaw law;
    ll[i] = window_law(ws[i], mu, G, L, false, 0, 0, law) ? law.loglik : -std::numeric_limits<double>::infinity();
  });
  double s = 0.0;
  for (double v : ll) s += v;
  return std::isfinite(s) ? s : -std::numeric_limits<double>::infinity();
}

// Past a few hundred draws the exact covariance (2/3 m^3) is as cheap for
// any window large enough to want draws.
constexpr int kMaxEStepDraws = 10000;

Matrix gamma_of(const Kernel& k, int H, double nugget, const GpFitOptions& o) {
  if (o.fixed_Gamma.size() > 0) return o.fixed_Gamma;
  Matrix G = kernel_matrix(k, H);
  G.diagonal().array() += nugget;
  return G;
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
  if (o.fit_nugget && (!positive(o.nugget_lower) || !(o.nugget_upper > o.nugget_lower) || !std::isfinite(o.nugget_upper)))
    throw input_error("nugget_bounds", "the nugget's bounds must satisfy 0 < lower < upper < Inf.");
  if (o.fit_nugget && (o.nugget < o.nugget_lower || o.nugget > o.nugget_upper))
    throw input_error("nugget", "the starting nugget must lie between its bounds.");
  if (!(std::isfinite(o.ridge) && o.ridge >= 0.0)) throw input_error("ridge", "ridge must be finite and >= 0.");
  if (!(std::isfinite(o.shrinkage) && o.shrinkage >= 0.0 && o.shrinkage < 1.0))
    throw input_error("shrinkage", "shrinkage must lie in [0, 1).");
  if (o.max_iter < 1) throw input_error("max_iter", "max_iter must be at least 1.");
  if (!positive(o.tol)) throw input_error("tol", "tol must be > 0.");
  if (o.estep != GpFitEStep::exact && (o.estep_draws < 1 || o.estep_draws > kMaxEStepDraws))
    throw input_error("draws", "draws must lie between 1 and " + std::to_string(kMaxEStepDraws) + ".");
  if (!(std::isfinite(o.validation) && o.validation >= 0.0 && o.validation <= 0.5))
    throw input_error("validation", "validation must lie between 0 and 0.5.");
  if (o.patience < 1) throw input_error("patience", "patience must be at least 1.");
  if (H < 2) throw input_error("x", "windows need at least 2 frames.");
  if (o.fixed_Gamma.size() > 0 && (o.fixed_Gamma.rows() != H || o.fixed_Gamma.cols() != H))
    throw input_error("Gamma", "a fixed Gamma must be H x H with H the windows' length.");
}

}  // namespace

namespace {

// The window's missing entries (in increasing vec order) and observed count, from w.x.
void index_missing(Window& w) {
  const int d = static_cast<int>(w.x.cols());
  w.miss.clear();
  w.frame.clear();
  w.var.clear();
  w.n_obs = 0;
  for (int k = 0; k < static_cast<int>(w.x.size()); ++k) {
    if (std::isnan(w.x(k / d, k % d))) {
      w.miss.push_back(k);
      w.frame.push_back(k / d);
      w.var.push_back(k % d);
    } else {
      ++w.n_obs;
    }
  }
}

std::vector<Window> windows_of(const Batch& x) {
  std::vector<Window> ws;
  for (int i = 0; i < x.n; ++i) {
    for (int k = 0; k < x.H * x.d; ++k) {
      const double v = x.seq(i)[k];
      if (!std::isnan(v) && !std::isfinite(v))
        throw input_error("x", "window " + std::to_string(i + 1) + " holds an infinite value.");
    }
    Window w;
    w.x = x.matrix(i);
    index_missing(w);
    if (w.n_obs > 0) ws.push_back(std::move(w));  // an empty window carries no information
  }
  if (ws.empty()) throw input_error("x", "no window has an observed value.");
  return ws;
}

// An observed entry set aside for early stopping (GpFitOptions::validation).
struct HeldOut {
  int window, h, j;
  double value;
};

// Sets aside about `share` of each window's observed entries (window i from
// Rng(case_seed(case_seed(seed, kValidationStream), i)); each keeps at least
// one observed entry) and marks them missing.
std::vector<HeldOut> hold_out(std::vector<Window>& ws, double share, std::uint64_t seed) {
  std::vector<HeldOut> held;
  if (!(share > 0.0)) return held;
  const std::uint64_t stream = case_seed(seed, kValidationStream);
  for (std::size_t i = 0; i < ws.size(); ++i) {
    Window& w = ws[i];
    const int d = static_cast<int>(w.x.cols());
    Rng rng(case_seed(stream, i));
    std::vector<int> pick;
    for (int k = 0; k < static_cast<int>(w.x.size()); ++k) {
      const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;  // uniform on [0, 1)
      if (!std::isnan(w.x(k / d, k % d)) && u < share) pick.push_back(k);
    }
    if (static_cast<long>(pick.size()) >= w.n_obs) pick.pop_back();
    for (int k : pick) {
      held.push_back({static_cast<int>(i), k / d, k % d, w.x(k / d, k % d)});
      w.x(k / d, k % d) = std::numeric_limits<double>::quiet_NaN();
    }
    index_missing(w);
  }
  return held;
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

namespace {

// What the E-step leaves for the CM-steps:
//  * completed: E[X_i | x_o] of each window (H x d), and their sum;
//  * with a search over Gamma, the complete-data sufficient statistic
//    M = sum_i E[vec X_i vec X_i'] (Hd x Hd; the d x d blocks (h, h') with
//    h >= h' are kept, the diagonal blocks in full), from which the mean and
//    Lambda follow in closed form for any Gamma, and the expected
//    complete-data log-likelihood in O(H^2 d^2) whatever the gaps;
//  * otherwise (Gamma fixed) only SV = sum_i sum_{a,c} Gi(h_a, h_c)
//    Cov(x_a, x_c | x_o) e_{j_a} e_{j_c}' at the current Gi.
// No window's m x m covariance outlives its own E-step.
struct EStep {
  std::vector<RowMatrix> completed;
  RowMatrix total;  // sum_i completed[i]
  Matrix M;
  Matrix SV;
  double loglik = 0.0;  // exact marginal log-likelihood at the E-step's parameters
};

// draws > 0: each window's covariance from that many draws (window_law), window
// i's from Rng(case_seed(seed, i)).
void e_step(const std::vector<Window>& ws, const Vector& mu, const Factored& G, const Factored& L, bool moments,
            int draws, std::uint64_t seed, EStep& e) {
  const int H = static_cast<int>(G.inv.rows()), d = static_cast<int>(L.inv.rows());
  const int n = static_cast<int>(ws.size());
  std::vector<double> ll(ws.size(), 0.0);
  std::vector<char> ok(ws.size(), 0);
  e.completed.resize(ws.size());
  if (moments) {
    e.M.setZero(static_cast<Eigen::Index>(H) * d, static_cast<Eigen::Index>(H) * d);
  } else {
    e.SV.setZero(d, d);
  }
  // Windows are independent and spread over the cores; their scatter into M /
  // SV is serialised and taken in window order (a window waits for its turn),
  // so the sums, and the fit, are bit-identical whatever thread finishes
  // first. parallel_for hands windows out in increasing order, so a window
  // only waits for windows already in progress; every window takes its turn,
  // even one whose law failed or threw, so no later window waits forever.
  std::mutex lock;
  std::condition_variable turn_cv;
  int turn = 0;
  parallel_for(n, window_threads(ws), [&](int i) {
    WindowLaw law;
    std::exception_ptr error;
    try {
      ok[i] = window_law(ws[i], mu, G, L, true, draws, case_seed(seed, static_cast<std::uint64_t>(i)), law);
    } catch (...) {
      error = std::current_exception();
    }
    std::unique_lock<std::mutex> guard(lock);
    turn_cv.wait(guard, [&] { return turn == i; });
    struct NextTurn {
      int& turn;
      std::unique_lock<std::mutex>& guard;
      std::condition_variable& cv;
      ~NextTurn() {
        ++turn;
        guard.unlock();
        cv.notify_all();
      }
    } next_turn{turn, guard, turn_cv};
    if (error) std::rethrow_exception(error);
    if (!ok[i]) return;
    ll[i] = law.loglik;
    e.completed[i].swap(law.completed);
    const std::vector<int>& miss = ws[i].miss;
    const int m = static_cast<int>(miss.size());
    if (moments) {  // miss is increasing, so a >= c is the lower triangle of M
      for (int c = 0; c < m; ++c)
        for (int a = c; a < m; ++a) e.M(miss[a], miss[c]) += law.cond_cov(a, c);
    } else {
      const std::vector<int>& fr = ws[i].frame;
      const std::vector<int>& va = ws[i].var;
      for (int c = 0; c < m; ++c) {
        e.SV(va[c], va[c]) += G.inv(fr[c], fr[c]) * law.cond_cov(c, c);
        for (int a = c + 1; a < m; ++a) {
          const double v = G.inv(fr[a], fr[c]) * law.cond_cov(a, c);
          e.SV(va[a], va[c]) += v;
          e.SV(va[c], va[a]) += v;
        }
      }
    }
  });
  for (char v : ok)
    if (!v) throw numeric_error("the precision of a window's missing entries could not be factorised.");
  e.loglik = 0.0;
  for (double v : ll) e.loglik += v;  // in window order: independent of the thread count
  e.total = RowMatrix::Zero(H, d);
  for (const RowMatrix& c : e.completed) e.total += c;
  if (moments) {
    Matrix C(static_cast<Eigen::Index>(H) * d, n);
    for (int i = 0; i < n; ++i) C.col(i) = Eigen::Map<const Vector>(e.completed[i].data(), C.rows());
    e.M.selfadjointView<Eigen::Lower>().rankUpdate(C);
    for (int h = 0; h < H; ++h) {
      auto B = e.M.block(static_cast<Eigen::Index>(h) * d, static_cast<Eigen::Index>(h) * d, d, d);
      B.triangularView<Eigen::StrictlyUpper>() = B.transpose();
    }
  }
}

// The penalty on Lambda (GpFitOptions::ridge and ::shrinkage): the objective
// is the log-likelihood minus
//   (ridge n H / 2) tr(Lambda^{-1}) + (nu / 2) [log|Lambda| + tr(D Lambda^{-1})],
// the second term an inverse-Wishart prior (nu = s n H / (1 - s) for
// shrinkage s, D the diagonal target), so each CM-step's Lambda is
// (S + ridge n H I + nu D) / (n H + nu).
struct LambdaPrior {
  double ridge_total = 0.0;  // ridge n H
  double nu = 0.0;
  Vector D;                  // d, the target's diagonal (used when nu > 0)
};

double prior_penalty(const LambdaPrior& p, const Factored& L) {
  double v = 0.5 * p.ridge_total * L.inv.trace();
  if (p.nu > 0.0) v += 0.5 * p.nu * (L.logdet + p.D.dot(L.inv.diagonal()));
  return v;
}

// Closed-form maximisers of the (penalised) expected complete-data
// log-likelihood for a given Gi = Gamma^{-1}: mu by generalised least squares
// (it does not involve Lambda), then
// Lambda = (S + ridge n H I + nu D) / (n H + nu),
// S = sum_i E[(X_i - 1 mu')' Gi (X_i - 1 mu')].
// With a = Gi 1 and w = 1' a, mu = (sum_i X_i)' a / (n w) and
// S = sum_{h,h'} Gi(h, h') M_(h,h') - n w mu mu' (from M), or
// S = SV + sum_i (X_i - 1 mu')' Gi (X_i - 1 mu') (Gamma fixed).
void closed_form(const EStep& e, const Matrix& Gi, const LambdaPrior& prior, Vector& mu, Matrix& Lambda) {
  const int H = static_cast<int>(Gi.rows());
  const int d = static_cast<int>(e.total.cols());
  const double n = static_cast<double>(e.completed.size());
  const Vector a = Gi * Vector::Ones(H);
  const double w = a.sum();
  mu = e.total.transpose() * a / (n * w);
  Matrix S;
  if (e.M.size() > 0) {
    // The blocks of M (H (H + 1) / 2 of d x d, 63 MB at 30 x 132) are read once
    // an evaluation, about 48 evaluations a CM-step: two halves of the columns
    // g, each summed on its own, then added in a fixed order (so the result
    // does not depend on the thread count).
    int split = 0;
    for (long below = 0; split < H && 2 * (below + (H - split)) <= static_cast<long>(H) * (H + 1) / 2; ++split)
      below += H - split;
    Matrix part[2] = {Matrix::Zero(d, d), Matrix::Zero(d, d)};
    parallel_for(2, inside_parallel_for() ? 1 : 2, [&](int t) {
      Matrix& P = part[t];
      for (int g = t == 0 ? 0 : split; g < (t == 0 ? split : H); ++g) {
        P.noalias() += (0.5 * Gi(g, g)) * e.M.block(static_cast<Eigen::Index>(g) * d, static_cast<Eigen::Index>(g) * d, d, d);
        for (int h = g + 1; h < H; ++h)
          P.noalias() += Gi(h, g) * e.M.block(static_cast<Eigen::Index>(h) * d, static_cast<Eigen::Index>(g) * d, d, d);
      }
    });
    const Matrix P = part[0] + part[1];
    S = P + P.transpose();
    S.noalias() -= (n * w) * mu * mu.transpose();
  } else {
    S = e.SV;
    for (const RowMatrix& Xc : e.completed) {
      const RowMatrix R = Xc.rowwise() - mu.transpose();
      S.noalias() += R.transpose() * Gi * R;
    }
  }
  S.diagonal().array() += prior.ridge_total;
  if (prior.nu > 0.0) S.diagonal() += prior.nu * prior.D;
  Lambda = S / (n * H + prior.nu);
  Lambda = 0.5 * (Lambda + Lambda.transpose());
}

struct Candidate {
  double ell = 0.0, nugget = 0.0, value = -std::numeric_limits<double>::infinity();
  Vector mu;
  Matrix Lambda;
  Factored G, L;
};

// For a lengthscale and nugget: Gamma, the closed-form mu and Lambda from this
// E-step, and the value of the search's objective there (-inf where Gamma or
// Lambda is singular):
//  * exact = false (ECM): the penalised expected complete-data
//    log-likelihood, which at the closed-form Lambda is
//    -1/2 [n H d log 2 pi + n d log|Gamma| + (n H + nu) (log|Lambda| + d)]
//    (the trace term tr(Lambda^{-1} (S + ridge n H I + nu D)) is
//    (n H + nu) d there);
//  * exact = true (ECME): the exact penalised marginal log-likelihood.
Candidate candidate_at(const std::vector<Window>& ws, const EStep& e, Kernel k, double ell, double nugget,
                       const GpFitOptions& o, const LambdaPrior& prior, bool exact) {
  Candidate c;
  c.ell = ell;
  c.nugget = nugget;
  k.lengthscale = ell;
  const int H = static_cast<int>(ws[0].x.rows());
  const int d = static_cast<int>(ws[0].x.cols());
  if (!factor(gamma_of(k, H, nugget, o), c.G)) return c;
  closed_form(e, c.G.inv, prior, c.mu, c.Lambda);
  if (!factor(c.Lambda, c.L)) return c;
  const double n = static_cast<double>(ws.size());
  c.value = exact ? total_loglik(ws, c.mu, c.G, c.L) - prior_penalty(prior, c.L)
                  : -0.5 * (n * H * d * detail::kLog2Pi + n * d * c.G.logdet + (n * H + prior.nu) * (c.L.logdet + d));
  if (!std::isfinite(c.value)) c.value = -std::numeric_limits<double>::infinity();
  return c;
}

// Golden-section search of log(p) over [lo, hi] for one parameter p (`at(p)`
// evaluates the candidate); updates `best`, which it only replaces by a
// strictly better candidate, so the step never lowers the objective even if
// it is not unimodal.
template <class At>
void golden_search(double lo, double hi, At at, Candidate& best) {
  auto f = [&](double t) {
    Candidate c = at(std::exp(t));
    const double v = c.value;
    if (v > best.value) best = std::move(c);
    return v;
  };
  const double g = 0.5 * (std::sqrt(5.0) - 1.0);
  double a = std::log(lo), b = std::log(hi);
  double c = b - g * (b - a), d = a + g * (b - a);
  double fc = f(c), fd = f(d);
  while (b - a > 1e-4) {  // 1e-4 in log p: 0.01% relative, far below any standard error here
    if (fc >= fd) {
      b = d; d = c; fd = fc;
      c = b - g * (b - a); fc = f(c);
    } else {
      a = c; c = d; fc = fd;
      d = a + g * (b - a); fd = f(d);
    }
  }
}

// The CM-step: mu and Lambda in closed form, and with a search the
// lengthscale and then the nugget by one coordinate search each, starting
// from (and always including) the current values, so the objective of the
// search cannot fall: with exact = false the expected complete-data
// log-likelihood (an ECM step: the marginal likelihood cannot fall either),
// with exact = true the marginal likelihood itself (ECME).
Candidate cm_step(const std::vector<Window>& ws, const EStep& e, const Kernel& k, double ell, double nugget,
                  const GpFitOptions& o, const LambdaPrior& prior, bool exact) {
  Candidate best = candidate_at(ws, e, k, ell, nugget, o, prior, exact);
  if (o.fixed_Gamma.size() > 0) return best;
  if (o.fit_lengthscale) {
    golden_search(o.lengthscale_lower, o.lengthscale_upper,
                  [&](double p) { return candidate_at(ws, e, k, p, best.nugget, o, prior, exact); }, best);
  }
  if (o.fit_nugget) {
    golden_search(o.nugget_lower, o.nugget_upper,
                  [&](double p) { return candidate_at(ws, e, k, best.ell, p, o, prior, exact); }, best);
  }
  return best;
}

constexpr double kOmegaGrowth = 1.5;  // omega's factor after a kept step
constexpr double kOmegaMax = 16.0;

// theta + omega (c - theta) in the mean, Lambda and the logs of lengthscale
// and nugget (clamped to their bounds); false where Gamma or Lambda is then
// not positive definite.
bool extrapolate(const Candidate& c, const Vector& mu, const Matrix& Lambda, double ell, double nugget, double omega,
                 Kernel k, int H, const GpFitOptions& o, Candidate& out) {
  auto step = [omega](double from, double to, double lo, double hi) {
    return std::min(hi, std::max(lo, std::exp(std::log(from) + omega * (std::log(to) - std::log(from)))));
  };
  out.ell = c.ell == ell ? ell : step(ell, c.ell, o.lengthscale_lower, o.lengthscale_upper);
  out.nugget = c.nugget == nugget ? nugget : step(nugget, c.nugget, o.nugget_lower, o.nugget_upper);
  out.mu = mu + omega * (c.mu - mu);
  out.Lambda = Lambda + omega * (c.Lambda - Lambda);
  k.lengthscale = out.ell;
  return factor(gamma_of(k, H, out.nugget, o), out.G) && factor(out.Lambda, out.L);
}

}  // namespace

GpFitResult gp_fit_em(const Batch& x, const GpFitOptions& options) {
  check_options(options, x.H);
  const int H = x.H, d = x.d;
  std::vector<Window> ws = windows_of(x);
  const std::vector<HeldOut> held = hold_out(ws, options.validation, options.seed);
  const bool validating = !held.empty();
  GpFitResult res;
  res.kernel = options.kernel;
  res.kernel.variance = 1.0;
  res.n_validation = static_cast<long>(held.size());
  for (const Window& w : ws) res.n_observed += w.n_obs;
  const bool search = options.fixed_Gamma.size() == 0 && (options.fit_lengthscale || options.fit_nugget);
  const bool exact = search && options.search == GpFitSearch::exact;

  // Start: per-variable means and variances of the observed values, no
  // cross-correlation; the first E-step and Lambda update supply it. (A start
  // from the pairwise-complete covariances, shrunk to positive definite, was
  // tried: 19 instead of 20 iterations at BeijingAir size, 50% missing, for
  // one more pass of factorisations; not kept.)
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
    if (cnt(j) < 2)
      throw input_error("x", "variable " + std::to_string(j + 1) + " has fewer than 2 observed values" +
                                 (validating ? " once the validation entries are held out." : "."));
    mu(j) /= cnt(j);
    sq(j) = sq(j) / cnt(j) - mu(j) * mu(j);
    if (!(sq(j) > 0.0)) throw input_error("x", "variable " + std::to_string(j + 1) + " has no spread.");
  }
  Factored L;
  if (!factor(Matrix(sq.asDiagonal()), L)) throw numeric_error("the starting Lambda could not be factorised.");
  double ell = options.kernel.lengthscale;
  double nugget = options.nugget;
  Kernel k = res.kernel;
  k.lengthscale = ell;
  Factored G;
  const Matrix Gamma0 = gamma_of(k, H, nugget, options);
  if (!factor(Gamma0, G))
    throw input_error("lengthscale", "the starting lengthscale gives a numerically singular Gamma; add a nugget.");
  // The penalty's target D: the observed variances over Gamma's mean diagonal
  // at the start (an entry's variance is Gamma_hh Lambda_jj).
  LambdaPrior prior;
  const double nH = static_cast<double>(ws.size()) * H;
  prior.ridge_total = options.ridge * nH;
  prior.nu = options.shrinkage * nH / (1.0 - options.shrinkage);
  prior.D = sq / (Gamma0.trace() / H);

  std::size_t most_missing = 0;
  for (const Window& w : ws) most_missing = std::max(most_missing, w.miss.size());
  res.estep_sampled = options.estep == GpFitEStep::sampled ||
                      (options.estep == GpFitEStep::automatic && most_missing >= static_cast<std::size_t>(kAutoSampledMissing));
  const int draws = res.estep_sampled ? options.estep_draws : 0;

  // Memory: with a search, M (Hd x Hd); each thread factorises one Q_mm and
  // forms its inverse (or its draws) at a time.
  const double largest = static_cast<double>(most_missing);
  const double hd = static_cast<double>(H) * d;
  check_memory(8.0 * ((search ? hd * hd : 0.0) +
                      (4.0 * largest * largest + largest * draws) * std::max(1u, std::thread::hardware_concurrency())),
               "x",
               "the E-step's complete-data second moments (" + std::to_string(H * d) + " x " + std::to_string(H * d) +
                   ") and the conditional covariances of the windows' missing entries");

  EStep e;
  e_step(ws, mu, G, L, search, draws, options.seed, e);
  double loglik = e.loglik;
  double value = loglik - prior_penalty(prior, L);
  res.objective_trace.push_back(value);
  res.lengthscale_trace.push_back(ell);
  Matrix Lambda = Matrix(sq.asDiagonal());
  // Early stopping: the held-out entries' score after each E-step, and the
  // parameters where it was lowest.
  const Vector sd = sq.cwiseSqrt();
  auto validation_score = [&]() {
    double s = 0.0;
    for (const HeldOut& v : held) s += std::abs(e.completed[v.window](v.h, v.j) - v.value) / sd(v.j);
    return s / static_cast<double>(held.size());
  };
  struct Best {
    double ell, nugget, loglik, value, score;
    Vector mu;
    Matrix Lambda;
  } best{ell, nugget, loglik, value, 0.0, mu, Lambda};
  if (validating) {
    best.score = validation_score();
    res.validation_trace.push_back(best.score);
  }
  // Over-relaxation (Salakhutdinov & Roweis 2003): EM creeps at the rate of
  // the fraction of missing information (about 0.9 an iteration at 50% gaps),
  // so each step first tries theta + omega (theta_EM - theta); it is kept
  // only if the exact objective (from the E-step there, which the next
  // iteration needs anyway) rose, and omega then grows; otherwise the plain
  // step is taken (one E-step more) and the next step is plain. Every kept
  // step raises the objective, as EM's own do.
  double omega = 1.0;
  for (int it = 0; it < options.max_iter; ++it) {
    check_cancelled();
    Candidate c = cm_step(ws, e, res.kernel, ell, nugget, options, prior, exact);
    if (!std::isfinite(c.value)) throw numeric_error("the updated Lambda is not positive definite; raise ridge.");
    EStep next;
    double next_value = -std::numeric_limits<double>::infinity();
    const bool tried = options.accelerate && omega > 1.0;
    if (tried) {
      Candidate p;
      if (extrapolate(c, mu, Lambda, ell, nugget, omega, res.kernel, H, options, p)) {
        try {
          e_step(ws, p.mu, p.G, p.L, search, draws, options.seed, next);
          next_value = next.loglik - prior_penalty(prior, p.L);
        } catch (const numeric_error&) {
          next_value = -std::numeric_limits<double>::infinity();
        }
      }
      if (next_value > value) {
        c = std::move(p);
        omega = std::min(omega * kOmegaGrowth, kOmegaMax);
      } else {
        omega = 1.0;
      }
    }
    if (!(next_value > value)) {
      // The E-step at the new parameters gives their exact log-likelihood (the
      // monitor) and the next CM-step's statistics.
      e_step(ws, c.mu, c.G, c.L, search, draws, options.seed, next);
      next_value = next.loglik - prior_penalty(prior, c.L);
      if (options.accelerate) omega = tried ? 1.0 : kOmegaGrowth;  // after a failed try, one plain step
    }
    res.iterations = it + 1;
    const double gain = next_value - value;
    if (gain < 0.0) {  // only rounding can do this (EM and ECME steps never lower it): keep the last parameters
      res.converged = true;
      break;
    }
    ell = c.ell;
    nugget = c.nugget;
    mu = c.mu;
    Lambda = c.Lambda;
    L = std::move(c.L);
    G = std::move(c.G);
    e = std::move(next);
    loglik = e.loglik;
    value = next_value;
    res.objective_trace.push_back(value);
    res.lengthscale_trace.push_back(ell);
    if (validating) {
      const double score = validation_score();
      res.validation_trace.push_back(score);
      if (score < best.score) {
        best = Best{ell, nugget, loglik, value, score, mu, Lambda};
        res.best_iteration = res.iterations;
      } else if (res.iterations - res.best_iteration >= options.patience) {
        res.stopped_early = true;
        res.converged = true;
        break;
      }
    }
    if (gain < options.tol * static_cast<double>(res.n_observed)) {
      res.converged = true;
      break;
    }
  }
  if (validating) {  // the parameters with the lowest held-out score
    ell = best.ell;
    nugget = best.nugget;
    mu = best.mu;
    Lambda = best.Lambda;
    loglik = best.loglik;
    value = best.value;
  }
  res.kernel.lengthscale = ell;
  res.nugget = nugget;
  res.Gamma = gamma_of(res.kernel, H, nugget, options);
  res.Lambda = Lambda;
  res.mean = mu;
  res.objective = value;
  res.loglik = loglik;
  return res;
}

}  // namespace ditimpute
