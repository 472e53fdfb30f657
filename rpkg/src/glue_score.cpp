// Glue for the nested gradient descent of Algorithm 2 and Lemma 1's counts
// (cpp/include/ditimpute/score.hpp).
#include "glue.h"

#include "ditimpute/score.hpp"

namespace {

Rcpp::List lemma_to_r(const ditimpute::Lemma1Counts& c) {
  return Rcpp::List::create(
      Rcpp::Named("t") = c.t, Rcpp::Named("eps") = c.eps, Rcpp::Named("alpha") = c.alpha,
      Rcpp::Named("sigma2") = c.sigma2, Rcpp::Named("kappa_cond") = c.kappa_cond,
      Rcpp::Named("kappa_obs") = c.kappa_obs, Rcpp::Named("kappa_t") = c.kappa_t, Rcpp::Named("eta") = c.eta,
      Rcpp::Named("theta") = c.theta, Rcpp::Named("K") = static_cast<double>(c.K),
      Rcpp::Named("K_aux") = static_cast<double>(c.K_aux));
}

}  // namespace

// [[Rcpp::export]]
Rcpp::List cpp_lemma1_counts(Eigen::MatrixXd Gamma, Eigen::MatrixXd Lambda, Rcpp::LogicalMatrix missing, double t,
                             double eps) {
  DITIMPUTE_GLUE_BEGIN
  const ditimpute::GaussianProcess gp =
      glue::gp_from_r(Gamma, Lambda, Eigen::MatrixXd::Zero(Gamma.rows(), Lambda.rows()));
  return lemma_to_r(ditimpute::lemma1_counts(gp, glue::mask_from_missing(missing), t, eps));
  DITIMPUTE_GLUE_END
}

// [[Rcpp::export]]
Rcpp::List cpp_score_nested_gd(Eigen::MatrixXd Gamma, Eigen::MatrixXd Lambda, Eigen::MatrixXd mean,
                               Rcpp::NumericMatrix x, Rcpp::LogicalMatrix missing, Eigen::VectorXd v, double t,
                               double tol, double K, double K_aux, double max_major, double max_aux) {
  DITIMPUTE_GLUE_BEGIN
  const ditimpute::GaussianProcess gp = glue::gp_from_r(Gamma, Lambda, mean);
  const std::vector<double> xv = glue::vec_from_matrix(x);
  ditimpute::NestedGDOptions opt;
  opt.tol = tol;
  opt.K = static_cast<long long>(K);
  opt.K_aux = static_cast<long long>(K_aux);
  opt.max_major = static_cast<long long>(max_major);
  opt.max_aux = static_cast<long long>(max_aux);
  const ditimpute::NestedGDResult r =
      ditimpute::score_nested_gd(gp, glue::mask_from_missing(missing), xv.data(), v, t, opt);
  std::vector<double> aux(r.aux_iterations.begin(), r.aux_iterations.end());
  return Rcpp::List::create(
      Rcpp::Named("score") = r.score, Rcpp::Named("major_iterations") = static_cast<double>(r.major_iterations),
      Rcpp::Named("aux_iterations") = aux,
      Rcpp::Named("aux_iterations_total") = static_cast<double>(r.aux_iterations_total),
      Rcpp::Named("mean_aux_iterations") = static_cast<double>(r.mean_aux_iterations), Rcpp::Named("eta") = r.eta,
      Rcpp::Named("theta") = r.theta, Rcpp::Named("rel_error") = r.rel_error,
      Rcpp::Named("converged") = r.converged, Rcpp::Named("lemma") = lemma_to_r(r.lemma));
  DITIMPUTE_GLUE_END
}
