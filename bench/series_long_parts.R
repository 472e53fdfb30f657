# bench/series_long.R's gaps (hide_gaps(), hide_repetition(), group_of()),
# methods (impute_series() at the bench's settings, linear interpolation,
# imputeTS's) and gap-counting standard errors (ratio_se()), for the benches
# that score other series the same way: an environment holding them, with
# na_kalman skipped on a series where it took over `kalman_limit` seconds.
# Source from the repository root: source("bench/series_long_parts.R").
series_long_parts <- function(kalman_limit) {
  src <- new.env()
  src$pick <- NULL
  src$only <- NULL
  src$kalman_limit <- kalman_limit
  src$has_imputets <- requireNamespace("imputeTS", quietly = TRUE)
  if (!src$has_imputets) message("imputeTS is not installed: its methods are skipped")
  lines <- readLines("bench/series_long.R")
  eval(parse(text = lines[grep("^data_dir <- ", lines)[1]:(grep("^rows <- list", lines)[1] - 1)]), envir = src)
  eval(parse(text = lines[grep("^ratio_se <- function", lines)[1]:(grep("^summarise <- function", lines)[1] - 1)]),
       envir = src)
  src
}

# fn(g, name, frame, r) for each repetition r of bench/series_long.R's gaps in
# the oil temperature (OT) of ETTh1 and of ETTh2: g = hide_repetition() of OT,
# name "ETTh1_OT" or "ETTh2_OT", frame the whole data set (OT and its loads).
# The data frames fn returns, bound by rows.
ett_ot_repetitions <- function(parts, data_dir, reps, fn) {
  out <- list()
  for (target in c("ETTh1", "ETTh2")) {
    frame <- utils::read.csv(gzfile(file.path(data_dir, "ett", paste0(target, ".csv.gz"))))
    name <- paste0(target, "_OT")
    for (r in seq_len(reps))
      out[[length(out) + 1]] <- fn(parts$hide_repetition(stats::ts(frame$OT, frequency = 24), name, r), name, frame, r)
  }
  do.call(rbind, out)
}
