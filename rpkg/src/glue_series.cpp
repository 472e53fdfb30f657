// Glue for whole-series imputation (cpp/include/ditimpute/series.hpp) and the
// trend-and-season kernel (kernel.hpp): type conversion only.
#include "glue.h"

#include "ditimpute/gp_fit.hpp"
#include "ditimpute/kernel.hpp"
#include "ditimpute/series.hpp"

namespace {

// list(w_smooth, smooth_lengthscale, w_season, period, periodic_lengthscale,
// decay_lengthscale, w_nugget), as R's series kernels hold them.
ditimpute::SeasonalKernel seasonal_from_r(const Rcpp::List& k) {
  ditimpute::SeasonalKernel s;
  s.w_smooth = glue::get_or<double>(k, "w_smooth", s.w_smooth);
  s.smooth_lengthscale = glue::get_or<double>(k, "smooth_lengthscale", s.smooth_lengthscale);
  s.w_season = glue::get_or<double>(k, "w_season", s.w_season);
  s.period = glue::get_or<double>(k, "period", s.period);
  s.periodic_lengthscale = glue::get_or<double>(k, "periodic_lengthscale", s.periodic_lengthscale);
  s.decay_lengthscale = glue::get_or<double>(k, "decay_lengthscale", s.decay_lengthscale);
  s.w_nugget = glue::get_or<double>(k, "w_nugget", s.w_nugget);
  return s;
}

}  // namespace

// [[Rcpp::export]]
Eigen::MatrixXd cpp_seasonal_gamma(Rcpp::List kernel, int H) {
  DITIMPUTE_GLUE_BEGIN
  return ditimpute::kernel_matrix(seasonal_from_r(kernel), H);
  DITIMPUTE_GLUE_END
}

// x: n x H x d windows (NA = missing).
// [[Rcpp::export]]
double cpp_series_profile(Rcpp::NumericVector x, int n, int H, int d, Rcpp::List kernel, int threads) {
  DITIMPUTE_GLUE_BEGIN
  return ditimpute::series_profile_loglik(glue::batch_from_array(x, n, H, d),
                                          ditimpute::kernel_matrix(seasonal_from_r(kernel), H), threads);
  DITIMPUTE_GLUE_END
}

// Mean and Lambda by ECME with Gamma fixed (gp_fit_em's fixed_Gamma).
// [[Rcpp::export]]
Rcpp::List cpp_series_fit_lambda(Rcpp::NumericVector x, int n, int H, int d, Eigen::MatrixXd Gamma, double ridge,
                                 int max_iter, double tol) {
  DITIMPUTE_GLUE_BEGIN
  ditimpute::GpFitOptions opt;
  opt.fixed_Gamma = Gamma;
  opt.fit_lengthscale = false;
  opt.ridge = ridge;
  opt.max_iter = max_iter;
  opt.tol = tol;
  const ditimpute::GpFitResult fit = ditimpute::gp_fit_em(glue::batch_from_array(x, n, H, d), opt);
  return Rcpp::List::create(Rcpp::Named("Lambda") = Rcpp::wrap(fit.Lambda), Rcpp::Named("mean") = Rcpp::wrap(fit.mean),
                            Rcpp::Named("loglik") = fit.loglik, Rcpp::Named("iterations") = fit.iterations,
                            Rcpp::Named("converged") = fit.converged,
                            Rcpp::Named("n_observed") = static_cast<double>(fit.n_observed));
  DITIMPUTE_GLUE_END
}

// x, mean: T x d (NA = missing in x). Returns the point (T x d, the mean
// path), the samples (Z x m, frame-major missing entries) and the number of
// blocks imputed.
// [[Rcpp::export]]
Rcpp::List cpp_impute_series_gp(Eigen::MatrixXd x, Eigen::MatrixXd mean, Eigen::MatrixXd Gamma, Eigen::MatrixXd Lambda,
                                int past, int block, int future, int n_samples, double seed, int threads) {
  DITIMPUTE_GLUE_BEGIN
  ditimpute::SeriesOptions o;
  o.past = past;
  o.block = block;
  o.future = future;
  o.n_samples = n_samples;
  o.seed = glue::seed_from_double(seed);
  o.threads = threads;
  const ditimpute::RowMatrix xr = x, mr = mean;
  ditimpute::SeriesImputation res = ditimpute::impute_series_gp(xr, mr, Gamma, Lambda, o);
  const Eigen::MatrixXd point = res.point;
  return Rcpp::List::create(Rcpp::Named("point") = Rcpp::wrap(point), Rcpp::Named("samples") = Rcpp::wrap(res.samples),
                            Rcpp::Named("blocks") = res.blocks);
  DITIMPUTE_GLUE_END
}
