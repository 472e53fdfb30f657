// Internal helpers of the Gaussian-process layer, shared by
// gaussian_process.cpp, conditional.cpp, gp_fit.cpp and series.cpp. Not a public header: include only
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

}  // namespace detail
}  // namespace ditimpute
