// Sampler options and the oracle mode: the reverse-time samplers of
// reverse_sampler.hpp driven by the exact GP score, on Eigen matrices (no
// LibTorch needed). Choice of defaults: see ditimpute/sampler.hpp.
#include "ditimpute/reverse_sampler.hpp"
#include "ditimpute/sampler.hpp"

#include <cmath>
#include <sstream>

namespace ditimpute {

namespace {

// Tuned grids: lambda = log(alpha / sigma) at each point from T = 15 to
// t0 = 1e-5, found by `bench_sampler optimize 8,10 2e-4 3.6` (Nelder-Mead on
// the steps in lambda, minimising the worst relative variance error of the
// oracle sampler over conditional variances in [2e-4, 3.6]; worst errors in
// bench/results/sampler.md). Irregular by design: the search trades the error
// of one step against the next.
struct TunedGrid {
  SamplerOptions::Method method;
  std::vector<double> lambda;
};
const std::vector<TunedGrid>& tuned_grids() {
  using M = SamplerOptions::Method;
  static const std::vector<TunedGrid> grids = {
      {M::unipc2, {-7.500000, -1.687597, -0.372486, 1.117234, 2.340119, 3.599319, 4.375187, 5.712409, 5.756460}},
      {M::unipc2,
       {-7.500000, -2.473564, -1.224651, 0.126887, 1.300243, 2.334462, 3.212163, 4.086575, 4.591634, 5.439679,
        5.756460}},
      {M::unipc,
       {-7.500000, -1.790175, 0.138845, 1.429820, 2.324925, 2.900596, 3.798496, 4.110382, 4.880672, 5.159834,
        5.756460}},
  };
  return grids;
}

const TunedGrid* find_tuned(SamplerOptions::Method method, int steps) {
  for (const auto& g : tuned_grids())
    if (g.method == method && static_cast<int>(g.lambda.size()) == steps + 1) return &g;
  return nullptr;
}

double half_log_snr(double t) { return std::log(vp_alpha(t) / vp_sigma(t)); }
double time_of_half_log_snr(double l) { return std::log1p(std::exp(-2.0 * l)); }

}  // namespace

SamplerOptions::Grid resolved_grid(const SamplerOptions& options) {
  if (options.grid != SamplerOptions::Grid::automatic) return options.grid;
  return find_tuned(options.method, options.steps) ? SamplerOptions::Grid::tuned : SamplerOptions::Grid::geometric;
}

int default_steps(SamplerOptions::Method method) {
  using M = SamplerOptions::Method;
  switch (method) {
    case M::unipc2: return 8;
    case M::unipc: return 12;
    case M::dpm2m: return 50;
    case M::dpm2m_sde:
    case M::heun_sde:
    case M::heun_ode: return 200;
    case M::euler_maruyama: return 1000;
  }
  return 8;
}

std::vector<int> tuned_grid_steps(SamplerOptions::Method method) {
  std::vector<int> out;
  for (const auto& g : tuned_grids())
    if (g.method == method) out.push_back(static_cast<int>(g.lambda.size()) - 1);
  return out;
}

void SamplerOptions::validate() const {
  if (steps < 1) throw input_error("steps", "steps must be at least 1, not " + std::to_string(steps) + ".");
  if (!(std::isfinite(t0) && t0 > 0.0))
    throw input_error("t0", "t0 must be a positive finite time, not " + std::to_string(t0) + ".");
  if (!(std::isfinite(T) && T > t0))
    throw input_error("T", "T must be finite and greater than t0 (" + std::to_string(t0) + "), not " +
                               std::to_string(T) + ".");
  if (grid == Grid::tuned && !find_tuned(method, steps)) {
    std::ostringstream msg;
    msg << "a tuned grid is stored only for";
    bool first = true;
    for (Method m : {Method::unipc2, Method::unipc}) {
      const std::vector<int> st = tuned_grid_steps(m);
      msg << (first ? " " : " and ") << "method \"" << to_string(m) << "\" with steps";
      for (std::size_t i = 0; i < st.size(); ++i) msg << (i == 0 ? " " : " or ") << st[i];
      first = false;
    }
    msg << ", not method \"" << to_string(method) << "\" with " << steps
        << " steps; use grid \"geometric\" for other samplers and step counts.";
    throw input_error("grid", msg.str());
  }
}

SamplerOptions::Method sampler_method_from_string(const std::string& name) {
  using M = SamplerOptions::Method;
  if (name == "sde" || name == "heun_sde") return M::heun_sde;
  if (name == "euler" || name == "euler_maruyama" || name == "em") return M::euler_maruyama;
  if (name == "ode" || name == "heun_ode") return M::heun_ode;
  if (name == "dpm2m") return M::dpm2m;
  if (name == "dpm2m_sde") return M::dpm2m_sde;
  if (name == "unipc") return M::unipc;
  if (name == "unipc2") return M::unipc2;
  throw input_error("method", "method must be \"unipc2\", \"unipc\", \"sde\", \"euler\", \"ode\", \"dpm2m\" or \"dpm2m_sde\", not \"" +
                                  name + "\".");
}

std::string to_string(SamplerOptions::Method method) {
  switch (method) {
    case SamplerOptions::Method::euler_maruyama: return "euler";
    case SamplerOptions::Method::heun_sde: return "sde";
    case SamplerOptions::Method::heun_ode: return "ode";
    case SamplerOptions::Method::dpm2m: return "dpm2m";
    case SamplerOptions::Method::dpm2m_sde: return "dpm2m_sde";
    case SamplerOptions::Method::unipc: return "unipc";
    case SamplerOptions::Method::unipc2: return "unipc2";
  }
  return "?";
}

SamplerOptions::Grid time_grid_from_string(const std::string& name) {
  if (name == "geometric") return SamplerOptions::Grid::geometric;
  if (name == "uniform") return SamplerOptions::Grid::uniform;
  if (name == "tuned") return SamplerOptions::Grid::tuned;
  if (name == "automatic") return SamplerOptions::Grid::automatic;
  throw input_error("grid", "grid must be \"automatic\", \"tuned\", \"geometric\" or \"uniform\", not \"" + name +
                                "\".");
}

std::string to_string(SamplerOptions::Grid grid) {
  switch (grid) {
    case SamplerOptions::Grid::geometric: return "geometric";
    case SamplerOptions::Grid::uniform: return "uniform";
    case SamplerOptions::Grid::tuned: return "tuned";
    case SamplerOptions::Grid::automatic: return "automatic";
  }
  return "?";
}

int score_evaluations(const SamplerOptions& options) {
  using M = SamplerOptions::Method;
  return options.method == M::heun_sde || options.method == M::heun_ode ? 2 * options.steps : options.steps;
}

std::vector<double> time_grid(const SamplerOptions& options) {
  options.validate();
  const int n = options.steps;
  std::vector<double> t(static_cast<std::size_t>(n) + 1);
  const SamplerOptions::Grid grid = resolved_grid(options);
  if (grid == SamplerOptions::Grid::tuned) {
    // The stored lambdas as fractions of their span, mapped onto this T and t0.
    const std::vector<double>& l = find_tuned(options.method, n)->lambda;
    const double lT = half_log_snr(options.T), l0 = half_log_snr(options.t0);
    for (int k = 0; k <= n; ++k)
      t[k] = time_of_half_log_snr(lT + (l0 - lT) * (l[k] - l.front()) / (l.back() - l.front()));
    t.front() = options.T;
    t.back() = options.t0;
    return t;
  }
  for (int k = 0; k <= n; ++k) {
    const double u = static_cast<double>(k) / n;
    t[k] = grid == SamplerOptions::Grid::geometric ? options.T * std::pow(options.t0 / options.T, u)
                                                           : options.T + (options.t0 - options.T) * u;
  }
  t.front() = options.T;  // exact end points whatever pow rounds to
  t.back() = options.t0;
  return t;
}

Matrix OracleOps::noise() {
  Matrix z(Z, m);
  fill_standard_normal(rng, z.data(), static_cast<std::size_t>(z.size()));
  return z;
}

Matrix sample_oracle(const Conditional& cond, const double* x, int Z, const SamplerOptions& options,
                     std::uint64_t seed) {
  options.validate();
  if (Z < 1) throw input_error("Z", "the number of samples Z must be at least 1, not " + std::to_string(Z) + ".");
  const Vector mu = cond.mean(x);  // validates the observed entries of x
  OracleOps ops{cond, mu, Z, cond.n_missing(), Rng(seed)};
  return run_reverse_sampler<Matrix>(ops, options);
}

}  // namespace ditimpute
