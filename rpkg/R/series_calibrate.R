# Self-calibration of a whole-series imputation (impute_series()): hide
# further observed stretches of the series itself, with lengths drawn from the
# series' own gaps, impute them with the fitted model, and widen (or narrow)
# the per-entry intervals by the conformal quantile of how far the hidden
# truths fell outside, per gap-length group. calibrate() and
# apply_calibration() dispatch here for a ditimpute_series_imputation.

# The length of the run of missing values each entry belongs to (0 where
# observed), per variable: T x d integer matrix.
run_lengths <- function(miss) {
  ids <- run_ids(miss)
  runs <- ids > 0
  ids[runs] <- tabulate(ids[runs])[ids[runs]]
  ids
}

# The run of missing values each entry belongs to, numbered over the whole
# T x d matrix (0 where observed).
run_ids <- function(miss) {
  out <- matrix(0L, nrow(miss), ncol(miss))
  first <- 0L
  for (j in seq_len(ncol(miss))) {
    r <- rle(miss[, j])
    id <- cumsum(r$values)
    out[, j] <- rep(ifelse(r$values, first + id, 0L), r$lengths)
    first <- first + max(c(0L, id))
  }
  out
}

# A group's intervals are narrowed by its own (negative) conformal factor only
# when its scores come from at least this many hidden gaps: the values of one
# gap are strongly correlated, so a group of a few long gaps is a sample of a
# few, and narrowing on sunspot.month's few long gaps took their coverage from
# 87.7% to 63.8% (bench/results/series_long_narrowing_2026-11-25.md). From
# 200 gaps of one or a few values, the coverage a factor gives is known to
# about sqrt(0.9 * 0.1 / 200) = 2 percentage points.
series_narrow_min_gaps <- 200L
# The factors applied, from the conformal factors `fitted` of the groups and,
# last, of all scores pooled, with the hidden gaps each rests on (`gaps`): a
# factor that widens, or one that narrows on at least series_narrow_min_gaps
# gaps, as fitted. A group of fewer gaps whose own factor narrows is narrowed
# by the smaller of its own narrowing and the pooled factor's (not at all when
# the pooled factor widens or rests on fewer gaps itself): part of what makes
# Gaussian intervals too wide is the errors' shape, which every gap length
# shares (at 50% they over-cover on nearly every group of the long series,
# bench/results/series_long_tails*.md), and the pooled factor rests on every
# hidden gap (bench/results/series_long_narrowing_pooled_*.md).
series_factors <- function(fitted, gaps) {
  ok <- fitted >= 0 | gaps >= series_narrow_min_gaps
  k <- length(fitted)
  pooled <- if (ok[k]) min(fitted[k], 0) else 0
  ifelse(ok, fitted, pmin(0, pmax(fitted, pooled)))
}

# One calibration mask: per variable, stretches of observed frames with
# lengths drawn from `lens` until about `share` of its observed values are
# hidden (at least one stretch, at most half of them). A length that finds
# no room is halved. Each stretch starts uniformly among the frames where it
# fits. While the free frames (observed, not yet hidden) form at most
# `max_runs` runs, they are kept as runs (first frame, length, in time
# order) and the start is drawn among all fitting starts (draw_in_runs()):
# time in the number of runs per stretch. Past that (series of many thousand gaps, e.g. 600,000
# frames with 10% missing at random), a start is drawn uniformly on the whole
# series until one fits (uniform among the fitting starts as well;
# draw_in_runs() on the free runs if 64 draws miss), so a stretch costs about its length. The
# former cap of 100 stretches per round (`max_stretches = 100`) hid 1.0-5.7%
# instead of 10% of 17,420-35,064-frame series, compared in the same run in
# bench/results/series_calibration_share.md.
#
# `ends` (NULL, or one entry per length: "lead", "trail" or "") marks the
# lengths that are a variable's own leading or trailing run of missing
# values: a stretch drawn with such a length is placed at the same end of
# the observed frames, where the model extrapolates as it must in the run
# itself (series_end_stretch(): from an origin up to its length inwards, in
# observed values, those beyond it dropped, returned as the mask's attribute "dropped":
# missing in the version, not scored), when the end frame is still free,
# else anywhere as the others. `taken` (NULL or like `miss`): values marked
# missing in `miss` that are observed but hidden already (the whole-frame
# stretches of series_round_mask()), which stop an end stretch where a
# missing value is stepped over. With no ends the draws are unchanged. The
# missing frames an end stretch steps over are the mask's attribute
# "bridge", so that a scorer can count the stretch as one gap.
series_calibration_mask <- function(miss, lens, share, max_runs = 5000L, max_stretches = Inf, ends = NULL,
                                    taken = NULL) {
  n_time <- nrow(miss)
  mask <- matrix(FALSE, n_time, ncol(miss))
  dropped <- bridge <- mask
  for (j in seq_len(ncol(miss))) {
    n_obs <- sum(!miss[, j])
    target <- min(max(1, round(share * n_obs)), floor(n_obs / 2))
    free <- !miss[, j]
    observed <- if (is.null(taken)) free else free | taken[, j]  # what an end stretch cannot step over
    runs <- free_runs(free)
    edge <- if (any(free)) range(which(free)) else c(NA_integer_, NA_integer_)  # the first and last observed frames
    hidden <- 0L
    stretches <- 0L
    while (hidden < target && stretches < max_stretches) {
      stretches <- stretches + 1L
      k <- sample.int(length(lens), 1L)
      len <- min(lens[k], floor(n_obs / 2))
      s <- NA_integer_
      hide <- NULL
      at_end <- if (is.null(ends)) NULL else series_end_stretch(free, observed, edge, ends[k], len)
      if (!is.null(at_end)) {
        hide <- at_end$hide
        len <- length(hide)
        bridge[setdiff(seq(min(hide), max(hide)), hide), j] <- TRUE  # missing frames inside it
        dropped[at_end$drop, j] <- TRUE
        free[at_end$drop] <- FALSE
        runs <- free_runs(replace(free, hide, FALSE))
      } else if (length(runs$first) <= max_runs) {
        d <- draw_in_runs(runs, len)
        if (is.null(d)) break
        s <- d$start
        len <- d$len
        # Run i loses the stretch: what is left before and after it stays free.
        i <- d$run
        first <- runs$first[i]
        before <- s - first
        after <- first + runs$size[i] - (s + len)
        runs <- list(first = c(runs$first[seq_len(i - 1L)], if (before > 0) first, if (after > 0) s + len,
                               runs$first[-seq_len(i)]),
                     size = c(runs$size[seq_len(i - 1L)], if (before > 0) before, if (after > 0) after,
                              runs$size[-seq_len(i)]))
      } else {
        for (attempt in seq_len(64L)) {
          if (len > n_time) break
          cand <- sample.int(n_time - len + 1L, 1L)
          if (all(free[cand:(cand + len - 1L)])) {
            s <- cand
            break
          }
        }
        if (is.na(s)) {
          d <- draw_in_runs(free_runs(free), len)
          if (is.null(d)) break
          s <- d$start
          len <- d$len
        }
      }
      if (is.null(hide)) hide <- s:(s + len - 1L)
      mask[hide, j] <- TRUE
      free[hide] <- FALSE
      hidden <- hidden + len
    }
  }
  if (any(dropped)) attr(mask, "dropped") <- dropped
  if (any(bridge)) attr(mask, "bridge") <- bridge
  mask
}

# The interior runs of frames where every variable is missing (an outage of
# all sensors at once), as the lengths of those runs and the share of the
# series' missing entries they hold; none for one variable.
series_joint_gaps <- function(miss) {
  if (ncol(miss) < 2 || !any(miss)) return(list(lens = integer(0), share = 0, other = integer(0)))
  all_out <- rowSums(miss) == ncol(miss)
  r <- rle(all_out)
  last <- cumsum(r$lengths)
  first <- last - r$lengths + 1L
  inner <- r$values & first > 1L & last < nrow(miss)
  lens <- as.integer(r$lengths[inner])
  # the lengths of the other gaps, per variable, outside the whole-frame ones
  rest <- miss & !all_out
  other <- as.integer(unlist(lapply(seq_len(ncol(miss)), function(j) {
    rj <- rle(rest[, j])
    rj$lengths[rj$values]
  })))
  list(lens = lens, share = sum(lens) * ncol(miss) / sum(miss), other = other)
}

# One calibration mask that copies how the series' gaps fall across its
# variables: the share `joint$share` of the hidden values in stretches where
# every variable is hidden at once (lengths drawn from the series' own
# whole-frame gaps, `joint$lens`, on frames where every variable is
# observed), the rest per variable (series_calibration_mask()). The per-variable
# stretches alone leave the other variables observed beside every hidden
# stretch, easier than an outage of all of them: on four pollutants of a
# station whose gaps were all whole-frame, calibration on them took 90%
# intervals from 84.5% to 80.7% coverage (bench/results/series_calibration_joint.md;
# a reviewer's run of the same window with other seeds: to 76.8%).
# With no whole-frame gap (or one variable), series_calibration_mask() as it was.
series_round_mask <- function(miss, lens, share, joint, ends = NULL) {
  if (!length(joint$lens) || joint$share <= 0) return(series_calibration_mask(miss, lens, share, ends = ends))
  p <- min(1, joint$share)
  # Whole-frame stretches go on frames where any variable is observed (an
  # outage hides whatever was observed there): on frames where all are
  # observed only, a variable observed every other frame cut every stretch
  # to one frame.
  whole <- series_calibration_mask(matrix(rowSums(miss) == ncol(miss), ncol = 1), joint$lens, share * p)
  jm <- matrix(whole[, 1], nrow(miss), ncol(miss)) & !miss
  # The rest per variable, with the lengths of the gaps that are not whole
  # frames (each outage's length counted once per variable had made most of
  # them outage-long); none when those gaps are too few to hide a value.
  other <- if (is.null(ends)) joint$other else lens
  if (!length(other) || round(share * (1 - p) * sum(!miss)) < ncol(miss)) return(jm)
  # (an end stretch steps over missing values but not over those the
  # whole-frame stretches hid: `taken`)
  rest <- series_calibration_mask(miss | jm, other, share * (1 - p), ends = ends, taken = jm)
  out <- rest | jm
  attr(out, "dropped") <- attr(rest, "dropped")
  attr(out, "bridge") <- attr(rest, "bridge")
  out
}

# A stretch of `len` observed values at a variable's end of its observed
# frames (`edge`: the first and last of them; `end`: "lead" or "trail"),
# shortened to the free values there, moved inwards by a uniform 0 .. len - 1
# free values (so that the rounds extrapolate from different origins; the
# values it moved over are dropped: missing in the version, not scored): the
# frames it hides, in time order, and those dropped; NULL when `end` is
# neither or the end frame is taken already. Counted in observed values
# (`obs`), stepping over the frames the variable misses, as
# series_forecast_masks() counts its stretches: counted in frames, a value
# missing among the last frames cut every round's stretch to the values
# after it, so that with a trailing gap of 9 and frame 87 of 98 missing all
# ten rounds hid frames 88-89 only (a review, session 78). A value hidden by
# another stretch of the round (`obs` TRUE, `free` FALSE) stops it. Without
# a missing frame near the end the draws and frames are the former ones.
series_end_stretch <- function(free, obs, edge, end, len) {
  if (!end %in% c("lead", "trail") || anyNA(edge)) return(NULL)
  at <- if (end == "trail") edge[2] else edge[1]
  if (!free[at]) return(NULL)
  # the free values from the end inwards, up to 2 len - 1 of them: frames
  # up to the first value taken, the observed ones among them (one pass,
  # linear in the frames passed: grown one value at a time, a trailing gap
  # of 50,000 of 600,000 frames took 8 s, a review)
  frames <- if (end == "trail") seq.int(at, 1L) else seq.int(at, length(free))
  stop_at <- match(FALSE, free[frames] | !obs[frames])
  if (!is.na(stop_at)) frames <- frames[seq_len(stop_at - 1L)]
  room <- frames[obs[frames]]
  room <- room[seq_len(min(length(room), 2L * len - 1L))]
  len <- min(len, length(room))
  shift <- sample.int(length(room) - len + 1L, 1L) - 1L
  list(hide = sort(room[shift + seq_len(len)]), drop = room[seq_len(shift)])
}

# TRUE where a missing entry (TRUE in the T x d matrix `m`) lies in its
# variable's leading or trailing run of missing values.
end_runs <- function(m) {
  matrix(apply(m, 2, function(col) cumprod(col) == 1 | rev(cumprod(rev(col))) == 1), nrow(m), ncol(m)) & m
}

# The runs of TRUE in a logical vector: first index and length, in order.
free_runs <- function(free) {
  r <- rle(free)
  list(first = (cumsum(r$lengths) - r$lengths + 1L)[r$values], size = r$lengths[r$values])
}

# A start drawn uniformly among all starts, in `runs`, where a stretch of
# `len` fits (the k-th start in time order for k uniform), `len` halved while
# none fits: the start, the length used and the run it lies in; NULL when not
# even one frame is free.
draw_in_runs <- function(runs, len) {
  repeat {
    room <- pmax(runs$size - len + 1L, 0L)
    if (sum(room) > 0 || len <= 1) break
    len <- len %/% 2L
  }
  n_starts <- sum(room)
  if (n_starts == 0 || len < 1) return(NULL)
  k <- sample.int(n_starts, 1L)
  upto <- cumsum(room)
  i <- findInterval(k - 1, upto) + 1L
  list(start = runs$first[i] + k - (upto[i] - room[i]) - 1L, len = len, run = i)
}

# How far each value y lies out of its interval [lower, upper], in
# half-widths (<= 0 inside), on the model's scale of its variable (`cols`;
# Box-Cox, log or bounded where transformed: the intervals are symmetric
# there): the score of the gaps' self-calibration and of predict()'s.
model_scale_scores <- function(lower, upper, y, cols, tr) {
  lo <- on_model_scale(lower, cols, tr)
  hi <- on_model_scale(upper, cols, tr)
  y <- on_model_scale(y, cols, tr)
  pmax(lo - y, y - hi) / pmax((hi - lo) / 2, .Machine$double.eps)
}

# Intervals moved out by q half-widths each (in by a negative q) on the
# model's scale, and mapped back: list(lower, upper).
widen_on_model_scale <- function(lower, upper, q, cols, tr) {
  lo <- on_model_scale(lower, cols, tr)
  hi <- on_model_scale(upper, cols, tr)
  half <- (hi - lo) / 2
  list(lower = from_model_scale_vec(lo - q * half, cols, tr), upper = from_model_scale_vec(hi + q * half, cols, tr))
}

calibrate_series <- function(object, missing, level, groups, n_groups, n_rounds, share, seed, threads,
                             call = rlang::caller_env()) {
  if (!is.null(object$calibration)) abort_input("object", "is already calibrated.", call = call)
  model <- object$model
  dit <- inherits(model, "ditimpute_series_dit_model")
  if (!dit && !inherits(model, "ditimpute_series_model")) {
    abort_input("object", "must be an imputation by impute_series(): its fitted model re-imputes the rounds.", call = call)
  }
  if (dit) check_torch(call = call)
  v <- object$x
  miss <- object$missing
  lens <- if (is.null(missing)) object$gaps$length else missing
  # A variable's own leading or trailing run of missing values is mimicked
  # at that end (series_calibration_mask(ends =)), and the hidden values of
  # such stretches form a group of their own, applied to the series' end
  # gaps: extrapolated intervals miss differently from bridged ones
  # (bench/results/series_ends_calibrate.md). Series without end gaps (or
  # with `missing` given) draw as before.
  runs <- if (is.null(missing)) series_missing_runs(replace(v, miss, NA))
  ends <- NULL
  if (!is.null(runs) && any(nzchar(runs$end))) {
    lens <- runs$length
    ends <- runs$end
  }
  if (!length(lens)) {
    abort_input("missing", "the series has no gap to take lengths from; give gap lengths to draw, e.g. missing = c(1, 12).",
                call = call)
  }
  if (!is.numeric(lens) || anyNA(lens) || any(lens < 1) || any(lens != round(lens))) {
    abort_input("missing", "must be NULL (the series' own gap lengths) or whole numbers >= 1, the gap lengths to draw.",
                call = call)
  }
  lens <- as.integer(lens)
  # a gap no shorter than the series leaves nothing observed beside it to
  # impute from (a user review: missing = 100 on 60 frames hid half the
  # values and was reported as gaps of 100 frames)
  if (!is.null(missing) && any(lens >= nrow(v))) {
    abort_input("missing", sprintf("has gap lengths of %d frames or more, the length of the series: give lengths below %d.",
                                   nrow(v), nrow(v)), call = call)
  }
  if (is.null(share)) share <- min(0.1, max(mean(miss), 0.02))
  # open at 0: no value hidden would give no calibration case
  share <- check_number(share, lower = 0, upper = 0.5, open = FALSE, arg = "share", call = call)
  if (share == 0) abort_input("share", "must be above 0 (and at most 0.5): a share of 0 hides no value to calibrate on.",
                              call = call)
  n_samples <- object$n_samples
  # One round's scores: how far out of its interval each hidden value lies.
  calibration_round_scores <- function(r, mask, xr, iv) {
    idx <- which(mask)
    # Scores on the model's scale (Box-Cox or log where transformed: intervals are symmetric there).
    list(score = model_scale_scores(iv$lower[idx], iv$upper[idx], v[idx], col(v)[idx], model$transform),
         gap = run_lengths(is.na(xr))[idx], run = run_ids(is.na(xr))[idx], round = rep(r, length(idx)),
         end = if (is.null(ends)) logical(length(idx)) else end_runs(is.na(xr))[idx],  # no end gaps: none
         hidden = length(idx) / sum(!miss))
  }
  # The GP's rounds need no draws: they go to the core as many at a time as
  # there are threads (in parallel, each on one; a mask and a copy of the
  # series each, made per batch), the same intervals whatever the thread
  # count; round r's mask comes from its own seed. A DiT's rounds draw
  # n_samples paths each with the trained network, one round at a time on
  # all threads (the network is neither refitted nor told which values are
  # hidden: they were among its training windows' values, see ?calibrate).
  batches <- split(seq_len(n_rounds), ceiling(seq_len(n_rounds) / max(1L, if (dit) 1L else threads)))
  # Whole-frame gaps (all variables out at once) are copied as such (a
  # `missing` given draws per variable as before).
  joint <- if (is.null(missing)) series_joint_gaps(miss) else list(lens = integer(0), share = 0)
  rounds <- unname(unlist(lapply(batches, function(rs) {
    masks <- lapply(rs, function(r) {
      with_local_seed(sub_seed(seed, 2 * r), series_round_mask(miss, lens, share, joint, ends = ends))
    })
    # Frames beyond an end stretch are missing in its version, not scored.
    versions <- lapply(masks, function(mask) replace(v, mask | (attr(mask, "dropped") %||% FALSE), NA))
    masks <- lapply(masks, function(mask) {
      attr(mask, "dropped") <- NULL
      mask
    })
    bands <- if (dit) series_dit_bands(model, versions, level, n_samples, sub_seed(seed, 1), threads, ids = rs, call = call) else
      series_model_bands(model, versions, level, threads, call = call)
    Map(calibration_round_scores, rs, masks, versions, bands)
  }), recursive = FALSE))
  scores <- list(entry = unlist(lapply(rounds, `[[`, "score")), region = NA_real_)
  features <- list(gap = unlist(lapply(rounds, `[[`, "gap")), pattern = character(0))
  features$n <- length(features$gap)
  round_of <- unlist(lapply(rounds, `[[`, "round"))
  run_of <- unlist(lapply(rounds, `[[`, "run"))
  gap_of <- paste(round_of, run_of)  # the hidden gap of each score
  # The end group: the scores of hidden end stretches, when the series has
  # end gaps, groups are asked for, and both the end stretches' scores and
  # the others' are enough for a conformal factor at this level; the
  # gap-length groups are chosen on the other scores.
  at_end <- unlist(lapply(rounds, `[[`, "end"))
  end_group <- !is.null(ends) && groups != "none" && sum(at_end) >= min_group_size(level) &&
    sum(!at_end) >= min_group_size(level)
  inner <- if (end_group) !at_end else rep(TRUE, length(at_end))
  inner_features <- list(gap = features$gap[inner], pattern = character(0), n = sum(inner))
  grouping <- choose_groups(inner_features, groups, n_groups, level, list(entry = scores$entry[inner], region = NA_real_),
                            call = call)
  if (grouping$type == "pattern") abort_input("groups", "a series is calibrated by \"gap\" or \"none\".", call = call)
  g <- assign_groups(grouping, features)
  labels <- grouping$labels
  if (end_group) {
    labels <- c(labels, "end gaps")
    g[at_end] <- length(labels)
    grouping$end_group <- length(labels)
  }
  # The conformal factor of each group and of all scores pooled (last), and
  # the factors applied (series_factors()), on the scores of the rounds in `use`.
  n_gaps <- function(sel) length(unique(gap_of[sel]))
  factors_on <- function(use) {
    fitted <- c(vapply(seq_along(labels), function(b) conformal_quantile(scores$entry[use & g == b], level), 0),
                conformal_quantile(scores$entry[use], level))
    gaps <- c(vapply(seq_along(labels), function(b) n_gaps(use & g == b), 0L), n_gaps(use))
    list(fitted = fitted, gaps = gaps, interval = series_factors(fitted, gaps))
  }
  all_rounds <- factors_on(rep(TRUE, length(g)))
  # Cross-fitted coverage: factors from the odd rounds scored on the even ones
  # and back (the row "all": the pooled factor applied to every score).
  fold <- 1L + round_of %% 2L
  fold_q <- if (n_rounds >= 2) lapply(1:2, function(f) factors_on(fold != f)$interval)
  diag <- do.call(rbind, lapply(c(seq_along(labels), 0L), function(b) {
    in_g <- if (b == 0) rep(TRUE, length(g)) else g == b
    cross <- rep(NA, length(g))
    if (n_rounds >= 2) {
      for (f in 1:2) {
        sel <- in_g & fold == f
        cross[sel] <- scores$entry[sel] <= fold_q[[f]][if (b == 0) length(labels) + 1L else b]
      }
    }
    raw <- binom_row(scores$entry[in_g] <= 0)
    cal <- binom_row(cross[in_g])
    data.frame(group = if (b == 0) "all" else labels[b], entries = sum(in_g), nominal = level,
               interval_raw = raw[["coverage"]], interval_cal = cal[["coverage"]], interval_cal_lower = cal[["lower"]],
               interval_cal_upper = cal[["upper"]], stringsAsFactors = FALSE)
  }))
  structure(list(object = model, level = level, n_samples = n_samples, grouping = grouping,
                 factors = data.frame(group = c(labels, "pooled"), interval = all_rounds$interval,
                                      fitted = all_rounds$fitted, gaps = all_rounds$gaps, stringsAsFactors = FALSE),
                 diagnostics = diag, n_rounds = n_rounds, share = share, gap_lengths = lens,
                 hidden_share = mean(vapply(rounds, `[[`, 0, "hidden")),
                 scores = data.frame(round = round_of, gap = features$gap, run = run_of,
                                     group = labels[g], score = scores$entry, stringsAsFactors = FALSE),
                 n_cases = length(scores$entry), method = object$method, model_key = model_key(model)),
            class = c("ditimpute_series_calibration", "ditimpute_calibration"))
}

# Moves each imputed entry's interval by its gap-length group's applied factor
# (series_factors()).
# Interval ends of transformed variables go to the model's scale and back.
apply_series_calibration <- function(imputation, calibration, call = rlang::caller_env()) {
  if (!inherits(imputation, "ditimpute_series_imputation")) {
    abort_input("imputation", "must be a result of impute_series() for a series calibration.", call = call)
  }
  miss <- imputation$missing
  gap <- run_lengths(miss)
  g <- assign_groups(calibration$grouping, list(gap = gap[miss], n = sum(miss)))
  # Entries of a variable's leading or trailing gap take the end group's factor.
  if (!is.null(calibration$grouping$end_group)) g[end_runs(miss)[miss]] <- calibration$grouping$end_group
  q <- calibration$factors$interval[g]
  tr <- imputation$model$transform %||% list(lambda = rep(NA_real_, ncol(miss)))
  moved <- widen_on_model_scale(imputation$lower[miss], imputation$upper[miss], q, col(miss)[miss], tr)
  imputation$lower[miss] <- moved$lower
  imputation$upper[miss] <- moved$upper
  if (nrow(imputation$record)) {
    ij <- cbind(imputation$record$frame, match(imputation$record$variable, colnames(imputation$x)))
    imputation$record$lower <- imputation$lower[ij]
    imputation$record$upper <- imputation$upper[ij]
  }
  imputation$method <- paste(imputation$method, "(calibrated)")
  imputation$calibration <- calibration
  # whether any factor applied to an imputed entry moved its interval
  # (print() says when none did)
  imputation$calibration_moved <- any(q != 0)
  imputation
}

# Gap-length group labels shortened for the printed table ("gap > 2, gap <=
# 13" as "3-13", "gap <= 2" as "1-2", "gap > 13" as "> 13"); other labels
# ("end gaps", "all") as they are; one group of all lengths "all lengths".
series_gap_label <- function(lab) {
  out <- lab
  both <- grepl("^gap > [0-9]+, gap <= [0-9]+$", lab)
  lo <- as.integer(sub("^gap > ([0-9]+), .*$", "\\1", lab[both])) + 1L
  out[both] <- ifelse(lo == as.integer(sub("^.*<= ([0-9]+)$", "\\1", lab[both])), as.character(lo),
                      paste0(lo, "-", sub("^.*<= ([0-9]+)$", "\\1", lab[both])))
  upto <- grepl("^gap <= [0-9]+$", lab)
  out[upto] <- ifelse(sub("^gap <= ", "", lab[upto]) == "1", "1", paste0("1-", sub("^gap <= ", "", lab[upto])))
  above <- grepl("^gap > [0-9]+$", lab)
  out[above] <- paste0("> ", sub("^gap > ", "", lab[above]))
  out[lab == "all gap"] <- "all lengths"
  out
}

#' @export
print.ditimpute_series_calibration <- function(x, ...) {
  check_dots(environment(), "print()", also = print_dots)
  width <- getOption("width", 80)
  writeLines(strwrap(sprintf("<ditimpute_series_calibration> %s at level %g: %d rounds hiding %.0f%% of the observed values (asked: %.0f%%) in gaps of %s frames (%d scored entries), groups by %s",
                             x$method, x$level, x$n_rounds, 100 * x$hidden_share, 100 * x$share,
                             format_range(x$gap_lengths), x$n_cases, x$grouping$type), width = width, exdent = 2))
  d <- x$diagnostics
  tab <- data.frame(gap_length = series_gap_label(d$group), entries = d$entries, interval_raw = pct_text(d$interval_raw),
                    interval_calibrated = paste(pct_text(d$interval_cal), ci_text(d$interval_cal_lower, d$interval_cal_upper)),
                    gaps = x$factors$gaps %||% NA_integer_, widen = sprintf("%.3g", x$factors$interval),
                    conformal = sprintf("%.3g", x$factors$fitted %||% x$factors$interval))
  # one group: its row and the row of all scores say the same
  if (nrow(tab) == 2 && identical(unname(unlist(tab[1, -1])), unname(unlist(tab[2, -1])))) tab <- tab[1, ]
  print(tab, row.names = FALSE, right = FALSE)
  writeLines(strwrap(sprintf(paste("Calibrated coverage cross-fitted between odd and even rounds; 95%% Clopper-Pearson",
                                   "intervals in brackets (entries of one gap are correlated: a guide only). widen:",
                                   "interval change in half-widths, the group's conformal factor where it is positive",
                                   "or the group has at least %d hidden gaps; where it is negative on fewer, at most",
                                   "the pooled factor's narrowing (none when that widens or rests on fewer than %d",
                                   "gaps): a few correlated gaps cannot show that intervals are too wide, all the",
                                   "groups' gaps can."), series_narrow_min_gaps, series_narrow_min_gaps),
                     width = width))
  invisible(x)
}

#' @export
plot.ditimpute_series_calibration <- function(x, ...) {
  check_dots(environment(), "plot()")
  d <- x$diagnostics
  df <- rbind(data.frame(group = d$group, when = "raw", coverage = d$interval_raw, lower = NA_real_, upper = NA_real_),
              data.frame(group = d$group, when = "calibrated", coverage = d$interval_cal, lower = d$interval_cal_lower,
                         upper = d$interval_cal_upper))
  df$when <- factor(df$when, levels = c("raw", "calibrated"))
  drawn(ggplot2::ggplot(df, ggplot2::aes(x = .data$group, y = .data$coverage, colour = .data$when)) +
    ggplot2::geom_hline(yintercept = x$level, linetype = 2) +
    ggplot2::geom_point(position = ggplot2::position_dodge(width = 0.4)) +
    ggplot2::geom_errorbar(ggplot2::aes(ymin = .data$lower, ymax = .data$upper), width = 0.2, na.rm = TRUE,
                           position = ggplot2::position_dodge(width = 0.4)) +
    ggplot2::labs(x = NULL, y = "interval coverage of hidden values", colour = NULL,
                  title = sprintf("Series self-calibration at nominal %g%%", 100 * x$level)) +
    ggplot2::scale_colour_manual(values = coverage_colours, name = NULL) + plot_theme())
}
