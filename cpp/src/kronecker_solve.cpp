// Entry-level conditionals through the joint precision (gaussian.hpp,
// ConditionalMethod precision and cg): never the covariance of the observed
// entries.
//
// With Q = Sigma^{-1} = Gamma^{-1} (x) Lambda^{-1} and the entries split into
// observed o and missing m,
//   x_m | x_o ~ N(mu_m - Q_mm^{-1} Q_mo (x_o - mu_o), Q_mm^{-1}),
// and Q_mo (x_o - mu_o) = (Q r0)_m with r0 the centred values, 0 at missing
// entries. With the frame-major vec, (Gi (x) Li) vec(R) = vec(Gi R Li): every
// product with Q (or Q_mm, Q_mo) costs O(H^2 d + H d^2) a vector, whatever the
// pattern.
//  * precision: Q_mm (m x m) is formed and factorised once; samples are
//    mu_cond + L^{-T} e, e standard normal (Q_mm = L L^T).
//  * cg: Q_mm is never formed. Solves use conjugate gradients, the columns of
//    a block of right-hand sides advancing together (one pair of matrix
//    products per iteration for all of them), preconditioned by the blocks of
//    Q_mm within each frame: Gi(h, h) Li[J_h, J_h] for the missing variables
//    J_h of frame h (exact when Gamma is diagonal). Samples by pathwise
//    conditioning (Matheron's rule): with f a prior draw (LG E LL^T) and f0 = f
//    with 0 at missing entries, mu_cond + f_m + Q_mm^{-1} (Q f0)_m has law
//    N(mu_cond, Q_mm^{-1}).
#include "ditimpute/gaussian.hpp"
#include "gaussian_internal.hpp"
#include "lapack.hpp"

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

namespace ditimpute {

namespace {

// Inverse of an SPD matrix from its lower Cholesky factor L: L^{-T} L^{-1}.
Matrix inverse_from_factor(const Eigen::Ref<const Matrix>& L) {
  Matrix A = L;
  detail::inverse_from_cholesky_in_place(A);
  return A;
}

using Block = std::function<void(const Matrix&, Matrix&)>;

// Preconditioned conjugate gradients for A X = B, column by column but with
// the columns that have not converged advancing together, so `apply` (A times
// a block) sees one block per iteration. Converged: ||B_c - A X_c|| <= tol
// ||B_c|| (the recursive residual).
Matrix block_pcg(const Block& apply, const Block& precond, const Matrix& B, double tol, int max_iter) {
  const Eigen::Index m = B.rows(), k = B.cols();
  Matrix X = Matrix::Zero(m, k), R = B, Zp(m, k), P, AP;
  precond(R, Zp);
  P = Zp;
  Vector rz = R.cwiseProduct(Zp).colwise().sum().transpose();
  const Vector target = tol * B.colwise().norm().transpose();
  std::vector<Eigen::Index> active;
  for (int it = 0;; ++it) {
    active.clear();
    for (Eigen::Index c = 0; c < k; ++c)
      if (R.col(c).norm() > target(c)) active.push_back(c);
    if (active.empty()) return X;
    if (it >= max_iter)
    {
      // the tolerance as given (1e-10, not std::to_string's 0.000000), and
      // either cause: a review's cg_max_iter = 1 was blamed on Q_mm
      std::ostringstream msg;
      msg << "conjugate gradients did not reach a relative residual of " << tol << " in " << max_iter
          << " iterations (Q_mm is ill-conditioned, or cg_max_iter is too small).";
      throw numeric_error(msg.str());
    }
    const Eigen::Index a = static_cast<Eigen::Index>(active.size());
    Matrix Pa(m, a), Ra(m, a), Za(m, a);
    for (Eigen::Index c = 0; c < a; ++c) Pa.col(c) = P.col(active[c]);
    apply(Pa, AP);
    for (Eigen::Index c = 0; c < a; ++c) {
      const Eigen::Index j = active[c];
      const double alpha = rz(j) / Pa.col(c).dot(AP.col(c));
      X.col(j) += alpha * Pa.col(c);
      R.col(j) -= alpha * AP.col(c);
      Ra.col(c) = R.col(j);
    }
    precond(Ra, Za);
    for (Eigen::Index c = 0; c < a; ++c) {
      const Eigen::Index j = active[c];
      const double rz_new = Ra.col(c).dot(Za.col(c));
      P.col(j) = Za.col(c) + (rz_new / rz(j)) * Pa.col(c);
      rz(j) = rz_new;
    }
  }
}

// Extreme-eigenvalue problems from this many rows go to largest_eigenvalue;
// smaller ones take a dense eigen-decomposition (milliseconds).
constexpr Eigen::Index kKrylovMinRows = 200;
// Columns per block: at BeijingAir size (bench_entry_conditional covariance,
// one thread) the four kappa problems took 0.27-0.30 s with 4, 0.33-0.40 s
// with 8, 0.6-0.8 s with 16 or 24 (wider blocks need a larger basis).
constexpr Eigen::Index kKrylovBlock = 4;
// Residual tolerance of largest_eigenvalue for condition numbers: each
// eigenvalue to 1e-6 relative at worst (the residual bounds the error); in
// practice the error is of order residual^2 / gap (Ritz values converge
// quadratically): at BeijingAir size kappa_cond and kappa_obs agree with the
// former 1e-8 residual's to 4e-12 (bench_entry_conditional covariance) while
// the four Krylov bases shrink from 136/44/96/128 to 112/36/80/104 columns
// (the kappas 0.19-0.26 s -> 0.13-0.16 s, one thread). A condition number is
// a diagnostic: 1e-6 relative is far below any digit it is read for.
constexpr double kKrylovTol = 1e-6;
// The largest Krylov basis before falling back to a dense decomposition.
constexpr Eigen::Index kKrylovMaxDim = 600;

// The largest eigenvalue of a symmetric n x n operator given by its action
// on blocks: Rayleigh-Ritz on a block Krylov space (blocks of kKrylovBlock columns, each
// orthogonalised twice against the whole basis, so no ghost eigenvalues), the
// projected matrix T = V^T A V built block by block. Stops when the top Ritz
// pair (theta, y = V s) has ||A y - theta y|| <= tol |theta|: theta is a
// Rayleigh quotient, so theta <= lambda_max, and some eigenvalue lies within
// the residual of theta (Bauer-Fike for symmetric matrices), so theta is
// lambda_max to tol relative unless the start block missed lambda_max's
// eigenvector (a fixed-seed Gaussian block: probability zero). The residual
// comes free from the next block: A V_j lies in the basis for every block but
// the last (that is how the basis grows), so A y - theta y = W s_last, W the
// last block's products with the basis projected out, which is the next
// block before normalisation (no stored A V, no products with the basis).
// `converged` is false when the basis reached max_dim columns first; the
// caller then takes a dense eigen-decomposition. The start block has a fixed
// seed, so results are reproducible.
double largest_eigenvalue(const Block& apply, Eigen::Index n, double tol, Eigen::Index max_dim, bool& converged) {
  converged = false;
  if (n == 0) return 0.0;
  const detail::SerialBlasScope serial;  // many small products: one BLAS thread
  max_dim = std::min(max_dim, n);
  const Eigen::Index b = std::min<Eigen::Index>(kKrylovBlock, n);
  check_memory(8.0 * (1.0 * n * max_dim + 1.0 * max_dim * max_dim), "x", "a Krylov basis for an extreme eigenvalue");
  Matrix V(n, max_dim), T(max_dim, max_dim);
  Matrix X(n, b), AX;
  Rng rng(0x6b72796c6f76ULL);
  fill_standard_normal(rng, X.data(), static_cast<std::size_t>(X.size()));
  Eigen::Index k = 0, blocks = 0;
  double theta = 0.0;
  // X minus its projection on the basis: classical Gram-Schmidt twice (dgemm).
  const auto project_out = [&V, &k, n](Matrix& Y) {
    for (int pass = 0; pass < 2 && k > 0; ++pass) {
      Matrix C(k, Y.cols()), P(n, Y.cols());
      detail::multiply(V.leftCols(k), true, Y, false, C);
      detail::multiply(V.leftCols(k), false, C, false, P);
      Y -= P;
    }
  };
  bool projected = false;  // X already has the basis projected out
  bool complete = true;    // every block's image went into the basis
  Vector norm0 = X.colwise().norm().transpose();  // X's column norms before any projection
  for (;;) {
    // Orthonormalise the new block against the basis and within itself,
    // dropping columns that the basis already spans.
    if (!projected) project_out(X);
    Eigen::Index kept = 0, c = 0;
    for (; c < X.cols() && k + kept < max_dim; ++c) {
      for (int pass = 0; pass < 2; ++pass)
        for (Eigen::Index p = 0; p < kept; ++p) X.col(c) -= X.col(p).dot(X.col(c)) * X.col(p);
      const double nrm = X.col(c).norm();
      if (!(nrm > 1e-10 * norm0(c))) continue;
      X.col(kept++) = X.col(c) / nrm;
    }
    // A block cut short by max_dim leaves part of the previous block's image
    // outside the basis, and the cheap residual below would miss it: such a
    // basis never reports convergence (the caller's dense fallback decides).
    if (c < X.cols()) complete = false;
    if (kept == 0) {  // the basis spans an invariant subspace: its Ritz values are eigenvalues
      converged = k > 0;
      return theta;
    }
    apply(X.leftCols(kept), AX);
    V.middleCols(k, kept) = X.leftCols(kept);
    const Eigen::Index k1 = k + kept;
    {
      Matrix C(k1, kept);
      detail::multiply(V.leftCols(k1), true, AX, false, C);
      T.block(0, k, k1, kept) = C;
    }
    T.block(k, 0, kept, k) = T.block(0, k, k, kept).transpose();
    k = k1;
    X = AX;
    norm0 = X.colwise().norm().transpose();
    projected = false;
    // Rayleigh-Ritz (O(k^3)) after every block while the basis is small,
    // then about every k / 64 blocks, so its cost stays below the products'.
    ++blocks;
    if (k < n && k + b <= max_dim && blocks % std::max<Eigen::Index>(1, k / 64) != 0) continue;
    Matrix Tk = 0.5 * (T.topLeftCorner(k, k) + T.topLeftCorner(k, k).transpose());
    Vector s;
    if (!detail::largest_eigenpair_in_place(Tk, theta, s)) return theta;  // LAPACK dsyevr: the top pair only
    if (k == n) {
      converged = true;
      return theta;
    }
    project_out(X);  // the next block, unnormalised: W
    projected = true;
    const double r = (X * s.tail(kept)).norm();
    if (complete && r <= tol * std::abs(theta)) {
      converged = true;
      return theta;
    }
    if (k + 1 > max_dim) return theta;
  }
}

class PrecisionConditional final : public Conditional {
 public:
  PrecisionConditional(const GaussianProcess& gp, const Mask& mask, bool cg, const ConditionalOptions& options)
      : Conditional(mask), H_(gp.H()), d_(gp.d()), cg_(cg), tol_(options.cg_tol),
        max_iter_(options.cg_max_iter > 0 ? options.cg_max_iter : 10 * n_missing() + 100), mu_(gp.mean()),
        Gamma_(gp.Gamma()), Lambda_(gp.Lambda()), LG_(gp.chol_Gamma()), LL_(gp.chol_Lambda()) {
    if (!(std::isfinite(tol_) && tol_ > 0.0 && tol_ < 1.0)) throw input_error("cg_tol", "cg_tol must lie in (0, 1).");
    if (options.cg_max_iter < 0)
      throw input_error("cg_max_iter", "cg_max_iter must be 0 (automatic) or more, not " +
                                           std::to_string(options.cg_max_iter) + ".");
    const double m = n_missing();
    check_memory(8.0 * (4.0 * H_ * H_ + 4.0 * d_ * d_), "x", "the factors of Gamma and Lambda and their inverses");
    Gi_ = inverse_from_factor(LG_);
    Li_ = inverse_from_factor(LL_);
    frame_.resize(miss_.size());
    var_.resize(miss_.size());
    for (std::size_t a = 0; a < miss_.size(); ++a) {
      frame_[a] = miss_[a] / d_;
      var_[a] = miss_[a] % d_;
    }
    if (!cg_) {
      check_memory(8.0 * 2.0 * m * m, "x",
                   "the " + std::to_string(n_missing()) + " x " + std::to_string(n_missing()) +
                       " precision of the missing entries (method \"cg\" never forms it)");
      Lq_buf_ = detail::LargeMatrix(n_missing(), n_missing());  // huge pages: see lapack.hpp
      Eigen::Map<Matrix> L = Lq_buf_.map();
      fill_Qmm(L);
      if (!detail::cholesky_in_place(L))  // LAPACK for large m (lapack.hpp)
        throw numeric_error("the precision of the missing entries is not numerically positive definite.");
      L.triangularView<Eigen::StrictlyUpper>().setZero();
    } else {
      // Missing entries are frame-major: those of one frame are contiguous.
      for (std::size_t a = 0; a < miss_.size();) {
        std::size_t b = a;
        while (b < miss_.size() && frame_[b] == frame_[a]) ++b;
        Matrix D(b - a, b - a);
        for (std::size_t p = a; p < b; ++p)
          for (std::size_t q = a; q < b; ++q) D(p - a, q - a) = Gi_(frame_[a], frame_[a]) * Li_(var_[p], var_[q]);
        blocks_.emplace_back(static_cast<Eigen::Index>(a), Eigen::LLT<Matrix>(D));
        if (blocks_.back().second.info() != Eigen::Success)
          throw numeric_error("a frame block of the precision of the missing entries is not positive definite.");
        a = b;
      }
    }
  }

  bool kronecker() const override { return false; }
  std::string method() const override { return cg_ ? "CG" : "precision"; }
  // Small patterns keep closed-form radii: the eigenvalues of a Q_mm of at
  // most kExactRadiusMaxMissing entries cost milliseconds.
  bool cheap_eigenvalues() const override { return !cg_ && n_missing() <= kExactRadiusMaxMissing; }

  Vector mean(const double* x) const override {
    Batch b(1, H_, d_);
    std::copy(x, x + static_cast<std::size_t>(H_) * d_, b.data.begin());
    return means(b).row(0).transpose();
  }
  Matrix mean(const Batch& x) const override {
    if (x.H != H_ || x.d != d_) throw input_error("x", "the sequences do not match the pattern's H and d.");
    return means(x);
  }

  Matrix covariance() const override {
    const double m = n_missing();
    check_memory(8.0 * 3.0 * m * m, "x", "the dense " + std::to_string(n_missing()) + " x " +
                                             std::to_string(n_missing()) + " conditional covariance");
    if (!cg_) return inverse_from_factor(Lq());
    const Matrix S = solve(Matrix::Identity(n_missing(), n_missing()));
    return 0.5 * (S + S.transpose());  // CG's columns carry independent errors: symmetric like the others
  }
  void covariance_into(Eigen::Ref<Matrix> out) const override {
    if (cg_) return Conditional::covariance_into(out);
    check_covariance_output(out);
    if (out.outerStride() == out.rows())  // one block of fresh memory, typically: huge pages (lapack.hpp)
      detail::advise_huge_pages(out.data(), static_cast<std::size_t>(out.size()));
    out = Lq();  // dpotri in place: no buffer of our own
    detail::inverse_from_cholesky_in_place(out);
  }

  // 1 / eig(Q_mm), ascending; an O(m^3) eigen-decomposition, on request.
  Vector eigenvalues() const override {
    Vector q;
    if (eigen_ready_) {
      q = eigen_.first;
    } else {
      const double m = n_missing();
      check_memory(8.0 * 2.0 * m * m, "x", "the eigenvalues of the " + std::to_string(n_missing()) + " x " +
                                              std::to_string(n_missing()) + " precision of the missing entries");
      Matrix Q = Qmm();
      if (!detail::symmetric_eigen_in_place(Q, q, false))  // LAPACK dsyevd for large m
        throw numeric_error("eigen-decomposition of Q_mm failed.");
    }
    Vector ev(q.size());
    for (Eigen::Index i = 0; i < q.size(); ++i) ev(i) = 1.0 / q(q.size() - 1 - i);
    return ev;
  }

  // kappa(Sigma_oo) = lambda_max(Sigma_oo) lambda_max(Sigma_oo^{-1}), both
  // top eigenvalues (each found to 1e-6 relative by largest_eigenvalue),
  // with products by Sigma_oo (Kronecker products on the observed entries)
  // and by its inverse, the Schur complement Q_oo - Q_om Q_mm^{-1} Q_mo (two
  // Kronecker products and a product by Q_mm^{-1}): never the |o| x |o|
  // matrix. Small problems, the CG path (inexact solves) and a Krylov space
  // that has not converged take the dense eigenvalues of Sigma_oo (LAPACK
  // dsyevd).
  double kappa_obs() const override {
    const Eigen::Index o = static_cast<Eigen::Index>(obs_.size());
    if (!cg_ && o >= kKrylovMinRows) {
      bool ok_max = false, ok_inv = false;
      const double lmax = largest_eigenvalue(
          [this](const Matrix& V, Matrix& out) {
            out = gather_entries(kron_apply(scatter_entries(V, obs_), Gamma_, Lambda_), obs_, V.cols());
          },
          o, kKrylovTol, kKrylovMaxDim, ok_max);
      const double imax = ok_max ? largest_eigenvalue(
                                       [this](const Matrix& V, Matrix& out) {
                                         const Eigen::Index k = V.cols();
                                         const Matrix T = kron_apply(scatter_entries(V, obs_));
                                         const Matrix y = solve(gather_missing(T, k));
                                         out = gather_entries(T, obs_, k) -
                                               gather_entries(kron_apply(scatter_entries(y, miss_)), obs_, k);
                                       },
                                       o, kKrylovTol, kKrylovMaxDim, ok_inv)
                                 : 0.0;
      if (ok_max && ok_inv && lmax > 0.0 && imax > 0.0) return lmax * imax;
    }
    Matrix S = covariance_entries_of(obs_);
    Vector ev;
    if (!detail::symmetric_eigen_in_place(S, ev, false)) throw numeric_error("eigen-decomposition failed.");
    return ev(0) > 0.0 ? ev(ev.size() - 1) / ev(0) : std::numeric_limits<double>::infinity();
  }
  // kappa(Sigma_cond) = lambda_max(Q_mm) lambda_max(Q_mm^{-1}), as kappa_obs:
  // products by Q_mm through the Kronecker factors and by Q_mm^{-1} (two
  // triangular solves), to 1e-6 relative; otherwise all eigenvalues.
  double kappa_cond() const override {
    const Eigen::Index m = n_missing();
    if (!cg_ && !eigen_ready_ && m >= kKrylovMinRows) {
      bool ok_q = false, ok_s = false;
      const double qmax = largest_eigenvalue([this](const Matrix& V, Matrix& out) { apply_mm(V, out, Gi_, Li_); }, m,
                                             kKrylovTol, kKrylovMaxDim, ok_q);
      const double smax =
          ok_q ? largest_eigenvalue([this](const Matrix& V, Matrix& out) { out = solve(V); }, m, kKrylovTol,
                                    kKrylovMaxDim, ok_s)
               : 0.0;
      if (ok_q && ok_s && qmax > 0.0 && smax > 0.0) return qmax * smax;
    }
    return Conditional::kappa_cond();
  }

  Vector marginal_sd() const override {
    if (cg_) return Vector();
    detail::LargeMatrix buf(n_missing(), n_missing());  // huge pages: see lapack.hpp
    Eigen::Map<Matrix> Linv = buf.map();
    Linv = Lq();  // diag(Q_mm^{-1}) = squared column norms of L^{-1}
    detail::invert_lower(Linv);
    return Linv.colwise().norm().transpose();
  }

  // -(a2 Q_mm^{-1} + s2 I)^{-1} r = -U diag(q / (a2 + s2 q)) U^T r, with the
  // eigen-decomposition of Q_mm computed once (O(m^3); the oracle sampler
  // calls this at every step).
  Matrix score(const Matrix& V, const Vector& mu, double t) const override {
    if (V.cols() != n_missing())
      throw input_error("v", "each state needs " + std::to_string(n_missing()) + " values (the missing entries), not " +
                                 std::to_string(V.cols()) + ".");
    if (mu.size() != n_missing())
      throw input_error("mu", "mu needs " + std::to_string(n_missing()) + " values, not " + std::to_string(mu.size()) + ".");
    if (!(std::isfinite(t) && t >= 0.0)) throw input_error("t", "t must be a finite time >= 0.");
    Matrix R = V;
    R.rowwise() -= vp_alpha(t) * mu.transpose();
    const auto& e = eigen();
    const double a2 = vp_alpha(t) * vp_alpha(t), s2 = vp_sigma2(t);
    const Vector w = e.first.array() / (a2 + s2 * e.first.array());
    return -((R * e.second) * w.asDiagonal()) * e.second.transpose();
  }

  Matrix sample(const Vector& mu, int Z, Rng& rng) const override {
    if (mu.size() != n_missing())
      throw input_error("mu", "mu needs " + std::to_string(n_missing()) + " values, not " + std::to_string(mu.size()) + ".");
    if (Z < 0) throw input_error("Z", "the number of draws Z must be >= 0.");
    const Eigen::Index m = n_missing();
    if (!cg_) {
      Matrix E(m, Z);
      fill_standard_normal(rng, E.data(), static_cast<std::size_t>(E.size()));
      detail::solve_lower_transposed_in_place(Lq(), E);  // L^{-T} e ~ N(0, Q_mm^{-1})
      Matrix X = E.transpose();
      X.rowwise() += mu.transpose();
      return X;
    }
    if (Z == 0) return Matrix(0, m);
    // Prior draws side by side: W = [E_1 ... E_Z] (H x Z d), F_z = LG E_z LL^T.
    check_memory(8.0 * 4.0 * H_ * d_ * Z, "n_samples",
                 std::to_string(Z) + " prior draws of " + std::to_string(H_) + " x " + std::to_string(d_));
    Matrix W(H_, static_cast<Eigen::Index>(Z) * d_);
    RowMatrix E(H_, d_);
    for (int z = 0; z < Z; ++z) {  // each draw reads its own H x d block of the stream, frame-major
      fill_standard_normal(rng, E.data(), static_cast<std::size_t>(E.size()));
      W.middleCols(static_cast<Eigen::Index>(z) * d_, d_) = E;
    }
    Matrix F = LG_ * W;
    for (int z = 0; z < Z; ++z) {
      auto Fz = F.middleCols(static_cast<Eigen::Index>(z) * d_, d_);
      Fz = Fz * LL_.transpose();
    }
    Matrix fm(m, Z);
    for (int z = 0; z < Z; ++z) {
      auto Fz = F.middleCols(static_cast<Eigen::Index>(z) * d_, d_);
      for (Eigen::Index a = 0; a < m; ++a) {
        fm(a, z) = Fz(frame_[a], var_[a]);
        Fz(frame_[a], var_[a]) = 0.0;
      }
    }
    const Matrix y = solve(gather_missing(kron_apply(F), Z));
    Matrix X = (fm + y).transpose();
    X.rowwise() += mu.transpose();
    return X;
  }

 private:
  // A W_c B for every H x d column block W_c of W (H x k d).
  Matrix kron_apply(const Matrix& W, const Matrix& A, const Matrix& B) const {
    Matrix T(H_, W.cols());
    detail::multiply(A, false, W, false, T);  // BLAS dgemm for large sizes (lapack.hpp)
    const Eigen::Index k = W.cols() / d_;
    Matrix tmp(H_, d_);
    for (Eigen::Index c = 0; c < k; ++c) {
      detail::multiply(T.middleCols(c * d_, d_), false, B, false, tmp);
      T.middleCols(c * d_, d_) = tmp;
    }
    return T;
  }
  Matrix kron_apply(const Matrix& W) const { return kron_apply(W, Gi_, Li_); }
  // Entries of the missing set from each H x d block of T: m x k.
  Matrix gather_missing(const Matrix& T, Eigen::Index k) const {
    Matrix out(n_missing(), k);
    for (Eigen::Index c = 0; c < k; ++c)
      for (Eigen::Index a = 0; a < n_missing(); ++a) out(a, c) = T(frame_[a], c * d_ + var_[a]);
    return out;
  }
  // The rows of V (one per entry of e, frame-major) into H x d blocks, one
  // block per column of V (zero elsewhere): H x (k d).
  Matrix scatter_entries(const Matrix& V, const std::vector<int>& e) const {
    const Eigen::Index k = V.cols();
    Matrix W = Matrix::Zero(H_, k * d_);
    for (Eigen::Index c = 0; c < k; ++c)
      for (std::size_t a = 0; a < e.size(); ++a) W(e[a] / d_, c * d_ + e[a] % d_) = V(static_cast<Eigen::Index>(a), c);
    return W;
  }
  // The entries e of each H x d block of T: |e| x k.
  Matrix gather_entries(const Matrix& T, const std::vector<int>& e, Eigen::Index k) const {
    Matrix out(static_cast<Eigen::Index>(e.size()), k);
    for (Eigen::Index c = 0; c < k; ++c)
      for (std::size_t a = 0; a < e.size(); ++a) out(static_cast<Eigen::Index>(a), c) = T(e[a] / d_, c * d_ + e[a] % d_);
    return out;
  }
  // (A (x) B)_mm V for a block V (m x k): scatter into H x d blocks, A . B, gather.
  void apply_mm(const Matrix& V, Matrix& out, const Matrix& A, const Matrix& B) const {
    const Eigen::Index k = V.cols();
    Matrix W = Matrix::Zero(H_, k * d_);
    for (Eigen::Index c = 0; c < k; ++c)
      for (Eigen::Index a = 0; a < n_missing(); ++a) W(frame_[a], c * d_ + var_[a]) = V(a, c);
    out = gather_missing(kron_apply(W, A, B), k);
  }
  void apply_blocks(const Matrix& R, Matrix& out) const {
    out.resize(R.rows(), R.cols());
    for (const auto& b : blocks_) {
      const Eigen::Index n = b.second.rows();
      out.middleRows(b.first, n) = b.second.solve(R.middleRows(b.first, n));
    }
  }
  // Q_mm^{-1} B.
  Matrix solve(const Matrix& B) const {
    if (!cg_) {  // two blocked triangular solves (BLAS dtrsm for large m, lapack.hpp)
      Matrix X = B;
      detail::solve_lower_in_place(Lq(), X);
      detail::solve_lower_transposed_in_place(Lq(), X);
      return X;
    }
    check_memory(8.0 * 3.0 * H_ * d_ * B.cols() + 8.0 * 8.0 * n_missing() * B.cols(), "x",
                 "conjugate gradients on " + std::to_string(B.cols()) + " right-hand sides");
    // Preconditioner: the frame blocks of Q_mm. (Sigma_mm, applied through
    // the factors like Q_mm, needed 2-5x more iterations at BeijingAir size.)
    return block_pcg([this](const Matrix& V, Matrix& out) { apply_mm(V, out, Gi_, Li_); },
                     [this](const Matrix& R, Matrix& out) { apply_blocks(R, out); }, B, tol_, max_iter_);
  }
  void fill_Qmm(Eigen::Ref<Matrix> Q) const {
    const Eigen::Index m = n_missing();
    for (Eigen::Index c = 0; c < m; ++c)
      for (Eigen::Index a = 0; a < m; ++a) Q(a, c) = Gi_(frame_[a], frame_[c]) * Li_(var_[a], var_[c]);
  }
  Matrix Qmm() const {
    Matrix Q(n_missing(), n_missing());
    fill_Qmm(Q);
    return Q;
  }
  // The lower Cholesky factor of Q_mm (precision path).
  Eigen::Map<const Matrix> Lq() const { return Lq_buf_.map(); }
  Matrix covariance_entries_of(const std::vector<int>& e) const {
    check_memory(8.0 * e.size() * e.size(), "x",
                 "the dense covariance of " + std::to_string(e.size()) + " x " + std::to_string(e.size()) + " entries");
    Matrix S(e.size(), e.size());
    for (std::size_t q = 0; q < e.size(); ++q)
      for (std::size_t p = 0; p < e.size(); ++p) S(p, q) = Gamma_(e[p] / d_, e[q] / d_) * Lambda_(e[p] % d_, e[q] % d_);
    return S;
  }
  // Eigenvalues (ascending) and vectors of Q_mm, computed once.
  const std::pair<Vector, Matrix>& eigen() const {
    std::call_once(eigen_once_, [this] {
      const double m = n_missing();
      check_memory(8.0 * 3.0 * m * m, "x",
                   "an eigen-decomposition of the " + std::to_string(n_missing()) + " x " +
                       std::to_string(n_missing()) + " precision of the missing entries");
      Matrix Q = Qmm();
      Vector q;
      if (!detail::symmetric_eigen_in_place(Q, q, true))  // LAPACK dsyevd for large m
        throw numeric_error("eigen-decomposition of Q_mm failed.");
      eigen_ = {std::move(q), std::move(Q)};
      eigen_ready_ = true;
    });
    return eigen_;
  }

  Matrix means(const Batch& x) const {
    const int n = x.n;
    Matrix W(H_, static_cast<Eigen::Index>(n) * d_);
    for (int i = 0; i < n; ++i) {
      const double* xi = x.seq(i);
      for (int h = 0; h < H_; ++h)
        for (int j = 0; j < d_; ++j) {
          const int k = h * d_ + j;
          W(h, static_cast<Eigen::Index>(i) * d_ + j) = mask_.observed[k] ? xi[k] - mu_(h, j) : 0.0;
        }
    }
    if (!W.allFinite()) {
      for (int i = 0; i < n; ++i)
        for (int k : obs_)
          if (!std::isfinite(x.seq(i)[k]))
            throw input_error("x", "observed value at frame " + std::to_string(k / d_ + 1) + ", variable " +
                                       std::to_string(k % d_ + 1) + " is not finite (NA, NaN or Inf).");
    }
    const Matrix y = solve(gather_missing(kron_apply(W), n));
    Matrix out(n, n_missing());
    for (int i = 0; i < n; ++i)
      for (Eigen::Index a = 0; a < n_missing(); ++a) out(i, a) = mu_(frame_[a], var_[a]) - y(a, i);
    return out;
  }

  int H_, d_;
  bool cg_;
  double tol_;
  int max_iter_;
  RowMatrix mu_;
  Matrix Gamma_, Lambda_, LG_, LL_, Gi_, Li_;
  std::vector<int> frame_, var_;
  detail::LargeMatrix Lq_buf_;  // precision: lower Cholesky factor of Q_mm (Lq())
  std::vector<std::pair<Eigen::Index, Eigen::LLT<Matrix>>> blocks_;  // cg: frame blocks (first row, factor)
  mutable std::once_flag eigen_once_;
  mutable std::pair<Vector, Matrix> eigen_;
  mutable std::atomic<bool> eigen_ready_{false};
};

}  // namespace

std::unique_ptr<Conditional> make_conditional_precision(const GaussianProcess& gp, const Mask& mask, bool cg,
                                                        const ConditionalOptions& options) {
  if (mask.H != gp.H() || mask.d != gp.d())
    throw input_error("pattern", "the pattern does not match the process's H and d.");
  mask.require_proper("pattern");
  return std::unique_ptr<Conditional>(new PrecisionConditional(gp, mask, cg, options));
}

}  // namespace ditimpute
