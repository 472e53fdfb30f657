// Missing patterns and masking strategies (cpp/DESIGN.md; the paper's
// section 6.1). Frame indices here are 0-based; the R front end adds 1.
// Error messages number frames from 1, as users of the front end see them
// ("frame index 6 is outside 1..5" for the 0-based index 5).
//
// Every pattern leaves at least one frame (entry, for MCAR) observed and
// misses at least one. Random draws are exact and take bounded time: subsets
// come from a partial Fisher-Yates shuffle, never from rejection loops.
#pragma once

#include "ditimpute/common.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace ditimpute {

// k distinct frames chosen uniformly among all C(H, k) subsets (sorted).
// Adjacent frames are allowed: this is the paper's "16x1, sixteen randomly
// placed missing entries". Needs 1 <= k <= H - 1 (input_error "k").
std::vector<int> pattern_random(int H, int k, Rng& rng);

// b non-overlapping blocks of length L placed uniformly at random among all
// placements with at least `min_gap` observed frames between consecutive
// blocks (min_gap = 0 lets blocks touch; blocks may touch either end).
// Throws input_error "b"/"L"/"min_gap" for values < 1 (< 0 for min_gap) and
// "L" when the blocks cannot fit: they need b*L + (b-1)*min_gap frames and
// b*L <= H - 1. Sorted frame indices.
//
// Uniformity (stars and bars): with slack s = H - b*L - (b-1)*min_gap, a
// placement is the b+1 extra gaps (before, between, after the blocks) summing
// to s, i.e. one of C(s + b, b) b-subsets c_0 < ... < c_{b-1} of {0..s+b-1};
// block i starts at (c_i - i) + i*(L + min_gap). A uniform subset therefore
// gives a uniform placement.
std::vector<int> pattern_blocks(int H, int b, int L, Rng& rng, int min_gap = 1);

// The last L frames; 1 <= L <= H - 1 (input_error "L").
std::vector<int> pattern_tail(int H, int L);

// Entry-level MCAR mask: each entry missing independently with probability
// `rate` in (0, 1), conditioned on at least one entry missing and one
// observed (needs H*d >= 2). Drawn exactly without a retry loop: the number
// missing from the binomial truncated to 1..H*d-1, then a uniform subset.
Mask mask_mcar(int H, int d, double rate, Rng& rng);

// b blocks of L frames, each in one variable: every block's variable is drawn
// uniformly (independently), and the blocks that fall in one variable are
// placed there as pattern_blocks() places frame blocks (uniformly, at least
// `min_gap` observed frames apart). The other variables stay observed over a
// block, as when one sensor of several fails. Needs the frames b frame
// blocks need (so that any assignment fits; the same input_errors as
// pattern_blocks()); with d = 1 its frames have pattern_blocks()'s law.
Mask mask_variable_blocks(int H, int d, int b, int L, Rng& rng, int min_gap = 1);

// One generator of a strategy. Build it with the factories below (or fill
// the fields for `kind`; draw() validates them either way).
struct PatternGenerator {
  enum class Kind { random, blocks, tail, fixed, mcar, variable_blocks };
  Kind kind = Kind::random;
  int k = 0;            // random: number of frames
  int b = 0, L = 0;     // blocks, variable_blocks: count and length; tail: L
  int min_gap = 1;      // blocks, variable_blocks
  std::vector<int> frames;  // fixed: 0-based frames
  double rate = 0.0;    // mcar

  static PatternGenerator random_frames(int k);
  static PatternGenerator block_frames(int b, int L, int min_gap = 1);
  static PatternGenerator tail_frames(int L);
  static PatternGenerator fixed_frames(std::vector<int> frames);
  static PatternGenerator mcar_entries(double rate);
  static PatternGenerator variable_block_entries(int b, int L, int min_gap = 1);

  // "16x1" (random), "8x2", "4x4", "1x16" (blocks; "/gapG" is appended when
  // the gap is not the default 1, or for blocks of length 1, so that they do
  // not read as the random "bx1"), "tail16", "fixed", "mcar0.1", "v1x16"
  // (variable blocks; "/gapG" appended when the gap is not 1).
  std::string label() const;
  // Throws input_error naming the bad field ("k", "b", "L", "min_gap",
  // "frames", "rate") for parameters that are wrong at any H.
  void validate() const;
  // Smallest H this generator can draw at (for MCAR this needs H*d >= 2 too).
  int min_H() const;
  // Throws input_error "H" when H < min_H().
  Mask draw(int H, int d, Rng& rng) const;
};

// A weighted mixture of generators: each draw picks a generator with
// probability proportional to its weight, then draws from it.
struct MaskStrategy {
  std::vector<PatternGenerator> generators;
  std::vector<double> weights;
  // Validates (input_error "generators" when empty or a generator is bad
  // through its own field name; "weights" for a size mismatch, a negative or
  // non-finite weight, or all weights zero).
  void validate() const;
  // Largest min_H() of the generators with positive weight.
  int min_H() const;
  // Index of the generator the next draw uses (consumes one uniform).
  std::size_t pick(Rng& rng) const;
  // Throws input_error "H" when H is too small for a generator of positive weight.
  Mask draw(int H, int d, Rng& rng) const;
};

// Presets of the paper's section 6.1, each with 16 missing frames:
//   "S1"  16x1                         "8x2"   8x2 only
//   "S2"  1/2 16x1 + 1/2 8x2           "4x4"   4x4 only
//   "S3"  1/3 each 16x1, 8x2, 4x4      "1x16"  1x16 only (Table 2)
//   "S4"  1/4 each 16x1, 8x2, 4x4, 1x16
// 16x1 = 16 uniform distinct frames (adjacency allowed); blocks keep >= 1
// observed frame between them. Smallest H: 16x1 17, 8x2 23, 4x4 19, 1x16 17
// (so S2-S4 and "8x2" need H >= 23, checked by draw()). Throws input_error
// "name" for anything else.
MaskStrategy strategy_preset(const std::string& name);
std::vector<std::string> strategy_preset_names();

// Fixed test patterns P1..P4 for H = 96, each 16 missing frames, in the
// spirit of the paper's Figure 2. Listed 1-based; paper_pattern() returns the
// 0-based frames (sorted). kappa = kappa(Gamma_cond) for the Laplace kernel
// exp(-|i-j|/128) on the plain index and Lambda = I:
//   P1  tail block 81:96                                    kappa 394.91
//   P2  two interior blocks of 8: 21:28, 61:68              kappa  32.15
//   P3  four blocks of 4 starting 11, 35, 59, 83            kappa   9.47
//   P4  eight pairs starting 7, 19, 31, 43, 55, 67, 79, 91  kappa   3.00
// (The paper quotes 415.40 for P1 with its unstated embedding.) p in 1..4,
// else input_error "p".
std::vector<int> paper_pattern(int p);

}  // namespace ditimpute
