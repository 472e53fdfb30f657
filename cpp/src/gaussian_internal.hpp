// Internal helpers of the Gaussian-process layer, shared by
// gaussian_process.cpp, conditional.cpp, gp_fit.cpp, series.cpp and state_space.cpp. Not a public header: include only
// from cpp/src/*.cpp.
#pragma once

#include <Eigen/Core>

#include <string>

namespace ditimpute {
namespace detail {

// log(2 pi), for Gaussian log-likelihoods.
constexpr double kLog2Pi = 1.83787706640934548356;

// "r x c", for messages about matrix dimensions.
inline std::string dims(Eigen::Index r, Eigen::Index c) {
  return std::to_string(r) + " x " + std::to_string(c);
}

// Inverse of the lower-triangular T (its strictly upper part is ignored and
// left zero), in place, by recursive 2 x 2 blocking:
// [A 0; B C]^{-1} = [A^{-1} 0; -C^{-1} B A^{-1} C^{-1}]. About m^3 / 3 flops,
// a third of a triangular solve against the identity (m^3: it does not see
// that the right-hand side is triangular).
void invert_lower(Eigen::Ref<Eigen::MatrixXd> T);

// L^T L for lower-triangular L (so (L L^T)^{-1} from the inverse of a
// Cholesky factor), by the same blocking: about m^3 / 3 flops against m^3 for
// a general product. The result is symmetric (both triangles written).
Eigen::MatrixXd lower_gram(const Eigen::MatrixXd& L);

// Strict check of a covariance given by the caller (non-empty, square, finite,
// symmetric relative to its largest entry, positive definite), then its lower
// Cholesky factor; input_error(arg) otherwise.
// With `strict_pivots`, a pivot at rounding level of its own row's variance
// (n machine epsilons) is an input_error too: numerically singular.
Eigen::MatrixXd checked_cholesky(const Eigen::MatrixXd& S, const std::string& arg, bool strict_pivots = false);

}  // namespace detail
}  // namespace ditimpute
