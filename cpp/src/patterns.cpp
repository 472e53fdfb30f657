#include "ditimpute/patterns.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>

namespace ditimpute {

namespace {

// Uniform integer in [0, n). Written out (not std::uniform_int_distribution,
// whose algorithm differs between standard libraries) so that a seed gives
// the same masks on every platform. Rejects x < 2^64 mod n, which keeps the
// result exactly uniform; a retry has probability < n / 2^64.
std::uint64_t uniform_below(Rng& rng, std::uint64_t n) {
  const std::uint64_t threshold = (0 - n) % n;
  for (;;) {
    const std::uint64_t x = rng();
    if (x >= threshold) return x % n;
  }
}

// Uniform double in [0, 1) from the top 53 bits.
double uniform01(Rng& rng) { return static_cast<double>(rng() >> 11) / 9007199254740992.0; }  // 2^53

// m distinct values of {0..n-1}, uniform over all C(n, m) subsets, sorted:
// the first m steps of a Fisher-Yates shuffle.
std::vector<int> sorted_subset(int n, int m, Rng& rng) {
  std::vector<int> pool(static_cast<std::size_t>(n));
  std::iota(pool.begin(), pool.end(), 0);
  for (int i = 0; i < m; ++i)
    std::swap(pool[i], pool[i + uniform_below(rng, static_cast<std::uint64_t>(n - i))]);
  pool.resize(static_cast<std::size_t>(m));
  std::sort(pool.begin(), pool.end());
  return pool;
}

void require_H(int H) {
  if (H < 2) throw input_error("H", "H must be at least 2 (one frame missing, one observed), not " +
                                        std::to_string(H) + ".");
}

std::string plural(int n, const std::string& word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

void check_rate(double rate) {
  if (!(rate > 0.0 && rate < 1.0))
    throw input_error("rate", "the missing rate must lie strictly between 0 and 1, not " + std::to_string(rate) + ".");
}

void check_at_least_1(const char* arg, int v, const std::string& what) {
  if (v < 1) throw input_error(arg, what + " must be at least 1, not " + std::to_string(v) + ".");
}

void check_blocks(int b, int L, int min_gap) {
  check_at_least_1("b", b, "the number of blocks b");
  check_at_least_1("L", L, "the block length L");
  if (min_gap < 0) throw input_error("min_gap", "min_gap must be 0 or more, not " + std::to_string(min_gap) + ".");
}

// Frames b blocks need: the blocks, the gaps between them, and one observed
// frame. 64-bit so that absurd b, L report an error instead of overflowing.
long long blocks_need(int b, int L, int min_gap) {
  const long long covered = static_cast<long long>(b) * L;
  return std::max(covered + static_cast<long long>(b - 1) * min_gap, covered + 1);
}

// H >= 2 and b blocks of L frames, min_gap apart, fit in H frames with one
// observed.
void check_blocks_fit(int H, int b, int L, int min_gap) {
  require_H(H);
  check_blocks(b, L, min_gap);
  const long long need = blocks_need(b, L, min_gap);
  if (need > H)
    throw input_error("L", plural(b, "block") + " of length " + std::to_string(L) +
                               (b > 1 ? " separated by at least " + plural(min_gap, "observed frame") : "") +
                               " need " + std::to_string(need) + " frames (one observed at least), but H = " +
                               std::to_string(H) + ".");
}

}  // namespace

std::vector<int> pattern_random(int H, int k, Rng& rng) {
  require_H(H);
  if (k < 1 || k > H - 1)
    throw input_error("k", "k must be in 1.." + std::to_string(H - 1) + " (at least one of H = " +
                               std::to_string(H) + " frames stays observed), not " + std::to_string(k) + ".");
  return sorted_subset(H, k, rng);
}

std::vector<int> pattern_blocks(int H, int b, int L, Rng& rng, int min_gap) {
  check_blocks_fit(H, b, L, min_gap);
  // Stars and bars (see the header): a uniform b-subset of {0..slack+b-1}.
  const int slack = H - b * L - (b - 1) * min_gap;
  const std::vector<int> c = sorted_subset(slack + b, b, rng);
  std::vector<int> frames;
  frames.reserve(static_cast<std::size_t>(b) * L);
  for (int i = 0; i < b; ++i) {
    const int start = (c[i] - i) + i * (L + min_gap);
    for (int j = 0; j < L; ++j) frames.push_back(start + j);
  }
  return frames;
}

Mask mask_variable_blocks(int H, int d, int b, int L, Rng& rng, int min_gap) {
  // all b blocks may fall in one variable
  check_blocks_fit(H, b, L, min_gap);
  if (d < 1) throw input_error("d", "the number of variables d must be at least 1, not " + std::to_string(d) + ".");
  std::vector<int> count(static_cast<std::size_t>(d), 0);
  for (int i = 0; i < b; ++i) ++count[uniform_below(rng, static_cast<std::uint64_t>(d))];
  Mask mask(H, d, true);
  for (int j = 0; j < d; ++j) {
    if (count[j] == 0) continue;
    for (int h : pattern_blocks(H, count[j], L, rng, min_gap))
      mask.observed[static_cast<std::size_t>(h) * d + j] = 0;
  }
  return mask;
}

std::vector<int> pattern_tail(int H, int L) {
  require_H(H);
  if (L < 1 || L > H - 1)
    throw input_error("L", "the tail length L must be in 1.." + std::to_string(H - 1) +
                               " (at least one frame stays observed), not " + std::to_string(L) + ".");
  std::vector<int> frames(static_cast<std::size_t>(L));
  std::iota(frames.begin(), frames.end(), H - L);
  return frames;
}

Mask mask_mcar(int H, int d, double rate, Rng& rng) {
  check_rate(rate);
  Mask mask(H, d, true);
  const int n = H * d;
  if (n < 2) throw input_error("H", "an MCAR mask needs at least two entries (H * d >= 2).");
  // Number missing ~ Binomial(n, rate) given 1 <= m <= n-1 (inverse CDF on
  // the truncated pmf, in logs); given m, iid Bernoulli entries are a
  // uniform m-subset. Together: exactly the iid mask conditioned on being proper.
  std::vector<double> w(static_cast<std::size_t>(n - 1));
  const double lr = std::log(rate), lq = std::log1p(-rate), lfn = std::lgamma(n + 1.0);
  for (int m = 1; m < n; ++m)
    w[m - 1] = lfn - std::lgamma(m + 1.0) - std::lgamma(n - m + 1.0) + m * lr + (n - m) * lq;
  const double top = *std::max_element(w.begin(), w.end());
  double total = 0.0;
  for (double& x : w) total += (x = std::exp(x - top));
  double u = uniform01(rng) * total;
  int m = 1;
  for (; m < n - 1 && u >= w[m - 1]; ++m) u -= w[m - 1];
  for (int e : sorted_subset(n, m, rng)) mask.observed[static_cast<std::size_t>(e)] = 0;
  return mask;
}

// ---- generators -------------------------------------------------------------

PatternGenerator PatternGenerator::random_frames(int k) {
  PatternGenerator g;
  g.kind = Kind::random;
  g.k = k;
  return g;
}

PatternGenerator PatternGenerator::block_frames(int b, int L, int min_gap) {
  PatternGenerator g;
  g.kind = Kind::blocks;
  g.b = b;
  g.L = L;
  g.min_gap = min_gap;
  return g;
}

PatternGenerator PatternGenerator::tail_frames(int L) {
  PatternGenerator g;
  g.kind = Kind::tail;
  g.L = L;
  return g;
}

PatternGenerator PatternGenerator::fixed_frames(std::vector<int> frames) {
  PatternGenerator g;
  g.kind = Kind::fixed;
  g.frames = std::move(frames);
  return g;
}

PatternGenerator PatternGenerator::mcar_entries(double rate) {
  PatternGenerator g;
  g.kind = Kind::mcar;
  g.rate = rate;
  return g;
}

PatternGenerator PatternGenerator::variable_block_entries(int b, int L, int min_gap) {
  PatternGenerator g;
  g.kind = Kind::variable_blocks;
  g.b = b;
  g.L = L;
  g.min_gap = min_gap;
  return g;
}

std::string PatternGenerator::label() const {
  switch (kind) {
    case Kind::random:
      return std::to_string(k) + "x1";
    case Kind::blocks: {
      std::string s = std::to_string(b) + "x" + std::to_string(L);
      if (b > 1 && (min_gap != 1 || L == 1)) s += "/gap" + std::to_string(min_gap);
      return s;
    }
    case Kind::tail:
      return "tail" + std::to_string(L);
    case Kind::fixed:
      return "fixed";
    case Kind::mcar: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "mcar%g", rate);
      return buf;
    }
    case Kind::variable_blocks: {
      std::string s = "v" + std::to_string(b) + "x" + std::to_string(L);
      if (b > 1 && min_gap != 1) s += "/gap" + std::to_string(min_gap);
      return s;
    }
  }
  return "?";
}

void PatternGenerator::validate() const {
  switch (kind) {
    case Kind::random:
      check_at_least_1("k", k, "the number of random frames k");
      break;
    case Kind::blocks:
    case Kind::variable_blocks:
      check_blocks(b, L, min_gap);
      break;
    case Kind::tail:
      check_at_least_1("L", L, "the tail length L");
      break;
    case Kind::fixed: {
      if (frames.empty()) throw input_error("frames", "a fixed pattern needs at least one missing frame.");
      std::vector<int> sorted = frames;
      std::sort(sorted.begin(), sorted.end());
      if (sorted.front() < 0)
        throw input_error("frames", "frame index " + std::to_string(sorted.front() + 1) + " is below 1.");
      const auto dup = std::adjacent_find(sorted.begin(), sorted.end());
      if (dup != sorted.end())
        throw input_error("frames", "frame index " + std::to_string(*dup + 1) + " is given twice.");
      break;
    }
    case Kind::mcar:
      check_rate(rate);
      break;
  }
}

int PatternGenerator::min_H() const {
  validate();
  switch (kind) {
    case Kind::random:
      return k + 1;
    case Kind::blocks:
    case Kind::variable_blocks:
      return static_cast<int>(std::min<long long>(blocks_need(b, L, min_gap), std::numeric_limits<int>::max()));
    case Kind::tail:
      return L + 1;
    case Kind::fixed:
      return std::max(*std::max_element(frames.begin(), frames.end()) + 1, static_cast<int>(frames.size()) + 1);
    case Kind::mcar:
      return 1;
  }
  return 1;
}

Mask PatternGenerator::draw(int H, int d, Rng& rng) const {
  const int need = min_H();  // validates
  if (H < need)
    throw input_error("H", "the pattern \"" + label() + "\" needs at least " + std::to_string(need) +
                               " frames (keeping one observed), but H = " + std::to_string(H) + ".");
  switch (kind) {
    case Kind::random:
      return Mask::from_missing_frames(H, d, pattern_random(H, k, rng));
    case Kind::blocks:
      return Mask::from_missing_frames(H, d, pattern_blocks(H, b, L, rng, min_gap));
    case Kind::tail:
      return Mask::from_missing_frames(H, d, pattern_tail(H, L));
    case Kind::fixed:
      return Mask::from_missing_frames(H, d, frames);
    case Kind::mcar:
      return mask_mcar(H, d, rate, rng);
    case Kind::variable_blocks:
      return mask_variable_blocks(H, d, b, L, rng, min_gap);
  }
  return Mask(H, d);
}

// ---- strategies -------------------------------------------------------------

void MaskStrategy::validate() const {
  if (generators.empty()) throw input_error("generators", "a masking strategy needs at least one generator.");
  if (weights.size() != generators.size())
    throw input_error("weights", "there are " + std::to_string(weights.size()) + " weights for " +
                                     std::to_string(generators.size()) + " generators.");
  double total = 0.0;
  for (double w : weights) {
    if (!std::isfinite(w) || w < 0.0)
      throw input_error("weights", "weights must be finite and non-negative, not " + std::to_string(w) + ".");
    total += w;
  }
  if (!(total > 0.0)) throw input_error("weights", "at least one weight must be positive.");
  for (const PatternGenerator& g : generators) g.validate();
}

int MaskStrategy::min_H() const {
  validate();
  int need = 1;
  for (std::size_t i = 0; i < generators.size(); ++i)
    if (weights[i] > 0.0) need = std::max(need, generators[i].min_H());
  return need;
}

std::size_t MaskStrategy::pick(Rng& rng) const {
  validate();
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  double u = uniform01(rng) * total;
  std::size_t last = 0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    if (weights[i] <= 0.0) continue;
    last = i;
    if (u < weights[i]) return i;
    u -= weights[i];
  }
  return last;  // rounding left u >= the last positive weight
}

Mask MaskStrategy::draw(int H, int d, Rng& rng) const {
  // Check H against every generator, not only the one picked, so that a too
  // small H fails on the first draw rather than at random later in training.
  const int need = min_H();
  if (H < need)
    throw input_error("H", "this masking strategy needs at least " + std::to_string(need) +
                               " frames (its largest pattern, keeping one frame observed), but H = " +
                               std::to_string(H) + ".");
  return generators[pick(rng)].draw(H, d, rng);
}

// ---- presets ----------------------------------------------------------------

MaskStrategy strategy_preset(const std::string& name) {
  using G = PatternGenerator;
  const G r16 = G::random_frames(16), b8x2 = G::block_frames(8, 2), b4x4 = G::block_frames(4, 4),
          b1x16 = G::block_frames(1, 16);
  auto equal = [](std::vector<G> gens) {
    MaskStrategy s;
    s.weights.assign(gens.size(), 1.0);
    s.generators = std::move(gens);
    return s;
  };
  if (name == "S1") return equal({r16});
  if (name == "S2") return equal({r16, b8x2});
  if (name == "S3") return equal({r16, b8x2, b4x4});
  if (name == "S4") return equal({r16, b8x2, b4x4, b1x16});
  if (name == "8x2") return equal({b8x2});
  if (name == "4x4") return equal({b4x4});
  if (name == "1x16") return equal({b1x16});
  std::string known;
  for (const std::string& n : strategy_preset_names()) known += (known.empty() ? "" : ", ") + n;
  throw input_error("name", "unknown masking strategy \"" + name + "\"; presets are " + known + ".");
}

std::vector<std::string> strategy_preset_names() { return {"S1", "S2", "S3", "S4", "8x2", "4x4", "1x16"}; }

std::vector<int> paper_pattern(int p) {
  // 1-based starts and the common block length (see the header for kappa).
  struct Shape {
    std::vector<int> starts;
    int length;
  };
  static const Shape shapes[4] = {{{81}, 16},
                                  {{21, 61}, 8},
                                  {{11, 35, 59, 83}, 4},
                                  {{7, 19, 31, 43, 55, 67, 79, 91}, 2}};
  if (p < 1 || p > 4) throw input_error("p", "paper patterns are P1..P4: p must be in 1..4, not " + std::to_string(p) + ".");
  std::vector<int> frames;
  for (int s : shapes[p - 1].starts)
    for (int j = 0; j < shapes[p - 1].length; ++j) frames.push_back(s - 1 + j);
  return frames;
}

}  // namespace ditimpute
