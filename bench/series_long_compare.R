# Compares the `gp` rows of a subset run of bench/series_long.R (table "Every
# method") with those of bench/results/series_long.md, cell by cell (MAE, RMSE,
# 90% coverage by series and gap-length group, as printed): a check that a
# code change left the published figures as they were.
#
# Usage: Rscript bench/series_long_compare.R bench/results/series_long_<subset>.md [method]
args <- commandArgs(trailingOnly = TRUE)
if (!length(args)) stop("usage: Rscript bench/series_long_compare.R RESULT.md [method]")
method <- if (length(args) >= 2) args[2] else "gp"
every_method <- function(f) {
  l <- readLines(f)
  t <- l[(grep("^## Every method", l) + 2):length(l)]
  t <- t[grepl("^\\|", t)]
  utils::read.table(text = gsub("^\\||\\|$", "", t[-2]), sep = "|", header = TRUE, strip.white = TRUE,
                    stringsAsFactors = FALSE)
}
a <- every_method("bench/results/series_long.md"); b <- every_method(args[1])
b <- b[b$method == method, ]
a <- a[a$method == method & a$series %in% b$series, ]
m <- merge(a, b, by = c("series", "group"), suffixes = c("_published", "_rerun"))
print(m[, c("series", "group", "mae_published", "mae_rerun", "rmse_published", "rmse_rerun",
            "coverage90_published", "coverage90_rerun")], row.names = FALSE)
same <- with(m, mae_published == mae_rerun & rmse_published == rmse_rerun &
                 coverage90_published == coverage90_rerun)
cat(sprintf("%d of %d rows identical (%d rows in the re-run)\n", sum(same), nrow(m), nrow(b)))
