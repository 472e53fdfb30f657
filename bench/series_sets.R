# The series of bench/series.R, shared with the benches that re-use them
# (bench/series_class_rules.R, bench/series_longley_*.R): `series` (run by
# default), `fresh` and `short` (run when named).
# Source from the repository root: source("bench/series_sets.R").
series <- list(co2 = datasets::co2, nottem = datasets::nottem, UKgas = log(datasets::UKgas),
               ldeaths = datasets::ldeaths, Nile = datasets::Nile,
               EuStockMarkets = log(datasets::EuStockMarkets), Seatbelts = datasets::Seatbelts)
# Series with several variables that no default was developed on (run only
# when named): monthly male and female lung deaths, sales beside their leading
# indicator, a beaver's body temperature beside its 0/1 activity, Freeny's
# quarterly revenue with its lag and three regressors, and Longley's yearly
# macro series (Year dropped: it is the time index). lh and uspop (one
# variable, 48 and 19 frames) are the short series whose intervals
# bench/series_fresh.R found too narrow.
fresh <- list(lh = datasets::lh, uspop = datasets::uspop,
              UKLungDeaths = cbind(mdeaths = datasets::mdeaths, fdeaths = datasets::fdeaths),
              BJsales = cbind(sales = datasets::BJsales, lead = datasets::BJsales.lead),
              beaver2 = stats::ts(as.matrix(datasets::beaver2[, c("temp", "activ")])),
              freeny = stats::ts(as.matrix(datasets::freeny), start = c(1962, 2), frequency = 4),
              longley = stats::ts(as.matrix(datasets::longley[, names(datasets::longley) != "Year"]), start = 1947))
# Short stretches (40-50 frames) of R series, run when named: the check of
# proper = "auto"'s threshold on series it was not chosen on (the threshold
# came from lh, uspop, freeny, Longley, BJsales and UKLungDeaths above). The
# first 40 frames of longer series (annual, rough, counts, a cycle), four
# years of monthly accidental deaths, four stock indices over 50 trading days and
# three of Seatbelts' monthly series over 4 years; austres and
# JohnsonJohnson (89 and 84 quarters) check the side where "auto" keeps the
# plug-in intervals.
short <- list(LakeHuron40 = stats::ts(datasets::LakeHuron[1:40], start = 1875),
              lynx40 = stats::ts(datasets::lynx[1:40], start = 1821),
              WWWusage40 = stats::ts(datasets::WWWusage[1:40]),
              discoveries40 = stats::ts(datasets::discoveries[1:40], start = 1860),
              nhtemp40 = stats::ts(datasets::nhtemp[1:40], start = 1912),
              sunspot40 = stats::ts(datasets::sunspot.year[1:40], start = 1700),
              USAccDeaths48 = stats::window(datasets::USAccDeaths, end = c(1976, 12)),
              EuStock50 = stats::ts(log(datasets::EuStockMarkets[1:50, ])),
              Seatbelts48 = stats::ts(datasets::Seatbelts[1:48, c("drivers", "front", "rear")], start = 1969,
                                      frequency = 12),
              austres = datasets::austres, JohnsonJohnson = datasets::JohnsonJohnson)
