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

// gamma(r) for distance r >= 0 (input_error "r" when r < 0 or NaN).
double kernel_value(const Kernel& kernel, double r);
// H x H matrix Gamma_ij = k(||e_i - e_j||). Validates the kernel
// (input_error "lengthscale", "variance", "scale", "radius", "period", "H").
Matrix kernel_matrix(const Kernel& kernel, int H);

// ------------------------------------------------ trend-and-season kernel --
}  // namespace ditimpute
