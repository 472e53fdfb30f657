# Where impute_series()'s time goes, by core entry (R's sampling profiler):
# the fit of every candidate form (cpp_structural_fit), the smoothed moments
# of the hidden gaps that weigh forms and rates (cpp_structural_moments) and
# the imputation (cpp_structural_impute), on two cases of
# bench/series_fit_speed_case.R: ETTh1's 7 variables (3,000 h, 10% in gaps) and
# its oil temperature alone (5,000 h, 20% in gaps). One thread.
# Usage: Rscript bench/series_time_split.R [data_dir] [out.md]
suppressPackageStartupMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
data_dir <- if (length(args) >= 1) args[1] else Sys.getenv("DITIMPUTE_DATA", file.path("..", "shared", "data"))
out <- if (length(args) >= 2) args[2] else "bench/results/series_time_split.md"
ett <- utils::read.csv(gzfile(file.path(data_dir, "ett", "ETTh1.csv.gz")))
source(file.path("bench", "hide_gaps.R"))
cases <- list(
  "ETTh1, 7 variables, 3,000 h, 10% in gaps" = hide_gaps(as.matrix(ett[1:3000, c("HUFL", "HULL", "MUFL", "MULL", "LUFL", "LULL", "OT")]), 0.1, 4),
  "ETTh1 OT, 5,000 h, 20% in gaps" = hide_gaps(as.matrix(ett[1:5000, "OT", drop = FALSE]), 0.2, 2))
entries <- c("cpp_structural_fit", "cpp_structural_moments", "cpp_structural_impute")
rows <- lapply(names(cases), function(nm) {
  prof <- tempfile()
  t0 <- proc.time()
  utils::Rprof(prof, interval = 0.02)
  imp <- suppressWarnings(impute_series(cases[[nm]], period = 24, seed = 1, threads = 1))
  utils::Rprof(NULL)
  cpu <- sum((proc.time() - t0)[c("user.self", "sys.self")])
  s <- utils::summaryRprof(prof)$by.total
  key <- sub('^"(.*)"$', "\\1", rownames(s))  # the profiler quotes the names
  share <- vapply(entries, function(e) if (e %in% key) s[match(e, key), "total.pct"] else 0, 0)
  data.frame(case = nm, cpu_s = round(cpu, 1), fit = sprintf("%.0f%%", share[1]), moments = sprintf("%.0f%%", share[2]),
             impute = sprintf("%.0f%%", share[3]), form = paste(vapply(if (inherits(imp$model, "ditimpute_series_model_set"))
               imp$model$parts else list(imp$model), function(p) p$model_name, ""), collapse = " / "))
})
tab <- do.call(rbind, rows)
lines <- c("# Where impute_series()'s time goes (bench/series_time_split.R)", "",
           sprintf("`Rscript bench/series_time_split.R` on %s, ditimpute from %s, one thread; load average at the end %s (2 cores). Shares of the sampled time inside each core entry (R's profiler, 20 ms samples).",
                   format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC"), find.package("ditimpute"),
                   paste(strsplit(readLines("/proc/loadavg"), " ")[[1]][1:3], collapse = " ")), "",
           "| case | CPU s | cpp_structural_fit | cpp_structural_moments | cpp_structural_impute | forms |",
           "|---|---|---|---|---|---|",
           sprintf("| %s | %.1f | %s | %s | %s | %s |", tab$case, tab$cpu_s, tab$fit, tab$moments, tab$impute, tab$form))
cat(lines, sep = "\n")
writeLines(lines, out)
