# citation("ditimpute") credits the method's authors (Ye and Chen), not
# anyone else, and the package itself.

test_that("citation() names the paper and its authors", {
  cit <- utils::citation("ditimpute")
  expect_length(cit, 2)
  paper <- cit[[1]]
  expect_identical(paper$title,
                   "Diffusion Transformers for Imputation: Statistical Efficiency and Uncertainty Quantification")
  expect_identical(vapply(unclass(paper$author), function(p) paste(p$given, p$family), ""),
                   c("Zeqi Ye", "Minshuo Chen"))
  expect_match(format(cit[[2]], style = "text"), as.character(utils::packageVersion("ditimpute")), fixed = TRUE)
  expect_match(paste(utils::toBibtex(cit), collapse = "\n"), "@Misc{ye-chen-dit-imputation", fixed = TRUE)
  desc <- utils::packageDescription("ditimpute")$Description
  expect_match(desc, "Zeqi Ye and Minshuo Chen", fixed = TRUE)
  expect_no_match(desc, "Zhang")
})
