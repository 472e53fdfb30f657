# Expects a classed input error that names `arg`.
expect_input_error <- function(expr, arg) {
  cnd <- expect_error(expr, class = "ditimpute_error_input")
  expect_identical(cnd$arg, arg)
  invisible(cnd)
}

# What print() shows, on one line with single spaces: prints wrap to the
# console's width, so a phrase can span a line break.
printed <- function(x) gsub("\\s+", " ", paste(utils::capture.output(print(x)), collapse = " "))
