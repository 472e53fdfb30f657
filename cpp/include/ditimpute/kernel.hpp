// See cpp/DESIGN.md for the layers and conventions.
// Kernels of the Gaussian-process layer: the time covariance Gamma_ij =
// k(||e_i - e_j||) over an embedding e of the frames (cpp/DESIGN.md; the
// paper's section 3.1).
#pragma once

#include "ditimpute/common.hpp"

#include <string>

namespace ditimpute {

// ---------------------------------------------------------------- kernels --
enum class KernelType { laplace, rbf, matern32, matern52 };

// Parses "laplace" (alias "exponential"), "rbf", "matern32", "matern52".
KernelType kernel_type_from_string(const std::string& name);
std::string to_string(KernelType type);

// Time embedding e_i of frame i (i = 1..H, as in the paper):
//  index:      e_i = i * scale                       (1-D)
//  sinusoidal: e_i = radius * [sin(2 pi i / period), cos(2 pi i / period)]
struct Embedding {
  enum class Kind { index, sinusoidal };
  Kind kind = Kind::index;
  double scale = 1.0;
  double radius = 1.0;
  double period = 1.0;
};

struct Kernel {
  KernelType type = KernelType::laplace;
  double lengthscale = 1.0;
  double variance = 1.0;
  Embedding embedding;
};

// gamma(r) for distance r >= 0.
double kernel_value(const Kernel& kernel, double r);
// H x H matrix Gamma_ij = k(||e_i - e_j||). Validates the kernel
// (input_error "lengthscale", "variance", "scale", "radius", "period", "H").
Matrix kernel_matrix(const Kernel& kernel, int H);

// ------------------------------------------------ trend-and-season kernel --
// The stationary kernel of impute_series() over the lag tau (in frames):
//   k(tau) = w_smooth * m52(tau / smooth_lengthscale)
//          + w_season * exp(-2 sin^2(pi tau / period) / periodic_lengthscale^2)
//                     * exp(-tau^2 / (2 decay_lengthscale^2))
//          + w_nugget * [tau == 0],
// m52 the Matern 5/2 correlation. The weights are shares of the variance
// (>= 0; their sum is the kernel's value at 0); a zero weight drops its term.
// The linear trend of the mean lives above the kernel (series.hpp).
struct SeasonalKernel {
  double w_smooth = 1.0, smooth_lengthscale = 10.0;
  double w_season = 0.0, period = 12.0, periodic_lengthscale = 1.0, decay_lengthscale = 48.0;
  double w_nugget = 0.0;
};

// k(tau) for tau = 0..H-1 (validates: input_error "kernel").
Vector seasonal_kernel_lags(const SeasonalKernel& kernel, int H);
// The H x H Toeplitz matrix Gamma_ij = k(|i - j|).
Matrix kernel_matrix(const SeasonalKernel& kernel, int H);

}  // namespace ditimpute
