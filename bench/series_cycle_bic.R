# Would BIC choose a cycle (impute_series(kernel = "cycle")) over the default
# forms (kernel = "auto": the calendar's season or the smooth kernel)? Both
# fitted on each whole series (no gaps hidden), on the same scale, with their
# smallest BIC over the trend forms; the fitted period of the cycle. (A
# whole series has no gaps, so kernel = "auto" weighs no cycle on hidden gaps
# here: its forms are the calendar's, as before 2026-12-02.) Series:
# bench/series_cycle.R's four cyclic ones and eight of R's `datasets` without
# a cycle of their own (calendar-seasonal or not).
#
# Usage: Rscript bench/series_cycle_bic.R   (from the repository root)
# Writes bench/results/series_cycle_bic.md.
suppressMessages(library(ditimpute))
names <- c("sunspot.month", "lynx", "sunspot.year", "sunspots", "Nile", "LakeHuron", "treering", "co2",
           "AirPassengers", "WWWusage", "austres", "uspop")
rows <- lapply(names, function(nm) {
  y <- get(nm, asNamespace("datasets"))
  a <- suppressWarnings(impute_series(y, n_samples = 20, seed = 1))
  b <- tryCatch(suppressWarnings(impute_series(y, n_samples = 20, seed = 1, kernel = "cycle")),
                error = function(e) conditionMessage(e))
  ok <- !is.character(b)
  data.frame(series = nm, frames = length(y), default = paste(a$model$model_name, a$model$kernel_name),
             bic_default = min(a$model$candidates$BIC),
             cycle = if (ok) paste(b$model$model_name, "cycle") else "error",
             period = if (ok) b$model$period else NA, bic_cycle = if (ok) min(b$model$candidates$BIC) else NA,
             note = if (ok) "" else gsub("[[:space:]]+", " ", b))
})
tab <- do.call(rbind, rows)
tab$diff <- tab$bic_cycle - tab$bic_default
fmt <- function(x, d = 1) ifelse(is.na(x), "NA", formatC(x, format = "f", digits = d))
md <- c("# BIC of a fitted cycle against the default forms (bench/series_cycle_bic.R)", "",
        sprintf("`Rscript bench/series_cycle_bic.R` on %s (ditimpute %s). Each whole series fitted twice: defaults, and",
                format(Sys.Date()), as.character(utils::packageVersion("ditimpute"))),
        "`kernel = \"cycle\"`; BIC is the smallest over the trend forms; `diff` = cycle minus default (< 0: BIC prefers",
        "the cycle).", "",
        "| series | frames | default form | BIC | cycle form | fitted period | BIC | diff |",
        "|---|---|---|---|---|---|---|---|",
        sprintf("| %s | %d | %s | %s | %s | %s | %s | %s |", tab$series, tab$frames, tab$default, fmt(tab$bic_default),
                ifelse(nzchar(tab$note), paste("error:", tab$note), tab$cycle), fmt(tab$period, 2), fmt(tab$bic_cycle),
                fmt(tab$diff)), "")
writeLines(md, "bench/results/series_cycle_bic.md")
cat(md, sep = "\n")
