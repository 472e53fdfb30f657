# The model of impute_series(method = "gp"): a structural time-series model
# (local level or local linear trend, smooth term, quasi-periodic season,
# nugget; or the stationary model around a linear trend), fitted by maximum
# likelihood and conditioned on exactly by the Kalman filter and smoother of
# the core (cpp/include/ditimpute/structural.hpp). R prepares the data
# (transform, centre, scale), calls the core once to fit every candidate and
# once per imputation, and maps the results back.

# ------------------------------------------------------------- transform --

# Per variable: the scale it is modelled on, list(lambda, floor): lambda NA
# is the data's own scale, 0 the log, > 0 a Box-Cox power; floor is the
# smallest observed value, below which a Box-Cox scale continues as a log
# (transform_scale()). "auto": a variable whose observed values are all
# positive and span at least an order of magnitude (largest / smallest >= 10)
# -- concentrations, counts, prices, growth -- gets a Box-Cox scale with
# lambda estimated (boxcox_lambda(); lambda 1 is the data's scale continued
# as a log below the smallest value), whatever the likelihood on the data's
# scale says, because a model on that scale can put imputations and interval
# bounds below zero (as imputeTS::na_seadec does on BeijingAir's ozone: 103
# values per repetition in bench/results/series_long.md). No skewness
# condition: it put airmiles' (skewness 0.68) 90% bounds at -1,001 and left
# airquality's Ozone (1.21) on its own scale whenever 15% more of it was
# hidden (bench/results/series_fresh.md). "boxcox": every variable (all must
# be positive), "log": lambda 0 for every variable.
#
# `bounds` (series_bounds(): lower and upper per variable, NA where none):
# a bounded variable (percentages, shares, humidity) is modelled on the logit
# of its position between the bounds widened by a margin m (a share of
# their distance) on each side, with m chosen like lambda below (the
# series' one-frame changes most Gaussian, Jacobian included, on a grid from
# 1e-4 to 0.1): values on a bound (humidity at 100%) then map to finite values
# that need not be outliers, which a fixed squeeze (Smithson and Verkuilen
# 2006) made them. The map back clamps to the bounds, so no imputation or
# interval end leaves them. It replaces the Box-Cox scale for that variable.
# A one-sided bound (c(0, Inf): wind speeds, rainfall, counts with zeros)
# has no range to take a share of: the variable is modelled on
# log(y - lower + offset) (or -log(upper - y + offset)), the offset m times
# the median distance of the observed values from the bound, m chosen the
# same way on a grid from 1e-4 to 10; `margin` then holds the offset itself,
# in the data's units.
series_transforms <- function(v, transform, bounds = NULL, call = rlang::caller_env()) {
  pos <- apply(v, 2, function(col) all(col[!is.na(col)] > 0))
  lambda <- stats::setNames(rep(NA_real_, ncol(v)), colnames(v))
  if (is.null(bounds)) bounds <- list(lower = lambda, upper = lambda)
  free <- is.na(bounds$lower)  # the variables a Box-Cox or log scale can apply to
  if (transform %in% c("log", "boxcox") && !all(pos[free])) {
    j <- which(free & !pos)[1]
    abort_input("transform", sprintf("\"%s\" needs positive values; variable \"%s\" has values <= 0 (use transform = \"none\", \"auto\" to transform only the positive variables that span an order of magnitude, or bounds = c(0, Inf) for non-negative data with zeros).",
                                     transform, colnames(v)[j]), call = call)
  }
  if (transform == "log") lambda[free] <- 0
  if (transform == "boxcox") for (j in which(free)) lambda[j] <- boxcox_lambda(v[, j])
  if (transform == "auto") {
    for (j in which(free & pos)) {
      col <- v[, j]
      obs <- col[!is.na(col)]
      if (length(obs) == 0) next
      if (max(obs) / min(obs) >= 10) {
        lambda[j] <- boxcox_lambda(col)
      } else if (is.finite(boxcox_auto_lr)) {
        prof <- boxcox_profile(col)
        if (prof$lr_additive >= boxcox_auto_lr) lambda[j] <- prof$lambda
      }
    }
  }
  floor <- ifelse(is.na(lambda), NA_real_, apply(v, 2, function(col) if (all(is.na(col))) NA_real_ else min(col, na.rm = TRUE)))
  margin <- stats::setNames(rep(NA_real_, ncol(v)), colnames(v))
  for (j in which(!free)) margin[j] <- bounded_margin(v[, j], bounds$lower[[j]], bounds$upper[[j]])
  list(lambda = lambda, floor = stats::setNames(floor, colnames(v)),
       lower = bounds$lower, upper = bounds$upper, margin = margin)
}

# The bounded scale and back (clamped to the bounds), and its log-derivative
# d z / d y. Two bounds: the logit of the position within
# [lo - m r, hi + m r] (r = hi - lo). One bound (the other infinite):
# log(y - lo + m) above a lower bound, -log(hi - y + m) below an upper one
# (m an offset in the data's units).
bounded_position <- function(a, lo, hi, m) (a - lo + m * (hi - lo)) / ((hi - lo) * (1 + 2 * m))
bounded_scale <- function(a, lo, hi, m) {
  if (is.infinite(hi)) return(log(a - lo + m))
  if (is.infinite(lo)) return(-log(hi - a + m))
  stats::qlogis(bounded_position(a, lo, hi, m))
}
bounded_scale_inverse <- function(z, lo, hi, m) {
  if (is.infinite(hi)) return(pmax(lo - m + exp(z), lo))
  if (is.infinite(lo)) return(pmin(hi + m - exp(-z), hi))
  pmin(pmax(lo - m * (hi - lo) + (hi - lo) * (1 + 2 * m) * stats::plogis(z), lo), hi)
}
bounded_log_jacobian <- function(a, lo, hi, m) {
  if (is.infinite(hi)) return(-log(a - lo + m))
  if (is.infinite(lo)) return(-log(hi - a + m))
  q <- bounded_position(a, lo, hi, m)
  -log((hi - lo) * (1 + 2 * m)) - log(q) - log1p(-q)
}

# The margin under which the one-frame changes on the bounded scale look
# most Gaussian (boxcox_lambda()'s profile likelihood, Jacobian included):
# two bounds, a share m of hi - lo on each side, on a grid from 1e-4 to 0.1;
# one bound, an offset m times the observed values' median distance from it
# (their mean distance when the median is 0; 1 when all lie on the bound), m
# on a grid from 1e-4 to 10 (at 10 the scale is close to the data's own).
# Never 0: the bounds themselves (interval ends clamped there, which the
# calibration maps to the model's scale again) must map to finite values.
#
# Values lying on a bound are a point mass, not values of a density: their
# log-Jacobian (-log m for a zero above a lower bound) grows without limit as
# the margin shrinks, so with enough of them the grid's smallest margin won
# whatever the rest of the data said (boot's coal counts, 29% zeros: offset
# 1e-4, 90% upper ends up to 1,540 for counts of at most 6; a humidity at
# 100% a fifth of the time: margin 1e-4, intervals 2.3 times as wide as
# without bounds; bench/results/series_bounded_point_mass.md). A value on a
# bound stands for the values between the bound and the nearest the data
# resolve (the smallest distance of an observed value
# from it: 1 for counts, 0.1 m/s for wind speeds recorded so): it counts the
# scale's mean slope over that stretch, log(|g(bound + delta) - g(bound)| /
# delta), which stays bounded as the margin shrinks (and is the Jacobian
# itself as delta goes to 0). Where the profile still prefers the grid's
# smallest margin or one that puts the bound closer to the data than delta
# (continuous data with a fifth or a third at zero, or hourly rain at zero
# 96% of the time: the point mass outweighs the values' shape at any
# resolution), the best margin at or above delta is taken, and if that is
# the smallest such margin (the profile still rising towards the bound),
# the grid's largest, the scale closest to the data's own, clamped at the
# bound. On series without values on a bound nothing changes; of the
# bounded benchmarks' series only discoveries' offset moved, in some
# repetitions (bench/results/series_bounded_point_mass.md).
bounded_margin <- function(col, lo, hi) {
  grid <- c(1e-4, 3e-4, 1e-3, 3e-3, 0.01, 0.03, 0.1)
  unit <- 1  # two bounds: m is a share of hi - lo, the scale's own unit
  obs <- col[!is.na(col)]
  if (is.infinite(hi - lo)) {
    dist <- abs(obs - if (is.infinite(hi)) lo else hi)
    unit <- if (length(dist) && stats::median(dist) > 0) stats::median(dist) else if (any(dist > 0)) mean(dist) else 1
    grid <- c(grid, 0.3, 1, 3, 10)
  }
  # A value within rounding of a bound lies on it (a humidity computed as
  # 100 - 1.4e-14 is one at 100: its distance would make the slope below
  # rounding noise), and the data's resolution at a bound is the smallest
  # distance of a value off it.
  bnd <- c(lo, hi)
  tol <- vapply(bnd, function(b) if (is.finite(b)) 1e-8 * max(abs(obs - b)) else 0, 0)
  on_at <- function(a, k) is.finite(bnd[k]) & abs(a - bnd[k]) <= tol[k]
  resolution <- function(k) {
    off <- abs(obs - bnd[k])[!on_at(obs, k)]
    if (is.finite(bnd[k]) && length(off)) min(off) else NA_real_
  }
  res <- c(resolution(1), resolution(2))
  log_jac <- function(m, later) {
    on <- cbind(on_at(later, 1), on_at(later, 2))
    s <- sum(bounded_log_jacobian(later[!on[, 1] & !on[, 2]], lo, hi, m * unit))
    for (k in which(colSums(on) > 0 & !is.na(res))) {
      step <- bounded_scale(bnd[k] + c(1, -1)[k] * res[k], lo, hi, m * unit) - bounded_scale(bnd[k], lo, hi, m * unit)
      s <- s + sum(on[, k]) * log(abs(step) / res[k])
    }
    s
  }
  on_bound <- c(any(on_at(obs, 1)), any(on_at(obs, 2))) & !is.na(res)
  best <- function(grid) changes_profile_max(col, grid, 0.01, function(m) bounded_scale(col, lo, hi, m * unit), log_jac)
  m <- best(grid)
  if (any(on_bound)) {
    # Offsets finer than the resolution put the bound's values further from
    # the nearest others than the data can tell apart: where the profile
    # prefers one (or the grid's smallest), the point mass is pulling the
    # margin down, and only the margins at or above the resolution are
    # weighed; if the smallest of those still wins, the largest is taken.
    allowed <- grid[grid * unit * (if (is.infinite(hi - lo)) 1 else hi - lo) >= max(res[on_bound])]
    if (m == grid[1] || !(m %in% allowed)) {
      m <- if (length(allowed) > 1) best(allowed) else grid[length(grid)]
      if (length(allowed) && m == allowed[1]) m <- grid[length(grid)]
    }
  }
  unit * m
}

# Validated `bounds` of impute_series() for the variables `vars`: NULL, a
# pair c(lower, upper) for every variable, or a named list of pairs for some;
# list(lower, upper) per variable (NA where none). Observed values must lie
# within their bounds.
series_bounds <- function(bounds, v, call = rlang::caller_env()) {
  if (is.null(bounds)) return(NULL)
  vars <- colnames(v)
  none <- stats::setNames(rep(NA_real_, length(vars)), vars)
  pair <- function(b, what) {
    if (!is.numeric(b) || length(b) != 2 || anyNA(b) || b[1] >= b[2] || b[1] == Inf || b[2] == -Inf ||
        all(is.infinite(b))) {
      abort_input("bounds", sprintf("%smust be two numbers c(lower, upper) with lower < upper, at most one of them infinite (c(0, Inf): values at or above 0).",
                                    if (is.null(what)) "" else paste0(what, " ")), call = call)
    }
    as.numeric(b)
  }
  out <- list(lower = none, upper = none)
  if (is.list(bounds)) {
    nm <- names(bounds)
    if (!length(bounds) || is.null(nm) || any(!nzchar(nm)) || anyDuplicated(nm)) {
      abort_input("bounds", "as a list must name each of its variables once, e.g. list(humidity = c(0, 100)).", call = call)
    }
    unknown <- setdiff(nm, vars)
    if (length(unknown)) {
      abort_input("bounds", sprintf("names \"%s\", which is not a variable of x (its variables: %s).", unknown[1],
                                    paste0('"', vars, '"', collapse = ", ")), call = call)
    }
    for (k in nm) {
      b <- pair(bounds[[k]], sprintf("the bounds of \"%s\"", k))
      out$lower[[k]] <- b[1]; out$upper[[k]] <- b[2]
    }
  } else {
    b <- pair(bounds, NULL)
    out$lower[] <- b[1]; out$upper[] <- b[2]
  }
  for (j in which(!is.na(out$lower))) {
    r <- suppressWarnings(range(v[, j], na.rm = TRUE))
    if (all(is.finite(r)) && (r[1] < out$lower[[j]] || r[2] > out$upper[[j]])) {
      abort_input("bounds", sprintf("variable \"%s\" has observed values from %s to %s, outside its bounds [%s, %s].",
                                    vars[j], format(r[1]), format(r[2]), format(out$lower[[j]]),
                                    format(out$upper[[j]])), call = call)
    }
  }
  out
}

# The Box-Cox lambda in [0, 1] (steps of 0.05) under which the series'
# one-frame changes look most Gaussian: the maximum of their Gaussian profile
# log-likelihood, Jacobian included. The changes, not the values, because
# the structural models are driven by increments (a level's random walk);
# the grid keeps the map between log (0) and the identity (1). On
# BeijingAir's PM2.5 and O3 it gives 0.35-0.40 (bench/results/series_long.md).
boxcox_lambda <- function(col) boxcox_profile(col)$lambda

# boxcox_lambda()'s lambda, and lr_additive: twice the profile
# log-likelihood's rise from lambda = 1 (the data's own scale) to it, the
# likelihood-ratio statistic against additive changes (0 with fewer than 10
# changes).
boxcox_profile <- function(col) {
  sum_log <- NULL  # sum(log(later)): the same at every lambda, so taken once
  grid <- seq(0, 1, by = 0.05)
  prof <- changes_profile(col, grid, function(l) boxcox(col, l), function(l, later) {
    if (is.null(sum_log)) sum_log <<- sum(log(later))
    (l - 1) * sum_log
  }, min_changes = boxcox_min_changes)
  # A long series observed sparsely (every other frame: no two values
  # adjacent) chooses lambda from the changes between its observed values in
  # order: on 3,000 Dongsi hours with every other hour removed they gave 0.4 /
  # 0.1 / 0.55 for PM2.5 / CO / O3 against 0.45 / 0.15 / 0.55 from every hour
  # (a code review; the set value would have been 0.5 for all three;
  # bench/boxcox_sparse.R, bench/results/boxcox_sparse.md).
  if (is.null(prof)) {
    obs <- col[!is.na(col)]
    if (length(obs) >= boxcox_min_sparse_values) return(boxcox_profile(obs))
    return(list(lambda = boxcox_short_lambda, lr_additive = 0))
  }
  list(lambda = grid[which.max(prof)], lr_additive = 2 * (max(prof) - prof[length(grid)]))
}

# Under boxcox_min_changes observed one-frame changes lambda is not chosen
# from them but set to boxcox_short_lambda: the square root, the
# variance-stabilising scale of counts, between the data's own scale and the
# log. It was the log (0), whose level swung with a first small value: a
# review's 12 values from 0.45 to 14.48 got a 90% interval of [2.81, 59.30]
# for one value between 12.30 and 13.60 ([10.96, 14.84] on the data's scale).
# On 160 short positive series of four kinds (bench/series_short_positive.R,
# bench/results/series_short_positive.md) 0.5 had the lowest MAE of the fixed
# choices and 91.6% coverage (85.0-100% by kind); 1 was worse on exponential
# growth and counts, and the profile from 4 changes on under-covered.
boxcox_min_changes <- 10L
boxcox_short_lambda <- 0.5
boxcox_min_sparse_values <- 30L

# A rule measured and not adopted (Inf: off): transform = "auto" would also
# put a positive variable that spans less than an order of magnitude on a
# Box-Cox scale when its one-frame changes reject additive changes (lambda
# = 1) at this likelihood-ratio statistic, e.g. qchisq(0.999, 1): changes
# that grow with the level, as AirPassengers' (5.98-fold, statistic 60),
# monthly deaths' (ldeaths 22) or stock indices' (EuStockMarkets' SMI,
# 1,290). bench/results/series_transform_rule.md: on the gaps of 31 series it
# moved 5 (MAE 0.92x on AirPassengers, 0.98x on UKDriverDeaths, within 1.5%
# on the others; 90% coverage 91.9% -> 87.4% on AirPassengers, 84.7% ->
# 88.2% on UKDriverDeaths), and at rolling forecast origins it raised
# AirPassengers' MAE (0.270 -> 0.290 naive MAEs) and the 95% interval
# score of 12 series (3.70 -> 3.75): no better default.
boxcox_auto_lr <- Inf

# The values of `grid` at which the one-frame changes of `map(p)` (the series
# `col` on the scale with parameter p) have the largest Gaussian profile
# log-likelihood plus the map's log-Jacobian `log_jac(p, later)` over the
# values that end a change (`later`); `fallback` with fewer than 10 changes.
changes_profile_max <- function(col, grid, fallback, map, log_jac) {
  prof <- changes_profile(col, grid, map, log_jac)
  if (is.null(prof)) fallback else grid[which.max(prof)]
}

# That profile at each value of `grid`; NULL with fewer than `min_changes` changes.
changes_profile <- function(col, grid, map, log_jac, min_changes = 10L) {
  ok <- !is.na(col)
  both <- ok[-1] & ok[-length(col)]
  if (sum(both) < min_changes) return(NULL)
  later <- col[-1][both]
  vapply(grid, function(p) {
    dz <- diff(map(p))[both]
    -0.5 * length(dz) * log(mean((dz - mean(dz))^2)) + log_jac(p, later)
  }, 0)
}

# The Box-Cox map (y^lambda - 1) / lambda (log at lambda 0), continued below
# `floor` as a log with the same value and slope there, so that the map is
# one-to-one from (0, Inf) onto the real line: every value the Gaussian model
# puts on the scale maps back to a positive one (a plain Box-Cox with lambda
# > 0 would map the mass below -1 / lambda to zero or nowhere). With floor =
# the smallest observed value, observed values never reach the log part.
boxcox <- function(a, lambda, floor = 0) {
  if (lambda == 0) return(log(a))
  z <- (a^lambda - 1) / lambda
  low <- !is.na(a) & a < floor
  if (any(low)) z[low] <- (floor^lambda - 1) / lambda + floor^lambda * log(a[low] / floor)
  z
}
boxcox_inverse <- function(z, lambda, floor = 0) {
  if (lambda == 0) return(exp(z))
  z0 <- (floor^lambda - 1) / lambda
  y <- pmax(lambda * z + 1, 0)^(1 / lambda)
  low <- !is.na(z) & z < z0
  if (any(low)) y[low] <- floor * exp((z[low] - z0) / floor^lambda)
  y
}

to_model_scale <- function(v, tr) {
  for (j in seq_len(ncol(v))) v[, j] <- map_variable(v[, j], j, tr, boxcox, bounded_scale)
  v
}

# Values (vectors) of variables `cols` between the data's scale and the model's.
from_model_scale_vec <- function(a, cols, tr) map_by_variable(a, cols, tr, boxcox_inverse, bounded_scale_inverse)
on_model_scale <- function(a, cols, tr) map_by_variable(a, cols, tr, boxcox, bounded_scale)
map_by_variable <- function(a, cols, tr, boxcox_map, bounded_map) {
  for (j in unique(cols)) {
    k <- which(cols == j)
    a[k] <- map_variable(a[k], j, tr, boxcox_map, bounded_map)
  }
  a
}
# Variable j's values through its scale's map (a DiT model's transform has
# lambda only).
map_variable <- function(a, j, tr, boxcox_map, bounded_map) {
  if (!is.null(tr$lower) && !is.na(tr$lower[[j]])) return(bounded_map(a, tr$lower[[j]], tr$upper[[j]], tr$margin[[j]]))
  if (!is.na(tr$lambda[[j]])) return(boxcox_map(a, tr$lambda[[j]], tr$floor[[j]]))
  a
}

# "; log scale for a; Box-Cox (lambda 0.35) for b; logit scale on [0, 100]
# for c; log scale above 0 (offset 0.05) for d" (or "").
series_scale_text <- function(tr) {
  lab <- transform_label(tr$lambda, tr$lower, tr$upper, tr$margin, long = TRUE, floor = tr$floor)
  if (all(lab == "none")) return("")
  nm <- names(tr$lambda)[lab != "none"]
  lab <- lab[lab != "none"]
  paste0("; ", paste(vapply(unique(lab), function(l) sprintf("%s for %s", l, paste(nm[lab == l], collapse = ", ")), ""),
                     collapse = "; "))
}

# How the candidate table names the variables' scales.
transform_label <- function(lambda, lower = NULL, upper = NULL, margin = NULL, long = FALSE, floor = NULL) {
  lab <- ifelse(is.na(lambda), "none", ifelse(lambda == 0, if (long) "log scale" else "log",
                                                sprintf(if (long) "Box-Cox scale (lambda %.2f)" else "Box-Cox %.2f", lambda)))
  # The scale continues as a log below the smallest observed value (boxcox()):
  # said, since at lambda 1 the lower tail is then not the data's scale (a
  # review read "lambda 1.00" as untransformed, and a bound of 0.0004 as odd).
  if (long && !is.null(floor)) {
    f <- suppressWarnings(as.numeric(floor))
    tail <- which(!is.na(lambda) & lambda > 0 & is.finite(f) & f > 0)
    lab[tail] <- sprintf("Box-Cox scale (lambda %.2f; a log below %s)", lambda[tail], format(signif(f[tail], 3)))
  }
  for (j in which(if (is.null(lower)) rep(FALSE, length(lambda)) else !is.na(lower))) {
    lo <- format(lower[[j]]); hi <- format(upper[[j]]); m <- if (long) format(signif(margin[[j]], 3))
    lab[j] <- if (is.infinite(upper[[j]])) {
      if (long) sprintf("log scale above %s (offset %s)", lo, m) else sprintf("log [%s, Inf)", lo)
    } else if (is.infinite(lower[[j]])) {
      if (long) sprintf("log scale below %s (offset %s)", hi, m) else sprintf("log (-Inf, %s]", hi)
    } else if (long) sprintf("logit scale on [%s, %s] (margin %s)", lo, hi, m) else sprintf("logit [%s, %s]", lo, hi)
  }
  lab
}

# ------------------------------------------------------------------ model --

# Standardised values on the model's scale are what the core models.
scale_cols <- function(v, model) {
  u <- to_model_scale(v, model$transform) - series_profile_frames(model$profile, nrow(v))
  sweep(sweep(u, 2, model$center), 2, model$scale, "/")
}

# The fixed seasonal shape (series_profile()) at frames 1..n: an n x d
# matrix, or 0 when the model has none.
series_profile_frames <- function(profile, n) {
  if (is.null(profile)) return(0)
  profile[(seq_len(n) - 1L) %% nrow(profile) + 1L, , drop = FALSE]
}

# The calendar season's shape held fixed where the season's kernel cannot
# hold it: a p x d matrix (p the period; zero columns for variables without
# one), or NULL. The seasonal kernel holds the first `harmonics` harmonics of
# the period (3-5), enough for a monthly season; a long period with a sharp
# shape inside it (half-hourly electricity demand with a weekly period of
# 336 frames: its daily cycle is the 7th harmonic of the week) is out of
# its reach, and inside a long gap such a series was imputed as a smooth
# curve (forecast::taylor: MAE 8.7x na_seadec's; bench/results/series_fresh_packages_2026-12-03_before_profile.md).
# Per variable, on the model's scale: the values less a centred moving
# average over one period (stats::decompose()'s trend; gaps interpolated
# linearly for it), averaged by position in the period and centred: the
# shape. It is held fixed (every form is fitted to the values less it, and
# the season's kernel takes what moves around it) when the period is a
# whole number of frames of at least 2 * harmonics + 2, the series holds four
# periods, every position at least 3 values, and the shape's harmonics above
# `harmonics` (what the kernel cannot hold) carry at least
# series_profile_share of the variable's variance and series_profile_snr
# times what the noise of the position means would give them (the
# within-position variance over each position's count, times the share of
# the shape's dimensions above the harmonics). On every series of the
# benchmarks but taylor that share is 0.025 or less (wineind's sharp
# December; 0.0001 on ETTh1 with its daily period) and taylor's 0.79
# (bench/results/series_profile_scan.md). On taylor the whole shape held
# fixed imputes better than its harmonics above the kernel's only (MAE 1.043x
# na_seadec's against 1.113x, 1.093x against 1.192x on gaps of 21-60 frames;
# without a shape 8.665x: bench/results/series_profile_variants.md).
series_profile_share <- 0.05
series_profile_snr <- 4
series_profile <- function(u, period, harmonics) {
  n <- nrow(u); p <- period
  if (!isTRUE(p == round(p)) || p < 2 * harmonics + 2 || n < 4 * p) return(NULL)
  out <- matrix(0, p, ncol(u))
  for (j in seq_len(ncol(u))) {
    sh <- series_profile_shape(u[, j], p, harmonics)
    if (!is.null(sh) && sh$share >= series_profile_share && sh$snr >= series_profile_snr) out[, j] <- sh$shape
  }
  if (any(out != 0)) out else NULL
}

# The centred moving average over one period p (stats::decompose()'s: p
# values, or p + 1 with half weights at the ends when p is even; NA within
# half a period of the ends), from cumulative sums: O(n) at any period
# (stats::filter() took 18 s at p = 8,760 on 600,000 frames).
series_moving_average <- function(x, p) {
  n <- length(x); h <- p %/% 2
  out <- rep(NA_real_, n)
  t <- seq.int(h + 1, length.out = max(0, n - 2 * h))
  s <- c(0, cumsum(x))
  tot <- s[t + h + 1] - s[t - h]
  out[t] <- if (p %% 2 == 0) (tot - (x[t - h] + x[t + h]) / 2) / p else tot / p
  out
}

# One variable's seasonal shape (series_profile()): the centred position
# means `shape`, the share of x's variance its harmonics above `harmonics`
# carry and their ratio to what noise would give them (`snr`); NULL when x
# has under four periods of values or a position with under 3.
series_profile_shape <- function(x, p, harmonics) {
  n <- length(x)
  ok <- which(!is.na(x))
  if (length(ok) < 4 * p) return(NULL)
  pos <- (seq_len(n) - 1L) %% p + 1L
  xi <- stats::approx(ok, x[ok], xout = seq_len(n), rule = 2)$y
  dt <- x - series_moving_average(xi, p)
  cnt <- tabulate(pos[!is.na(dt)], p)
  if (any(cnt < 3)) return(NULL)
  m <- vapply(split(dt, pos), mean, 0, na.rm = TRUE)
  m <- m - mean(m)
  f <- stats::fft(m)
  k <- 0:(p - 1)
  f[pmin(k, p - k) <= harmonics] <- 0
  vb <- mean((Re(stats::fft(f, inverse = TRUE)) / p)^2)
  within <- sum((dt - m[pos])^2, na.rm = TRUE) / (sum(cnt) - p)
  noise <- within * mean(1 / cnt) * (p - 1 - 2 * harmonics) / p
  list(shape = unname(m), share = vb / stats::var(x, na.rm = TRUE), snr = vb / noise)
}

# The parameters of a candidate form (as the core counts them), plus the
# mean's per variable: the stationary model's line (2), the level's start (1)
# or the trend's level and slope (2).
series_form_df <- function(model, kernel) {
  c(stationary = 2, level = 3, trend = 4)[[model]] + c(smooth = 0, seasonal = 3, cycle = 4)[[kernel]] +
    c(stationary = 2, level = 1, trend = 2)[[model]]
}

series_candidate_forms <- function(model, kernel, period, n_time, n_obs_min, call) {
  models <- if (model == "auto") c("stationary", "level", "trend") else model
  can_season <- period >= 2 && n_time >= 2 * period
  kernels <- switch(kernel, auto = if (can_season) c("smooth", "seasonal") else "smooth",
                    seasonal = {
                      if (!can_season) abort_input("kernel", if (period < 2) {
                        "\"seasonal\" needs the season's length: give `period` (frames per season, e.g. period = 12 for monthly data), or the values as a ts with that frequency."
                      } else sprintf("\"seasonal\" needs two periods of data (period %g, %d frames).", period, n_time), call = call)
                      "seasonal"
                    }, cycle = {  # a start from the data always fits (series_cycle_start()); the user's may not
                      if (!can_season) abort_input("period", sprintf("with kernel = \"cycle\" needs two periods of data (period %g, %d frames).", period, n_time), call = call)
                      "cycle"
                    }, smooth = "smooth")
  forms <- expand.grid(model = models, kernel = kernels, stringsAsFactors = FALSE)
  # The season's state: on series of up to 1,500 frames up to 5 harmonics,
  # beyond 3, so that long series fit in seconds; the harmonics' drift is
  # smooth (a Matern 3/2 envelope, envelope 2) where there are at most 3 of
  # them on a short series (a quarterly or weekly season: on bench/series.R's
  # gaps UKgas's long gap had MAE 0.0728 so, 0.0768 with the exponential
  # drift, a run of 2026-11-27 before this rule) and exponential (envelope
  # 1, half the state)
  # otherwise, so that no form's state exceeds that of 3 harmonics with the
  # smooth drift. The 5 harmonics hold sharp seasonal shapes (a summer
  # peak of accidents, holiday air travel) that 3 smooth away: on R's monthly
  # series, at the state size of the former 3 harmonics with a smooth
  # (Matern 3/2, envelope 2) drift, MAE 0.77x on USAccDeaths, 0.72x on
  # AirPassengers, 0.90x on UKDriverDeaths, 0.97-0.99x on nottem, co2 and
  # Seatbelts, 1.03-1.04x on ldeaths and mdeaths
  # (bench/results/series_harmonics.md); 5 harmonics with the smooth drift
  # were no better overall and 3-4 times slower.
  # A cycle's period is searched within a factor 1.5 of its start and at
  # most half the series; its harmonics stay below the Nyquist frequency at
  # the shortest period searched.
  cycle <- kernel == "cycle"
  period_min <- if (cycle) max(2, period / 1.5) else NA_real_
  period_max <- if (cycle) min(1.5 * period, n_time / 2) else NA_real_
  harmonics <- min(if (n_time <= 1500) 5L else 3L, floor((if (cycle) period_min else period) / 2))
  periodic <- forms$kernel != "smooth"
  forms$harmonics <- ifelse(periodic, harmonics, NA_integer_)
  forms$period_min <- period_min
  forms$period_max <- period_max
  forms$envelope <- ifelse(periodic, if (n_time <= 1500 && harmonics <= 3) 2L else 1L, NA_integer_)
  # At least twice as many observed values per variable as parameters per
  # variable: fewer leave the likelihood flat in some direction.
  forms$df <- mapply(series_form_df, forms$model, forms$kernel)
  ok <- n_obs_min >= 2 * forms$df
  # Forms the data cannot fit are left out (a named model keeps those of its
  # forms that fit, as "auto" does); none: an error naming the model asked,
  # or x when not even the smallest model fits.
  smallest <- series_form_df("stationary", "smooth")
  if (!any(ok) && (model != "auto" || kernel != "auto") && n_obs_min >= 2 * smallest) {
    abort_input(if (model != "auto") "model" else "kernel",
                sprintf("%s needs at least %d observed values per variable (twice its %d parameters); the series has %d.",
                        paste(c(if (model != "auto") sprintf("model = \"%s\"", model),
                                if (kernel != "auto") sprintf("kernel = \"%s\"", kernel)), collapse = " with "),
                        as.integer(2 * min(forms$df)), as.integer(min(forms$df)), as.integer(n_obs_min)), call = call)
  }
  if (!any(ok)) {
    abort_input("x", sprintf("has a variable with %d observed values; impute_series() fits at least %d parameters per variable and needs at least %d observed values (interpolate so short a series, e.g. with stats::approx(), or give more data).",
                             n_obs_min, smallest, 2 * smallest), call = call)
  }
  forms[ok, c("model", "kernel", "envelope", "harmonics", "period_min", "period_max"), drop = FALSE]
}

# Starting values of a form's parameters (variances relative to the smooth
# term's; the core moves them on log scales).
# A cycle (`kernel = "cycle"`) is the season with its period fitted too,
# within the bounds series_candidate_forms() gives (see series_cycle_start()).
series_start_spec <- function(model, kernel, period) {
  list(model = model, seasonal = kernel != "smooth", period = if (kernel != "smooth") period else 0,
       level_rate = 0.01, slope_rate = 1e-5, smooth_var = 1,
       smooth_lengthscale = if (period >= 2) max(2, min(period, 20)) else series_smooth_start,
       season_var = 1, periodic_lengthscale = 1, season_decay = 4 * max(period, 2), nugget = 0.1)
}

# The smooth term's starting lengthscale without a period (frames). A form
# with the smooth kernel alone (no season) whose start was tied to the
# period (min(period, 20)) is fitted from this start too, and the better
# optimum is kept (series_second_starts()): from a start beyond a basin's
# edge Nelder-Mead settled on a far worse optimum. On fdeaths (monthly, 5
# values hidden) the stationary smooth form reached log-likelihood -412.5
# (lengthscale 2.3) from starts of 2-12 frames and -440.9 (lengthscale
# 1e+05, MAE 3x) from 13-20, the start given `period = 13` to `24`; an hourly
# series (period 24, start 20) has the same trouble (MASS::beav2: 49.8
# against 50.7 from 10).
series_smooth_start <- 10

# Second starts (series_smooth_start) for the candidate forms with the
# smooth kernel alone whose start differs from it: their specs, and the
# rows of `specs` they repeat.
series_second_starts <- function(specs) {
  again <- which(vapply(specs, function(s) !isTRUE(s$seasonal) && s$smooth_lengthscale != series_smooth_start, TRUE))
  list(rows = again, specs = lapply(specs[again], function(s) {
    s$smooth_lengthscale <- series_smooth_start
    s
  }))
}

# A fit of `n` candidate specs followed by their second starts (rows
# `rows`): each of those forms keeps the second start's optimum where its
# log-likelihood is larger by more than ten times the search's tolerance
# (1e-7 relative, StructuralFitOptions::tol; a smaller difference is the same
# optimum, and keeping the first start keeps such fits as they were), with
# the evaluations of both starts counted.
series_keep_better_starts <- function(fit, n, rows) {
  for (i in seq_along(rows)) {
    a <- fit$candidates[[rows[i]]]
    b <- fit$candidates[[n + i]]
    keep <- if (b$loglik - a$loglik > 1e-6 * abs(a$loglik)) b else a
    keep$evaluations <- a$evaluations + b$evaluations
    fit$candidates[[rows[i]]] <- keep
  }
  fit$candidates <- fit$candidates[seq_len(n)]
  fit$chosen <- NULL  # the core's BIC choice indexed the candidates with the second starts
  fit
}

# The starting period of a cycle: the periodogram's most prominent peak over
# periods of 4 frames to a quarter of the series, on the variables summed
# (each with its gaps interpolated, its line removed and scaled to unit
# variance). Prominence is the log of the periodogram (averaged over three
# neighbouring frequencies) above its local background: the mean log periodogram over the frequencies 1.3 to 3
# times lower and, apart, 1.3 to 3 times higher, the two sides' means
# averaged (so a straight log-log slope has no prominence: a level's red
# spectrum, rising towards long periods, does not win by its slope, nor by
# bending where the observation noise flattens it). Over 1.3 times away, the
# background leaves out the peak of a cycle whose length wanders (the
# sunspots' 9 to 14 years); up to 3 times, it still averages a few bins at
# the lowest frequencies searched (4 cycles per series: bins 2-3 and 6-12).
# The start is the period of the highest single bin among the three of the
# most prominent average, or of its cycle when it is a harmonic (see
# series_cycle_peak()).
series_cycle_start <- function(v, call = rlang::caller_env()) {
  peak <- series_cycle_peak(v)
  if (is.null(peak)) {  # k = 4, 5, 6 cycles per series at least: 24 frames
    abort_input("kernel", sprintf("\"cycle\" needs at least 24 frames to look for a cycle of 4 frames or more (the series has %d); give its `period` to start from.", nrow(v)), call = call)
  }
  peak$period
}

# The log periodogram at frequencies 1..n/2 cycles per series of the
# variables summed, each with its gaps interpolated linearly, its line
# removed and scaled to unit variance (series_cycle_peak()).
series_log_periodogram <- function(v) {
  n <- nrow(v)
  pg <- numeric(n)
  for (j in seq_len(ncol(v))) {
    ok <- which(!is.na(v[, j]))
    y <- if (length(ok) >= 2) stats::approx(ok, v[ok, j], xout = seq_len(n), rule = 2)$y else rep(0, n)
    y <- y - stats::fitted(stats::lm(y ~ seq_len(n)))
    if (stats::sd(y) > 0) pg <- pg + Mod(stats::fft(y / stats::sd(y)))^2
  }
  log(pmax(pg[seq_len(floor(n / 2)) + 1], 1e-300))
}

# The periodogram's most prominent peak (see series_cycle_start()): its
# period and prominence (the three-bin log average's excess over the local
# background, in natural-log units), or NULL when the series is under 24
# frames.
series_cycle_peak <- function(v) {
  n <- nrow(v)
  k <- seq_len(floor(n / 4))
  k <- k[k >= 4 & n / k >= 4]
  if (length(k) < 3) return(NULL)
  lp <- series_log_periodogram(v)
  m <- length(lp)  # the three-bin average (two bins at either end)
  sm <- (lp + c(0, lp[-m]) + c(lp[-1], 0)) / c(2, rep(3, m - 2), 2)
  cs <- c(0, cumsum(lp))
  # Mean of lp over bins from..to; with 4 <= k <= n / 4 neither side is empty
  # (bins 2-3 at least below, and 1.3 k <= n / 2 above).
  side_mean <- function(from, to) {
    from <- ceiling(from); to <- pmin(m, floor(to))
    (cs[to + 1] - cs[from]) / (to - from + 1)
  }
  background <- (side_mean(k / 3, k / 1.3) + side_mean(k * 1.3, k * 3)) / 2
  excess <- sm[k] - background
  best <- k[which.max(excess)]
  # A harmonic can stand higher than its cycle (ETTh2's 12 hours above its
  # day): the cycle's kernel holds harmonics of its period, not the reverse,
  # so the start moves to 3 or 2 times the period when the bins there (the
  # nearest to best / 3 or best / 2, or a neighbour) pass the screen too.
  for (times in 3:2) {
    sub <- intersect(round(best / times) + (-1):1, k)
    if (length(sub) && max(excess[match(sub, k)]) >= series_cycle_prominence) {
      best <- sub[which.max(excess[match(sub, k)])]
      break
    }
  }
  # The three-bin average shows a one-bin peak at its neighbours too: the
  # start is the highest of the three bins themselves.
  near <- intersect(best + (-1):1, k)
  list(period = n / near[which.max(lp[near])], prominence = max(excess))
}

# The stretch the core fits on (StructuralFit: the first of at most
# `fit_frames` frames with the most observed entries): its first frame, its
# length, and the fewest observed values of a variable in it (`n`, of
# variable number `variable`).
series_stretch_obs <- function(v, fit_frames) {
  frames <- min(nrow(v), fit_frames)
  obs <- !is.na(v)
  cum <- c(0, cumsum(rowSums(obs)))
  starts <- seq_len(nrow(v) - frames + 1L)
  start <- starts[which.max(cum[starts + frames] - cum[starts])]
  per_var <- colSums(obs[start + seq_len(frames) - 1L, , drop = FALSE])
  list(start = start, frames = frames, n = min(per_var), variable = which.min(per_var))
}

# The starting specs of the candidate forms (rows of series_candidate_forms()).
series_start_specs <- function(forms, period) {
  lapply(seq_len(nrow(forms)), function(i) {
    c(series_start_spec(forms$model[i], forms$kernel[i], period),
      if (!is.na(forms$envelope[i])) list(season_envelope = forms$envelope[i], harmonics = forms$harmonics[i]),
      if (forms$kernel[i] == "cycle") list(period_min = forms$period_min[i], period_max = forms$period_max[i]))
  })
}

# Nelder-Mead's budget: evaluations are cheap on short series, so let them
# converge (600 at 6,000 frames, up to 3,000 on short series).
series_fit_evaluations <- function(n_time, fit_frames) as.integer(min(3000, max(600, 3.6e6 / min(n_time, fit_frames))))

# Fits every candidate form in one core call and keeps the one with the
# smallest BIC (with kernel = "auto" and a cycle weighed, the smallest of the
# kernel and model class that series_gap_compare() chooses). The log-likelihood is reported on the data's scale: that of
# the standardised (and transformed) values plus the log-Jacobian of the map
# from the data, -log(scale_j) per observed value and (lambda - 1) log(y) per
# transformed one (over
# the observed values that count, estimated from the fitting stretch's means).
fit_series_model <- function(v, period, model, kernel, transform, ridge, fit_frames, threads, bounds = NULL,
                             seed = 1L, call = rlang::caller_env()) {
  if (!is.null(bounds)) bounds <- lapply(bounds, function(b) b[colnames(v)])  # per variable, as series_bounds() gives
  n_time <- nrow(v); d <- ncol(v)
  n_obs_min <- min(colSums(!is.na(v)))
  tr <- NULL  # the transform after the forms (their input errors first), unless a cycle's start needs it
  if (kernel == "cycle" && is.na(period)) {  # the cycle's start on the model's scale
    tr <- series_transforms(v, transform, bounds, call = call)
    period <- series_cycle_start(to_model_scale(v, tr), call = call)
  }
  forms <- series_candidate_forms(model, kernel, period, n_time, n_obs_min, call)
  n_fit <- series_stretch_obs(v, fit_frames)
  if (n_fit$n < n_obs_min) {
    # The fitting stretch holds fewer observed values of a variable than the
    # series: the forms it can fit, or an error naming fit_frames rather than
    # one from the core naming x.
    df <- mapply(series_form_df, forms$model, forms$kernel)
    if (n_fit$n < 2 * min(df)) {
      abort_input("fit_frames", sprintf("is %d: the fitting stretch (frames %d-%d, the %d with the most observed values) holds %s of variable \"%s\", and %s needs at least %d (twice its %d parameters per variable); give a larger fit_frames.",
                                        as.integer(fit_frames), n_fit$start, n_fit$start + n_fit$frames - 1L, n_fit$frames,
                                        plural(n_fit$n, "observed value"), colnames(v)[n_fit$variable],
                                        if (nrow(forms) > 1) "the smallest candidate model" else "the model",
                                        as.integer(2 * min(df)), as.integer(min(df))), call = call)
    }
    forms <- forms[2 * df <= n_fit$n, , drop = FALSE]
    n_obs_min <- n_fit$n
  }
  specs <- series_start_specs(forms, period)
  evaluations <- series_fit_evaluations(n_time, fit_frames)
  if (is.null(tr)) tr <- series_transforms(v, transform, bounds, call = call)
  u <- to_model_scale(v, tr)
  # A sharp seasonal shape the season's harmonics cannot hold, held fixed
  # (series_profile()); every form is fitted to the values less it.
  harmonics <- if (any(forms$kernel == "seasonal")) max(forms$harmonics, na.rm = TRUE) else NA_integer_
  profile <- if (!is.na(harmonics)) series_profile(u, period, harmonics)
  profile_df <- if (is.null(profile)) 0 else sum(colSums(profile != 0) > 0) * (period - 1)
  u <- u - series_profile_frames(profile, n_time)
  n_calendar <- nrow(forms)
  if (kernel == "auto") {  # a cycle the calendar does not hold, weighed on hidden gaps (BIC without gaps)
    cyc <- series_auto_cycle(u, model, period, forms, n_time, n_obs_min)
    if (!is.null(cyc)) {
      held <- series_calendar_harmonic(cyc, period, n_time)
      more <- if (is.na(held)) {
        series_candidate_forms(model, "cycle", cyc, n_time, n_obs_min, call)
      } else {  # the season's forms at the harmonic (its harmonics and drift as that
        # period given as the calendar's would have), the period held (period_min = period_max)
        cyc <- held
        f <- series_candidate_forms(model, "seasonal", held, n_time, n_obs_min, call)
        f$kernel <- "cycle"
        f$period_min <- f$period_max <- held
        f
      }
      forms <- rbind(forms, more)
      specs <- c(specs, series_start_specs(more, cyc))
    }
  }
  lambda <- tr$lambda
  center <- colMeans(u, na.rm = TRUE)
  scale <- apply(u, 2, stats::sd, na.rm = TRUE)
  y <- sweep(sweep(u, 2, center), 2, scale, "/")
  second <- series_second_starts(specs)
  fit <- core_call(cpp_structural_fit(y, c(specs, second$specs), list(max_frames = fit_frames, ridge = ridge,
                                                                        threads = threads, max_evaluations = evaluations)),
                   call = call)
  fit <- series_keep_better_starts(fit, length(specs), second$rows)
  rows <- fit$fit_start + seq_len(fit$fit_frames) - 1L
  obs <- colSums(!is.na(v[rows, , drop = FALSE]))
  per_obs <- sum(obs * log(scale)) / sum(obs)  # mean log-Jacobian of the scaling per observed value
  # The Box-Cox Jacobian: (lambda - 1) log y per observed value (all at or
  # above the floor, so none in the log part); the bounded scale's.
  for (j in which(!is.na(lambda))) {
    per_obs <- per_obs - (lambda[[j]] - 1) * sum(log(v[rows, j]), na.rm = TRUE) / sum(obs)
  }
  for (j in which(!is.na(tr$lower))) {
    per_obs <- per_obs - sum(bounded_log_jacobian(v[rows, j], tr$lower[[j]], tr$upper[[j]], tr$margin[[j]]),
                             na.rm = TRUE) / sum(obs)
  }
  tab <- data.frame(model = forms$model, kernel = forms$kernel, envelope = forms$envelope, harmonics = forms$harmonics,
                    # the season's (calendar) period or the cycle's fitted one
                    period = vapply(fit$candidates, function(c) if (isTRUE(c$spec$seasonal)) c$spec$period else NA_real_, 0),
                    transform = paste(unique(transform_label(tr$lambda, tr$lower, tr$upper)), collapse = ", "),
                    logLik = vapply(fit$candidates, function(c) c$loglik - c$nobs * per_obs, 0),
                    df = vapply(fit$candidates, `[[`, 0, "df") + profile_df, nobs = vapply(fit$candidates, `[[`, 0, "nobs"),
                    evaluations = vapply(fit$candidates, `[[`, 0L, "evaluations"),
                    converged = vapply(fit$candidates, `[[`, TRUE, "converged"), stringsAsFactors = FALSE)
  tab$AIC <- -2 * tab$logLik + 2 * tab$df
  tab$BIC <- -2 * tab$logLik + log(tab$nobs) * tab$df
  # The calendar's forms (the first n_calendar) and a cycle's (the rest,
  # when kernel = "auto" found one): the smallest BIC of each, then the one
  # that imputes the series' own hidden gaps better.
  family <- seq_len(nrow(forms)) <= n_calendar
  best_in <- function(sel) which(sel)[which.min(tab$BIC[sel])]
  best <- best_in(family)
  selection <- NULL
  scorer <- NULL
  prefer_rival <- function(step, pair, rival) {
    if (is.null(scorer)) scorer <<- series_gap_scorer(v, fit, y, seed, threads, call)
    sel <- cbind(step = step, series_gap_compare(scorer, tab[pair, ], pair, series_gap_margin[[rival]]),
                 stringsAsFactors = FALSE)
    selection <<- rbind(selection, sel)
    sel$chosen[2]
  }
  # On a series without gaps (fitted to forecast) there are no gaps to
  # mimic: BIC weighs the cycle (lynx and sunspot.year take it, the series
  # of bench/series_residuals.R without a cycle keep their kernels).
  if (nrow(forms) > n_calendar) {
    rival <- best_in(!family)
    if (if (anyNA(v)) prefer_rival("kernel", c(best, rival), "cycle") else tab$BIC[rival] < tab$BIC[best]) {
      best <- rival
      family <- !family
    }
  }
  # The model class (stationary, or a local level or trend) of the chosen
  # kernel on the same hidden gaps, when the series has gaps to impute and
  # model = "auto" fitted both classes: BIC's class unless the other class's
  # best form imputes the hidden gaps better, leaning to the local level or
  # trend. A level or trend replaces BIC's stationary form when its mean
  # CRPS is lower at all; a stationary form replaces BIC's level or trend
  # only by the one-standard-error rule. The classes' best forms have about as
  # many parameters (a stationary form's linear trend against the level's
  # start), so neither is simpler; but their failures differ: a stationary
  # form wrongly chosen reverts to the series' mean and trend inside a long
  # gap with intervals that stop widening (what impute_series() did on long
  # sensor series before it had levels), while a level wrongly chosen bridges
  # the gap from both ends, as interpolation does, with intervals that widen.
  # A class chosen against BIC keeps only its own forms for proper draws.
  stationary <- tab$model == "stationary"
  other <- family & stationary != stationary[best]
  if (series_gap_models && anyNA(v) && any(other) &&
      prefer_rival("model", c(best, best_in(other)), if (stationary[best]) "nonstationary" else "stationary")) {
    best <- best_in(other)
    family <- other
  }
  tab$chosen <- seq_len(nrow(tab)) == best
  b <- fit$candidates[[best]]
  loglik <- tab$logLik[best]
  forms_fit <- fit$candidates[family]
  rate <- series_rate_step(v, y, b, fit, ridge, seed, threads, call)
  multiplier <- 1
  if (!is.null(rate)) {
    selection <- rbind(selection, rate$selection)
    if (rate$multiplier != 1) {
      multiplier <- rate$multiplier
      b <- rate$candidate
      loglik <- b$loglik - b$nobs * per_obs
      forms_fit[[which(which(family) == best)]] <- b  # proper draws: this form at the chosen rate
    }
  }
  rownames(tab) <- NULL
  r2 <- stats::setNames(series_innovation_r2(b$Lambda), colnames(v))
  structure(list(model_name = tab$model[best], kernel_name = tab$kernel[best], spec = b$spec, candidate = b,
                 Lambda = b$Lambda, innovation_r2 = r2,
                 innovation_r2_adjusted = series_chance_adjusted(r2, b$nobs / ncol(v)),
                 period = if (tab$kernel[best] == "cycle") b$spec$period else period,
                 # the calendar's period beside a cycle that kernel = "auto" chose (with
                 # kernel = "cycle", `period` is the cycle's start, not a calendar's)
                 calendar_period = if (kernel == "auto") period else NA_real_,
                 lambda = lambda, transform = tr,
                 center = center, scale = scale, profile = profile,
                 profile_harmonics = if (is.null(profile)) NULL else harmonics, loglik = loglik, df = b$df + profile_df,
                 rate_multiplier = multiplier,
                 nobs = b$nobs,
                 fit_start = fit$fit_start, fit_frames = fit$fit_frames,
                 candidates = tab[, c("model", "kernel", "envelope", "harmonics", "period", "transform", "logLik", "df", "AIC", "BIC", "evaluations",
                                      "converged", "chosen")],
                 # Every form of the chosen kernel (the calendar's or the
                 # cycle's) with its BIC, for proper draws (a form per path,
                 # by BIC weight).
                 forms = list(candidates = forms_fit, BIC = tab$BIC[family], rows = which(family)),
                 selection = selection, variables = colnames(v)),
            class = "ditimpute_series_model")
}

# kernel = "auto" also weighs a cycle that the calendar does not give (see
# series_cycle_start()) when its periodogram's
# peak stands at least series_cycle_prominence above its local background
# (natural log units: 12 times, averaged over three bins), and no calendar
# season holds it (no seasonal form, or a period over 1.5 calendar periods).
# A shorter peak is a harmonic of the calendar's period, held only up to the
# season's harmonics: the day in an hourly series given the week (168 hours)
# is the week's 7th harmonic, beyond its 3, and was lost (given the week,
# ETTh1's oil temperature and two of its loads were imputed with 1.13-1.37x
# the MAE of the day's period; with the day weighed as a cycle, 1.00-1.06x;
# bench/results/series_period_choice.md).
# The prominence is a screen that spares most series the cycle's fit; what
# decides is series_gap_compare(). On whole series
# (bench/results/series_cycle_peak.md) the real cycles stand at 2.58 (lynx),
# 3.42 (sunspot.year), 3.64 (sunspots) and 4.31 (sunspot.month); 30 simulated
# noise series (white, AR(1), random walks; 500 frames) at 1.99 at most; R's
# other non-seasonal series under 2.5 (EuStockMarkets 2.44). With gaps a
# series moves by up to about one unit (lynx 1.9-3.2, sunspot.month 3.1-4.5
# over 20 gap patterns). Of 400 random walks with noise (1,500 frames, 13%
# missing) 4 passed, and the hidden gaps chose the cycle on two of those by
# under 0.4% of the CRPS (section 4 of the same file). Returns the cycle's
# start, or NULL.
series_cycle_prominence <- 2.5
series_auto_cycle <- function(u, model, period, forms, n_time, n_obs_min) {
  peak <- series_cycle_peak(u)
  if (is.null(peak) || peak$prominence < series_cycle_prominence) return(NULL)
  if (any(forms$kernel == "seasonal") && peak$period <= 1.5 * period &&
      period / peak$period < max(forms$harmonics, na.rm = TRUE) + 0.5) return(NULL)
  models <- if (model == "auto") c("stationary", "level", "trend") else model
  if (n_obs_min < 2 * max(vapply(models, series_form_df, 0, kernel = "cycle"))) return(NULL)  # as series_candidate_forms()
  peak$period
}

# A cycle that series_auto_cycle() weighs at a harmonic of the calendar's
# period (the day of hourly data given the week) is that harmonic exactly:
# its period is held at period / k, not fitted, when the periodogram's peak
# lies within two bins of the harmonic's frequency (the peak's search
# averages three bins, so it places a peak to about a bin and a half: a
# daily peak at bin 207 of 5,000 hourly frames, 24.15 hours, is 1.3 bins
# from 24). A fitted period costs the free fit, its check against the period
# held at its start and a refit; held at the harmonic, the hourly series of
# bench/series_period_choice.R given the week were imputed 1.01-1.68x
# faster with 0.997-1.004x the MAE in every gap-length group
# (bench/results/series_period_choice.md). Returns the harmonic's period, or
# NA (a peak between harmonics, over 1.5 calendar periods, or no calendar
# season).
series_calendar_harmonic <- function(cyc, period, n_time) {
  if (!(period >= 2) || cyc > 1.5 * period) return(NA_real_)
  k <- round(period / cyc)
  if (k < 2 || abs(n_time / cyc - n_time * k / period) > 2) return(NA_real_)
  period / k
}

# Which of two fitted forms, the calendar's best by BIC and the cycle's,
# imputes the series' own hidden gaps better. BIC ranks one-step fit, and on
# monthly sunspots preferred the calendar's 12-month season (by 83) although
# the ~11-year cycle imputes their long gaps better
# (bench/results/series_cycle_bic.md). So: series_gap_rounds rounds of the
# self-calibration's masks (series_calibration_mask(): stretches of observed
# values with lengths drawn from the series' own gaps, 10% of the observed
# values or the missing share if smaller, at least 2%) over the fitting
# stretch, each imputed by both forms' exact conditionals; each hidden value
# scored by the CRPS of its Gaussian conditional on the standardised model
# scale (accuracy and interval width together). The cycle is chosen when its
# mean CRPS is lower by more than one standard error of the paired
# difference, each hidden gap one unit (a gap's values are correlated): the
# one-standard-error rule of cross-validation, leaning to the calendar's form.
# With two standard errors sunspot.month's first repetition of
# bench/series_long.R's gaps kept the season (difference -0.017, SE 0.011).
# A variable's own leading or trailing run of missing values is mimicked at
# the same end of its observed frames (series_calibration_mask()'s `ends`):
# there a form extrapolates, and a stationary form's intervals stop widening
# where a level's keep widening; scored only on gaps between observed
# values, the class step chose the stationary form for random walks whose
# last 40 of 200 frames were missing (95% intervals covering 7.5-30% of them,
# bench/results/series_ends.md). On such a series a stationary form's line
# is refitted on each version and its uncertainty is in the spread, as in
# the imputation itself (structural_conditional() in the core): the line
# fitted to every observed value would extrapolate a hidden end stretch
# with a slope that had seen it. On a series without leading or trailing
# gaps the comparisons keep the fitted line as known (the core's
# fixed_line): refitted there, the class step moved some of bench/series.R's
# long gaps in Nile and ldeaths from the stationary form to the level, at
# 8.2% and 5.8% more MAE (bench/results/series_2026-12-05_refit_everywhere.md).
series_gap_rounds <- 10L

# The hidden gaps' scores of fitted forms: `rounds` masks (series_gap_rounds
# unless given) of the fitting stretch (drawn once, so that every comparison of one fit scores
# the same hidden values), each form's CRPS per hidden value computed once
# (a form compared twice, as the kernel's winner then against the other
# model class, is imputed once). Returns the scores as a function of a
# candidate's index in fit$candidates, and the hidden gaps' ids. `fit`: the
# core's fit of every form (its fitting stretch), `y` the standardised series
# it was fitted to.
series_gap_scorer <- function(v, fit, y, seed, threads, call, rounds = series_gap_rounds, masks = NULL) {
  y <- y[fit$fit_start + seq_len(fit$fit_frames) - 1L, , drop = FALSE]
  miss <- is.na(y)
  # masks given: series_forecast_masks()'s end stretches, one per round and
  # variable, each one unit of the standard error even where a missing
  # frame splits it in two runs
  ends <- per_variable <- !is.null(masks)
  if (is.null(masks)) {
    runs <- series_missing_runs(v)
    ends <- any(nzchar(runs$end))
    share <- min(0.1, max(mean(miss), 0.02))
    masks <- lapply(seq_len(rounds), function(r) {
      with_local_seed(sub_seed(seed, 400 + r), series_calibration_mask(miss, runs$length, share, ends = runs$end))
    })
  }
  versions <- lapply(masks, function(m) replace(y, m | (if (is.null(attr(m, "dropped"))) FALSE else attr(m, "dropped")), NA))
  # an end stretch that steps over a missing frame is one gap (its runs
  # bridged), as each forecast stretch is
  runs_of <- lapply(masks, function(m) run_ids(m | (if (is.null(attr(m, "bridge"))) FALSE else attr(m, "bridge"))))
  masks <- lapply(masks, function(m) {
    attr(m, "dropped") <- attr(m, "bridge") <- NULL
    m
  })
  crps <- function(z, mu, sd) {
    u <- (z - mu) / sd
    sd * (u * (2 * stats::pnorm(u) - 1) + 2 * stats::dnorm(u) - 1 / sqrt(pi))
  }
  gap <- unlist(Map(function(m, ver, r, ids) {
    ij <- missing_index(is.na(ver))
    paste(r, if (per_variable) ij[m[ij], 2] else ids[ij][m[ij]])
  }, masks, versions, seq_along(masks), runs_of))
  memo <- vector("list", length(fit$candidates))
  score <- function(i) {
    if (is.null(memo[[i]])) {
      res <- core_call(cpp_structural_moments(versions, fit$candidates[[i]], list(threads = threads, fixed_line = !ends)),
                       call = call)
      memo[[i]] <<- unlist(Map(function(m, ver, r) {
        ij <- missing_index(is.na(ver))
        hidden <- m[ij]
        crps(y[ij][hidden], r$mean[hidden], r$sd[hidden])
      }, masks, versions, res))
    }
    memo[[i]]
  }
  list(score = score, gap = gap)
}

# The runs of missing values of each variable of v (T x d): their lengths
# and whether each is the variable's leading ("lead") or trailing ("trail")
# run, or inside its observed frames ("").
series_missing_runs <- function(v) {
  parts <- lapply(seq_len(ncol(v)), function(j) {
    r <- rle(is.na(v[, j]))
    k <- length(r$lengths)
    end <- ifelse(seq_len(k) == k & r$values[k], "trail", "")
    if (r$values[1]) end[1] <- "lead"  # a variable with no observed value is refused before any fit
    list(length = r$lengths[r$values], end = end[r$values])
  })
  list(length = unlist(lapply(parts, `[[`, "length")), end = unlist(lapply(parts, `[[`, "end")))
}

# Compares two forms (`pair`: the incumbent's and its rival's indices in
# fit$candidates, `tab_rows` their rows of the candidate table) on the
# scorer's hidden gaps: the rival is chosen when its mean CRPS is lower by more than
# `margin` standard errors (series_gap_margin, by what the rival is: the
# one-standard-error rule above for a cycle and for a stationary form, none
# for a level or trend; see fit_series_model()).
series_gap_compare <- function(scorer, tab_rows, pair, margin) {
  scores <- lapply(pair, scorer$score)
  gap <- scorer$gap
  diff <- scores[[2]] - scores[[1]]
  per_gap <- tapply(diff, gap, sum)
  n_gap <- tapply(diff, gap, length)
  mean_diff <- sum(per_gap) / sum(n_gap)
  g <- length(per_gap)
  se <- if (g > 1) sqrt(g / (g - 1) * sum((per_gap - mean_diff * n_gap)^2)) / sum(n_gap) else Inf
  chosen <- g > 1 && mean_diff + margin * se < 0
  data.frame(model = tab_rows$model, kernel = tab_rows$kernel,
             crps = vapply(scores, mean, 0), difference = c(NA, mean_diff), se = c(NA, se),
             hidden_values = length(diff), hidden_gaps = g, chosen = c(!chosen, chosen), stringsAsFactors = FALSE)
}
series_gap_margin <- c(cycle = 1, stationary = 1, nonstationary = 0)
series_gap_models <- TRUE

# The level's noise rate of a chosen level or trend form, weighed on hidden
# gaps anywhere in the series. Maximum likelihood scores one-step
# predictions; a gap needs predictions many frames from its ends, and the
# two can disagree. With a slow level and a short smooth lengthscale the
# form fills a long gap with a local mean of the frames around it instead of
# bridging its two ends: on imputeTS's tsHeating (606,837 frames fitted on
# its first 6,000) it had 1.276x linear interpolation's MAE on the sensor's
# own gaps, and 1.039x with the rate 10 times the fitted one
# (bench/results/series_level_rate.md). The hidden gaps of the fitting
# stretch could not see it (they chose the fitted rate there); hidden gaps
# anywhere in the series could. So: the form's level_rate times each of
# series_rate_multipliers in turn (the scale and Lambda re-profiled at it,
# nothing else moved: one evaluation of the core's fit), each scored by the
# mean CRPS of series_gap_scorer()'s hidden gaps with the whole series as
# its stretch, stopping at the first multiplier that scores worse than the
# one before (the scores fall, then rise). The rounds of hidden gaps shrink
# as the series outgrows the fitting stretch (series_gap_rounds times the
# stretch's share of the series, at least one), so that they hide about as
# many values as the class step's rounds or more, in time that stops
# growing with the rounds: ten rounds over a 600,000-frame series took the
# call from 12.8 to 48.1 s (bench/results/series_scaling.md); one round
# there hides 60,000 values. The best multiplier replaces the
# fitted rate by the one-standard-error rule of series_gap_compare(),
# leaning to the maximum-likelihood rate. Only on a series longer than its
# fitting stretch (fit_frames), which is where the likelihood cannot see the
# rest of the series: on short series fitted whole, where the class step's
# hidden gaps already cover every frame, the step moved the rate in 12 of
# 200 fits of bench/series_fresh.R's 20 series, and the MAE over the best
# imputeTS method's by -2.1% to +2.0% by series (geometric mean 0.918
# either way; presidents 1.150 against 1.127, BJsales 1.018 against 1.040),
# on bench/series.R's short series by -0.9% to +1.6%
# (bench/results/series_fresh_2026-12-04_rate_step_short.md,
# series_2026-12-04_rate_step_short.md): no gain for the time. Returns NULL
# (no level, no gaps, no multipliers, or the series fitted whole), or the
# chosen multiplier, its candidate (as
# cpp_structural_fit() returns them) and the step's rows of the selection
# table.
series_rate_multipliers <- c(3, 10, 30, 100)
series_rate_step <- function(v, y, cand, fit, ridge, seed, threads, call) {
  if (!length(series_rate_multipliers) || cand$spec$model == "stationary" || !anyNA(v) ||
      fit$fit_frames >= nrow(y)) return(NULL)
  specs <- lapply(series_rate_multipliers, function(k) {
    s <- cand$spec
    s$level_rate <- s$level_rate * k
    s
  })
  moved <- core_call(cpp_structural_fit(y, specs, list(max_frames = fit$fit_frames, ridge = ridge, threads = threads,
                                                       max_evaluations = 1L)), call = call)
  whole <- list(candidates = c(list(cand), moved$candidates), fit_start = 1L, fit_frames = nrow(y))
  rounds <- min(series_gap_rounds, max(1L, as.integer(ceiling(series_gap_rounds * fit$fit_frames / nrow(y)))))
  scorer <- series_gap_scorer(v, whole, y, seed, threads, call, rounds)
  best <- 1L
  best_score <- mean(scorer$score(1L))
  for (i in seq_along(series_rate_multipliers) + 1L) {
    sc <- mean(scorer$score(i))
    if (!(sc < best_score)) break
    best <- i
    best_score <- sc
  }
  # The fitted rate against the best (the first multiplier when none scored
  # lower: its difference is then not negative, so the fitted rate stays).
  rival <- max(best, 2L)
  mult <- c(1, series_rate_multipliers)
  rows <- data.frame(model = sprintf("%s (level rate x%g)", cand$spec$model, mult[c(1L, rival)]),
                     kernel = NA_character_, stringsAsFactors = FALSE)
  sel <- series_gap_compare(scorer, rows, c(1L, rival), 1)
  chosen <- if (sel$chosen[2]) rival else 1L
  list(multiplier = mult[chosen], candidate = whole$candidates[[chosen]],
       selection = cbind(step = "rate", sel, stringsAsFactors = FALSE))
}

# predict()'s model class, chosen with the forecast's horizon in view. The
# fit chooses between the stationary forms and the local level or trend by
# BIC, which scores one-step predictions, and by the series' own gaps (the
# class step of fit_series_model()); a series without gaps keeps BIC's
# choice, and on short series BIC mostly takes the stationary form, whose
# forecast reverts to the series' line and mean within a few lengthscales.
# Imputing the horizon as an end gap (impute_series(c(x, rep(NA, h))))
# lets the class step weigh it, and forecast 400 M3 series with a mean MASE
# of 1.773 against predict()'s 1.910 (bench/results/forecast_m3.md). So
# predict() weighs it too: the fitted form against the other class's best
# form by BIC, both as fitted (nothing is refitted), on series_gap_rounds
# rounds of hidden end stretches, each variable's last L + (its trailing
# missing frames) observed values (L: series_forecast_leads()), moved
# inwards by up to their length (series_forecast_masks()), scored and
# compared as the class step
# compares on hidden gaps (series_gap_compare(): mean CRPS, a level or
# trend chosen when lower at all, a stationary form by the
# one-standard-error rule). The series' last fit_frames frames are scored
# (the forecast's end, on a series longer than its fitting stretch). A
# model without both classes among its forms (model = "level", "trend" or
# "stationary", or a class chosen against BIC on the series' gaps, which
# keeps only that class's forms), or with a variable observed fewer than 4
# times in the scored frames (a model set: per group), is left as it is.
# Returns the model for the forecast (a set's groups each chosen so) and
# the comparison's rows (NULL when none was made).
series_forecast_form <- function(model, v, n_ahead, seed, threads, call = rlang::caller_env()) {
  if (inherits(model, "ditimpute_series_model_set")) {
    sel <- NULL
    for (g in seq_along(model$parts)) {
      cols <- model$groups[[g]]
      r <- series_forecast_form(model$parts[[g]], v[, cols, drop = FALSE], n_ahead, sub_seed(seed, g), threads, call)
      if (is.null(r$selection)) next
      sel <- rbind(sel, cbind(variables = paste(model$variables[cols], collapse = ", "), r$selection,
                              stringsAsFactors = FALSE))
      model$parts[[g]] <- r$model
      model$Lambda[cols, cols] <- r$model$Lambda
    }
    return(list(model = model, selection = sel))
  }
  forms <- model$forms
  # forms$rows: the forms' rows of the candidate table, among them the
  # chosen one's (models of earlier builds have none and keep their form)
  k <- match(which(model$candidates$chosen), forms$rows)
  if (length(k) != 1 || is.na(k)) return(list(model = model))
  stat <- vapply(forms$candidates, function(c) identical(c$spec$model, "stationary"), TRUE)
  other <- stat != stat[k]
  if (!any(other)) return(list(model = model))
  rival <- which(other)[which.min(forms$BIC[other])]
  n <- nrow(v)
  frames <- min(n, model$fit_frames)
  fit <- list(candidates = forms$candidates, fit_start = n - frames + 1L, fit_frames = frames)
  miss <- is.na(v[fit$fit_start:n, , drop = FALSE])
  if (any(colSums(!miss) < 4)) return(list(model = model))
  trail <- vapply(seq_len(ncol(v)), function(j) n - max(c(0L, which(!is.na(v[, j])))), 0L)
  masks <- series_forecast_masks(miss, series_forecast_leads(model, n_ahead) + trail, series_gap_rounds, seed)
  scorer <- series_gap_scorer(v, fit, scale_cols(v, model), seed, threads, call, masks = masks)
  sel <- series_gap_compare(scorer, model$candidates[forms$rows[c(k, rival)], ], c(k, rival),
                            series_gap_margin[[if (stat[rival]) "stationary" else "nonstationary"]])
  sel <- cbind(step = "horizon", sel, stringsAsFactors = FALSE)
  list(model = if (sel$chosen[2]) series_model_form(model, rival) else model, selection = sel)
}

# The leads series_forecast_form() scores: n.ahead, but at least two
# calendar periods (a season's; 1 without one) and at least
# series_forecast_min_leads frames, so that forecasts of up to that many
# frames share their model whatever n.ahead (a forecast of 1 frame and
# the first frame of one of 6 agree), and the hidden end stretches start
# from several origins (series_forecast_masks() moves a stretch of L values
# inwards by 0 .. L - 1: one value would hide the last one in every
# round).
series_forecast_min_leads <- 6L
series_forecast_leads <- function(model, n_ahead) {
  p <- model$calendar_period
  if (is.null(p) || is.na(p)) p <- if (identical(model$kernel_name, "cycle")) 1 else model$period
  if (is.null(p) || is.na(p)) p <- 1
  as.integer(max(n_ahead, series_forecast_min_leads, 2 * round(p)))
}

# The masks of series_forecast_form(): in each of `rounds` rounds, per
# variable, its `lens[j]` last observed values (at most half of them), moved
# inwards by a uniform 0 .. len - 1 observed values, so that the rounds
# forecast from different origins; the values moved over are dropped (not
# scored): series_end_stretch() at each variable's trailing end. Counted in
# observed values, not frames: counted in frames, a value missing among
# the last frames cut every round's stretch to the values after it, and
# with no room to move, all rounds hid the same one or two values, scored
# as ten gaps with a standard error of 0 (a review: LakeHuron with frame 97
# missing chose the level on one forecast value). Here each variable's
# stretch is one unit of the standard error even where a missing frame
# splits it.
series_forecast_masks <- function(miss, lens, rounds, seed) {
  lapply(seq_len(rounds), function(r) with_local_seed(sub_seed(seed, 700 + r), {
    mask <- dropped <- matrix(FALSE, nrow(miss), ncol(miss))
    for (j in seq_len(ncol(miss))) {
      obs <- !miss[, j]
      # at most half the values: there is room for the stretch and every shift
      len <- min(lens[j], floor(sum(obs) / 2))
      s <- series_end_stretch(obs, obs, range(which(obs)), "trail", len)
      mask[s$hide, j] <- TRUE
      dropped[s$drop, j] <- TRUE
    }
    attr(mask, "dropped") <- dropped
    mask
  }))
}

# The model with its k-th form (of model$forms) as the chosen one, and only
# the forms of that form's class kept for proper draws (as the class step
# keeps them when it chooses a class against BIC); the fields that describe
# the form follow it (the rate step's multiplier does not: it belonged to the
# form replaced).
series_model_form <- function(model, k) {
  b <- model$forms$candidates[[k]]
  row <- model$forms$rows[k]
  same <- vapply(model$forms$candidates, function(c) identical(c$spec$model == "stationary", b$spec$model == "stationary"), TRUE)
  model$candidate <- b
  model$spec <- b$spec
  model$Lambda <- b$Lambda
  model$model_name <- model$candidates$model[row]
  model$kernel_name <- model$candidates$kernel[row]
  if (model$kernel_name == "cycle") model$period <- b$spec$period
  r2 <- stats::setNames(series_innovation_r2(b$Lambda), model$variables)
  model$innovation_r2 <- r2
  model$innovation_r2_adjusted <- series_chance_adjusted(r2, b$nobs / length(r2))
  model$loglik <- model$candidates$logLik[row]
  model$df <- model$candidates$df[row]
  model$nobs <- b$nobs
  model$rate_multiplier <- 1
  model$candidates$chosen <- seq_len(nrow(model$candidates)) == row
  model$forms <- list(candidates = model$forms$candidates[same], BIC = model$forms$BIC[same],
                      rows = model$forms$rows[same])
  model
}

# The share of each variable's one-step changes that the other variables
# explain: the squared multiple correlation of its standardised one-step
# innovation on theirs, from Lambda's correlations (which are those of the
# innovations, see structural.hpp). NA for a single variable. Conditioning on
# the others can shrink a variable's one-step predictive variance by at most
# this share, so near zero the joint model can only cost it (through the form
# it shares with them).
series_innovation_r2 <- function(Lambda) {
  d <- nrow(Lambda)
  if (d < 2) return(rep(NA_real_, d))
  R <- stats::cov2cor(Lambda)
  vapply(seq_len(d), function(j) {
    r <- R[-j, j]
    sum(r * solve(R[-j, -j, drop = FALSE], r))
  }, 0)
}

# The shares of series_innovation_r2() less what chance gives a variable
# with d - 1 others over n frames (innovations): the adjusted R^2,
# 1 - (1 - r2) (n - 1) / (n - d). Under no dependence the squared multiple
# correlation of n draws on d - 1 others averages (d - 1) / (n - 1) (a third
# for Longley's 6 variables over 16 years), so the raw share of a short
# series clears any fixed threshold by chance; the adjusted one averages 0.
# With n <= d frames nothing can be told apart from chance: 0.
series_chance_adjusted <- function(r2, n) {
  d <- length(r2)
  if (d < 2 || anyNA(r2)) return(r2)
  if (n <= d) return(pmin(r2, 0))
  1 - (1 - r2) * (n - 1) / (n - d)
}

# impute_series()'s warning for variables that the others explain less than
# `below` of beyond chance (see series_chance_adjusted()) in a group of
# variables that share one form: they gain nothing from the joint model and
# share its form. NULL when there are none (always so for the groups of
# separate = "auto").
series_lone_warning <- function(model, below = series_lone_share) {
  parts <- if (inherits(model, "ditimpute_series_model_set")) model$parts else list(model)
  r2 <- unlist(lapply(parts, `[[`, "innovation_r2_adjusted"))
  lone <- which(!is.na(r2) & r2 < below)
  if (!length(lone)) return(NULL)
  one <- length(lone) == 1
  sprintf(paste0("Beyond chance, the other variables explain under %g%% of the one-step changes of %s, which therefore %s nothing from ",
                 "them but %s their model form; a form that suits the others can leave %s intervals too narrow on long gaps. ",
                 "Impute %s on %s own: separate = \"auto\" (the default) does so (see ?impute_series, \"Several variables\")."),
          100 * below, paste(sprintf("\"%s\" (%s)", names(r2)[lone],
                                     ifelse(r2[lone] > 0, sprintf("%.1f%%", 100 * r2[lone]), "none")), collapse = ", "),
          if (one) "gains" else "gain", if (one) "shares" else "share", if (one) "its" else "their",
          if (one) "it" else "them", if (one) "its" else "their")
}

# Below this share of its one-step changes explained by the others (see
# series_innovation_r2()), a variable gets a model of its own under
# impute_series(separate = "auto"), and a warning under separate = "none".
series_lone_share <- 0.05

# ---------------------------------------------------------- model groups --

# impute_series(separate = ): "auto", "none", "all", or the names of the
# variables to model on their own (as column indices).
check_separate <- function(separate, vars, call = rlang::caller_env()) {
  if (is.character(separate) && length(separate) == 1 && separate %in% c("auto", "none", "all")) {
    return(separate)
  }
  if (!is.character(separate) || !length(separate) || anyNA(separate) || anyDuplicated(separate)) {
    abort_input("separate", "must be \"auto\", \"none\", \"all\" or the names of variables to model on their own.",
                call = call)
  }
  bad <- setdiff(separate, vars)
  if (length(bad)) {
    abort_input("separate", sprintf("names %s, which %s not a variable of x (%s).",
                                    paste0("\"", bad, "\"", collapse = ", "), if (length(bad) == 1) "is" else "are",
                                    paste(vars, collapse = ", ")), call = call)
  }
  match(separate, vars)
}

# The fitted model of impute_series(): one form for all variables, or (a
# ditimpute_series_model_set) one per group of variables, the groups
# independent. `fit(cols)` fits the variables `cols` together. With "auto"
# the variables are fitted together, and every variable whose share of
# one-step changes explained by the others is under series_lone_share is
# split off and fitted on its own, the rest refitted together (and checked
# again) -- the joint form is that of the sum of the variables' likelihoods,
# so a variable unlike the rest would otherwise get theirs.
fit_series_groups <- function(vars, separate, fit) {
  d <- length(vars)
  if (d == 1 || identical(separate, "none")) return(fit(seq_len(d)))
  first <- rest_model <- NULL
  later <- list()  # the shares that split variables off after the first fit (print() shows them)
  if (identical(separate, "auto")) {
    rest <- seq_len(d)
    lone <- integer()
    repeat {
      m <- fit(rest)
      if (is.null(first)) first <- m
      r2 <- m$innovation_r2_adjusted
      new <- rest[!is.na(r2) & r2 < series_lone_share]
      if (!length(new)) {
        rest_model <- m
        break
      }
      if (length(rest) < d) later <- c(later, list(r2))  # a refit: some variables are already apart
      lone <- c(lone, new)
      rest <- setdiff(rest, new)
      if (length(rest) < 2) {  # a single variable left is on its own too
        lone <- c(lone, rest)
        rest <- integer()
        break
      }
    }
    if (!length(lone)) return(first)
  } else {
    lone <- if (identical(separate, "all")) seq_len(d) else separate
    rest <- setdiff(seq_len(d), lone)
    if (length(rest) == 1) {
      lone <- c(lone, rest)
      rest <- integer()
    }
  }
  groups <- c(as.list(sort(lone)), if (length(rest)) list(rest))
  parts <- lapply(groups, function(cols) if (!is.null(rest_model) && identical(cols, rest)) rest_model else fit(cols))
  set <- series_model_set(parts, groups, vars, shares = first[c("innovation_r2", "innovation_r2_adjusted")])
  set$separate_rounds <- later
  set
}

# Independent groups of variables, each with its own fitted model. The
# fields that act per variable (transform, center, scale) are those of the
# whole series, so that scale_cols(), on_model_scale() and the calibration
# work on the set as on one model; Lambda is block-diagonal; the
# log-likelihood, parameters and observations are the groups' sums.
series_model_set <- function(parts, groups, vars, shares) {
  d <- length(vars)
  per_variable <- function(get) {
    out <- stats::setNames(rep(NA_real_, d), vars)
    for (g in seq_along(parts)) out[groups[[g]]] <- get(parts[[g]])
    out
  }
  Lambda <- matrix(0, d, d, dimnames = list(vars, vars))
  for (g in seq_along(parts)) Lambda[groups[[g]], groups[[g]]] <- parts[[g]]$Lambda
  cands <- do.call(rbind, lapply(seq_along(parts), function(g) {
    cbind(variables = paste(vars[groups[[g]]], collapse = ", "), parts[[g]]$candidates, stringsAsFactors = FALSE)
  }))
  structure(list(parts = parts, groups = groups, variables = vars,
                 transform = list(lambda = per_variable(function(p) p$transform$lambda),
                                  floor = per_variable(function(p) p$transform$floor),
                                  lower = per_variable(function(p) p$transform$lower),
                                  upper = per_variable(function(p) p$transform$upper),
                                  margin = per_variable(function(p) p$transform$margin)),
                 lambda = per_variable(function(p) p$lambda),
                 center = per_variable(function(p) p$center), scale = per_variable(function(p) p$scale),
                 profile = series_set_profile(parts, groups, d),
                 Lambda = Lambda,
                 innovation_r2 = if (is.null(shares$innovation_r2)) stats::setNames(rep(NA_real_, d), vars) else shares$innovation_r2,
                 innovation_r2_adjusted = if (is.null(shares$innovation_r2_adjusted)) stats::setNames(rep(NA_real_, d), vars)
                                          else shares$innovation_r2_adjusted,
                 period = parts[[1]]$period,
                 loglik = sum(vapply(parts, `[[`, 0, "loglik")), df = sum(vapply(parts, `[[`, 0, "df")),
                 nobs = sum(vapply(parts, `[[`, 0, "nobs")), candidates = cands),
            class = c("ditimpute_series_model_set", "ditimpute_series_model"))
}

# The groups' fixed seasonal shapes (series_profile()) as one p x d matrix
# (the groups share the calendar's period), or NULL when none has one.
series_set_profile <- function(parts, groups, d) {
  has <- which(!vapply(parts, function(p) is.null(p$profile), TRUE))
  if (!length(has)) return(NULL)
  out <- matrix(0, nrow(parts[[has[1]]]$profile), d)
  for (g in has) out[, groups[[g]]] <- parts[[g]]$profile
  out
}

# "local level, seasonal kernel" (per group for a set).
series_model_label <- function(model) {
  if (inherits(model, "ditimpute_series_model_set")) {
    forms <- vapply(model$parts, series_model_label, "")
    vars <- lapply(model$groups, function(g) model$variables[g])
    full <- paste(sprintf("%s: %s", vapply(vars, paste, "", collapse = ", "), forms), collapse = "; ")
    if (nchar(full) <= 120) return(full)
    # Many groups (12 chicks apart gave a 500-character header): the groups
    # of one form together, at most three names each.
    return(paste(vapply(unique(forms), function(f) {
      v <- unlist(vars[forms == f])
      sprintf("%s%s: %s", paste(utils::head(v, 3), collapse = ", "),
              if (length(v) > 3) sprintf(" and %d more", length(v) - 3) else "", f)
    }, ""), collapse = "; "))
  }
  # "stationary" as the candidates' table names the form ("linear trend" read as
  # the local linear trend, the candidate "trend"; a review)
  sprintf("%s, %s kernel", switch(model$model_name, stationary = "stationary around a fixed line", level = "local level",
                                  trend = "local linear trend"), model$kernel_name)
}

# series_model_intervals() or series_proper_intervals() (`f`) of a set: each
# group's, with its own seed, merged into the whole series' entries (the
# draws of different groups are independent, as the set's model says).
series_set_intervals <- function(model, v, level, n_samples, seed, threads, f, call) {
  miss <- is.na(v)
  ij <- missing_index(miss)
  key <- function(i, j) i + nrow(v) * (j - 1)
  point <- v
  na <- matrix(NA_real_, nrow(v), ncol(v), dimnames = dimnames(v))
  bands <- rep(list(list(lower = na, upper = na)), length(level))
  samples <- matrix(0, n_samples, nrow(ij))
  sd <- mean <- numeric(nrow(ij))
  for (g in seq_along(model$parts)) {
    cols <- model$groups[[g]]
    iv <- f(model$parts[[g]], v[, cols, drop = FALSE], level, n_samples, sub_seed(seed, 5000 + g), threads, call = call)
    point[, cols] <- iv$point
    for (k in seq_along(level)) {
      bands[[k]]$lower[, cols] <- iv$bands[[k]]$lower
      bands[[k]]$upper[, cols] <- iv$bands[[k]]$upper
    }
    if (nrow(iv$ij)) {
      pos <- match(key(iv$ij[, 1], cols[iv$ij[, 2]]), key(ij[, 1], ij[, 2]))
      samples[, pos] <- iv$samples
      sd[pos] <- iv$sd
      mean[pos] <- iv$mean
    }
  }
  list(point = point, lower = bands[[1]]$lower, upper = bands[[1]]$upper, bands = bands, samples = samples, ij = ij,
       mean = mean, sd = sd)
}

# The exact conditional of v's missing entries under the model, in the data's
# units: point (the conditional mean; mapped back from a Box-Cox or log
# scale, the conditional median),
# per-entry intervals (exact Gaussian quantiles on the model's scale, mapped
# back), the draws (n_samples x m, frame-major) and their indices.
series_model_intervals <- function(model, v, level, n_samples, seed, threads, call = rlang::caller_env()) {
  if (inherits(model, "ditimpute_series_model_set")) {
    return(series_set_intervals(model, v, level, n_samples, seed, threads, series_model_intervals, call))
  }
  res <- core_call(cpp_structural_impute(scale_cols(v, model), model$candidate,
                                         list(n_samples = n_samples, seed = seed, threads = threads)), call = call)
  iv <- series_bands(model, v, res$mean, res$sd, level)
  samples <- matrix(0, n_samples, nrow(iv$ij))
  if (nrow(iv$ij)) samples <- series_back_draws(model, v, iv$ij, res$samples)
  c(iv[c("point", "lower", "upper", "bands")], list(samples = samples, ij = iv$ij, mean = res$mean, sd = res$sd))
}

# The draws (n_samples x m, model's scale) in the data's units, as
# series_back() maps one draw, column by column in place: apply() over the
# draws held three copies of them and more (a 3.4 GB peak for 1,000 draws of
# a 50,000-frame gap, 392 MB of results, in a user review).
series_back_draws <- function(model, v, ij, S) {
  a <- series_back_affine(model, v, ij)
  for (k in seq_len(ncol(S))) S[, k] <- a$center[k] + a$scale[k] * S[, k]
  tr <- model$transform
  for (j in unique(ij[, 2])) {
    if ((is.null(tr$lower) || is.na(tr$lower[[j]])) && is.na(tr$lambda[[j]])) next  # its own scale: nothing to map
    k <- which(ij[, 2] == j)
    S[, k] <- map_variable(as.vector(S[, k]), j, tr, boxcox_inverse, bounded_scale_inverse)
  }
  S
}

# The map of values of v's missing entries `ij` (frame-major) from the
# model's standardised scale to the data's units.
series_back <- function(model, v, ij) {
  a <- series_back_affine(model, v, ij)
  function(z) from_model_scale_vec(a$center + a$scale * z, ij[, 2], model$transform)  # over the m missing entries
}

# The affine part of that map per missing entry: centre (with a fixed
# seasonal profile) and scale.
series_back_affine <- function(model, v, ij) {
  ce <- model$center[ij[, 2]]
  if (!is.null(model$profile)) ce <- ce + series_profile_frames(model$profile, nrow(v))[ij]
  list(center = ce, scale = model$scale[ij[, 2]])
}

# The point and the per-entry intervals of v's missing entries (frame-major)
# from their conditional means and sds on the model's standardised scale, in
# the data's units (exact Gaussian quantiles, mapped back); `back` maps values
# of those entries from the standardised scale.
series_bands <- function(model, v, mean, sd, level) {
  ij <- missing_index(is.na(v))
  back <- series_back(model, v, ij)
  point <- v
  if (nrow(ij)) point[ij] <- back(mean)
  dimnames(point) <- dimnames(v)
  bands <- level_bands(v, ij, back, mean, sd, level)
  list(point = point, lower = bands[[1]]$lower, upper = bands[[1]]$upper, bands = bands, ij = ij, back = back)
}

# The exact per-entry intervals (list(lower, upper), T x d) at one level of
# the missing entries of v from their conditional means and sds on the
# model's scale (frame-major, as series_model_intervals() gives them), a set's
# groups each mapped back by its own part: confint() at another level than
# the imputation's (from the paths, their order statistics moved widths by
# 0.83-1.23x against these: a review).
series_exact_bands <- function(model, v, mean, sd, level) {
  if (!inherits(model, "ditimpute_series_model_set")) return(series_bands(model, v, mean, sd, level)[c("lower", "upper")])
  ij <- missing_index(is.na(v))
  key <- function(i, j) i + nrow(v) * (j - 1)
  out <- list(lower = matrix(NA_real_, nrow(v), ncol(v), dimnames = dimnames(v)))
  out$upper <- out$lower
  for (g in seq_along(model$parts)) {
    cols <- model$groups[[g]]
    vg <- v[, cols, drop = FALSE]
    ig <- missing_index(is.na(vg))
    if (!nrow(ig)) next
    pos <- match(key(ig[, 1], cols[ig[, 2]]), key(ij[, 1], ij[, 2]))
    b <- series_exact_bands(model$parts[[g]], vg, mean[pos], sd[pos], level)
    out$lower[, cols] <- b$lower
    out$upper[, cols] <- b$upper
  }
  out
}

# The per-entry intervals of v's missing entries `ij` at each of `level`
# (a vector), from their means and sds on the model's scale mapped back by
# `back`: one list(lower, upper) of n x d matrices per level, NA where v is
# observed. Gaussian quantiles, so several levels cost no more draws.
level_bands <- function(v, ij, back, mean, sd, level) {
  lapply(level, function(L) {
    z <- stats::qnorm(1 - (1 - L) / 2)
    lower <- upper <- matrix(NA_real_, nrow(v), ncol(v), dimnames = dimnames(v))
    if (nrow(ij)) {
      lower[ij] <- back(mean - z * sd)
      upper[ij] <- back(mean + z * sd)
    }
    list(lower = lower, upper = upper)
  })
}

# The per-entry intervals (list(lower, upper), as series_model_intervals()
# gives them) of each series in `vs`, versions of one series with other
# entries missing (the rounds of a self-calibration): one core call for all,
# the versions in parallel, no draws. With several levels, `bands` holds
# each level's (lower and upper are the first level's), from the same call
# (a review: predict(calibrate = TRUE) had smoothed every version once per
# level, 0.80 s for three levels of a 20,000-frame series against 0.30 s).
series_model_bands <- function(model, vs, level, threads, call = rlang::caller_env()) {
  if (inherits(model, "ditimpute_series_model_set")) {
    out <- lapply(vs, function(v) {
      na <- matrix(NA_real_, nrow(v), ncol(v), dimnames = dimnames(v))
      list(bands = rep(list(list(lower = na, upper = na)), length(level)))
    })
    for (g in seq_along(model$parts)) {
      cols <- model$groups[[g]]
      part <- series_model_bands(model$parts[[g]], lapply(vs, function(v) v[, cols, drop = FALSE]), level, threads, call)
      for (r in seq_along(vs)) for (k in seq_along(level)) {
        out[[r]]$bands[[k]]$lower[, cols] <- part[[r]]$bands[[k]]$lower
        out[[r]]$bands[[k]]$upper[, cols] <- part[[r]]$bands[[k]]$upper
      }
    }
    return(lapply(out, function(o) c(o$bands[[1]], o)))  # lower and upper: the first level's
  }
  # Each version's seasonal shape estimated without its hidden values, as a
  # real gap's is (series_profile_refit()).
  models <- lapply(vs, series_profile_refit, model = model)
  res <- core_call(cpp_structural_moments(Map(scale_cols, vs, models), model$candidate,
                                          list(threads = threads)), call = call)
  Map(function(v, m, r) series_bands(m, v, r$mean, r$sd, level)[c("lower", "upper", "bands")], vs, models, res)
}

# The model with its fixed seasonal shape (series_profile()) estimated again
# from v, a version of the series with further values hidden (the rounds of a
# self-calibration), for the variables that hold one; every other parameter
# stays. The shape is the position means of about n / p values each; with
# the hidden values inside them the rounds' errors were smaller than a real
# gap's, and the calibration narrowed intervals that were not too wide
# (forecast::taylor, 12 weeks of a 336-frame week: raw 90% coverage 88.9%,
# calibrated 86.8% with the shape kept, 92.4% with it estimated again, on the
# same rounds: bench/results/series_profile_calibration.md).
# A variable whose version leaves a position under 3 values keeps its shape.
series_profile_refit <- function(model, v) {
  if (is.null(model$profile)) return(model)
  u <- to_model_scale(v, model$transform)
  for (j in which(colSums(model$profile != 0) > 0)) {
    sh <- series_profile_shape(u[, j], nrow(model$profile), model$profile_harmonics)
    if (!is.null(sh)) model$profile[, j] <- sh$shape
  }
  model
}

# A variance share for print.ditimpute_series_model(): 3 decimals, or 2 significant digits below
# 0.001 (a share of 1e-6 is not "0.000"); "0" only when it is 0.
series_share_text <- function(p) {
  if (!is.finite(p)) return(format(p))
  if (p == 0) return("0")
  if (p < 0.001) return(sprintf("%.2g", p))
  sprintf("%.3f", p)
}

#' @export
print.ditimpute_series_model <- function(x, ...) {
  check_dots(environment(), "print()", also = print_dots)
  print_wrapped(series_model_text, x)
}

series_model_text <- function(x) {
  s <- x$spec
  trend <- switch(x$model_name, stationary = "stationary GP around a fixed line", level = "local level",
                  trend = "local linear trend")
  cat(sprintf("<ditimpute_series_model> %s, %s kernel%s%s\n", trend, x$kernel_name,
              switch(x$kernel_name, seasonal = sprintf(" (period %g)", x$period),
                     cycle = if (isTRUE(s$period_max > s$period_min)) {
                       sprintf(" (period %.4g, fitted%s)", x$period,
                               if (isTRUE(x$calendar_period >= 2)) sprintf("; %.3g calendar periods of %g", x$period / x$calendar_period,
                                                                       x$calendar_period) else "")
                     } else {  # held at a harmonic of the calendar's period (series_calendar_harmonic())
                       sprintf(" (period %.4g, held: 1/%d of the calendar's %g)", x$period,
                               as.integer(round(x$calendar_period / x$period)), x$calendar_period)
                     }, ""),
              series_scale_text(x$transform)))
  # A smooth term whose lengthscale exceeds the fitted stretch is a slow
  # drift over it: its variance is mostly an offset and a slope that the
  # level's start (or the stationary form's line) takes, so the likelihood
  # pins down little more than its curvature, and the fit can make the
  # variance orders of magnitude larger than the other parts' (Seatbelts'
  # drivers, front, rear and kms: lengthscale 2.5e4 frames on 192, the
  # variance 1.8e5 times the season's). With it in the total the shares read
  # "season 0.000, nugget 0.000" for a season that BIC preferred by hundreds:
  # it is left out of the shares, and the print says so.
  slow <- isTRUE(s$smooth_lengthscale > x$fit_frames)
  tot <- (if (slow) 0 else s$smooth_var) + s$nugget + (if (isTRUE(s$seasonal)) s$season_var else 0)
  share <- function(v) series_share_text(v / tot)
  season <- if (isTRUE(s$seasonal)) sprintf("%s %s (periodic lengthscale %.3g, decay %.3g)",
                                            if (x$kernel_name == "cycle") "cycle" else "season", share(s$season_var),
                                            s$periodic_lengthscale, s$season_decay)
  cat(sprintf("  variance shares of the stationary part%s: %s\n", if (slow) " less its smooth term" else "",
              paste(c(if (!slow) sprintf("smooth %s (lengthscale %.3g)", share(s$smooth_var), s$smooth_lengthscale),
                      season, sprintf("nugget %s", share(s$nugget))), collapse = ", ")))
  if (slow) {
    cat(sprintf(paste0("  smooth term: lengthscale %.3g frames, longer than the %d fitted: a slow drift over them, whose",
                       " variance (mostly an offset and slope that the %s takes) is poorly identified; left out of the shares\n"),
                s$smooth_lengthscale, as.integer(x$fit_frames), if (x$model_name == "stationary") "line" else "level"))
  }
  if (!is.null(x$profile)) {
    cat(sprintf("  seasonal shape held fixed (its harmonics above the season's %d beyond the kernel's reach): %s\n",
                x$profile_harmonics, paste(x$variables[colSums(x$profile != 0) > 0], collapse = ", ")))
  }
  moved <- isTRUE(x$rate_multiplier != 1)  # the level's rate chosen on hidden gaps (series_rate_step())
  if (x$model_name != "stationary") {
    ratio <- s$level_rate / tot
    # a stationary part near zero (the fit at its bound) makes the ratio
    # astronomical (1e+10): say what it means instead
    walk <- ratio > 1e4
    less <- if (slow) " less the smooth term's" else ""
    cat(sprintf("  level noise per frame: %s%s%s\n",
                if (walk) sprintf("nearly all of the variance (the stationary part%s is under 1e-4 of it: a random walk)",
                                  if (slow) ", less its smooth term," else "") else sprintf("%.3g of the stationary variance%s", ratio, less),
                if (moved) sprintf(" (%g times the maximum-likelihood rate)", x$rate_multiplier) else "",
                if (x$model_name != "trend") "" else if (walk) sprintf("; slope noise %.3g of the level noise",
                                                                       s$slope_rate / s$level_rate) else
                  sprintf("; slope noise %.3g", s$slope_rate / tot)))
  }
  r2 <- x$innovation_r2
  if (length(r2) > 1 && !anyNA(r2)) {
    cat(sprintf("  share of each variable's one-step changes the others explain: %s\n",
                paste(sprintf("%s %.1f%%", names(r2), 100 * r2), collapse = ", ")))
    print_chance_adjusted(x)
  }
  cat(sprintf("  fitted on frames %d-%d: log-likelihood %.2f%s, %d parameters, BIC %.2f%s\n", x$fit_start,
              x$fit_start + x$fit_frames - 1L, x$loglik, if (moved) " at that rate" else "",
              as.integer(x$df), x$candidates$BIC[x$candidates$chosen], if (moved) " at the maximum" else ""))
  chosen <- x$candidates[x$candidates$chosen, , drop = FALSE]
  if (nrow(chosen) == 1 && isFALSE(chosen$converged)) {
    cat(sprintf(paste0("  the chosen form's likelihood search stopped at its limit of %d evaluations before it ",
                       "converged: its parameters may lie a little off the maximum\n"), as.integer(chosen$evaluations)))
  }
  sel <- x$selection
  for (step in unique(sel$step)) {
    st <- sel[sel$step == step, ]
    won <- which(st$chosen)
    name <- switch(step, kernel = c(sprintf("the %s kernel", st$kernel[1]), "the cycle"),
                   rate = sub("^.*\\((.*)\\)$", "\\1", st$model), sprintf("the %s model", st$model))
    crps <- distinct_digits(st$crps[c(won, 3 - won)])
    # One hidden gap has no standard error of the difference (a review saw "SE Inf").
    se <- if (is.finite(st$se[2])) sprintf(", SE %.2g", st$se[2]) else ", no standard error from one gap"
    cat(sprintf("  %s chosen on %s of the series' own lengths%s (%d values): %s, mean CRPS %s against %s for %s (difference of %s's %.3g%s)\n",
                if (step == "rate") "level rate" else step, plural(st$hidden_gaps[1], "hidden gap"),
                if (step == "rate") " anywhere in the series" else "", st$hidden_values[1], name[won], crps[1],
                crps[2], name[3 - won], name[2], st$difference[2], se))
  }
  invisible(x)
}

# Two numbers to as many significant digits as tell them apart (3 to 6),
# so that a comparison does not print "0.0128 against 0.0128".
distinct_digits <- function(v) {
  if (anyNA(v) || v[1] == v[2]) return(trimws(formatC(v, digits = 3, format = "g")))
  for (k in 3:6) {
    out <- formatC(signif(v, k), digits = k, format = "g", flag = "#")
    if (out[1] != out[2]) break
  }
  sub("\\.$", "", out)
}

# The shares beyond chance (series_chance_adjusted(), what separate = "auto"
# decides on), printed where they differ from the raw ones by half a point.
print_chance_adjusted <- function(x) {
  r2 <- x$innovation_r2
  adj <- x$innovation_r2_adjusted
  # shown where it differs in print, or where it falls on the other side of
  # the threshold (a raw 5.2% that is 4.7% beyond chance split the variable)
  crosses <- (r2 < series_lone_share) != (adj < series_lone_share)
  if (is.null(adj) || anyNA(adj) || (all(abs(adj - r2) < 0.005) && !any(crosses))) return(invisible())
  cat(sprintf("  the same beyond chance over %d frames (what separate = \"auto\" compares with %g%%): %s\n",
              as.integer(round(x$nobs / length(r2))), 100 * series_lone_share,
              paste(sprintf("%s %.1f%%", names(adj), 100 * adj), collapse = ", ")))
}

#' @export
print.ditimpute_series_model_set <- function(x, ...) {
  check_dots(environment(), "print()", also = print_dots)
  print_wrapped(series_model_set_text, x)
}

series_model_set_text <- function(x) {
  cat(sprintf("<ditimpute_series_model_set> %d independent groups of variables, each with its own form; log-likelihood %.2f, %d parameters\n",
              length(x$parts), x$loglik, as.integer(x$df)))
  r2 <- x$innovation_r2
  if (!anyNA(r2)) {
    cat(sprintf("  share of each variable's one-step changes the others explain (all variables together): %s\n",
                paste(sprintf("%s %.1f%%", names(r2), 100 * r2), collapse = ", ")))
    print_chance_adjusted(x)
  }
  # separate = "auto" refits the variables it kept together and checks
  # again: the shares that split more of them off
  for (r2 in x$separate_rounds) {
    cat(sprintf("  refitted together, beyond chance (what split more off): %s\n",
                paste(sprintf("%s %s", names(r2), ifelse(r2 > 0, sprintf("%.1f%%", 100 * r2), "none")), collapse = ", ")))
  }
  for (g in seq_along(x$parts)) {
    cat(sprintf("- %s:\n", paste(x$variables[x$groups[[g]]], collapse = ", ")))
    print(x$parts[[g]])
  }
  invisible(x)
}

#' @export
logLik.ditimpute_series_model <- function(object, ...) {
  check_loglik_dots(environment())
  structure(object$loglik, df = object$df, nobs = object$nobs, class = "logLik")
}
