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
// "tanh") (test_dit). x86-64 runs 8 lanes (AVX2 + FMA, chosen at run time)
// or 4 (SSE2); other targets a scalar loop.
void gelu_tanh_inplace(float* x, std::int64_t n);

// The same on a tensor: a contiguous float32 CPU tensor is overwritten, split
// over LibTorch's threads; anything else (CUDA, bf16, a strided view) gets
// torch::gelu(x, "tanh") and the result is returned. Inference only: a tensor
// that requires grad is refused with std::logic_error.
torch::Tensor gelu_tanh_(torch::Tensor x);

}  // namespace detail
}  // namespace ditimpute
