#include "gelu.hpp"

#include <ATen/Parallel.h>

#include <cmath>
#include <cstring>
#include <stdexcept>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define DITIMPUTE_GELU_X86 1
#include <immintrin.h>
#endif

namespace ditimpute {
namespace detail {

namespace {

// Constants shared by every lane width (Cephes expf).
constexpr float kMinusTwoSqrt2OverPi = -2.0f * 0.7978845608028654f;
constexpr float kCubic = 0.044715f;
constexpr float kClamp = 87.0f;
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: (a + kRound) - kRound rounds a to an integer
constexpr float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
// exp(r) ~ 1 + r + r^2 (kPoly[0] r^5 + ... + kPoly[5]) on |r| <= ln 2 / 2, Horner order.
constexpr float kPoly[] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                           4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};

inline float gelu_scalar(float x) {
  float a = kMinusTwoSqrt2OverPi * (x + kCubic * x * x * x);
  a = std::fmin(std::fmax(a, -kClamp), kClamp);  // NaN -> -kClamp: no NaN reaches the int cast
  const float k = (a * kLog2e + kRound) - kRound;
  const float r = (a - k * kLn2Hi) - k * kLn2Lo;
  float q = 0.0f;
  for (float coef : kPoly) q = q * r + coef;
  q = q * r * r + r + 1.0f;
  const std::int32_t bits = (static_cast<std::int32_t>(k) + 127) << 23;
  float two_k;
  std::memcpy(&two_k, &bits, sizeof two_k);
  return x / (1.0f + q * two_k);
}

#ifdef DITIMPUTE_GELU_X86
__attribute__((target("avx2,fma"))) std::int64_t gelu_avx2(float* p, std::int64_t n) {
  const __m256 c = _mm256_set1_ps(kMinusTwoSqrt2OverPi), c3 = _mm256_set1_ps(kCubic);
  const __m256 lo = _mm256_set1_ps(-kClamp), hi = _mm256_set1_ps(kClamp);
  const __m256 log2e = _mm256_set1_ps(kLog2e), round = _mm256_set1_ps(kRound);
  const __m256 ln2hi = _mm256_set1_ps(kLn2Hi), ln2lo = _mm256_set1_ps(kLn2Lo), one = _mm256_set1_ps(1.0f);
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_loadu_ps(p + i);
    __m256 a = _mm256_mul_ps(c, _mm256_fmadd_ps(_mm256_mul_ps(c3, _mm256_mul_ps(x, x)), x, x));
    a = _mm256_min_ps(_mm256_max_ps(a, lo), hi);
    const __m256 k = _mm256_sub_ps(_mm256_fmadd_ps(a, log2e, round), round);
    const __m256 r = _mm256_fnmadd_ps(k, ln2lo, _mm256_fnmadd_ps(k, ln2hi, a));
    __m256 q = _mm256_setzero_ps();
    for (float coef : kPoly) q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(coef));
    q = _mm256_add_ps(_mm256_fmadd_ps(q, _mm256_mul_ps(r, r), r), one);
    const __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127)), 23);
    _mm256_storeu_ps(p + i, _mm256_div_ps(x, _mm256_fmadd_ps(q, _mm256_castsi256_ps(bits), one)));
  }
  return i;
}

bool cpu_has_avx2_fma() {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  return has;
}
#endif

}  // namespace

bool fast_gelu_available() {
#ifdef DITIMPUTE_GELU_X86
  return cpu_has_avx2_fma();
#else
  return false;
#endif
}

void gelu_tanh_inplace(float* x, std::int64_t n) {
  std::int64_t i = 0;
#ifdef DITIMPUTE_GELU_X86
  if (cpu_has_avx2_fma()) i = gelu_avx2(x, n);
#endif
  for (; i < n; ++i) x[i] = gelu_scalar(x[i]);
}

torch::Tensor gelu_tanh_(torch::Tensor x) {
  if (x.requires_grad() && torch::GradMode::is_enabled())
    throw std::logic_error("gelu_tanh_: in-place GELU on a tensor that requires grad");
  if (!fast_gelu_available() || !x.device().is_cpu() || x.scalar_type() != torch::kFloat32 || !x.is_contiguous())
    return torch::gelu(x, "tanh");
  float* p = x.data_ptr<float>();
  at::parallel_for(0, x.numel(), 1 << 14,
                   [p](std::int64_t begin, std::int64_t end) { gelu_tanh_inplace(p + begin, end - begin); });
  return x;
}

}  // namespace detail
}  // namespace ditimpute
