# impute_series()'s intervals at levels other than 0.9: coverage at 0.5,
# 0.8, 0.95 and 0.99 (raw, and with calibrate = TRUE at 0.5 / 0.8 / 0.95 on
# four long series), by gap length, on real series no benchmark was tuned
# for: 3,000-frame windows of sunspot.month, treering, ETTh2 (OT, HUFL) and
# BeijingAir stations other than the first (Wanliu PM2.5 and PM10, Tiantan
# TEMP, Huairou O3), and short R series (austres, JohnsonJohnson,
# LakeHuron, lynx, nhtemp, Nile, nottem, UKgas). Gaps never overlap and lie
# at least 3 frames apart: per seed, a long series hides 30 single values and
# 12 / 6 / 3 gaps of 5 / 20 / 60 frames, a short one 4 single values and 2
# gaps of 5 (fewer where a short series has no room left). Standard errors treat each hidden gap as one cluster. Also:
# confint() of the 0.95 imputation at the other levels against imputing at
# them (equal when the intervals are exact), MAE against linear
# interpolation, and the smallest imputation and lower bound on the real
# missing values of positive series. Defaults otherwise, one thread.
# Usage: Rscript bench/series_levels.R [long seeds] [short seeds] [cal seeds] [out.md]
#   e.g. Rscript bench/series_levels.R 1:6 1:40 1:3 (the defaults)
suppressPackageStartupMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
seq_arg <- function(k, default) if (length(args) >= k) eval(parse(text = args[k])) else default
long_seeds <- seq_arg(1, 1:6)
short_seeds <- seq_arg(2, 1:40)
cal_seeds <- seq_arg(3, 1:3)
out <- if (length(args) >= 4) args[4] else "bench/results/series_levels.md"
data_dir <- Sys.getenv("DITIMPUTE_DATA_DIR", file.path("..", "shared", "data"))

beijing <- function(station, col, start, n) {
  d <- utils::read.csv(file.path(data_dir, "beijing_air", sprintf("PRSA_Data_%s_20130301-20170228.csv.gz", station)))
  d[[col]][start:(start + n - 1)]
}
etth2 <- function(col, start, n) utils::read.csv(file.path(data_dir, "ett", "ETTh2.csv.gz"))[[col]][start:(start + n - 1)]
series <- list(
  sunspot = function() as.numeric(sunspot.month[1:3000]),
  treering = function() as.numeric(treering[4001:7000]),
  ETTh2_OT = function() etth2("OT", 8001, 3000),
  ETTh2_HUFL = function() etth2("HUFL", 2001, 3000),
  Wanliu_PM25 = function() beijing("Wanliu", "PM2.5", 10001, 3000),
  Tiantan_TEMP = function() beijing("Tiantan", "TEMP", 20001, 3000),
  Huairou_O3 = function() beijing("Huairou", "O3", 5001, 3000),
  Wanliu_PM10 = function() beijing("Wanliu", "PM10", 25001, 3000),
  austres = function() ts(as.numeric(austres), frequency = 4),
  JohnsonJohnson = function() ts(as.numeric(JohnsonJohnson), frequency = 4),
  LakeHuron = function() as.numeric(LakeHuron),
  lynx = function() as.numeric(lynx),
  nhtemp = function() as.numeric(nhtemp),
  Nile = function() as.numeric(Nile),
  nottem = function() ts(as.numeric(nottem), frequency = 12),
  UKgas = function() ts(as.numeric(UKgas), frequency = 4))
calibrated <- c("sunspot", "ETTh2_OT", "Wanliu_PM25", "Tiantan_TEMP")

# Non-overlapping gaps, at least 3 frames apart and from the ends, longest placed first.
hide <- function(x0, counts, seed) {
  set.seed(1000 + seed)
  n <- length(x0)
  gid <- integer(n)
  busy <- is.na(x0)
  g <- 0L
  for (L in rev(as.integer(names(counts)))) for (k in seq_len(counts[[as.character(L)]])) {
    free <- FALSE
    for (try in 1:1000) {
      s <- sample(4:(n - L - 3), 1)
      if (free <- !any(busy[(s - 3):(s + L + 2)])) break
    }
    if (!free) next  # no room left (a short series): one gap fewer, none overlapping
    busy[(s - 3):(s + L + 2)] <- TRUE
    g <- g + 1L
    gid[s:(s + L - 1)] <- g
  }
  gid
}

run_one <- function(name, seed, cal) {
  y <- series[[name]]()
  x0 <- as.numeric(y)
  n <- length(x0)
  counts <- if (n < 500) c(`1` = 4, `5` = 2) else c(`1` = 30, `5` = 12, `20` = 6, `60` = 3)
  gid <- hide(x0, counts, seed)
  h <- which(gid > 0)
  x <- y
  x[h] <- NA
  glen <- as.vector(table(gid[h])[as.character(gid[h])])
  lin <- stats::approx(seq_len(n), as.numeric(x), xout = seq_len(n), rule = 2)$y
  levels <- if (cal) c(0.5, 0.8, 0.95) else c(0.5, 0.8, 0.95, 0.99)
  row <- function(src, L, est, lo, up) {
    data.frame(series = name, seed = seed, src = src, level = L, idx = h, gap = paste(name, seed, gid[h]), glen = glen,
               truth = x0[h], point = est, lower = lo, upper = up, lin = lin[h])
  }
  rows <- list()
  at95 <- NULL
  real_na <- is.na(x0)
  low <- c(point = Inf, lower = Inf)
  for (L in levels) {
    imp <- suppressWarnings(impute_series(x, level = L, seed = seed, threads = 1, calibrate = cal, progress = FALSE))
    rows[[length(rows) + 1]] <- row(if (cal) "calibrated" else "raw", L, imp$point[h], imp$lower[h], imp$upper[h])
    if (L == 0.95) at95 <- imp
    if (any(real_na)) low <- pmin(low, c(min(imp$point[real_na]), min(imp$lower[real_na])))
  }
  if (!cal) for (L in setdiff(levels, 0.95)) {
    ci <- tryCatch(confint(at95, level = L), error = function(e) NULL)
    if (is.null(ci)) next
    ci <- ci[match(h, ci$frame), ]
    rows[[length(rows) + 1]] <- row("confint of 0.95", L, ci$estimate, ci$lower, ci$upper)
  }
  d <- do.call(rbind, rows)
  d$real_na_min_point <- low[["point"]]
  d$real_na_min_lower <- low[["lower"]]
  d
}

started <- Sys.time()
jobs <- c(lapply(names(series), function(s) list(s, if (s %in% names(series)[1:8]) long_seeds else short_seeds, FALSE)),
          lapply(calibrated, function(s) list(s, cal_seeds, TRUE)))
d <- do.call(rbind, lapply(jobs, function(j) {
  do.call(rbind, lapply(j[[2]], function(seed) {
    t0 <- proc.time()[["elapsed"]]
    r <- run_one(j[[1]], seed, j[[3]])
    message(sprintf("%s seed %d%s: %.1f s", j[[1]], seed, if (j[[3]]) " calibrated" else "", proc.time()[["elapsed"]] - t0))
    r
  }))
}))
d$cov <- d$lower <= d$truth & d$truth <= d$upper
d$long <- d$series %in% names(series)[1:8]

# Coverage with its SE, each gap one cluster: "cov (se)".
cov_se <- function(z) {
  if (!nrow(z)) return("-")
  hit <- tapply(z$cov, z$gap, sum)
  m <- tapply(z$cov, z$gap, length)
  p <- sum(hit) / sum(m)
  k <- length(hit)
  se <- if (k > 1) sqrt(sum((hit - p * m)^2) / (k * (k - 1))) * k / sum(m) else NA
  sprintf("%.3f (%.3f)", p, se)
}
lv <- c(0.5, 0.8, 0.95, 0.99)
table_rows <- function(groups) {
  vapply(names(groups), function(g) {
    z <- groups[[g]]
    sprintf("| %s | %d | %d | %s |", g, length(unique(z$gap)), sum(z$level == z$level[1]),
            paste(vapply(lv, function(L) cov_se(z[z$level == L, ]), ""), collapse = " | "))
  }, "")
}
raw <- d[d$src == "raw", ]
groups <- c(list(`long, all gaps` = raw[raw$long, ]),
            stats::setNames(lapply(c(1, 5, 20, 60), function(L) raw[raw$long & raw$glen == L, ]),
                            paste("long, length", c(1, 5, 20, 60))),
            list(`short, all gaps` = raw[!raw$long, ]),
            stats::setNames(lapply(c(1, 5), function(L) raw[!raw$long & raw$glen == L, ]), paste("short, length", c(1, 5))))
per_series <- stats::setNames(lapply(names(series), function(s) raw[raw$series == s, ]), names(series))
cal <- d[d$src == "calibrated", ]
raw_same <- raw[raw$series %in% calibrated & raw$seed %in% cal_seeds, ]
ci <- d[d$src == "confint of 0.95", ]
ci_rows <- vapply(c(0.5, 0.8, 0.99), function(L) {
  a <- raw[raw$level == L, ]
  b <- ci[ci$level == L, ]
  if (!nrow(b)) return(sprintf("| %g | - | - | - |", L))
  k <- match(paste(b$series, b$seed, b$idx), paste(a$series, a$seed, a$idx))
  sprintf("| %g | %d | %.3g | %.3g |", L, nrow(b), max(abs(b$lower - a$lower[k]), abs(b$upper - a$upper[k])) /
            stats::median(a$upper[k] - a$lower[k]), stats::median((b$upper - b$lower) / (a$upper[k] - a$lower[k])))
}, "")
mae <- vapply(names(series), function(s) {
  z <- raw[raw$series == s & raw$level == 0.95, ]
  paste(vapply(sort(unique(z$glen)), function(L) {
    y <- z[z$glen == L, ]
    sprintf("%d: %.3g / %.3g", L, mean(abs(y$point - y$truth)), mean(abs(y$lin - y$truth)))
  }, ""), collapse = "; ")
}, "")
pos <- d[d$series %in% c("Wanliu_PM25", "Wanliu_PM10", "Huairou_O3") & d$src == "raw", ]
lines <- c(
  "# impute_series() intervals at levels 0.5-0.99 on real series (bench/series_levels.R)", "",
  sprintf(paste("`Rscript bench/series_levels.R` on %s (%.0f min), ditimpute from %s, one thread; long-series seeds %s,",
                "short-series seeds %s, calibrated seeds %s. Coverage (SE, each hidden gap one cluster)."),
          format(started, "%Y-%m-%d %H:%M UTC", tz = "UTC"), as.numeric(difftime(Sys.time(), started, units = "mins")),
          find.package("ditimpute"), paste(range(long_seeds), collapse = "-"), paste(range(short_seeds), collapse = "-"),
          paste(range(cal_seeds), collapse = "-")), "",
  "## Raw intervals (calibrate = FALSE)", "",
  "| group | gaps | entries per level | 0.5 | 0.8 | 0.95 | 0.99 |", "|---|---|---|---|---|---|---|",
  table_rows(groups), "", "Per series:", "",
  "| series | gaps | entries per level | 0.5 | 0.8 | 0.95 | 0.99 |", "|---|---|---|---|---|---|---|",
  table_rows(per_series), "",
  "## calibrate = TRUE against raw, the same series and seeds", "",
  "| intervals | gaps | entries per level | 0.5 | 0.8 | 0.95 | 0.99 |", "|---|---|---|---|---|---|---|",
  table_rows(list(raw = raw_same, calibrated = cal)), "",
  "## confint() of the 0.95 imputation at another level against imputing at that level", "",
  "| level | entries | largest difference of a bound / median width | median width ratio |", "|---|---|---|---|",
  ci_rows, "",
  "## MAE at level 0.95 against linear interpolation, by gap length (ditimpute / linear)", "",
  "| series | by gap length |", "|---|---|", sprintf("| %s | %s |", names(mae), mae), "",
  sprintf(paste("Positive series (Wanliu PM2.5, PM10, Huairou O3, default `transform = \"auto\"`): smallest imputation",
                "and lower bound over the hidden values at any level %.3g and %.3g; on the real missing values %.3g and %.3g."),
          min(pos$point), min(pos$lower), min(pos$real_na_min_point), min(pos$real_na_min_lower)))
writeLines(lines, out)
cat(lines, sep = "\n")
