# A prototype not adopted (bench/results/series_ends_share_prototype.md):
# bench/series_ends.R with a series' own end stretches hidden on top of the
# round's share (series_calibration_mask() counts only the other stretches
# towards it), put into the package's namespace before the bench runs.
# Usage: Rscript bench/series_ends_share_prototype.R TAG [holes]
#   (bench/series_ends.R --paired TAG_A TAG_B compares two runs gap by gap)
suppressMessages(library(ditimpute))
src <- paste(deparse(get("series_calibration_mask", asNamespace("ditimpute"))), collapse = "\n")
stopifnot(grepl("hidden <- hidden + len", src, fixed = TRUE))
src <- sub("hidden <- hidden + len", "if (is.null(at_end)) hidden <- hidden + len", src, fixed = TRUE)
f <- eval(parse(text = src)); environment(f) <- asNamespace("ditimpute")
utils::assignInNamespace("series_calibration_mask", f, "ditimpute")
source("bench/series_ends.R")
