#include "glue.h"

#include <cmath>

namespace glue {

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
        out[i + static_cast<R_xlen_t>(b.n) * (h + static_cast<R_xlen_t>(b.H) * j)] = b.at(i, h, j);
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

}  // namespace glue
