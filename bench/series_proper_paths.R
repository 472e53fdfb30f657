# The cost of proper draws (impute_series(proper = TRUE), the default on a
# series with an end gap): each path smooths the whole series under its own
# draw of the form and parameters. A review (bench/results/reviews_2026-12-07.md)
# took 365 s for 100 paths of BeijingAir Dongsi's Jan-Feb 2014 (1,416 hours x
# 11 variables, two of them missing in the first hour) against 48 s with
# proper = FALSE, the paths drawn one after another by R, one core call each.
# They now go to the core in one call that runs them side by side on the
# threads (structural.hpp's structural_paths()).
#
# In one run, on the same fitted model, candidates and seeds: the paths one
# call at a time (the former loop: ditimpute:::cpp_structural_impute() per
# path) against the one batch call on 1 and on 2 threads; the results must
# be identical. Series: that window of Dongsi (11 variables) and ETTh1's first
# 2,000 hours (7 variables), each with its first value of two variables hidden.
#   Rscript bench/series_proper_paths.R [paths]
# Appends to bench/results/series_proper_paths.md.
suppressPackageStartupMessages(library(ditimpute))
source(file.path("bench", "md_table.R"))
args <- commandArgs(trailingOnly = TRUE)
n_paths <- if (length(args)) as.integer(args[1]) else 20L
shared <- Sys.getenv("DITIMPUTE_SHARED", "../shared")
if (!dir.exists(shared)) shared <- "/work/shared"

bj <- read_beijing_air(file.path(shared, "data/beijing_air"), sites = "Dongsi")
tz <- attr(bj$time, "tzone")
if (is.null(tz)) tz <- ""
in_window <- bj$time >= as.POSIXct("2014-01-01", tz = tz) & bj$time < as.POSIXct("2014-02-28", tz = tz)
series <- list(
  `BeijingAir Dongsi 2014-01-01..02-27 (11 variables)` = bj$values[in_window, ],
  `ETTh1 hours 1-2000 (7 variables)` = read_ett(file.path(shared, "data/ett/ETTh1.csv.gz"))$values[1:2000, ]
)
loadavg <- function() paste(strsplit(readLines("/proc/loadavg"), " ")[[1]][1:3], collapse = " ")
rows <- list()
for (nm in names(series)) {
  v <- series[[nm]]
  v[1, 1:2] <- NA
  fit <- suppressWarnings(impute_series(v, proper = FALSE, separate = "none", n_samples = 20, seed = 1, threads = 2))
  model <- fit$model
  y <- ditimpute:::scale_cols(v, model)
  cands <- ditimpute:::proper_candidates(model, v, y, n_paths, 7, 2)
  seeds <- vapply(seq_len(n_paths), function(k) ditimpute:::sub_seed(11, 1001 + k), 0)
  load0 <- loadavg()
  t0 <- proc.time()[["elapsed"]]
  one_by_one <- lapply(seq_len(n_paths), function(k) {
    ditimpute:::cpp_structural_impute(y, cands[[k]], list(n_samples = 1L, seed = seeds[k], threads = 2L))
  })
  s_loop <- proc.time()[["elapsed"]] - t0
  t0 <- proc.time()[["elapsed"]]
  batch1 <- ditimpute:::cpp_structural_paths(y, cands, seeds, list(threads = 1L))
  s_batch1 <- proc.time()[["elapsed"]] - t0
  t0 <- proc.time()[["elapsed"]]
  batch2 <- ditimpute:::cpp_structural_paths(y, cands, seeds, list(threads = 2L))
  s_batch2 <- proc.time()[["elapsed"]] - t0
  same <- identical(one_by_one, batch1) && identical(one_by_one, batch2)
  rows[[nm]] <- data.frame(series = nm, frames = nrow(v), variables = ncol(v), paths = n_paths,
                           form = paste(model$kernel_name, collapse = " "),
                           loop_2threads_s = round(s_loop, 1), batch_1thread_s = round(s_batch1, 1),
                           batch_2threads_s = round(s_batch2, 1), speedup = round(s_loop / s_batch2, 2),
                           identical = same, load = paste(load0, "->", loadavg()), check.names = FALSE)
  print(rows[[nm]])
}
tab <- do.call(rbind, rows)
fmt <- md_table_lines(tab)
out <- "bench/results/series_proper_paths.md"
head <- if (file.exists(out)) character() else
  c("# Proper draws: paths one core call at a time against one batch call (bench/series_proper_paths.R)", "",
    "Same fitted model (separate = \"none\"), parameter draws and seeds; seconds for the paths alone (the fit excluded).",
    "`loop_2threads_s`: the former loop, one core call per path with threads = 2 (which a joint smoother does not use);",
    "`batch_*`: one call, paths side by side on the threads. `identical`: the three give the same numbers.", "")
cat(c(head, sprintf("## %s, %s, %d cores", format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC"), R.version.string,
                    parallel::detectCores()), "", fmt, ""), file = out, sep = "\n", append = TRUE)
