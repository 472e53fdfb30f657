// Internal: the tanh-approximated GELU of the sampler's network path, in
// place. Include only from cpp/src/dit/*.cpp and the dit tests/bench.
#pragma once

#include <torch/torch.h>

#include <cstdint>

namespace ditimpute {
namespace detail {

// gelu(x) = 0.5 x (1 + tanh(z)), z = sqrt(2 / pi) (x + 0.044715 x^3), written
// as x / (1 + exp(-2 z)) over n floats, in place. exp is Cephes' single
// precision polynomial (degree 6 on |r| <= ln 2 / 2), its argument clamped to
// +-87 so that nothing overflows: within 5e-7 absolute of torch::gelu(x,
// "tanh") (test_dit). Runs 8 lanes where the CPU has AVX2 + FMA (checked at
// run time), otherwise a scalar loop (correct, but slower than LibTorch's).
void gelu_tanh_inplace(float* x, std::int64_t n);

// Whether gelu_tanh_inplace has its vector loop on this CPU.
bool fast_gelu_available();

// The same on a tensor: with the vector loop, a contiguous float32 CPU tensor
// is overwritten, split over LibTorch's threads; anything else (no AVX2, CUDA,
// bf16, a strided view) gets torch::gelu(x, "tanh") and the result is
// returned. Inference only: a tensor that requires grad is refused with
// std::logic_error.
torch::Tensor gelu_tanh_(torch::Tensor x);

}  // namespace detail
}  // namespace ditimpute
