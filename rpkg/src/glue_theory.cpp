// Glue for the theory calculators (cpp/include/ditimpute/theory.hpp) and the
// DiT's expected denoising loss (dit_diagnostics.hpp). Types and errors only.
#include "glue.h"

#include "ditimpute/dit.hpp"
#include "ditimpute/dit_diagnostics.hpp"
#include "ditimpute/theory.hpp"

namespace {

// One LawDistance per case as columns of a list; cov_ratio as a list of vectors.
Rcpp::List law_distances_to_r(const std::vector<ditimpute::DistributionError>& e, bool null) {
  const std::size_t n = e.size();
  Rcpp::NumericVector w2(n), w2_mean(n), maha(n), kl(n), energy(n);
  Rcpp::List ratio(n);
  for (std::size_t i = 0; i < n; ++i) {
    const ditimpute::LawDistance& l = null ? e[i].null : e[i].samples;
    w2[i] = l.w2;
    w2_mean[i] = l.w2_mean;
    maha[i] = l.mahalanobis;
    kl[i] = l.kl;
    energy[i] = l.energy;
    ratio[i] = Rcpp::NumericVector(l.cov_ratio.data(), l.cov_ratio.data() + l.cov_ratio.size());
  }
  return Rcpp::List::create(Rcpp::Named("w2") = w2, Rcpp::Named("w2_mean") = w2_mean,
                            Rcpp::Named("mahalanobis") = maha, Rcpp::Named("kl") = kl,
                            Rcpp::Named("energy") = energy, Rcpp::Named("cov_ratio") = ratio);
}

}  // namespace

// Distribution error of each case's samples (a list of Z x m_i matrices)
// against the exact conditional law given x's observed values.
// [[Rcpp::export]]
Rcpp::List cpp_distribution_error(Eigen::MatrixXd Gamma, Eigen::MatrixXd Lambda, Eigen::MatrixXd mean,
                                  Rcpp::NumericVector x, Rcpp::List samples, int n_ref, double seed, int threads) {
  DITIMPUTE_GLUE_BEGIN
  std::vector<Eigen::MatrixXd> s(samples.size());
  for (R_xlen_t i = 0; i < samples.size(); ++i) s[i] = Rcpp::as<Eigen::MatrixXd>(samples[i]);
  const auto e = ditimpute::distribution_error(glue::gp_from_r(Gamma, Lambda, mean), glue::batch_from_r(x), s, n_ref,
                                               glue::seed_from_double(seed), threads);
  Rcpp::IntegerVector Z(e.size()), m(e.size());
  for (std::size_t i = 0; i < e.size(); ++i) {
    Z[i] = e[i].Z;
    m[i] = e[i].m;
  }
  return Rcpp::List::create(Rcpp::Named("Z") = Z, Rcpp::Named("m") = m,
                            Rcpp::Named("samples") = law_distances_to_r(e, false),
                            Rcpp::Named("null") = law_distances_to_r(e, true));
  DITIMPUTE_GLUE_END
}

// Theorem 1-2 factors of one pattern (R's logical missing matrix).
// [[Rcpp::export]]
Rcpp::List cpp_bound_factors(Eigen::MatrixXd Gamma, Eigen::MatrixXd Lambda, Rcpp::LogicalMatrix missing, double n) {
  DITIMPUTE_GLUE_BEGIN
  const ditimpute::GaussianProcess gp =
      glue::gp_from_r(Gamma, Lambda, Eigen::MatrixXd::Zero(Gamma.rows(), Lambda.rows()));
  const ditimpute::BoundFactors b = ditimpute::bound_factors(gp, glue::mask_from_missing(missing), n);
  return Rcpp::List::create(
      Rcpp::Named("n_missing") = b.n_missing, Rcpp::Named("kappa_cond") = b.kappa_cond,
      Rcpp::Named("kappa_obs") = b.kappa_obs, Rcpp::Named("lambda_min_cond") = b.lambda_min_cond,
      Rcpp::Named("theorem1") = b.theorem1, Rcpp::Named("depth") = b.depth, Rcpp::Named("heads") = b.heads,
      Rcpp::Named("norm_B") = b.norm_B, Rcpp::Named("norm_R") = b.norm_R, Rcpp::Named("t0") = b.t0);
  DITIMPUTE_GLUE_END
}

// Expected denoising loss of a fitted DiT at each case's observed values.
// [[Rcpp::export]]
Rcpp::List cpp_denoising_risk(SEXP ptr, Eigen::MatrixXd Gamma, Eigen::MatrixXd Lambda, Eigen::MatrixXd mean,
                              Rcpp::NumericVector x, int K, std::string weight, double seed, int threads) {
  DITIMPUTE_GLUE_BEGIN
  const ditimpute::DenoisingRisk r =
      ditimpute::denoising_risk(*Rcpp::XPtr<ditimpute::DiTModel>(ptr), glue::gp_from_r(Gamma, Lambda, mean),
                                glue::batch_from_r(x), K, weight, glue::seed_from_double(seed), threads);
  return Rcpp::List::create(Rcpp::Named("loss") = r.loss, Rcpp::Named("loss_se") = r.loss_se,
                            Rcpp::Named("excess") = r.excess, Rcpp::Named("excess_se") = r.excess_se);
  DITIMPUTE_GLUE_END
}
