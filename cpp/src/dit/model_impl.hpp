// Internal: the state behind DiTModel's pimpl and the checkpoint format
// (serialize.cpp). Include only from cpp/src/dit/*.cpp.
#pragma once

#include "network.hpp"

#include "ditimpute/backend.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ditimpute {

struct DiTModel::Impl {
  DiTConfig config;
  torch::Device device{torch::kCPU};
  detail::DiTNet net{nullptr};
  detail::DiTNet ema{nullptr};  // null when training ran without EMA
  int steps_trained = 0;
  std::vector<LossRecord> history;
  std::shared_ptr<const GaussianProcess> gp;  // GP-informed models (DiTConfig::gp)
  std::string notes;                          // the front end's bytes (DiTModel::notes)

  // The weights used for sampling and reported losses: EMA when present.
  detail::DiTNet sampling_net() const { return ema ? ema : net; }
};

namespace detail {

// gp = "score" (DiTConfig::gp): one case's gp_conditional_eigen in float32.
struct GpEigen {
  Eigen::MatrixXf U;       // H*d x m
  Eigen::VectorXf lambda;  // m
};
// The GP inputs of one case from one conditional: mu and sd (H*d values
// each, gp_entry_marginals) always, and the eigenpairs too when `eig` is
// given (gp = "score").
void gp_case(const GaussianProcess& gp, const double* x, const Mask& mask, double* mu, double* sd, GpEigen* eig);
// Cases as the tensors of DiTNetImpl::noise: U [C, S, K] and lambda [C, K],
// float32 on the CPU, K the most missing entries of any case (zero-padded).
std::pair<torch::Tensor, torch::Tensor> gp_eigen_tensors(const std::vector<GpEigen>& cases, int64_t S);

// The sampler's network calls on the CPU take at most this many tokens
// (rows x H frame tokens, or rows x H x d entry tokens); larger batches go
// through the network in row chunks. At BeijingAir's size (entry tokens, H =
// 30, d = 132: 3,960 a row, width 32) one call on 50 rows took 1.04 s on 2
// cores and the same rows in chunks of 1-10 rows 0.50-0.62 s, of 25 rows
// 0.89 s: the whole batch's attention and MLP activations are fresh memory
// at every call (bench/results/dit_tokens.md). GPUs take the whole batch.
constexpr int64_t kCpuTokensPerCall = 16000;
// Rows per network call for B rows in cases of Z rows each: all B when the
// batch is small enough (or `cuda`); else whole cases at a time when a case
// fits, or the largest divisor of Z within the limit, so a chunk never
// straddles two cases (gp = "score" gives each case its own eigenvectors).
int64_t network_chunk_rows(int64_t B, int64_t Z, int64_t tokens_per_row, bool cuda);

// Everything a checkpoint needs beyond the model to continue a run exactly.
struct TrainState {
  int step = 0;                  // steps done in the run
  std::string optimizer;         // "adam" / "adamw"
  std::string rng;               // std::mt19937_64 state as text
  std::vector<std::int32_t> perm;  // current epoch's order of the training sequences
  std::uint64_t pos = 0;         // next position in perm
  std::string optimizer_state;   // torch::serialize archive bytes
};

// A parsed file: weights stay CPU float tensors keyed by parameter name.
struct Archive {
  DiTConfig config;
  int steps_trained = 0;
  std::vector<std::pair<std::string, torch::Tensor>> weights, ema;
  std::vector<LossRecord> history;
  std::shared_ptr<const GaussianProcess> gp;  // section GPRI, GP-informed models
  std::string notes;                          // section NOTE (optional)
  bool has_train_state = false;
  TrainState train_state;
};

std::string write_archive(const DiTModel::Impl& model, const TrainState* state);
// Throws input_error(arg) on anything that is not an intact file of this format.
Archive read_archive(const std::string& bytes, const std::string& arg);
// Copies named weights into `net`; every parameter must be present with its shape.
void load_weights(DiTNet& net, const std::vector<std::pair<std::string, torch::Tensor>>& weights,
                  const std::string& arg);
void copy_weights(DiTNet& to, const DiTNet& from);

// input_error(arg) unless b holds n >= 1 sequences of the model's H x d with
// no infinite value and at least one observed (non-NaN) value.
void check_batch(const Batch& b, const DiTConfig& c, const std::string& arg);
// Whole-file read; input_error(arg) when it cannot be opened.
std::string read_file(const std::string& path, const std::string& arg);
// Writes to a temporary name and renames, so a crash never leaves a torn file.
void write_file(const std::string& path, const std::string& bytes, const std::string& arg);

// backend.hpp's resolve_device as a torch::Device (input_error "device").
// A CUDA device also turns on TF32 for float32 matrix products and
// convolutions (process-wide, as PyTorch's allow_tf32 flags; a no-op for CPU
// tensors; compiled here, unmeasured without a CUDA LibTorch, cpp/DESIGN.md).
inline torch::Device parse_device(const std::string& device) {
  torch::Device d(resolve_device(device));
  if (d.is_cuda()) {
    at::globalContext().setAllowTF32CuBLAS(true);
    at::globalContext().setAllowTF32CuDNN(true);
  }
  return d;
}

}  // namespace detail
}  // namespace ditimpute
