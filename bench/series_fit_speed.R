# The time of impute_series() (one thread: the fit is the share that grows
# with the form's state) with one build of the package against another, in
# one run: each case runs in its own process (bench/series_fit_speed_case.R)
# with R_LIBS set to each library in turn, alternating (before, after,
# before, after) so that a change of the machine's load falls on both.
# Reported: CPU time per case (the median of the repetitions) and its ratio
# after / before, the Nelder-Mead evaluations, and how far the results moved
# (log-likelihood; the largest change of a point imputation or 95% bound, over
# the widest 95% interval of the case: one scale for all its variables).
# Usage (from the repository root):
#   Rscript bench/series_fit_speed.R <library before> <library after> [reps] [data_dir] [label]
# Writes bench/results/series_fit_speed.md.
source(file.path("bench", "md_table.R"))
args <- commandArgs(trailingOnly = TRUE)
libs <- c(before = args[1], after = args[2])
reps <- if (length(args) >= 3) as.integer(args[3]) else 2L
data_dir <- if (length(args) >= 4) args[4] else file.path("..", "shared", "data")
label <- if (length(args) >= 5) args[5] else "before -> after"
cases <- c("Dingling TEMP, 1,000 h, complete", "Dingling PRES, 1,000 h, complete",
           "Dingling TEMP + DEWP, 2,000 h, 10% in gaps", "ETTh1 OT, 5,000 h, 20% in gaps",
           "sunspot.month, 10% in gaps", "ETTh1 7 variables, 3,000 h, 10% in gaps")
only <- Sys.getenv("DITIMPUTE_BENCH_ONLY", "")
if (nzchar(only)) cases <- grep(only, cases, value = TRUE)
load_before <- readLines("/proc/loadavg")
run_case <- function(case, lib) {
  out <- tempfile(fileext = ".rds")
  status <- system2("Rscript", c("bench/series_fit_speed_case.R", shQuote(case), out, data_dir),
                    env = paste0("R_LIBS=", lib))
  if (status != 0) stop("case ", case, " failed with library ", lib)
  r <- readRDS(out)
  # The package must come from `lib`: a wrong path would fall back to the
  # site library and compare a build with itself.
  if (normalizePath(dirname(r$package)) != normalizePath(lib)) stop("ditimpute was loaded from ", r$package, ", not ", lib)
  r
}
rows <- list()
for (case in cases) {
  res <- list(before = list(), after = list())
  for (r in seq_len(reps)) for (w in names(libs)) res[[w]][[r]] <- run_case(case, libs[[w]])
  med <- function(w, f) stats::median(vapply(res[[w]], function(z) z[[f]], 0))
  b <- res$before[[1]]
  a <- res$after[[1]]
  scale <- max(abs(b$upper - b$lower), 1e-12)
  moved <- if (length(b$point)) max(abs(c(a$point - b$point, a$lower - b$lower, a$upper - b$upper))) / scale else NA
  rows[[case]] <- data.frame(
    case = case, form = a$form, cpu_before = med("before", "cpu"), cpu_after = med("after", "cpu"),
    ratio = med("after", "cpu") / med("before", "cpu"),
    elapsed_before = med("before", "elapsed"), elapsed_after = med("after", "elapsed"),
    evaluations_before = b$evaluations, evaluations_after = a$evaluations,
    loglik_change = a$loglik - b$loglik, largest_move = moved,
    same_form = identical(a$form, b$form), load = paste(b$load, "|", a$load), check.names = FALSE)
  print(rows[[case]][, 1:11])
}
tab <- do.call(rbind, rows)
dir.create("bench/results", showWarnings = FALSE)
writeLines(c("# impute_series() CPU time, one build against another (bench/series_fit_speed.R)", "",
             sprintf("%s; %s; one thread per fit, the median of %d alternating runs per build; CPU seconds of the call (user + system). `largest_move`: the largest change of a point imputation or 95%% bound (the default level), over the widest 95%% interval of the case (one scale for all its variables). Load average before the run: %s; after: %s.",
                     label, format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC"), reps, load_before,
                     readLines("/proc/loadavg")), "",
             md_table_signif3(tab[, setdiff(names(tab), "load")])),
           "bench/results/series_fit_speed.md")
