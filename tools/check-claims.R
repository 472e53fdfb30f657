#!/usr/bin/env Rscript
# Every number claimed in README.md and the vignettes comes from a result file
# (bench/results/ or inst/extdata/, each written by a named script). This
# checker reads tools/claims.tsv, one claim a line, tab-separated:
#
#   document   the file that makes the claim (README.md, vignettes/x.Rmd)
#   quote      the claim's words with its figure, exactly as the document has
#              them (runs of white space, line breaks included, count as one space)
#   source     the result file under bench/results/ or inst/extdata/ (.md, .csv,
#              .txt read as text; .rds read with readRDS() and printed in full)
#   pattern    a Perl regular expression that must match the source (white
#              space normalised the same way): the figure as the source has it
#
# and fails (exit status 1, one message per claim) when a quote is not in its
# document (the figure was edited, or the sentence changed without the table)
# or a pattern is not in its source (the result file no longer says it).
# Lines starting with # and blank lines are comments.
#
#   Rscript tools/check-claims.R            # the repository this file is in
#   Rscript tools/check-claims.R ROOT       # another copy (tools/test-check-claims.sh)
args <- commandArgs(trailingOnly = TRUE)
here <- function() {
  f <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  if (length(f)) dirname(dirname(normalizePath(f[1]))) else getwd()
}
root <- if (length(args)) normalizePath(args[1]) else here()
table_file <- file.path(root, "tools", "claims.tsv")
if (!file.exists(table_file)) stop("no claims table at ", table_file)

squash <- function(x) gsub("[[:space:]]+", " ", paste(x, collapse = " "))
cache <- new.env()
read_text <- function(path) {
  key <- path
  if (!is.null(cache[[key]])) return(cache[[key]])
  full <- file.path(root, path)
  if (!file.exists(full)) return(NULL)
  txt <- if (grepl("\\.rds$", path)) {
    obj <- readRDS(full)
    old <- options(width = 10000, max.print = 1e7)
    on.exit(options(old))
    squash(utils::capture.output(print(obj)))
  } else {
    squash(readLines(full, warn = FALSE, encoding = "UTF-8"))
  }
  cache[[key]] <- txt
  txt
}

lines <- readLines(table_file, warn = FALSE, encoding = "UTF-8")
rows <- which(nzchar(trimws(lines)) & !startsWith(lines, "#"))
header <- rows[1]
if (!identical(strsplit(lines[header], "\t")[[1]], c("document", "quote", "source", "pattern"))) {
  stop("tools/claims.tsv must start with the header: document, quote, source, pattern (tab-separated)")
}
problems <- character()
n <- 0
for (i in rows[-1]) {
  f <- strsplit(lines[i], "\t", fixed = TRUE)[[1]]
  where <- sprintf("claims.tsv:%d", i)
  if (length(f) != 4 || any(!nzchar(f))) {
    problems <- c(problems, sprintf("%s: needs 4 non-empty tab-separated fields, has %d", where, length(f)))
    next
  }
  n <- n + 1
  doc <- read_text(f[1])
  src_ok <- grepl("^(bench/results|inst/extdata)/", f[3])
  src <- if (src_ok) read_text(f[3]) else NULL
  if (is.null(doc)) {
    problems <- c(problems, sprintf("%s: document %s does not exist", where, f[1]))
  } else if (!grepl(squash(f[2]), doc, fixed = TRUE)) {
    problems <- c(problems, sprintf("%s: %s no longer says \"%s\" (figure edited, or sentence changed without the table)",
                                    where, f[1], f[2]))
  }
  if (!src_ok) {
    problems <- c(problems, sprintf("%s: source %s is not under bench/results/ or inst/extdata/", where, f[3]))
  } else if (is.null(src)) {
    problems <- c(problems, sprintf("%s: source %s does not exist (claim \"%s\")", where, f[3], f[2]))
  } else if (!grepl(f[4], src, perl = TRUE)) {
    problems <- c(problems, sprintf("%s: %s's claim \"%s\" is not in %s (pattern /%s/)", where, f[1], f[2], f[3],
                                    f[4]))
  }
}
if (length(problems)) {
  cat("check-claims: ", length(problems), " problem(s) in ", n, " claims\n", sep = "")
  cat(paste0("  ", problems), sep = "\n")
  quit(status = 1)
}
cat("check-claims: all", n, "claims found in their sources\n")
