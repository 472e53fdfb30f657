# One build's imputation of ETTh1's 7 variables (3,000 h, 10% in heavy-tailed
# gaps: bench/hide_gaps.R, the case of bench/series_time_split.R), its CPU
# time and its results saved, to compare two builds run one after the other:
#   R_LIBS=<build A> Rscript bench/series_build_compare.R a.rds
#   R_LIBS=<build B> Rscript bench/series_build_compare.R b.rds a.rds
# With a second file, prints the largest difference of the point imputations
# and interval ends from that file's, relative to its widest interval.
suppressPackageStartupMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
data_dir <- Sys.getenv("DITIMPUTE_DATA", file.path("..", "shared", "data"))
ett <- utils::read.csv(gzfile(file.path(data_dir, "ett", "ETTh1.csv.gz")))
source(file.path("bench", "hide_gaps.R"))
x <- hide_gaps(as.matrix(ett[1:3000, c("HUFL", "HULL", "MUFL", "MULL", "LUFL", "LULL", "OT")]), 0.1, 4)
t0 <- proc.time()
imp <- suppressWarnings(impute_series(x, period = 24, seed = 1, threads = 1))
cat(sprintf("%s: CPU %.1f s\n", find.package("ditimpute"), sum((proc.time() - t0)[c("user.self", "sys.self")])))
res <- list(point = imp$point, lower = imp$lower, upper = imp$upper)
saveRDS(res, args[1])
if (length(args) >= 2) {
  ref <- readRDS(args[2])
  w <- max(ref$upper - ref$lower, na.rm = TRUE)
  for (k in names(res)) cat(sprintf("%s: largest difference %.3g of the widest interval\n", k,
                                    max(abs(res[[k]] - ref[[k]]), na.rm = TRUE) / w))
}
