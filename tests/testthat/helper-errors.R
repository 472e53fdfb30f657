# Expects a classed input error that names `arg`.
expect_input_error <- function(expr, arg) {
  cnd <- expect_error(expr, class = "ditimpute_error_input")
  expect_identical(cnd$arg, arg)
  invisible(cnd)
}
