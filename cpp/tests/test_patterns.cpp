// Tests of missing patterns and masking strategies (patterns.hpp).
#include <catch2/catch.hpp>

#include "test_helpers.hpp"

#include "ditimpute/patterns.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

using namespace ditimpute;

namespace {

bool strictly_increasing(const std::vector<int>& v) {
  return std::adjacent_find(v.begin(), v.end(), [](int a, int b) { return a >= b; }) == v.end();
}

// Maximal runs of consecutive frames as (start, length), in order.
std::vector<std::pair<int, int>> runs(const std::vector<int>& frames) {
  std::vector<std::pair<int, int>> out;
  for (int f : frames) {
    if (!out.empty() && out.back().first + out.back().second == f)
      ++out.back().second;
    else
      out.push_back({f, 1});
  }
  return out;
}

using testing::require_input_error;

// Pearson's chi-square statistic of observed counts against equal expected counts.
double chi_square_uniform(const std::map<std::vector<int>, int>& counts, int cells, int draws) {
  const double expected = static_cast<double>(draws) / cells;
  double chi2 = 0.0;
  for (const auto& kv : counts) chi2 += (kv.second - expected) * (kv.second - expected) / expected;
  chi2 += (cells - static_cast<int>(counts.size())) * expected;  // cells never seen
  return chi2;
}

// Every valid placement of b blocks of length L in H frames with min_gap, by
// brute force over all start vectors (independent of the stars-and-bars code).
std::set<std::vector<int>> all_placements(int H, int b, int L, int min_gap) {
  std::set<std::vector<int>> out;
  std::vector<int> starts(static_cast<std::size_t>(b), 0);
  for (;;) {
    bool ok = starts.back() + L <= H;
    for (int i = 1; i < b && ok; ++i) ok = starts[i] >= starts[i - 1] + L + min_gap;
    if (ok) {
      std::vector<int> frames;
      for (int s : starts)
        for (int j = 0; j < L; ++j) frames.push_back(s + j);
      out.insert(frames);
    }
    int i = 0;
    while (i < b && ++starts[i] >= H) starts[i++] = 0;
    if (i == b) break;
  }
  return out;
}

}  // namespace

TEST_CASE("pattern_random: k distinct sorted frames, adjacency allowed", "[patterns]") {
  Rng rng(1);
  bool saw_adjacent = false;
  for (int H : {17, 32, 96, 128}) {
    for (int rep = 0; rep < 50; ++rep) {
      const auto f = pattern_random(H, 16, rng);
      REQUIRE(f.size() == 16);
      REQUIRE(strictly_increasing(f));
      REQUIRE(f.front() >= 0);
      REQUIRE(f.back() < H);
      if (runs(f).size() < f.size()) saw_adjacent = true;
    }
  }
  CHECK(saw_adjacent);  // 16 of 96 random frames are almost never all isolated
  CHECK(pattern_random(2, 1, rng).size() == 1);
}

TEST_CASE("pattern_blocks: sizes, no overlap, gap rule, any H", "[patterns]") {
  Rng rng(2);
  struct Case { int H, b, L, gap; };
  for (const Case c : {Case{96, 8, 2, 1}, Case{96, 4, 4, 1}, Case{96, 1, 16, 1}, Case{23, 8, 2, 1},
                       Case{19, 4, 4, 1}, Case{17, 1, 16, 1}, Case{17, 8, 2, 0}, Case{64, 4, 4, 3},
                       Case{128, 16, 1, 1}}) {
    for (int rep = 0; rep < 200; ++rep) {
      const auto f = pattern_blocks(c.H, c.b, c.L, rng, c.gap);
      REQUIRE(f.size() == static_cast<std::size_t>(c.b * c.L));
      REQUIRE(strictly_increasing(f));
      REQUIRE(f.front() >= 0);
      REQUIRE(f.back() < c.H);
      // Blocks are L consecutive frames at f[i*L]; the next block starts at
      // least gap observed frames after the previous one ends.
      for (int i = 0; i < c.b; ++i) {
        REQUIRE(f[i * c.L + c.L - 1] - f[i * c.L] == c.L - 1);
        if (i > 0) REQUIRE(f[i * c.L] - f[i * c.L - 1] - 1 >= c.gap);
      }
    }
  }
  // At the tightest fit (H = 23 for 8x2: 16 missing + 7 gaps) the slack is 0,
  // so the only placement is blocks at 0, 3, ..., 21.
  std::vector<int> only;
  for (int i = 0; i < 8; ++i) only.insert(only.end(), {3 * i, 3 * i + 1});
  CHECK(pattern_blocks(23, 8, 2, rng) == only);
}

TEST_CASE("pattern_blocks is uniform over all valid placements (chi-square)", "[patterns]") {
  // Pearson's statistic over all C(s+b, b) placements has a chi-square law
  // with cells-1 degrees of freedom when placement is uniform. Thresholds
  // are the 99.9% quantiles (5 df: 20.52, 9 df: 27.88), so a fair sampler
  // fails with probability 0.001 per seed; a sampler biased by as little as
  // 10% on one cell gives chi2 about 33 +- 8 (5 df) and fails.
  struct Case { int H, b, L, gap; double crit; };
  for (const Case c : {Case{7, 2, 2, 1, 20.52}, Case{7, 2, 2, 0, 27.88}}) {
    const auto valid = all_placements(c.H, c.b, c.L, c.gap);
    const int cells = static_cast<int>(valid.size());
    REQUIRE(cells == (c.gap == 1 ? 6 : 10));  // C(4, 2) and C(5, 2) by stars and bars
    Rng rng(20240 + c.gap);
    const int draws = 20000;
    std::map<std::vector<int>, int> counts;
    for (int i = 0; i < draws; ++i) {
      const auto f = pattern_blocks(c.H, c.b, c.L, rng, c.gap);
      REQUIRE(valid.count(f) == 1);
      ++counts[f];
    }
    CHECK(static_cast<int>(counts.size()) == cells);
    CHECK(chi_square_uniform(counts, cells, draws) < c.crit);
  }
}

TEST_CASE("mask_variable_blocks: each block in one variable, the rest observed", "[patterns]") {
  Rng rng(731);
  const int H = 20, d = 3, b = 3, L = 4;
  for (int draw = 0; draw < 2000; ++draw) {
    const Mask m = mask_variable_blocks(H, d, b, L, rng);
    REQUIRE(m.n_missing() == b * L);
    int blocks = 0;
    for (int j = 0; j < d; ++j) {
      std::vector<int> frames;
      for (int h = 0; h < H; ++h)
        if (!m.is_observed(h, j)) frames.push_back(h);
      // min_gap = 1: blocks of one variable never touch, so its runs are its blocks
      for (const auto& r : runs(frames)) {
        REQUIRE(r.second == L);
        ++blocks;
      }
    }
    REQUIRE(blocks == b);
  }
  // With min_gap = 0 two blocks of a variable may touch: 2 blocks of 3 in H = 7
  // leave one frame observed in their variable.
  for (int draw = 0; draw < 200; ++draw) REQUIRE(mask_variable_blocks(7, 2, 2, 3, rng, 0).n_missing() == 6);
}

TEST_CASE("mask_variable_blocks draws variables and placements uniformly (chi-square)", "[patterns]") {
  // One block of 2 in H = 5 frames of d = 2 variables: 2 x 4 equally likely
  // (variable, start) cells; two blocks of 1 frame: the variables' block
  // counts (2, 0), (1, 1), (0, 2) with probabilities 1/4, 1/2, 1/4 (binomial).
  // Thresholds: 99.9% chi-square quantiles (7 df 24.32, 2 df 13.82).
  const int draws = 20000;
  Rng rng(5150);
  std::map<std::vector<int>, int> cells;
  for (int i = 0; i < draws; ++i) {
    const Mask m = mask_variable_blocks(5, 2, 1, 2, rng);
    const auto miss = m.missing_entries();  // h * d + j, ascending
    REQUIRE(miss.size() == 2u);
    REQUIRE(miss[1] == miss[0] + 2);  // the next frame of the same variable
    ++cells[{miss[0] % 2, miss[0] / 2}];
  }
  CHECK(static_cast<int>(cells.size()) == 8);
  CHECK(chi_square_uniform(cells, 8, draws) < 24.32);

  int counts[3] = {0, 0, 0};  // blocks in variable 0: 0, 1 or 2
  for (int i = 0; i < draws; ++i) {
    const Mask m = mask_variable_blocks(9, 2, 2, 1, rng);
    int in0 = 0;
    for (int e : m.missing_entries()) in0 += (e % 2 == 0);
    ++counts[in0];
  }
  const double p[3] = {0.25, 0.5, 0.25};
  double chi2 = 0.0;
  for (int k = 0; k < 3; ++k) chi2 += (counts[k] - draws * p[k]) * (counts[k] - draws * p[k]) / (draws * p[k]);
  CHECK(chi2 < 13.82);

  // d = 1: the frame blocks' placements (support checked against brute force).
  const auto valid = all_placements(7, 2, 2, 1);
  for (int i = 0; i < 500; ++i) REQUIRE(valid.count(mask_variable_blocks(7, 1, 2, 2, rng).missing_frames()) == 1);
}

TEST_CASE("pattern_random is uniform over subsets (chi-square)", "[patterns]") {
  // C(5, 2) = 10 subsets; 99.9% quantile of chi-square with 9 df is 27.88.
  Rng rng(77);
  const int draws = 20000;
  std::map<std::vector<int>, int> counts;
  for (int i = 0; i < draws; ++i) ++counts[pattern_random(5, 2, rng)];
  CHECK(counts.size() == 10);
  CHECK(chi_square_uniform(counts, 10, draws) < 27.88);
}

TEST_CASE("pattern_tail and fixed generators", "[patterns]") {
  const auto t = pattern_tail(96, 16);
  REQUIRE(t.size() == 16);
  CHECK(t.front() == 80);
  CHECK(t.back() == 95);
  CHECK(strictly_increasing(t));
  CHECK(pattern_tail(2, 1) == std::vector<int>{1});

  Rng rng(3);
  const Mask m = PatternGenerator::fixed_frames({5, 2, 9}).draw(10, 3, rng);
  CHECK(m.frame_level());
  CHECK(m.missing_frames() == std::vector<int>{2, 5, 9});
  const Mask mt = PatternGenerator::tail_frames(4).draw(20, 2, rng);
  CHECK(mt.missing_frames() == std::vector<int>{16, 17, 18, 19});
}

TEST_CASE("mask_mcar: rate, properness, tiny rates terminate", "[patterns]") {
  Rng rng(4);
  // 200 masks of 96 x 8 = 153600 entries: missing count ~ Binomial with sd
  // sqrt(153600 * 0.1 * 0.9) = 117.6 entries = 0.00077 in rate; allow 5 sd.
  const int H = 96, d = 8, reps = 200;
  long missing = 0;
  bool entry_level = false;
  for (int r = 0; r < reps; ++r) {
    const Mask m = mask_mcar(H, d, 0.1, rng);
    REQUIRE(m.H == H);
    REQUIRE(m.d == d);
    missing += m.n_missing();
    if (!m.frame_level()) entry_level = true;
  }
  CHECK(std::abs(static_cast<double>(missing) / (reps * H * d) - 0.1) < 5 * 0.00077);
  CHECK(entry_level);

  // Conditioning on a proper mask: with 2 entries exactly one is missing, each
  // half the time (binomial sd over 4000 draws: 31.6; allow 5 sd = 158).
  int first = 0;
  for (int r = 0; r < 4000; ++r) {
    const Mask m = mask_mcar(1, 2, 0.5, rng);
    REQUIRE(m.n_missing() == 1);
    first += m.is_observed(0, 0) ? 0 : 1;
  }
  CHECK(std::abs(first - 2000) < 158);
  // A rate so small that a retry loop would spin ~1e9 times still returns at once.
  for (int r = 0; r < 100; ++r) {
    const Mask m = mask_mcar(1, 3, 1e-9, rng);
    REQUIRE(m.n_missing() >= 1);
    REQUIRE(m.n_missing() <= 2);
    REQUIRE_NOTHROW(m.require_proper("mask"));
  }
}

TEST_CASE("PatternGenerator labels", "[patterns]") {
  using G = PatternGenerator;
  CHECK(G::random_frames(16).label() == "16x1");
  CHECK(G::block_frames(8, 2).label() == "8x2");
  CHECK(G::block_frames(4, 4).label() == "4x4");
  CHECK(G::block_frames(1, 16).label() == "1x16");
  CHECK(G::block_frames(1, 16, 0).label() == "1x16");
  CHECK(G::block_frames(8, 2, 0).label() == "8x2/gap0");
  CHECK(G::block_frames(16, 1).label() == "16x1/gap1");  // not the random "16x1"
  CHECK(G::tail_frames(16).label() == "tail16");
  CHECK(G::fixed_frames({1, 2}).label() == "fixed");
  CHECK(G::mcar_entries(0.1).label() == "mcar0.1");
  CHECK(G::mcar_entries(0.25).label() == "mcar0.25");
  CHECK(G::variable_block_entries(1, 16).label() == "v1x16");
  CHECK(G::variable_block_entries(8, 2, 0).label() == "v8x2/gap0");
  CHECK(G::variable_block_entries(16, 1).label() == "v16x1");
  // the frames b frame blocks need: any draw may put every block in one variable
  CHECK(G::variable_block_entries(8, 2).min_H() == G::block_frames(8, 2).min_H());
  Rng rng(3);
  const Mask m = G::variable_block_entries(1, 16).draw(17, 3, rng);
  CHECK(m.n_missing() == 16);
  CHECK_FALSE(m.frame_level());
}

TEST_CASE("strategy presets: composition and draws", "[patterns]") {
  const auto names = strategy_preset_names();
  CHECK(names == std::vector<std::string>{"S1", "S2", "S3", "S4", "8x2", "4x4", "1x16"});
  auto labels = [](const MaskStrategy& s) {
    std::vector<std::string> out;
    for (const auto& g : s.generators) out.push_back(g.label());
    return out;
  };
  CHECK(labels(strategy_preset("S1")) == std::vector<std::string>{"16x1"});
  CHECK(labels(strategy_preset("S2")) == std::vector<std::string>{"16x1", "8x2"});
  CHECK(labels(strategy_preset("S3")) == std::vector<std::string>{"16x1", "8x2", "4x4"});
  CHECK(labels(strategy_preset("S4")) == std::vector<std::string>{"16x1", "8x2", "4x4", "1x16"});
  CHECK(labels(strategy_preset("1x16")) == std::vector<std::string>{"1x16"});
  CHECK(strategy_preset("S1").min_H() == 17);
  CHECK(strategy_preset("S3").min_H() == 23);
  CHECK(strategy_preset("4x4").min_H() == 19);

  Rng rng(5);
  for (const auto& name : names) {
    const MaskStrategy s = strategy_preset(name);
    for (int H : {s.min_H(), 64, 96, 128}) {
      for (int rep = 0; rep < 20; ++rep) {
        const Mask m = s.draw(H, 3, rng);
        REQUIRE(m.frame_level());
        REQUIRE(m.missing_frames().size() == 16);
      }
    }
  }
  // The 1x16 preset draws one run of 16; 4x4 draws four separated runs of 4.
  CHECK(runs(strategy_preset("1x16").draw(96, 1, rng).missing_frames()).size() == 1);
  for (const auto& r : runs(strategy_preset("4x4").draw(96, 1, rng).missing_frames())) CHECK(r.second == 4);
}

TEST_CASE("strategy mixture proportions", "[patterns]") {
  // pick(): S4 over 40000 draws, each share 1/4 with binomial sd
  // sqrt(0.25 * 0.75 / 40000) = 0.00217; allow 5 sd.
  Rng rng(6);
  const MaskStrategy s4 = strategy_preset("S4");
  std::vector<int> count(4, 0);
  const int n = 40000;
  for (int i = 0; i < n; ++i) ++count[s4.pick(rng)];
  for (int c : count) CHECK(std::abs(c / static_cast<double>(n) - 0.25) < 5 * 0.00217);

  // draw(): unequal weights 0.7 / 0.3 / 0 on shapes told apart by the mask;
  // sd of the 0.7 share over 20000 draws is 0.00324; allow 5 sd.
  MaskStrategy s;
  s.generators = {PatternGenerator::tail_frames(16), PatternGenerator::fixed_frames({0}),
                  PatternGenerator::fixed_frames({1})};
  s.weights = {7.0, 3.0, 0.0};
  int tails = 0, firsts = 0;
  const int m = 20000;
  for (int i = 0; i < m; ++i) {
    const auto f = s.draw(96, 2, rng).missing_frames();
    if (f.size() == 16) ++tails;
    else if (f == std::vector<int>{0}) ++firsts;
  }
  CHECK(std::abs(tails / static_cast<double>(m) - 0.7) < 5 * 0.00324);
  CHECK(tails + firsts == m);  // the zero-weight generator is never used
}

TEST_CASE("masks: same seed gives the same masks", "[patterns]") {
  const MaskStrategy s = strategy_preset("S4");
  Rng a(99), b(99), c(100);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    const Mask ma = s.draw(96, 2, a), mb = s.draw(96, 2, b), mc = s.draw(96, 2, c);
    REQUIRE(ma.observed == mb.observed);
    if (ma.observed != mc.observed) differs = true;
  }
  CHECK(differs);
  Rng x(7), y(7);
  CHECK(mask_mcar(10, 4, 0.3, x).observed == mask_mcar(10, 4, 0.3, y).observed);
}

TEST_CASE("paper patterns P1-P4", "[patterns]") {
  // Shapes: (number of runs, run length, first 1-based frame of each run).
  struct Shape { std::vector<int> starts1; int length; };
  const Shape shapes[4] = {{{81}, 16}, {{21, 61}, 8}, {{11, 35, 59, 83}, 4},
                           {{7, 19, 31, 43, 55, 67, 79, 91}, 2}};
  for (int p = 1; p <= 4; ++p) {
    const auto f = paper_pattern(p);
    REQUIRE(f.size() == 16);
    REQUIRE(strictly_increasing(f));
    CHECK(f.front() >= 0);
    CHECK(f.back() <= 95);
    const auto r = runs(f);
    REQUIRE(r.size() == shapes[p - 1].starts1.size());
    for (std::size_t i = 0; i < r.size(); ++i) {
      CHECK(r[i].first + 1 == shapes[p - 1].starts1[i]);
      CHECK(r[i].second == shapes[p - 1].length);
    }
  }
  CHECK(paper_pattern(1).back() == 95);  // P1 is the tail
  require_input_error([] { paper_pattern(0); }, "p");
  require_input_error([] { paper_pattern(5); }, "p");
}

TEST_CASE("patterns: bad input names the argument", "[patterns]") {
  Rng rng(8);
  using G = PatternGenerator;
  // random frames
  require_input_error([&] { pattern_random(96, 0, rng); }, "k");
  require_input_error([&] { pattern_random(96, 96, rng); }, "k");  // nothing left observed
  require_input_error([&] { pattern_random(1, 1, rng); }, "H");
  // blocks
  require_input_error([&] { pattern_blocks(96, 0, 2, rng); }, "b");
  require_input_error([&] { pattern_blocks(96, 2, 0, rng); }, "L");
  require_input_error([&] { pattern_blocks(96, 2, 2, rng, -1); }, "min_gap");
  require_input_error([&] { pattern_blocks(22, 8, 2, rng); }, "L");   // needs 23
  require_input_error([&] { pattern_blocks(16, 1, 16, rng); }, "L");  // none observed
  require_input_error([&] { pattern_blocks(16, 8, 2, rng, 0); }, "L");
  try {
    pattern_blocks(16, 8, 2, rng);
  } catch (const input_error& e) {
    const std::string msg = e.what();
    CHECK(msg.find("23") != std::string::npos);     // frames needed
    CHECK(msg.find("H = 16") != std::string::npos); // vs H
  }
  // tail
  require_input_error([] { pattern_tail(96, 0); }, "L");
  require_input_error([] { pattern_tail(96, 96); }, "L");
  // mcar
  for (double r : {0.0, 1.0, -0.1, 1.5, std::nan("")})
    require_input_error([&] { mask_mcar(10, 2, r, rng); }, "rate");
  require_input_error([&] { mask_mcar(1, 1, 0.5, rng); }, "H");
  require_input_error([&] { G::mcar_entries(0.0).draw(10, 2, rng); }, "rate");
  // variable blocks
  require_input_error([&] { mask_variable_blocks(22, 3, 8, 2, rng); }, "L");  // 8x2 needs 23 frames
  require_input_error([&] { mask_variable_blocks(10, 0, 1, 2, rng); }, "d");
  require_input_error([&] { mask_variable_blocks(10, 2, 0, 2, rng); }, "b");
  require_input_error([&] { mask_variable_blocks(10, 2, 1, 2, rng, -1); }, "min_gap");
  require_input_error([&] { G::variable_block_entries(1, 16).draw(16, 2, rng); }, "H");
  // fixed frames
  require_input_error([&] { G::fixed_frames({}).draw(10, 1, rng); }, "frames");
  require_input_error([&] { G::fixed_frames({-1, 3}).draw(10, 1, rng); }, "frames");
  require_input_error([&] { G::fixed_frames({3, 3}).draw(10, 1, rng); }, "frames");
  require_input_error([&] { G::fixed_frames({10}).draw(10, 1, rng); }, "H");  // outside 0..H-1
  require_input_error([&] { G::fixed_frames({0, 1, 2}).draw(3, 1, rng); }, "H");  // all missing
  // generators through draw()
  require_input_error([&] { G::random_frames(0).draw(96, 1, rng); }, "k");
  require_input_error([&] { G::random_frames(16).draw(16, 1, rng); }, "H");
  require_input_error([&] { G::block_frames(0, 2).draw(96, 1, rng); }, "b");
  require_input_error([&] { G::block_frames(8, 0).draw(96, 1, rng); }, "L");
  require_input_error([&] { G::block_frames(8, 2).draw(22, 1, rng); }, "H");
  require_input_error([&] { G::tail_frames(0).draw(96, 1, rng); }, "L");
  require_input_error([&] { G::tail_frames(16).draw(16, 1, rng); }, "H");
  // strategies
  MaskStrategy empty;
  require_input_error([&] { empty.validate(); }, "generators");
  require_input_error([&] { empty.draw(96, 1, rng); }, "generators");
  MaskStrategy s = strategy_preset("S2");
  s.weights = {1.0};
  require_input_error([&] { s.validate(); }, "weights");
  s.weights = {1.0, -0.5};
  require_input_error([&] { s.validate(); }, "weights");
  s.weights = {0.0, 0.0};
  require_input_error([&] { s.draw(96, 1, rng); }, "weights");
  s.weights = {1.0, std::nan("")};
  require_input_error([&] { s.validate(); }, "weights");
  s.weights = {1.0, 1.0};
  s.generators[1].k = 0;  // kind stays blocks: k is unused, no error
  REQUIRE_NOTHROW(s.validate());
  s.generators[1].L = 0;
  require_input_error([&] { s.validate(); }, "L");
  // presets at an H that is too small: S2 needs 23 frames for its 8x2 part,
  // and fails on every draw, not only when 8x2 happens to be picked.
  for (int i = 0; i < 20; ++i) require_input_error([&] { strategy_preset("S2").draw(22, 1, rng); }, "H");
  require_input_error([] { strategy_preset("S5"); }, "name");
  require_input_error([] { strategy_preset("s1"); }, "name");
}
