// Internal: the DiT noise-prediction network (cpp/DESIGN.md), after
// Peebles & Xie's DiT with one token per time frame (DiTConfig::tokens
// "frame") or one token per entry with attention along both axes ("entry",
// after CSDI's two-axis design). Include only from cpp/src/dit/*.cpp and the
// dit tests/bench.
#pragma once

#include "ditimpute/dit.hpp"

#include <torch/torch.h>

#include <vector>

namespace ditimpute {
namespace detail {

// One adaLN-Zero block: LayerNorm without affine, shift/scale/gate from the
// conditioning vector for attention and MLP; the modulation is zero-initialised
// so every block starts as the identity.
struct DiTBlockImpl : torch::nn::Module {
  DiTBlockImpl(int width, int heads, int mlp_hidden);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& c);
  // The same map when every row shares one conditioning vector c [1, width]
  // (sampling: one diffusion time per network call). The modulation is then
  // folded into the weights of the linear maps around it (scale and shift
  // into qkv and fc1, the gates into proj and fc2, the attention's 1/sqrt(dh)
  // into q), and the residual additions into the matrix products, so the
  // [B, H, width] activations are passed over far fewer times.
  torch::Tensor forward_shared(const torch::Tensor& x, const torch::Tensor& c);

  int heads;
  // forward_shared's MLP on the CPU: row chunks of ~1 MB of hidden
  // activations with the in-place GELU (gelu.hpp). false = the former
  // whole-tensor torch::gelu chain, kept as the same-run baseline of
  // bench_dit; both give the same map up to float rounding.
  bool cpu_chunked_mlp = true;
  torch::nn::LayerNorm norm1{nullptr}, norm2{nullptr};
  torch::nn::Linear qkv{nullptr}, proj{nullptr}, fc1{nullptr}, fc2{nullptr}, ada{nullptr};
};
TORCH_MODULE(DiTBlock);

// One adaLN-Zero block of the entry-token network: tokens x [B, H, d, width]
// (one per frame and variable) pass attention across the H frames of each
// variable, then attention across the d variables of each frame, then the
// MLP, each behind LayerNorm with shift/scale/gate from the conditioning
// vector c ([B, width], or [1, width] shared by every row); the modulation is
// zero-initialised, so the block starts as the identity.
struct EntryBlockImpl : torch::nn::Module {
  EntryBlockImpl(int width, int heads, int mlp_hidden);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& c);
  // The same map for one conditioning vector c [1, width] shared by every
  // row (sampling), with the modulation folded into the linear maps as in
  // DiTBlockImpl::forward_shared.
  torch::Tensor forward_shared(const torch::Tensor& x, const torch::Tensor& c);

  int heads;
  torch::nn::LayerNorm norm_time{nullptr}, norm_var{nullptr}, norm_mlp{nullptr};
  torch::nn::Linear qkv_time{nullptr}, proj_time{nullptr}, qkv_var{nullptr}, proj_var{nullptr};
  torch::nn::Linear fc1{nullptr}, fc2{nullptr}, ada{nullptr};
};
TORCH_MODULE(EntryBlock);

// eps_hat = net(x, mask, t): x [B, H, d] holds observed values on observed
// entries and noisy values on missing ones, mask [B, H, d] (1 = observed),
// t [B] diffusion times. Token input = [x, mask] (2d features), and for a
// GP-informed network (DiTConfig::gp) [x, mask, mu, sd] (4d): the GP's
// conditional mean and sd of every entry given the observed ones (mu = the
// value and sd = 0 on observed entries), [B, H, d] each. With entry tokens
// (DiTConfig::tokens "entry") each entry's [x, mask] (or [x, mask, mu, sd])
// is embedded on its own, plus its frame's sinusoidal position and a learned
// embedding of its variable; the output layer gives one value a token.
struct DiTNetImpl : torch::nn::Module {
  explicit DiTNetImpl(const DiTConfig& config);
  // The raw output F (its meaning depends on config.prediction).
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& mask, const torch::Tensor& t,
                        const torch::Tensor& mu = {}, const torch::Tensor& sd = {});
  // The noise prediction eps_hat built from F (DiTConfig::prediction and
  // DiTConfig::gp); the one place training and sampling turn the output into
  // eps_hat. With gp = "residual" the base is the exact noise of the GP's
  // marginal law N(mu, diag(sd^2)), eps_gp = sigma_t (x - alpha_t mu) /
  // (alpha_t^2 sd^2 + sigma_t^2), and eps_hat = eps_gp - alpha_t F ("v") or
  // eps_gp + F ("eps"): with F = 0 (the zero-initialised output layer) the
  // network is that Gaussian imputer. (For mu = 0, sd = 1 eps_gp is the
  // plain v-prediction base sigma_t x.)
  // With gp = "score" the base is the exact noise of the GP's joint law on
  // the missing entries (gp_score_noise in network.cpp), from U [C, S, K]
  // (eigenvectors in vec coordinates, zero rows on observed entries, zero
  // columns as padding) and lambda [C, K], C cases each shared by B / C
  // consecutive rows.
  torch::Tensor noise(const torch::Tensor& x, const torch::Tensor& mask, const torch::Tensor& t,
                      const torch::Tensor& mu = {}, const torch::Tensor& sd = {}, const torch::Tensor& U = {},
                      const torch::Tensor& lambda = {});
  // noise(x, mask, t) with one time t for every row, through the blocks'
  // forward_shared (equal to noise() up to float rounding; the sampler's path).
  torch::Tensor noise_at(const torch::Tensor& x, const torch::Tensor& mask, double t, const torch::Tensor& mu = {},
                         const torch::Tensor& sd = {}, const torch::Tensor& U = {}, const torch::Tensor& lambda = {});
  // The GP base of noise_at alone (gp = "residual" or "score"): what it gives
  // with the network's output F = 0, without running the network. The
  // sampler's control-variate path (SamplerOptions::gp_control).
  torch::Tensor base_noise_at(const torch::Tensor& x, double t, const torch::Tensor& mu, const torch::Tensor& sd,
                              const torch::Tensor& U = {}, const torch::Tensor& lambda = {});
  // Re-initialises the weights (xavier for linear maps, N(0, 0.02) for the
  // timestep MLP, zeros for every modulation and the output layer) from the
  // global torch generator.
  void initialize();

  DiTConfig config;
  double log_t0, log_T;
  bool v_prediction;
  bool gp_inputs;    // config.gp != "": mu and sd are inputs
  bool gp_residual;  // config.gp == "residual" or "score": the output corrects a GP base
  bool gp_score;     // config.gp == "score": the base is the GP's joint conditional law
  bool entry_tokens; // config.tokens == "entry": blocks hold EntryBlocks
  torch::nn::Linear embed{nullptr};
  torch::nn::Linear t_fc1{nullptr}, t_fc2{nullptr};
  torch::nn::ModuleList blocks{nullptr};
  torch::nn::LayerNorm norm_final{nullptr};
  torch::nn::Linear ada_final{nullptr}, out{nullptr};
  torch::Tensor pos;  // fixed sinusoidal positions [H, width] (buffer)
  torch::Tensor var_embed;  // entry tokens: learned variable embeddings [d, width]

 private:
  // The conditioning vector c(t) [rows, width] from the times t [rows].
  torch::Tensor conditioning(const torch::Tensor& t);
  // Token embedding plus positions, [B, H, width] ([B, H, d, width] with
  // entry tokens).
  torch::Tensor tokens(const torch::Tensor& x, const torch::Tensor& mask, const torch::Tensor& mu,
                       const torch::Tensor& sd);
};
TORCH_MODULE(DiTNet);

// The CUDA autocast state across LibTorch versions (2.4 made the CUDA-only
// calls per-device ones and deprecated the old names, which then print a
// warning on every call).
bool cuda_autocast_enabled();
at::ScalarType cuda_autocast_dtype();
void set_cuda_autocast(bool on, at::ScalarType type);

// Width of the sinusoidal timestep features fed to the timestep MLP.
constexpr int kTimeFreqDim = 256;

}  // namespace detail
}  // namespace ditimpute
