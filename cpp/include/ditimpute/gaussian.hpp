// See cpp/DESIGN.md for the layers and conventions.
// Gaussian-process layer: kernels (kernel.hpp), the separable process
// Gamma (x) Lambda, exact simulation, and conditionals of missing values given
// observed ones (cpp/DESIGN.md; the paper's section 3.1 and eq. 9).
#pragma once

#include "ditimpute/common.hpp"
#include "ditimpute/kernel.hpp"
#include "ditimpute/schedule.hpp"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

namespace ditimpute {

// ------------------------------------------------------ the process itself --
// x ~ N(vec(mean), Gamma (x) Lambda), one sequence H x d.
// Construction validates and factorises once (Cholesky of Gamma and Lambda).
class GaussianProcess {
 public:
  // Throws input_error naming "Gamma", "Lambda" or "mean" when a matrix is
  // not square, not symmetric, not positive definite, not finite, or when
  // the dimensions disagree; Gamma too when it is numerically singular (a
  // Cholesky pivot within H machine epsilons of its row's variance: frames
  // that repeat one another; a nugget fixes it). A singular Lambda is taken
  // as an exact relation between variables. `mean` is H x d.
  GaussianProcess(Matrix Gamma, Matrix Lambda, RowMatrix mean);

  int H() const { return static_cast<int>(Gamma_.rows()); }
  int d() const { return static_cast<int>(Lambda_.rows()); }
  const Matrix& Gamma() const { return Gamma_; }
  const Matrix& Lambda() const { return Lambda_; }
  const RowMatrix& mean() const { return mean_; }
  const Matrix& chol_Gamma() const { return LG_; }   // lower, Gamma = LG LG^T
  const Matrix& chol_Lambda() const { return LL_; }  // lower

  // n exact draws: X_i = mean + LG Z LL^T with Z standard normal H x d.
  Batch simulate(int n, Rng& rng) const;

 private:
  Matrix Gamma_, Lambda_, LG_, LL_;
  RowMatrix mean_;
};

// The latent GP of the paper's section 6.2: Y = phi(X) + eps, entry-wise
// phi(x) = x + exp(-x^2) + 2 sin(x), eps ~ N(0, noise_var).
Batch latent_transform(const Batch& X, double noise_var, Rng& rng);

// ----------------------------------------------------------- conditionals --
// The law of the missing entries of one pattern given the observed ones:
// N(mu_cond(x_obs), Sigma_cond). Missing entries are ordered by vec index
// (frame-major), the order of Mask::missing_entries().
// Built once per pattern; every sequence sharing the pattern reuses it.
class Conditional {
 public:
  virtual ~Conditional() = default;

  const Mask& mask() const { return mask_; }
  int n_missing() const { return static_cast<int>(miss_.size()); }
  const std::vector<int>& missing_entries() const { return miss_; }
  const std::vector<int>& observed_entries() const { return obs_; }
  // True for the Kronecker (frame-level) path.
  virtual bool kronecker() const = 0;
  // The path's name: "Kronecker", "dense", "precision" (Cholesky of Q_mm) or
  // "CG" (matrix-free conjugate gradients on Q_mm).
  virtual std::string method() const = 0;
  // True when eigenvalues() is part of the factorisation already (cheap), so
  // closed-form L2 radii (weighted chi-squares) are affordable; the precision
  // and CG paths say false and radii come from samples (impute.hpp).
  virtual bool cheap_eigenvalues() const { return true; }
  // Per-entry conditional sd, exact; the CG path returns an empty vector
  // (no cheap diagonal of Q_mm^{-1}: estimate it from samples).
  virtual Vector marginal_sd() const { return covariance().diagonal().cwiseMax(0.0).cwiseSqrt(); }

  // Conditional mean of one sequence; `x` is its full vec (H*d values, only
  // observed entries are read; they must be finite, else input_error "x").
  virtual Vector mean(const double* x) const = 0;
  // Conditional means of every sequence of a batch: n x n_missing.
  virtual Matrix mean(const Batch& x) const;
  // Dense Sigma_cond (n_missing x n_missing). For tests and small cases.
  virtual Matrix covariance() const = 0;
  // Sigma_cond written into `out` (n_missing x n_missing), memory the caller
  // owns (an R matrix, say): the precision path computes it in place there,
  // with no second m x m buffer (each new 27 MB buffer costs ~80 ms of page
  // faults on this project's VMs at BeijingAir size). Default: covariance().
  virtual void covariance_into(Eigen::Ref<Matrix> out) const;
  // Eigenvalues of Sigma_cond, ascending.
  virtual Vector eigenvalues() const = 0;
  // kappa(Sigma_cond); by default the ratio of eigenvalues() (the precision
  // path finds its two extreme eigenvalues by a Krylov method).
  virtual double kappa_cond() const;
  // kappa(Sigma_obs): the covariance of the observed entries.
  virtual double kappa_obs() const = 0;

  // Exact conditional score (eq. 9) of Z states at time t:
  // rows of V are states v (n_missing values each); returns Z x n_missing
  // -(alpha_t^2 Sigma_cond + sigma_t^2 I)^{-1} (v - alpha_t mu),
  // alpha_t = exp(-t/2), sigma_t^2 = 1 - exp(-t).
  virtual Matrix score(const Matrix& V, const Vector& mu, double t) const = 0;

  // Z exact draws of the missing entries given conditional mean mu: Z x n_missing.
  virtual Matrix sample(const Vector& mu, int Z, Rng& rng) const = 0;

 protected:
  Conditional(Mask mask);
  // covariance_into()'s output must be n_missing x n_missing (numeric_error).
  void check_covariance_output(const Eigen::Ref<const Matrix>& out) const;
  Mask mask_;
  std::vector<int> miss_, obs_;
};

// How an entry-level pattern is conditioned (frame-level patterns always take
// the Kronecker path, except with `dense`):
//  * dense:     Cholesky of Sigma restricted to [observed; missing] entries,
//               O((Hd)^3), the reference;
//  * precision: Q = Gamma^{-1} (x) Lambda^{-1}; x_m | x_o ~ N(mu_m -
//               Q_mm^{-1} (Q r0)_m, Q_mm^{-1}) with r0 the centred values, 0 at
//               missing entries; one Cholesky of the m x m matrix Q_mm;
//  * cg:        the same law matrix-free: Q_mm v = (Gamma^{-1} V Lambda^{-1})_m
//               (V the H x d matrix of v, 0 elsewhere), preconditioned
//               conjugate gradients (block Jacobi over frames) for the mean,
//               pathwise conditioning (Matheron's rule) for samples: a prior
//               draw f through the Cholesky factors of Gamma and Lambda, then
//               mu_cond + f_m + Q_mm^{-1} (Q f0)_m, f0 = f with 0 at missing
//               entries, all samples' solves as one block;
//  * automatic: precision while Q_mm is at most kPrecisionMaxMissing square
//               (512 MB), CG beyond. The precision path was faster than dense at
//               every size measured, down to H d = 48 (bench_entry_conditional).
enum class ConditionalMethod { automatic, dense, precision, cg };
struct ConditionalOptions {
  ConditionalMethod method = ConditionalMethod::automatic;
  double cg_tol = 1e-10;   // relative residual ||b - Q_mm x|| / ||b|| of every CG solve
  int cg_max_iter = 0;     // 0: 10 * n_missing + 100
};
constexpr int kPrecisionMaxMissing = 8000;
// The precision path gives closed-form radii (eigenvalues of Q_mm) up to this
// many missing entries; beyond, and on the CG path, radii come from samples.
constexpr int kExactRadiusMaxMissing = 500;
ConditionalMethod parse_conditional_method(const std::string& s);  // input_error "method"

// Frame-level masks take the Kronecker path (never forms the Hd x Hd matrix),
// entry-level masks the path `options` chooses (above). Throws input_error
// "pattern" when nothing or everything is missing, or when the mask does not
// match the process's H and d; "x" (naming the size) when a dense or
// precision factor would not fit in memory (check_memory: use method cg).
std::unique_ptr<Conditional> make_conditional(const GaussianProcess& gp, const Mask& mask,
                                              const ConditionalOptions& options = ConditionalOptions());

// Dense reference: builds Gamma (x) Lambda and conditions with a full
// Cholesky. Slow; for tests and the benchmark baseline only.
std::unique_ptr<Conditional> make_conditional_dense(const GaussianProcess& gp, const Mask& mask);

// A(rows, cols) with index lists (Eigen 3.3 has no index-array slicing);
// input_error "rows" / "cols" for an index outside the matrix.
Matrix gather(const Matrix& A, const std::vector<int>& rows, const std::vector<int>& cols);
// Conditioning on Q = Gamma^{-1} (x) Lambda^{-1} (kronecker_solve.cpp);
// make_conditional picks it. `cg` selects the matrix-free path.
std::unique_ptr<Conditional> make_conditional_precision(const GaussianProcess& gp, const Mask& mask, bool cg,
                                                        const ConditionalOptions& options);

// Entries (rows, cols) of Cov(vec X) = Gamma (x) Lambda, by 0-based vec index,
// without forming the Hd x Hd matrix; input_error "rows" / "cols" for an
// index outside 0..Hd-1.
Matrix covariance_entries(const GaussianProcess& gp, const std::vector<int>& rows, const std::vector<int>& cols);

}  // namespace ditimpute
