// Entry tokens (DiTConfig::tokens = "entry"): one token per (frame, variable)
// with attention across time and across variables. Structure (parameter
// count, zero start, equivariance in the variables), the file format, and a
// CI-sized learning check beside the frame-token one in test_dit_learning.cpp.
#include "test_dit_helpers.hpp"

#include "../../src/dit/network.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <iostream>

using namespace ditimpute;
using namespace ditimpute::testing;

namespace {

DiTConfig entry_config(int H, int d) {
  DiTConfig c = tiny_config(H, d);
  c.tokens = "entry";
  return c;
}

std::uint32_t file_version(const std::string& bytes) {
  std::uint32_t v = 0;
  std::memcpy(&v, bytes.data() + 16, sizeof v);  // after the 16-byte magic
  return v;
}

}  // namespace

TEST_CASE("Entry-token DiT: parameter count, the tokens option is checked", "[dit][entry]") {
  // embed (2 -> W), variable embeddings d x W, timestep MLP, per block two
  // attentions (qkv + proj each), the MLP and 9W modulation; final 2W
  // modulation and output W -> 1. Independent of H; d enters only through
  // the variable embeddings.
  auto expected = [](const DiTConfig& c) {
    const std::int64_t W = c.width, d = c.d, h = std::lround(c.mlp_ratio * W);
    const std::int64_t attn = (3 * W * W + 3 * W) + (W * W + W);
    const std::int64_t block = 2 * attn + (W * h + h) + (h * W + W) + (9 * W * W + 9 * W);
    return (2 * W + W) + d * W + (256 * W + W) + (W * W + W) + c.depth * block + (2 * W * W + 2 * W) + (W + 1);
  };
  for (int d : {1, 3, 20}) {
    DiTConfig c = entry_config(12, d);
    CHECK(DiTModel::create(c, 1, "cpu").n_parameters() == expected(c));
  }
  DiTConfig bad = entry_config(12, 3);
  bad.tokens = "variable";
  try {
    bad.validate();
    FAIL("tokens = \"variable\" was accepted");
  } catch (const input_error& e) {
    CHECK(e.arg() == "tokens");
  }
}

TEST_CASE("An untrained entry-token DiT gives eps_hat = sigma_t x_t and round-trips as format version 3", "[dit][entry]") {
  const int H = 10, d = 3;
  auto model = DiTModel::create(entry_config(H, d), 3, "cpu");
  Rng rng(4);
  Batch x = small_gp(H, d, 3.0).simulate(2, rng);
  Mask mask(H, d, true);
  for (int h = 3; h < 7; ++h) mask.observed[h * d + 1] = 0;
  for (double t : {1e-4, 0.5, 10.0}) {
    const Batch eps = model.predict_noise(x, mask, t, 1);
    const double s = std::sqrt(vp_sigma2(t));
    double worst = 0;
    for (std::size_t k = 0; k < x.data.size(); ++k) worst = std::max(worst, std::abs(eps.data[k] - s * x.data[k]));
    CHECK(worst < 1e-5);
  }
  const std::string bytes = model.to_bytes();
  CHECK(file_version(bytes) == 3u);
  auto back = DiTModel::from_bytes(bytes, "cpu");
  CHECK(back.config() == model.config());
  CHECK(back.config().tokens == "entry");
  // Frame-token models without a GP are still written as version 1.
  CHECK(file_version(DiTModel::create(tiny_config(H, d), 3, "cpu").to_bytes()) == 1u);
}

TEST_CASE("Entry tokens: permuting the variables (and their embeddings) permutes the output", "[dit][entry]") {
  // Random weights everywhere; with the variable embeddings permuted along
  // with the data, the network has no other way to tell variables apart, so
  // its output must be permuted the same way. A reshape that mixed the time
  // and variable axes (or attended over the wrong one) breaks this.
  const int H = 7, d = 4;
  torch::manual_seed(11);
  ditimpute::detail::DiTNet net(entry_config(H, d));
  torch::NoGradGuard no_grad;
  for (auto& p : net->parameters()) p.normal_(0.0, 0.3);
  auto x = torch::randn({3, H, d});
  auto mask = (torch::rand({3, H, d}) > 0.5).to(torch::kFloat32);
  auto t = torch::tensor({0.01f, 0.7f, 4.0f});
  auto perm = torch::tensor({2, 0, 3, 1}, torch::kLong);
  auto out = net->noise(x, mask, t);
  auto original = net->var_embed.clone();
  net->var_embed.copy_(original.index_select(0, perm));
  auto out_perm = net->noise(x.index_select(2, perm), mask.index_select(2, perm), t);
  net->var_embed.copy_(original);
  const double scale = std::max(1.0, out.abs().max().item<double>());
  CHECK((out.index_select(2, perm) - out_perm).abs().max().item<double>() <= 1e-4 * scale);
  // And the output does depend on the variables' embeddings (they are used).
  net->var_embed.copy_(original.flip(0));
  auto out_flip = net->noise(x, mask, t);
  net->var_embed.copy_(original);
  CHECK((out - out_flip).abs().max().item<double>() > 1e-3);
}

// The frame-token learning test's setting (test_dit_learning.cpp), with entry
// tokens at width 32 and depth 2 (the 16 x 2 entries are 32 tokens).
TEST_CASE("A small entry-token DiT learns GP conditionals: loss and conditional-mean MSE", "[dit][entry][learning]") {
  const LearningRun r = learn_small_gp(entry_config(16, 2));
  const double trained = r.trained, untrained = r.untrained, mse = r.error.mse, prior = r.error.prior;
  std::cout << "[dit entry learning] loss untrained " << untrained << " trained " << trained << " (" << r.seconds
            << " s); MSE of sample mean " << mse << ", prior-mean MSE " << prior << ", ratio " << mse / prior << "\n";
  // The frame-token test's bounds (its comments give the reasons).
  CHECK(trained < 0.6 * untrained);
  CHECK(mse < 0.25 * prior);
}
