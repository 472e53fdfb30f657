library(testthat)
library(ditimpute)

test_check("ditimpute")
