# impute_series()'s transform = "auto" on short positive series (a review,
# session 80): with fewer than 10 observed one-frame changes the Box-Cox
# lambda is not chosen from them but set (boxcox_short_lambda). It was the
# log (0), which on a trending series that starts from a small value put a
# 90% interval of [2.81, 59.30] around one value between 12.30 and 13.60.
# This bench draws short positive series of four kinds that span at least an
# order of magnitude (so "auto" transforms them), hides 2 interior values of
# each, and compares on the same series and gaps: the set lambda at 0 (the
# former rule), 0.5 (the default since) and 1 (the data's own scale,
# continued as a log below its smallest value), lambda chosen by the profile
# from 4 changes on (boxcox_min_changes = 4), and transform = "none": MAE,
# 90% coverage, mean interval width, and the share of imputations or lower
# bounds <= 0. Series of 16 frames keep at least 11 changes: a control,
# equal under every set lambda.
# Usage: Rscript bench/series_short_positive.R [reps] [out.md]
suppressPackageStartupMessages(library(ditimpute))
source("bench/with_object.R")
source("bench/md_table.R")
args <- commandArgs(trailingOnly = TRUE)
reps <- if (length(args) >= 1) as.integer(args[1]) else 40
out <- if (length(args) >= 2) args[2] else "bench/results/series_short_positive.md"
kinds <- list(
  growth = function(n) cumsum(abs(rnorm(n, 1, 0.8))) + 0.3,               # linear growth from a small start (the review's)
  exponential = function(n) exp(seq(0, log(30), length.out = n) + rnorm(n, sd = 0.15)),
  dip = function(n) { y <- 8 + cumsum(rnorm(n, sd = 0.7)); y <- pmax(y, 1); y[2] <- 0.5; y },  # one early low value
  counts = function(n) rpois(n, exp(seq(0.5, 3.5, length.out = n))) + 1)
lengths <- c(10, 12, 16)
cases <- list(); meta <- NULL
for (kind in names(kinds)) for (n in lengths) for (r in seq_len(reps)) {
  set.seed(1000 * match(kind, names(kinds)) + 100 * n + r)
  repeat {
    y <- kinds[[kind]](n)
    h <- sort(sample(2:(n - 1), 2))
    x <- y; x[h] <- NA
    o <- x[!is.na(x)]
    if (all(o > 0) && max(o) / min(o) >= 10) break
  }
  cases[[length(cases) + 1]] <- list(y = y, x = x, h = h)
  meta <- rbind(meta, data.frame(kind = kind, n = n))
}
score <- function(transform = "auto") {
  do.call(rbind, lapply(seq_along(cases), function(k) {
    c <- cases[[k]]
    r <- suppressWarnings(impute_series(c$x, level = 0.9, seed = 1, threads = 1, progress = FALSE,
                                        transform = transform))$record
    data.frame(kind = meta$kind[k], n = meta$n[k], err = abs(r$estimate - c$y[c$h]), inside = c$y[c$h] >= r$lower & c$y[c$h] <= r$upper,
               width = r$upper - r$lower, nonpos = r$estimate <= 0 | r$lower <= 0)
  }))
}
t0 <- proc.time()[["elapsed"]]
res <- list(`auto, lambda 0 (the former rule)` = with_object("boxcox_short_lambda", 0, score()),
            `auto, lambda 0.5 (the default)` = with_object("boxcox_short_lambda", 0.5, score()),
            `auto, lambda 1` = with_object("boxcox_short_lambda", 1, score()),
            `auto, lambda from 4 changes on` = with_object("boxcox_min_changes", 4L, score()),
            `none` = score("none"))
secs <- proc.time()[["elapsed"]] - t0
summ <- function(nm, g, kind, n) data.frame(variant = nm, kind = kind, n = n, values = nrow(g), mae = mean(g$err),
                                           coverage90 = mean(g$inside), width = mean(g$width), nonpositive = mean(g$nonpos))
rows <- NULL
for (nm in names(res)) {
  d <- res[[nm]]
  short <- d[d$n < 16, ]
  rows <- rbind(rows, summ(nm, short, "all", "10, 12"))
  for (g in split(short, short$kind)) rows <- rbind(rows, summ(nm, g, g$kind[1], "10, 12"))
  rows <- rbind(rows, summ(nm, d[d$n == 16, ], "all (control)", "16"))
}
rows <- rows[order(factor(rows$kind, unique(rows$kind)), rows$n), ]
rows$n <- as.character(rows$n)
txt <- c("# transform = \"auto\" on short positive series (bench/series_short_positive.R)", "",
         sprintf(paste("`Rscript bench/series_short_positive.R %d` on %s: %d series (4 kinds x lengths %s x %d repetitions),",
                       "each positive and spanning at least an order of magnitude, with 2 interior values hidden; the",
                       "same series and gaps for each variant; defaults otherwise (level 0.9, seed 1, one thread). %.0f s in",
                       "all; load average at the end: %s."), reps, format(Sys.Date()), length(cases),
                 paste(lengths, collapse = ", "), reps, secs, paste(readLines("/proc/loadavg"), collapse = "")), "",
         "Series of 10 and 12 frames have at most 9 observed one-frame changes (lambda set); those of 16 at least 11",
         "(lambda chosen by the profile whatever the set value: the control rows).", "",
         md_table_signif3(rows))
writeLines(txt, out)
cat(txt, sep = "\n")
