# Which series of the benchmarks would get a fixed seasonal shape
# (impute_series()'s series_profile(), issue 27): for every series with a
# calendar period that the rule can apply to (a whole number of frames of at
# least 2 * harmonics + 2, four periods of data), the share of the variance
# that the shape's harmonics above the seasonal kernel's carry and its ratio
# to what the noise of the position means would give them (snr). The shape is
# held fixed when share >= 0.05 and snr >= 4. Computed on the values as
# given (impute_series() computes it on the model's scale: after a Box-Cox
# or log transform where it chooses one), with the harmonics
# impute_series() gives the kernel (5 up to 1,500 frames, else 3).
# Series: bench/series_sets.R's, bench/series_fresh.R's two sets (R's
# datasets; forecast, tseries and boot), bench/series_long.R's six.
# Usage: Rscript bench/series_profile_scan.R [data_dir]   (from the repository root)
# Writes bench/results/series_profile_scan.md.
suppressMessages(library(ditimpute))
args <- commandArgs(trailingOnly = TRUE)
data_dir <- if (length(args) >= 1) args[1] else "../shared/data"
source("bench/series_sets.R")
tsd <- function(name) { e <- new.env(); utils::data(list = name, package = "tseries", envir = e); get(name, e) }
fresh_datasets <- list(AirPassengers = AirPassengers, lynx = lynx, LakeHuron = LakeHuron, USAccDeaths = USAccDeaths,
                       JohnsonJohnson = JohnsonJohnson, UKDriverDeaths = UKDriverDeaths, WWWusage = WWWusage,
                       sunspot.year = sunspot.year, presidents = presidents, austres = austres, BJsales = BJsales,
                       nhtemp = nhtemp, mdeaths = mdeaths, discoveries = discoveries, airmiles = airmiles,
                       lh = lh, sunspots = sunspots, uspop = uspop)
packages <- list(gold = forecast::gold, taylor = forecast::taylor, ice.river.flow = tsd("ice.river")[, "flow.vat"],
                 gas = forecast::gas, wineind = forecast::wineind, woolyrnq = forecast::woolyrnq,
                 nino3 = tsd("nino")[, "nino3"], tcm10y = tsd("tcm")[, "tcm10y"], bev = tsd("bev"),
                 USeconomic.rs = tsd("USeconomic")[, "rs"], manaus = boot::manaus)
read_col <- function(file, col) {
  d <- utils::read.csv(gzfile(file.path(data_dir, file)))
  stats::ts(d[[col]], frequency = 24)  # as bench/series_long.R reads them
}
beijing <- "beijing_air/PRSA_Data_Dongsi_20130301-20170228.csv.gz"
long <- list(ETTh1_OT = read_col("ett/ETTh1.csv.gz", "OT"), ETTh2_OT = read_col("ett/ETTh2.csv.gz", "OT"),
             BeijingAir_PM2.5 = read_col(beijing, "PM2.5"), BeijingAir_O3 = read_col(beijing, "O3"),
             treering = treering, sunspot.month = sunspot.month)
all <- c(series, fresh, short, fresh_datasets, packages, long)
all <- all[!duplicated(names(all))]
rows <- list()
skipped <- character(0)
for (name in names(all)) {
  y <- as.matrix(all[[name]]); p <- stats::frequency(all[[name]]); n <- nrow(y)
  K <- min(if (n <= 1500) 5 else 3, floor(p / 2))
  if (p != round(p) || p < 2 * K + 2 || n < 4 * p) { skipped <- c(skipped, sprintf("%s (period %g, %d frames)", name, p, n)); next }
  # impute_series()'s own decision on its model's scale, with one observed
  # value hidden so that there is something to impute.
  yy <- all[[name]]
  hide <- which(!is.na(as.matrix(yy)[, 1]))[n %/% 2]
  if (is.null(dim(yy))) yy[hide] <- NA else yy[hide, 1] <- NA
  prof <- impute_series(yy, n_samples = 20, seed = 1)$model$profile
  for (j in seq_len(ncol(y))) {
    sh <- ditimpute:::series_profile_shape(y[, j], p, K)
    rows[[length(rows) + 1]] <- data.frame(series = name, variable = if (ncol(y) > 1) colnames(y)[j] else "", frames = n,
                                           period = p, harmonics = K, share = if (is.null(sh)) NA else sh$share,
                                           snr = if (is.null(sh)) NA else sh$snr,
                                           model = !is.null(prof) && any(prof[, j] != 0))
  }
}
tab <- do.call(rbind, rows)
tab$held <- !is.na(tab$share) & tab$share >= 0.05 & tab$snr >= 4
load <- tryCatch(readLines("/proc/loadavg"), error = function(e) "unknown")
md <- c("# Which benchmark series get a fixed seasonal shape (bench/series_profile_scan.R)", "",
        sprintf("`Rscript bench/series_profile_scan.R` on %s (ditimpute %s); load average %s.", format(Sys.Date()),
                as.character(utils::packageVersion("ditimpute")), load), "",
        "`share`: the variance the seasonal shape's harmonics above the kernel's (`harmonics`) carry, over the variable's",
        "variance; `snr`: over what the noise of the position means would give them; `held`: share >= 0.05 and snr >= 4",
        "(the rule), on the values as given; `impute_series`: whether impute_series() held one (on its model's scale,",
        "after a Box-Cox or log transform where it chooses one; the series with one observed value hidden).", "",
        "| series | variable | frames | period | harmonics | share | snr | held | impute_series |",
        "|---|---|---|---|---|---|---|---|---|",
        sprintf("| %s | %s | %d | %g | %d | %s | %s | %s | %s |", tab$series, tab$variable, tab$frames, tab$period,
                tab$harmonics, formatC(tab$share, format = "f", digits = 4), formatC(tab$snr, format = "f", digits = 2),
                ifelse(tab$held, "yes", "no"), ifelse(tab$model, "yes", "no")), "",
        sprintf("Held on %d of %d variables by the rule (%s), by impute_series() on %d (%s). Largest share among the others: %.4f (%s).",
                sum(tab$held), nrow(tab), paste(tab$series[tab$held], collapse = ", "), sum(tab$model),
                paste(tab$series[tab$model], collapse = ", "), max(tab$share[!tab$held], na.rm = TRUE),
                tab$series[!tab$held][which.max(tab$share[!tab$held])]), "",
        sprintf("Not eligible (no whole period of at least 2 * harmonics + 2 frames, or under four periods): %s.",
                paste(skipped, collapse = ", ")), "")
writeLines(md, "bench/results/series_profile_scan.md")
cat(md, sep = "\n")
