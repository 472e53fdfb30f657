# Compares the forms of a bench/series_long_choices.R CSV with the `after`
# column of an earlier comparison (bench/results/series_long_choices.md).
# Usage: Rscript bench/series_long_choices_compare.R new.csv earlier.md out.md "what changed"
args <- commandArgs(TRUE)
a <- read.csv(args[1])
l <- readLines(args[2]); l <- l[grepl("^\\| [A-Za-z].* \\| [0-9]+ \\|", l)]
b <- do.call(rbind, lapply(strsplit(l, "\\|"), function(p) { p <- trimws(p[-1]); data.frame(series = p[1], rep = as.integer(p[2]), before = p[4]) }))
m <- merge(b, a, by = c("series", "rep")); names(m)[names(m) == "model"] <- "after"
m$same <- ifelse(m$before == m$after, "yes", "no")
m <- m[order(m$series, m$rep), ]
md <- c(sprintf("# Forms chosen on bench/series_long.R's gaps before and after %s", args[4]), "",
  sprintf("`Rscript bench/series_long_choices.R %s %d <out.csv>` on %s, then `bench/series_long_choices_compare.R` against the `after` column of %s.", paste(unique(a$series), collapse = ","), max(a$rep), format(Sys.Date()), args[2]), "",
  "| series | rep | before | after | same |", "|---|---|---|---|---|",
  sprintf("| %s | %d | %s | %s | %s |", m$series, m$rep, m$before, m$after, m$same), "",
  "## Summary", "",
  vapply(split(m, m$series), function(d) sprintf("- %s: the same form in %d of %d", d$series[1], sum(d$same == "yes"), nrow(d)), ""))
writeLines(md, args[3])
cat(tail(md, 8), sep = "\n")
