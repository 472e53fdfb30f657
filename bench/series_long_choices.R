# The form impute_series() chooses in each repetition of bench/series_long.R's
# gaps (the bench's gaps and seed, 20 sample paths: the choice does not
# depend on the paths), for the build on R_LIBS: to check which series a
# change of the model comparison moves before re-running the whole bench.
# Usage: Rscript bench/series_long_choices.R series,... reps out.csv   (from the repository root)
suppressMessages(library(ditimpute))
source("bench/series_long_parts.R")
parts <- series_long_parts(60)
args <- commandArgs(TRUE)
names <- strsplit(args[1], ",")[[1]]
reps <- as.integer(args[2])
res <- series_repetitions(parts, Sys.getenv("DITIMPUTE_DATA", file.path("..", "shared", "data")), reps, names, function(g, name, r) {
  imp <- suppressWarnings(impute_series(g$y, level = 0.9, n_samples = 20, seed = 1))
  data.frame(series = name, rep = r, model = paste(imp$model$model_name, imp$model$kernel_name))
})
utils::write.csv(res, args[3], row.names = FALSE)
