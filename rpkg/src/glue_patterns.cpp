// Glue for missing patterns and masking strategies (cpp/include/ditimpute/patterns.hpp).
#include "glue.h"

#include "ditimpute/patterns.hpp"

namespace {

Rcpp::IntegerVector one_based(const std::vector<int>& frames) {
  Rcpp::IntegerVector out(frames.size());
  for (std::size_t i = 0; i < frames.size(); ++i) out[i] = frames[i] + 1;
  return out;
}

const char* kind_name(ditimpute::PatternGenerator::Kind kind) {
  using K = ditimpute::PatternGenerator::Kind;
  switch (kind) {
    case K::random: return "random";
    case K::blocks: return "blocks";
    case K::tail: return "tail";
    case K::fixed: return "fixed";
    case K::mcar: return "mcar";
    case K::variable_blocks: return "variable_blocks";
  }
  return "unknown";
}

Rcpp::List generator_to_r(const ditimpute::PatternGenerator& g) {
  using K = ditimpute::PatternGenerator::Kind;
  Rcpp::List out = Rcpp::List::create(Rcpp::Named("kind") = kind_name(g.kind));
  switch (g.kind) {
    case K::random: out["k"] = g.k; break;
    case K::blocks: out["b"] = g.b; out["L"] = g.L; out["min_gap"] = g.min_gap; break;
    case K::tail: out["L"] = g.L; break;
    case K::fixed: out["frames"] = one_based(g.frames); break;
    case K::mcar: out["rate"] = g.rate; break;
    case K::variable_blocks: out["b"] = g.b; out["L"] = g.L; out["min_gap"] = g.min_gap; break;
  }
  out["label"] = g.label();
  return out;
}

ditimpute::PatternGenerator generator_from_r(const Rcpp::List& g) {
  using K = ditimpute::PatternGenerator::Kind;
  ditimpute::PatternGenerator out;
  const std::string kind = Rcpp::as<std::string>(g["kind"]);
  if (kind == "random") {
    out.kind = K::random;
    out.k = Rcpp::as<int>(g["k"]);
  } else if (kind == "blocks") {
    out.kind = K::blocks;
    out.b = Rcpp::as<int>(g["b"]);
    out.L = Rcpp::as<int>(g["L"]);
    out.min_gap = Rcpp::as<int>(g["min_gap"]);
  } else if (kind == "tail") {
    out.kind = K::tail;
    out.L = Rcpp::as<int>(g["L"]);
  } else if (kind == "fixed") {
    out.kind = K::fixed;
    for (int f : Rcpp::as<std::vector<int>>(g["frames"])) out.frames.push_back(f - 1);
  } else if (kind == "mcar") {
    out.kind = K::mcar;
    out.rate = Rcpp::as<double>(g["rate"]);
  } else if (kind == "variable_blocks") {
    out.kind = K::variable_blocks;
    out.b = Rcpp::as<int>(g["b"]);
    out.L = Rcpp::as<int>(g["L"]);
    out.min_gap = Rcpp::as<int>(g["min_gap"]);
  } else {
    throw ditimpute::input_error("generators", "unknown generator kind \"" + kind + "\".");
  }
  return out;
}

}  // namespace

namespace glue {

ditimpute::MaskStrategy strategy_from_r(const Rcpp::List& generators, const std::vector<double>& weights) {
  ditimpute::MaskStrategy s;
  for (R_xlen_t i = 0; i < generators.size(); ++i) s.generators.push_back(generator_from_r(generators[i]));
  s.weights = weights;
  s.validate();
  return s;
}

}  // namespace glue

// [[Rcpp::export]]
Rcpp::IntegerVector cpp_pattern_random(int H, int k, double seed) {
  DITIMPUTE_GLUE_BEGIN
  ditimpute::Rng rng(glue::seed_from_double(seed));
  return one_based(ditimpute::pattern_random(H, k, rng));
  DITIMPUTE_GLUE_END
}

// [[Rcpp::export]]
Rcpp::IntegerVector cpp_pattern_blocks(int H, int b, int L, int min_gap, double seed) {
  DITIMPUTE_GLUE_BEGIN
  ditimpute::Rng rng(glue::seed_from_double(seed));
  return one_based(ditimpute::pattern_blocks(H, b, L, rng, min_gap));
  DITIMPUTE_GLUE_END
}

// [[Rcpp::export]]
Rcpp::IntegerVector cpp_pattern_tail(int H, int L) {
  DITIMPUTE_GLUE_BEGIN
  return one_based(ditimpute::pattern_tail(H, L));
  DITIMPUTE_GLUE_END
}

// [[Rcpp::export]]
Rcpp::IntegerVector cpp_paper_pattern(int p) {
  DITIMPUTE_GLUE_BEGIN
  return one_based(ditimpute::paper_pattern(p));
  DITIMPUTE_GLUE_END
}

// [[Rcpp::export]]
Rcpp::LogicalMatrix cpp_mask_mcar(int H, int d, double rate, double seed) {
  DITIMPUTE_GLUE_BEGIN
  ditimpute::Rng rng(glue::seed_from_double(seed));
  return glue::missing_from_mask(ditimpute::mask_mcar(H, d, rate, rng));
  DITIMPUTE_GLUE_END
}

// [[Rcpp::export]]
Rcpp::CharacterVector cpp_strategy_preset_names() {
  DITIMPUTE_GLUE_BEGIN
  return Rcpp::wrap(ditimpute::strategy_preset_names());
  DITIMPUTE_GLUE_END
}

// [[Rcpp::export]]
Rcpp::List cpp_strategy_preset(std::string name) {
  DITIMPUTE_GLUE_BEGIN
  const ditimpute::MaskStrategy s = ditimpute::strategy_preset(name);
  Rcpp::List gens;
  for (const auto& g : s.generators) gens.push_back(generator_to_r(g));
  double total = 0;
  for (double w : s.weights) total += w;
  std::vector<double> w(s.weights);
  for (double& v : w) v /= total;
  return Rcpp::List::create(Rcpp::Named("generators") = gens, Rcpp::Named("weights") = w);
  DITIMPUTE_GLUE_END
}

// [[Rcpp::export]]
Rcpp::LogicalVector cpp_draw_masks(Rcpp::List generators, std::vector<double> weights, int n, int H, int d,
                                   double seed) {
  DITIMPUTE_GLUE_BEGIN
  const ditimpute::MaskStrategy s = glue::strategy_from_r(generators, weights);
  ditimpute::Rng rng(glue::seed_from_double(seed));
  Rcpp::LogicalVector out(static_cast<R_xlen_t>(n) * H * d);
  for (int i = 0; i < n; ++i) {
    const ditimpute::Mask m = s.draw(H, d, rng);
    for (int h = 0; h < H; ++h)
      for (int j = 0; j < d; ++j)
        out[i + static_cast<R_xlen_t>(n) * (h + static_cast<R_xlen_t>(H) * j)] = !m.is_observed(h, j);
  }
  out.attr("dim") = Rcpp::IntegerVector::create(n, H, d);
  return out;
  DITIMPUTE_GLUE_END
}
