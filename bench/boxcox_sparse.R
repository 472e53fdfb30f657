# The Box-Cox lambda that transform = "auto" / "boxcox" chooses for a long
# positive series observed sparsely (every other frame missing: no two values
# adjacent, so no one-frame change): from the changes between successive
# observed values (the rule since session 80), against the lambda from the
# complete series and the short series' set value (0.5; the log before).
# BeijingAir Dongsi, the first 3,000 hours of PM2.5, PM10, CO, NO2 and O3.
# Usage: Rscript bench/boxcox_sparse.R [data_dir]
suppressPackageStartupMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
dir <- if (length(args)) args[1] else file.path("..", "shared", "data")
air <- read_beijing_air(file.path(dir, "beijing_air"), sites = "Dongsi")
rows <- NULL
for (v in paste0("Dongsi.", c("PM2.5", "PM10", "CO", "NO2", "O3"))) {
  y <- air$values[1:3000, v]
  alt <- y
  alt[seq(2, length(alt), 2)] <- NA
  rows <- rbind(rows, data.frame(variable = v, complete = ditimpute:::boxcox_profile(y)$lambda,
                                 every_other_hour = ditimpute:::boxcox_profile(alt)$lambda,
                                 set_value = ditimpute:::boxcox_short_lambda))
}
source("bench/md_table.R")
txt <- c("# Box-Cox lambda of a sparsely observed series (bench/boxcox_sparse.R)", "",
         sprintf("`Rscript bench/boxcox_sparse.R` on %s: BeijingAir Dongsi, hours 1-3,000; `every_other_hour`: the even hours removed, lambda from the changes between successive observed values; `set_value`: what a series without 10 one-frame changes would get otherwise.",
                 format(Sys.Date())), "", md_table_lines(rows))
writeLines(txt, "bench/results/boxcox_sparse.md")
cat(txt, sep = "\n")
