# Why impute_series() loses to linear interpolation on a sensor series with
# its own gaps (bench/series_real_gaps.R: tsHeating), measured: the fitted
# model with its level's noise rate moved away from the maximum-likelihood
# value, every other parameter held, on the series' own gaps.
#
# A local level plus a smooth term bridges a gap by the level's smoothed path
# plus the smooth term's decay: when the smooth term holds most of the
# variance (a short lengthscale, a level that moves slowly), the imputation
# inside a gap goes to a local mean of the frames around it, not to the
# values at its two ends. A level that moves fast and a smooth term that is
# small reproduce linear interpolation (a random walk's bridge). Maximum
# likelihood scores one-step predictions; the gaps need predictions many
# frames away, so the two can disagree. For each multiplier of the fitted
# level_rate, this script re-profiles the scale at the new parameters (one
# evaluation of the core's fit, no search), imputes the series' missing
# values and reports the fitting stretch's log-likelihood, MAE over linear
# interpolation's by gap-length group, CRPS (from the sample paths) and raw
# 90% coverage: a diagnosis with the truth in hand. Then a prototype that
# needs no truth (not in the package): the multiplier whose model imputes
# best, by mean CRPS, the package's own hidden gaps of the fitting stretch
# (series_gap_scorer(): 10 rounds of gaps of the series' own lengths, the
# scorer behind the model-class step), scored on the real gaps; and the same
# pick with the scorer given the whole series as its stretch (hidden gaps
# anywhere: 10 smoother passes over the series per multiplier). Besides
# imputeTS's series, any series of bench/series_long.R (ETTh1_OT, treering,
# ...) runs with that bench's hidden gaps, repetitions 1..`reps`.
#
# Usage: Rscript bench/series_level_rate.R [series,...] [multipliers] [reps]
#   (default tsHeating,tsNH4; 1,3,10,30,100,1000; 2). Writes
#   bench/results/series_level_rate.md (series_level_rate_<series>.md for others).
suppressMessages(library(ditimpute))
if (!requireNamespace("imputeTS", quietly = TRUE)) stop("this bench needs imputeTS (bash tools/setup-bench.sh)")
args <- commandArgs(trailingOnly = TRUE)
default <- c("tsHeating", "tsNH4")
names_run <- if (length(args) >= 1 && nzchar(args[1])) strsplit(args[1], ",")[[1]] else default
mults <- if (length(args) >= 2 && nzchar(args[2])) as.numeric(strsplit(args[2], ",")[[1]]) else c(1, 3, 10, 30, 100, 1000)
reps <- if (length(args) >= 3) as.integer(args[3]) else 2L
source("bench/series_long_parts.R")
src <- series_long_parts(kalman_limit = 0)
src$data_dir <- file.path("..", "shared", "data")
ns <- asNamespace("ditimpute")
threads <- 2L
# The fitted model m with its level_rate times each of `mults`: the core's fit
# of those forms to u (m's standardised series) with one evaluation each (the
# scale re-profiled, nothing searched), and m with candidate i in place.
rate_fit <- function(m, u) {
  specs <- lapply(mults, function(k) { s <- m$candidate$spec; s$level_rate <- s$level_rate * k; s })
  ns$core_call(ns$cpp_structural_fit(u, specs, list(max_frames = m$fit_frames, ridge = 0,
                                                    threads = threads, max_evaluations = 1L)))
}
with_candidate <- function(m, fit, i) { m$candidate <- fit$candidates[[i]]; m }
# CRPS of each hidden value from the sample paths (rows: paths).
crps_paths <- function(samples, truth) {
  vapply(seq_along(truth), function(i) {
    x <- samples[, i]
    mean(abs(x - truth[i])) - 0.5 * mean(abs(outer(x, x, "-")))
  }, 0)
}

t_start <- proc.time()[["elapsed"]]
rows <- list(); chosen <- list(); models <- list()
for (name in names_run) for (ver in series_versions(src, name, reps)) {
  y <- ver$y; h <- ver$h; truth <- ver$truth
  grp <- src$group_of(src$run_len(h)[h])
  lin <- src$linear(y)$point[h]
  imp <- impute_series(y, level = 0.9, n_samples = 50, seed = 1)
  m <- imp$model
  if (m$model_name == "stationary") {
    cat(sprintf("%s: stationary model chosen, no level to move\n", ver$label))
    next
  }
  models[[ver$label]] <- m
  v <- matrix(as.numeric(y), ncol = 1)
  u <- ns$scale_cols(v, m)
  fit <- rate_fit(m, u)
  scorer <- ns$series_gap_scorer(v, fit, u, 1L, threads, NULL)
  hidden_crps <- vapply(seq_along(mults), function(i) mean(scorer$score(i)), 0)
  pick <- which.min(hidden_crps)
  # The same scorer with the whole series as its stretch: hidden gaps anywhere.
  t_whole <- proc.time()[["elapsed"]]
  whole <- ns$series_gap_scorer(v, utils::modifyList(fit, list(fit_start = 1L, fit_frames = nrow(u))), u, 1L, threads, NULL)
  hidden_whole <- vapply(seq_along(mults), function(i) mean(whole$score(i)), 0)
  t_whole <- proc.time()[["elapsed"]] - t_whole
  pick_whole <- which.min(hidden_whole)
  sp <- m$candidate$spec
  chosen[[length(chosen) + 1]] <- data.frame(label = ver$label, name = name, mult = mults[pick], mult_whole = mults[pick_whole],
                                             t_whole = t_whole, t_default = imp$model$seconds,
                                             form = sprintf(paste("%s %s fitted on frames %d-%d: level_rate %.4g, smooth lengthscale",
                                                                  "%.3g frames, nugget %.3g (the smooth term's variance is 1)"),
                                                            m$model_name, m$kernel_name, m$fit_start,
                                                            m$fit_start + m$fit_frames - 1L, sp$level_rate,
                                                            sp$smooth_lengthscale, sp$nugget))
  for (i in seq_along(mults)) {
    iv <- ns$series_model_intervals(with_candidate(m, fit, i), v, 0.9, 50L, 1L, threads)
    est <- iv$point[h]
    rows[[length(rows) + 1]] <- data.frame(series = name, label = ver$label, model = paste(m$model_name, m$kernel_name),
                                           mult = mults[i], level_rate = fit$candidates[[i]]$spec$level_rate,
                                           loglik = fit$candidates[[i]]$loglik, hidden_crps = hidden_crps[i],
                                           picked = i == pick, hidden_whole = hidden_whole[i],
                                           picked_whole = i == pick_whole, group = grp,
                                           gap = paste(ver$label, cumsum(c(TRUE, diff(which(h)) > 1))),
                                           abs = abs(est - truth), abs_lin = abs(lin - truth),
                                           crps = crps_paths(iv$samples, truth),
                                           cover = iv$lower[h] <= truth & truth <= iv$upper[h])
  }
  cat(sprintf("%s done, picked x%g, on the whole series x%g (%.0f s)\n", ver$label, mults[pick], mults[pick_whole],
              proc.time()[["elapsed"]] - t_start))
}
# Where the fitted model's gap error comes from (imputeTS's series): the
# same multipliers on random gaps of the *Complete* series (series_long.R's
# law, 10% of the frames, gaps up to the longest real one), hidden over the
# whole series and over the fitting stretch only, against the real gaps.
where <- list()
for (name in intersect(names_run, utils::data(package = "imputeTS")$results[, "Item"])) {
  m <- models[[name]]  # the main loop's fit (NULL: a stationary form)
  if (is.null(m)) next
  ver <- imputets_series(name)
  full <- ver$y; full[ver$h] <- ver$truth; full <- as.numeric(full)
  n <- length(full); stretch <- m$fit_start + seq_len(m$fit_frames) - 1L
  longest <- max(src$run_len(ver$h))
  masks <- list(real = ver$h,
                whole = src$hide_gaps(full, 0.1, seed = 5, max_len = longest),
                stretch = replace(logical(n), stretch, src$hide_gaps(full[stretch], 0.1, seed = 5, max_len = longest)))
  for (w in names(masks)) {
    h <- masks[[w]]
    y <- full; y[h] <- NA
    v <- matrix(y, ncol = 1)
    lin <- src$linear(y)$point[h]
    fit <- rate_fit(m, ns$scale_cols(v, m))
    for (i in seq_along(mults)) {
      est <- ns$series_model_intervals(with_candidate(m, fit, i), v, 0.9, 20L, 1L, threads)$point[h]
      where[[length(where) + 1]] <- data.frame(series = name, gaps = w, hidden = sum(h), mult = mults[i],
                                               ratio_linear = mean(abs(est - full[h])) / mean(abs(lin - full[h])))
    }
  }
  cat(sprintf("%s: where done (%.0f s)\n", name, proc.time()[["elapsed"]] - t_start))
}
res <- do.call(rbind, rows)
groups <- levels(res$group)
summ <- do.call(rbind, lapply(split(res, list(res$label, res$mult), drop = TRUE), function(d) {
  by <- vapply(groups, function(g) { s <- d$group == g; if (any(s)) sum(d$abs[s]) / sum(d$abs_lin[s]) else NA }, 0)
  base <- res[res$label == d$label[1] & res$mult == 1, ]
  data.frame(label = d$label[1], model = d$model[1], mult = d$mult[1], level_rate = d$level_rate[1],
             dloglik = d$loglik[1] - base$loglik[1], hidden = d$hidden_crps[1] / base$hidden_crps[1],
             picked = d$picked[1], hidden_whole = d$hidden_whole[1] / base$hidden_whole[1],
             picked_whole = d$picked_whole[1], ratio_linear = mean(d$abs) / mean(d$abs_lin),
             se = src$ratio_se(d$abs, d$abs_lin, d$gap),
             by_group = paste(ifelse(is.na(by), "-", sprintf("%.3f", by)), collapse = " / "),
             crps = mean(d$crps) / mean(base$crps), coverage = mean(d$cover))
}))
summ <- summ[order(summ$label, summ$mult), ]
# The picked multiplier against the fitted model (mult 1), pooled over each
# series' versions, by group.
vs <- do.call(rbind, lapply(c("picked", "picked_whole"), function(col) do.call(rbind, lapply(unique(res$series), function(name) {
  d <- res[res$series == name, ]
  a <- d[d$mult == 1, ]; b <- d[d[[col]], ]
  stopifnot(identical(a$gap, b$gap))
  do.call(rbind, lapply(c("all", groups), function(g) {
    s <- if (g == "all") rep(TRUE, nrow(a)) else a$group == g
    if (!any(s)) return(NULL)
    data.frame(scorer = if (col == "picked") "stretch" else "whole", series = name, group = g, entries = sum(s),
               gaps = length(unique(a$gap[s])),
               mae = mean(b$abs[s]) / mean(a$abs[s]), se = src$ratio_se(b$abs[s], a$abs[s], a$gap[s]),
               linear_before = mean(a$abs[s]) / mean(a$abs_lin[s]), linear_after = mean(b$abs[s]) / mean(b$abs_lin[s]),
               crps = mean(b$crps[s]) / mean(a$crps[s]), cover_before = mean(a$cover[s]), cover_after = mean(b$cover[s]))
  }))
}))))
picks <- do.call(rbind, chosen)
load <- tryCatch(readLines("/proc/loadavg"), error = function(e) "unknown")
md <- c("# The level's noise rate against gap error (bench/series_level_rate.R)", "",
        sprintf("`Rscript bench/series_level_rate.R %s` on %s (ditimpute %s). impute_series()'s fitted model (default",
                paste(args, collapse = " "), format(Sys.Date()), as.character(utils::packageVersion("ditimpute"))),
        "arguments) with its `level_rate` times `mult`, every other parameter held and the scale re-profiled (one evaluation",
        "of the core's fit). imputeTS's series: their own missing values against the `*Complete` twin; other series:",
        sprintf("bench/series_long.R's hidden gaps, repetitions 1-%d. 50 sample paths, seed 1, 90%% intervals.", reps),
        sprintf("Whole run %.0f s; load average at the end: %s (2 cores).", proc.time()[["elapsed"]] - t_start, load), "",
        "`dloglik`: the fitting stretch's log-likelihood minus the fitted model's (mult 1); `hidden`: mean CRPS on the",
        "package's own hidden gaps of the fitting stretch (series_gap_scorer()) over mult 1's; `picked`: the lowest `hidden`",
        "(the prototype's choice, no truth used); `whole` / `picked (whole)`: the same with hidden gaps anywhere in the",
        "series (the scorer given the whole series as its stretch); `ratio_linear`: MAE over linear interpolation's on the scored gaps (SE",
        "counting each gap as one unit); `by group`: the same in groups 1 / 2-5 / 6-20 / 21-60 / >60; `crps`: mean CRPS of",
        "the sample paths over mult 1's; `coverage`: raw 90% intervals.", "",
        "| version | model | mult | level_rate | dloglik | hidden | picked | whole | picked (whole) | ratio_linear (SE) | by group | crps | coverage |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        sprintf("| %s | %s | %g | %.4g | %.1f | %.3f | %s | %.3f | %s | %.3f (%.3f) | %s | %.3f | %.1f%% |", summ$label, summ$model,
                summ$mult, summ$level_rate, summ$dloglik, summ$hidden, ifelse(summ$picked, "yes", ""), summ$hidden_whole,
                ifelse(summ$picked_whole, "yes", ""), summ$ratio_linear,
                summ$se, summ$by_group, summ$crps, 100 * summ$coverage), "",
        "## The prototype's pick against the fitted model", "",
        sprintf("- %s: %s; picked x%g (x%g with hidden gaps anywhere: %.1f s for the %d rates' scores, against %.1f s for the default's whole call).",
                picks$label, picks$form, picks$mult, picks$mult_whole, picks$t_whole, length(mults), picks$t_default), "",
        "`mae`: the picked model's MAE over the fitted model's (SE counting each gap as one unit); `linear`: each one's MAE",
        "over linear interpolation's; `crps`: mean CRPS ratio; `coverage`: raw 90%, fitted -> picked.", "",
        "`scorer`: the pick's hidden gaps, in the fitting stretch or anywhere in the series.", "",
        "| scorer | series | group | entries | gaps | mae (SE) | linear: fitted -> picked | crps | coverage |", "|---|---|---|---|---|---|---|---|---|",
        sprintf("| %s | %s | %s | %d | %d | %.3f (%s) | %.3f -> %.3f | %.3f | %.1f%% -> %.1f%% |", vs$scorer, vs$series, vs$group, vs$entries,
                vs$gaps, vs$mae, ifelse(is.na(vs$se), "-", sprintf("%.3f", vs$se)), vs$linear_before, vs$linear_after,
                vs$crps, 100 * vs$cover_before, 100 * vs$cover_after), "")
if (length(where)) {
  wt <- do.call(rbind, where)
  key <- unique(wt[, c("series", "gaps", "hidden")])
  md <- c(md, "## Where the gaps are (imputeTS's series)", "",
          "MAE over linear interpolation's at each multiplier on the real gaps, on random gaps (series_long.R's law, 10% of",
          "the frames, up to the longest real gap) hidden over the whole *Complete* series, and on random gaps hidden in the",
          "fitting stretch only (where the model was fitted and its form chosen on hidden gaps).", "",
          paste0("| series | gaps | hidden | ", paste(sprintf("x%g", mults), collapse = " | "), " |"),
          paste0("|---|---|---|", strrep("---|", length(mults))),
          vapply(seq_len(nrow(key)), function(r) {
            d <- wt[wt$series == key$series[r] & wt$gaps == key$gaps[r], ]
            sprintf("| %s | %s | %d | %s |", key$series[r], key$gaps[r], key$hidden[r],
                    paste(sprintf("%.3f", d$ratio_linear[match(mults, d$mult)]), collapse = " | "))
          }, ""), "")
}
out_file <- if (identical(names_run, default)) "series_level_rate.md" else
  paste0("series_level_rate_", paste(names_run, collapse = "_"), ".md")
dir.create("bench/results", showWarnings = FALSE, recursive = TRUE)
writeLines(md, file.path("bench/results", out_file))
cat(md, sep = "\n")
