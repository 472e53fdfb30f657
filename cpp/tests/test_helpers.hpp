// Helpers shared by the Catch2 tests of the core.
#pragma once

#include <catch2/catch.hpp>

#include "ditimpute/common.hpp"

#include <string>

namespace ditimpute {
namespace testing {

// Runs f and requires an input_error that names `arg` and says something.
template <class F>
void require_input_error(F&& f, const std::string& arg) {
  try {
    f();
    FAIL("no input_error thrown; expected one naming \"" << arg << "\"");
  } catch (const input_error& e) {
    CHECK(e.arg() == arg);
    CHECK(std::string(e.what()).size() > 10);
  }
}

// A random full-rank covariance, far from diagonal: M M^T / d + ridge I with M
// a d x d matrix of standard normals drawn from rng.
inline Matrix random_full_rank_spd(int d, Rng& rng, double ridge) {
  Matrix M(d, d);
  fill_standard_normal(rng, M.data(), static_cast<std::size_t>(M.size()));
  return M * M.transpose() / d + ridge * Matrix::Identity(d, d);
}

}  // namespace testing
}  // namespace ditimpute
