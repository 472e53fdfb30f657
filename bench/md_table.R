# Data frames as the lines of a Markdown table. md_table_lines(): the cells
# as they are (format them first); md_table_signif3(): numbers to 3
# significant digits. Shared by the benches that source this file.
md_table_lines <- function(df) {
  c(paste("|", paste(names(df), collapse = " | "), "|"), paste0(paste(rep("|---", ncol(df)), collapse = ""), "|"),
    apply(df, 1, function(r) paste("|", paste(trimws(r), collapse = " | "), "|")))
}

md_table_signif3 <- function(df) {
  num <- vapply(df, is.numeric, TRUE)
  df[num] <- lapply(df[num], function(v) signif(v, 3))
  md_table_lines(df)
}
