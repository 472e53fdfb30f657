# A prototype not kept (issue 27): the fixed seasonal shape's estimation error
# added to the raw intervals of forecast::taylor. The shape (series_profile())
# is the position means of 12 weeks; the model treats it as known, and its
# raw 90% intervals cover 86.6% of single hidden values and 87.2% of gaps of
# 2-5 (bench/results/series_profile_variants.md). Each imputed entry's sd on
# the model's scale gets the position mean's standard error added in
# quadrature: `all`, from the residuals' whole variance about the position
# means (its smooth part too, which the observed neighbours of a short gap
# already correct); `white`, from their one-frame differences (half their
# mean square: the white part only). bench/series_fresh.R's gaps of taylor,
# 10 repetitions, the same imputations otherwise.
# Usage: Rscript bench/series_profile_se.R   (from the repository root)
# Writes bench/results/series_profile_se.md.
suppressMessages(library(ditimpute))
source("bench/series_long_parts.R")
src <- series_long_parts(kalman_limit = 60)
source("bench/with_object.R")
ns <- asNamespace("ditimpute")
orig_profile <- get("series_profile", ns); orig_bands <- get("series_bands", ns)
mode <- "white"
prof_se <- function(u, period, harmonics) {
  out <- orig_profile(u, period, harmonics)
  if (is.null(out)) return(out)
  se <- matrix(0, period, ncol(u))
  for (j in which(colSums(out != 0) > 0)) {
    x <- u[, j]; n <- length(x); p <- period
    ok <- which(!is.na(x)); pos <- (seq_len(n) - 1L) %% p + 1L
    xi <- stats::approx(ok, x[ok], xout = seq_len(n), rule = 2)$y
    dt <- x - ditimpute:::series_moving_average(xi, p)
    cnt <- tabulate(pos[!is.na(dt)], p)
    m <- vapply(split(dt, pos), mean, 0, na.rm = TRUE)
    r <- dt - m[pos]
    within <- if (mode == "white") { d <- diff(r); mean(d^2, na.rm = TRUE) / 2 } else sum(r^2, na.rm = TRUE) / (sum(cnt) - p)
    se[, j] <- sqrt(within / cnt)
  }
  attr(out, "se") <- se
  out
}
bands_se <- function(model, v, mean, sd, level) {
  se <- attr(model$profile, "se")
  if (!is.null(se)) {
    ij <- ditimpute:::missing_index(is.na(v))
    pse <- se[cbind((ij[, 1] - 1L) %% nrow(se) + 1L, ij[, 2])] / model$scale[ij[, 2]]
    sd <- sqrt(sd^2 + pse^2)
  }
  orig_bands(model, v, mean, sd, level)
}
y0 <- forecast::taylor
rows <- list()
for (r in 1:10) {
  g <- src$hide_repetition(y0, "taylor", r, 0.15, max_len = max(2L, length(y0) %/% 8L))
  for (v in c("default", "all", "white")) {
    mode <- v
    imp <- if (v == "default") impute_series(g$y, level = 0.9, n_samples = 50, seed = 1) else
      with_object("series_profile", prof_se, with_object("series_bands", bands_se, impute_series(g$y, level = 0.9, n_samples = 50, seed = 1)))
    rows[[length(rows) + 1]] <- data.frame(rep = r, v = v, group = g$grp, cover = imp$lower[g$h] <= g$truth & g$truth <= imp$upper[g$h],
       width = (imp$upper - imp$lower)[g$h])
  }
}
res <- do.call(rbind, rows)
cov <- rbind(tapply(res$cover, list(res$group, res$v), mean), all = tapply(res$cover, res$v, mean))
wid <- rbind(tapply(res$width, list(res$group, res$v), mean), all = tapply(res$width, res$v, mean))
n <- c(table(res$group[res$v == "default"]), all = sum(res$v == "default"))
load <- tryCatch(readLines("/proc/loadavg"), error = function(e) "unknown")
md <- c("# The fixed shape's estimation error in taylor's raw intervals: a prototype not kept (bench/series_profile_se.R)", "",
        sprintf("%s (ditimpute %s), 10 repetitions of bench/series_fresh.R's gaps of taylor, 90%% intervals; load average %s.",
                format(Sys.Date()), as.character(utils::packageVersion("ditimpute")), load), "",
        "`default`: impute_series() as it is; `all` / `white`: the position means' standard error (whole / white residual",
        "variance) added in quadrature to each imputed entry's sd. Coverage of the hidden values and mean interval width.", "",
        "| group | entries | default | all | white | width default | width all | width white |", "|---|---|---|---|---|---|---|---|",
        sprintf("| %s | %d | %.3f | %.3f | %.3f | %.0f | %.0f | %.0f |", rownames(cov), n[rownames(cov)], cov[, "default"], cov[, "all"],
                cov[, "white"], wid[, "default"], wid[, "all"], wid[, "white"]))
writeLines(md, "bench/results/series_profile_se.md")
cat(md, sep = "\n")
