# Why the model class weighed on hidden gaps keeps the stationary form on
# Longley's long gaps (bench/results/series_fresh_multi_classes.md: the local
# level's MAE 18.5 against the default's 21.4): for each of bench/series.R's
# ten long-gap repetitions, the class chosen, the hidden gaps' mean CRPS
# difference (rival minus incumbent) with its SE, and for the repetitions
# named below the hidden stretches that weigh most, with where they lie
# beside the variable's own gap. impute_series()'s scorer is read through
# trace() on its internal series_gap_compare() (no package change).
# Usage: Rscript bench/series_longley_scorer.R   (writes bench/results/series_longley_scorer.md)
suppressMessages(library(ditimpute))
source("bench/series_hide.R")  # bench/series.R's hide()
source("bench/series_sets.R")
y <- fresh$longley  # bench/series.R's Longley: the six variables but Year
ns <- asNamespace("ditimpute")
cap <- new.env()
suppressMessages(trace(ditimpute:::series_gap_compare, exit = quote({ cap$scorer <- scorer; cap$scores <- scores }),
                       where = ns, print = FALSE))
span <- function(w) if (length(w)) sprintf("%d-%d", min(w), max(w)) else "none"
out <- c("| rep | chosen | compared (incumbent/rival) | mean CRPS difference | se |", "|---|---|---|---|---|")
detail <- character()
for (r in 1:10) {
  miss <- hide(y, "long", 1000 * r + nchar("longley"))
  yy <- y
  yy[miss] <- NA
  cap$scorer <- NULL
  m <- suppressWarnings(impute_series(yy, level = 0.9, n_samples = 50, seed = 1))
  s <- m$model$selection
  out <- c(out, sprintf("| %d | %s | %s | %.4f | %.4f |", r, m$model$model_name, paste(s$model, collapse = "/"),
                        s$difference[2], s$se[2]))
  if (r %in% c(2, 4) && !is.null(cap$scorer)) {
    e <- environment(cap$scorer$score)
    per <- tapply(cap$scores[[2]] - cap$scores[[1]], cap$scorer$gap, sum)
    where <- unlist(lapply(seq_along(e$masks), function(k) {
      mk <- e$masks[[k]]
      ids <- ditimpute:::run_ids(mk)
      u <- unique(ids[mk])
      stats::setNames(vapply(u, function(id) {
        w <- which(ids == id & mk, arr.ind = TRUE)
        j <- w[1, 2]
        sprintf("%s frames %s (its own gap: %s)", colnames(y)[j], span(w[, 1]), span(which(miss[, j])))
      }, ""), paste(k, u))
    }))
    o <- order(-abs(per))[1:5]
    detail <- c(detail, "", sprintf("Repetition %d: the five hidden stretches with the largest summed CRPS difference (of %d)", r, length(per)), "",
                "| round and stretch | summed difference | where |", "|---|---|---|",
                sprintf("| %s | %.3f | %s |", names(per)[o], per[o], where[names(per)[o]]))
  }
}
md <- c("# The hidden gaps that choose Longley's class (bench/series_longley_scorer.R)", "",
        sprintf("`Rscript bench/series_longley_scorer.R` on %s (ditimpute %s). bench/series.R's long gaps (one stretch of 6 of the 16 years per variable), default impute_series() with 50 paths; the difference is the rival's mean CRPS minus the incumbent's on the model's scale (positive: the incumbent imputes the hidden gaps better).",
                format(Sys.Date()), utils::packageVersion("ditimpute")), "", out, detail)
writeLines(md, file.path("bench", "results", "series_longley_scorer.md"))
cat(md, sep = "\n")
