# The largest standardised one-step errors (residuals()) of impute_series()'s
# fitted model on real series nobody tuned for, to set the threshold of its
# outlier warning (series_outlier_sd in rpkg/R/series.R), and how often the
# warnings of a fit fire on them: the outlier warning and the floor warning
# (imputations piled below the smallest observed value under transform =
# "auto"). Series: 19 (BeijingAir PM2.5 / O3 / TEMP / CO, ETTh1 OT / HUFL,
# sunspot.month, treering and 11 of R's short series; 5% of values hidden at
# random) and 44 windows of 5,000 hours of BeijingAir (4 stations x 11
# variables, RAIN among them, their own gaps). Then two spikes: one reading of 999 in an hourly
# temperature, and one PM2.5 reading at 10 times the series' maximum; and a
# temperature in degrees Celsius whose frosty hours are the ones missing,
# with transform = "auto" and "none".
# Default settings but proper = FALSE (plug-in draws: the model is the same),
# 20 paths, one thread.
# Usage: Rscript bench/series_outlier_errors.R [out.md]
suppressPackageStartupMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
out <- if (length(args)) args[1] else "bench/results/series_outlier_errors.md"
started <- Sys.time()
beijing <- function(st) read.csv(sprintf("../shared/data/beijing_air/PRSA_Data_%s_20130301-20170228.csv.gz", st))
ett <- read.csv(gzfile("../shared/data/ett/ETTh1.csv.gz"))
one <- function(set, name, y) {
  w <- character()
  imp <- withCallingHandlers(
    tryCatch(impute_series(y, n_samples = 20, seed = 1, threads = 1, progress = FALSE, proper = FALSE),
             error = function(e) NULL),
    warning = function(cnd) {
      w <<- c(w, class(cnd)[1])
      invokeRestart("muffleWarning")
    })
  if (is.null(imp)) return(NULL)
  r <- residuals(imp)
  e <- abs(as.numeric(if (is.data.frame(r)) as.matrix(r[colnames(imp$x)]) else r))
  e <- e[!is.na(e)]
  seen <- as.numeric(as.matrix(if (is.data.frame(y)) y[colnames(imp$x)] else y))
  seen <- seen[!is.na(seen)]
  data.frame(set = set, series = name, frames = NROW(y), massed = mean(seen == min(seen)) >= 0.25, errors = length(e), max = max(e), over10 = sum(e > 10),
             over15 = sum(e > 15), over20 = sum(e > 20), outlier_warning = "ditimpute_warning_outlier" %in% w,
             floor_warning = "ditimpute_warning_floor" %in% w)
}
rows <- list()
set.seed(1)
rd <- function(st, col) beijing(st)[[col]][1:5000]
short <- list(PM25_Wanliu = rd("Wanliu", "PM2.5"), O3_Huairou = rd("Huairou", "O3"), TEMP_Tiantan = rd("Tiantan", "TEMP"),
              CO_Dongsi = rd("Dongsi", "CO"), ETTh1_OT = ett$OT[1:5000], ETTh1_HUFL = ett$HUFL[1:5000],
              sunspot.month = as.numeric(sunspot.month)[1:3000], treering = treering[1:4000],
              AirPassengers = as.numeric(AirPassengers), Nile = as.numeric(Nile), lynx = as.numeric(lynx),
              UKgas = as.numeric(UKgas), co2 = as.numeric(co2), nottem = as.numeric(nottem),
              LakeHuron = as.numeric(LakeHuron), precip = as.numeric(precip), rivers = as.numeric(rivers),
              discoveries = as.numeric(discoveries), sunspot.year = as.numeric(sunspot.year))
for (nm in names(short)) {
  y <- short[[nm]]
  y[sample.int(length(y), max(1, round(0.05 * length(y))))] <- NA
  rows[[length(rows) + 1]] <- one("5% hidden", nm, y)
}
for (st in c("Changping", "Guanyuan", "Nongzhanguan", "Wanliu")) {
  r <- beijing(st)
  for (col in c("PM2.5", "PM10", "SO2", "NO2", "CO", "O3", "TEMP", "PRES", "DEWP", "WSPM", "RAIN")) {
    rows[[length(rows) + 1]] <- one("BeijingAir hours 20,001-25,000", paste(st, col), r[[col]][20001:25000])
  }
  message(st)
}
d <- do.call(rbind, rows)
# the spikes
dongsi <- beijing("Dongsi")
hr <- function(r) as.POSIXct(sprintf("%d-%02d-%02d %02d:00:00", r$year, r$month, r$day, r$hour), tz = "UTC")
s <- dongsi[dongsi$year == 2015 & dongsi$month %in% 3:4, ]
temp <- data.frame(time = hr(s), TEMP = s$TEMP)
temp$TEMP[410:420] <- NA
temp$TEMP[400] <- 999
s2 <- dongsi[dongsi$year == 2015 & dongsi$month %in% 1:4, ]
pm <- data.frame(time = hr(s2), PM2.5 = s2$PM2.5)
pm$PM2.5[1000] <- 10 * max(pm$PM2.5, na.rm = TRUE)
spikes <- rbind(one("spike", "Dongsi TEMP spring 2015, frame 400 = 999", temp),
                one("spike", "Dongsi PM2.5 Jan-Apr 2015, frame 1000 = 10 x max", pm))
# the floor: Dongsi's spring temperatures with the hours at or below 0.5
# degrees hidden (positive where observed, so "auto" takes a Box-Cox scale)
tt <- approx(seq_len(nrow(s)), s$TEMP, seq_len(nrow(s)), rule = 2)$y
frost <- data.frame(time = hr(s), TEMP = ifelse(tt <= 0.5, NA, tt))
hidden <- is.na(frost$TEMP)
floor_rows <- lapply(c("auto", "none"), function(tr) {
  w <- character()
  imp <- withCallingHandlers(impute_series(frost, transform = tr, level = 0.9, n_samples = 20, seed = 1, threads = 1,
                                           progress = FALSE, proper = FALSE),
                             warning = function(cnd) {
                               w <<- c(w, class(cnd)[1])
                               invokeRestart("muffleWarning")
                             })
  p <- imp$point[, 1][hidden]
  data.frame(transform = tr, hidden = sum(hidden), truth_below_0 = mean(tt[hidden] < 0),
             below_floor = sum(p < min(frost$TEMP, na.rm = TRUE)), mae = mean(abs(p - tt[hidden])),
             coverage = mean(tt[hidden] >= imp$lower[, 1][hidden] & tt[hidden] <= imp$upper[, 1][hidden]),
             lowest_lower = min(imp$lower[, 1][hidden]), floor_warning = "ditimpute_warning_floor" %in% w)
})
fl <- do.call(rbind, floor_rows)
fmt <- function(z) sprintf("| %s | %s%s | %d | %.2f | %d | %d | %d | %s | %s |", z$set, z$series, ifelse(z$massed, " (point mass)", ""), z$errors, z$max, z$over10,
                           z$over15, z$over20, ifelse(z$outlier_warning, "yes", "no"), ifelse(z$floor_warning, "yes", "no"))
lines <- c("# Largest one-step errors of impute_series() on real series (bench/series_outlier_errors.R)", "",
           sprintf("`Rscript bench/series_outlier_errors.R` on %s (%.1f min), ditimpute from %s, one thread.",
                   format(started, "%Y-%m-%d %H:%M UTC", tz = "UTC"), as.numeric(difftime(Sys.time(), started, units = "mins")),
                   find.package("ditimpute")), "",
           sprintf(paste("Over %d real series without a point mass at their smallest value the largest standardised",
                         "one-step error was %.2f (%s); median of the series' largest %.2f, 95th percentile %.2f.",
                         "Errors beyond 15: %d; beyond 20: %d. The outlier warning (beyond 20) fired on %d of them,",
                         "the floor warning on %d."),
                   sum(!d$massed), max(d$max[!d$massed]), d$series[!d$massed][which.max(d$max[!d$massed])],
                   stats::median(d$max[!d$massed]), stats::quantile(d$max[!d$massed], 0.95), sum(d$over15[!d$massed]),
                   sum(d$over20[!d$massed]), sum(d$outlier_warning[!d$massed]), sum(d$floor_warning[!d$massed])), "",
           sprintf(paste("With a point mass (a quarter or more of the observed values at the smallest: %s) the largest",
                         "errors were %s; the outlier warning leaves such variables out and fired on %d."),
                   paste(d$series[d$massed], collapse = ", "), paste(sprintf("%.1f", d$max[d$massed]), collapse = ", "),
                   sum(d$outlier_warning[d$massed])), "",
           "| set | series | errors | largest | >10 | >15 | >20 | outlier warning | floor warning |",
           "|---|---|---|---|---|---|---|---|---|", fmt(d), fmt(spikes), "",
           sprintf(paste("## The floor: Dongsi TEMP, March-April 2015, the %d hours at or below 0.5 degrees hidden",
                         "(%.0f%% of them below 0)"), fl$hidden[1], 100 * fl$truth_below_0[1]), "",
           "| transform | imputed below the smallest observed value | MAE | 90% coverage | lowest lower end | floor warning |",
           "|---|---|---|---|---|---|",
           sprintf("| %s | %d | %.2f | %.1f%% | %.3g | %s |", fl$transform, fl$below_floor, fl$mae, 100 * fl$coverage,
                   fl$lowest_lower, ifelse(fl$floor_warning, "yes", "no")))
writeLines(lines, out)
cat(lines, sep = "\n")
