// Sampler options and the oracle mode: the reverse-time samplers of
// reverse_sampler.hpp driven by the exact GP score, on Eigen matrices (no
// LibTorch needed). Choice of defaults: see ditimpute/sampler.hpp.
#include "ditimpute/reverse_sampler.hpp"
#include "ditimpute/sampler.hpp"

#include <cmath>

namespace ditimpute {

void SamplerOptions::validate() const {
  if (steps < 1) throw input_error("steps", "steps must be at least 1, not " + std::to_string(steps) + ".");
  if (!(std::isfinite(t0) && t0 > 0.0))
    throw input_error("t0", "t0 must be a positive finite time, not " + std::to_string(t0) + ".");
  if (!(std::isfinite(T) && T > t0))
    throw input_error("T", "T must be finite and greater than t0 (" + std::to_string(t0) + "), not " +
                               std::to_string(T) + ".");
}

SamplerOptions::Method sampler_method_from_string(const std::string& name) {
  using M = SamplerOptions::Method;
  if (name == "sde" || name == "heun_sde") return M::heun_sde;
  if (name == "euler" || name == "euler_maruyama" || name == "em") return M::euler_maruyama;
  if (name == "ode" || name == "heun_ode") return M::heun_ode;
  if (name == "dpm2m") return M::dpm2m;
  if (name == "dpm2m_sde") return M::dpm2m_sde;
  if (name == "unipc") return M::unipc;
  throw input_error("method", "method must be \"unipc\", \"sde\", \"euler\", \"ode\", \"dpm2m\" or \"dpm2m_sde\", not \"" +
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
  }
  return "?";
}

SamplerOptions::Grid time_grid_from_string(const std::string& name) {
  if (name == "geometric") return SamplerOptions::Grid::geometric;
  if (name == "uniform") return SamplerOptions::Grid::uniform;
  throw input_error("grid", "grid must be \"geometric\" or \"uniform\", not \"" + name + "\".");
}

std::string to_string(SamplerOptions::Grid grid) {
  return grid == SamplerOptions::Grid::geometric ? "geometric" : "uniform";
}

int score_evaluations(const SamplerOptions& options) {
  using M = SamplerOptions::Method;
  return options.method == M::heun_sde || options.method == M::heun_ode ? 2 * options.steps : options.steps;
}

std::vector<double> time_grid(const SamplerOptions& options) {
  options.validate();
  const int n = options.steps;
  std::vector<double> t(static_cast<std::size_t>(n) + 1);
  for (int k = 0; k <= n; ++k) {
    const double u = static_cast<double>(k) / n;
    t[k] = options.grid == SamplerOptions::Grid::geometric ? options.T * std::pow(options.t0 / options.T, u)
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
