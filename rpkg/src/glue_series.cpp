// Glue for whole-series imputation (cpp/include/ditimpute/series.hpp) and the
// trend-and-season kernel (kernel.hpp): type conversion only.
#include "glue.h"

#include "ditimpute/gp_fit.hpp"
#include "ditimpute/kernel.hpp"
#include "ditimpute/series.hpp"
#include "ditimpute/structural.hpp"

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

// ---------------------------------------------------------- structural --

namespace {

ditimpute::StructuralSpec::Trend trend_from_r(const std::string& s) {
  if (s == "stationary") return ditimpute::StructuralSpec::Trend::none;
  if (s == "level") return ditimpute::StructuralSpec::Trend::level;
  if (s == "trend") return ditimpute::StructuralSpec::Trend::trend;
  throw ditimpute::input_error("model", "unknown model \"" + s + "\" (stationary, level or trend).");
}

// list(model, seasonal, period, level_rate, slope_rate, smooth_var,
// smooth_lengthscale, season_var, periodic_lengthscale, season_decay, nugget):
// missing fields keep the core's defaults.
ditimpute::StructuralSpec spec_from_r(const Rcpp::List& l) {
  ditimpute::StructuralSpec s;
  s.trend = trend_from_r(glue::get_or<std::string>(l, "model", "level"));
  s.seasonal = glue::get_or<bool>(l, "seasonal", s.seasonal);
  s.period = glue::get_or<double>(l, "period", s.period);
  s.harmonics = glue::get_or<int>(l, "harmonics", s.harmonics);
  s.level_rate = glue::get_or<double>(l, "level_rate", s.level_rate);
  s.slope_rate = glue::get_or<double>(l, "slope_rate", s.slope_rate);
  s.smooth_var = glue::get_or<double>(l, "smooth_var", s.smooth_var);
  s.smooth_lengthscale = glue::get_or<double>(l, "smooth_lengthscale", s.smooth_lengthscale);
  s.season_var = glue::get_or<double>(l, "season_var", s.season_var);
  s.periodic_lengthscale = glue::get_or<double>(l, "periodic_lengthscale", s.periodic_lengthscale);
  s.season_decay = glue::get_or<double>(l, "season_decay", s.season_decay);
  s.nugget = glue::get_or<double>(l, "nugget", s.nugget);
  return s;
}

Rcpp::List spec_to_r(const ditimpute::StructuralSpec& s) {
  return Rcpp::List::create(
      Rcpp::Named("model") = ditimpute::to_string(s.trend), Rcpp::Named("seasonal") = s.seasonal,
      Rcpp::Named("period") = s.period, Rcpp::Named("harmonics") = s.harmonics,
      Rcpp::Named("level_rate") = s.level_rate, Rcpp::Named("slope_rate") = s.slope_rate,
      Rcpp::Named("smooth_var") = s.smooth_var, Rcpp::Named("smooth_lengthscale") = s.smooth_lengthscale,
      Rcpp::Named("season_var") = s.season_var, Rcpp::Named("periodic_lengthscale") = s.periodic_lengthscale,
      Rcpp::Named("season_decay") = s.season_decay, Rcpp::Named("nugget") = s.nugget);
}

ditimpute::RowMatrix series_from_r(const Eigen::MatrixXd& y) {
  ditimpute::RowMatrix out = y;  // R's NA is a NaN
  return out;
}

}  // namespace

// y: T x d standardised series (NA = missing); candidates: list of spec
// lists; options: list(max_frames, max_evaluations, tol, ridge, threads).
// [[Rcpp::export]]
Rcpp::List cpp_structural_fit(Eigen::MatrixXd y, Rcpp::List candidates, Rcpp::List options) {
  DITIMPUTE_GLUE_BEGIN
  ditimpute::StructuralFitOptions o;
  for (R_xlen_t i = 0; i < candidates.size(); ++i) o.candidates.push_back(spec_from_r(candidates[i]));
  o.max_frames = glue::get_or<int>(options, "max_frames", o.max_frames);
  o.max_evaluations = glue::get_or<int>(options, "max_evaluations", o.max_evaluations);
  o.tol = glue::get_or<double>(options, "tol", o.tol);
  o.ridge = glue::get_or<double>(options, "ridge", o.ridge);
  o.threads = glue::get_or<int>(options, "threads", o.threads);
  const ditimpute::StructuralFit fit = ditimpute::fit_structural(series_from_r(y), o);
  Rcpp::List cands(fit.candidates.size());
  for (std::size_t i = 0; i < fit.candidates.size(); ++i) {
    const ditimpute::StructuralCandidate& c = fit.candidates[i];
    cands[static_cast<R_xlen_t>(i)] = Rcpp::List::create(
        Rcpp::Named("spec") = spec_to_r(c.spec), Rcpp::Named("loglik") = c.loglik, Rcpp::Named("df") = c.df,
        Rcpp::Named("nobs") = static_cast<double>(c.nobs), Rcpp::Named("AIC") = c.aic, Rcpp::Named("BIC") = c.bic,
        Rcpp::Named("evaluations") = c.evaluations, Rcpp::Named("converged") = c.converged,
        Rcpp::Named("Lambda") = Rcpp::wrap(c.Lambda), Rcpp::Named("trend") = Rcpp::wrap(c.trend));
  }
  return Rcpp::List::create(Rcpp::Named("candidates") = cands, Rcpp::Named("chosen") = fit.chosen + 1,
                            Rcpp::Named("fit_start") = fit.fit_start + 1, Rcpp::Named("fit_frames") = fit.fit_frames);
  DITIMPUTE_GLUE_END
}

// The exact conditional of y's missing entries (frame-major) under one
// fitted candidate (a list as cpp_structural_fit returns them).
// [[Rcpp::export]]
Rcpp::List cpp_structural_impute(Eigen::MatrixXd y, Rcpp::List candidate, int n_samples, double seed, int threads) {
  DITIMPUTE_GLUE_BEGIN
  ditimpute::StructuralCandidate c;
  c.spec = spec_from_r(candidate["spec"]);
  c.Lambda = Rcpp::as<Eigen::MatrixXd>(candidate["Lambda"]);
  c.trend = Rcpp::as<Eigen::MatrixXd>(candidate["trend"]);
  const ditimpute::SmoothedConditional sc =
      ditimpute::structural_conditional(series_from_r(y), c, n_samples, glue::seed_from_double(seed), threads);
  return Rcpp::List::create(Rcpp::Named("mean") = Rcpp::wrap(sc.mean), Rcpp::Named("sd") = Rcpp::wrap(sc.sd),
                            Rcpp::Named("samples") = Rcpp::wrap(sc.samples));
  DITIMPUTE_GLUE_END
}
