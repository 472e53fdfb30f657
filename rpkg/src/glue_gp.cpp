// Glue for the Gaussian layer (cpp/include/ditimpute/gaussian.hpp).
#include "glue.h"
#include "ditimpute/threads.hpp"

#include "ditimpute/state_space.hpp"

namespace {

ditimpute::Kernel kernel_from_r(const Rcpp::List& k) {
  ditimpute::Kernel out;
  out.type = ditimpute::kernel_type_from_string(Rcpp::as<std::string>(k["type"]));
  out.lengthscale = Rcpp::as<double>(k["lengthscale"]);
  out.variance = Rcpp::as<double>(k["variance"]);
  const std::string emb = Rcpp::as<std::string>(k["embedding"]);
  out.embedding.kind = emb == "sinusoidal" ? ditimpute::Embedding::Kind::sinusoidal : ditimpute::Embedding::Kind::index;
  out.embedding.scale = Rcpp::as<double>(k["scale"]);
  out.embedding.radius = Rcpp::as<double>(k["radius"]);
  out.embedding.period = Rcpp::as<double>(k["period"]);
  return out;
}

}  // namespace

// [[Rcpp::export]]
Eigen::MatrixXd cpp_kernel_matrix(Rcpp::List kernel, int H) {
  DITIMPUTE_GLUE_BEGIN
  return ditimpute::kernel_matrix(kernel_from_r(kernel), H);
  DITIMPUTE_GLUE_END
}

// [[Rcpp::export]]
bool cpp_gp_validate(Eigen::MatrixXd Gamma, Eigen::MatrixXd Lambda, Eigen::MatrixXd mean) {
  DITIMPUTE_GLUE_BEGIN
  glue::gp_from_r(Gamma, Lambda, mean);
  return true;
  DITIMPUTE_GLUE_END
}

// [[Rcpp::export]]
Rcpp::NumericVector cpp_gp_simulate(Eigen::MatrixXd Gamma, Eigen::MatrixXd Lambda, Eigen::MatrixXd mean, int n,
                                    double seed) {
  DITIMPUTE_GLUE_BEGIN
  const ditimpute::GaussianProcess gp = glue::gp_from_r(Gamma, Lambda, mean);
  ditimpute::Rng rng(glue::seed_from_double(seed));
  return glue::array_from_batch(gp.simulate(n, rng));
  DITIMPUTE_GLUE_END
}

// [[Rcpp::export]]
Rcpp::NumericVector cpp_latent_transform(Rcpp::NumericVector x, double noise_var, double seed) {
  DITIMPUTE_GLUE_BEGIN
  // The transform is entry-wise, so any layout works: treat x as one flat batch.
  ditimpute::Batch b(1, 1, static_cast<int>(x.size()));
  std::copy(x.begin(), x.end(), b.data.begin());
  ditimpute::Rng rng(glue::seed_from_double(seed));
  const ditimpute::Batch y = ditimpute::latent_transform(b, noise_var, rng);
  return Rcpp::NumericVector(y.data.begin(), y.data.end());
  DITIMPUTE_GLUE_END
}

// Conditional law of the missing entries for every sequence of x (n x H x d,
// values at missing entries ignored). Means come back as n x m (vec order).
// `method`: "auto", "dense", "precision" or "cg" (gaussian.hpp); with
// `with_cov` false, no covariance and no condition numbers (NULL / NA).
// [[Rcpp::export]]
Rcpp::List cpp_conditional(Eigen::MatrixXd Gamma, Eigen::MatrixXd Lambda, Eigen::MatrixXd mean,
                           Rcpp::NumericVector x, int n, Rcpp::LogicalMatrix missing, std::string method,
                           bool with_cov, double cg_tol) {
  DITIMPUTE_GLUE_BEGIN
  const ditimpute::GaussianProcess gp = glue::gp_from_r(Gamma, Lambda, mean);
  const ditimpute::Mask mask = glue::mask_from_missing(missing);
  ditimpute::ConditionalOptions opt;
  opt.method = ditimpute::parse_conditional_method(method);
  opt.cg_tol = cg_tol;
  auto cond = ditimpute::make_conditional(gp, mask, opt);
  const ditimpute::Batch batch = glue::batch_from_array(x, n, gp.H(), gp.d());
  std::vector<int> miss = cond->missing_entries();
  for (int& k : miss) k += 1;
  const double na = NA_REAL;
  Rcpp::RObject cov = R_NilValue;
  if (with_cov) {  // written straight into R's matrix: no m x m buffer of the core's
    const int m = cond->n_missing();
    ditimpute::check_memory(8.0 * 2.0 * m * m, "x",
                            "the dense " + std::to_string(m) + " x " + std::to_string(m) + " conditional covariance");
    Rcpp::NumericMatrix S(Rcpp::no_init(m, m));
    Eigen::Map<Eigen::MatrixXd> S_map(S.begin(), m, m);
    cond->covariance_into(S_map);
    cov = S;
  }
  return Rcpp::List::create(
      Rcpp::Named("mean") = Rcpp::wrap(cond->mean(batch)), Rcpp::Named("cov") = cov,
      Rcpp::Named("kappa_cond") = with_cov ? cond->kappa_cond() : na,
      Rcpp::Named("kappa_obs") = with_cov ? cond->kappa_obs() : na, Rcpp::Named("kronecker") = cond->kronecker(),
      Rcpp::Named("method") = cond->method(), Rcpp::Named("missing_entries") = miss);
  DITIMPUTE_GLUE_END
}

// [[Rcpp::export]]
Rcpp::List cpp_kappa(Eigen::MatrixXd Gamma, Eigen::MatrixXd Lambda, Rcpp::LogicalMatrix missing) {
  DITIMPUTE_GLUE_BEGIN
  const ditimpute::GaussianProcess gp = glue::gp_from_r(Gamma, Lambda, Eigen::MatrixXd::Zero(Gamma.rows(), Lambda.rows()));
  auto cond = ditimpute::make_conditional(gp, glue::mask_from_missing(missing));
  return Rcpp::List::create(Rcpp::Named("kappa_cond") = cond->kappa_cond(),
                            Rcpp::Named("kappa_obs") = cond->kappa_obs());
  DITIMPUTE_GLUE_END
}

// Exact conditional score (eq. 9) at the rows of V (Z x m) and time t.
// [[Rcpp::export]]
Eigen::MatrixXd cpp_score_exact(Eigen::MatrixXd Gamma, Eigen::MatrixXd Lambda, Eigen::MatrixXd mean,
                                Rcpp::NumericMatrix x, Rcpp::LogicalMatrix missing, Eigen::MatrixXd V, double t) {
  DITIMPUTE_GLUE_BEGIN
  const ditimpute::GaussianProcess gp = glue::gp_from_r(Gamma, Lambda, mean);
  auto cond = ditimpute::make_conditional(gp, glue::mask_from_missing(missing));
  if (V.cols() != cond->n_missing())
    throw ditimpute::input_error("v", "v must have one value per missing entry (" +
                                          std::to_string(cond->n_missing()) + "), not " +
                                          std::to_string(V.cols()) + ".");
  const std::vector<double> v = glue::vec_from_matrix(x);
  return cond->score(V, cond->mean(v.data()), t);
  DITIMPUTE_GLUE_END
}

// Imputation through the state-space path (state_space.hpp): the exact GP
// conditional of a Markov kernel with a nugget, never forming Gamma.
// [[Rcpp::export]]
Rcpp::List cpp_impute_state_space(Rcpp::List kernel, double nugget, Eigen::MatrixXd Lambda, Eigen::MatrixXd mean,
                                  Rcpp::NumericVector x, Rcpp::List options) {
  DITIMPUTE_GLUE_BEGIN
  const ditimpute::StateSpaceGP gp(kernel_from_r(kernel), nugget, Lambda, ditimpute::RowMatrix(mean));
  return glue::imputation_to_r(ditimpute::impute(ditimpute::StateSpaceSampler(gp), glue::batch_from_r(x),
                                                 glue::impute_options_from_r(options)));
  DITIMPUTE_GLUE_END
}

// The process-wide thread budget (threads.hpp): records it and sets
// OpenBLAS's threads; TRUE when a BLAS took it.
// [[Rcpp::export]]
bool cpp_set_thread_budget(int threads) {
  DITIMPUTE_GLUE_BEGIN
  return ditimpute::set_thread_budget(threads);
  DITIMPUTE_GLUE_END
}

// [[Rcpp::export]]
bool cpp_in_forked_child() {
  DITIMPUTE_GLUE_BEGIN
  return ditimpute::in_forked_child();
  DITIMPUTE_GLUE_END
}
