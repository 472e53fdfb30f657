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

// One variable's latent process, a sum of independent Markov blocks: the
// state s(t) stacks the blocks' states, s(t + delta) = A(delta) s(t) +
// N(0, Q(delta)), s(t_1) ~ N(0, P0), and the process value is h^T s(t).
// Blocks:
//  * matern: Matern of order p - 1/2 (p = 1, 2, 3: laplace, matern32,
//    matern52) with variance and lengthscale, state (f, f', ...), stationary;
//  * level: a random walk (Wiener process) with variance `rate` per unit of
//    time, state the level, diffuse start (variance `diffuse`);
//  * trend: a local linear trend, the level integrating a random-walk slope:
//    state (level, slope), level noise `rate`, slope noise `slope_rate` per
//    unit of time, diffuse start;
//  * harmonic: a quasi-periodic term of angular frequency omega whose
//    amplitude and phase drift as a Matern process of order `order` (1:
//    exponential, time constant `decay`; 2: Matern 3/2, lengthscale `decay`),
//    stationary variance `variance`; state kron(envelope (order), (cos, sin)).
// Diffuse coordinates make the process non-stationary: the likelihood and the
// conditionals then treat their starting values as unknown constants
// (approximately: a prior variance `diffuse`, and the first innovations that
// carry it are left out of the likelihood, see log_likelihood()).
struct LatentBlock {
  enum class Kind { matern, level, trend, harmonic } kind = Kind::matern;
  int order = 1;             // matern: p; harmonic: the envelope's (1 or 2)
  double variance = 1.0;     // matern, harmonic
  double lengthscale = 1.0;  // matern
  double rate = 0.0;         // level, trend: level noise per unit of time
  double slope_rate = 0.0;   // trend: slope noise per unit of time
  double omega = 0.0;        // harmonic: angular frequency (radians per unit of time)
  double decay = 1.0;        // harmonic: time constant of the envelope
  int dimension() const;
};

class LatentProcess {
 public:
  LatentProcess() = default;
  // Validates each block (input_error "kernel" naming the bad value).
  explicit LatentProcess(std::vector<LatentBlock> blocks, double diffuse = 1e6);
  // A single Matern block of the kernel's type (laplace, matern32, matern52).
  static LatentProcess matern(const Kernel& kernel);

  int dimension() const { return n_; }
  // Coordinates with a diffuse start.
  int diffuse_count() const { return n_diffuse_; }
  double diffuse() const { return diffuse_; }
  const std::vector<LatentBlock>& blocks() const { return blocks_; }
  // A(delta) and Q(delta), n x n (delta >= 0 and finite, else input_error "delta").
  void transition(double delta, Matrix& A, Matrix& Q) const;
  Matrix initial_covariance() const;  // P0
  Vector readout() const;             // h
  // Covariance of the process values at lag tau for a stationary process
  // (no diffuse block): h^T A(tau) P0 h.
  double covariance(double tau) const;

 private:
  std::vector<LatentBlock> blocks_;
  double diffuse_ = 1e6;
  int n_ = 0, n_diffuse_ = 0;
};


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

// Bytes a smoothing of `frames` frames with a state of `state` coordinates
// holds at once (its filtered moments, frames (state (state + 1) / 2 + state)
// doubles): what StateSpaceGP::conditional() checks against the memory
// limit, and what running several smoothings side by side multiplies.
double smoother_bytes(int frames, int state);

class StateSpaceGP {
 public:
  // Validates: input_error "kernel" unless state_space_supported() (names the
  // supported kernels), "lengthscale", "variance", "scale" (kernel values),
  // "nugget" (finite, >= 0), "Lambda" (symmetric positive definite),
  // "mean" (H x d, finite), "times" (empty, or H strictly increasing finite
  // values; empty means t_i = i * scale). H is mean.rows().
  StateSpaceGP(const Kernel& kernel, double nugget, Matrix Lambda, RowMatrix mean, Vector times = Vector());
  // Any latent process (the structural series models of structural.hpp).
  StateSpaceGP(LatentProcess process, double nugget, Matrix Lambda, RowMatrix mean, Vector times = Vector());

  int H() const { return static_cast<int>(mean_.rows()); }
  int d() const { return static_cast<int>(Lambda_.rows()); }
  // Coordinates of one component's state (1, 2 or 3 for a Matern kernel).
  int order() const { return process_.dimension(); }
  const LatentProcess& process() const { return process_; }

  // The conditional of the missing entries of `x` (H * d values in vec order;
  // only observed entries are read and must be finite, else input_error "x")
  // given its observed ones under `mask`, with Z joint draws from `rng`.
  // Frames with nothing observed just predict; a mask with nothing missing
  // gives empty results. Memory is estimated first (check_memory): the
  // filtered moments, H (dp (dp + 1) / 2 + dp) doubles, name "x"; the draws,
  // Z m doubles, name "n_samples".
  // With Z = 0 and several variables (or a large state) the means and sds
  // come from the smoother's information form (r, N), the RTS pass only
  // over a diffuse start; `rts_moments` takes the RTS pass throughout (the
  // tests compare the two).
  SmoothedConditional conditional(const Mask& mask, const double* x, int Z, Rng& rng,
                                  bool rts_moments = false) const;

  // The exact log-likelihood of the observed entries of `x` under `mask`
  // (Kalman prediction-error decomposition; nothing observed gives 0). With
  // diffuse coordinates (k per component, so k d in all), the first frames
  // with observed entries, until k d entries are reached, are conditioned on
  // and left out: the likelihood of the rest given them (the diffuse
  // likelihood, approximately, for a large prior variance `diffuse`). `used` (optional)
  // receives the number of observed entries that count; `innovations`
  // (optional, H x d, NaN elsewhere) each counted entry's one-step innovation
  // over its predictive sd (for d = 1 the standardised innovations, white
  // under the model). `condition_on` k > the diffuse count conditions on the
  // first k d observed entries instead (k per variable), so that processes
  // with different diffuse counts score the same entries and their
  // likelihoods can be compared (structural.cpp's candidates).
  double log_likelihood(const Mask& mask, const double* x, long* used = nullptr,
                        RowMatrix* innovations = nullptr, int condition_on = 0) const;

  // Transition A(delta) of one component's state (p x p; its noise is
  // Q(delta)) and the covariance of its starting state (for a Matern kernel
  // the stationary Pinf, so that Cov(f(t + delta), f(t)) = (A Pinf)(0, 0) =
  // k(delta)); input_error "delta" unless delta is finite and >= 0.
  Matrix transition(double delta) const;
  Matrix stationary_covariance() const { return process_.initial_covariance(); }

 private:
  void validate(double nugget, Matrix Lambda, RowMatrix mean, Vector times);
  // The forward Kalman filter over the frames: writes the filtered moments
  // of every frame into `store` when it is given (H (n (n + 1) / 2 + n)
  // doubles for a state of n coordinates, each frame's mean then the lower
  // triangle of its covariance), adds the log-likelihood of the innovations.
  double filter(const Mask& mask, const double* x, double* store, long* used, RowMatrix* innovations,
                int condition_on = 0) const;
  // The same for one variable and a state of at most 20 coordinates, without
  // allocating per frame (the structural fits run it hundreds of times).
  double filter_univariate(const Mask& mask, const double* x, double* store, long* used,
                           RowMatrix* innovations, int condition_on) const;

  LatentProcess process_;
  double nugget_ = 0.0;
  Matrix Lambda_, L_;
  RowMatrix mean_;
  Vector times_;
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
