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
#include <sstream>
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
  if (o.fixed_Gamma.size() > 0) {
    // a C++ field (R has no such argument), named as such
    const Matrix& G = o.fixed_Gamma;
    if (G.rows() != H || G.cols() != H)
      throw input_error("fixed_Gamma", "a fixed Gamma must be H x H with H the windows' length.");
    if (!G.allFinite()) throw input_error("fixed_Gamma", "a fixed Gamma must hold finite values.");
    // a review: an asymmetric one was fitted with and returned as given
    const double tol = 1e-10 * G.cwiseAbs().maxCoeff();  // relative, as GaussianProcess judges it
    if ((G - G.transpose()).cwiseAbs().maxCoeff() > tol)
      throw input_error("fixed_Gamma", "a fixed Gamma must be symmetric (a covariance).");
  }
}

// The error when the starting Gamma cannot be factorised: the nugget's when
// there is none (a smooth kernel, "rbf" at its default start, needs one; a
// review: gp_fit(x, kernel = "rbf") blamed a lengthscale the call had not
// given), else the lengthscale's, unless Gamma was given.
[[noreturn]] void singular_start(const GpFitOptions& o) {
  if (o.fixed_Gamma.size() > 0)
    throw input_error("fixed_Gamma", "the fixed Gamma is not positive definite (numerically singular).");
  std::ostringstream ell;
  ell << o.kernel.lengthscale;
  if (o.nugget <= 0.0)
    throw input_error("nugget", "the kernel at the starting lengthscale " + ell.str() +
                                    " gives a numerically singular Gamma without a nugget: give one (e.g. nugget = "
                                    "1e-4, or fit_nugget = TRUE) or a shorter starting lengthscale.");
  throw input_error("lengthscale", "the starting lengthscale " + ell.str() +
                                       " gives a numerically singular Gamma; a larger nugget or a shorter starting "
                                       "lengthscale keeps it positive definite.");
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
  Matrix TV;  // with time_moments: sum_i sum_{a,c} Li(j_a, j_c) Cov(x_a, x_c | x_o) e_{h_a} e_{h_c}' (H x H)
  double loglik = 0.0;  // exact marginal log-likelihood at the E-step's parameters
};

// draws > 0: each window's covariance from that many draws (window_law), window
// i's from Rng(case_seed(seed, i)).
void e_step(const std::vector<Window>& ws, const Vector& mu, const Factored& G, const Factored& L, bool moments,
            int draws, std::uint64_t seed, EStep& e, bool time_moments = false) {
  const int H = static_cast<int>(G.inv.rows()), d = static_cast<int>(L.inv.rows());
  const int n = static_cast<int>(ws.size());
  std::vector<double> ll(ws.size(), 0.0);
  std::vector<char> ok(ws.size(), 0);
  e.completed.resize(ws.size());
  if (moments) {
    e.M.setZero(static_cast<Eigen::Index>(H) * d, static_cast<Eigen::Index>(H) * d);
  } else {
    e.SV.setZero(d, d);
    if (time_moments) e.TV.setZero(H, H);
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
    } else if (time_moments) {  // SV and TV in one pass over the lower triangle
      const std::vector<int>& fr = ws[i].frame;
      const std::vector<int>& va = ws[i].var;
      for (int c = 0; c < m; ++c) {
        const double* cc = law.cond_cov.col(c).data();
        const double* gc = G.inv.col(fr[c]).data();
        const double* lc = L.inv.col(va[c]).data();
        double* sv = e.SV.col(va[c]).data();
        double* tv = e.TV.col(fr[c]).data();
        sv[va[c]] += 0.5 * gc[fr[c]] * cc[c];  // halved: doubled by the mirror image
        tv[fr[c]] += 0.5 * lc[va[c]] * cc[c];
        for (int a = c + 1; a < m; ++a) {  // the upper triangle's mirror image is added after the pass
          sv[va[a]] += gc[fr[a]] * cc[a];
          tv[fr[a]] += lc[va[a]] * cc[a];
        }
      }
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
  if (!moments && time_moments) {
    e.SV = Matrix(e.SV + e.SV.transpose());
    e.TV = Matrix(e.TV + e.TV.transpose());
  }
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
  Lambda = 0.5 * (Lambda + Lambda.transpose()).eval();  // eval(): the lazy sum would read entries already written
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

namespace {

// The windows with each variable's observed mean taken out (NaN, missing,
// stays NaN), and those means. The model's mean is a free parameter, so the
// fit of the centred windows is the fit of the windows with the mean shifted
// back: the same likelihood, Lambda, lengthscale and nugget. Uncentred, data
// whose level dwarfs their spread (a level of 1e7 with sd 1) lost their
// second moments to cancellation: Lambda's correlation gone, the lengthscale
// stuck at its start, or a false error (a user review).
Batch centred(const Batch& x, Vector& centre) {
  centre = Vector::Zero(x.d);
  Vector count = Vector::Zero(x.d);
  for (int i = 0; i < x.n; ++i)
    for (int h = 0; h < x.H; ++h)
      for (int j = 0; j < x.d; ++j) {
        const double v = x.at(i, h, j);
        if (std::isfinite(v)) {
          centre(j) += v;
          count(j) += 1.0;
        }
      }
  for (int j = 0; j < x.d; ++j) centre(j) = count(j) > 0 ? centre(j) / count(j) : 0.0;
  Batch out = x;
  for (int i = 0; i < x.n; ++i)
    for (int h = 0; h < x.H; ++h)
      for (int j = 0; j < x.d; ++j) out.at(i, h, j) -= centre(j);
  return out;
}

GpFitResult gp_fit_em_centred(const Batch& x, const GpFitOptions& options);
GpFitResult gp_fit_lbfgs_centred(const Batch& x, const GpFitOptions& options);

}  // namespace

GpFitResult gp_fit_em(const Batch& x, const GpFitOptions& options) {
  Vector centre;
  GpFitResult res = gp_fit_em_centred(centred(x, centre), options);
  if (res.mean.size() == centre.size()) res.mean += centre;
  return res;
}

GpFitResult gp_fit_lbfgs(const Batch& x, const GpFitOptions& options) {
  Vector centre;
  GpFitResult res = gp_fit_lbfgs_centred(centred(x, centre), options);
  if (res.mean.size() == centre.size()) res.mean += centre;
  return res;
}

namespace {

GpFitResult gp_fit_em_centred(const Batch& x, const GpFitOptions& options) {
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
  if (!factor(Gamma0, G)) singular_start(options);
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

}  // namespace

namespace {

// d Gamma / d log(lengthscale), entry by entry: with u = r / lengthscale the
// kernel's derivative in log(lengthscale) is -u dk/du (the nugget does not move).
Matrix kernel_dlog_lengthscale(const Kernel& k, int H) {
  constexpr double kPi = 3.14159265358979323846;
  const Embedding& e = k.embedding;
  Matrix D(H, H);
  for (int i = 0; i < H; ++i)
    for (int j = 0; j <= i; ++j) {
      const double r = e.kind == Embedding::Kind::index ? (i - j) * e.scale
                                                         : 2.0 * e.radius * std::abs(std::sin(kPi * (i - j) / e.period));
      const double u = r / k.lengthscale;
      double v = 0.0;
      switch (k.type) {
        case KernelType::laplace: v = u * std::exp(-u); break;                 // k = exp(-u)
        case KernelType::rbf: v = u * u * std::exp(-0.5 * u * u); break;       // k = exp(-u^2 / 2)
        case KernelType::matern32: {                                           // k = (1 + s) exp(-s), s = sqrt(3) u
          const double t = std::sqrt(3.0) * u;
          v = t * t * std::exp(-t);
          break;
        }
        case KernelType::matern52: {                                           // k = (1 + s + s^2 / 3) exp(-s), s = sqrt(5) u
          const double t = std::sqrt(5.0) * u;
          v = t * t * (1.0 + t) / 3.0 * std::exp(-t);
          break;
        }
      }
      D(i, j) = D(j, i) = k.variance * v;
    }
  return D;
}

// The windows, the start (observed means and variances) and the penalty, as gp_fit_em sets them up.
struct FitSetup {
  std::vector<Window> ws;
  Vector mu0, var0;
  LambdaPrior prior;
  long n_observed = 0;
  int H = 0, d = 0;
};

FitSetup setup_of(const Batch& x, const GpFitOptions& o) {
  check_options(o, x.H);
  FitSetup s;
  s.H = x.H;
  s.d = x.d;
  s.ws = windows_of(x);
  for (const Window& w : s.ws) s.n_observed += w.n_obs;
  Vector sum = Vector::Zero(s.d), sq = Vector::Zero(s.d), cnt = Vector::Zero(s.d);
  for (const Window& w : s.ws)
    for (int h = 0; h < s.H; ++h)
      for (int j = 0; j < s.d; ++j)
        if (!std::isnan(w.x(h, j))) {
          sum(j) += w.x(h, j);
          sq(j) += w.x(h, j) * w.x(h, j);
          cnt(j) += 1.0;
        }
  s.mu0 = Vector(s.d);
  s.var0 = Vector(s.d);
  for (int j = 0; j < s.d; ++j) {
    if (cnt(j) < 2) throw input_error("x", "variable " + std::to_string(j + 1) + " has fewer than 2 observed values.");
    s.mu0(j) = sum(j) / cnt(j);
    s.var0(j) = sq(j) / cnt(j) - s.mu0(j) * s.mu0(j);
    if (!(s.var0(j) > 0.0)) throw input_error("x", "variable " + std::to_string(j + 1) + " has no spread.");
  }
  Kernel k = o.kernel;
  k.variance = 1.0;
  const Matrix Gamma0 = gamma_of(k, s.H, o.nugget, o);
  const double nH = static_cast<double>(s.ws.size()) * s.H;
  s.prior.ridge_total = o.ridge * nH;
  s.prior.nu = o.shrinkage * nH / (1.0 - o.shrinkage);
  s.prior.D = s.var0 / (Gamma0.trace() / s.H);
  return s;
}

struct Params {
  Vector mu;
  Matrix Lambda;
  double ell = 1.0, nugget = 0.0;
};

// The penalised objective and its exact gradient at p (Fisher's identity: the
// gradient of the expected complete-data log-likelihood at the E-step's own
// parameters). With R_i = E[X_i | x_o] - 1 mu', a = Gamma^{-1} 1,
//   S = sum_i E[(X_i - 1 mu')' Gamma^{-1} (X_i - 1 mu')]   (d x d),
//   T = sum_i E[(X_i - 1 mu') Lambda^{-1} (X_i - 1 mu')']  (H x H),
//   d/d mu     = Lambda^{-1} sum_i R_i' a,
//   d/d Lambda = 1/2 Lambda^{-1} (S + ridge n H I + nu D) Lambda^{-1} - (n H + nu) / 2 Lambda^{-1},
//   d/d Gamma  = 1/2 Gamma^{-1} T Gamma^{-1} - n d / 2 Gamma^{-1},
// the last contracted with d Gamma / d log(lengthscale) and nugget I. The
// conditional covariances enter S and T through e_step's SV and TV.
struct Eval {
  bool ok = false;
  double objective = -std::numeric_limits<double>::infinity(), loglik = 0.0;
  Vector g_mu;
  Matrix G_Lambda;
  double g_ell = 0.0, g_nug = 0.0;
  // Complete-data information: n w (for mu, times Lambda^{-1}), n H + nu (for
  // Lambda), and the diagonal for log(lengthscale) and log(nugget).
  double nw = 0.0, nH_nu = 0.0, info_ell = 0.0, info_nug = 0.0;
  // The ECM step's closed-form mean and Lambda from this E-step (Gamma fixed).
  Vector em_mu;
  Matrix em_Lambda;
};

Eval evaluate(const FitSetup& s, const GpFitOptions& o, const Params& p) {
  Eval ev;
  const int H = s.H, d = s.d;
  Kernel k = o.kernel;
  k.variance = 1.0;
  k.lengthscale = p.ell;
  Factored G, L;
  if (!factor(gamma_of(k, H, p.nugget, o), G) || !factor(p.Lambda, L)) return ev;
  EStep e;
  try {
    e_step(s.ws, p.mu, G, L, false, 0, 0, e, true);
  } catch (const numeric_error&) {
    return ev;
  }
  if (!std::isfinite(e.loglik)) return ev;
  const double n = static_cast<double>(s.ws.size());
  const Vector a = G.inv * Vector::Ones(H);
  Matrix S = e.SV, T = e.TV;
  Vector r = Vector::Zero(d);
  for (const RowMatrix& Xc : e.completed) {
    const Matrix R = Xc.rowwise() - p.mu.transpose();
    S.noalias() += R.transpose() * (G.inv * R);
    T.noalias() += R * (L.inv * R.transpose());
    r.noalias() += R.transpose() * a;
  }
  const LambdaPrior& pr = s.prior;
  ev.loglik = e.loglik;
  ev.objective = e.loglik - prior_penalty(pr, L);
  ev.nH_nu = n * H + pr.nu;
  ev.nw = n * a.sum();
  S.diagonal().array() += pr.ridge_total;
  if (pr.nu > 0.0) S.diagonal() += pr.nu * pr.D;
  ev.G_Lambda = 0.5 * L.inv * S * L.inv - 0.5 * ev.nH_nu * L.inv;
  ev.G_Lambda = 0.5 * (ev.G_Lambda + ev.G_Lambda.transpose()).eval();
  ev.g_mu = L.inv * r;
  // ECM with Gamma fixed: mu-hat = mu + r / (n w), and S at mu-hat is S - n w (mu-hat - mu)(mu-hat - mu)'.
  const Vector dmu = r / ev.nw;
  ev.em_mu = p.mu + dmu;
  ev.em_Lambda = (S - ev.nw * dmu * dmu.transpose()) / ev.nH_nu;
  ev.em_Lambda = 0.5 * (ev.em_Lambda + ev.em_Lambda.transpose()).eval();
  if (o.fixed_Gamma.size() == 0) {
    Matrix GG = 0.5 * G.inv * T * G.inv - 0.5 * n * d * G.inv;
    GG = 0.5 * (GG + GG.transpose()).eval();
    const Matrix Dl = kernel_dlog_lengthscale(k, H);
    ev.g_ell = GG.cwiseProduct(Dl).sum();
    ev.g_nug = p.nugget * GG.trace();
    const Matrix X = G.inv * Dl;
    ev.info_ell = 0.5 * n * d * X.cwiseProduct(X.transpose()).sum();
    ev.info_nug = 0.5 * n * d * p.nugget * p.nugget * G.inv.squaredNorm();
  }
  ev.ok = std::isfinite(ev.objective) && ev.G_Lambda.allFinite() && ev.g_mu.allFinite() && std::isfinite(ev.g_ell) &&
          std::isfinite(ev.g_nug);
  return ev;
}

// sqrt(g' I_c^{-1} g) over the parameters fitted (block-diagonal complete-data
// information); a kernel parameter held at a bound by a gradient pointing
// out of it does not count.
double gradient_norm(const Eval& ev, const Params& p, const GpFitOptions& o, bool fit_ell, bool fit_nug) {
  const Matrix GL = ev.G_Lambda * p.Lambda;
  double v = 2.0 / ev.nH_nu * GL.cwiseProduct(GL.transpose()).sum() + ev.g_mu.dot(p.Lambda * ev.g_mu) / ev.nw;
  auto free_dir = [](double g, double x, double lo, double hi) {
    return !((x <= lo * (1.0 + 1e-12) && g < 0.0) || (x >= hi * (1.0 - 1e-12) && g > 0.0));
  };
  if (fit_ell && ev.info_ell > 0.0 && free_dir(ev.g_ell, p.ell, o.lengthscale_lower, o.lengthscale_upper))
    v += ev.g_ell * ev.g_ell / ev.info_ell;
  if (fit_nug && ev.info_nug > 0.0 && free_dir(ev.g_nug, p.nugget, o.nugget_lower, o.nugget_upper))
    v += ev.g_nug * ev.g_nug / ev.info_nug;
  return std::sqrt(std::max(v, 0.0));
}

// Coordinates of the quasi-Newton search, whitened by the complete-data
// information at a reference point (mu_r, Lambda_r = C C', ell_r, nugget_r):
//   mu = mu_r + C u / sqrt(n w),
//   Lambda = C T T' C',  T_jj = 1 + z / sqrt(2 (n H + nu)),  T_jk = z / sqrt(n H + nu)  (j > k),
//   log ell = log ell_r + z / sqrt(I_ell),  log nugget likewise,
// so that at the reference the expected complete-data log-likelihood has
// about unit curvature in every coordinate and a unit step along the
// gradient is about an EM step.
struct Coords {
  Vector mu_r;
  Matrix C;
  double ell_r = 1.0, nug_r = 0.0;
  double s_mu = 1.0, s_diag = 1.0, s_off = 1.0, s_ell = 1.0, s_nug = 1.0;
  bool fit_ell = false, fit_nug = false;
  int d = 0;
  int size() const { return d + d * (d + 1) / 2 + (fit_ell ? 1 : 0) + (fit_nug ? 1 : 0); }
};

Coords coords_at(const Params& p, const Eval& ev, bool fit_ell, bool fit_nug) {
  Coords c;
  c.d = static_cast<int>(p.mu.size());
  c.mu_r = p.mu;
  Eigen::LLT<Matrix> llt(p.Lambda);
  c.C = llt.matrixL();
  c.ell_r = p.ell;
  c.nug_r = p.nugget;
  c.s_mu = std::sqrt(ev.nw);
  c.s_diag = std::sqrt(2.0 * ev.nH_nu);
  c.s_off = std::sqrt(ev.nH_nu);
  c.fit_ell = fit_ell && ev.info_ell > 0.0;
  c.fit_nug = fit_nug && ev.info_nug > 0.0;
  c.s_ell = c.fit_ell ? std::sqrt(ev.info_ell) : 1.0;
  c.s_nug = c.fit_nug ? std::sqrt(ev.info_nug) : 1.0;
  return c;
}

Matrix t_of(const Coords& c, const Vector& z) {
  const int d = c.d;
  Matrix T = Matrix::Zero(d, d);
  int q = d;
  for (int k = 0; k < d; ++k)
    for (int j = k; j < d; ++j) T(j, k) = j == k ? 1.0 + z(q++) / c.s_diag : z(q++) / c.s_off;
  return T;
}

// Parameters at z; lengthscale and nugget clamped to their bounds (and z with them).
Params params_of(const Coords& c, Vector& z, const Params& base, const GpFitOptions& o) {
  const int d = c.d;
  Params p;
  p.mu = c.mu_r + c.C * z.head(d) / c.s_mu;
  const Matrix A = c.C * t_of(c, z);
  p.Lambda = A * A.transpose();
  p.ell = base.ell;
  p.nugget = base.nugget;
  int q = d + d * (d + 1) / 2;
  if (c.fit_ell) {
    const double v = std::min(std::log(o.lengthscale_upper), std::max(std::log(o.lengthscale_lower), std::log(c.ell_r) + z(q) / c.s_ell));
    z(q) = (v - std::log(c.ell_r)) * c.s_ell;
    p.ell = std::exp(v);
    ++q;
  }
  if (c.fit_nug) {
    const double v = std::min(std::log(o.nugget_upper), std::max(std::log(o.nugget_lower), std::log(c.nug_r) + z(q) / c.s_nug));
    z(q) = (v - std::log(c.nug_r)) * c.s_nug;
    p.nugget = std::exp(v);
  }
  return p;
}

// The gradient of the objective in z at a point with factor T; a kernel
// parameter at a bound with its gradient pointing out gets 0 (a projected step).
Vector gradient_z(const Coords& c, const Vector& z, const Eval& ev, const Params& p, const GpFitOptions& o) {
  const int d = c.d;
  Vector g(c.size());
  g.head(d) = c.C.transpose() * ev.g_mu / c.s_mu;
  const Matrix T = t_of(c, z);
  const Matrix GT = 2.0 * c.C.transpose() * ev.G_Lambda * c.C * T;  // d objective / d T
  int q = d;
  for (int k = 0; k < d; ++k)
    for (int j = k; j < d; ++j) g(q++) = GT(j, k) / (j == k ? c.s_diag : c.s_off);
  auto outward = [](double gv, double x, double lo, double hi) {
    return (x <= lo * (1.0 + 1e-12) && gv < 0.0) || (x >= hi * (1.0 - 1e-12) && gv > 0.0);
  };
  if (c.fit_ell) {
    g(q) = outward(ev.g_ell, p.ell, o.lengthscale_lower, o.lengthscale_upper) ? 0.0 : ev.g_ell / c.s_ell;
    ++q;
  }
  if (c.fit_nug) g(q) = outward(ev.g_nug, p.nugget, o.nugget_lower, o.nugget_upper) ? 0.0 : ev.g_nug / c.s_nug;
  return g;
}

}  // namespace

GpFitGradient gp_fit_gradient(const Batch& x, const GpFitOptions& options, double lengthscale, double nugget,
                              const Vector& mean, const Matrix& Lambda) {
  const FitSetup s = setup_of(x, options);
  if (mean.size() != s.d) throw input_error("mean", "mean must hold one value per variable.");
  if (Lambda.rows() != s.d || Lambda.cols() != s.d) throw input_error("Lambda", "Lambda must be d x d.");
  Params p{mean, Lambda, lengthscale, nugget};
  const Eval ev = evaluate(s, options, p);
  if (!ev.ok) throw numeric_error("the log-likelihood or its gradient is not finite at these parameters.");
  GpFitGradient g;
  g.objective = ev.objective;
  g.loglik = ev.loglik;
  g.mean = ev.g_mu;
  g.Lambda = ev.G_Lambda;
  g.log_lengthscale = ev.g_ell;
  g.log_nugget = ev.g_nug;
  const bool search = options.fixed_Gamma.size() == 0;
  g.gradient_norm = gradient_norm(ev, p, options, search && options.fit_lengthscale, search && options.fit_nugget);
  return g;
}

namespace {

GpFitResult gp_fit_lbfgs_centred(const Batch& x, const GpFitOptions& options) {
  if (options.validation != 0.0)
    throw input_error("validation", "early stopping (validation > 0) works with the EM fit only, not with L-BFGS.");
  if (!(std::isfinite(options.gradient_tol) && options.gradient_tol > 0.0))
    throw input_error("gradient_tol", "gradient_tol must be > 0.");
  if (options.lbfgs_memory < 1) throw input_error("lbfgs_memory", "lbfgs_memory must be at least 1.");
  if (options.lbfgs_refresh < 0) throw input_error("lbfgs_refresh", "lbfgs_refresh must be >= 0.");
  const FitSetup s = setup_of(x, options);
  const int H = s.H, d = s.d;
  const bool search = options.fixed_Gamma.size() == 0;
  const bool fit_ell = search && options.fit_lengthscale, fit_nug = search && options.fit_nugget;
  const double hd = static_cast<double>(H) * d;
  std::size_t most_missing = 0;
  for (const Window& w : s.ws) most_missing = std::max(most_missing, w.miss.size());
  const double largest = static_cast<double>(most_missing);
  check_memory(8.0 * (hd * s.ws.size() + 4.0 * largest * largest * std::max(1u, std::thread::hardware_concurrency())),
               "x", "the conditional covariances of the windows' missing entries");

  GpFitResult res;
  res.kernel = options.kernel;
  res.kernel.variance = 1.0;
  res.n_observed = s.n_observed;
  res.estep_sampled = false;

  Params p{s.mu0, Matrix(s.var0.asDiagonal()), options.kernel.lengthscale, options.nugget};
  {
    Kernel k = res.kernel;
    Factored G;
    if (!factor(gamma_of(k, H, p.nugget, options), G)) singular_start(options);
  }
  Eval ev = evaluate(s, options, p);
  res.evaluations = 1;
  if (!ev.ok) throw numeric_error("the log-likelihood is not finite at the start.");
  res.objective_trace.push_back(ev.objective);
  res.lengthscale_trace.push_back(p.ell);
  res.gradient_trace.push_back(gradient_norm(ev, p, options, fit_ell, fit_nug));

  // Warm-up: ECM steps from the same E-steps (the closed-form mean and Lambda
  // at the current Gamma, with a scoring step in the log lengthscale and
  // nugget, kept only if the objective rose; else Gamma stays). Far from the
  // maximum they move Lambda much further than a quasi-Newton step in
  // coordinates whitened at a diagonal start (measured on BeijingAir at 10%
  // missing: L-BFGS from the start was still far below after 100 iterations
  // where ECM had converged in 47). They stop once the gains shrink
  // geometrically (ratio above kWarmRatio, the slow phase where EM creeps)
  // or after lbfgs_em_steps, and the quasi-Newton search starts whitened at
  // that point.
  constexpr double kWarmRatio = 0.5;
  double last_gain = std::numeric_limits<double>::infinity();
  int it0 = 0;
  for (; it0 < options.lbfgs_em_steps && it0 < options.max_iter; ++it0) {
    check_cancelled();
    auto kernel_step = [](double x, double g, double info, double lo, double hi) {
      if (!(info > 0.0)) return x;
      const double t = std::max(-0.5, std::min(0.5, g / info));
      return std::min(hi, std::max(lo, x * std::exp(t)));
    };
    Params q{ev.em_mu, ev.em_Lambda, p.ell, p.nugget};
    if (fit_ell) q.ell = kernel_step(p.ell, ev.g_ell, ev.info_ell, options.lengthscale_lower, options.lengthscale_upper);
    if (fit_nug) q.nugget = kernel_step(p.nugget, ev.g_nug, ev.info_nug, options.nugget_lower, options.nugget_upper);
    Eval eq = evaluate(s, options, q);
    ++res.evaluations;
    if ((!eq.ok || !(eq.objective > ev.objective)) && (q.ell != p.ell || q.nugget != p.nugget)) {
      q.ell = p.ell;
      q.nugget = p.nugget;
      eq = evaluate(s, options, q);
      ++res.evaluations;
    }
    if (!eq.ok || !(eq.objective > ev.objective)) break;
    const double gain = eq.objective - ev.objective;
    p = std::move(q);
    ev = std::move(eq);
    res.iterations = it0 + 1;
    res.objective_trace.push_back(ev.objective);
    res.lengthscale_trace.push_back(p.ell);
    res.gradient_trace.push_back(gradient_norm(ev, p, options, fit_ell, fit_nug));
    const bool slow = gain > kWarmRatio * last_gain;
    last_gain = gain;
    if (slow || res.gradient_trace.back() < options.gradient_tol) {
      ++it0;
      break;
    }
  }

  Coords c = coords_at(p, ev, fit_ell, fit_nug);
  Vector z = Vector::Zero(c.size());
  Vector g = gradient_z(c, z, ev, p, options);  // of the objective (to be maximised)
  double gn = gradient_norm(ev, p, options, fit_ell, fit_nug);
  std::vector<Vector> S_mem, Y_mem;  // s_k = z_{k+1} - z_k, y_k = -(g_{k+1} - g_k) (minimisation convention)
  std::vector<double> rho;
  int since_refresh = 0;
  for (int it = it0; it < options.max_iter; ++it) {
    if (gn < options.gradient_tol) {
      res.converged = true;
      break;
    }
    check_cancelled();
    if (options.lbfgs_refresh > 0 && since_refresh >= options.lbfgs_refresh) {
      c = coords_at(p, ev, fit_ell, fit_nug);
      z = Vector::Zero(c.size());
      g = gradient_z(c, z, ev, p, options);
      S_mem.clear();
      Y_mem.clear();
      rho.clear();
      since_refresh = 0;
    }
    // Two-loop recursion: dir = H_k g, H_k the inverse Hessian estimate of the
    // negated objective (so dir is an ascent direction), H_0 = gamma I.
    Vector q = g;
    const int mlen = static_cast<int>(S_mem.size());
    std::vector<double> alpha(mlen);
    for (int k = mlen - 1; k >= 0; --k) {
      alpha[k] = rho[k] * S_mem[k].dot(q);
      q -= alpha[k] * Y_mem[k];
    }
    const double gamma = mlen > 0 ? S_mem.back().dot(Y_mem.back()) / Y_mem.back().squaredNorm() : 1.0;
    Vector dir = gamma * q;
    for (int k = 0; k < mlen; ++k) {
      const double beta = rho[k] * Y_mem[k].dot(dir);
      dir += S_mem[k] * (alpha[k] - beta);
    }
    double slope = g.dot(dir);
    if (!(slope > 0.0)) {  // not an ascent direction: forget the memory
      S_mem.clear();
      Y_mem.clear();
      rho.clear();
      dir = g;
      slope = g.squaredNorm();
    }
    // Backtracking line search with the Armijo test (c1 = 1e-4); the step
    // shrinks by quadratic interpolation, between 1/10 and 1/2 of the last.
    double step = 1.0;
    bool accepted = false;
    Params p_new;
    Eval ev_new;
    Vector z_new;
    for (int trial = 0; trial < 30; ++trial) {
      z_new = z + step * dir;
      p_new = params_of(c, z_new, p, options);
      ev_new = evaluate(s, options, p_new);
      ++res.evaluations;
      const double real_slope = g.dot(z_new - z);
      if (ev_new.ok && ev_new.objective >= ev.objective + 1e-4 * std::max(real_slope, 0.0) &&
          ev_new.objective > ev.objective) {
        accepted = true;
        break;
      }
      double next = 0.5 * step;
      if (ev_new.ok) {
        const double drop = ev.objective - ev_new.objective + slope * step;  // > 0 for a concave fit
        if (drop > 0.0) next = std::min(0.5 * step, std::max(0.1 * step, 0.5 * slope * step * step / drop));
      } else {
        next = 0.25 * step;
      }
      step = next;
    }
    if (!accepted) {
      if (mlen > 0) {  // retry from a plain gradient step
        S_mem.clear();
        Y_mem.clear();
        rho.clear();
        continue;
      }
      break;  // no ascent along the gradient either: rounding level
    }
    const Vector g_new = gradient_z(c, z_new, ev_new, p_new, options);
    const Vector sk = z_new - z;
    const Vector yk = -(g_new - g);
    const double sy = sk.dot(yk);
    if (sy > 1e-10 * sk.norm() * yk.norm()) {
      if (static_cast<int>(S_mem.size()) == options.lbfgs_memory) {
        S_mem.erase(S_mem.begin());
        Y_mem.erase(Y_mem.begin());
        rho.erase(rho.begin());
      }
      S_mem.push_back(sk);
      Y_mem.push_back(yk);
      rho.push_back(1.0 / sy);
    }
    z = z_new;
    p = std::move(p_new);
    ev = std::move(ev_new);
    g = g_new;
    gn = gradient_norm(ev, p, options, fit_ell, fit_nug);
    res.iterations = it + 1;
    ++since_refresh;
    res.objective_trace.push_back(ev.objective);
    res.lengthscale_trace.push_back(p.ell);
    res.gradient_trace.push_back(gn);
  }
  if (gn < options.gradient_tol) res.converged = true;
  res.gradient_norm = gn;
  res.kernel.lengthscale = p.ell;
  res.nugget = p.nugget;
  res.Gamma = gamma_of(res.kernel, H, p.nugget, options);
  res.Lambda = 0.5 * (p.Lambda + p.Lambda.transpose());
  res.mean = p.mu;
  res.objective = ev.objective;
  res.loglik = ev.loglik;
  return res;
}

}  // namespace

}  // namespace ditimpute
