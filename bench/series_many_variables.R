# impute_series()'s time as the number of variables grows: the PM2.5 of the
# first d of BeijingAir's 12 stations (alphabetical), over the first 8,760
# hours (a year; their own missing values, about 2%), default arguments, one
# thread; d = 1, 3, 6, 12. Reports the whole call's elapsed and CPU seconds,
# the fit's share (fitting and choosing the form on hidden gaps: the model's
# fit_seconds) and the peak of R's heap (gc()), with the machine's load.
# What a user waits for with `progress = TRUE` stage by stage.
# Usage: Rscript bench/series_many_variables.R [data_dir] [d ...]   (from the repository root)
# Writes bench/results/series_many_variables.md.
suppressMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
data_dir <- if (length(args) >= 1) args[1] else file.path("..", "shared", "data")
ds <- if (length(args) >= 2) as.integer(args[-1]) else c(1L, 3L, 6L, 12L)
files <- sort(list.files(file.path(data_dir, "beijing_air"), pattern = "^PRSA_Data_.*csv.gz$", full.names = TRUE))
stations <- sub("^PRSA_Data_([A-Za-z]+)_.*$", "\\1", basename(files))
pm <- sapply(files, function(f) utils::read.csv(gzfile(f))[["PM2.5"]][seq_len(8760)])
colnames(pm) <- stations
load_before <- readLines("/proc/loadavg", warn = FALSE)
rows <- list()
for (d in ds) {
  x <- stats::ts(pm[, seq_len(d), drop = FALSE], frequency = 24)
  gc(reset = TRUE)
  t0 <- proc.time()
  imp <- impute_series(x, seed = 1, threads = 1, progress = FALSE)
  t1 <- proc.time() - t0
  heap <- sum(gc()[, 6])  # "max used" (MB), Ncells and Vcells
  rows[[length(rows) + 1]] <- data.frame(
    variables = d, missing = sum(is.na(x)), elapsed_s = round(t1[["elapsed"]], 1),
    cpu_s = round(t1[["user.self"]] + t1[["sys.self"]], 1), fit_s = round(imp$model$fit_seconds, 1),
    model = if (inherits(imp$model, "ditimpute_series_model_set")) "apart or in groups" else "one model",
    heap_MB = round(heap))
  cat(sprintf("d = %d: %.1f s\n", d, t1[["elapsed"]]))
}
tab <- do.call(rbind, rows)
out <- c("# impute_series() and the number of variables (bench/series_many_variables.R)", "",
         sprintf("`Rscript bench/series_many_variables.R` on %s, ditimpute from %s, one thread (`threads = 1`); BeijingAir PM2.5 of the first d stations of %s, the first 8,760 hours with their own missing values; default arguments otherwise. Load average before: %s; after: %s (2 cores).",
                 format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC"), dirname(find.package("ditimpute")),
                 paste(stations, collapse = ", "), load_before, readLines("/proc/loadavg", warn = FALSE)),
         "", "fit_s: fitting the candidate forms and choosing between them on hidden gaps (the model's `fit_seconds`); the rest of elapsed_s is drawing the sample paths and the warnings' checks. heap_MB: R's heap peak (gc()'s max used).", "",
         "| variables | missing | elapsed s | CPU s | fit s | model | heap MB |", "|---|---|---|---|---|---|---|",
         sprintf("| %d | %d | %.1f | %.1f | %.1f | %s | %d |", tab$variables, tab$missing, tab$elapsed_s, tab$cpu_s,
                 tab$fit_s, tab$model, as.integer(tab$heap_MB)))
dir.create(file.path("bench", "results"), showWarnings = FALSE)
writeLines(out, file.path("bench", "results", "series_many_variables.md"))
cat(out, sep = "\n")
