// Glue for the maximum-likelihood GP fit (cpp/include/ditimpute/gp_fit.hpp).
#include "glue.h"

#include "ditimpute/gp_fit.hpp"

namespace {

// The model settings the fit and its gradient share: the kernel (over the
// frame index, e_i = i * scale) with its start and bounds, the nugget's, and
// the penalties on Lambda.
ditimpute::GpFitOptions model_options(const std::string& type, double lengthscale, double scale, bool fit_lengthscale,
                                      double lower, double upper, double nugget, bool fit_nugget, double nugget_lower,
                                      double nugget_upper, double ridge, double shrinkage) {
  ditimpute::GpFitOptions opt;
  opt.kernel.type = ditimpute::kernel_type_from_string(type);
  opt.kernel.lengthscale = lengthscale;
  opt.kernel.embedding.scale = scale;
  opt.fit_lengthscale = fit_lengthscale;
  opt.lengthscale_lower = lower;
  opt.lengthscale_upper = upper;
  opt.nugget = nugget;
  opt.fit_nugget = fit_nugget;
  opt.nugget_lower = nugget_lower;
  opt.nugget_upper = nugget_upper;
  opt.ridge = ridge;
  opt.shrinkage = shrinkage;
  return opt;
}

}  // namespace

// x: n x H x d array, NA = missing. The kernel is over the frame index
// (e_i = i * scale); its variance is fixed at 1 by the core.
// [[Rcpp::export]]
Rcpp::List cpp_gp_fit(Rcpp::NumericVector x, int n, int H, int d, std::string type, double lengthscale,
                      double scale, bool fit_lengthscale, double lower, double upper, double nugget, bool fit_nugget, double nugget_lower, double nugget_upper, double ridge, double shrinkage, int max_iter,
                      double tol, std::string search = "expected", std::string estep = "exact", int draws = 32,
                      double seed = 0, double validation = 0, int patience = 3, std::string method = "em",
                      double gradient_tol = 0.1) {
  DITIMPUTE_GLUE_BEGIN
  ditimpute::GpFitOptions opt = model_options(type, lengthscale, scale, fit_lengthscale, lower, upper, nugget, fit_nugget,
                                              nugget_lower, nugget_upper, ridge, shrinkage);
  opt.max_iter = max_iter;
  opt.tol = tol;
  if (search == "exact") {
    opt.search = ditimpute::GpFitSearch::exact;
  } else if (search != "expected") {
    throw ditimpute::input_error("search", "search must be \"expected\" or \"exact\".");
  }
  if (estep == "sampled") {
    opt.estep = ditimpute::GpFitEStep::sampled;
  } else if (estep == "auto") {
    opt.estep = ditimpute::GpFitEStep::automatic;
  } else if (estep == "exact") {
    opt.estep = ditimpute::GpFitEStep::exact;
  } else {
    throw ditimpute::input_error("e_step", "e_step must be \"auto\", \"exact\" or \"sampled\".");
  }
  opt.estep_draws = draws;
  opt.seed = glue::seed_from_double(seed);
  opt.validation = validation;
  opt.patience = patience;
  opt.gradient_tol = gradient_tol;
  if (method != "em" && method != "lbfgs") throw ditimpute::input_error("method", "method must be \"em\" or \"lbfgs\".");
  const ditimpute::Batch batch = glue::batch_from_array(x, n, H, d);
  const ditimpute::GpFitResult fit =
      method == "lbfgs" ? ditimpute::gp_fit_lbfgs(batch, opt) : ditimpute::gp_fit_em(batch, opt);
  return Rcpp::List::create(
      Rcpp::Named("lengthscale") = fit.kernel.lengthscale, Rcpp::Named("nugget") = fit.nugget, Rcpp::Named("Gamma") = Rcpp::wrap(fit.Gamma),
      Rcpp::Named("Lambda") = Rcpp::wrap(fit.Lambda), Rcpp::Named("mean") = Rcpp::wrap(fit.mean),
      Rcpp::Named("loglik") = fit.loglik, Rcpp::Named("objective") = fit.objective,
      Rcpp::Named("objective_trace") = fit.objective_trace,
      Rcpp::Named("lengthscale_trace") = fit.lengthscale_trace, Rcpp::Named("iterations") = fit.iterations,
      Rcpp::Named("converged") = fit.converged, Rcpp::Named("n_observed") = static_cast<double>(fit.n_observed),
      Rcpp::Named("e_step") = std::string(fit.estep_sampled ? "sampled" : "exact"),
      Rcpp::Named("validation_trace") = fit.validation_trace, Rcpp::Named("best_iteration") = fit.best_iteration,
      Rcpp::Named("stopped_early") = fit.stopped_early, Rcpp::Named("n_validation") = static_cast<double>(fit.n_validation),
      Rcpp::Named("gradient_norm") = fit.gradient_norm, Rcpp::Named("gradient_trace") = fit.gradient_trace,
      Rcpp::Named("evaluations") = fit.evaluations);
  DITIMPUTE_GLUE_END
}

// The exact gradient of gp_fit()'s penalised log-likelihood at given
// parameters (ditimpute::gp_fit_gradient), for the R-level gradient norm of
// any fit. Settings as cpp_gp_fit's.
// [[Rcpp::export]]
Rcpp::List cpp_gp_fit_gradient(Rcpp::NumericVector x, int n, int H, int d, std::string type, double start_lengthscale,
                               double scale, bool fit_lengthscale, bool fit_nugget, double start_nugget, double lower,
                               double upper, double nugget_lower, double nugget_upper, double ridge, double shrinkage,
                               double lengthscale, double nugget, Eigen::VectorXd mean, Eigen::MatrixXd Lambda) {
  DITIMPUTE_GLUE_BEGIN
  const ditimpute::GpFitOptions opt = model_options(type, start_lengthscale, scale, fit_lengthscale, lower, upper,
                                                    start_nugget, fit_nugget, nugget_lower, nugget_upper, ridge, shrinkage);
  const ditimpute::GpFitGradient g =
      ditimpute::gp_fit_gradient(glue::batch_from_array(x, n, H, d), opt, lengthscale, nugget, mean, Lambda);
  return Rcpp::List::create(Rcpp::Named("objective") = g.objective, Rcpp::Named("loglik") = g.loglik,
                            Rcpp::Named("mean") = Rcpp::wrap(g.mean), Rcpp::Named("Lambda") = Rcpp::wrap(g.Lambda),
                            Rcpp::Named("log_lengthscale") = g.log_lengthscale, Rcpp::Named("log_nugget") = g.log_nugget,
                            Rcpp::Named("gradient_norm") = g.gradient_norm);
  DITIMPUTE_GLUE_END
}

// Exact marginal log-likelihood of the observed entries of x under a model.
// [[Rcpp::export]]
double cpp_gp_loglik(Rcpp::NumericVector x, int n, Eigen::MatrixXd Gamma, Eigen::MatrixXd Lambda,
                     Eigen::VectorXd mean) {
  DITIMPUTE_GLUE_BEGIN
  const int H = static_cast<int>(Gamma.rows()), d = static_cast<int>(Lambda.rows());
  return ditimpute::gp_marginal_loglik(glue::batch_from_array(x, n, H, d), Gamma, Lambda, mean);
  DITIMPUTE_GLUE_END
}

// The fewest missing entries in a window for which e_step = "auto" samples.
// [[Rcpp::export]]
int cpp_gp_fit_auto_missing() { return ditimpute::kAutoSampledMissing; }
