#' ditimpute: imputation of multivariate time series with honest uncertainty
#'
#' Sequences are `H x d` matrices (rows are time frames, columns variables),
#' modelled as Gaussian processes with covariance `Gamma %x% Lambda`. The
#' package computes exact conditional laws of missing values ([gp_conditional()]),
#' how hard a missing pattern is ([kappa_cond()]), exact scores
#' ([score_exact()], [score_nested_gd()]), missing patterns and masking
#' strategies ([paper_patterns()], [mask_strategy()]).
#'
#' The method is that of Zeqi Ye and Minshuo Chen, "Diffusion Transformers
#' for Imputation: Statistical Efficiency and Uncertainty Quantification";
#' `citation("ditimpute")` gives the reference.
#'
#' Errors raised for bad input have class `ditimpute_error_input` (and
#' `ditimpute_error`) and carry the name of the offending argument in `arg`.
#'
#' The diffusion transformer needs LibTorch, which the package looks for when
#' it is installed; without it every Gaussian-process function works and the
#' DiT functions raise an error of class `ditimpute_error_no_torch` that says
#' how to get it ([torch_available()], [torch_backend()]).
#'
#' @keywords internal
#' @useDynLib ditimpute, .registration = TRUE
#' @importFrom Rcpp sourceCpp
#' @importFrom stats vcov confint nobs predict logLik
#' @importFrom rlang .data
"_PACKAGE"
