// Shared pieces of the core: the normal generator every sampler draws from,
// seeds, parallel_for.
#include <catch2/catch.hpp>

#include "ditimpute/common.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace ditimpute;

TEST_CASE("fill_standard_normal draws N(0, 1): moments, cdf and tails", "[common]") {
  // 4 million draws: the mean has sd 5e-4, the variance 7e-4, a cdf value
  // at most 2.5e-4; the tolerances are 5 sd. The tail beyond 3.44 (the
  // ziggurat's slow path, P = 5.8e-4 per side) is checked separately.
  const std::size_t n = 4000000;
  std::vector<double> v(n);
  Rng rng(42);
  fill_standard_normal(rng, v.data(), n);
  double mean = 0, m2 = 0, m3 = 0, m4 = 0;
  for (double x : v) mean += x / n;
  for (double x : v) {
    const double c = x - mean;
    m2 += c * c / n;
    m3 += c * c * c / n;
    m4 += c * c * c * c / n;
  }
  CHECK(std::abs(mean) < 2.5e-3);
  CHECK(std::abs(m2 - 1) < 3.5e-3);
  CHECK(std::abs(m3) < 6e-3);        // skewness 0, sd sqrt(15 / n) = 1.9e-3
  CHECK(std::abs(m4 - 3) < 0.025);   // kurtosis 3, sd sqrt(96 / n) = 4.9e-3
  std::sort(v.begin(), v.end());
  auto cdf = [&](double q) {
    return static_cast<double>(std::lower_bound(v.begin(), v.end(), q) - v.begin()) / static_cast<double>(n);
  };
  for (double q : {-3.0, -2.0, -1.0, -0.5, 0.0, 0.3, 1.0, 1.96, 2.5, 3.0}) {
    const double phi = 0.5 * std::erfc(-q / std::sqrt(2.0));
    INFO("q = " << q);
    CHECK(std::abs(cdf(q) - phi) < 5 * std::sqrt(phi * (1 - phi) / n) + 1e-6);
  }
  const double tail = 0.5 * std::erfc(3.6 / std::sqrt(2.0));  // beyond the ziggurat's base layer
  CHECK(std::abs((1.0 - cdf(3.6)) - tail) < 5 * std::sqrt(tail / n));
  CHECK(std::abs(cdf(-3.6) - tail) < 5 * std::sqrt(tail / n));
  // The same seed, the same draws; odd lengths use half of the last 64-bit output.
  std::vector<double> a(7), b(7);
  Rng r1(5), r2(5);
  fill_standard_normal(r1, a.data(), 7);
  fill_standard_normal(r2, b.data(), 7);
  CHECK(a == b);
}

TEST_CASE("case_seed gives distinct streams and parallel_for covers every index once", "[common]") {
  CHECK(case_seed(1, 0) != case_seed(1, 1));
  CHECK(case_seed(1, 0) != case_seed(2, 0));
  // No two (seed, case) pairs of a 200 x 200 grid share a stream: 40,000
  // 64-bit values collide by chance with probability 40000^2 / 2^65 = 4e-11,
  // so a repeat means the mixing is broken (e.g. seed + i, or seed ^ i, which
  // maps (1, 0) and (0, 1) together).
  std::set<std::uint64_t> seen;
  for (std::uint64_t s = 0; s < 200; ++s)
    for (std::uint64_t i = 0; i < 200; ++i) seen.insert(case_seed(s, i));
  CHECK(seen.size() == 40000u);
  std::vector<std::atomic<int>> hits(1000);
  parallel_for(1000, 3, [&](int i) { hits[i]++; });
  CHECK(std::all_of(hits.begin(), hits.end(), [](const std::atomic<int>& h) { return h.load() == 1; }));
  CHECK_THROWS_AS(parallel_for(10, 2, [](int i) {
                    if (i == 5) throw input_error("x", "bad");
                  }),
                  input_error);
}

TEST_CASE("check_cancelled throws only under a scope whose check says so, on its own thread", "[common]") {
  REQUIRE_NOTHROW(check_cancelled());  // no front end: never stops
  int calls = 0;
  {
    CancelScope scope([&] { return ++calls >= 3; });
    REQUIRE_NOTHROW(check_cancelled());
    REQUIRE_NOTHROW(check_cancelled());
    REQUIRE_THROWS_AS(check_cancelled(), cancelled);
    // Worker threads have no hook: the front end is never called from them.
    // (parallel_for also runs indices on the calling thread, which has it.)
    const auto caller = std::this_thread::get_id();
    std::atomic<int> thrown_elsewhere{0};
    parallel_for(64, 4, [&](int) {
      const bool worker = std::this_thread::get_id() != caller;
      try {
        check_cancelled();
      } catch (const cancelled&) {
        thrown_elsewhere += worker;
      }
    });
    REQUIRE(thrown_elsewhere == 0);
    {
      CancelScope inner([] { return false; });
      REQUIRE_NOTHROW(check_cancelled());
    }
    REQUIRE_THROWS_AS(check_cancelled(), cancelled);  // the outer check is back
  }
  REQUIRE_NOTHROW(check_cancelled());
}

TEST_CASE("the memory guard names the argument and follows the limit", "[common]") {
  REQUIRE(memory_limit() > 0);
  REQUIRE_NOTHROW(check_memory(1e6, "x", "a small matrix"));
  REQUIRE_THROWS_AS(check_memory(1e30, "H", "a huge matrix"), input_error);
  try {
    check_memory(1e30, "H", "a huge matrix");
  } catch (const input_error& e) {
    REQUIRE(e.arg() == "H");
    REQUIRE(std::string(e.what()).find("GB") != std::string::npos);
  }
  set_memory_limit(1000);
  REQUIRE_THROWS_AS(check_memory(1001, "n", "a batch"), input_error);
  REQUIRE_NOTHROW(check_memory(1000, "n", "a batch"));
  set_memory_limit(0);  // the default again
  REQUIRE(memory_limit() > 1000);
  REQUIRE_THROWS_AS(set_memory_limit(-1), input_error);
}
