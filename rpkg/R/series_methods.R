# Methods a statistician expects on a result of impute_series(): forecasts
# from the fitted structural model (predict()), its likelihood (logLik(),
# nobs(), and so AIC() and BIC()).

#' Forecast a series beyond its end with the fitted model
#'
#' Forecasts `n.ahead` frames beyond the end of a series imputed by
#' [impute_series()] (`method = "gp"`), as [stats::predict.StructTS()] and
#' [stats::predict.Arima()] do: the fitted model (form, parameters, scale,
#' `Lambda`, any fixed seasonal shape) is kept as it is, nothing is refitted
#' (only its class may be the other one fitted beside it, chosen for the
#' horizon: below), and `n.ahead` missing frames appended to the series are
#' imputed by the same
#' exact Kalman smoothing as the series' own gaps. So a forecast is the
#' imputation of a gap at the end of the series, conditioned on every
#' observed value (the series' own gaps integrated out): the same law as
#' [impute_series()] gives the series' last values when they are missing.
#'
#' **How far to trust the intervals.** A forecast extrapolates: a level's and
#' a trend's intervals widen with the horizon by construction, and so do a
#' stationary form's, whose fitted line is extrapolated with its own
#' uncertainty (universal kriging); but they are the model's intervals,
#' which are right only as far as the form holds beyond the data. So a
#' forecast, like an end gap of [impute_series()], gets proper draws by
#' default (`proper = "auto"`, on series of up to 20,000 frames): each of the
#' `n_samples` paths is drawn under its own draw of the form and parameters,
#' and the point and intervals are the mixture's (its mean, and Gaussian
#' intervals with its variance), which include that uncertainty. The package's own measurement of end gaps
#' (`bench/series_ends.R`: the first or last 5%, 10% or 20% of 19 real series
#' hidden and imputed, `bench/results/series_ends_proper.md`) found 90%
#' intervals covering 85.8% of the hidden values 6-20 frames from the data
#' and 86.0% at 21-60 frames with proper draws (80.8% and 83.3% with plug-in
#' ones): expect somewhat less than the nominal level a few frames out. Against
#' forecasting packages (`bench/series_forecast.R`,
#' `bench/results/series_forecast.md`: 30 series of R and of the packages
#' imputeTS brings, three forecast origins each), the forecasts' MASE was
#' 1.036 times `forecast::auto.arima()`'s (geometric mean; `forecast::ets()`
#' 1.053) and their 90% intervals covered 88.2% of the values (84.5% with
#' plug-in draws; auto.arima 84.6%, ets 90.0%). At 24 rolling origins on
#' each of 12 R series (`bench/forecast_rolling.R`,
#' `bench/results/forecast_rolling.md`: 3,000 forecast values, horizons to
#' 12) the 80% and 95% intervals covered 76.7% and 91.1% (arima 79.8% and
#' 94.3%, HoltWinters 81.3% and 94.3%), less the farther out, with a forecast
#' MAE 0.89 times arima's (0.528 against 0.596 naive MAEs). LakeHuron's 80%
#' intervals covered 55.4% there (arima 85.4%): where the series may wander,
#' compare `model = "level"` by its forecasts of the series' own past.
#'
#' **The model class for the horizon** (`model_choice = "horizon"`, the
#' default since 2026-12-07). The fit chooses between a stationary form (a
#' line with a stationary part) and a local level or trend by BIC, which
#' scores one-step predictions, and by the series' own gaps; a series without
#' gaps keeps BIC's class, on short series mostly the stationary form, whose
#' forecast reverts to the series' line a few lengthscales out. So
#' `predict()` weighs the fitted form against the other class's best form
#' (fitted beside it by the same call: nothing is refitted) on forecasts of
#' the series' own end: 10 rounds, each hiding every variable's last L
#' observed values plus one per frame it is missing at the series' end (at
#' most half its observed values), moved inwards by 0 to L - 1 observed
#' values, those moved over left out (L = `n.ahead`, at least
#' 6 frames and two calendar periods, so that forecasts of up to that many
#' frames share their model: a forecast of 1 frame is the first frame of one
#' of 6; a longer horizon can take the other class), each hidden value
#' scored by the CRPS of its exact conditional (on the model's standardised
#' scale). A level or trend replaces a
#' stationary form when its mean CRPS is lower, a stationary form a level or
#' trend when lower by more than one standard error (each round's stretch
#' one unit; the rounds overlap, so this is weaker than it reads): the rule by which the
#' fit weighs the classes on the series' gaps, so the class is the one that
#' imputing the horizon as an end gap would weigh. Nothing is chosen where
#' the fit kept one class only (`model = "level"`, `"trend"` or
#' `"stationary"`, or a class the series' gaps chose against BIC), nor for a
#' model (or a group of a model set) with a variable observed fewer than 4
#' times in the series' last `fit_frames` frames. The comparison is the forecast's attribute
#' `"model_choice"`, and its print names both classes when they differ. The
#' hidden stretches are drawn with a fixed seed: the class does not depend
#' on `seed`. It costs two Kalman smoothings per round over the series' last
#' `fit_frames` frames at most: 0.1-0.75 s more per forecast on
#' 2,820-20,000 frames with one thread
#' (`bench/results/forecast_calibration_speed.md`), which `model_choice =
#' "fit"` spares. Measured against the fitted class in the same runs (the
#' rules tried, on 480 other M3 series and, for the margins, on M1:
#' `bench/results/forecast_horizon_choice.md`): on 400
#' series of the M3 competition (`bench/results/forecast_m3.md`, the
#' competition's horizons) mean MASE 1.760 against 1.910 (auto.arima 1.742,
#' ets 1.738), 80% / 95% coverage 75.8% / 89.0% against 70.3% / 84.3%, mean
#' interval scores 9.22 / 15.51 against 10.11 / 18.46 (ets 9.84 / 16.82):
#' better on the yearly (2.709 against 2.999; auto.arima 2.782) and other
#' series (2.266 against 2.710), worse on the quarterly (1.193 against
#' 1.100) and monthly ones (0.873 against 0.830; auto.arima 0.957);
#' on the 1,001 M1 series (`bench/results/forecast_m1.md`) MASE 1.669
#' against 1.668 (auto.arima 1.662, ets 1.680; the quarterly series 1.617
#' against 1.526), coverage 67.4% / 82.6% against 62.7% / 78.9%, interval
#' scores 9.36 / 19.72 against 9.72 / 22.12 (auto.arima 9.93 / 23.17, ets
#' 9.73 / 21.07); on the 30 series above MASE 1.036 times auto.arima's
#' against 1.041, 90% coverage 88.2% against 86.7%;
#' at the rolling origins above 76.7% / 91.1% against
#' 72.9% / 89.2% and a forecast MAE of 0.528 against 0.550 naive MAEs, the
#' interval scores 2.56 / 3.73 against 2.59 / 3.70. Where a stationary form is
#' right it costs: on simulated AR(1) series with a line (150 values) the
#' choice moved 27.5% of them and the MAE rose from 0.99 to 1.12. An earlier
#' rule, forecasts from origins spread over the series' second half, was not
#' adopted (`bench/results/forecast_origin_choice.md`).
#'
#' **Calibrated forecasts** (`calibrate = TRUE`, the default when `object`
#' was imputed with `calibrate = TRUE`). The fitted model forecasts the
#' series' own past: from 20 origins spread over the second half of its
#' observed stretch (fewer on a short series: every frame there), every
#' later frame hidden, the model and its parameters as fitted (plug-in;
#' nothing is refitted, so each origin costs one Kalman smoothing: 0.18-0.65
#' s more per forecast on 2,820-20,000 frames,
#' `bench/results/forecast_calibration_speed.md`).
#' Per variable and lead group (1, 2-3, 4-6, 7-12, 13-24, 25-48, ... frames
#' after the variable's last observed value: the horizon, plus the frames at
#' the series' end where it is missing), the observed values' distance
#' outside the model's intervals, in half-widths, gives a conformal quantile
#' at each level; the groups' quantiles are made non-decreasing in the lead
#' (a weighted isotonic fit: a model that misses its past misses it more the
#' farther out), over every lead the origins reach up to 500 (so a
#' horizon's intervals do not depend on `n.ahead` unless it goes beyond
#' that, or takes the other model class), and the forecast's intervals there are moved out by that many half-widths
#' (on the model's scale): widened, never narrowed, since the values of one
#' forecast path are strongly correlated and tens of origins cannot show
#' intervals too wide. A group with too few errors for a level takes the
#' quantile of all leads' errors pooled, one beyond every origin's reach (a
#' forecast longer than half the series) the farthest scored group's; where
#' a level has too few errors in all (99% needs 99), it keeps the model's
#' intervals and a warning says so. A level's intervals hold every lower
#' level's. `estimate`, `se` and the draws stay the model's. The table of
#' the groups the forecast uses is its attribute `"calibration"` (see Value). A
#' self-calibrated `object`'s own factors, fitted to the series' gaps, are
#' not used beyond its end. Measured (`bench/results/forecast_rolling.md`,
#' the same fits and draws): at the 282 rolling origins above, 80% and 95%
#' intervals covered 80.0% and 94.2% (76.7% and 91.1% uncalibrated) and the mean
#' interval score, which charges width as well as misses, was 2.53 and 3.58
#' against 2.56 and 3.73 (in naive-forecast MAEs; arima 2.80 and 3.93); on
#' the 30 series of `bench/results/series_forecast.md`, 90% intervals
#' covered 90.4% of the values (88.2% uncalibrated; auto.arima 84.6%, ets
#' 90.0%) at a mean interval score of 6.74 against 6.66 (auto.arima 7.21,
#' ets 7.12)
#' (the rules tried, some of which bought their coverage at a higher score:
#' `bench/results/forecast_calibration.md`). What
#' it cannot do: on a model that is right it only adds width (80% intervals
#' of 30 AR(1) series of 150 values covering 79.3% of the next 20 raw and
#' 82.8% calibrated with plug-in draws, in this package's tests); and the errors it learns from
#' are in-sample (the parameters were fitted to those values too), so where
#' the series' future departs from its past it moves them only part of the
#' way: on five series no rule was chosen on
#' (`bench/results/forecast_calibration_fresh.md`, 270 held-out values) 80%
#' intervals covered 71.1% (69.6% raw) and 95% ones 85.9% (83.0%). On 400
#' series of the M3 competition that no rule had seen
#' (`bench/results/forecast_m3.md`, the competition's horizons) it raised
#' coverage from 75.8% to 79.7% (80%) and from 89.0% to 91.4% (95%); the
#' mean interval score stayed at 80% (9.23 against 9.22) and fell at 95%
#' (14.90 against 15.51; ets 9.84 and 16.82, auto.arima 9.62 and 18.48), by
#' repairing the series the model missed badly; series by series it raised
#' the score more often than it lowered it (133 against 75 series at 80%),
#' and on the monthly ones the mean rose (6.17 to 6.40 at 95%). So it is not
#' the default.
#'
#' **The standard error `se`.** As the `se` of [stats::predict.Arima()]: the
#' forecast's standard deviation, on the data's scale. For a variable
#' modelled on the data's own scale it is exact: the conditional sd of the
#' forecast (under proper draws, the mixture's), and `lower`, `upper` (with
#' several levels, `lower_80`, `upper_80`, ...) are `estimate -/+ qnorm((1 +
#' level) / 2) * se`, so one forecast gives the interval at any level. For a variable modelled on a Box-Cox, log or
#' bounded scale the forecast's law on the data's scale is skewed and its
#' intervals are not symmetric about `estimate`: `se` is then the sd of that
#' skewed law, the image through the map back of the Gaussian on the model's
#' scale that the intervals come from (by Gauss-Hermite quadrature: exact,
#' and the same whatever `n_samples`); it is not the intervals' half-width
#' (use `lower` and `upper`). The draws' sd, `apply(attr(fc, "samples"), 2,
#' sd)`, estimates it with a Monte Carlo error (before 2026-12-06 it was the
#' `se`: at 20 paths it swung by 2x from one horizon to the next on
#' airquality's Ozone). The delta method (the sd on the model's scale times
#' the slope of the map back at `estimate`) is no measure of the spread near
#' a bound, where the map back flattens: for a share close to 0 it came out
#' one to two orders of magnitude below the draws' sd.
#'
#' @param object A result of [impute_series()] with `method = "gp"`.
#' @param n.ahead Number of frames to forecast, a whole number of at least 1
#'   and at most 10 times the series' length (or 1,000).
#' @param level Level of the intervals, a number in (0, 1); by default
#'   that of `object`. Several levels (e.g. `c(0.8, 0.95)`) give one pair of
#'   columns per level, from the same draws and at no extra cost (see Value);
#'   the estimate, `se` and draws do not depend on the level.
#' @param n_samples Sample paths (at least 20; by default those of `object`).
#'   Under proper draws (the default, see `proper`) the point and intervals
#'   are those of the mixture over the paths; with `proper = FALSE` they are
#'   exact (Gaussian on the model's scale) and do not depend on them, nor
#'   does `se`.
#' @param proper `TRUE` to draw each path under its own draw of the model's
#'   form and parameters (see `proper` of [impute_series()]), `FALSE` for
#'   plug-in draws (the fitted form and parameters taken as known: exact
#'   Gaussian intervals on the model's scale, whatever `n_samples`), or
#'   `"auto"` (the default): as `object` when it was imputed with `proper =
#'   TRUE` or `FALSE`; otherwise `TRUE` when `object` had proper draws or the
#'   series and its forecast span at most 20,000 frames, the rule of
#'   [impute_series()] for a series with an end gap. Each proper path costs a
#'   Kalman smoothing of the whole series: on a few thousand frames seconds
#'   where plug-in draws take a fraction of one (`proper = FALSE`).
#' @param calibrate `TRUE` to widen the intervals where the model's
#'   forecasts of the series' own past fell outside its intervals (see
#'   Details), `FALSE` for the model's intervals, or `"auto"` (the default):
#'   as `calibrate` of the [impute_series()] call that made `object`.
#' @param model_choice `"horizon"` (the default) to forecast with the model
#'   class (a stationary form, or a local level or trend) that forecast the
#'   series' own end better over the horizon, among the forms fitted (see
#'   Details; nothing is refitted), or `"fit"` for the class the fit chose, as
#'   `predict()` forecast until this option came (2026-12-07).
#' @param seed Optional seed; without one [set.seed()] makes results repeatable.
#' @param threads CPU threads (default: the process's budget, see [threads]: option `ditimpute.threads`, `DITIMPUTE_THREADS`, 1 in a worker or when busy cores would make spinning threads collide, else all cores).
#' @param ... Nothing: a name here is an input error.
#' @return A data frame of class `ditimpute_series_forecast`, one row per
#'   forecast frame and variable (frame-major: all variables of the first
#'   frame, then the next), with columns `time` (continuing the series' time
#'   stamps: a `ts`'s time by its frequency, `Date` and `POSIXct` stamps by
#'   the series' step, calendar months by months; a vector or matrix's frame
#'   numbers), `frame` (frame number, counting on from the series' last),
#'   `horizon` (frames beyond the end, 1 to `n.ahead`), `variable`, `estimate`
#'   (the conditional mean on the model's scale: for a variable modelled on a
#'   Box-Cox, log or bounded scale, mapped back, the conditional median) and
#'   `se` (the forecast's standard deviation on the data's scale, of the law
#'   the intervals use; see Details),
#'   `lower`, `upper` (the `level` interval, Gaussian quantiles on the model's
#'   scale mapped back: exact with plug-in draws, of the mixture's mean and
#'   variance under proper draws; within the variable's bounds when it has
#'   some); with several levels, `lower_80`, `upper_80`, `lower_95`, ...
#'   instead, one pair per level in increasing order, named by the level in
#'   percent. Its attributes hold the `level`(s), the model's description
#'   (`method`: the class chosen for the horizon, and the fit's when they
#'   differ), `model_choice` (the comparison on the series' end: the fitted
#'   form's and its rival's mean CRPS, their difference and its standard
#'   error, the hidden values and stretches, which was chosen; per group of
#'   a model set; NULL when there was nothing to choose) and
#'   `samples`: the `n_samples x (n.ahead d)` joint draws of the forecast
#'   entries on the data's scale, columns in the rows' order (for sums or
#'   maxima over the horizon), and with `calibrate`, `calibration`: per
#'   variable (a column when there are several) and lead group its forecast
#'   uses (`leads`: frames after its last observed value), the backtest values, the share
#'   of them the model's own intervals covered (`covered_80`, ...), the
#'   factors applied (`widen_80`, ..., in half-widths; NA where that level
#'   was left as the model's) and where each came from (`from_80`, ...:
#'   `"own"` the group's errors, `"pooled"` all leads', `"carried"` the
#'   farthest scored group's, `"none"`), before the isotonic fit; with
#'   attributes `origins`, `trailing` (per variable, the frames at the end
#'   after its last observed value), `widened` (whether any factor is above
#'   0) and `calibrated` (the share of horizons x levels x variables with a
#'   factor). It prints with a header; it is a data frame
#'   for everything else.
#' @seealso [impute_series()], [logLik.ditimpute_series_imputation()].
#' @examples
#' y <- datasets::LakeHuron
#' y[c(20:24, 60)] <- NA
#' imp <- impute_series(y, n_samples = 50, seed = 1)
#' fc <- predict(imp, n.ahead = 10, seed = 1)
#' fc
#' # the fitted class (a linear trend) against the local level, fitted beside
#' # it, on forecasts of the series' own end 10 frames out: the chosen forecasts
#' attr(fc, "model_choice")
#' # the forecast as a ts, continuing the series
#' ts(fc$estimate, start = fc$time[1], frequency = frequency(y))
#' # a monthly series: the season carries on
#' co <- window(datasets::co2, 1990)
#' co[c(30:33, 70)] <- NA
#' head(predict(impute_series(co, n_samples = 50, seed = 1), n.ahead = 24, seed = 1))
#' # 80% and 95% intervals at once
#' predict(imp, n.ahead = 3, level = c(0.8, 0.95), seed = 1)
#' # intervals calibrated on the model's forecasts of LakeHuron's own past
#' fc <- predict(imp, n.ahead = 10, level = 0.8, calibrate = TRUE, seed = 1)
#' attr(fc, "calibration")
#' @export
predict.ditimpute_series_imputation <- function(object, n.ahead = 1, level = object$level, n_samples = object$n_samples,
                                                proper = "auto", calibrate = "auto", model_choice = c("horizon", "fit"),
                                                seed = NULL, threads = NULL, ...) {
  check_dots(environment(), "predict()")
  model <- series_gp_model(object, "a forecast")
  if (!(identical(calibrate, "auto") || (is.logical(calibrate) && length(calibrate) == 1 && !is.na(calibrate)))) {
    abort_input("calibrate", "must be TRUE, FALSE or \"auto\" (as impute_series(calibrate =) was).")
  }
  if (identical(calibrate, "auto")) calibrate <- isTRUE(model$calibrate_asked)
  n.ahead <- check_count(n.ahead, min = 1)
  proper <- check_proper(proper, "gp")
  # A guard, not a statement of trust: 10 times the series (or 1,000 frames
  # on a short one) is far beyond what its data say, and a horizon in the
  # millions would fill the memory before it returned.
  most <- max(1000L, 10L * nrow(object$x))
  if (n.ahead > most) {
    abort_input("n.ahead", sprintf(paste("is %s frames; at most %s here (10 times the series' %d frames, or 1,000): a",
                                         "forecast that far rests on the model's form alone."),
                                   format(n.ahead, big.mark = ","), format(most, big.mark = ","), nrow(object$x)))
  }
  level <- check_levels(level)
  n_samples <- check_count(n_samples, min = 20)
  model_choice <- check_string(model_choice, c("horizon", "fit"))
  seed <- resolve_seed(seed)
  threads <- resolve_threads(threads)
  v <- object$x
  n_time <- nrow(v); d <- ncol(v)
  # The model class weighed on forecasts of the series' own end (Details;
  # series_forecast_form()), on hidden end stretches drawn with a fixed seed:
  # the class is the series' and the horizon's, not the seed's, and a
  # forecast whose class stays is the fitted model's, draw for draw.
  choice <- NULL
  method <- sub(" (calibrated)", "", object$method, fixed = TRUE)  # the raw model's intervals (Details)
  if (model_choice == "horizon") {
    choice <- series_forecast_form(model, v, n.ahead, series_forecast_seed, threads)
    if (!identical(choice$model, model)) {
      method <- sprintf("GP series (%s), chosen for the horizon over the fit's (%s)", series_model_label(choice$model),
                        series_model_label(model))
    }
    model <- choice$model
    choice <- choice$selection
  }
  # The series with n.ahead missing frames appended: the model's seasonal
  # shape and everything else indexed by frame (scale_cols(), series_back())
  # carries on past the end by itself.
  vx <- rbind(v, matrix(NA_real_, n.ahead, d))
  dimnames(vx) <- list(NULL, colnames(v))
  # A forecast is a gap at the series' end: "auto" draws properly where
  # impute_series(proper = "auto") would for such a gap (proper.R), unless
  # the imputation was asked for plug-in draws (proper = FALSE).
  if (identical(proper, "auto")) {
    proper <- if (isTRUE(model$proper_asked)) isTRUE(model$proper) else isTRUE(model$proper) || series_proper_auto(vx)
  }
  f <- if (proper) series_proper_intervals else series_model_intervals
  iv <- f(model, vx, level, n_samples, seed, threads)
  frames <- n_time + seq_len(n.ahead)
  ij <- cbind(rep(frames, each = d), rep(seq_len(d), times = n.ahead))  # frame-major, as the draws
  cal <- NULL
  if (calibrate) {
    cal <- series_forecast_calibration(model, v, n.ahead, level, threads)
    iv$bands <- apply_forecast_calibration(iv$bands, ij, ij[, 1] - n_time, cal, model)
    left <- apply(is.na(cal$factors), 2, mean)  # per level: the share of horizons x variables left as the model's
    if (any(left > 0)) {
      # how many a conformal quantile needs at each such level, and the most
      # errors a variable had (a review: say the numbers)
      need <- vapply(level[left > 0], min_group_size, 0)
      cli::cli_warn(sprintf(paste("The %s intervals are left as the model gives them %s: forecasts of the series' own",
                                  "past from %s give too few errors for a conformal quantile at %s (at most %s a",
                                  "variable; needed: %s; attr(, \"calibration\"))."),
                            percent_list(level[left > 0]), if (all(left[left > 0] == 1)) "everywhere" else "at some horizons or variables",
                            plural(cal$origins, "origin"), if (sum(left > 0) == 1) "that level" else "those levels",
                            format(cal$most_errors, big.mark = ","),
                            paste(sprintf("%d at %s%%", as.integer(need), format_percent_label(level[left > 0])), collapse = ", ")),
                    class = c("ditimpute_warning_calibration", "ditimpute_warning"))
    }
  }
  time <- series_time_ahead(object$time, n.ahead)
  key <- function(m) m[, 1] + nrow(vx) * (m[, 2] - 1)
  # iv$sd: the sds on the model's standardised scale, in iv$ij's order (the
  # series' own gaps first, then the forecast's frames).
  pos <- match(key(ij), key(iv$ij))
  samples <- iv$samples[, pos, drop = FALSE]
  se <- series_forecast_se(model, vx, ij, iv$mean[pos], iv$sd[pos])
  out <- data.frame(time = rep(time, each = d), frame = ij[, 1], horizon = ij[, 1] - n_time,
                    variable = colnames(v)[ij[, 2]], estimate = iv$point[ij], se = se, stringsAsFactors = FALSE)
  cols <- forecast_band_names(level)
  for (k in seq_along(level)) {
    out[[cols$lower[k]]] <- iv$bands[[k]]$lower[ij]
    out[[cols$upper[k]]] <- iv$bands[[k]]$upper[ij]
  }
  # Never-negative data forecast below 0 (on the data's own scale): said, as
  # impute_series() says it of its imputations (a review: sunspot.year's 95%
  # lower bounds went below 0 at 151 of 240 rolling origins without a word).
  ahead <- is.na(vx) & row(vx) > n_time
  neg <- series_negative_warning(vx, list(missing = ahead, lower = iv$bands[[which.max(level)]]$lower), model$transform,
                                 what = "forecast values")
  if (!is.null(neg)) cli::cli_warn("{neg}", class = c("ditimpute_warning_negative", "ditimpute_warning"))
  colnames(samples) <- sprintf("%s[%d]", out$variable, out$frame)
  # The series' last frames (completed), for plot(): three horizons' worth, at least 50.
  rows <- max(1L, n_time - max(50L, 3L * n.ahead) + 1L):n_time
  history <- data.frame(time = rep(object$time[rows], times = d), variable = rep(colnames(v), each = length(rows)),
                        value = as.vector(object$point[rows, , drop = FALSE]), stringsAsFactors = FALSE)
  structure(out, class = c("ditimpute_series_forecast", "data.frame"), level = level, history = history,
            method = method, model_choice = choice, proper = proper, samples = samples,
            calibration = if (!is.null(cal)) structure(cal$table, origins = cal$origins, trailing = cal$trail,
                                                       widened = any(cal$factors > 0, na.rm = TRUE),
                                                       calibrated = mean(!is.na(cal$factors))))
}

series_forecast_seed <- 7007L

# The interval columns of a forecast at `level` (sorted): lower and upper
# for one level; lower_80, upper_80, ... (the level in percent) for several.
forecast_band_names <- function(level) {
  if (length(level) == 1) return(list(lower = "lower", upper = "upper"))
  pct <- format_percent_label(level)
  list(lower = paste0("lower_", pct), upper = paste0("upper_", pct))
}

format_percent_label <- function(level) sub("\\.?0+$", "", formatC(100 * level, format = "f", digits = 4))

# "90%", "80% and 95%", "50%, 80% and 95%".
percent_list <- function(level) {
  p <- paste0(format_percent_label(level), "%")
  if (length(p) <= 2) paste(p, collapse = " and ") else paste0(paste(p[-length(p)], collapse = ", "), " and ", p[length(p)])
}

# ------------------------------------------------- forecast calibration --

# The lead groups of a forecast's calibration: 1, 2-3, 4-6, 7-12, then
# doubling (13-24, 25-48, ...), up to `n` frames ahead: their first leads.
forecast_horizon_breaks <- function(n) {
  b <- c(1L, 2L, 4L, 7L)
  while (max(b) <= n) b <- c(b, 2L * max(b) - 1L)
  b[b <= n]
}

# Origins a forecast calibration takes (fewer on a short series), and the
# leads it scores: up to forecast_calibration_leads frames (or as far as the
# origins reach, or the forecast goes if farther). Both fixed, whatever
# n.ahead, so that a horizon's intervals do not depend on how far the
# forecast goes (a review: with the origins' number and the groups set by
# n.ahead, LakeHuron's first 80% upper bound was 580.49 forecasting 1 frame,
# 580.37 forecasting 3 and 580.63 forecasting 12). Each origin costs one
# Kalman smoothing of the series up to its last scored lead (one call for all levels).
forecast_calibration_origins <- 20L
forecast_calibration_leads <- 500L

# predict(calibrate = TRUE): the fitted model forecasts the series' own past
# from origins spread over the second half of its observed stretch (every
# frame after an origin hidden, the model and its parameters as fitted,
# plug-in: nothing is refitted), and a lead group's intervals at each level
# are widened by the conformal quantile of how far the observed values fell
# outside the model's own intervals there (in half-widths, on the model's
# scale, as calibrate_series() scores hidden gaps), never narrowed: the
# values of one forecast path are strongly correlated, and from tens of
# origins intervals cannot be shown to be too wide (the gaps' calibration
# narrows only on 200 hidden gaps, series_narrow_min_gaps). Per variable
# (a review: pooled, one variable's factors moved with the others forecast
# beside it). A variable's leads count from its last observed value, so a
# series whose last frames are missing is calibrated at the leads its
# forecast has (the horizon plus those frames; a review: frames 16-18 past
# the last observation had taken the factors of leads 1-3); where other
# variables are observed in those frames, their values are not in the
# backtests (every variable is hidden after an origin), so such a
# variable's factor is that of forecasting it with nothing observed beside
# it: on the cautious side. A group with too
# few scores for a level takes the factor of all leads' scores pooled; where
# those are too few as well, that level is left as the model gives it (said
# by predict()). The groups' factors are then made non-decreasing in the
# lead (see the comment in the code); a group beyond every origin's reach (a
# forecast longer than half the series) takes the farthest scored group's.
# Returns the factors (n.ahead x levels x variables) and a table of the
# groups the forecast uses, for its "calibration" attribute.
series_forecast_calibration <- function(model, v, n.ahead, level, threads, call = rlang::caller_env()) {
  n <- nrow(v); d <- ncol(v)
  seen <- which(rowSums(!is.na(v)) > 0)
  last <- max(c(0L, seen))
  first <- if (length(seen)) seen[1] else 0L
  cand <- if (last - first >= 1) seq(floor((first + last) / 2), last - 1L) else integer(0)
  if (!length(cand)) {
    abort_input("calibrate", "needs at least two frames with observed values, to forecast the series' own past; use calibrate = FALSE.",
                call = call)
  }
  origins <- unique(cand[round(seq(1, length(cand), length.out = min(forecast_calibration_origins, length(cand))))])
  # per variable, the frames at the end after its last observed value: its
  # forecast's horizon h is lead trail + h from its last observation
  trail <- vapply(seq_len(d), function(j) n - max(c(0L, which(!is.na(v[, j])))), 0L)
  names(trail) <- colnames(v)
  span <- n.ahead + max(trail)  # the farthest lead the forecast has
  reach <- min(last - min(origins), max(span, forecast_calibration_leads))  # the leads scored
  versions <- lapply(origins, function(o) {
    w <- v[seq_len(min(last, o + reach)), , drop = FALSE]
    w[-seq_len(o), ] <- NA
    w
  })
  # leads beyond the reach form groups of their own (a review: 385-600 was
  # labelled as scored where only 385-500 had been)
  breaks <- forecast_horizon_breaks(max(span, reach))
  if (span > reach) breaks <- sort(unique(c(breaks, reach + 1L)))
  n_groups <- length(breaks)
  # per level, the scored entries' variable, lead and score
  all_bands <- series_model_bands(model, versions, level, threads, call = call)
  scored <- lapply(seq_along(level), function(l) {
    bands <- lapply(all_bands, function(b) b$bands[[l]])
    do.call(rbind, Map(function(o, w, b) {
      k <- seq(o + 1L, nrow(w))
      ij <- cbind(rep(k, d), rep(seq_len(d), each = length(k)))
      ij <- ij[!is.na(v[ij]), , drop = FALSE]
      data.frame(variable = ij[, 2], lead = ij[, 1] - o,
                 score = model_scale_scores(b$lower[ij], b$upper[ij], v[ij], ij[, 2], model$transform))
    }, origins, versions, bands))
  })
  factors <- array(NA_real_, c(n_groups, length(level), d))
  out <- array(NA_real_, c(n.ahead, length(level), d))
  table <- NULL
  for (j in seq_len(d)) {
    rows <- data.frame(variable = colnames(v)[j], group = seq_len(n_groups), stringsAsFactors = FALSE)
    for (k in seq_along(level)) {
      sc <- scored[[k]][scored[[k]]$variable == j, , drop = FALSE]
      g <- findInterval(sc$lead, breaks)
      need <- min_group_size(level[k])
      pooled <- if (nrow(sc) >= need) conformal_quantile(sc$score, level[k]) else NA_real_
      counts <- tabulate(g, n_groups)
      q <- vapply(seq_len(n_groups), function(b) {
        if (counts[b] >= need) conformal_quantile(sc$score[g == b], level[k]) else if (counts[b] > 0) pooled else NA_real_
      }, 0)
      source <- ifelse(counts >= need, "own", ifelse(counts > 0, if (is.na(pooled)) "none" else "pooled", "carried"))
      # "carried" only where an earlier group has a factor to carry
      source[source == "carried" & !(cumsum(!is.na(q)) > 0)] <- "none"
      # Non-decreasing in the lead: a model that misses its own past misses
      # it more the farther out, and the groups' separate quantiles (a few
      # dozen correlated values each) went up and down (mdeaths' 95%
      # intervals widened 2-3 frames ahead, not 1 or 4-6). A weighted
      # isotonic fit (weights the groups' backtest values): it lowered the
      # interval score against the groups' own factors on the set the rule
      # was chosen on, where a running maximum carried the noisy largest
      # error of 20 one frame ahead out to every lead (95% intervals covering
      # 97.0% and 96.8% of two sets' values; bench/results/forecast_calibration.md).
      ok <- !is.na(q)
      if (any(ok)) q[ok] <- isotonic_increasing(q[ok], counts[ok])
      for (b in seq_len(n_groups)[-1]) if (counts[b] == 0) q[b] <- q[b - 1]  # beyond the origins' reach
      q <- pmax(q, 0)  # widened only (see above)
      factors[, k, j] <- q
      out[, k, j] <- q[findInterval(trail[j] + seq_len(n.ahead), breaks)]
      pct <- format_percent_label(level[k])
      if (k == 1) rows$backtest_values <- counts
      rows[[paste0("covered_", pct)]] <- vapply(seq_len(n_groups), function(b) if (counts[b]) mean(sc$score[g == b] <= 0) else NA_real_, 0)
      rows[[paste0("widen_", pct)]] <- q
      rows[[paste0("from_", pct)]] <- source
    }
    # the groups its forecast uses: leads trail + 1 .. trail + n.ahead
    table <- rbind(table, rows[rows$group %in% findInterval(trail[j] + seq_len(n.ahead), breaks), , drop = FALSE])
  }
  ends <- c(breaks[-1] - 1L, max(span, reach))
  lead_label <- ifelse(breaks == ends, as.character(breaks), paste0(breaks, "-", ends))
  table$leads <- lead_label[table$group]
  table <- table[, c(if (d > 1) "variable", "leads", "backtest_values",
                     setdiff(names(table), c("variable", "leads", "backtest_values", "group")))]
  rownames(table) <- NULL
  list(factors = out, table = table, origins = length(origins), trail = trail,
       most_errors = max(tabulate(scored[[1]]$variable, d)))
}

# The non-decreasing sequence closest to y in weighted least squares (weights
# w > 0): pool adjacent violators.
isotonic_increasing <- function(y, w) {
  val <- numeric(0); wt <- numeric(0); size <- integer(0)
  for (i in seq_along(y)) {
    val <- c(val, y[i]); wt <- c(wt, w[i]); size <- c(size, 1L)
    while (length(val) > 1 && val[length(val) - 1] > val[length(val)]) {
      m <- length(val)
      val[m - 1] <- (val[m - 1] * wt[m - 1] + val[m] * wt[m]) / (wt[m - 1] + wt[m])
      wt[m - 1] <- wt[m - 1] + wt[m]
      size[m - 1] <- size[m - 1] + size[m]
      val <- val[-m]; wt <- wt[-m]; size <- size[-m]
    }
  }
  rep(val, size)
}

# What a forecast's header (and, short, its plot) says of its calibration
# ("" without one): widened, calibrated and not widened, or not calibrated
# (too few backtest errors), and whether some intervals were left as the
# model's (a review: "fell inside them as often as asked" was printed where
# nothing could be calibrated, and where the isotonic fit had pooled an
# under-covering group away).
forecast_calibration_text <- function(cal, short = FALSE) {
  if (is.null(cal)) return("")
  share <- attr(cal, "calibrated") %||% 1
  if (share == 0) {
    return(if (short) ", not calibrated (too few backtests)" else
      ", not calibrated: too few forecasts of the series' own past (attr(, \"calibration\"))")
  }
  widened <- !isFALSE(attr(cal, "widened"))
  if (short) return(if (widened) ", widened by calibration" else ", calibrated: not widened")
  sprintf("%s from %s%s (attr(, \"calibration\"))",
          if (widened) ", widened where its forecasts of the series' own past" else ", calibrated on its forecasts of the series' own past",
          plural(attr(cal, "origins"), "origin"),
          paste0(if (widened) " fell outside them" else ", not widened",
                 if (share < 1) "; some left as the model's (too few backtests)" else ""))
}

# The forecast's intervals (bands of series_*_intervals(), entries ij) moved
# out by the calibration's factors (cal$factors: horizon x level x
# variable; h: each entry's horizon), on the model's scale; then nested: a
# level's interval holds every lower level's (a review: a group with enough
# backtest errors for 80% but not 95% took its own large 80% factor and the
# pooled smaller 95% one, and the 80% interval came out wider than the 95%).
apply_forecast_calibration <- function(bands, ij, h, cal, model) {
  tr <- model$transform
  cj <- ij[, 2]
  for (k in seq_along(bands)) {
    q <- cal$factors[cbind(h, k, cj)]
    ok <- !is.na(q)
    if (!any(ok)) next
    at <- ij[ok, , drop = FALSE]
    moved <- widen_on_model_scale(bands[[k]]$lower[at], bands[[k]]$upper[at], q[ok], cj[ok], tr)
    bands[[k]]$lower[at] <- moved$lower
    bands[[k]]$upper[at] <- moved$upper
  }
  for (k in seq_along(bands)[-1]) {  # levels in increasing order
    bands[[k]]$lower[ij] <- pmin(bands[[k]]$lower[ij], bands[[k - 1]]$lower[ij])
    bands[[k]]$upper[ij] <- pmax(bands[[k]]$upper[ij], bands[[k - 1]]$upper[ij])
  }
  bands
}

# The forecast's sd on the data's scale (predict()'s `se`; Details there) of
# the entries `ij` (frame, variable) of vx, from their means and sds on the
# model's standardised scale: on the data's own scale the law is Gaussian and
# its sd exact, scale * sd; on a transformed one, the sd of the Gaussian's
# image through the map back, by Gauss-Hermite quadrature (40 nodes): exact
# for the law the intervals use, whatever the number of draws (the draws'
# sd, used before, swung by 2x between horizons at 20 paths; the delta
# method's slope of the map back vanishes near a bound).
series_forecast_se <- function(model, vx, ij, mean, sd) {
  cols <- ij[, 2]
  tr <- model$transform
  lower <- if (is.null(tr$lower)) tr$lambda * NA else tr$lower  # a DiT's transform has lambda only
  own <- is.na(tr$lambda[cols]) & is.na(lower[cols])
  se <- unname(model$scale[cols] * sd)
  if (any(!own)) {
    gh <- gauss_hermite(40)
    back <- series_back(model, vx, ij[!own, , drop = FALSE])
    g <- vapply(gh$nodes, function(z) back(mean[!own] + sd[!own] * z), numeric(sum(!own)))
    g <- matrix(g, ncol = length(gh$nodes))
    m1 <- drop(g %*% gh$weights)
    se[!own] <- sqrt(pmax(drop((g - m1)^2 %*% gh$weights), 0))
  }
  se
}

# Nodes and weights of n-point Gauss-Hermite quadrature for the standard
# normal law (probabilists' Hermite polynomials, Golub-Welsch: the
# eigenvalues of the Jacobi matrix, the weights the squared first components
# of its eigenvectors): sum(weights * f(nodes)) ~ E f(Z).
gauss_hermite <- function(n) {
  J <- matrix(0, n, n)
  off <- sqrt(seq_len(n - 1))
  J[cbind(1:(n - 1), 2:n)] <- off
  J[cbind(2:n, 1:(n - 1))] <- off
  e <- eigen(J, symmetric = TRUE)
  list(nodes = e$values, weights = e$vectors[1, ]^2)
}

#' @export
print.ditimpute_series_forecast <- function(x, ...) {
  check_dots(environment(), "print()", also = print_dots)
  level <- attr(x, "level")
  if (!is.null(level) && !is.null(x$frame)) {
    h <- if (is.null(x$horizon)) "" else {
      r <- range(x$horizon)
      if (r[1] == r[2]) sprintf(" (horizon %d)", r[1]) else sprintf(" (horizons %d-%d)", r[1], r[2])
    }
    # wrapped to the console's width (a review: 120-190 characters ran off a
    # knitted page)
    head <- c(sprintf("<ditimpute_series_forecast> %s beyond the series' end%s%s", plural(length(unique(x$frame)), "frame"),
                      h, if (is.null(attr(x, "method"))) "" else sprintf("; %s", attr(x, "method"))),
              sprintf("%s intervals of the model%s%s; a forecast is a gap at the series' end (see ?predict.ditimpute_series_imputation)",
                      percent_list(level), if (isTRUE(attr(x, "proper"))) " (proper draws)" else "",
                      forecast_calibration_text(attr(x, "calibration"))))
    cat(strwrap(head[1], width = getOption("width"), exdent = 2), sep = "\n")
    cat(strwrap(head[2], width = getOption("width"), indent = 2, exdent = 2), sep = "\n")
  }
  df <- x
  class(df) <- "data.frame"
  attr(df, "samples") <- NULL
  attr(df, "history") <- NULL
  attr(df, "calibration") <- NULL
  # a numeric time (a ts's 1987.25) as text, so that print(digits = 3) rounds
  # the values only (a review: quarters printed as 1987 1987 1988 1988)
  if (is.numeric(df$time)) df$time <- format(df$time, digits = 7)
  # 4 significant digits (fewer with options(digits =)) unless asked: R's 7 wrapped the interval
  # columns of a three-variable forecast into a second block (a report
  # writer's review)
  dots <- list(...)
  if (is.null(dots$digits)) dots$digits <- min(4L, getOption("digits"))
  do.call(print, c(list(df, row.names = FALSE), dots))
  invisible(x)
}

# Rows of a forecast keep its attributes, and its draws follow the rows kept
# (head(), tail(), fc[fc$horizon > 8, ]); without its columns it is a plain
# data frame.
#' @export
`[.ditimpute_series_forecast` <- function(x, ...) {
  out <- NextMethod()
  if (!is.data.frame(out)) return(out)
  cols <- forecast_band_names(attr(x, "level") %||% 0.9)
  if (!all(c("time", "frame", "variable", "estimate", cols$lower, cols$upper) %in% names(out))) {
    class(out) <- "data.frame"
    return(out)
  }
  for (a in c("level", "method", "model_choice", "proper", "history", "calibration")) attr(out, a) <- attr(x, a)
  s <- attr(x, "samples")
  if (!is.null(s)) attr(out, "samples") <- s[, match(sprintf("%s[%d]", out$variable, out$frame), colnames(s)), drop = FALSE]
  class(out) <- class(x)
  out
}

#' Plot a forecast
#'
#' One panel per variable: the series' last frames (at least 50, or three
#' horizons' worth; completed, its imputed values included) as a grey line,
#' then the forecast with its interval band, in the colours of
#' [plot.ditimpute_series_imputation()].
#'
#' @param x A result of [predict.ditimpute_series_imputation()].
#' @param ... Unused: a named argument here is an input error.
#' @return The ggplot object, invisibly, after drawing it.
#' @examples
#' imp <- impute_series(datasets::co2, n_samples = 50, seed = 1)
#' plot(predict(imp, n.ahead = 36, seed = 1))
#' @export
plot.ditimpute_series_forecast <- function(x, ...) {
  check_dots(environment(), "plot()")
  history <- attr(x, "history")
  if (is.null(history) || is.null(x$estimate)) {
    abort_input("x", "must be a forecast from predict() on an impute_series() result, with its columns.")
  }
  as_axis <- function(t) if (inherits(t, "Date")) as.POSIXct(t) else t
  # Panels for the variables the forecast has (rows of it may keep only some).
  vars <- unique(x$variable)
  history <- history[history$variable %in% vars, , drop = FALSE]
  level <- attr(x, "level") %||% 0.9
  cols <- forecast_band_names(level)
  if (!all(c(cols$lower, cols$upper) %in% names(x))) {
    abort_input("x", "must be a forecast from predict() on an impute_series() result, with its columns.")
  }
  hist <- data.frame(time = as_axis(history$time), variable = factor(history$variable, levels = vars),
                     value = history$value)
  # The band and line start at the last frame of the series, so they join it.
  last <- hist[!duplicated(hist$variable, fromLast = TRUE), , drop = FALSE]
  # One ribbon per level, the widest first (drawn under the narrower ones),
  # keyed as interval_scale() keys them.
  key <- if (length(level) == 1) "interval" else paste0(format_percent_label(level), "% interval")
  band <- do.call(rbind, lapply(rev(seq_along(level)), function(k) {
    rbind(data.frame(time = last$time, variable = last$variable, estimate = last$value, lower = last$value,
                     upper = last$value, band = key[k]),
          data.frame(time = as_axis(x$time), variable = factor(x$variable, levels = vars), estimate = x$estimate,
                     lower = x[[cols$lower[k]]], upper = x[[cols$upper[k]]], band = key[k]))
  }))
  band$band <- factor(band$band, levels = rev(key))
  line <- band[band$band == key[1], , drop = FALSE]
  drawn(ggplot2::ggplot(band, ggplot2::aes(x = .data$time)) +
    ggplot2::geom_line(data = hist, ggplot2::aes(y = .data$value, group = .data$variable), colour = "grey50",
                       linewidth = 0.4) +
    ggplot2::geom_ribbon(ggplot2::aes(ymin = .data$lower, ymax = .data$upper, group = interaction(.data$variable, .data$band),
                                      fill = .data$band, alpha = .data$band)) +
    ggplot2::geom_line(data = line, ggplot2::aes(y = .data$estimate, group = .data$variable),
                       colour = plot_colours[["imputed"]]) +
    ggplot2::facet_wrap(~variable, ncol = 1, scales = "free_y") +
    interval_scale(level) +
    ggplot2::labs(x = "time", y = "value", title = "Forecast",
                  subtitle = sprintf("%s; %s intervals of the model%s%s", attr(x, "method") %||% "",
                                     percent_list(level),
                                     if (isTRUE(attr(x, "proper"))) " (proper draws)" else "",
                                     forecast_calibration_text(attr(x, "calibration"), short = TRUE))) +
    plot_theme())
}

# The fitted structural model of a series imputation, or an input error
# naming `object` for one by the DiT (`what`: what needs the model).
series_gp_model <- function(object, what, call = rlang::caller_env()) {
  if (!inherits(object, "ditimpute_series_imputation")) {
    abort_input("object", "must be a result of impute_series().", call = call)
  }
  model <- object$model
  if (!inherits(model, "ditimpute_series_model")) {
    abort_input("object", sprintf(paste("was imputed with method = \"dit\", which has no likelihood and no model to",
                                        "extend: %s needs method = \"gp\" (the structural model)."), what), call = call)
  }
  model
}

# The time stamps of the k frames after the series' last: numbers (a ts's
# time, frame numbers) by the series' mean step; calendar months (monthly,
# quarterly, yearly Date/POSIXct stamps on one day of the month or at month
# ends) by months; calendar days at one clock time (POSIXct daily data
# across daylight saving) by days; other Date/POSIXct stamps by their step.
series_time_ahead <- function(time, k) {
  n <- length(time)
  ahead <- seq_len(k)
  if (!inherits(time, c("Date", "POSIXt"))) {
    time <- as.numeric(time)
    return(time[1] + (n - 1 + ahead) * (time[n] - time[1]) / (n - 1))
  }
  if (inherits(time, "POSIXlt")) time <- as.POSIXct(time)
  months <- calendar_step(time)
  if (!is.null(months)) return(series_months_ahead(time, months, k))
  if (inherits(time, "POSIXct")) {
    days <- calendar_day_step(time)
    if (!is.null(days)) {  # across daylight saving too
      return(seq(time[n], by = sprintf("%d DSTday", days), length.out = k + 1)[-1])
    }
  }
  step <- diff(as.numeric(time[(n - 1):n]))  # days for a Date, seconds for a POSIXct
  time[n] + step * ahead
}

# Calendar stamps `months` months apart continued k steps: the same day of
# the month (or the month's last day, when every stamp is one) and time of day.
series_months_ahead <- function(time, months, k) {
  n <- length(time)
  lt <- as.POSIXlt(time)
  m <- 12 * lt$year[n] + lt$mon[n] + months * seq_len(k)
  first <- as.Date(sprintf("%04d-%02d-01", m %/% 12 + 1900, m %% 12 + 1))
  next_day <- as.POSIXlt(as.Date(sprintf("%04d-%02d-%02d", lt$year + 1900, lt$mon + 1, lt$mday)) + 1)
  day <- if (all(next_day$mday == 1)) {
    as.Date(sprintf("%04d-%02d-01", (m + 1) %/% 12 + 1900, (m + 1) %% 12 + 1)) - 1  # month ends
  } else {
    first + (lt$mday[n] - 1)
  }
  if (inherits(time, "Date")) return(day)
  tz <- attr(time, "tzone")
  tz <- if (is.null(tz)) "" else tz[1]
  as.POSIXct(paste(format(day), format(time[n], "%H:%M:%OS6")), tz = tz)
}

#' Log-likelihood of a series imputation's fitted model
#'
#' The log-likelihood, parameter count and number of observations of the
#' structural model that [impute_series()] (`method = "gp"`) fitted, so that
#' [stats::AIC()] and [stats::BIC()] work on the imputation and on its model
#' alike (`AIC(imp) == AIC(imp$model)`). The log-likelihood is that of the observed values of the fitting
#' stretch (at most `fit_frames` frames) on the data's scale, the Jacobian of
#' any Box-Cox, log or bounded scale included, at the parameters used (a
#' level's rate moved on hidden gaps: at that rate); `df` counts every fitted
#' parameter, each variable's scale and the mean's (a line, a level's start)
#' among them, and a fixed seasonal shape's; `nobs` is the number of observed
#' values whose likelihood counts: those after each variable's first `k`,
#' which only start a level or trend, where `k` is the largest such start
#' among the forms fitted in the same call (2 when a trend was among them, 0
#' when only the stationary form was: see [impute_series()], Details).
#' So results of separate calls with different `model` arguments score
#' different values and are not comparable by `AIC()` (which warns that the
#' numbers of observations differ); compare forms with
#' `summary(imp)$candidates`, which scores every form of one call on the same
#' values. Nor is the value comparable with [stats::StructTS()]'s, which
#' counts every value under a large-variance prior on the initial state. For a
#' `ditimpute_series_model_set` (variables in independent groups) all three
#' are the groups' sums. The candidate forms' values are in
#' `summary(imp)$candidates`. A DiT (`method = "dit"`) has no likelihood:
#' an input error.
#'
#' @param object A result of [impute_series()] with `method = "gp"`, or its
#'   `model`.
#' @param ... Nothing: a name here is an input error.
#' @return `logLik()`: an object of class `logLik` with attributes `df` and
#'   `nobs`; `nobs()`: a whole number.
#' @seealso [impute_series()], [predict.ditimpute_series_imputation()].
#' @examples
#' y <- datasets::Nile
#' y[40:55] <- NA
#' imp <- impute_series(y, n_samples = 20, seed = 1)
#' logLik(imp)
#' nobs(imp)
#' c(AIC = AIC(imp), BIC = BIC(imp))
#' @export
logLik.ditimpute_series_imputation <- function(object, ...) {
  check_loglik_dots(environment())
  stats::logLik(series_gp_model(object, "a likelihood"))
}

#' @rdname logLik.ditimpute_series_imputation
#' @export
nobs.ditimpute_series_imputation <- function(object, ...) {
  check_dots(environment(), "nobs()")
  stats::nobs(series_gp_model(object, "a number of observations"))
}

#' @rdname logLik.ditimpute_series_imputation
#' @export
nobs.ditimpute_series_model <- function(object, ...) {
  check_dots(environment(), "nobs()")
  as.integer(object$nobs)
}

#' @export
logLik.ditimpute_series_dit_model <- function(object, ...) {
  check_loglik_dots(environment())
  abort_input("object", "is the DiT of impute_series(method = \"dit\"), which has no likelihood; method = \"gp\" has one.")
}

#' Standardised one-step residuals of a series imputation's model
#'
#' The residuals of the structural model that [impute_series()] (`method =
#' "gp"`) fitted, for the checks a fitted time-series model gets (as
#' [stats::tsdiag()] for [stats::StructTS()]): each observed value's one-step
#' prediction error (the Kalman filter's innovation, given the values before
#' it) over its predictive sd, on the model's scale (after any Box-Cox, log
#' or bounded transform, centring and scaling, and the fixed seasonal shape
#' removed when the model has one). Under the model they are
#' independent standard normal: autocorrelation left in them
#' ([stats::Box.test()], [stats::acf()]) says the form misses structure, a
#' heavy-tailed QQ plot says the Gaussian law is too light (its intervals
#' then under-cover the extremes), and a run of large values of one sign
#' after a gap says the level moved inside it (a shift the imputation
#' bridges smoothly, with intervals too narrow there).
#'
#' Each variable is filtered on its own at its own scale (the innovations
#' whose correlations give the model's `Lambda`); the values a level's or
#' trend's diffuse start conditions on (a variable's first one or two
#' observed values) and the missing entries have none (`NA`). A stationary
#' form's mean is its fitted line. For a model set (`separate`), each
#' group's model gives its variables' residuals. A DiT (`method = "dit"`)
#' has no such model: an input error, as is a result of [impute()] (its
#' model was given, not fitted).
#'
#' @param object A result of [impute_series()] with `method = "gp"`.
#' @param ... Nothing: a name here is an input error.
#' @return The residuals in the form of the imputed series (a `ts` for a
#'   `ts`, a `ditimpute_series` for one, a data frame for a data frame, with
#'   its time column and any non-numeric columns unchanged: select the
#'   variables' columns for [stats::acf()] or [stats::Box.test()]; a matrix
#'   or vector otherwise), `NA` where there is none.
#' @seealso [impute_series()], [logLik.ditimpute_series_imputation()].
#' @examples
#' y <- datasets::Nile
#' y[40:55] <- NA
#' imp <- impute_series(y, n_samples = 20, seed = 1)
#' r <- residuals(imp)
#' # the first value has no residual (NA), nor have the missing ones:
#' # Box.test() leaves out the lag pairs with a missing value, acf() needs
#' # na.action = na.pass to do so (it stops at an NA otherwise)
#' Box.test(r, lag = 10, type = "Ljung-Box")
#' acf(r, na.action = na.pass, plot = FALSE)$acf[2:4]
#' qqnorm(r); qqline(r)
#' # the years of the three largest standardised errors
#' time(r)[order(-abs(r))[1:3]]
#' @export
residuals.ditimpute_series_imputation <- function(object, ...) {
  check_dots(environment(), "residuals()")
  model <- series_gp_model(object, "residuals")
  w <- series_innovations(model, object$x)
  dimnames(w) <- list(NULL, colnames(object$x))
  object$rebuild(w)
}

# An impute() result has no fitted model of its own (its spec or DiT is the
# user's): residuals() fell through to residuals.default() and returned
# NULL without a word (a review).
#' @rdname residuals.ditimpute_series_imputation
#' @export
residuals.ditimpute_imputation <- function(object, ...) {
  check_dots(environment(), "residuals()")
  abort_input("object", paste("is a result of impute(), which fits no model to the data (the spec or DiT was given):",
                              "no residuals. residuals() is for impute_series() results; for the imputation's errors",
                              "against known values, see imputation_metrics()."))
}

# coef(), fitted() (and residuals() of a gp_fit()) have no defined meaning
# for these results: the defaults returned NULL without a word, which a
# report then printed as nothing (a review). Errors that say where the
# numbers are instead.
no_model_method <- function(method, object) {
  if (inherits(object, c("ditimpute_series_model", "ditimpute_series_model_set", "ditimpute_series_dit_model"))) {
    abort_input("object", sprintf("is the model of an impute_series() result: %s() is not defined for it; print(object) shows what was fitted.",
                                  method), call = rlang::caller_env())
  }
  if (inherits(object, "ditimpute_series_imputation")) {
    where <- if (method == "coef") {
      "the fitted model is object$model (print(object$model) and summary(object) show what was fitted)"
    } else {
      "the completed series is completed_series(object); the one-step errors are residuals(object)"
    }
    abort_input("object", sprintf("is an impute_series() result: %s() is not defined for it; %s.", method, where),
                call = rlang::caller_env())
  }
  if (inherits(object, "ditimpute_gp")) {
    where <- if (method == "coef") {
      "its parameters are object$kernel, object$nugget, object$Lambda and object$mean (print(object) shows them)"
    } else {
      "it fits a law to windows, not values: impute() with it gives imputations, imputation_metrics() their errors"
    }
    abort_input("object", sprintf("is a Gaussian-process model: %s() is not defined for it; %s.", method, where),
                call = rlang::caller_env())
  }
  abort_input("object", sprintf(paste("is an imputation under a given model (impute(), gp_smooth()), which fits none",
                                      "to the data: %s() is not defined for it; see imputation_metrics() for its errors",
                                      "against known values."), method), call = rlang::caller_env())
}

#' @export
coef.ditimpute_imputation <- function(object, ...) no_model_method("coef", object)

#' @export
fitted.ditimpute_imputation <- function(object, ...) no_model_method("fitted", object)

#' @export
coef.ditimpute_gp <- function(object, ...) no_model_method("coef", object)

#' @export
fitted.ditimpute_gp <- function(object, ...) no_model_method("fitted", object)

#' @export
residuals.ditimpute_gp <- function(object, ...) no_model_method("residuals", object)

#' @export
coef.ditimpute_series_model <- function(object, ...) no_model_method("coef", object)

#' @export
coef.ditimpute_series_model_set <- function(object, ...) no_model_method("coef", object)

#' @export
coef.ditimpute_series_dit_model <- function(object, ...) no_model_method("coef", object)

# Each variable's standardised one-step prediction errors of v (T x d, the
# data's scale, NA = missing) under a fitted model or model set: T x d, NA
# where none counts (residuals.ditimpute_series_imputation()).
series_innovations <- function(model, v, call = rlang::caller_env()) {
  if (inherits(model, "ditimpute_series_model_set")) {
    out <- matrix(NA_real_, nrow(v), ncol(v))
    for (g in seq_along(model$parts)) {
      cols <- model$groups[[g]]
      out[, cols] <- series_innovations(model$parts[[g]], v[, cols, drop = FALSE], call)
    }
    return(out)
  }
  w <- core_call(cpp_structural_innovations(scale_cols(v, model), model$candidate), call = call)
  w[is.nan(w)] <- NA_real_
  w
}
