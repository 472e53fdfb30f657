# How uncertain is the form on short series? impute_series(proper = TRUE)
# draws each path's form (stationary, level or trend; smooth or seasonal)
# with probability its BIC weight. This script fits the nine short series of
# bench/series.R (its `short` list, its gaps from its seeds: 10 repetitions x
# long gaps and random holes) and reports, per series, the chosen form's BIC
# weight (mean and range over the fits) and the mean weight of each model
# (stationary / level / trend, summed over kernels).
# Usage: Rscript bench/proper_forms.R   (writes bench/results/proper_forms.md)
suppressMessages(library(ditimpute))
# bench/series.R's gaps and short series (the files it sources: grabbing their
# lines from bench/series.R broke when they moved there).
source("bench/series_hide.R")  # hide()
source("bench/series_sets.R")  # short
with_na <- function(y, miss) { y[miss] <- NA; y }
names9 <- setdiff(names(short), c("austres", "JohnsonJohnson"))
rows <- list()
for (name in names9) {
  y <- short[[name]]
  for (kind in c("long", "random")) {
    w <- t(vapply(1:10, function(r) {
      miss <- hide(y, kind, 1000 * r + nchar(name))
      m <- suppressWarnings(impute_series(with_na(y, miss), level = 0.9, n_samples = 20, seed = 1, threads = 2,
                                          separate = "none", proper = FALSE))$model
      wt <- exp(-(m$forms$BIC - min(m$forms$BIC)) / 2)
      wt <- wt / sum(wt)
      tab <- m$candidates
      c(chosen = wt[tab$chosen], vapply(c("stationary", "level", "trend"), function(f) sum(wt[tab$model == f]), 0))
    }, numeric(4)))
    rows[[length(rows) + 1]] <- sprintf("| %s | %s | %.2f | %.2f-%.2f | %.2f | %.2f | %.2f |", name, kind,
                                        mean(w[, 1]), min(w[, 1]), max(w[, 1]), mean(w[, 2]), mean(w[, 3]), mean(w[, 4]))
  }
}
md <- c("# The forms' BIC weights on short series (bench/proper_forms.R)", "",
        sprintf("`Rscript bench/proper_forms.R` on %s: bench/series.R's nine short series and gaps (10 repetitions per gap kind), one form for all variables (`separate = \"none\"`).",
                format(Sys.time(), "%Y-%m-%d", tz = "UTC")), "",
        "| series | gaps | chosen form's weight (mean) | range | stationary | level | trend |", "|---|---|---|---|---|---|---|",
        unlist(rows))
writeLines(md, "bench/results/proper_forms.md")
cat(md, sep = "\n")
