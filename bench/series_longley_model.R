# The model impute_series() fits to Longley (R's datasets, 16 years, the six
# variables but Year, as bench/series.R gives it) with two random holes in
# Armed.Forces and two in GNP: print(model), to see why Armed.Forces' jump
# in 1950-51 is imputed worse than by linear interpolation
# (bench/results/series_fresh_multi.md), and summary(): every candidate
# form's log-likelihood and BIC.
# Usage: Rscript bench/series_longley_model.R   (writes bench/results/series_longley_model.md)
suppressMessages(library(ditimpute))
source("bench/series_sets.R")
y <- fresh$longley  # bench/series.R's Longley: the six variables but Year
set.seed(3)
y[sample(16, 2), "Armed.Forces"] <- NA
y[sample(16, 2), "GNP"] <- NA
m <- impute_series(y, seed = 1, n_samples = 50)
out <- utils::capture.output(print(m$model), summary(m))
writeLines(c("# The model impute_series() fits to Longley with four random holes (bench/series_longley_model.R)", "",
             sprintf("`Rscript bench/series_longley_model.R` on %s (ditimpute %s).", format(Sys.Date()),
                     utils::packageVersion("ditimpute")), "", "```", out, "```"),
           file.path("bench", "results", "series_longley_model.md"))
cat(out, sep = "\n")
