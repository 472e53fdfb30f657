# A prototype not adopted (bench/results/series_ends_share_prototype.md):
# bench/series_ends.R with a series' own end stretches hidden on top of the
# round's share (series_calibration_mask() counts only the other stretches
# towards it), put into the package's namespace before the bench runs.
# Usage: Rscript bench/series_ends_share_prototype.R TAG [holes]
#   Rscript bench/series_ends_share_prototype.R --paired TAG_A TAG_B   (per end
#   gap: the GP's mean absolute error, the log of B / A on the gaps whose
#   values changed, its mean and SE, by kind; from bench/series_ends.R's files)
args <- commandArgs(trailingOnly = TRUE)
if (length(args) == 3 && args[1] == "--paired") {
  read <- function(tg) utils::read.csv(sprintf("bench/results/series_ends_%s.csv.gz", tg))
  a <- read(args[2])
  b <- read(args[3])
  stopifnot(nrow(a) == nrow(b), identical(a$truth, b$truth))
  key <- paste(a$series, a$end, a$share)
  ea <- tapply(abs(a$gp - a$truth), key, mean)
  eb <- tapply(abs(b$gp - b$truth), key, mean)
  kind <- tapply(a$kind, key, `[`, 1)
  ch <- abs(ea - eb) > 1e-12
  r <- log(eb[ch] / ea[ch])
  cat(sprintf("%s -> %s: %d of %d gaps changed; mean log ratio %.3f (SE %.3f), better %d, worse %d; real %.3f (%d), simulated %.3f (%d)\n",
              args[2], args[3], sum(ch), length(ch), mean(r), stats::sd(r) / sqrt(sum(ch)), sum(r < 0), sum(r > 0),
              mean(r[kind[ch] == "real"]), sum(kind[ch] == "real"), mean(r[kind[ch] == "simulated"]), sum(kind[ch] == "simulated")))
  quit(save = "no")
}
suppressMessages(library(ditimpute))
src <- paste(deparse(get("series_calibration_mask", asNamespace("ditimpute"))), collapse = "\n")
stopifnot(grepl("hidden <- hidden + len", src, fixed = TRUE))
src <- sub("hidden <- hidden + len", "if (is.null(at_end)) hidden <- hidden + len", src, fixed = TRUE)
f <- eval(parse(text = src)); environment(f) <- asNamespace("ditimpute")
utils::assignInNamespace("series_calibration_mask", f, "ditimpute")
source("bench/series_ends.R")
