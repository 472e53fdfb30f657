# A data frame as the lines of a Markdown table, numbers to 3 significant
# digits (shared by bench/dit_learning.R and bench/series_fit_speed.R).
md_table_signif3 <- function(df) {
  num <- vapply(df, is.numeric, TRUE)
  df[num] <- lapply(df[num], function(v) signif(v, 3))
  c(paste("|", paste(names(df), collapse = " | "), "|"), paste0(paste(rep("|---", ncol(df)), collapse = ""), "|"),
    apply(df, 1, function(r) paste("|", paste(trimws(r), collapse = " | "), "|")))
}
