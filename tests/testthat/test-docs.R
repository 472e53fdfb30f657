# The installed help pages: roxygen's Markdown must have been turned into Rd
# (no raw `[fn()]` links or `**bold**` left in the rendered text), the pages
# must link to one another, and tools::checkRd must find nothing.

raw_markdown <- function(rd) {
  txt <- utils::capture.output(
    tools::Rd2txt(rd, out = "", options = list(underline_titles = FALSE))
  )
  link <- grepl("\\[[A-Za-z_.][A-Za-z0-9_.:]*\\(\\)\\]", txt)
  bold <- grepl("**", txt, fixed = TRUE)
  txt[link | bold]
}

rd_links <- function(rd) {
  n <- 0L
  walk <- function(x) {
    if (identical(attr(x, "Rd_tag"), "\\link")) n <<- n + 1L
    if (is.list(x)) for (el in x) walk(el)
  }
  walk(rd)
  n
}

test_that("the raw-Markdown detector flags what it is meant to flag", {
  bad <- tools::parse_Rd(textConnection(c(
    "\\name{x}\\alias{x}\\title{x}",
    "\\description{See [impute()] and **this**.}"
  )))
  expect_length(raw_markdown(bad), 1)
  good <- tools::parse_Rd(textConnection(c(
    "\\name{x}\\alias{x}\\title{x}",
    "\\description{See \\code{\\link{impute}} and \\strong{this}.}"
  )))
  expect_length(raw_markdown(good), 0)
  expect_identical(rd_links(good), 1L)
})

test_that("no installed help page shows raw Markdown, and checkRd is clean", {
  db <- tools::Rd_db("ditimpute")
  expect_gt(length(db), 40)
  raw <- unlist(lapply(names(db), function(nm) {
    hits <- raw_markdown(db[[nm]])
    if (length(hits)) paste0(nm, ": ", trimws(hits))
  }))
  expect_identical(raw, NULL)
  problems <- unlist(lapply(names(db), function(nm) {
    msg <- tools::checkRd(db[[nm]])
    if (length(msg)) paste0(nm, ": ", msg)
  }))
  expect_identical(problems, NULL)
})

test_that("help pages link to one another", {
  db <- tools::Rd_db("ditimpute")
  links <- vapply(db, rd_links, integer(1))
  # impute_series() and calibrate() name several other functions each.
  expect_gt(links[["impute_series.Rd"]], 3)
  expect_gt(links[["calibrate.Rd"]], 3)
  expect_gt(mean(links > 0), 0.5)
})
