// Reverse-time samplers of the VP-SDE (cpp/DESIGN.md; the paper's
// eq. 6): options shared by the network-driven and the oracle (exact GP
// score) modes, and the oracle sampler itself. Eigen only: the stepping code is
// the template of reverse_sampler.hpp, which the DiT (cpp/src/dit/sampling.cpp)
// instantiates for torch tensors. See cpp/DESIGN.md.
//
// Forward process (eq. 4): dx = -x/2 dt + dW, so x_t = alpha_t x_0 + sigma_t e
// with alpha_t = exp(-t/2), sigma_t^2 = 1 - exp(-t). Sampling runs the reverse
// SDE (eq. 6) dv = [v/2 + s(v, t)] dt + dW, or the probability-flow ODE
// dx/dt = -(x + s(x, t))/2, from t = T down to t = t0, on the missing entries
// only; observed entries are held at their values throughout.
//
// Default: UniPC-3 (B(h) = h) with 12 steps (12 score calls, against 400 for
// the first default of 200 Heun-SDE steps and 20 for UniPC-3 bh2), chosen by
// measurement in oracle mode (bench/bench_sampler.cpp, bench/results/sampler.md):
// its exact output law puts 95.45-95.66% of the exact conditional mass in the
// 95% region on P1-P4 (the trace of its covariance within 1.5%), and with 2000
// draws it stays within 1 point of a 1000-step Heun-SDE reference. At 10 steps
// it over-covers P4 (97.5%); bh2 at 12 steps under-covers P1 (93.5%); every
// other sampler at <= 20 calls fails on some pattern (DPM-Solver++(2M) loses
// 7% of P1's variance at 20). The other samplers stay as options.
//
// Time grid and range, chosen in oracle mode (exact GP score, H = 96, d = 8,
// patterns P1-P4; numbers in cpp/tests/test_sampler.cpp): conditional variances go
// down to ~1e-3 .. 1e-4, so the grid is geometric in t (equal steps in log t,
// as fine near t0 as the variances need) and t0 = 1e-5 (the state at t0 carries
// extra variance ~t0, negligible against 1e-4 .. 1e-3). T = 15 makes the prior
// mismatch alpha_T = 5.5e-4 negligible: the ODE carries it to the output
// unchanged (in standard units), and at T = 10 it biased the mean measurably.
// No final denoising step (x0 = (x + sigma^2 s)/alpha): at t0 = 1e-5 it
// changes nothing measurable. Euler-Maruyama, the plain discretisation of
// eq. 6, is first order in the step and over-disperses (at 200 geometric steps
// a 95% region covers ~97-98% for pattern P4; it needs >1000 steps), so the
// default SDE sampler is the stochastic Heun scheme, weak order 2 for additive
// noise, at two score evaluations a step (the SDE option).
#pragma once

#include "ditimpute/common.hpp"
#include "ditimpute/gaussian.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ditimpute {

struct SamplerOptions {
  // euler_maruyama: v <- v + h (v/2 + s(v, t)) + sqrt(h) z, one score call a step.
  // heun_sde: stochastic Heun on the reverse SDE: an Euler-Maruyama predictor,
  //   then the trapezoidal drift with the same noise; two score calls a step.
  // heun_ode: Heun (trapezoidal predictor-corrector) on the probability-flow
  //   ODE; deterministic given x_T; two score calls a step.
  // dpm2m: DPM-Solver++(2M) on the probability-flow ODE, one score call a
  //   step (data prediction, exact in the linear part, second-order multistep).
  // dpm2m_sde: its SDE counterpart (DPM-Solver++(2M) SDE), one call a step.
  // unipc: UniPC-3 (bh1, B(h) = h) on the probability-flow ODE, data
  //   prediction, one score call a step (predictor, and a corrector that
  //   reuses the next step's call); at 12 geometric steps it matched a
  //   1000-step Heun-SDE reference in oracle mode (bench/results/sampler.md).
  // unipc2: UniPC-2 with B(h) = e^h - 1 (bh2), otherwise the same. The
  //   default, at 8 steps on the tuned grid: its worst variance error over
  //   conditional variances in [2e-4, 3.6] is 1.4% (12-step unipc geometric:
  //   4.3%), so 8 calls now do what 12 did (bench/results/sampler.md).
  enum class Method { euler_maruyama, heun_sde, heun_ode, dpm2m, dpm2m_sde, unipc, unipc2 };
  // geometric: t_k = T (t0 / T)^(k / steps); uniform: equal steps in t;
  // tuned: a grid in lambda = log(alpha / sigma) found by minimax search of
  //   the oracle variance error (`bench_sampler optimize`), stored for unipc2
  //   at 8 and 10 steps and unipc at 10 (tuned_grid_steps()); its lambdas are
  //   fixed fractions of [lambda(T), lambda(t0)], found for T = 15, t0 = 1e-5;
  // automatic (the default): tuned where one is stored for the method and
  //   step count, geometric otherwise.
  enum class Grid { automatic, geometric, uniform, tuned };
  Method method = Method::unipc2;
  Grid grid = Grid::automatic;
  int steps = 8;
  double t0 = 1e-5;   // early-stopping time
  double T = 15.0;    // terminal time; x_T ~ N(0, I) is the prior
  // GP-informed DiTs (DiTConfig::gp "residual" or "score") only: the GP as a
  // control variate. The sampler runs a second time with the network's output
  // set to zero and the same random numbers, which draws b_z from the model's
  // GP base (whose mean mu, the GP's conditional mean, is known exactly), and
  // shifts every missing entry's Z samples by beta (mean(b) - mu), beta the
  // entry's least-squares slope of the samples on b over the Z draws (1 when
  // Z < 3 or b does not vary). The samples' spread is unchanged; their mean
  // loses the Monte Carlo error the network's draws share with the GP's:
  // Var(x) / Z becomes about (1 - rho^2) Var(x) / Z, rho the draws'
  // correlation with b, which is 1 for an untrained model (whose samples'
  // mean is then mu exactly). Costs one more sampling run without the
  // network. Other imputers ignore it; a DiT without a GP base rejects it
  // (input_error "control_variate").
  bool gp_control = false;
  void validate() const;  // input_error "steps", "t0", "T"; "grid" (tuned without a stored grid)
};

// "sde" / "heun_sde" -> heun_sde; "euler" / "euler_maruyama" / "em" ->
// euler_maruyama; "ode" / "heun_ode" -> heun_ode; "dpm2m"; "dpm2m_sde";
// "unipc"; "unipc2".
// input_error "method" otherwise.
SamplerOptions::Method sampler_method_from_string(const std::string& name);
std::string to_string(SamplerOptions::Method method);
// "automatic", "geometric", "uniform", "tuned"; input_error "grid" otherwise.
SamplerOptions::Grid time_grid_from_string(const std::string& name);
std::string to_string(SamplerOptions::Grid grid);
// Score-function calls one sampling run makes (per batch of Z samples).
int score_evaluations(const SamplerOptions& options);

// Step counts with a stored tuned grid for `method` (empty: none).
std::vector<int> tuned_grid_steps(SamplerOptions::Method method);
// The grid `options` runs on: automatic resolved to tuned or geometric.
SamplerOptions::Grid resolved_grid(const SamplerOptions& options);
// Steps when a caller names a method but no step count: the fewest of those
// measured with the exact GP score (bench/results/sampler_default_steps.md)
// at which the method passes the oracle check of test_sampler.cpp on P1-P4
// (covariance and mean errors within 1.2x those of exact draws, 95% region
// coverage within 1.5 points): unipc2 8 (its tuned grid), unipc 12, dpm2m 50,
// dpm2m_sde and heun_sde 200, euler_maruyama 1000; heun_ode 200 like
// heun_sde (it passed at 100 with 0.1 point of coverage to spare). Heun
// makes 2 calls a step. At the former 12 for all but unipc2, heun_sde's
// covariance errors were 4-120x those of exact draws and heun_ode's regions
// covered 0-84% (0-37% with Lambda = I).
int default_steps(SamplerOptions::Method method);

// The time grid T = t_0 > t_1 > ... > t_steps = t0 (steps + 1 points).
std::vector<double> time_grid(const SamplerOptions& options);

// The Ops of run_reverse_sampler (reverse_sampler.hpp) in oracle mode: the
// state holds the missing entries only (Z x m), so nothing is held, and the
// score is the exact one of eq. 9 at conditional mean mu.
struct OracleOps {
  const Conditional& cond;
  const Vector& mu;
  int Z, m;
  Rng rng;
  Matrix noise();
  Matrix hold(const Matrix& x) { return x; }
  Matrix score(const Matrix& x, double t) { return cond.score(x, mu, t); }
  bool finite(const Matrix& x) { return x.allFinite(); }
};

// Oracle mode: Z samples of the missing entries of one sequence `x` (its full
// vec; only observed entries are read) drawn by the same reverse-time sampler as
// the network, driven by the exact conditional score of `cond` (float64, eq. 9).
// Returns Z x cond.n_missing() (missing entries in vec order). All noise comes
// from Rng(seed) through fill_standard_normal.
Matrix sample_oracle(const Conditional& cond, const double* x, int Z, const SamplerOptions& options,
                     std::uint64_t seed);

}  // namespace ditimpute
