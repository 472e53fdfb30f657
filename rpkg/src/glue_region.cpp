// Glue for the uncertainty summaries of Algorithm 1 (cpp/include/ditimpute/region.hpp).
#include "glue.h"

#include "ditimpute/region.hpp"

// L2-ball region and per-entry intervals of Z samples (Z x m).
// [[Rcpp::export]]
Rcpp::List cpp_region(Eigen::MatrixXd samples, double level, bool median) {
  DITIMPUTE_GLUE_BEGIN
  const ditimpute::L2Region r = ditimpute::l2_region(samples, level, median);
  const Eigen::MatrixXd iv = ditimpute::quantile_intervals(samples, level);
  return Rcpp::List::create(Rcpp::Named("centre") = r.centre, Rcpp::Named("radius") = r.radius,
                            Rcpp::Named("lower") = Eigen::VectorXd(iv.col(0)),
                            Rcpp::Named("upper") = Eigen::VectorXd(iv.col(1)));
  DITIMPUTE_GLUE_END
}

// Share of the rows of `draws` (n x m) inside the ball (centre, radius).
// [[Rcpp::export]]
double cpp_region_coverage(Eigen::VectorXd centre, double radius, Eigen::MatrixXd draws) {
  DITIMPUTE_GLUE_BEGIN
  ditimpute::L2Region r;
  r.centre = centre;
  r.radius = radius;
  return ditimpute::coverage(r, draws);
  DITIMPUTE_GLUE_END
}
