// Kernels of the Gaussian-process layer (cpp/DESIGN.md): parsing of
// kernel names, gamma(r) and the H x H matrix Gamma over the time embedding.
#include "ditimpute/kernel.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>
#include <string>

namespace ditimpute {

namespace {

constexpr double kPi = 3.14159265358979323846;

void require_positive(double value, const std::string& arg) {
  if (!(std::isfinite(value) && value > 0.0)) {
    std::ostringstream msg;
    msg << arg << " must be a finite number > 0, not " << value << ".";
    throw input_error(arg, msg.str());
  }
}

}  // namespace

KernelType kernel_type_from_string(const std::string& name) {
  std::string s(name);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (s == "laplace" || s == "exponential") return KernelType::laplace;
  if (s == "rbf") return KernelType::rbf;
  if (s == "matern32") return KernelType::matern32;
  if (s == "matern52") return KernelType::matern52;
  throw input_error("kernel", "unknown kernel '" + name + "'; use laplace (exponential), rbf, matern32 or matern52.");
}

std::string to_string(KernelType type) {
  switch (type) {
    case KernelType::laplace: return "laplace";
    case KernelType::rbf: return "rbf";
    case KernelType::matern32: return "matern32";
    case KernelType::matern52: return "matern52";
  }
  return "unknown";
}

double kernel_value(const Kernel& kernel, double r) {
  // A negative or NaN distance is a caller's error, not a covariance (the
  // Laplace kernel gave exp(+u) > variance for r < 0: a review).
  if (!(r >= 0.0)) throw input_error("r", "a kernel's distance r must be >= 0, not " + std::to_string(r) + ".");
  const double u = r / kernel.lengthscale;
  switch (kernel.type) {
    case KernelType::laplace: return kernel.variance * std::exp(-u);
    case KernelType::rbf: return kernel.variance * std::exp(-0.5 * u * u);
    case KernelType::matern32: {
      const double s = std::sqrt(3.0) * u;
      return kernel.variance * (1.0 + s) * std::exp(-s);
    }
    case KernelType::matern52: {
      const double s = std::sqrt(5.0) * u;
      return kernel.variance * (1.0 + s + s * s / 3.0) * std::exp(-s);
    }
  }
  return 0.0;
}

Matrix kernel_matrix(const Kernel& kernel, int H) {
  if (H < 1) throw input_error("H", "H must be at least 1, not " + std::to_string(H) + ".");
  require_positive(kernel.lengthscale, "lengthscale");
  require_positive(kernel.variance, "variance");
  const Embedding& e = kernel.embedding;
  if (e.kind == Embedding::Kind::index) {
    require_positive(e.scale, "scale");
  } else {
    require_positive(e.radius, "radius");
    require_positive(e.period, "period");
  }
  check_memory(8.0 * H * H, "H", "the " + std::to_string(H) + " x " + std::to_string(H) + " kernel matrix");
  Matrix G(H, H);
  for (int i = 0; i < H; ++i)
    for (int j = 0; j <= i; ++j) {
      // ||e_i - e_j||: |i - j| scale, or 2 r |sin(pi (i - j) / C)| on the circle.
      const double r = e.kind == Embedding::Kind::index ? (i - j) * e.scale
                                                         : 2.0 * e.radius * std::abs(std::sin(kPi * (i - j) / e.period));
      G(i, j) = G(j, i) = kernel_value(kernel, r);
    }
  return G;
}

}  // namespace ditimpute
