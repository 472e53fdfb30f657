#include "glue.h"

#include <Rinternals.h>

#include <cmath>

namespace glue {

namespace {
void check_interrupt_fn(void*) { R_CheckUserInterrupt(); }
}  // namespace

bool interrupt_pending() { return R_ToplevelExec(check_interrupt_fn, nullptr) == FALSE; }

ditimpute::Batch batch_from_array(const Rcpp::NumericVector& x, int n, int H, int d) {
  ditimpute::Batch b(n, H, d);
  for (int i = 0; i < n; ++i)
    for (int h = 0; h < H; ++h)
      for (int j = 0; j < d; ++j)
        b.at(i, h, j) = x[i + static_cast<R_xlen_t>(n) * (h + static_cast<R_xlen_t>(H) * j)];
  return b;
}

Rcpp::NumericVector array_from_batch(const ditimpute::Batch& b) {
  Rcpp::NumericVector out(static_cast<R_xlen_t>(b.n) * b.H * b.d);
  for (int i = 0; i < b.n; ++i)
    for (int h = 0; h < b.H; ++h)
      for (int j = 0; j < b.d; ++j)
        out[i + static_cast<R_xlen_t>(b.n) * (h + static_cast<R_xlen_t>(b.H) * j)] =
            std::isnan(b.at(i, h, j)) ? NA_REAL : b.at(i, h, j);  // R marks missing values NA
  out.attr("dim") = Rcpp::IntegerVector::create(b.n, b.H, b.d);
  return out;
}

std::vector<double> vec_from_matrix(const Rcpp::NumericMatrix& x) {
  const int H = x.nrow(), d = x.ncol();
  std::vector<double> v(static_cast<std::size_t>(H) * d);
  for (int h = 0; h < H; ++h)
    for (int j = 0; j < d; ++j) v[static_cast<std::size_t>(h) * d + j] = x(h, j);
  return v;
}

ditimpute::Mask mask_from_missing(const Rcpp::LogicalMatrix& missing) {
  ditimpute::Mask m(missing.nrow(), missing.ncol(), true);
  for (int h = 0; h < m.H; ++h)
    for (int j = 0; j < m.d; ++j)
      m.observed[static_cast<std::size_t>(h) * m.d + j] = missing(h, j) ? 0 : 1;
  return m;
}

Rcpp::LogicalMatrix missing_from_mask(const ditimpute::Mask& mask) {
  Rcpp::LogicalMatrix out(mask.H, mask.d);
  for (int h = 0; h < mask.H; ++h)
    for (int j = 0; j < mask.d; ++j) out(h, j) = !mask.is_observed(h, j);
  return out;
}

std::uint64_t seed_from_double(double seed) {
  if (!std::isfinite(seed) || seed < 0) throw ditimpute::input_error("seed", "seed must be a non-negative number.");
  return static_cast<std::uint64_t>(seed);
}

ditimpute::GaussianProcess gp_from_r(const Eigen::MatrixXd& Gamma, const Eigen::MatrixXd& Lambda,
                                     const Eigen::MatrixXd& mean) {
  return ditimpute::GaussianProcess(Gamma, Lambda, ditimpute::RowMatrix(mean));
}

ditimpute::SamplerOptions sampler_from_r(const Rcpp::List& s) {
  ditimpute::SamplerOptions o;
  if (s.containsElementNamed("method") && !Rf_isNull(s["method"]))
    o.method = ditimpute::sampler_method_from_string(Rcpp::as<std::string>(s["method"]));
  o.steps = ditimpute::default_steps(o.method);  // a named method without steps: its own default
  if (s.containsElementNamed("grid") && !Rf_isNull(s["grid"]))
    o.grid = ditimpute::time_grid_from_string(Rcpp::as<std::string>(s["grid"]));
  o.steps = get_or<int>(s, "steps", o.steps);
  o.t0 = get_or<double>(s, "t0", o.t0);
  o.T = get_or<double>(s, "T", o.T);
  o.gp_control = get_or<bool>(s, "control_variate", o.gp_control);
  o.validate();
  return o;
}

ditimpute::ImputeOptions impute_options_from_r(const Rcpp::List& l) {
  ditimpute::ImputeOptions o;
  o.n_samples = get_or<int>(l, "n_samples", o.n_samples);
  o.level = get_or<double>(l, "level", o.level);
  o.median = get_or<bool>(l, "median", o.median);
  o.seed = seed_from_double(get_or<double>(l, "seed", 1.0));
  o.threads = get_or<int>(l, "threads", o.threads);
  o.region = get_or<std::string>(l, "region", o.region);
  o.validate();
  return o;
}

ditimpute::Batch batch_from_r(const Rcpp::NumericVector& x) {
  const Rcpp::IntegerVector dim = x.attr("dim");
  if (dim.size() != 3) throw ditimpute::input_error("x", "x must be an n x H x d array.");
  return batch_from_array(x, dim[0], dim[1], dim[2]);
}

Rcpp::List matrices_to_r(const std::vector<Eigen::MatrixXd>& m) {
  Rcpp::List out(m.size());
  for (std::size_t i = 0; i < m.size(); ++i) out[i] = Rcpp::wrap(m[i]);
  return out;
}

Rcpp::List imputation_to_r(const ditimpute::Imputation& imp) {
  return Rcpp::List::create(Rcpp::Named("point") = array_from_batch(imp.point),
                            Rcpp::Named("centre") = array_from_batch(imp.centre),
                            Rcpp::Named("lower") = array_from_batch(imp.lower),
                            Rcpp::Named("upper") = array_from_batch(imp.upper),
                            Rcpp::Named("radius") = Rcpp::wrap(imp.radius),
                            Rcpp::Named("samples") = matrices_to_r(imp.samples));
}

}  // namespace glue

// [[Rcpp::export]]
void cpp_set_memory_limit(double bytes) {
  DITIMPUTE_GLUE_BEGIN
  ditimpute::set_memory_limit(bytes);
  DITIMPUTE_GLUE_END
}

// [[Rcpp::export]]
void cpp_check_memory(double bytes, std::string arg, std::string what) {
  DITIMPUTE_GLUE_BEGIN
  ditimpute::check_memory(bytes, arg, what);
  DITIMPUTE_GLUE_END
}

// The sampler settings an imputation with the options `s` (sampler_options()
// in R) runs with, defaults resolved: what apply_calibration() compares.
// [[Rcpp::export]]
Rcpp::List cpp_sampler_settings(Rcpp::List s) {
  DITIMPUTE_GLUE_BEGIN
  const ditimpute::SamplerOptions o = glue::sampler_from_r(s);
  return Rcpp::List::create(Rcpp::Named("method") = ditimpute::to_string(o.method), Rcpp::Named("steps") = o.steps,
                            Rcpp::Named("grid") = ditimpute::to_string(ditimpute::resolved_grid(o)),
                            Rcpp::Named("t0") = o.t0, Rcpp::Named("T") = o.T,
                            Rcpp::Named("control_variate") = o.gp_control);
  DITIMPUTE_GLUE_END
}
