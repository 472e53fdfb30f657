// Glue for whole-series imputation (cpp/include/ditimpute/structural.hpp):
// type conversion only.
#include "glue.h"

#include "ditimpute/structural.hpp"

// ---------------------------------------------------------- structural --

namespace {

ditimpute::StructuralSpec::Trend trend_from_r(const std::string& s) {
  if (s == "stationary") return ditimpute::StructuralSpec::Trend::none;
  if (s == "level") return ditimpute::StructuralSpec::Trend::level;
  if (s == "trend") return ditimpute::StructuralSpec::Trend::trend;
  throw ditimpute::input_error("model", "unknown model \"" + s + "\" (stationary, level or trend).");
}

// list(model, seasonal, period, period_min, period_max, harmonics, level_rate, slope_rate, smooth_var,
// smooth_lengthscale, season_var, periodic_lengthscale, season_decay, nugget):
// missing fields keep the core's defaults.
ditimpute::StructuralSpec spec_from_r(const Rcpp::List& l) {
  ditimpute::StructuralSpec s;
  s.trend = trend_from_r(glue::get_or<std::string>(l, "model", "level"));
  s.seasonal = glue::get_or<bool>(l, "seasonal", s.seasonal);
  s.period = glue::get_or<double>(l, "period", s.period);
  s.period_min = glue::get_or<double>(l, "period_min", s.period_min);
  s.period_max = glue::get_or<double>(l, "period_max", s.period_max);
  s.harmonics = glue::get_or<int>(l, "harmonics", s.harmonics);
  s.level_rate = glue::get_or<double>(l, "level_rate", s.level_rate);
  s.slope_rate = glue::get_or<double>(l, "slope_rate", s.slope_rate);
  s.smooth_var = glue::get_or<double>(l, "smooth_var", s.smooth_var);
  s.smooth_lengthscale = glue::get_or<double>(l, "smooth_lengthscale", s.smooth_lengthscale);
  s.season_var = glue::get_or<double>(l, "season_var", s.season_var);
  s.periodic_lengthscale = glue::get_or<double>(l, "periodic_lengthscale", s.periodic_lengthscale);
  s.season_decay = glue::get_or<double>(l, "season_decay", s.season_decay);
  s.season_envelope = glue::get_or<int>(l, "season_envelope", s.season_envelope);
  s.nugget = glue::get_or<double>(l, "nugget", s.nugget);
  return s;
}

Rcpp::List spec_to_r(const ditimpute::StructuralSpec& s) {
  return Rcpp::List::create(
      Rcpp::Named("model") = ditimpute::to_string(s.trend), Rcpp::Named("seasonal") = s.seasonal,
      Rcpp::Named("period") = s.period, Rcpp::Named("period_min") = s.period_min,
      Rcpp::Named("period_max") = s.period_max, Rcpp::Named("harmonics") = s.harmonics,
      Rcpp::Named("level_rate") = s.level_rate, Rcpp::Named("slope_rate") = s.slope_rate,
      Rcpp::Named("smooth_var") = s.smooth_var, Rcpp::Named("smooth_lengthscale") = s.smooth_lengthscale,
      Rcpp::Named("season_var") = s.season_var, Rcpp::Named("periodic_lengthscale") = s.periodic_lengthscale,
      Rcpp::Named("season_decay") = s.season_decay, Rcpp::Named("season_envelope") = s.season_envelope,
      Rcpp::Named("nugget") = s.nugget);
}

ditimpute::RowMatrix series_from_r(const Eigen::MatrixXd& y) {
  ditimpute::RowMatrix out = y;  // R's NA is a NaN
  return out;
}

// A fitted candidate as cpp_structural_fit returns it: list(spec, Lambda, trend, ...).
ditimpute::StructuralCandidate candidate_from_r(const Rcpp::List& candidate) {
  ditimpute::StructuralCandidate c;
  c.spec = spec_from_r(candidate["spec"]);
  c.Lambda = Rcpp::as<Eigen::MatrixXd>(candidate["Lambda"]);
  c.trend = Rcpp::as<Eigen::MatrixXd>(candidate["trend"]);
  return c;
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
// fitted candidate (a list as cpp_structural_fit returns them); options:
// list(n_samples, seed, threads).
// [[Rcpp::export]]
Rcpp::List cpp_structural_impute(Eigen::MatrixXd y, Rcpp::List candidate, Rcpp::List options) {
  DITIMPUTE_GLUE_BEGIN
  const int n_samples = glue::get_or<int>(options, "n_samples", 0);
  const double seed = glue::get_or<double>(options, "seed", 1.0);
  const int threads = glue::get_or<int>(options, "threads", 0);
  const ditimpute::SmoothedConditional sc = ditimpute::structural_conditional(
      series_from_r(y), candidate_from_r(candidate), n_samples, glue::seed_from_double(seed), threads);
  return Rcpp::List::create(Rcpp::Named("mean") = Rcpp::wrap(sc.mean), Rcpp::Named("sd") = Rcpp::wrap(sc.sd),
                            Rcpp::Named("samples") = Rcpp::wrap(sc.samples));
  DITIMPUTE_GLUE_END
}

// The paths of proper multiple imputation (structural.hpp's
// structural_paths()): one draw under each candidate of the list, path k from
// seeds[k]; options: list(threads). A list of list(mean, sd, samples), as
// cpp_structural_impute() gives for one candidate and n_samples = 1.
// [[Rcpp::export]]
Rcpp::List cpp_structural_paths(Eigen::MatrixXd y, Rcpp::List candidates, Rcpp::NumericVector seeds,
                                Rcpp::List options) {
  DITIMPUTE_GLUE_BEGIN
  const int threads = glue::get_or<int>(options, "threads", 0);
  std::vector<ditimpute::StructuralCandidate> cands;
  for (R_xlen_t i = 0; i < candidates.size(); ++i) cands.push_back(candidate_from_r(candidates[i]));
  std::vector<std::uint64_t> s;
  for (R_xlen_t i = 0; i < seeds.size(); ++i) s.push_back(glue::seed_from_double(seeds[i]));
  const std::vector<ditimpute::SmoothedConditional> res = ditimpute::structural_paths(series_from_r(y), cands, s, threads);
  Rcpp::List out(static_cast<R_xlen_t>(res.size()));
  for (std::size_t i = 0; i < res.size(); ++i)
    out[static_cast<R_xlen_t>(i)] =
        Rcpp::List::create(Rcpp::Named("mean") = Rcpp::wrap(res[i].mean), Rcpp::Named("sd") = Rcpp::wrap(res[i].sd),
                           Rcpp::Named("samples") = Rcpp::wrap(res[i].samples));
  return out;
  DITIMPUTE_GLUE_END
}

// Each variable's standardised one-step prediction errors of y (T x d,
// standardised, NA = missing) under a fitted candidate: a T x d matrix, NaN
// where none counts (structural.hpp).
// [[Rcpp::export]]
Eigen::MatrixXd cpp_structural_innovations(Eigen::MatrixXd y, Rcpp::List candidate) {
  DITIMPUTE_GLUE_BEGIN
  return ditimpute::structural_innovations(series_from_r(y), candidate_from_r(candidate));
  DITIMPUTE_GLUE_END
}

// The conditional means and sds of the missing entries of each series in ys
// (a list of T x d standardised series) under one fitted candidate, the
// series in parallel; options: list(threads, fixed_line) (fixed_line: a
// stationary form's stored line taken as known, see structural.hpp). A list
// of list(mean, sd).
// [[Rcpp::export]]
Rcpp::List cpp_structural_moments(Rcpp::List ys, Rcpp::List candidate, Rcpp::List options) {
  DITIMPUTE_GLUE_BEGIN
  const int threads = glue::get_or<int>(options, "threads", 0);
  const bool fixed_line = glue::get_or<bool>(options, "fixed_line", false);
  std::vector<ditimpute::RowMatrix> series;
  for (R_xlen_t i = 0; i < ys.size(); ++i) series.push_back(series_from_r(Rcpp::as<Eigen::MatrixXd>(ys[i])));
  const std::vector<ditimpute::SmoothedConditional> res =
      ditimpute::structural_moments(series, candidate_from_r(candidate), threads, fixed_line);
  Rcpp::List out(static_cast<R_xlen_t>(res.size()));
  for (std::size_t i = 0; i < res.size(); ++i)
    out[static_cast<R_xlen_t>(i)] =
        Rcpp::List::create(Rcpp::Named("mean") = Rcpp::wrap(res[i].mean), Rcpp::Named("sd") = Rcpp::wrap(res[i].sd));
  return out;
  DITIMPUTE_GLUE_END
}
