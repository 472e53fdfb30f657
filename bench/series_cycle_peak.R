# The periodogram peak that starts a cycle (series_cycle_peak(), used by
# kernel = "cycle" and by kernel = "auto"'s screen), against the former rule
# (commit 52334f4: the three-bin average's excess over one power law fitted
# to the whole log periodogram, the average an R loop, the start always the
# highest peak), in one run:
# 1. Time at 600,000 frames (a random walk, sd 0.05 a frame, plus a daily
#    sine of amplitude 1 and noise of sd 0.3; 1% of frames missing), each
#    rule 3 times, alternately; and the period each finds there (24 is the
#    truth).
# 2. Every series of R's datasets that is a ts of 24 frames or more (each
#    column), two columns of ETTh1 and of BeijingAir Dingling, and simulated
#    white noise, AR(1) (0.8) and random walks with noise (500 frames, 10
#    each), and the 40 simulated 37-frame cycles of
#    bench/series_cycle_checks.R: period and prominence under both rules.
# 3. The inputs the series benches give the screen: every repetition of
#    bench/series_cycle.R's, bench/series_long.R's and bench/series_fresh.R's
#    gaps in their series (on the model's scale, transform = "auto" as
#    impute_series() fits it): how often the screen's outcome (prominence
#    >= series_cycle_prominence) or the start period differs between the rules.
#    Where neither differs, those benches' results do not depend on the
#    change.
# 4. 400 random walks with noise (1,500 frames, sd 0.1 a frame, noise sd
#    0.3; frames 300-360 and 150 scattered frames missing; seeds 1-400, the
#    construction of tests/testthat/test-series.R's walk): how many pass the
#    screen (new rule), and on those, what impute_series()'s default chose
#    on its hidden gaps and its MAE on the hidden values against
#    kernel = "smooth"'s (the forms it would keep without the cycle).
#
# Usage: Rscript bench/series_cycle_peak.R [reps]   (repository root; reps
# per series in part 3, default 20)
# Writes bench/results/series_cycle_peak.md.
suppressMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
reps <- if (length(args) >= 1) as.integer(args[1]) else 20L
source("bench/series_long_parts.R")
src <- series_long_parts(kalman_limit = 60)
src$data_dir <- Sys.getenv("DITIMPUTE_DATA", file.path("..", "shared", "data"))
peak_new <- ditimpute:::series_cycle_peak
threshold <- ditimpute:::series_cycle_prominence

# The former rule (52334f4), kept here only to compare against: the same
# log periodogram (ditimpute:::series_log_periodogram()), its background one
# power law fitted to all of it.
peak_former <- function(v) {
  n <- nrow(v)
  k <- seq_len(floor(n / 4))
  k <- k[k >= 4 & n / k >= 4]
  if (length(k) < 3) return(NULL)
  lp <- ditimpute:::series_log_periodogram(v)
  half <- seq_along(lp)
  sm <- vapply(half, function(i) mean(lp[max(1, i - 1):min(length(lp), i + 1)]), 0)
  background <- stats::fitted(stats::lm(lp ~ log(half)))
  best <- k[which.max(sm[k] - background[k])]
  near <- intersect(best + (-1):1, k)
  list(period = n / near[which.max(lp[near])], prominence = sm[best] - background[best])
}
both <- function(v) {
  a <- peak_former(v)
  b <- peak_new(v)
  if (is.null(a) || is.null(b)) return(NULL)  # under 24 frames (uspop): no cycle is looked for
  data.frame(former_period = a$period, former_prominence = a$prominence, period = b$period, prominence = b$prominence)
}
model_scale <- function(y) {
  v <- matrix(as.numeric(y), ncol = 1)
  ditimpute:::to_model_scale(v, ditimpute:::series_transforms(v, "auto"))
}

# 1. Time at 600,000 frames.
set.seed(1)
n_big <- 600000
big <- cumsum(rnorm(n_big, sd = 0.05)) + sin(2 * pi * seq_len(n_big) / 24) + rnorm(n_big, sd = 0.3)
big[sample(n_big, n_big / 100)] <- NA
big <- matrix(big)
secs <- list(former = numeric(0), new = numeric(0))
for (i in 1:3) {
  secs$former <- c(secs$former, system.time(pf <- peak_former(big))[["elapsed"]])
  secs$new <- c(secs$new, system.time(pn <- peak_new(big))[["elapsed"]])
}

# 2. Whole series.
whole <- list()
add <- function(name, y) {
  v <- matrix(as.numeric(y), ncol = 1)
  if (nrow(v) < 24) return()
  whole[[length(whole) + 1]] <<- cbind(series = name, n = nrow(v), both(v))
}
for (s in ls("package:datasets")) {
  x <- get(s, "package:datasets")
  if (!stats::is.ts(x)) next
  x <- as.matrix(x)
  if (!is.numeric(x)) next
  for (j in seq_len(ncol(x))) add(paste0(s, if (ncol(x) > 1) paste0("[, ", j, "]")), x[, j])
}
for (name in c("ETTh1_HUFL", "ETTh1_OT", "BeijingAir_Dingling_PM2.5", "BeijingAir_Dingling_TEMP")) add(name, src$other_series(name)())
set.seed(3)
for (r in 1:10) {
  add(paste0("white noise ", r), rnorm(500))
  add(paste0("AR(1) ", r), stats::arima.sim(list(ar = 0.8), 500))
  add(paste0("random walk ", r), cumsum(rnorm(500)) + rnorm(500))
}
for (s in 1:40) {  # bench/series_cycle_checks.R's
  set.seed(s)
  add(paste0("37-frame cycle ", s), cumsum(rnorm(300, sd = 0.1)) + sin(2 * pi * seq_len(300) / 37) + rnorm(300, sd = 0.5))
}
whole <- do.call(rbind, whole)

# 3. The benches' gapped inputs.
series_of <- function(name) {
  if (name %in% names(src$series)) return(src$series[[name]]())
  if (exists(name, envir = asNamespace("datasets"))) return(get(name, envir = asNamespace("datasets")))
  src$other_series(name)()
}
fresh <- c("AirPassengers", "lynx", "LakeHuron", "USAccDeaths", "JohnsonJohnson", "UKDriverDeaths", "WWWusage",
           "sunspot.year", "presidents", "austres", "BJsales", "nhtemp", "mdeaths", "discoveries", "airmiles", "lh",
           "sunspots", "uspop")
benches <- list(
  series_cycle = list(names = c("sunspot.month", "lynx", "sunspot.year", "sunspots", "treering", "Nile", "LakeHuron",
                                "co2", "nottem", "UKDriverDeaths", "ETTh1_HUFL", "BeijingAir_Dingling_TEMP"),
                      cap = function(y0) if (length(y0) < 4000) max(2L, length(y0) %/% 8L) else 400L),
  series_long = list(names = names(src$series), cap = function(y0) 400L),
  series_fresh = list(names = fresh, cap = function(y0) max(2L, length(y0) %/% 8L)))
gapped <- list()
for (b in names(benches)) {
  for (name in benches[[b]]$names) {
    y0 <- series_of(name)
    for (r in seq_len(if (length(y0) > 10000) min(reps, 5L) else reps)) {
      g <- src$hide_repetition(y0, name, r, 0.15, max_len = benches[[b]]$cap(y0))
      res <- both(model_scale(g$y))
      if (!is.null(res)) gapped[[length(gapped) + 1]] <- cbind(bench = b, series = name, rep = r, res)
    }
  }
}
gapped <- do.call(rbind, gapped)
gapped$screen_differs <- (gapped$former_prominence >= threshold) != (gapped$prominence >= threshold)
gapped$start_differs <- abs(gapped$former_period - gapped$period) > 1e-9 &
  (gapped$former_prominence >= threshold | gapped$prominence >= threshold)

# 4. Random walks.
n_walk <- 1500
walks <- lapply(1:400, function(s) {
  set.seed(s)
  z0 <- cumsum(rnorm(n_walk, sd = 0.1)) + rnorm(n_walk, sd = 0.3)
  z <- z0
  z[c(300:360, sample(n_walk, 150))] <- NA
  list(seed = s, z0 = z0, z = z, prominence = peak_new(matrix(z))$prominence)
})
walk_prom <- vapply(walks, `[[`, 0, "prominence")
passing <- walks[walk_prom >= threshold]
walk_rows <- do.call(rbind, lapply(passing, function(w) {
  h <- is.na(w$z)
  a <- impute_series(w$z, level = 0.9, n_samples = 20, seed = 1)
  b <- impute_series(w$z, level = 0.9, n_samples = 20, seed = 1, kernel = "smooth")
  sel <- a$model$selection
  data.frame(seed = w$seed, missing = mean(h), prominence = w$prominence, chosen = a$model$kernel_name,
             crps_smooth = sel$crps[1], crps_cycle = sel$crps[2], difference = sel$difference[2], se = sel$se[2],
             mae = mean(abs(a$point[h] - w$z0[h])), mae_smooth = mean(abs(b$point[h] - w$z0[h])))
}))

f2 <- function(x) sprintf("%.2f", x)
f1 <- function(x) sprintf("%.1f", x)
flagged <- whole[whole$former_prominence >= threshold | whole$prominence >= threshold |
                   abs(whole$former_period - whole$period) > 0.5 & !grepl("^(white|AR|random|37)", whole$series), ]
cyc <- whole[grepl("^37-frame", whole$series), ]
noise <- whole[grepl("^(white|AR|random)", whole$series), ]
per <- aggregate(cbind(screen_differs, start_differs) ~ bench + series, gapped, sum)
per$reps <- aggregate(rep ~ bench + series, gapped, length)$rep
per$prominence_range <- aggregate(prominence ~ bench + series, gapped, function(x) paste(f2(range(x)), collapse = "-"))$prominence
per$former_range <- aggregate(former_prominence ~ bench + series, gapped, function(x) paste(f2(range(x)), collapse = "-"))$former_prominence
per$periods <- aggregate(period ~ bench + series, gapped, function(x) paste(unique(f1(x)), collapse = ", "))$period
per <- per[order(per$bench, per$series), ]
md <- c("# The periodogram peak that starts a cycle: the local background against the former power law (bench/series_cycle_peak.R)", "",
        sprintf("`Rscript bench/series_cycle_peak.R %d` on %s (ditimpute %s); load average at the end: %s (2 cores).", reps,
                format(Sys.Date()), utils::packageVersion("ditimpute"), paste(readLines("/proc/loadavg"), collapse = " ")), "",
        "Former rule (52334f4): the three-bin log average's excess over one power law fitted to the whole log periodogram.",
        "Now: its excess over the mean log periodogram 1.3-3 times lower and 1.3-3 times higher in frequency (the two sides averaged); the start moves to 3 or 2 times the highest peak's period when the bins there pass the screen too (the cycle of which the peak is a harmonic).",
        sprintf("Screen threshold: prominence >= %g.", threshold), "",
        "## 1. 600,000 frames (random walk + daily sine + noise, 1% missing)", "",
        "| rule | seconds (3 runs) | median | period found | prominence |", "|---|---|---|---|---|",
        sprintf("| former | %s | %.2f | %s | %s |", paste(f2(secs$former), collapse = ", "), stats::median(secs$former), f1(pf$period), f2(pf$prominence)),
        sprintf("| now | %s | %.2f | %s | %s |", paste(f2(secs$new), collapse = ", "), stats::median(secs$new), f1(pn$period), f2(pn$prominence)), "",
        sprintf("Time ratio now / former (medians, same run): %.3f.", stats::median(secs$new) / stats::median(secs$former)), "",
        "## 2. Whole series", "",
        sprintf("%d series. Those passing the screen under either rule, or whose period moved by over half a frame (simulated noise excepted):", nrow(whole)), "",
        "| series | frames | former period | former prominence | period | prominence |", "|---|---|---|---|---|---|",
        sprintf("| %s | %d | %s | %s | %s | %s |", flagged$series, as.integer(flagged$n), f1(flagged$former_period), f2(flagged$former_prominence),
                f1(flagged$period), f2(flagged$prominence)), "",
        sprintf("Simulated noise (white, AR(1), random walks; 30 series of 500 frames): highest prominence %s (former %s); passing: %d (former %d).",
                f2(max(noise$prominence)), f2(max(noise$former_prominence)), sum(noise$prominence >= threshold), sum(noise$former_prominence >= threshold)),
        sprintf("The 40 simulated 37-frame cycles (300 frames): start 37.5 (the nearest bin) in %d (former %d); prominence %s (former %s); passing %d (former %d).",
                sum(abs(cyc$period - 37.5) < 1e-9), sum(abs(cyc$former_period - 37.5) < 1e-9),
                paste(f2(range(cyc$prominence)), collapse = "-"), paste(f2(range(cyc$former_prominence)), collapse = "-"),
                sum(cyc$prominence >= threshold), sum(cyc$former_prominence >= threshold)), "",
        "## 3. The series benches' gapped inputs (model scale, transform = \"auto\")", "",
        sprintf("Repetitions per series: %d (5 for series over 10,000 frames). `screen differs`: repetitions where one rule passes the screen and the other not; `start differs`: where either passes and the start periods differ.", reps), "",
        "| bench | series | repetitions | screen differs | start differs | prominence | former prominence | periods |", "|---|---|---|---|---|---|---|---|",
        sprintf("| %s | %s | %d | %d | %d | %s | %s | %s |", per$bench, per$series, per$reps, per$screen_differs, per$start_differs,
                per$prominence_range, per$former_range, per$periods), "",
        sprintf("In all: %d gapped inputs, screen differs in %d, start differs in %d.", nrow(gapped), sum(gapped$screen_differs), sum(gapped$start_differs)), "",
        "## 4. Random walks with noise (1,500 frames, seeds 1-400)", "",
        sprintf("Missing: %.1f%% of the frames (mean). Prominence: median %s, highest %s; %d of 400 pass the screen. On those, impute_series()'s default (the kernel chosen on hidden gaps; mean CRPS of each kernel there and the cycle's difference with its SE) and the MAE on the hidden values against kernel = \"smooth\"'s:",
                100 * mean(vapply(walks, function(w) mean(is.na(w$z)), 0)), f2(stats::median(walk_prom)), f2(max(walk_prom)), length(passing)), "",
        "| seed | prominence | chosen | CRPS smooth | CRPS cycle | difference | SE | MAE | MAE, kernel = \"smooth\" |", "|---|---|---|---|---|---|---|---|---|",
        sprintf("| %d | %s | %s | %.4f | %.4f | %.5f | %.5f | %.4f | %.4f |", walk_rows$seed, f2(walk_rows$prominence), walk_rows$chosen,
                walk_rows$crps_smooth, walk_rows$crps_cycle, walk_rows$difference, walk_rows$se, walk_rows$mae, walk_rows$mae_smooth))
dir.create("bench/results", showWarnings = FALSE)
writeLines(md, "bench/results/series_cycle_peak.md")
cat(md, sep = "\n")
