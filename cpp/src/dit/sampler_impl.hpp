// Internal (torch) interface of the samplers, shared by the oracle mode and the
// DiT model. Not a public header: include only from cpp/src/dit/*.cpp.
#pragma once

#include "ditimpute/sampler.hpp"

#include <torch/torch.h>

#include <functional>

namespace ditimpute {
namespace detail {

// Score of the conditional law at time t for a batch of states x (shape
// [Z, H, d]; observed entries hold the observed values). Returns [Z, H, d];
// values on observed entries are ignored.
using ScoreFn = std::function<torch::Tensor(const torch::Tensor& x, double t)>;

// Runs the reverse-time sampler from x_T ~ N(0, I) on the missing entries
// (observed entries held at x_obs throughout) and returns x at t0, [Z, H, d].
// x_obs: [H, d] (its missing entries are ignored, NaN allowed); observed:
// [H, d] with nonzero = observed; dtype and device of x_obs are used for every
// tensor. All noise comes from `gen` (a CPU generator: the noise is drawn on
// the CPU and moved, so a seed gives the same draws on every device).
// Throws input_error "Z" (Z < 1), "observed" (shape), the options' errors, and
// numeric_error when the result is not finite.
torch::Tensor reverse_sample(const ScoreFn& score, const torch::Tensor& x_obs, const torch::Tensor& observed,
                             int Z, const SamplerOptions& options, torch::Generator& gen);

}  // namespace detail
}  // namespace ditimpute
