// See cpp/DESIGN.md for the layers and conventions.
// The exact conditional of a long series under a Markov (Matern half-integer)
// kernel, in time and memory linear in the number of frames: a Kalman filter
// over frames, a Rauch-Tung-Striebel smoother for the conditional means and
// per-entry sds, and forward-filtering backward-sampling for joint draws. No
// H x H or Hd x Hd matrix is ever formed.
//
// The process is the package's separable GP with a nugget,
//   vec(X) ~ N(vec(mean), (K + nugget I) (x) Lambda),  K_ij = k(|t_i - t_j|),
// written as X_t = mean_t + L (f_t + e_t), Lambda = L L^T, with the d
// components of f independent GPs of kernel k and e_t ~ N(0, nugget I) white.
// Each component of f is the first coordinate of a p-dimensional linear SDE
// (laplace = Matern 1/2: p = 1, state f; matern32: p = 2, (f, f'); matern52:
// p = 3, (f, f', f'')), so the state has d p coordinates. The white part e_t
// is not carried in the state: the filter sees it as observation noise
// nugget * Lambda_oo on each frame's observed entries, and each frame's missing
// entries are read off the smoothed state plus the part of L e_t that the
// frame's observed entries do not determine.
#pragma once

#include "ditimpute/common.hpp"
#include "ditimpute/impute.hpp"
#include "ditimpute/kernel.hpp"

#include <string>
#include <vector>

namespace ditimpute {

// True for the kernels with an exact finite state (laplace, matern32,
// matern52 over the index embedding).
bool state_space_supported(const Kernel& kernel);

// The law of every missing entry of one series and joint draws of them.
struct SmoothedConditional {
  std::vector<int> missing;  // vec indices t * d + j of the missing entries, ascending
  Vector mean;               // conditional means, one per missing entry
  Vector sd;                 // exact per-entry conditional sds
  Matrix samples;            // Z x m joint conditional draws (0 x m when Z = 0)
};

class StateSpaceGP {
 public:
  // Validates: input_error "kernel" unless state_space_supported() (names the
  // supported kernels), "lengthscale", "variance", "scale" (kernel values),
  // "nugget" (finite, >= 0), "Lambda" (symmetric positive definite),
  // "mean" (H x d, finite), "times" (empty, or H strictly increasing finite
  // values; empty means t_i = i * scale). H is mean.rows().
  StateSpaceGP(const Kernel& kernel, double nugget, Matrix Lambda, RowMatrix mean, Vector times = Vector());

  int H() const { return static_cast<int>(mean_.rows()); }
  int d() const { return static_cast<int>(Lambda_.rows()); }
  // Coordinates of one component's state (1, 2 or 3).
  int order() const { return p_; }

  // The conditional of the missing entries of `x` (H * d values in vec order;
  // only observed entries are read and must be finite, else input_error "x")
  // given its observed ones under `mask`, with Z joint draws from `rng`.
  // Frames with nothing observed just predict; a mask with nothing missing
  // gives empty results. Memory is estimated first (check_memory): the
  // filtered moments, H (dp (dp + 1) / 2 + dp) doubles, name "x"; the draws,
  // Z m doubles, name "n_samples".
  SmoothedConditional conditional(const Mask& mask, const double* x, int Z, Rng& rng) const;

  // Transition A(delta) = exp(F delta) of one component's state (p x p; its
  // noise is Q = Pinf - A Pinf A^T) and the stationary covariance Pinf, so
  // that Cov(f(t + delta), f(t)) = (A Pinf)(0, 0) = k(delta).
  Matrix transition(double delta) const;
  Matrix stationary_covariance() const { return Pinf_; }

 private:
  Kernel kernel_;
  double nugget_;
  Matrix Lambda_, L_;
  RowMatrix mean_;
  Vector times_;
  int p_ = 1;
  double lambda_ = 1.0;  // sqrt(2 nu) / lengthscale
  Matrix Pinf_;
};

// The exact imputer of impute() (impute.hpp) on this path: case i draws from
// Rng(case_seed(seed, i)); one smoother pass per case gives its draws and its
// exact means and sds; the radius is NaN, so impute() takes it from the exact
// draws around the exact mean (the k-th distance, k = ceil((Z + 1) level): it
// holds its level, the eigenvalues of Sigma_cond being out of reach).
class StateSpaceSampler : public CaseSampler {
 public:
  explicit StateSpaceSampler(const StateSpaceGP& gp) : gp_(gp) {}
  std::vector<Matrix> draw(const Batch& x, const std::vector<Mask>& masks, int Z, std::uint64_t seed,
                           int threads) const override;
  std::string name() const override { return "exact GP (state space)"; }
  bool exact() const override { return true; }
  std::vector<GaussianLaw> laws(const Batch& x, const std::vector<Mask>& masks, double level,
                                int threads) const override;
  std::vector<GaussianLaw> draw_and_laws(const Batch& x, const std::vector<Mask>& masks, int Z, std::uint64_t seed,
                                         double level, int threads, std::vector<Matrix>& samples) const override;

 private:
  const StateSpaceGP& gp_;
};

}  // namespace ditimpute
