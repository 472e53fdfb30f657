#include "network.hpp"

#include "gelu.hpp"

#include <ATen/autocast_mode.h>
#include <torch/version.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace ditimpute {
namespace detail {

namespace {

constexpr double kNormEps = 1e-6;  // every LayerNorm of the network

torch::nn::LayerNorm plain_layer_norm(int width) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({width}).elementwise_affine(false).eps(kNormEps));
}

// A per-row vector v [B, width] (or [1, width]) shaped to broadcast over the
// tokens x of those rows: [B, 1, width] for frame tokens [B, H, width],
// [B, 1, 1, width] for entry tokens [B, H, d, width].
torch::Tensor per_row(const torch::Tensor& v, const torch::Tensor& x) {
  std::vector<int64_t> shape(x.dim(), 1);
  shape.front() = v.size(0);
  shape.back() = v.size(1);
  return v.view(shape);
}

torch::Tensor modulate(const torch::Tensor& x, const torch::Tensor& shift, const torch::Tensor& scale) {
  return x * (1 + per_row(scale, x)) + per_row(shift, x);
}

// Sinusoidal features of a scalar per row (as in DiT / "Attention is all you
// need"): [cos(u w_k), sin(u w_k)], w_k = 10000^(-k / half).
torch::Tensor sinusoidal(const torch::Tensor& u, int dim) {
  const int half = dim / 2;
  auto freqs = torch::exp(-std::log(10000.0) *
                          torch::arange(half, u.options()) / static_cast<double>(half));
  auto args = u.unsqueeze(1) * freqs.unsqueeze(0);
  return torch::cat({torch::cos(args), torch::sin(args)}, 1);
}

void zero_linear(torch::nn::Linear& l) {
  torch::nn::init::zeros_(l->weight);
  if (l->bias.defined()) torch::nn::init::zeros_(l->bias);
}

void xavier_linear(torch::nn::Linear& l) {
  torch::nn::init::xavier_uniform_(l->weight);
  if (l->bias.defined()) torch::nn::init::zeros_(l->bias);
}

// x @ W'^T + b' for the linear map l applied to (x * (1 + scale) + shift) and
// its output multiplied by gate, all vectors [width_in] / [width_out]:
// W' = diag(gate) W diag(1 + scale), b' = gate * (W shift + b). An undefined
// tensor leaves that part out.
std::pair<torch::Tensor, torch::Tensor> fold_linear(const torch::nn::Linear& l, const torch::Tensor& scale,
                                                    const torch::Tensor& shift, const torch::Tensor& gate) {
  torch::Tensor w = l->weight, b = l->bias;
  if (shift.defined()) b = torch::addmv(b, w, shift);
  if (scale.defined()) w = w * (1 + scale).unsqueeze(0);
  if (gate.defined()) {
    w = w * gate.unsqueeze(1);
    b = b * gate;
  }
  return {w, b};
}

// Multi-head attention softmax(q k^T * scale) v on [B, heads, N, dh] tensors.
// LibTorch >= 2 has the fused kernel (flash / memory-efficient attention on
// CUDA), whose scale is fixed at 1/sqrt(dh) in 2.0: a q already scaled by
// 1/sqrt(dh) (scale = 1) is scaled back first, so callers that can skip the
// pre-scaling do (kFusedAttention). Older LibTorch (Debian's 1.13): matmul +
// softmax. The fused branch is compiled only against LibTorch >= 2 and is not
// measured on this project's CPU-only 1.13 (cpp/DESIGN.md).
#if TORCH_VERSION_MAJOR >= 2
constexpr bool kFusedAttention = true;
#else
constexpr bool kFusedAttention = false;
#endif

torch::Tensor attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, double scale) {
#if TORCH_VERSION_MAJOR >= 2
  const double native = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  return at::scaled_dot_product_attention(scale == native ? q : q * (scale / native), k, v);
#else
  auto s = torch::matmul(q, k.transpose(-2, -1));
  if (scale != 1.0) s.mul_(scale);
  return torch::matmul(torch::softmax(s, -1), v);
#endif
}

// Multi-head self-attention of the token sequences h [S, N, width] through
// the maps qkv and proj: [S, N, width].
torch::Tensor self_attention(const torch::Tensor& h, torch::nn::Linear& qkv, torch::nn::Linear& proj, int heads) {
  const int64_t S = h.size(0), N = h.size(1), W = h.size(2), dh = W / heads;
  auto q_k_v = qkv(h).reshape({S, N, 3, heads, dh}).permute({2, 0, 3, 1, 4});
  auto a = attention(q_k_v[0], q_k_v[1], q_k_v[2], 1.0 / std::sqrt(static_cast<double>(dh)));
  return proj(a.transpose(1, 2).reshape({S, N, W}));
}

// LayerNorm over the last dimension without affine parameters, on rows.
torch::Tensor plain_norm(const torch::Tensor& x) {
  return at::layer_norm(x, {x.size(-1)}, {}, {}, kNormEps);
}

// Activations handled at once by forward_shared's MLP on the CPU: ~1 MB, so
// that what one product writes the next op reads from cache, not memory.
// (Chunking the attention half over whole sequences the same way was measured
// and gave nothing: 0.276 vs 0.263 s a call, bench_dit sampler.)
constexpr std::int64_t kCpuChunkBytes = std::int64_t{1} << 20;

// y + fc2'(gelu(fc1'(norm(y)))) on rows y [rows, width], the modulation and
// gate already folded into (w1, b1) and (w2, b2). On the CPU (cpu_chunks) the
// rows go in chunks of ~1 MB of hidden activations and the GELU is computed in
// place (gelu.hpp). Otherwise one chain of whole-tensor ops (other devices,
// and the benchmark's baseline). bench/results/dit_sampler.md has the timings.
torch::Tensor mlp_residual(const torch::Tensor& y, const torch::Tensor& w1, const torch::Tensor& b1,
                           const torch::Tensor& w2, const torch::Tensor& b2, bool cpu_chunks) {
  if (!cpu_chunks || !y.device().is_cpu()) {
    auto hidden = torch::gelu(torch::addmm(b1, plain_norm(y), w1.t()), "tanh");
    return torch::addmm(y, hidden, w2.t()).add_(b2);
  }
  const std::int64_t rows = y.size(0);
  const std::int64_t chunk =
      std::max<std::int64_t>(64, kCpuChunkBytes / (w1.size(0) * static_cast<std::int64_t>(sizeof(float))));
  auto out = torch::empty_like(y);
  const auto w1t = w1.t(), w2t = w2.t();
  for (std::int64_t r0 = 0; r0 < rows; r0 += chunk) {
    const std::int64_t n = std::min(chunk, rows - r0);
    auto yc = y.narrow(0, r0, n);
    auto hidden = gelu_tanh_(torch::addmm(b1, plain_norm(yc), w1t));
    auto oc = out.narrow(0, r0, n);
    torch::addmm_out(oc, yc, hidden, w2t);
    oc.add_(b2);
  }
  return out;
}

// rows + gate * proj(attention(modulate(norm(rows)))) for token rows
// [S * N, width] that form S sequences of N tokens, with the modulation
// (shift, scale) and the gate folded into the qkv and proj maps; the
// residual addition happens inside the output product.
torch::Tensor folded_attention(const torch::Tensor& rows, int64_t S, int64_t N, torch::nn::Linear& qkv,
                               torch::nn::Linear& proj, int heads, const torch::Tensor& shift,
                               const torch::Tensor& scale, const torch::Tensor& gate) {
  const int64_t W = rows.size(1), dh = W / heads;
  torch::Tensor none;
  auto [wqkv, bqkv] = fold_linear(qkv, scale, shift, none);
  const double qs = 1.0 / std::sqrt(static_cast<double>(dh));
  if (!kFusedAttention) {
    auto qscale = torch::ones({3 * W}, wqkv.options());
    qscale.narrow(0, 0, W).fill_(qs);
    wqkv = wqkv * qscale.unsqueeze(1);
    bqkv = bqkv * qscale;
  }
  auto [wp, bp] = fold_linear(proj, none, none, gate);
  auto q_k_v = torch::addmm(bqkv, plain_norm(rows), wqkv.t()).reshape({S, N, 3, heads, dh}).permute({2, 0, 3, 1, 4});
  auto a = attention(q_k_v[0], q_k_v[1], q_k_v[2], kFusedAttention ? qs : 1.0).transpose(1, 2).reshape({S * N, W});
  return torch::addmm(rows, a, wp.t()).add_(bp);
}

}  // namespace

DiTBlockImpl::DiTBlockImpl(int width, int heads_, int mlp_hidden) : heads(heads_) {
  norm1 = register_module("norm1", plain_layer_norm(width));
  norm2 = register_module("norm2", plain_layer_norm(width));
  qkv = register_module("qkv", torch::nn::Linear(width, 3 * width));
  proj = register_module("proj", torch::nn::Linear(width, width));
  fc1 = register_module("fc1", torch::nn::Linear(width, mlp_hidden));
  fc2 = register_module("fc2", torch::nn::Linear(mlp_hidden, width));
  ada = register_module("ada", torch::nn::Linear(width, 6 * width));
}

torch::Tensor DiTBlockImpl::forward(const torch::Tensor& x, const torch::Tensor& c) {
  auto mod = ada(torch::silu(c)).chunk(6, 1);
  const auto& shift_a = mod[0], &scale_a = mod[1], &gate_a = mod[2];
  const auto& shift_m = mod[3], &scale_m = mod[4], &gate_m = mod[5];
  // Multi-head self-attention over the H frame tokens.
  auto y = x + per_row(gate_a, x) * self_attention(modulate(norm1(x), shift_a, scale_a), qkv, proj, heads);

  auto m = fc2(torch::gelu(fc1(modulate(norm2(y), shift_m, scale_m)), "tanh"));
  return y + per_row(gate_m, y) * m;
}

torch::Tensor DiTBlockImpl::forward_shared(const torch::Tensor& x, const torch::Tensor& c) {
  auto mod = ada(torch::silu(c)).reshape({6, -1});
  const int64_t B = x.size(0), N = x.size(1), W = x.size(2);
  torch::Tensor none;
  // Attention, q pre-scaled by 1/sqrt(dh) through its rows of the qkv map
  // (the fused kernel scales itself); x + gate * proj(a) in the product.
  auto y = folded_attention(x.reshape({B * N, W}), B, N, qkv, proj, heads, mod[0], mod[1], mod[2]);
  auto [w1, b1] = fold_linear(fc1, mod[4], mod[3], none);
  auto [w2, b2] = fold_linear(fc2, none, none, mod[5]);
  return mlp_residual(y, w1, b1, w2, b2, cpu_chunked_mlp).reshape({B, N, W});  // y + gate * mlp
}

EntryBlockImpl::EntryBlockImpl(int width, int heads_, int mlp_hidden) : heads(heads_) {
  norm_time = register_module("norm_time", plain_layer_norm(width));
  norm_var = register_module("norm_var", plain_layer_norm(width));
  norm_mlp = register_module("norm_mlp", plain_layer_norm(width));
  qkv_time = register_module("qkv_time", torch::nn::Linear(width, 3 * width));
  proj_time = register_module("proj_time", torch::nn::Linear(width, width));
  qkv_var = register_module("qkv_var", torch::nn::Linear(width, 3 * width));
  proj_var = register_module("proj_var", torch::nn::Linear(width, width));
  fc1 = register_module("fc1", torch::nn::Linear(width, mlp_hidden));
  fc2 = register_module("fc2", torch::nn::Linear(mlp_hidden, width));
  ada = register_module("ada", torch::nn::Linear(width, 9 * width));
}

torch::Tensor EntryBlockImpl::forward(const torch::Tensor& x, const torch::Tensor& c) {
  auto mod = ada(torch::silu(c)).chunk(9, 1);
  const int64_t B = x.size(0), H = x.size(1), d = x.size(2), W = x.size(3);

  // Across time: each variable's H tokens are one sequence.
  auto h = modulate(norm_time(x), mod[0], mod[1]).transpose(1, 2).reshape({B * d, H, W});
  auto a = self_attention(h, qkv_time, proj_time, heads).reshape({B, d, H, W}).transpose(1, 2);
  auto y = x + per_row(mod[2], x) * a;

  // Across variables: each frame's d tokens are one sequence.
  h = modulate(norm_var(y), mod[3], mod[4]).reshape({B * H, d, W});
  a = self_attention(h, qkv_var, proj_var, heads).reshape({B, H, d, W});
  y = y + per_row(mod[5], y) * a;

  auto m = fc2(torch::gelu(fc1(modulate(norm_mlp(y), mod[6], mod[7])), "tanh"));
  return y + per_row(mod[8], y) * m;
}

torch::Tensor EntryBlockImpl::forward_shared(const torch::Tensor& x, const torch::Tensor& c) {
  auto mod = ada(torch::silu(c)).reshape({9, -1});
  const int64_t B = x.size(0), H = x.size(1), d = x.size(2), W = x.size(3);
  torch::Tensor none;
  // Across time: rows in [B, d, H] order (one copy), back to [B, H, d] after.
  auto rows = x.transpose(1, 2).reshape({B * d * H, W});
  rows = folded_attention(rows, B * d, H, qkv_time, proj_time, heads, mod[0], mod[1], mod[2]);
  rows = rows.view({B, d, H, W}).transpose(1, 2).reshape({B * H * d, W});
  // Across variables: rows in [B, H, d] order already.
  rows = folded_attention(rows, B * H, d, qkv_var, proj_var, heads, mod[3], mod[4], mod[5]);
  auto [w1, b1] = fold_linear(fc1, mod[7], mod[6], none);
  auto [w2, b2] = fold_linear(fc2, none, none, mod[8]);
  return mlp_residual(rows, w1, b1, w2, b2, true).view({B, H, d, W});
}

DiTNetImpl::DiTNetImpl(const DiTConfig& c)
    : config(c),
      log_t0(std::log(c.t0)),
      log_T(std::log(c.T)),
      v_prediction(c.prediction == "v"),
      gp_inputs(!c.gp.empty()),
      gp_residual(c.gp == "residual" || c.gp == "score"),
      gp_score(c.gp == "score"),
      entry_tokens(c.tokens == "entry") {
  const int W = c.width;
  const int hidden = static_cast<int>(std::lround(c.mlp_ratio * W));
  const int per_token = entry_tokens ? 1 : c.d;  // variables a token carries
  embed = register_module("embed", torch::nn::Linear((gp_inputs ? 4 : 2) * per_token, W));
  t_fc1 = register_module("t_fc1", torch::nn::Linear(kTimeFreqDim, W));
  t_fc2 = register_module("t_fc2", torch::nn::Linear(W, W));
  blocks = register_module("blocks", torch::nn::ModuleList());
  for (int l = 0; l < c.depth; ++l) {
    if (entry_tokens) blocks->push_back(EntryBlock(W, c.heads, hidden));
    else blocks->push_back(DiTBlock(W, c.heads, hidden));
  }
  norm_final = register_module("norm_final", plain_layer_norm(W));
  ada_final = register_module("ada_final", torch::nn::Linear(W, 2 * W));
  out = register_module("out", torch::nn::Linear(W, per_token));
  if (entry_tokens) var_embed = register_parameter("var_embed", torch::zeros({c.d, W}));

  // Fixed 1-D sin/cos positions of the frames (DiT's get_1d_sincos_pos_embed).
  auto positions = torch::arange(c.H, torch::kFloat64);
  auto omega = torch::pow(10000.0, -torch::arange(W / 2, torch::kFloat64) / (W / 2.0));
  auto args = positions.unsqueeze(1) * omega.unsqueeze(0);
  pos = register_buffer("pos", torch::cat({torch::sin(args), torch::cos(args)}, 1).to(torch::kFloat32));
  initialize();
}

void DiTNetImpl::initialize() {
  torch::NoGradGuard no_grad;
  xavier_linear(embed);
  for (auto& b : *blocks) {
    if (auto* blk = b->as<EntryBlockImpl>()) {
      for (auto* l : {&blk->qkv_time, &blk->proj_time, &blk->qkv_var, &blk->proj_var, &blk->fc1, &blk->fc2})
        xavier_linear(*l);
      zero_linear(blk->ada);
      continue;
    }
    auto* blk = b->as<DiTBlockImpl>();
    xavier_linear(blk->qkv);
    xavier_linear(blk->proj);
    xavier_linear(blk->fc1);
    xavier_linear(blk->fc2);
    zero_linear(blk->ada);  // adaLN-Zero: each block starts as the identity
  }
  // Variable embeddings at the scale of the sin/cos positions (RMS 1/sqrt(2)),
  // so that variables are told apart from the first step.
  if (var_embed.defined()) torch::nn::init::normal_(var_embed, 0.0, std::sqrt(0.5));
  torch::nn::init::normal_(t_fc1->weight, 0.0, 0.02);
  torch::nn::init::zeros_(t_fc1->bias);
  torch::nn::init::normal_(t_fc2->weight, 0.0, 0.02);
  torch::nn::init::zeros_(t_fc2->bias);
  zero_linear(ada_final);
  zero_linear(out);  // F = 0 at start: eps_hat = 0 ("eps") or sigma_t x_t ("v")
}

torch::Tensor DiTNetImpl::conditioning(const torch::Tensor& t) {
  // Time enters through log t rescaled to [0, 1000] over [t0, T]: the
  // sampler's grid is geometric, so equal steps in log t get equally distinct
  // embeddings (DiT used integer steps 0..999 with the same frequencies).
  auto u = (torch::log(t) - log_t0) * (1000.0 / (log_T - log_t0));
  return t_fc2(torch::silu(t_fc1(sinusoidal(u, kTimeFreqDim))));
}

torch::Tensor DiTNetImpl::tokens(const torch::Tensor& x, const torch::Tensor& mask, const torch::Tensor& mu,
                                 const torch::Tensor& sd) {
  if (gp_inputs) TORCH_CHECK(mu.defined() && sd.defined(), "a GP-informed DiT needs the GP's conditional mean and sd");
  if (entry_tokens) {
    // [B, H, d, features]: each entry's own inputs.
    auto f = gp_inputs ? torch::stack({x, mask, mu, sd}, -1) : torch::stack({x, mask}, -1);
    return embed(f) + pos.view({1, config.H, 1, -1}) + var_embed.unsqueeze(0).unsqueeze(0);
  }
  if (!gp_inputs) return embed(torch::cat({x, mask}, -1)) + pos.unsqueeze(0);
  return embed(torch::cat({x, mask, mu, sd}, -1)) + pos.unsqueeze(0);
}

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
bool cuda_autocast_enabled() { return at::autocast::is_autocast_enabled(at::kCUDA); }
at::ScalarType cuda_autocast_dtype() { return at::autocast::get_autocast_dtype(at::kCUDA); }
void set_cuda_autocast(bool on, at::ScalarType type) {
  at::autocast::set_autocast_dtype(at::kCUDA, type);
  at::autocast::set_autocast_enabled(at::kCUDA, on);
}
#else
bool cuda_autocast_enabled() { return at::autocast::is_enabled(); }
at::ScalarType cuda_autocast_dtype() { return at::autocast::get_autocast_gpu_dtype(); }
void set_cuda_autocast(bool on, at::ScalarType type) {
  at::autocast::set_autocast_gpu_dtype(type);
  at::autocast::set_enabled(on);
}
#endif

namespace {
// The GP marginal base of DiTNetImpl::noise: sigma (x - alpha mu) / (alpha^2 sd^2 + sigma^2),
// alpha and sigma broadcastable to x.
torch::Tensor gp_base_noise(const torch::Tensor& x, const torch::Tensor& mu, const torch::Tensor& sd,
                            const torch::Tensor& alpha, const torch::Tensor& sigma) {
  return sigma * (x - alpha * mu) / (alpha.square() * sd.square() + sigma.square());
}

// The exact-score base of gp = "score": on the GP's missing entries (sd > 0)
// sigma U diag(1 / (alpha^2 lambda + sigma^2)) U^T (x - alpha mu), the
// marginal base elsewhere. x, mu, sd [B, H, d]; U [C, S, K] and lambda [C, K]
// for C cases, each shared by B / C consecutive rows (zero columns of U pad
// K); alpha and sigma [B, 1, 1] or [1]. In float64, with autocast off (the
// sampler's CUDA bf16) and so without TF32 products: the eigenvalues span
// orders of magnitude and 1 / sigma_t^2 reaches 1e5.
torch::Tensor gp_score_noise(const torch::Tensor& x, const torch::Tensor& mu, const torch::Tensor& sd,
                             const torch::Tensor& U, const torch::Tensor& lambda, const torch::Tensor& alpha,
                             const torch::Tensor& sigma) {
  TORCH_CHECK(U.defined() && lambda.defined(), "a gp = \"score\" DiT needs the GP's conditional eigenvectors");
  struct NoAutocast {  // restored on every exit
    bool was = cuda_autocast_enabled();
    at::ScalarType type = cuda_autocast_dtype();
    NoAutocast() { set_cuda_autocast(false, type); }
    ~NoAutocast() { set_cuda_autocast(was, type); }
  } no_autocast;
  const int64_t B = x.size(0), C = U.size(0), S = U.size(1);
  TORCH_CHECK(C > 0 && B % C == 0, "the GP eigenvectors must cover whole groups of rows");
  const auto f64 = torch::kFloat64;
  const auto a = alpha.to(f64).reshape({-1}).expand({B}).reshape({C, B / C, 1});
  const auto s = sigma.to(f64).reshape({-1}).expand({B}).reshape({C, B / C, 1});
  const auto Ud = U.to(f64);
  const auto r = x.to(f64).reshape({C, B / C, S}) - a * mu.to(f64).reshape({C, B / C, S});
  auto coef = torch::bmm(r, Ud) / (a.square() * lambda.to(f64).unsqueeze(1) + s.square());  // [C, rows, K]
  auto exact = (torch::bmm(coef, Ud.transpose(1, 2)) * s).reshape(x.sizes()).to(x.scalar_type());
  return torch::where(sd > 0, exact, gp_base_noise(x, mu, sd, alpha, sigma));
}
}  // namespace

torch::Tensor DiTNetImpl::forward(const torch::Tensor& x, const torch::Tensor& mask, const torch::Tensor& t,
                                  const torch::Tensor& mu, const torch::Tensor& sd) {
  auto c = conditioning(t);
  auto h = tokens(x, mask, mu, sd);
  for (auto& b : *blocks) {
    if (entry_tokens) h = b->as<EntryBlockImpl>()->forward(h, c);
    else h = b->as<DiTBlockImpl>()->forward(h, c);
  }
  // The final modulation after the blocks: the order in which autograd
  // accumulates c's gradient, and so the trained weights to float rounding,
  // depend on it (built before them, a frame model trains differently from
  // the releases that published the benchmarks).
  auto mod = ada_final(torch::silu(c)).chunk(2, 1);
  auto F = out(modulate(norm_final(h), mod[0], mod[1]));
  return entry_tokens ? F.squeeze(-1) : F;  // [B, H, d] either way
}

torch::Tensor DiTNetImpl::noise(const torch::Tensor& x, const torch::Tensor& mask, const torch::Tensor& t,
                                const torch::Tensor& mu, const torch::Tensor& sd, const torch::Tensor& U,
                                const torch::Tensor& lambda) {
  auto F = forward(x, mask, t, mu, sd);
  if (!v_prediction && !gp_residual) return F;
  auto alpha = vp_alpha(t).view({-1, 1, 1});
  auto sigma = vp_sigma(t).view({-1, 1, 1});
  if (gp_residual) {
    auto base = gp_score ? gp_score_noise(x, mu, sd, U, lambda, alpha, sigma) : gp_base_noise(x, mu, sd, alpha, sigma);
    return v_prediction ? base - alpha * F : base + F;
  }
  return sigma * x - alpha * F;
}

torch::Tensor DiTNetImpl::noise_at(const torch::Tensor& x, const torch::Tensor& mask, double t,
                                   const torch::Tensor& mu, const torch::Tensor& sd, const torch::Tensor& U,
                                   const torch::Tensor& lambda) {
  auto c = conditioning(torch::full({1}, t, x.options()));
  auto h = tokens(x, mask, mu, sd);
  for (auto& b : *blocks) {
    if (entry_tokens) h = b->as<EntryBlockImpl>()->forward_shared(h, c);
    else h = b->as<DiTBlockImpl>()->forward_shared(h, c);
  }
  auto mod = ada_final(torch::silu(c)).reshape({2, -1});
  // eps_hat = F ("eps") or sigma_t x - alpha_t F ("v"): the factor on F goes
  // into the output map, the x term is one in-place addition (the GP base of
  // gp = "residual" in place of sigma_t x).
  torch::Tensor none;
  auto gate = v_prediction ? torch::full({out->weight.size(0)}, -vp_alpha(t), x.options()) : none;
  auto [w, b] = fold_linear(out, mod[1], mod[0], gate);
  // Back to x's dtype: under the CUDA bf16 autocast of the sampler
  // (sampling.cpp) the product is bf16; the diffusion arithmetic is float32.
  auto eps = torch::addmm(b, plain_norm(h.reshape({-1, h.size(-1)})), w.t()).to(x.scalar_type()).reshape(x.sizes());
  if (gp_residual) return eps.add_(base_noise_at(x, t, mu, sd, U, lambda));
  return v_prediction ? eps.add_(x, vp_sigma(t)) : eps;
}

torch::Tensor DiTNetImpl::base_noise_at(const torch::Tensor& x, double t, const torch::Tensor& mu,
                                        const torch::Tensor& sd, const torch::Tensor& U, const torch::Tensor& lambda) {
  TORCH_CHECK(gp_residual, "only a gp = \"residual\" or \"score\" network has a GP base");
  auto alpha = torch::full({1}, vp_alpha(t), x.options());
  auto sigma = torch::full({1}, vp_sigma(t), x.options());
  const auto mux = mu.to(x.scalar_type()), sdx = sd.to(x.scalar_type());
  return gp_score ? gp_score_noise(x, mux, sdx, U, lambda, alpha, sigma) : gp_base_noise(x, mux, sdx, alpha, sigma);
}

}  // namespace detail
}  // namespace ditimpute
