# Shared by bench/series_long_pm25.R and bench/series_long_pm25_multi.R: the
# command line ([reps] [data_dir]), bench/series_long.R's gap helpers
# (hide_gaps, run_len, group_of, linear; sourced from it, so the gaps are the
# same), the Dongsi station of BeijingAir (`beijing`) and the table format.
suppressMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
reps <- if (length(args) >= 1) as.integer(args[1]) else 1L
data_dir <- if (length(args) >= 2) args[2] else file.path("..", "shared", "data")
src <- readLines(file.path("bench", "series_long.R"))
eval(parse(text = src[grep("^hide_gaps <-", src):(grep("^with_timeout <-", src) - 1)]))
beijing <- utils::read.csv(gzfile(list.files(file.path(data_dir, "beijing_air"), pattern = "Dongsi", full.names = TRUE)))
fmt <- function(v) paste(sprintf("%.3f", v), collapse = " | ")

# Writes bench/results/<name>.md: the title, the command line with the date,
# `what` the run did and the load average at the end, then `lines`
# (`script`: the bench that ran, when its name is not `name`).
write_result <- function(name, title, what, lines, script = name) {
  load <- tryCatch(readLines("/proc/loadavg"), error = function(e) "unknown")
  writeLines(c(title, "", sprintf("`Rscript bench/%s.R %s` on %s; %s. Load average at the end: %s.", script,
                                  paste(args, collapse = " "), format(Sys.Date()), what, load), "", lines),
             file.path("bench", "results", paste0(name, ".md")))
  cat(sprintf("wrote bench/results/%s.md\n", name))
}
