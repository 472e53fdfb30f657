# autoplot() methods for ggplot2 users: the generic is ggplot2's, so the
# methods are registered for it when ggplot2 is loaded (S3method(ggplot2::autoplot, ...)
# in NAMESPACE, R's delayed registration). They return the ggplot that plot()
# draws, so both share one colour scheme and legend (plot-style.R).

#' ggplot2's autoplot() for imputations
#'
#' `ggplot2::autoplot()` of an imputation returns the same ggplot object as
#' its `plot()` method (observed grey, imputed blue with the interval band or
#' line range, truth orange crosses; one legend), which can be extended with
#' further layers, scales or themes as any ggplot.
#'
#' @param object An imputation from [impute()] or [impute_series()].
#' @param ... Passed to the `plot()` method: `sequence` and `variables` for
#'   [plot.ditimpute_imputation()], `variables`, `from` and `to` for
#'   [plot.ditimpute_series_imputation()]; another name is an input error.
#' @return A ggplot object.
#' @seealso [plot.ditimpute_imputation()], [plot.ditimpute_series_imputation()]
#' @examples
#' y <- datasets::Nile
#' y[c(20:30, 60)] <- NA
#' imp <- impute_series(y, n_samples = 30, seed = 1)
#' p <- ggplot2::autoplot(imp)
#' p + ggplot2::labs(caption = "Nile, two gaps")
#' @rawNamespace S3method(ggplot2::autoplot, ditimpute_imputation)
autoplot.ditimpute_imputation <- function(object, ...) {
  ggplot_imputation(object, ..., .fn = "autoplot()")  # errors name autoplot(), not plot() (a review)
}

#' @rdname autoplot.ditimpute_imputation
#' @rawNamespace S3method(ggplot2::autoplot, ditimpute_series_imputation)
autoplot.ditimpute_series_imputation <- function(object, ...) {
  ggplot_series_imputation(object, ..., .fn = "autoplot()")
}
