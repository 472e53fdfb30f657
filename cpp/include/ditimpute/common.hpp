// Shared types of the ditimpute core: errors, random numbers, masks and
// batches of sequences. This header knows nothing of R or of LibTorch.
//
// Conventions (cpp/DESIGN.md):
//  * one sequence is H frames of d variables; vec(X) stacks frames, so entry
//    (frame h, variable j) sits at index h * d + j (0-based);
//  * with that order Cov(vec X) = Gamma (x) Lambda;
//  * a batch of n sequences is stored sequence by sequence, each as its vec:
//    element (i, h, j) sits at (i * H + h) * d + j.
#pragma once

#include <Eigen/Dense>

#include <cstdint>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace ditimpute {

using Matrix = Eigen::MatrixXd;
using Vector = Eigen::VectorXd;
using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Rng = std::mt19937_64;

// Bad input from the caller. `arg()` names the offending argument so that a
// front end (the R glue) can raise an error that points at it.
class input_error : public std::invalid_argument {
 public:
  input_error(std::string arg, const std::string& message)
      : std::invalid_argument(message), arg_(std::move(arg)) {}
  const std::string& arg() const noexcept { return arg_; }

 private:
  std::string arg_;
};

// A computation that failed on valid-looking input (a loss that turned NaN,
// a corrupt checkpoint, a factorisation that broke down).
class numeric_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A part of the core that this build left out: the diffusion engine when the
// core was compiled without LibTorch (src/no_torch/). `feature()` names it
// ("LibTorch"), so a front end can say how to get it.
class unavailable_error : public std::runtime_error {
 public:
  unavailable_error(std::string feature, const std::string& message)
      : std::runtime_error(message), feature_(std::move(feature)) {}
  const std::string& feature() const noexcept { return feature_; }

 private:
  std::string feature_;
};

// A long computation stopped on request of the front end (Ctrl-C in R).
class cancelled : public std::runtime_error {
 public:
  cancelled() : std::runtime_error("cancelled by the user") {}
};

// Cooperative cancellation. A front end installs a check for the duration of
// a call on the thread that makes it (`CancelScope scope(fn)`); long loops of
// the core call check_cancelled() between units of work (a network call, a
// group of cases), which throws `cancelled` when the check says so. The hook
// is per thread: worker threads of parallel_for never call back into the
// front end, and a core without a front end never stops.
class CancelScope {
 public:
  explicit CancelScope(std::function<bool()> check);
  ~CancelScope();
  CancelScope(const CancelScope&) = delete;
  CancelScope& operator=(const CancelScope&) = delete;

 private:
  std::function<bool()> previous_;
};
void check_cancelled();

// Memory guard. Every dense allocation that grows with the problem (a kernel
// matrix, the covariance of a pattern's entries, a batch of draws) asks
// check_memory() first, which throws input_error(arg) naming the size when it
// exceeds the limit: never an internal bad_alloc, never a machine sent to swap.
// The limit defaults to half the physical memory; set_memory_limit(bytes)
// changes it (0 restores the default; R: options(ditimpute.max_memory)).
void set_memory_limit(double bytes);
double memory_limit();
void check_memory(double bytes, const std::string& arg, const std::string& what);

// SplitMix64: a bijective 64-bit mixer, for deriving independent seeds.
std::uint64_t splitmix64(std::uint64_t x);

// The one per-case seed scheme of the core: case i (0-based) of a call made
// with `seed` draws all its randomness from Rng(case_seed(seed, i)), so a case
// gives the same samples whatever else shares the call.
inline std::uint64_t case_seed(std::uint64_t seed, std::uint64_t i) { return splitmix64(seed ^ splitmix64(i)); }

// Runs fn(i) for i in [0, n) on up to `threads` threads (<= 0: every core).
// fn may only write state owned by index i; results then do not depend on the
// thread count. The first exception thrown is rethrown after all threads end.
void parallel_for(int n, int threads, const std::function<void(int)>& fn);

// True while the calling thread runs work for a parallel_for with more than
// one thread. Code that would start threads of its own (a multi-threaded BLAS)
// asks this first: threads inside threads oversubscribe the cores (measured
// 2x slower on 2 cores).
bool inside_parallel_for();

// Fills `out[0..n)` with independent standard normals. Every sampler draws its
// noise through this one function so that a seed fixes all of them.
void fill_standard_normal(Rng& rng, double* out, std::size_t n);

// Observation mask of one sequence: observed[h * d + j] is 1 when entry
// (h, j) is observed, 0 when it is missing.
struct Mask {
  int H = 0;
  int d = 0;
  std::vector<std::uint8_t> observed;

  Mask() = default;
  Mask(int H_, int d_, bool all_observed = true);

  // A frame-level mask from 0-based missing frame indices (validated:
  // inside 0..H-1; duplicates are an error).
  static Mask from_missing_frames(int H, int d, const std::vector<int>& missing_frames);

  bool is_observed(int h, int j) const { return observed[static_cast<std::size_t>(h) * d + j] != 0; }
  // True when every frame is either fully observed or fully missing.
  bool frame_level() const;
  // 0-based missing frames (only meaningful when frame_level()).
  std::vector<int> missing_frames() const;
  std::vector<int> observed_frames() const;
  // 0-based vec indices of missing / observed entries, ascending.
  std::vector<int> missing_entries() const;
  std::vector<int> observed_entries() const;
  int n_missing() const;
  // Throws input_error(arg) when nothing or everything is missing.
  void require_proper(const std::string& arg) const;
};

// n sequences of H x d values, sequence-major (see the header comment).
struct Batch {
  int n = 0;
  int H = 0;
  int d = 0;
  std::vector<double> data;

  Batch() = default;
  Batch(int n_, int H_, int d_) : n(n_), H(H_), d(d_), data(static_cast<std::size_t>(n_) * H_ * d_, 0.0) {}

  std::size_t seq_size() const { return static_cast<std::size_t>(H) * d; }
  double* seq(int i) { return data.data() + static_cast<std::size_t>(i) * seq_size(); }
  const double* seq(int i) const { return data.data() + static_cast<std::size_t>(i) * seq_size(); }
  double& at(int i, int h, int j) { return data[(static_cast<std::size_t>(i) * H + h) * d + j]; }
  double at(int i, int h, int j) const { return data[(static_cast<std::size_t>(i) * H + h) * d + j]; }
  // Sequence i as an H x d row-major matrix view.
  Eigen::Map<RowMatrix> matrix(int i) { return Eigen::Map<RowMatrix>(seq(i), H, d); }
  Eigen::Map<const RowMatrix> matrix(int i) const { return Eigen::Map<const RowMatrix>(seq(i), H, d); }
};

}  // namespace ditimpute
