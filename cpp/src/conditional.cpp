// Conditionals of missing values given observed ones, the Gaussian-process
// layer's third part (cpp/DESIGN.md; the paper's eq. 9).
//
// Two conditionals share one interface:
//  * KroneckerConditional (frame-level masks): works with the H x H and d x d
//    factors only. With row-major vec, (A (x) B) vec(X) = vec(A X B^T), so
//    mu_cond = mu_m + A (X_o - mu_o) with A = G_mo G_oo^{-1} (Lambda cancels)
//    and Sigma_cond = Gamma_cond (x) Lambda.
//  * entry-level masks by default go through the joint precision
//    (kronecker_solve.cpp);
//  * DenseConditional (the reference, dense = TRUE in R): orders the
//    entries as [observed; missing], takes one Cholesky of that covariance
//    and reads the conditional off the blocks of the factor.
#include "ditimpute/gaussian.hpp"

#include "gaussian_internal.hpp"
#include "lapack.hpp"

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace ditimpute {

namespace {

using detail::dims;

double kappa_of(double lmin, double lmax) {
  return lmin > 0.0 ? lmax / lmin : std::numeric_limits<double>::infinity();
}

Vector symmetric_eigenvalues(const Matrix& S) {
  Eigen::SelfAdjointEigenSolver<Matrix> es(S, Eigen::EigenvaluesOnly);
  if (es.info() != Eigen::Success) throw numeric_error("eigen-decomposition failed.");
  return es.eigenvalues();
}

// Validates the arguments of Conditional::score and returns V - alpha_t mu
// (one state a row).
Matrix score_residual(const Matrix& V, const Vector& mu, double t, int n_missing) {
  if (V.cols() != n_missing)
    throw input_error("v", "each state needs " + std::to_string(n_missing) + " values (the missing entries), not " +
                               std::to_string(V.cols()) + ".");
  if (mu.size() != n_missing)
    throw input_error("mu", "mu needs " + std::to_string(n_missing) + " values, not " + std::to_string(mu.size()) + ".");
  if (!(std::isfinite(t) && t >= 0.0)) throw input_error("t", "t must be a finite time >= 0.");
  Matrix R = V;
  R.rowwise() -= vp_alpha(t) * mu.transpose();
  return R;
}

void check_sample_args(const Vector& mu, int Z, int n_missing) {
  if (mu.size() != n_missing)
    throw input_error("mu", "mu needs " + std::to_string(n_missing) + " values, not " + std::to_string(mu.size()) + ".");
  if (Z < 0) throw input_error("Z", "the number of draws Z must be >= 0.");
}

std::vector<const double*> sequence_pointers(const Batch& x, const Mask& mask) {
  if (x.H != mask.H || x.d != mask.d)
    throw input_error("x", "the sequences are " + dims(x.H, x.d) + " but the pattern is " + dims(mask.H, mask.d) + ".");
  std::vector<const double*> out(static_cast<std::size_t>(x.n));
  for (int i = 0; i < x.n; ++i) out[static_cast<std::size_t>(i)] = x.seq(i);
  return out;
}

[[noreturn]] void throw_nonfinite(int entry, int d) {
  throw input_error("x", "observed value at frame " + std::to_string(entry / d + 1) + ", variable " +
                             std::to_string(entry % d + 1) + " is not finite (NA, NaN or Inf).");
}

void throw_first_nonfinite(const std::vector<const double*>& xs, const std::vector<int>& observed, int d) {
  for (const double* x : xs)
    for (int k : observed)
      if (!std::isfinite(x[k])) throw_nonfinite(k, d);
}

// ------------------------------------------------------------ Kronecker path --
class KroneckerConditional final : public Conditional {
 public:
  KroneckerConditional(const GaussianProcess& gp, const Mask& mask)
      : Conditional(mask), d_(gp.d()), mf_(mask.missing_frames()), of_(mask.observed_frames()),
        mu_(gp.mean()) {
    const Matrix& G = gp.Gamma();
    const Matrix Goo = gather(G, of_, of_);
    const Matrix Gom = gather(G, of_, mf_);
    Eigen::LLT<Matrix> llt(Goo);
    if (llt.info() != Eigen::Success)
      throw numeric_error("Gamma restricted to the observed frames is not numerically positive definite.");
    A_ = llt.solve(Gom).transpose();  // G_mo G_oo^{-1}
    Matrix Gc = gather(G, mf_, mf_) - A_ * Gom;
    Gc = 0.5 * (Gc + Gc.transpose()).eval();
    Eigen::SelfAdjointEigenSolver<Matrix> eg(Gc), el(gp.Lambda());
    if (eg.info() != Eigen::Success || el.info() != Eigen::Success)
      throw numeric_error("eigen-decomposition of Gamma_cond or Lambda failed.");
    Gc_ = Gc;
    Lambda_ = gp.Lambda();
    g_ = eg.eigenvalues();
    l_ = el.eigenvalues();
    UG_ = eg.eigenvectors();
    UL_ = el.eigenvectors();
    // Square-root factors F with F F^T = Gamma_cond (resp. Lambda); rounding
    // can leave a tiny negative eigenvalue on a near-singular Gamma_cond.
    FG_ = UG_ * g_.cwiseMax(0.0).cwiseSqrt().asDiagonal();
    FL_ = UL_ * l_.cwiseSqrt().asDiagonal();
    Goo_ = Goo;
  }

  bool kronecker() const override { return true; }
  std::string method() const override { return "Kronecker"; }

  Vector mean(const double* x) const override { return means(std::vector<const double*>{x}).row(0).transpose(); }
  Matrix mean(const Batch& x) const override { return means(sequence_pointers(x, mask_)); }

  Matrix covariance() const override {
    const int m = static_cast<int>(mf_.size());
    Matrix C(m * d_, m * d_);
    for (int a = 0; a < m; ++a)
      for (int b = 0; b < m; ++b) C.block(a * d_, b * d_, d_, d_) = Gc_(a, b) * Lambda_;
    return C;
  }

  Vector eigenvalues() const override {
    Vector ev(static_cast<Eigen::Index>(g_.size()) * d_);
    for (Eigen::Index a = 0; a < g_.size(); ++a) ev.segment(a * d_, d_) = g_(a) * l_;
    std::sort(ev.data(), ev.data() + ev.size());
    return ev;
  }

  // kappa(Gamma_oo (x) Lambda) = kappa(Gamma_oo) kappa(Lambda); on request,
  // as the dense path does, since only diagnostics need it.
  double kappa_obs() const override {
    const Vector goo = symmetric_eigenvalues(Goo_);
    return kappa_of(goo(0), goo(goo.size() - 1)) * kappa_of(l_(0), l_(d_ - 1));
  }

  // W = U_G^T R_z U_L, divided entrywise by a^2 g_i l_j + s^2, then sent back:
  // two small products a state. Memory trick: V (Z x m*d, column-major) read
  // as a (Z*d) x m matrix has row z + Z*j, column a, so U_G acts by one
  // right-multiplication, and U_L acts on Z x d column blocks.
  Matrix score(const Matrix& V, const Vector& mu, double t) const override {
    Matrix R = score_residual(V, mu, t, n_missing());
    const double a2 = vp_alpha(t) * vp_alpha(t), s2 = vp_sigma2(t);
    const Eigen::Index Z = R.rows(), m = static_cast<Eigen::Index>(mf_.size());
    Matrix T = Eigen::Map<Matrix>(R.data(), Z * d_, m) * UG_;
    for (Eigen::Index b = 0; b < m; ++b) {
      Eigen::Map<Matrix> Tb(T.data() + b * Z * d_, Z, d_);
      Matrix W = Tb * UL_;
      for (int k = 0; k < d_; ++k) W.col(k) /= -(a2 * g_(b) * l_(k) + s2);
      Tb.noalias() = W * UL_.transpose();
    }
    Matrix S = T * UG_.transpose();
    return Eigen::Map<Matrix>(S.data(), Z, m * d_);
  }

  // Draw z: mu + F_G E_z F_L^T with E_z an m x d standard normal matrix.
  Matrix sample(const Vector& mu, int Z, Rng& rng) const override {
    check_sample_args(mu, Z, n_missing());
    const Eigen::Index m = static_cast<Eigen::Index>(mf_.size());
    Matrix E(Z, m * d_);
    fill_standard_normal(rng, E.data(), static_cast<std::size_t>(E.size()));
    Matrix T = Eigen::Map<Matrix>(E.data(), Eigen::Index(Z) * d_, m) * FG_.transpose();
    for (Eigen::Index b = 0; b < m; ++b) {
      Eigen::Map<Matrix> Tb(T.data() + b * Z * d_, Z, d_);
      Tb = Tb * FL_.transpose();
    }
    Matrix X = Eigen::Map<Matrix>(T.data(), Z, m * d_);
    X.rowwise() += mu.transpose();
    return X;
  }

 private:
  // mu_m + A (X_o - mu_o) for every sequence in one product: the centred
  // observed frames of n sequences side by side form an |o| x (n d) matrix.
  Matrix means(const std::vector<const double*>& xs) const {
    const int n = static_cast<int>(xs.size()), o = static_cast<int>(of_.size()), m = static_cast<int>(mf_.size());
    Matrix Y(o, static_cast<Eigen::Index>(n) * d_);
    for (int i = 0; i < n; ++i) {
      const Eigen::Map<const RowMatrix> X(xs[i], mask_.H, d_);
      for (int p = 0; p < o; ++p) Y.block(p, i * d_, 1, d_) = X.row(of_[p]) - mu_.row(of_[p]);
    }
    if (!Y.allFinite()) throw_first_nonfinite(xs, obs_, d_);  // one vectorised check, then find the culprit
    const Matrix M = A_ * Y;
    Matrix out(n, m * d_);
    for (int i = 0; i < n; ++i)
      for (int a = 0; a < m; ++a)
        for (int j = 0; j < d_; ++j) out(i, a * d_ + j) = mu_(mf_[a], j) + M(a, i * d_ + j);
    return out;
  }

  int d_;
  std::vector<int> mf_, of_;
  RowMatrix mu_;
  Matrix Goo_, A_, Gc_, Lambda_, UG_, UL_, FG_, FL_;
  Vector g_, l_;
};

// ---------------------------------------------------------------- dense path --
// Covariance of vec(X) restricted to `rows` x `cols` entries: entry (p, q) of
// Gamma (x) Lambda is Gamma(p / d, q / d) Lambda(p % d, q % d).
Matrix kron_entries(const Matrix& G, const Matrix& L, const std::vector<int>& rows, const std::vector<int>& cols) {
  const int d = static_cast<int>(L.rows());
  check_memory(8.0 * rows.size() * cols.size(), "x",
               "the dense covariance of " + std::to_string(rows.size()) + " x " + std::to_string(cols.size()) +
                   " entries (method \"precision\" or \"cg\" never forms it)");
  // Frames and variables of the rows once (no division in the inner loop).
  std::vector<int> rf(rows.size()), rv(rows.size());
  for (std::size_t p = 0; p < rows.size(); ++p) {
    rf[p] = rows[p] / d;
    rv[p] = rows[p] % d;
  }
  Matrix S(rows.size(), cols.size());
  for (std::size_t q = 0; q < cols.size(); ++q) {
    const double* g = G.col(cols[q] / d).data();
    const double* l = L.col(cols[q] % d).data();
    double* s = S.col(static_cast<Eigen::Index>(q)).data();
    for (std::size_t p = 0; p < rows.size(); ++p) s[p] = g[rf[p]] * l[rv[p]];
  }
  return S;
}

class DenseConditional final : public Conditional {
 public:
  DenseConditional(const GaussianProcess& gp, const Mask& mask)
      : Conditional(mask), G_(gp.Gamma()), L_(gp.Lambda()), mu_(gp.mean()) {
    std::vector<int> order = obs_;
    order.insert(order.end(), miss_.begin(), miss_.end());
    factor_ = kron_entries(G_, L_, order, order);
    // In place (the Hd x Hd matrix is stored once): LAPACK dpotrf from 128
    // rows on a plain thread (lapack.hpp), else Eigen.
    if (!detail::cholesky_in_place(factor_))
      throw numeric_error("the covariance of the pattern's entries is not numerically positive definite.");
    // With [o; m] order, Sigma = L L^T gives Sigma_cond = L_mm L_mm^T and
    // Sigma_mo Sigma_oo^{-1} = L_mo L_oo^{-1}.
    const Eigen::Index m = n_missing();
    Lmm_ = factor_.bottomRightCorner(m, m).triangularView<Eigen::Lower>();
    U_ = covariance();
    if (!detail::symmetric_eigen_in_place(U_, lambda_, true))  // LAPACK dsyevd for large m
      throw numeric_error("eigen-decomposition of Sigma_cond failed.");
  }

  bool kronecker() const override { return false; }
  std::string method() const override { return "dense"; }
  Vector mean(const double* x) const override { return means(std::vector<const double*>{x}).row(0).transpose(); }
  Matrix mean(const Batch& x) const override { return means(sequence_pointers(x, mask_)); }
  // L_mm L_mm^T by one BLAS dsyrk (lapack.hpp) on the lower triangle, mirrored.
  Matrix covariance() const override {
    Matrix C(n_missing(), n_missing());
    detail::lower_outer_product(Lmm_, 1.0, C);
    C.triangularView<Eigen::StrictlyUpper>() = C.transpose();
    return C;
  }
  Vector eigenvalues() const override { return lambda_; }

  // Computed on request: an eigen-decomposition of the observed block costs
  // O((|o| d)^3) and nothing else needs it.
  double kappa_obs() const override {
    Matrix S = kron_entries(G_, L_, obs_, obs_);
    Vector ev;
    if (!detail::symmetric_eigen_in_place(S, ev, false))  // LAPACK dsyevd for large |o|
      throw numeric_error("eigen-decomposition failed.");
    return kappa_of(ev(0), ev(ev.size() - 1));
  }

  Matrix score(const Matrix& V, const Vector& mu, double t) const override {
    const Matrix R = score_residual(V, mu, t, n_missing());
    const double a2 = vp_alpha(t) * vp_alpha(t), s2 = vp_sigma2(t);
    const Vector inv = (a2 * lambda_.array() + s2).inverse();
    return -((R * U_) * inv.asDiagonal()) * U_.transpose();
  }

  Matrix sample(const Vector& mu, int Z, Rng& rng) const override {
    check_sample_args(mu, Z, n_missing());
    Matrix E(Z, n_missing());
    fill_standard_normal(rng, E.data(), static_cast<std::size_t>(E.size()));
    Matrix X = E * Lmm_.transpose();
    X.rowwise() += mu.transpose();
    return X;
  }

 private:
  Matrix means(const std::vector<const double*>& xs) const {
    const Eigen::Index n = static_cast<Eigen::Index>(xs.size()), o = static_cast<Eigen::Index>(obs_.size());
    const int d = mask_.d;
    const double* mu = mu_.data();  // row-major H x d: vec order
    Matrix Y(o, n);
    for (Eigen::Index i = 0; i < n; ++i)
      for (Eigen::Index p = 0; p < o; ++p) Y(p, i) = xs[i][obs_[p]] - mu[obs_[p]];
    if (!Y.allFinite()) throw_first_nonfinite(xs, obs_, d);
    detail::solve_lower_in_place(factor_.topLeftCorner(o, o), Y);  // BLAS dtrsm for large |o|
    Matrix out = (factor_.bottomLeftCorner(n_missing(), o) * Y).transpose();
    for (int k = 0; k < n_missing(); ++k) out.col(k).array() += mu[miss_[k]];
    return out;
  }

  Matrix G_, L_;
  RowMatrix mu_;
  Matrix factor_;  // lower Cholesky factor of Sigma in [o; m] order (upper part is stale)
  Matrix Lmm_, U_;
  Vector lambda_;
};

void check_pattern(const GaussianProcess& gp, const Mask& mask) {
  if (mask.H != gp.H() || mask.d != gp.d())
    throw input_error("pattern", "the pattern is " + dims(mask.H, mask.d) + " but the process is " +
                                     dims(gp.H(), gp.d()) + ".");
  mask.require_proper("pattern");
}

}  // namespace

Conditional::Conditional(Mask mask)
    : mask_(std::move(mask)), miss_(mask_.missing_entries()), obs_(mask_.observed_entries()) {}

Matrix Conditional::mean(const Batch& x) const {
  const std::vector<const double*> xs = sequence_pointers(x, mask_);
  Matrix out(x.n, n_missing());
  for (int i = 0; i < x.n; ++i) out.row(i) = mean(xs[static_cast<std::size_t>(i)]).transpose();
  return out;
}

void Conditional::check_covariance_output(const Eigen::Ref<const Matrix>& out) const {
  if (out.rows() != n_missing() || out.cols() != n_missing())
    throw numeric_error("covariance_into: the output is not n_missing x n_missing.");
}

void Conditional::covariance_into(Eigen::Ref<Matrix> out) const {
  check_covariance_output(out);
  out = covariance();
}

double Conditional::kappa_cond() const {
  const Vector ev = eigenvalues();
  return kappa_of(ev(0), ev(ev.size() - 1));
}

ConditionalMethod parse_conditional_method(const std::string& s) {
  if (s == "auto") return ConditionalMethod::automatic;
  if (s == "dense") return ConditionalMethod::dense;
  if (s == "precision") return ConditionalMethod::precision;
  if (s == "cg") return ConditionalMethod::cg;
  throw input_error("method", "method must be \"auto\", \"dense\", \"precision\" or \"cg\", not \"" + s + "\".");
}

std::unique_ptr<Conditional> make_conditional(const GaussianProcess& gp, const Mask& mask,
                                              const ConditionalOptions& options) {
  check_pattern(gp, mask);
  ConditionalMethod m = options.method;
  if (m == ConditionalMethod::dense) return std::unique_ptr<Conditional>(new DenseConditional(gp, mask));
  if (mask.frame_level()) return std::unique_ptr<Conditional>(new KroneckerConditional(gp, mask));
  if (m == ConditionalMethod::automatic)
    m = mask.n_missing() <= kPrecisionMaxMissing ? ConditionalMethod::precision : ConditionalMethod::cg;
  return make_conditional_precision(gp, mask, m == ConditionalMethod::cg, options);
}

std::unique_ptr<Conditional> make_conditional_dense(const GaussianProcess& gp, const Mask& mask) {
  check_pattern(gp, mask);
  return std::unique_ptr<Conditional>(new DenseConditional(gp, mask));
}

// ------------------------------------------------------------ index helpers --
namespace {

// 0-based indices inside 0..n-1 (a review: an index of -7 read garbage, one
// of 100,000 crashed).
void check_indices(const std::vector<int>& idx, Eigen::Index n, const char* arg) {
  for (int i : idx)
    if (i < 0 || i >= n)
      throw input_error(arg, std::string("index ") + std::to_string(i) + " is outside 0.." + std::to_string(n - 1) +
                                 " (0-based).");
}

}  // namespace

Matrix gather(const Matrix& A, const std::vector<int>& rows, const std::vector<int>& cols) {
  check_indices(rows, A.rows(), "rows");
  check_indices(cols, A.cols(), "cols");
  Matrix out(rows.size(), cols.size());
  for (std::size_t q = 0; q < cols.size(); ++q)
    for (std::size_t p = 0; p < rows.size(); ++p) out(p, q) = A(rows[p], cols[q]);
  return out;
}

Matrix covariance_entries(const GaussianProcess& gp, const std::vector<int>& rows, const std::vector<int>& cols) {
  const Eigen::Index n = gp.Gamma().rows() * gp.Lambda().rows();
  check_indices(rows, n, "rows");
  check_indices(cols, n, "cols");
  return kron_entries(gp.Gamma(), gp.Lambda(), rows, cols);
}

}  // namespace ditimpute
