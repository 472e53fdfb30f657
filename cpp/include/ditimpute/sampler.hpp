// Reverse-time samplers of the VP-SDE (DESIGN.md section 4; the paper's
// eq. 6): options shared by the network-driven and the oracle (exact GP
// score) modes. This header is torch-free; the samplers live in
// cpp/src/dit/sampler.cpp.
#pragma once

#include "ditimpute/common.hpp"
#include "ditimpute/gaussian.hpp"

#include <cstdint>
#include <string>

namespace ditimpute {

struct SamplerOptions {
  enum class Method { euler_maruyama, heun_ode };
  enum class Grid { geometric, uniform };
  Method method = Method::euler_maruyama;
  Grid grid = Grid::geometric;
  int steps = 200;
  double t0 = 1e-4;   // early-stopping time
  double T = 10.0;    // terminal time; x_T ~ N(0, I) is the prior
  void validate() const;  // input_error "steps", "t0", "T"
};

SamplerOptions::Method sampler_method_from_string(const std::string& name);  // "sde", "ode"
SamplerOptions::Grid time_grid_from_string(const std::string& name);         // "geometric", "uniform"

// The time grid T = t_0 > t_1 > ... > t_steps = t0 (steps + 1 points).
std::vector<double> time_grid(const SamplerOptions& options);

// Oracle mode: Z samples of the missing entries of one sequence `x` (its full
// vec; observed entries are read) drawn by the same reverse-time sampler as the
// network, driven by the exact conditional score of `cond`.
// Returns Z x cond.n_missing() (missing entries in vec order).
Matrix sample_oracle(const Conditional& cond, const double* x, int Z, const SamplerOptions& options,
                     std::uint64_t seed, int threads = 0);

}  // namespace ditimpute
