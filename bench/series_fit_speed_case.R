# One case of bench/series_fit_speed.R, run in its own process so that the
# package comes from the library in R_LIBS (a build before a change, or after).
# Usage: Rscript bench/series_fit_speed_case.R <case> <out.rds> <data_dir>
suppressPackageStartupMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
case <- args[1]
data_dir <- args[3]
air <- function(cols, n) {
  f <- utils::read.csv(gzfile(file.path(data_dir, "beijing_air", "PRSA_Data_Dingling_20130301-20170228.csv.gz")))
  as.matrix(f[seq_len(n), cols, drop = FALSE])
}
ett <- function(cols, n) {
  f <- utils::read.csv(gzfile(file.path(data_dir, "ett", "ETTh1.csv.gz")))
  as.matrix(f[seq_len(n), cols, drop = FALSE])
}
source(file.path("bench", "hide_gaps.R"))
x <- switch(case,
  "Dingling TEMP, 1,000 h, complete" = air("TEMP", 1000),
  "Dingling PRES, 1,000 h, complete" = air("PRES", 1000),
  "Dingling TEMP + DEWP, 2,000 h, 10% in gaps" = hide_gaps(air(c("TEMP", "DEWP"), 2000), 0.1, 1),
  "ETTh1 OT, 5,000 h, 20% in gaps" = hide_gaps(ett("OT", 5000), 0.2, 2),
  "sunspot.month, 10% in gaps" = hide_gaps(matrix(as.numeric(datasets::sunspot.month)), 0.1, 3),
  "ETTh1 7 variables, 3,000 h, 10% in gaps" = hide_gaps(ett(c("HUFL", "HULL", "MUFL", "MULL", "LUFL", "LULL", "OT"),
                                                            3000), 0.1, 4),
  stop("unknown case ", case))
period <- if (grepl("sunspot", case)) NULL else 24
t0 <- proc.time()
imp <- suppressWarnings(suppressMessages(impute_series(x, period = period, seed = 1, threads = 1)))
t1 <- proc.time()
m <- imp$model
parts <- if (inherits(m, "ditimpute_series_model_set")) m$parts else list(m)
saveRDS(list(elapsed = (t1 - t0)[["elapsed"]], cpu = sum((t1 - t0)[c("user.self", "sys.self")]),
             fit_seconds = m$fit_seconds, loglik = as.numeric(stats::logLik(imp)),
             evaluations = sum(vapply(parts, function(p) sum(p$candidates$evaluations), 0)),
             form = paste(vapply(parts, function(p) paste(p$model_name, p$kernel_name), ""), collapse = "; "),
             point = imp$point[imp$missing], lower = imp$lower[imp$missing], upper = imp$upper[imp$missing],
             load = readLines("/proc/loadavg"), package = find.package("ditimpute")),
        args[2])
