// Structural models of a whole series (impute_series() in R): a local level
// or local linear trend, a smooth term, a quasi-periodic season and a nugget,
// shared by the variables through Lambda, fitted by maximum likelihood and
// conditioned on exactly by Kalman filtering and smoothing (state_space.hpp),
// in time and memory linear in the length of the series.
//
// Each variable j of the standardised series y (T x d, NaN = missing) is
//   y_tj = mean_tj + (L (z_t + e_t))_j,   Lambda = L L^T,
// with the d components of z independent copies of one latent process
//   z = level/trend + smooth + season,
//  * level: a random walk whose increments have variance `level_rate` per
//    frame (Trend::level), or a local linear trend whose slope is a random
//    walk too (`slope_rate`, Trend::trend); their starting values are unknown
//    constants (diffuse), so a gap is bridged from both of its ends and the
//    series has no global mean to revert to;
//  * smooth: Matern 5/2 with variance `smooth_var` and `smooth_lengthscale`;
//  * season: `harmonics` quasi-periodic terms of the period with the Fourier
//    weights of the periodic kernel exp(-2 sin^2(pi tau / period) / lp^2)
//    (weight of harmonic k proportional to I_k(1 / lp^2), the modified Bessel
//    function), total variance `season_var`, whose amplitudes and phases
//    drift with time constant `season_decay` frames, exponentially
//    (`season_envelope` 1) or as a smoother Matern 3/2 process (2); with
//    `period_max > period_min` the period is fitted too, within those
//    bounds (a cycle of unknown length, as the sunspots' 11 years), else it
//    is fixed (a fitted period is checked against the form with the period
//    held at its start, and freed from the held optimum when that is the
//    better: its likelihood is never below the held form's);
// and e_t white with variance `nugget`. Trend::none is the stationary model:
// the mean is then a linear trend in time per variable (least squares).
#pragma once

#include "ditimpute/common.hpp"
#include "ditimpute/state_space.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ditimpute {

struct StructuralSpec {
  enum class Trend { none, level, trend } trend = Trend::level;
  bool seasonal = false;
  double period = 0.0;  // frames (seasonal only); the fit's starting value when it is fitted
  double period_min = 0.0, period_max = 0.0;  // seasonal only: fitted within these when period_max > period_min
  int harmonics = 0;    // seasonal only; 0 = min(3, floor(period / 2)); at most floor(period / 2)
  double level_rate = 1e-2, slope_rate = 1e-6;
  double smooth_var = 0.5, smooth_lengthscale = 10.0;
  double season_var = 0.0, periodic_lengthscale = 1.0, season_decay = 100.0;
  int season_envelope = 1;  // the season's drift: 1 exponential, 2 Matern 3/2 (smoother, twice the state)
  double nugget = 0.1;
};

std::string to_string(StructuralSpec::Trend trend);

// The latent process of a spec (validates: input_error "model" naming the
// bad value; the season needs a period of at least 2 frames).
LatentProcess structural_process(const StructuralSpec& spec);

// Parameters of the spec's form that the fit estimates (the shared scale
// and Lambda not included).
int structural_parameter_count(const StructuralSpec& spec);

struct StructuralFitOptions {
  // The forms to fit (their parameters are starting values); the one with
  // the smallest BIC is chosen.
  std::vector<StructuralSpec> candidates;
  int max_frames = 6000;   // fit on the best-observed stretch of at most this many frames
  int max_evaluations = 600;
  double tol = 1e-7;       // relative change of the log-likelihood over the simplex
  double ridge = 0.0;      // added to the diagonal of the correlation behind Lambda
  int threads = 0;
};

struct StructuralCandidate {
  StructuralSpec spec;
  double loglik = 0.0;  // of the fitting stretch, all variables jointly with the fitted Lambda, given
                        // each variable's first k observed values, k the largest diffuse count among
                        // the candidates fitted together (so that all of them score the same values)
  double df = 0.0;      // parameters: the form's, d scales, d (d - 1) / 2 correlations, the mean's or
                        // the diffuse starts' d per coordinate
  long nobs = 0;        // observed entries that count in the likelihood (the same for every candidate)
  double aic = 0.0, bic = 0.0;
  int evaluations = 0;
  bool converged = false;
  Matrix Lambda;   // d x d
  Matrix trend;    // 2 x d: intercept and slope per frame of the linear mean (Trend::none), else zero: the
                   // least-squares line the likelihood used (structural_conditional() refits it to its y)
};

struct StructuralFit {
  std::vector<StructuralCandidate> candidates;
  int chosen = 0;
  int fit_start = 0, fit_frames = 0;  // the fitting stretch
  const StructuralCandidate& best() const { return candidates[static_cast<std::size_t>(chosen)]; }
};

// Fits every candidate form to y (T x d, standardised, NaN = missing) by
// maximum likelihood: the form's parameters by Nelder-Mead on log scales over
// the sum of the variables' univariate log-likelihoods (each variable's scale
// profiled out in closed form); then Lambda = D R D from those scales (D) and
// the correlation R of the variables' standardised one-step innovations
// (pairwise over frames where both count; positive definite after clipping
// its eigenvalues at 1e-3 and adding `ridge`). input_error "x" when a
// variable has fewer than 3 observed values in the fitting stretch, or when a
// candidate has more parameters than the stretch has observed values per
// variable.
StructuralFit fit_structural(const RowMatrix& y, const StructuralFitOptions& options);

// The mean path (T x d) of a fitted candidate: its linear trend, or zero.
RowMatrix structural_mean(const StructuralCandidate& candidate, int T);

// Each variable's standardised one-step prediction errors under a fitted
// candidate (T x d; NaN where y is missing and at the values a level's or
// trend's diffuse start conditions on): the Kalman filter of the variable
// on its own (the fit's innovations, from which Lambda's correlations come),
// over its predictive sd at the variable's scale sqrt(Lambda(j, j)). White
// noise with variance 1 under the model: what residual checks (Ljung-Box,
// a normal QQ plot, outliers and level shifts) examine. A stationary form's
// mean is the candidate's stored line.
RowMatrix structural_innovations(const RowMatrix& y, const StructuralCandidate& candidate);

// The largest joint state (d times the process's coordinates) smoothed as one.
constexpr int kMaxJointState = 120;

// The exact conditional of y's missing entries under a fitted candidate, with
// Z joint draws from Rng(seed). A stationary form's line is the least-squares
// line through y's own observed values (the candidate's when y is the series
// it was fitted to), and its uncertainty is in the sds and draws: their
// spread is universal kriging's (the line's intercept and slope unknown), so
// intervals beyond the observed frames keep widening. With fixed_line the
// candidate's stored line (c.trend) is taken as known instead (the plug-in
// conditional, as before 2026-12-05): what impute_series()'s hidden-gap
// comparisons use on a series without leading or trailing gaps. The joint smoother runs when the state has at
// most `max_joint_state` coordinates (d times the process's); beyond, each
// variable is smoothed on its own (Lambda's off-diagonal ignored) in
// parallel. Missing entries in frame-major order (t * d + j).
SmoothedConditional structural_conditional(const RowMatrix& y, const StructuralCandidate& candidate, int Z,
                                           std::uint64_t seed, int threads, int max_joint_state = kMaxJointState,
                                           bool fixed_line = false);

// The exact conditional means and sds (no draws) of the missing entries of
// several versions of one series under one fitted candidate: the rounds of a
// self-calibration, each with other entries hidden. The versions run in
// parallel on up to `threads` threads, each on one; a single version gets them
// all. Each result is what structural_conditional(ys[i], candidate, 0, ...)
// returns, whatever the thread count.
std::vector<SmoothedConditional> structural_moments(const std::vector<RowMatrix>& ys,
                                                    const StructuralCandidate& candidate, int threads,
                                                    bool fixed_line = false);

// The paths of proper multiple imputation: one draw of y's missing entries
// under each candidate (a draw of the form and parameters), path i from
// seed seeds[i], with its conditional means and sds. The paths run in
// parallel on up to `threads` threads, each on one (one path gets them all);
// result i is what structural_conditional(y, candidates[i], 1, seeds[i], ...)
// returns, whatever the thread count. input_error "seeds" when the counts
// differ.
std::vector<SmoothedConditional> structural_paths(const RowMatrix& y,
                                                  const std::vector<StructuralCandidate>& candidates,
                                                  const std::vector<std::uint64_t>& seeds, int threads);

}  // namespace ditimpute
