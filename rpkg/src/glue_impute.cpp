// Glue for the imputation pipeline (cpp/include/ditimpute/impute.hpp): one
// call per user operation; every sequence of x (n x H x d, NA = missing) goes
// down together and the summaries come back in place.
#include "glue.h"

namespace {

// The exact conditional sampler, or the diffusion sampler with the exact
// score when `sampler` is a list of sampler options.
template <class Fn>
auto with_gp_sampler(const ditimpute::GaussianProcess& gp, const Rcpp::Nullable<Rcpp::List>& sampler, Fn fn) {
  if (sampler.isNull()) return fn(ditimpute::ExactGPSampler(gp));
  return fn(ditimpute::OracleGPSampler(gp, glue::sampler_from_r(Rcpp::List(sampler.get()))));
}

}  // namespace

// Z draws of the missing entries of every sequence: a list of Z x m_i matrices.
// [[Rcpp::export]]
Rcpp::List cpp_gp_draw(Eigen::MatrixXd Gamma, Eigen::MatrixXd Lambda, Eigen::MatrixXd mean, Rcpp::NumericVector x,
                       int Z, Rcpp::Nullable<Rcpp::List> sampler, double seed, int threads) {
  DITIMPUTE_GLUE_BEGIN
  const ditimpute::GaussianProcess gp = glue::gp_from_r(Gamma, Lambda, mean);
  const ditimpute::Batch b = glue::batch_from_r(x);
  const std::vector<ditimpute::Mask> masks = ditimpute::masks_from_nan(b);
  if (Z < 1) throw ditimpute::input_error("n_samples", "n_samples must be at least 1.");
  return glue::matrices_to_r(with_gp_sampler(gp, sampler, [&](const ditimpute::CaseSampler& s) {
    return s.draw(b, masks, Z, glue::seed_from_double(seed), threads);
  }));
  DITIMPUTE_GLUE_END
}

// [[Rcpp::export]]
Rcpp::List cpp_impute_gp(Eigen::MatrixXd Gamma, Eigen::MatrixXd Lambda, Eigen::MatrixXd mean, Rcpp::NumericVector x,
                         Rcpp::Nullable<Rcpp::List> sampler, Rcpp::List options) {
  DITIMPUTE_GLUE_BEGIN
  const ditimpute::GaussianProcess gp = glue::gp_from_r(Gamma, Lambda, mean);
  const ditimpute::ImputeOptions o = glue::impute_options_from_r(options);
  return glue::imputation_to_r(with_gp_sampler(gp, sampler, [&](const ditimpute::CaseSampler& s) {
    return ditimpute::impute(s, glue::batch_from_r(x), o);
  }));
  DITIMPUTE_GLUE_END
}

// Summaries of samples drawn elsewhere: samples[[i]] is Z x m_i (Z x 0 for a
// complete sequence, which passes through; every sequence complete is an
// input error, as for impute()).
// [[Rcpp::export]]
Rcpp::List cpp_impute_samples(Rcpp::NumericVector x, Rcpp::List samples, Rcpp::List options) {
  DITIMPUTE_GLUE_BEGIN
  const ditimpute::Batch b = glue::batch_from_r(x);
  std::vector<ditimpute::Matrix> s;
  for (R_xlen_t i = 0; i < samples.size(); ++i) s.push_back(Rcpp::as<Eigen::MatrixXd>(samples[i]));
  return glue::imputation_to_r(ditimpute::summarise_samples(b, ditimpute::masks_to_impute(b, "x"), std::move(s),
                                                            glue::impute_options_from_r(options)));
  DITIMPUTE_GLUE_END
}

// region.hpp's min_samples_finite(level).
// [[Rcpp::export]]
int cpp_min_samples(double level) {
  DITIMPUTE_GLUE_BEGIN
  return ditimpute::min_samples_finite(level);
  DITIMPUTE_GLUE_END
}

// Share of exact conditional draws inside each sequence's region.
// [[Rcpp::export]]
std::vector<double> cpp_region_coverage(Eigen::MatrixXd Gamma, Eigen::MatrixXd Lambda, Eigen::MatrixXd mean,
                                        Rcpp::NumericVector x, Rcpp::NumericVector point, std::vector<double> radius,
                                        int n_draws, double seed, int threads) {
  DITIMPUTE_GLUE_BEGIN
  return ditimpute::region_coverage(glue::gp_from_r(Gamma, Lambda, mean), glue::batch_from_r(x),
                                    glue::batch_from_r(point), radius, n_draws, glue::seed_from_double(seed), threads);
  DITIMPUTE_GLUE_END
}

// Whether each sequence's true missing values lie inside its region.
// [[Rcpp::export]]
Rcpp::LogicalVector cpp_region_contains(Rcpp::NumericVector x, Rcpp::NumericVector point, std::vector<double> radius,
                                        Rcpp::NumericVector truth) {
  DITIMPUTE_GLUE_BEGIN
  const std::vector<bool> in = ditimpute::region_contains(glue::batch_from_r(x), glue::batch_from_r(point), radius,
                                                          glue::batch_from_r(truth));
  return Rcpp::LogicalVector(in.begin(), in.end());
  DITIMPUTE_GLUE_END
}

// Checks x as impute() does (the core's masks_to_impute(): no Inf, an
// observed value in every sequence, a missing one in some; a complete
// sequence passes through); returns the missing counts.
// [[Rcpp::export]]
std::vector<int> cpp_check_cases(Rcpp::NumericVector x) {
  DITIMPUTE_GLUE_BEGIN
  std::vector<int> out;
  for (const auto& m : ditimpute::masks_to_impute(glue::batch_from_r(x), "x")) out.push_back(m.n_missing());
  return out;
  DITIMPUTE_GLUE_END
}

// The core's seed derivation (case_seed) for R code that needs independent
// sub-streams of one seed; reduced to R's 31-bit seed range.
// [[Rcpp::export]]
double cpp_case_seed(double seed, double k) {
  DITIMPUTE_GLUE_BEGIN
  return static_cast<double>(ditimpute::case_seed(glue::seed_from_double(seed), glue::seed_from_double(k)) %
                             2147483647ull);
  DITIMPUTE_GLUE_END
}
