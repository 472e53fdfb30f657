// Type and error conversion between R and the ditimpute core. Glue only:
// no statistics here. Core exceptions are caught inside each exported function
// and re-thrown as Rcpp exceptions whose message carries the error kind and
// the argument name; R's core_call() turns them into classed conditions. Rcpp's
// generated wrappers catch them before R is told, so no C++ frame is ever
// skipped by a long-jump.
#pragma once

#include <RcppEigen.h>

#include "ditimpute/common.hpp"
#include "ditimpute/gaussian.hpp"
#include "ditimpute/impute.hpp"
#include "ditimpute/patterns.hpp"
#include "ditimpute/sampler.hpp"

#include <string>
#include <vector>

// Every entry lets Ctrl-C stop the core between units of work (a network
// call, a group of cases): the core throws `cancelled`, R gets an interrupt.
#define DITIMPUTE_GLUE_BEGIN try { ditimpute::CancelScope glue_cancel_scope_(glue::interrupt_pending);
#define DITIMPUTE_GLUE_END                                                             \
  }                                                                                    \
  catch (const ditimpute::cancelled& e) {                                              \
    throw Rcpp::exception(glue::encode("interrupt", "", e.what()).c_str(), false);    \
  }                                                                                    \
  catch (const ditimpute::input_error& e) {                                            \
    throw Rcpp::exception(glue::encode("input", e.arg(), e.what()).c_str(), false);   \
  }                                                                                    \
  catch (const ditimpute::numeric_error& e) {                                          \
    throw Rcpp::exception(glue::encode("numeric", "", e.what()).c_str(), false);      \
  }                                                                                    \
  catch (const ditimpute::unavailable_error& e) {                                      \
    throw Rcpp::exception(glue::encode("unavailable", e.feature(), e.what()).c_str(), false); \
  }                                                                                    \
  catch (const Rcpp::exception&) {                                                     \
    throw;                                                                             \
  }                                                                                    \
  catch (const std::exception& e) {                                                    \
    throw Rcpp::exception(glue::encode("internal", "", glue::first_line(e.what())).c_str(), false); \
  }

namespace glue {

// True when the user pressed Ctrl-C (R_CheckUserInterrupt inside
// R_ToplevelExec, so R never long-jumps over C++ frames). Main thread only.
bool interrupt_pending();

// "ditimpute\x1f<kind>\x1f<arg>\x1f<message>", parsed by R's core_call().
inline std::string encode(const std::string& kind, const std::string& arg, const std::string& msg) {
  const char sep = '\x1f';
  return std::string("ditimpute") + sep + kind + sep + arg + sep + msg;
}

// LibTorch errors carry a long C++ backtrace after the first line.
inline std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// R's n x H x d array (column-major) <-> core Batch (sequence-major vec).
ditimpute::Batch batch_from_array(const Rcpp::NumericVector& x, int n, int H, int d);
Rcpp::NumericVector array_from_batch(const ditimpute::Batch& b);
// One H x d R matrix <-> the vec of a sequence (h * d + j).
std::vector<double> vec_from_matrix(const Rcpp::NumericMatrix& x);
// R's H x d logical "missing" matrix (TRUE = missing) -> core Mask.
ditimpute::Mask mask_from_missing(const Rcpp::LogicalMatrix& missing);
Rcpp::LogicalMatrix missing_from_mask(const ditimpute::Mask& mask);
// Seeds arrive from R as doubles (R integers are 32-bit).
std::uint64_t seed_from_double(double seed);
// A process from the matrices of an R ditimpute_gp (validated by the core).
ditimpute::GaussianProcess gp_from_r(const Eigen::MatrixXd& Gamma, const Eigen::MatrixXd& Lambda,
                                     const Eigen::MatrixXd& mean);
// Options travel from R as named lists; a missing or NULL element keeps the
// core's default.
template <typename T>
T get_or(const Rcpp::List& l, const char* name, T fallback) {
  if (!l.containsElementNamed(name)) return fallback;
  SEXP v = l[name];
  if (Rf_isNull(v)) return fallback;
  return Rcpp::as<T>(v);
}
ditimpute::SamplerOptions sampler_from_r(const Rcpp::List& s);
// list(n_samples, level, median, seed, threads); validated by the core.
ditimpute::ImputeOptions impute_options_from_r(const Rcpp::List& o);
// The n x H x d array of an R batch (dim attribute read from x).
ditimpute::Batch batch_from_r(const Rcpp::NumericVector& x);
// point / centre / lower / upper (n x H x d, NA where the core has NaN), radius,
// samples (a list of Z x m_i matrices).
Rcpp::List imputation_to_r(const ditimpute::Imputation& imp);
Rcpp::List matrices_to_r(const std::vector<Eigen::MatrixXd>& m);

// A masking strategy from R's list of generator descriptions.
ditimpute::MaskStrategy strategy_from_r(const Rcpp::List& generators, const std::vector<double>& weights);

}  // namespace glue
