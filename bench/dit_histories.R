# Loss histories of saved DiTs side by side: the training and validation loss
# that dit_fit() recorded every val_every steps, at up to 14 evenly spread
# records of each model, and each model's best validation record.
#
#   Rscript bench/dit_histories.R OUT.md TITLE MODEL.dit [MODEL.dit ...]
#
# OUT.md is written under bench/results. Used for the latent GP's GP-DiTs
# (bench/reproduce_paper_latent.R with DITIMPUTE_BENCH_CACHE keeps their files).
suppressPackageStartupMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
if (length(args) < 3) stop("usage: Rscript bench/dit_histories.R OUT.md TITLE MODEL.dit [MODEL.dit ...]")
out <- file.path("bench", "results", args[1])
files <- args[-(1:2)]
lines <- c(paste("#", args[2]), "",
           sprintf("Produced by `Rscript bench/dit_histories.R %s` on %s from the saved models' loss histories.",
                   paste(shQuote(args), collapse = " "), format(Sys.time(), "%Y-%m-%d %H:%M %Z")), "")
for (f in files) {
  fit <- dit_load(f)
  h <- fit$history
  keep <- unique(round(seq(1, nrow(h), length.out = min(14, nrow(h)))))
  best <- which.min(h$val_loss)
  ti <- fit$train_info
  lines <- c(lines, sprintf("## `%s`", basename(f)), "",
             sprintf("%d steps; best validation loss %.4f at step %d%s.", fit$steps, h$val_loss[best], h$step[best],
                     if (length(ti$stop_reason)) sprintf("; stopped by %s", ti$stop_reason) else ""), "",
             "| step | training loss | validation loss |", "|---|---|---|",
             sprintf("| %d | %.4f | %.4f |", h$step[keep], h$train_loss[keep], h$val_loss[keep]), "")
}
writeLines(lines, out)
message("written: ", out)
