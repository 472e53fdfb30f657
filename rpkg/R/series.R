# Whole series of any length: impute_series() fits a structural time-series
# model (series_model.R; the core's structural.hpp) and conditions on every
# observed value at once by Kalman smoothing, or trains a small DiT on the
# series' own windows (series_dit.R).

#' Impute a whole time series with intervals
#'
#' Completes one univariate or multivariate series of any length with any
#' gaps (scattered holes, long gaps, leading and trailing gaps, a variable
#' missing for a stretch) and gives an interval for every imputed entry.
#'
#' **The model** (`method = "gp"`) is a structural time-series model, as in
#' [stats::StructTS()] or KFAS, written as a Gaussian process: each variable
#' (after the optional Box-Cox or log transform, centred and scaled) is
#' `level + smooth + season + noise`, the variables sharing the form and
#' correlated through a `d x d` covariance `Lambda` (the covariance of the
#' whole series is `Gamma %x% Lambda`):
#' * the level: with `model = "level"` a random walk (its starting value
#'   unknown), with `"trend"` a local linear trend (the level integrates a
#'   random-walk slope), with `"stationary"` a fixed straight line fitted by
#'   least squares. A level has no global mean to return to: a long gap is
#'   bridged from the values at both of its ends, as by interpolation, and its
#'   intervals widen towards the middle of the gap. The stationary form's
#'   intervals carry the line's own uncertainty (its intercept and slope
#'   integrated out: universal kriging), so beyond the observed values (a gap
#'   at the start or end of a series) they keep widening as the line is
#'   extrapolated; a level's and a trend's widen by construction;
#' * the smooth term: a Matern 5/2 process (variance and lengthscale);
#' * the season (`kernel = "seasonal"`, when a `period` of at least 2 frames
#'   fits twice into the series): quasi-periodic, the first harmonics of the
#'   periodic kernel `exp(-2 sin^2(pi tau / period) / lp^2)` (up to 5 on
#'   series of up to 1,500 frames, enough for a sharp seasonal peak; up to 3
#'   on longer ones, where the smaller state keeps the fit fast), whose
#'   amplitudes and phases drift with a fitted time constant (smoothly, as a
#'   Matern 3/2 process, where a short series' season has at most 3
#'   harmonics; exponentially otherwise). A long period with a sharp shape
#'   inside it is beyond those harmonics (half-hourly electricity demand with
#'   a weekly period of 336 frames: the daily cycle is the week's 7th
#'   harmonic), so where the shape's higher harmonics carry at least 5% of a
#'   variable's variance, and at least 4 times what noise would give them,
#'   the whole shape (the mean by position in the period, after a moving
#'   average over one period is taken out) is held fixed: every form is
#'   fitted to the values less it, the season takes what moves around it,
#'   and it is added back to the imputations. It needs a whole number of
#'   frames per period, four periods of data and at least 3 values at every
#'   position; `print(fit$model)` says when a variable has one
#'   (`forecast::taylor`: MAE from 8.7x `imputeTS::na_seadec()`'s to 1.04x,
#'   `bench/results/series_fresh_packages_gp_nonstationary.md`; no series of
#'   R's `datasets`, ETT or BeijingAir gets one at its calendar's period, the
#'   day for hourly data). So the period of sub-daily data matters. Demand
#'   that differs between weekdays and weekends needs the week
#'   (`frequency = 336` for half-hours, the longest period `forecast::msts()`
#'   gives): given the day's 48, taylor's MAE was 4.9x `na_seadec()`'s with
#'   the week's (`bench/results/series_profile_variants.md`). Given the week,
#'   `kernel = "auto"` weighs the day too, as a cycle (below): on hourly
#'   series whose daily cycle changes through the year, the week's 168 hours
#'   then cost 1.00-1.06x the MAE of the day's 24 (ETTh1's oil temperature
#'   and two of its loads; 1.13-1.37x before the day was weighed) and gave
#'   0.94-0.99x on four BeijingAir series
#'   (`bench/results/series_period_choice.md`);
#' * or, with `kernel = "cycle"`, the same quasi-periodic term with its period
#'   fitted too: a cycle whose length is not the calendar's, such as the
#'   sunspots' 11 years or a predator-prey cycle. The fit starts from the
#'   periodogram's most prominent peak between 4 frames and a quarter of the
#'   series, or from three or two times its period when the peak there
#'   stands out too (a harmonic such as a day's 12 hours can stand higher
#'   than its cycle), or from `period` when it is given, and searches within a factor
#'   1.5 of it; the fitted period is printed with the model. The fit is
#'   checked against the same form with the period held at its start (and
#'   the period freed from there when that fits better), so a cycle never
#'   fits worse than a season of the starting length. The cycle
#'   replaces the season (a series gets one periodic term). `kernel = "auto"`
#'   weighs it too (below) when the series has gaps, the periodogram's peak
#'   stands well above its background (a screen: at least 12 times the
#'   geometric mean of the periodogram at frequencies 1.3 to 3 times higher
#'   and lower, three bins averaged) and the calendar's season does not hold
#'   it (a period over 1.5 calendar periods, or a harmonic of the calendar's
#'   period beyond the season's harmonics: the day of an hourly series given
#'   the week's 168 hours is its 7th). Such a harmonic is the calendar's:
#'   where the peak lies within two periodogram bins of it, the cycle's
#'   period is held at the harmonic (24 hours exactly; `print(fit$model)`
#'   says "held"): on the hourly series above as accurate as a fitted period
#'   (0.997-1.004x its MAE by gap length) in 0.64-1.05x its time;
#' * white noise (the nugget).
#'
#' Every part is Markov, so the core fits and conditions exactly in time and
#' memory linear in the length of the series (Kalman filter, smoother and
#' backward sampling, as [gp_smooth()]): no windows. The parameters maximise
#' the likelihood of the observed values (missing ones integrated out), each
#' variable's scale profiled out, on the stretch of at most `fit_frames`
#' frames with the most observed values (Nelder-Mead from one start per
#' form; a form without a season whose smooth lengthscale started at the
#' period's min(period, 20) frames also from 10 frames, keeping the better
#' optimum, `bench/results/series_smooth_starts.md`);
#' `Lambda`'s correlations are those of
#' the variables' standardised one-step prediction errors. With `model =
#' "auto"` and `kernel = "auto"` every form is fitted (stationary, level and
#' trend; smooth and seasonal) and the one with the smallest BIC is used;
#' `summary()` shows each candidate's log-likelihood, AIC and BIC. When a
#' cycle is weighed, BIC picks the best form with the calendar's kernel and
#' the best with the cycle, and the two are compared on the series' own
#' hidden gaps, as `calibrate = TRUE` hides them: ten rounds hide further
#' observed stretches with lengths drawn from the series' gaps, both forms
#' impute them exactly, and each hidden value is scored by the CRPS of its
#' Gaussian conditional (accuracy and width together). The cycle is used
#' when its mean CRPS is lower by more than one standard error of the paired
#' difference, each hidden gap one unit (cross-validation's one-standard-error
#' rule, leaning to the calendar's form); `print(object$model)` shows the
#' comparison. BIC ranks one-step fit and can prefer a monthly series'
#' 12-month season although an 11-year cycle fills its long gaps better. A
#' series with no gaps (fitted for [predict.ditimpute_series_imputation()]) has no gaps to mimic: BIC
#' decides there (before 2026-12-06 no cycle was weighed on such a series,
#' and forecasts of lynx and sunspot.year had no cycle).
#' The model class is then weighed on the same hidden gaps when the series
#' has gaps: BIC's form against the best form of the other class (stationary,
#' or a local level or trend) of the chosen kernel, leaning to the level or
#' trend: one replaces BIC's stationary form when its mean CRPS is lower at
#' all, a stationary form replaces BIC's level or trend only when lower by
#' more than one standard error. The classes' best forms have about as many
#' parameters, but a stationary form wrongly chosen reverts to the series'
#' mean and trend inside a long gap, while a level bridges it from both ends
#' with widening intervals. On a short series BIC's ranking of the classes is
#' no surer than the gaps': on `ldeaths` with 7 random holes BIC preferred
#' the stationary form in all 10 of `bench/series.R`'s repetitions, while the
#' local level imputed the holes with 0.87 times its MAE. A variable's own
#' gap at the start or end of the series is mimicked at that end: some hidden
#' stretches then lie at the end of its observed values (from an origin up to
#' their length inwards, counted in observed values, the values beyond them left out), where the forms
#' extrapolate as they must in the real gap, and a stationary form's line is
#' refitted on each version, as it is for the imputation (on a series with no
#' such gap the comparison keeps the fitted line, as before). Scored on gaps
#' between observed values alone, the class step chose stationary forms
#' whose intervals stopped widening beyond the data: with the first or last
#' 5-20% of 19 R series hidden (`bench/series_ends.R`), raw 90% intervals
#' covered 75.4% of the values 6-20 frames from the data, and 80.8% with
#' the ends mimicked (86.3% and 87.2% of all; MAE 0.581x and 0.546x linear
#' interpolation's, which carries the nearest value out); with proper draws,
#' the default on a series with an end gap (see `proper`), 85.8% (88.2% of
#' all; `bench/results/series_ends_proper.md`). Last, on a series
#' longer than `fit_frames`, a level's
#' noise rate (with a level or trend chosen) is weighed on hidden gaps
#' anywhere in the series, not only in the fitting stretch: the fitted rate
#' times 3, 10, 30 and 100 in turn (the scale re-profiled, nothing else
#' moved), stopping at the first that scores worse than the one before; the
#' best replaces the fitted rate by the one-standard-error rule. Maximum
#' likelihood ranks one-step predictions, and a slow level with a short
#' smooth lengthscale fills a long gap with a local mean instead of bridging
#' its two ends: on imputeTS's `tsHeating` (606,837 frames, fitted on its
#' first 6,000) the step chose 10 times the fitted rate, and the MAE on the
#' sensor's own gaps fell to 0.81 times that of the fitted rate. `print(object$model)`
#' shows the multiplier and the comparison, and `logLik()` is the
#' likelihood at the rate used. A
#' variable's first values under a level or trend only start the level: they
#' count as parameters, not as likelihood. So that the forms compare, every
#' candidate's likelihood is that of the same values: those after each
#' variable's first observed ones that any candidate's start takes (two when
#' a trend is among them), given those. The choice then does not depend on the data's units (scored
#' each on its own values, the forms' likelihoods covered different data,
#' and rescaling a series could change the form chosen).
#'
#' **Intervals** are the model's exact Gaussian intervals,
#' `mean +/- z sd` on the model's scale; the point is the conditional mean.
#' **Positive data** (concentrations, counts, prices, growth): `"auto"` (the
#' default) models each variable whose values are all positive and span at
#' least an order of magnitude (largest / smallest at least 10) on a Box-Cox
#' scale,
#' `(y^lambda - 1) / lambda` (the log at `lambda = 0`), with `lambda` in
#' `[0, 1]` chosen so that the series' one-frame changes look most Gaussian
#' (their profile likelihood, on a grid of 0.05; with fewer than 10 one-frame
#' changes observed, from the changes between successive observed values when
#' there are 30 or more of them, else `lambda = 0.5`, the square root, between
#' the data's own scale and the log); `"boxcox"` does so for
#' every variable, `"log"` takes the log of every variable. The point and
#' the interval ends are mapped back: the point is the conditional median,
#' intervals are wider above than below (for `lambda < 1`), and every imputation, draw and
#' bound is positive (below the smallest observed value a Box-Cox scale
#' continues as a log scale with the same slope, so the model's whole real
#' line maps onto the positive values).
#' A positive series whose swings grow with its level but that spans less
#' than an order of magnitude stays on its own scale: AirPassengers (104 to
#' 622, a multiplicative season). `transform = "log"` models it so; on
#' AirPassengers' gaps its MAE was 0.92x the own scale's with 90% intervals
#' covering 87.4% against 91.9%, and at rolling forecast origins its MAE
#' was 0.290 naive MAEs against 0.270 (both with the model class as fitted;
#' `bench/results/series_transform_rule.md`,
#' where a likelihood-ratio rule for "auto" was measured and not adopted).
#' `logLik()` and the BIC are on the data's scale (the transform's Jacobian
#' included); `print()` of the model shows each variable's scale.
#' **Bounded data** (percentages, shares, relative humidity): `bounds =
#' c(0, 100)` (every variable) or `bounds = list(humidity = c(0, 100))`
#' (named variables) models each such variable on the logit of its position
#' between the bounds, widened on each side by a margin of `m` times their
#' distance, `m` chosen on a grid from 1e-4 to 0.1 like the Box-Cox `lambda`
#' (so that values lying on a bound map to finite values that are not
#' outliers); the Box-Cox scale does not apply to it. Every imputation,
#' draw and interval end lies within the bounds (the map back clamps to them,
#' so where the model's law reaches past the margin a bound carries a point
#' mass: a share at 99.99% may get forecasts and draws of exactly 100),
#' and observed values outside them are an input error. Nothing is guessed:
#' without `bounds` a percentage is modelled on its own scale, and its
#' intervals can cross 0 or 100.
#' **Non-negative data with zeros** (wind speeds, rainfall, counts), which
#' the Box-Cox scale cannot take: `bounds = c(0, Inf)` models the variable on
#' `log(y + c)`, the offset `c` chosen like the margin above (on a grid
#' from 1e-4 to 10 times the observed values' median), so zeros are not
#' outliers and no imputation, draw or interval end is negative; `c(-Inf,
#' upper)` does the same below an upper bound. Values lying on a bound (the
#' zeros of counts, hours of humidity at 100%) are a point mass that no
#' continuous scale has: each stands for the values between the bound and the
#' nearest value the data resolve (1 for counts), so the margin or offset is
#' never finer than that, and where the point mass would still pull it to its
#' smallest (a third of a continuous series at 0) the largest of the grid is
#' taken, a scale close to the data's own with its intervals clamped at the
#' bound (`bench/results/series_bounded_point_mass.md`: on yearly counts of
#' coal-mine disasters, 29% zeros, 90% intervals 3.55 wide on average for
#' counts of at most 6, where an offset of 1e-4 had made them 317 wide).
#'
#' **Several variables** are correlated through `Lambda` and share the form:
#' give `impute_series()` variables of one kind (pollutants of one station:
#' PM2.5 beside PM10, NO2 and CO had 0.54-0.65x linear interpolation's MAE
#' where only PM2.5 was missing, `bench/results/series_long_pm25_multi.md`).
#' A variable unlike the rest gets their form, fitted on the sum of the
#' variables' likelihoods: ETTh1's smooth oil temperature in one model with
#' its six rough load series had 90% intervals covering 80% of its hidden
#' values (65-67% on gaps over 60 frames) in two of three repetitions,
#' against 88-93% alone (`bench/results/series_long_multi_ETTh1_OT.md`).
#' The likelihood need not show it (on ETTh1 two loads' own forms beat the
#' shared one by more than the oil temperature's did); the share of a
#' variable's one-step changes that the others explain does (the squared
#' multiple correlation of its one-step innovations on theirs: the loads
#' explain 0.4% of the oil temperature's, the pollutants 31-50% of each
#' other's, `bench/results/series_multi_forms.md`). Conditioning on the others
#' can shrink a variable's one-step predictive variance by at most that share,
#' so with `separate = "auto"` (the default) every variable whose share is
#' under 5% beyond chance gets a model of its own (fitted and imputed as if
#' alone), and the rest are refitted together and checked again. "Beyond
#' chance" is the adjusted R^2, `1 - (1 - share) (n - 1) / (n - d)` for `d`
#' variables over `n` frames: with no dependence at all the share averages
#' `(d - 1) / (n - 1)`, a third for Longley's 6 variables over 16 years, so
#' on short series a raw share clears 5% by chance alone. The groups are independent,
#' so completions carry no dependence between a separated variable and the
#' others (ETTh1's oil temperature beside its loads is then imputed as alone,
#' to the digit, for 1.5-1.6x the time of one form,
#' `bench/results/series_long_multi_ETTh1_OT.md`; `proper = "auto"` is
#' decided on the whole `x`, so a variable imputed with others that have an
#' end gap gets proper draws where alone it might not). `print()` of the model
#' shows the shares and each group's form,
#' `summary()` each group's candidates. With `separate = "none"` all
#' variables share one form and `impute_series()` warns, naming such a
#' variable.
#'
#' With `method = "dit"`, a linear trend and the scaling are removed and a
#' small diffusion transformer ([dit_fit()]) is trained on windows of `H`
#' frames of the series itself (every `H / 4` frames): entries already missing
#' are shown to the network as missing and kept out of the loss, and the
#' training masks are half one block of a length drawn from the series' own
#' gaps (capped at `H / 2`; a block of one variable where the gap leaves
#' other variables observed, of whole frames where every variable is
#' missing), half the paper's scattered frames and one long block. (Trained
#' on frame blocks only, the DiT's error on single-variable gaps of four
#' multivariate series was 1.13x what it is with single-variable blocks,
#' geometric mean of 12 runs; `bench/results/dit_series_variable_gaps.md`.) The core then draws the `n_samples` paths block by block: the
#' frames are cut into blocks of `H / 2`, and each block is drawn from a
#' window holding `H / 4` frames before it (the path's own values) and `H / 4`
#' after it (the observed values ahead), so a gap that ends inside the window
#' is bridged from both sides; every path of a block goes through the network
#' in one batch, on the data's scale as `transform` and `bounds` choose it
#' (as for `method = "gp"`), and mapped back. The point is the mean of the
#' paths (their median for a transformed or bounded variable: a conditional
#' median, as with `method = "gp"`) and the per-entry intervals are their
#' order statistics (as [impute()] gives them), which
#' hold their level when the paths and the truth are exchangeable: at `level =
#' 0.95` that needs at least 39 paths, at 0.99 199 (fewer is an input error
#' naming `n_samples`). A network trained for a minute on the few windows of a
#' short series is far from that: on Seatbelts (192 months, 4 variables, 8
#' interior gaps of 1-12 months per run, 7 runs) the DiT's 90% intervals
#' covered 82.8% of the hidden values (75-91% per run) and the GP's 85.7%,
#' with MAE 36.1 against 29.9 (`bench/results/series_dit_short_coverage.md`).
#' `calibrate = TRUE` (or [calibrate()] on the result) self-calibrates them
#' as for the GP, its rounds drawn with the trained network: there it took
#' the DiT's coverage from 82.8% to 83.4% (mean width 130 to 132; the GP's
#' 85.7% to 86.0%) for 20-23 s per call on 2 cores. It cannot close
#' the gap: the values its rounds hide were among the network's training
#' windows, so the rounds see it more accurate than on a real gap. On such
#' series use the default `method = "gp"`.
#'
#' @param x The series: a `ts` or `mts`, a data frame with a time column
#'   (`Date` or `POSIXct`, equally spaced or monthly) and numeric columns
#'   (other columns, such as factors, without missing values are carried
#'   through unchanged, not modelled: covariates for [as_mids()]; so are
#'   complete numeric columns that are constant, restate the time axis (its
#'   year, month, day, weekday or hour) or step evenly (a row number), with
#'   a message;
#'   name one in `separate` or `bounds` to model it. Rows added to complete
#'   the time grid, e.g. by `merge()`, leave such columns missing there:
#'   a column that restates the time axis or steps evenly where given (the
#'   year or month only when named for it) is filled by that rule, and a
#'   label with one value, missing only in rows where every numeric column
#'   is missing, by that value; other text with missing values is an input
#'   error), a
#'   [ditimpute_series()], a numeric matrix (rows are frames) or a numeric
#'   vector. `NA` marks missing values. Each variable needs at least 8
#'   observed values with `method = "gp"` (twice the 4 parameters per
#'   variable of the smallest model; 3 with `method = "dit"`): a shorter
#'   series is an input error naming `x`. Both models are
#'   Gaussian: a variable with missing values that takes only two values
#'   where observed (a 0/1 indicator) is imputed on a continuous scale, with
#'   imputations and bounds between or beyond its two values, and a warning
#'   names it (round it, or impute it with a model for categories such as
#'   mice's `"logreg"`; when the two are 0 and an amount, a dry spell's
#'   rainfall, the warning names `bounds = c(0, Inf)` instead). Variables
#'   that are copies or exact linear functions of each other wherever both
#'   are observed (a duplicated column, a total beside its parts; BeijingAir's
#'   sites that share weather columns) are imputed from each other as a
#'   relation with noise, with intervals far wider than the exact relation
#'   allows: a warning (class `ditimpute_warning_collinear`) names them.
#' @param method `"gp"` (the structural model), or `"dit"`: a diffusion
#'   transformer trained on the series' own windows (see Details).
#' @param level Level of the per-entry intervals, in (0, 1). The model's
#'   errors are Gaussian; on series with spikes the intervals can have about
#'   the right variance and the wrong shape, and then one level at most is
#'   right: on ETT's oil temperature (standardised errors with a kurtosis of
#'   4.7-618) the 90% intervals covered 90.5-96.1% of hidden values by gap
#'   length, the 50% ones 58-80% and the 99% ones 96.3-99.0%
#'   (`bench/results/series_long_tails.md`); on BeijingAir's PM2.5 and O3,
#'   treering and sunspot.month (kurtosis 3.3-43.6, the scale right) the 50%
#'   ones 51.2-70.1% and the 99% ones 96.3-99.1%
#'   (`bench/results/series_long_tails_BeijingAir_PM2.5_BeijingAir_O3_treering_sunspot.month.md`).
#'   `calibrate = TRUE` rescales at the level asked: on ETT 99% intervals
#'   then covered 98.4-99.4% and 50% ones 47.9-60.2% in every gap-length group
#'   (`bench/results/series_long_levels.md`), on the four other series
#'   98.3-99.7% and 46.5-56.2%
#'   (`bench/results/series_long_levels_BeijingAir_PM2.5_BeijingAir_O3_treering_sunspot.month.md`).
#' @param n_samples Sample paths (at least 20; with `method = "dit"` enough
#'   for finite-sample intervals at `level`, see Details). The joint region
#'   (`radius`) at `level` needs `ceiling((n_samples + 1) * level) <=
#'   n_samples` (19 paths at 0.95, 99 at 0.99); with fewer the imputation has
#'   no region (`radius` is `NA`), only its intervals.
#' @param period Season length in frames; by default `frequency(x)` for a
#'   `ts`, 12 for monthly, 7 for daily and 24 for hourly time stamps, none
#'   otherwise (then only the smooth kernel is fitted). With `kernel =
#'   "cycle"`, the cycle's starting length (at least 4 frames; by default
#'   the periodogram's peak, see Details).
#' @param model `"auto"` (the smallest BIC), `"level"`, `"trend"` or
#'   `"stationary"` (see Details); or a fitted model, an earlier result of
#'   `impute_series()` or its `$model`, to impute `x` with, neither fitted
#'   nor trained again: another `level`, more `n_samples`, `calibrate =
#'   TRUE` or other values hidden, without the minutes of a DiT's training.
#'   `x` must then be the series the model was fitted on (the same variables
#'   and frames, whose trend and level the model holds), with values hidden
#'   or filled in: a value observed at the fit and now must be the same,
#'   and one filled in must suit the model's bounds and scale (errors naming
#'   `x` otherwise). `x`'s time axis is taken as given. The method and the
#'   fit's settings (`period`, `kernel`, `transform`, `bounds`, `separate`,
#'   `fit_frames`, `ridge`, `dit`) are the model's, and giving them is an
#'   error; [logLik()] and BIC of the result are the fit's. With the same
#'   missing values, `seed`, `level`, `n_samples`, `proper` and `calibrate`,
#'   the imputation is the earlier one.
#' @param kernel `"auto"` (the smaller BIC; a cycle weighed on hidden gaps,
#'   see Details), `"seasonal"`, `"smooth"` or `"cycle"` (a season of fitted
#'   length, see Details; `method = "gp"` only).
#' @param transform `"auto"`, `"boxcox"`, `"log"` or `"none"` (see Details,
#'   "Positive data"). Both methods choose the scale the same way. With
#'   `method = "dit"` the trend, the training and the draws are on that scale,
#'   and the sample paths are mapped back before they are summarised: the
#'   intervals are the back-transformed order statistics, and the point of a
#'   transformed (or bounded) variable is the paths' median, as with `method =
#'   "gp"` a conditional median (an untransformed variable's point is the
#'   paths' mean); `print()` of the model shows each variable's scale.
#'   `"none"` models every variable on its own scale. `"auto"` judges
#'   positivity from the observed values only: a variable that can be zero or
#'   negative but was positive wherever observed (a temperature in degrees
#'   Celsius over a warm stretch, with its frosty nights missing) is put on a
#'   Box-Cox scale, and its imputations and intervals then stay above 0; give
#'   such data `transform = "none"`. When at least a tenth of a variable's
#'   imputed values (and at least 3) lie below its smallest observed value,
#'   in the scale's log tail, and its lambda is 0.75 or more (changes that
#'   look additive, as a temperature's do), a warning (class `ditimpute_warning_floor`) says
#'   so and names that remedy (on Dongsi's spring temperatures with the hours
#'   at or below 0.5 degrees hidden, 87 of 106 imputed values lay there, and
#'   the 90% intervals covered 7.5% of the truth against 79.2% with `"none"`;
#'   `bench/results/series_outlier_errors.md`).
#' @param bounds `NULL` (the default), or the range the values cannot leave:
#'   `c(lower, upper)` for every variable, or a named list of such pairs for
#'   some variables (see Details, "Bounded data"); one end may be infinite
#'   (`c(0, Inf)`: non-negative data). Both methods model a bounded variable
#'   on the same bounded scale, and every imputation, draw and interval end
#'   lies within the bounds.
#' @param truth Optional true values in the form of `x`, kept for
#'   [imputation_metrics()] and [coverage()]; `NA` where a true value is not
#'   known (e.g. the series' own gaps when further values were hidden to
#'   score them): those entries are imputed but not scored.
#' @param fit_frames Fit on the stretch of at most this many frames with the
#'   most observed values (the imputation always uses the whole series). The
#'   forms whose parameters that stretch's observed values cannot fit twice
#'   over are left out; when not even the smallest can be, an input error
#'   naming `fit_frames`. A series that changes beyond the stretch (one-step
#'   errors there on another scale than on it: their median absolute values
#'   more than 1.5 times apart) gets a warning: its intervals are then too
#'   narrow or too wide away from the stretch.
#' @param ridge Added to the diagonal of the correlation matrix behind
#'   `Lambda` (then rescaled): 0.01 shrinks every correlation by about 1%.
#'   It keeps `Lambda` invertible when variables are nearly collinear
#'   (Seatbelts: `drivers` is `front` plus part of `rear`).
#' @param calibrate `TRUE` to self-calibrate the intervals ([calibrate()] on
#'   the result with its defaults, then [apply_calibration()]): ten rounds
#'   hide further observed stretches of the series with lengths drawn from its
#'   own gaps, and each entry's interval is widened so that a share `level`
#'   of those hidden values fall inside, per gap-length group; a group whose
#'   hidden values were covered more often than `level` has its intervals
#'   narrowed by its own factor when it rests on at least 200 hidden gaps, and
#'   otherwise by no more than the factor of all hidden gaps pooled (a group
#'   of a few long gaps is a sample of a few correlated values: narrowing on
#'   them alone took sunspot.month's long gaps from 87.7% to 63.8% coverage in
#'   `bench/results/series_long_narrowing_2026-11-25.md`; the errors' shape,
#'   which makes Gaussian intervals too wide at low levels, is shared by every
#'   gap length). On the many short gaps of ETTh2 it took single values from
#'   96.1% to 93.6%, and with the pooled factor ETTh1's gaps over 60 frames
#'   from 95.5% to 94.7%, in
#'   `bench/results/series_long_ETTh1_OT-ETTh2_OT-gp-gp_calibrated.md`. The
#'   calibration is kept as `calibration` in the result. Where the model holds
#'   a seasonal shape fixed, each round estimates the shape again without its
#'   hidden values, as a real gap's is estimated without its own: with them in
#'   it, the rounds' errors on `forecast::taylor` were too small and the
#'   calibration took 90% coverage from 88.9% to 86.8%; estimated again, to
#'   92.4% (90.9-93.2% by gap-length group,
#'   `bench/results/series_profile_calibration.md`). At levels other than
#'   0.9 the raw intervals carry the errors' shape: on 3,000-frame windows of
#'   8 real series (2,448 hidden gaps) they covered 59.9% at level 0.5, 85.0%
#'   at 0.8, 94.9% at 0.95 and 98.1% at 0.99, and on 8 short R series 51.3%,
#'   80.1%, 92.5% and 97.2%; calibrated, four of the long series went from
#'   60.6% to 51.0% at 0.5, 85.4% to 82.1% at 0.8 and 94.3% to 94.8% at 0.95
#'   (`bench/results/series_levels.md`, which also has each series). It repairs intervals
#'   that are too narrow on average over a gap-length group (heavier tails,
#'   changing volatility) and narrows those too wide where many gaps, or all
#'   of them together, show it; it cannot repair intervals too wide on a few
#'   long gaps alone, move a point that is biased, or make intervals right
#'   entry by entry. Where the series' gaps are outages of every variable at
#'   once, the rounds hide whole frames in the same share of their values
#'   (per variable, each hidden stretch had the other variables observed
#'   beside it, easier than an outage): on six 1,500-hour windows of four
#'   BeijingAir pollutants with 30 such gaps each, calibrating per variable
#'   took 90% coverage from 89.5% raw to 86.9% (Huairou's window 84.5% to
#'   80.7%), by whole frames to 90.8% (86.6%); gaps in one variable at a
#'   time 92.0% and 92.7% (raw 94.2%,
#'   `bench/results/series_calibration_joint.md`). A variable's leading or trailing gap is mimicked at that
#'   end (its first or last observed values, stepping over any missing
#'   among them), and those hidden values form a group of their own ("end gaps")
#'   whose factor applies to the series' end gaps: on the first or last
#'   5-20% of 19 of R's series, 90% intervals covered 80.8% of the values
#'   6-20 frames from the data raw, 83.1% calibrated with end gaps treated as
#'   the others and 84.3% with their own group (21-60 frames: 83.3%, 84.7%,
#'   86.6%; all values 87.2%, 87.8%, 88.8%;
#'   `bench/results/series_ends_calibrate.md`): a series' past extrapolations
#'   tell only part of how its end will be missed. On top of proper draws,
#'   the default on a series with an end gap since, it took the values 6-20
#'   frames from the data from 85.8% to 88.5% and those 21-60 frames from
#'   86.0% to 89.3% (`bench/results/series_ends_proper.md`). Nor
#'   does it help much on a series of a few dozen frames, which has few
#'   stretches as long as its long gaps to hide: on four such series whose
#'   long gaps the default covered 76-83% it added 0.4-5.5 points
#'   (`bench/results/series_short_calibrated_40reps.md`). Against the raw
#'   intervals by gap-length group on 18 long series (the six above, and
#'   twelve columns of BeijingAir and ETT in two sets of six; five
#'   repetitions each, `bench/results/series_calibration_rules_*.md`), the
#'   mean distance of a group's coverage from the level fell from 0.097-0.127
#'   to 0.021-0.025 at 50%, from 0.014-0.019 to 0.010-0.013 at 90% and from
#'   0.014-0.017 to 0.003 at 99%; at 90%, 4 of 89 groups moved further from
#'   90% by more than one standard error, all gaps of 2-5 values (by 0.8-2.4
#'   points). Shrinking the factors, one pooled factor, or leaving alone the
#'   groups whose miscalibration was within one or two standard errors did
#'   no better. [predict()][predict.ditimpute_series_imputation()] of a
#'   result imputed with `calibrate = TRUE` (a series without gaps too)
#'   calibrates its forecasts by default, on the model's forecasts of the
#'   series' own past rather than on its gaps.
#' @param proper `TRUE` for *proper* multiple imputation (`method = "gp"`):
#'   each sample path is drawn under its own draw of the model's form and
#'   parameters: the form (stationary, level or trend; smooth, seasonal or
#'   cycle) among those fitted with probability its BIC weight, then its
#'   parameters from their approximate sampling distribution (the form's log-parameters
#'   from the normal of the likelihood's curvature, except a cycle's period,
#'   which stays at its fitted value; `Lambda` from an inverse
#'   Wishart; the stationary model's line is integrated out by the smoother
#'   under every draw, universal kriging), so that analyses pooled over the
#'   paths with Rubin's rules ([as_mids()], `mice::pool()`) include the
#'   uncertainty about the parameters. The point is then the mixture's mean
#'   over the draws (on the model's scale) and the intervals are Gaussian
#'   with the mixture's mean and variance (the mixture's own quantiles would
#'   be heavier-tailed). It costs one Kalman smoothing per path. `FALSE`: every path
#'   is drawn under the fitted parameters (see [as_mids()] for when that
#'   matters). `"auto"` (the default): `TRUE` on series of fewer than 60
#'   frames and on series of up to 20,000 frames with an end gap (a
#'   variable's first or last value missing), `FALSE` otherwise and with
#'   `method = "dit"`. On series of a
#'   few dozen frames the fitted form and parameters are uncertain enough
#'   that plug-in intervals are too narrow: 90% intervals covered 65-72% of
#'   Longley's hidden values (16 years) with `proper = FALSE` and 87-89% with
#'   `TRUE`; on a series of 72 frames `TRUE` over-covered (95-96%,
#'   `bench/results/series_proper_short.md`). From 60 to 150 frames neither
#'   is right everywhere: on one interior gap of 6 or 12 frames in nine R
#'   series of 72-150 frames, plug-in intervals covered 87.6% and proper ones
#'   90.5% (geometric mean width 1.126x, MAE 0.997x), by series and gap
#'   length from 73.6% to 97.9% plug-in and 76.4% to 99.3% proper
#'   (`bench/results/series_proper_midlength.md`); give `proper = TRUE` there
#'   when intervals matter more than time (0.49 s a call against 0.32 s).
#'   At a series' ends the model
#'   extrapolates, and how far its intervals reach rests on the form and
#'   parameters: on 114 end gaps of 19 real series proper draws took the 90%
#'   intervals' coverage 6-20 frames from the data from 80.8% to 85.8% and
#'   at 21-60 frames from 83.3% to 86.0%, with the same MAE
#'   (`bench/results/series_ends_proper.md`); between observed values they
#'   change little (`bench/results/series_fresh_datasets_gp_proper.md`). Each
#'   proper path costs a Kalman smoothing of the whole series (the paths
#'   run side by side on `threads`: 1.95-2.02x faster on 2 threads than one
#'   after another, `bench/results/series_proper_paths.md`), hence the
#'   bound; it grows with the variables too, and a single missing first or
#'   last value is an end gap: on a few thousand frames of a dozen
#'   variables, two of them missing only in the first frame, the default
#'   can take several times as long as `proper = FALSE` for intervals that
#'   hardly differ; on long series the paths dominate (a review: 100 proper
#'   paths of 35,064 hours x 3 variables took 178 s on one loaded core, the
#'   fit 12 s, plug-in paths under a second;
#'   `bench/results/reviews_2026-12-07_session75.md`). Give `proper = FALSE`
#'   where an end gap is only a frame or two and time matters. What the draws cannot repair
#'   is a model that does not fit the series: on series simulated from the
#'   fitted models of nine real series of 40-50 frames, the default draws'
#'   90% intervals covered 89.7% of long gaps (plug-in 86.1%), on the real
#'   series 85.2%, and 76% on the first 40 years of sunspots, whose spread
#'   grows with their level (`bench/results/series_short_simulated.md`).
#' @param separate Which variables get a model of their own (`method =
#'   "gp"`): `"auto"` (the default), every variable of which the others
#'   explain under 5% of the one-step changes beyond chance (see Details, "Several
#'   variables"; it costs one more fit of the remaining variables when one is
#'   split off, and a fit of each variable split off: on 2,160 hours of three
#'   BeijingAir variables, split into three groups, `impute_series()` took
#'   27.7 s against 6.7 s with `"none"`, for an MAE of 7.83 against 7.87,
#'   `bench/results/reviews_2026-12-07_session80.md`); `"none"`, one form for
#'   all variables (faster; it warns, naming any variable the others barely
#'   explain); `"all"`, each variable
#'   on its own; or the names of the variables to model each on its own (the
#'   rest together).
#' @param dit Options of `method = "dit"`, a list with any of `H` (window
#'   length, default `max(2 period, 16)`), `width`, `depth`, `heads` (the
#'   network, default 64, 2, 4), `steps` (training steps, default 800),
#'   `batch_size` (32), `sample_steps` (sampler steps, 20) and `time_limit`
#'   (seconds of training at most, the step count still capping it; default
#'   none: a run cut by time is not repeatable step for step; it bounds the
#'   training only: drawing the paths follows, 92 s for 100 paths of a year
#'   of 11 hourly variables on one loaded core after 19 s of training in a
#'   review, `bench/results/reviews_2026-12-07_session75.md`). The defaults
#'   train in about 7 s on a 150 x 4 series on one idle core (a minute or
#'   more on a loaded machine); the structural GP still imputes better on
#'   the series measured (`bench/results/dit_series_defaults.md`; see
#'   [dit_fit()]).
#' @param seed Optional seed; without one [set.seed()] makes results repeatable.
#' @param threads CPU threads (default: the process's budget, see [threads]: option `ditimpute.threads`, `DITIMPUTE_THREADS`, 1 in a worker or when busy cores would make spinning threads collide, else all cores).
#' @param progress Report each stage as it starts and its time when it ends
#'   (the fit and the choice of its form, the sample paths, the calibration;
#'   with `method = "dit"`, [dit_fit()]'s progress bar of the training), as
#'   messages: on by default in an interactive session (off while knitr
#'   renders a document, from a console too), where a long
#'   multivariate series takes minutes (12 hourly variables over a year: 134 s
#'   on one core, `bench/results/series_many_variables.md`).
#' @param ... Nothing: a name here is an input error (a misspelled argument
#'   would otherwise run with the default).
#' @return An object of class `ditimpute_series_imputation`, which is also a
#'   `ditimpute_imputation` of one `T x d` sequence: `point` (the completed
#'   values), `lower`, `upper` (`NA` on observed entries), `samples` (a list
#'   holding the `n_samples x m` joint draws of the missing entries, columns
#'   named `"variable[frame]"`,
#'   frame-major), `radius` (an L2 region over all missing entries: the
#'   `ceiling((Z + 1) level)`-th smallest distance of the draws to `point`),
#'   `model` (a `ditimpute_series_model`: the chosen form, its parameters,
#'   `Lambda`, the transform and the candidates; [logLik()] works on it;
#'   when variables were separated, a `ditimpute_series_model_set` whose
#'   `parts` are the groups' models, `groups` their columns; it keeps a
#'   copy of the series' values, 8 bytes a value, which `model =` checks a
#'   later `x` against),
#'   `record` (a data frame of the imputed entries: time, variable, estimate,
#'   lower, upper) and `gaps` (one row per run of missing values).
#'   [completed_series()] gives the completed series in the class of `x`;
#'   [completions()], [coverage()] and [imputation_metrics()] work on it;
#'   `print()`, `summary()`, `plot()` and `as.data.frame()` too (`summary()`
#'   also checks the model's residuals: Ljung-Box, errors beyond 3 sds, and
#'   the first value after each gap, where a level that moved inside the gap
#'   shows if the move was large beside the model's forecast over it; see
#'   [residuals.ditimpute_series_imputation()]). An observed value whose
#'   standardised one-step error exceeds 20 (a spike, a sensor fault) is
#'   named in a warning (class `ditimpute_warning_outlier`): the model fits
#'   it as noise, which widens every interval of its variable. On 55 real
#'   series nobody tuned for the largest error was 14.6; one hourly
#'   temperature of 999 gave 37.5 (`bench/results/series_outlier_errors.md`).
#'   The errors are on the model's scale: a spike that by itself puts a
#'   positive variable on a log scale (`transform = "auto"`) is shrunk by it
#'   and can go unsaid, as can a variable with a point mass at its smallest
#'   value (a quarter of its values or more: hourly rainfall, whose
#'   downpours were 31-42 sds out on four of BeijingAir's stations, and are real). [calibrate()]
#'   on it self-calibrates its intervals. With `method =
#'   "dit"`, `model` is a `ditimpute_series_dit_model` holding the trained
#'   DiT (`dit`).
#' @seealso [completed_series()], [gp_smooth()] for a given kernel, [gp_fit()]
#'   for windows of a fixed length.
#' @examples
#' y <- datasets::co2
#' y[c(30:40, 200:229)] <- NA
#' imp <- impute_series(y, n_samples = 50, seed = 1)
#' imp
#' summary(imp)
#' head(imp$record)
#' co2_filled <- completed_series(imp)
#' # the same fitted model at 80%, with more sample paths: no refit
#' imp80 <- impute_series(y, model = imp, level = 0.8, n_samples = 200, seed = 1)
#' # approval ratings (%): imputations and intervals stay within 0-100
#' pres <- impute_series(datasets::presidents, n_samples = 50, seed = 1, bounds = c(0, 100))
#' pres$model
#' # yearly counts with zeros: non-negative imputations and intervals
#' disc <- datasets::discoveries
#' disc[c(20:28, 70:75)] <- NA
#' impute_series(disc, n_samples = 50, seed = 1, bounds = c(0, Inf))
#' # yearly sunspots: an 11-year cycle that no calendar gives; the default
#' # weighs it against the smooth kernel on hidden gaps (see the model's print)
#' spots <- datasets::sunspot.year
#' spots[c(100:115, 200:212)] <- NA
#' auto <- impute_series(spots, n_samples = 50, seed = 1, bounds = c(0, Inf))
#' auto$model
#' \donttest{
#' # or ask for the cycle
#' cyc <- impute_series(spots, n_samples = 50, seed = 1, kernel = "cycle", bounds = c(0, Inf))
#' }
#' @export
impute_series <- function(x, method = c("gp", "dit"), level = 0.95, n_samples = 100, period = NULL,
                          model = c("auto", "level", "trend", "stationary"), kernel = c("auto", "seasonal", "smooth", "cycle"),
                          transform = c("auto", "boxcox", "log", "none"), bounds = NULL, truth = NULL, fit_frames = 6000,
                          ridge = 1e-2,
                          calibrate = FALSE, proper = "auto", separate = "auto", dit = list(), seed = NULL, threads = NULL,
                          time = NULL, progress = interactive() && !isTRUE(getOption("knitr.in.progress")), ...) {
  check_dots(environment(), "impute_series()")
  # Settings of one method given with the other are errors (below); missing()
  # is reliable only before the arguments are checked and reassigned.
  gp_only <- c(model = !missing(model), kernel = !missing(kernel), fit_frames = !missing(fit_frames),
               ridge = !missing(ridge))
  dit_given <- !missing(dit)
  # A fitted model to impute x with, neither fitted nor trained again
  # (series_reused_model()); the settings of a fit are then its own.
  reuse <- series_reused_model(model)
  if (!is.null(reuse)) {
    fit_settings <- c(period = !missing(period), kernel = !missing(kernel), transform = !missing(transform),
                      bounds = !missing(bounds), fit_frames = !missing(fit_frames), ridge = !missing(ridge),
                      separate = !missing(separate), dit = dit_given)
    if (any(fit_settings)) {
      abort_input(names(fit_settings)[fit_settings][1],
                  paste("sets how a model is fitted, and `model` is a fitted one, which keeps its own settings: drop it,",
                        "or fit anew without a fitted `model`."))
    }
    reused_method <- if (inherits(reuse, "ditimpute_series_dit_model")) "dit" else "gp"
    if (!missing(method) && !identical(check_string(method, c("gp", "dit")), reused_method)) {
      abort_input("method", sprintf("is \"%s\", and `model` is a fitted method = \"%s\" model.",
                                    check_string(method, c("gp", "dit")), reused_method))
    }
    method <- reused_method
    transform <- reuse$settings$transform
    separate <- "auto"  # checked below as given; the model's groups stay its own
    gp_only[] <- FALSE
    dit_given <- FALSE
    model <- "auto"
  }
  # time = columns of a data frame; a data frame's truth is read by column
  # names on x's frames (series_truth_frame()), its own time columns unread
  frame_truth <- is.data.frame(x) && (is.data.frame(truth) || (is.matrix(truth) && !is.null(colnames(truth))))
  if (frame_truth) truth <- as.data.frame(truth)
  x <- frame_time(x, time)
  if (!frame_truth) truth <- frame_time(truth, time, "truth")
  method <- check_string(method, c("gp", "dit"))
  level <- check_level(level)
  n_samples <- check_count(n_samples, min = 20)
  model_arg <- check_string(model, c("auto", "level", "trend", "stationary"), arg = "model")
  kernel <- check_string(kernel, c("auto", "seasonal", "smooth", "cycle"))
  if (kernel == "cycle" && method == "dit") abort_input("kernel", "\"cycle\" is available for method = \"gp\" only.")
  transform <- check_string(transform, c("auto", "boxcox", "log", "none"))
  fit_frames <- check_count(fit_frames, min = 10)
  ridge <- check_number(ridge, lower = 0, upper = Inf, open = FALSE)
  if (!is.logical(calibrate) || length(calibrate) != 1 || is.na(calibrate)) abort_input("calibrate", "must be TRUE or FALSE.")
  proper <- check_proper(proper, method)  # proper imputation: rpkg/R/proper.R
  seed <- resolve_seed(seed)
  threads <- resolve_threads(threads)
  check_no_nan_inf(x, "x")  # located in x's own form (a vector, ts, matrix or data frame); NA marks missing values
  # columns modelled because named in `separate` or `bounds` (a reused
  # model's variables: it holds `bounds` processed, and `separate` is not given)
  input <- series_input(x, "x", keep = if (!is.null(reuse)) reuse$settings$variables else
    c(if (is.character(separate) && !identical(separate, "auto")) separate, if (is.list(bounds)) names(bounds)))
  v <- input$values
  n_time <- nrow(v); d <- ncol(v)
  if (!is.null(reuse)) series_check_reuse(reuse, v)
  if (method == "gp") {  # the smallest form's parameters per variable, twice (series_candidate_forms())
    smallest <- series_form_df("stationary", "smooth")
    check_series_values(v, "x", 2L * smallest,
                        sprintf(" for method = \"gp\", which fits at least %d parameters per variable", smallest),
                        "drop it or interpolate so short a series, e.g. with stats::approx()")
  } else {
    check_series_values(v, "x")
  }
  proper_asked <- !identical(proper, "auto")  # predict() keeps a choice made here
  if (identical(proper, "auto")) proper <- method == "gp" && series_proper_auto(v)
  period_given <- !is.null(period)
  if (is.null(period)) period <- if (kernel == "cycle") NA_real_ else input$period  # NA: a cycle's start from the data
  period <- if (is.null(period)) 1 else if (kernel == "cycle" && length(period) == 1 && is.na(period)) NA_real_ else
    check_number(period, lower = if (kernel == "cycle") 4 else 1, upper = Inf, open = FALSE)
  if (!is.null(truth)) {
    truth <- if (frame_truth) series_truth_frame(truth, colnames(v), "truth", rlang::current_env(), ref = x) else
      series_input(truth, "truth")$values
    if (!identical(dim(truth), dim(v))) {
      abort_input("truth", sprintf("must have the same shape as x: %d time points x %d variables (%s), not %d x %d.",
                                   nrow(v), ncol(v), paste(colnames(v), collapse = ", "), nrow(truth), ncol(truth)))
    }
  }
  separate <- check_separate(separate, colnames(v))
  bounds <- if (is.null(reuse)) series_bounds(bounds, v) else reuse$settings$bounds  # a reused model's as fitted
  if (!is.null(bounds) && transform %in% c("log", "boxcox") && !anyNA(bounds$lower)) {
    abort_input("transform", sprintf(paste("\"%s\" applies to variables without bounds, and every variable has bounds",
                                           "(bounded variables are modelled on their own bounded scale): drop `transform`,",
                                           "or `bounds` for the variables to transform."), transform))
  }
  if (method == "dit" && n_samples < cpp_min_samples(level)) {  # before minutes of training, not after
    abort_input("n_samples", sprintf(paste("the DiT's intervals and region at level %g come from its sample paths",
                                           "alone and need at least %d of them, not %d."),
                                     level, cpp_min_samples(level), n_samples))
  }
  if (method == "dit" && !identical(separate, "auto")) {
    abort_input("separate", "is available for method = \"gp\" only (the DiT models all variables together).")
  }
  # The structural model's settings, and the DiT's: each is an error with the
  # other method, not silently unused.
  if (method == "dit") {
    if (any(gp_only)) {
      abort_input(names(gp_only)[gp_only][1], paste("sets the structural model of method = \"gp\"; the DiT's settings",
                                                    "go in `dit = list(...)` (see ?impute_series)."))
    }
  } else if (dit_given) {
    abort_input("dit", "holds the DiT's settings, used with method = \"dit\" only.")
  }
  two <- series_two_valued_warning(v, bounds)
  if (!is.null(two)) cli::cli_warn("{two}")
  twins <- series_collinear_warning(v)
  if (!is.null(twins)) cli::cli_warn("{twins}", class = c("ditimpute_warning_collinear", "ditimpute_warning"))
  if (method == "gp" && period_given && kernel == "auto" && period >= 2 && n_time < 2 * period) {
    season <- sprintf(paste("`period` = %g needs two periods of data for a seasonal form; the series has %d frames, so",
                            "no season of that period is fitted."), period, n_time)
    cli::cli_warn("{season}")
  }
  progress <- check_flag(progress, "progress")
  # Each stage a cli step, closed (with its time) by the next one or when
  # this call returns; marked failed where an error stops it.
  step <- function(text) if (progress) cli::cli_progress_step(text, .envir = here)
  here <- environment()
  start <- proc.time()[["elapsed"]]
  if (method == "dit") {
    out <- impute_series_dit(v, level, n_samples, period, dit, seed, threads, transform, bounds, progress = progress,
                             reuse = reuse)
    out$model$seconds <- proc.time()[["elapsed"]] - start
    imp <- new_series_imputation(input, v, out$iv, out$model, level, n_samples, out$win, truth, out$blocks)
    if (calibrate && any(imp$missing)) {
      step("Calibrating the intervals on hidden observed values")
      imp <- series_self_calibrate(imp, level, seed, threads)
    }
    series_result_warnings(v, imp, bounds, transform, call = here)  # as for method = "gp"
    return(imp)
  }
  if (is.null(reuse)) {
    fitted <- series_fit_gp(v, period, model_arg, kernel, transform, bounds, ridge, fit_frames, separate, seed, threads,
                            step, start, call = here)
  } else {
    fitted <- reuse
    fitted$reused <- TRUE
  }
  step(drawing_step_text(n_samples, sum(is.na(v)), proper, nrow(v)))
  iv <- series_smoothness_advice((if (proper) series_proper_intervals else series_model_intervals)(fitted, v, level,
                                                                                                   n_samples, seed, threads))
  fitted$proper <- proper
  fitted$proper_asked <- proper_asked
  fitted$calibrate_asked <- calibrate  # predict(calibrate = "auto") follows it
  fitted$seconds <- proc.time()[["elapsed"]] - start
  out <- new_series_imputation(input, v, iv, fitted, level, n_samples, NULL, truth)
  series_zero_width_check(out)
  if (calibrate && any(out$missing)) {
    step("Calibrating the intervals on hidden observed values")
    out <- series_self_calibrate(out, level, seed, threads)
  }
  series_result_warnings(v, out, bounds, transform, call = here)
  out
}

# impute_series(method = "gp")'s fit: every group of variables fitted and
# its form chosen (fit_series_groups()), with the fit's warnings; `step()`
# reports each further group's fit. The model keeps the frames and
# variables it was fitted on and the settings of the fit that the
# imputation needs again when the model is reused (series_reused_model()).
series_fit_gp <- function(v, period, model_arg, kernel, transform, bounds, ridge, fit_frames, separate, seed, threads,
                          step, start, call = rlang::caller_env()) {
  step(sprintf("Fitting and choosing the model: %s variable%s x %s frames",
               ncol(v), if (ncol(v) == 1) "" else "s", format(nrow(v), big.mark = ",")))
  # every further fit of a group (variables split off, the rest refitted) its
  # own stage (a review: one line for 2-3 minutes on 11 variables)
  n_fits <- 0L
  fitted <- series_smoothness_advice(fit_series_groups(colnames(v), separate, function(cols) {
    n_fits <<- n_fits + 1L
    if (n_fits > 1L || length(cols) < ncol(v)) step(fitting_step_text(colnames(v)[cols], nrow(v)))
    fit_series_model(v[, cols, drop = FALSE], period, model_arg, kernel, transform, ridge, fit_frames, threads,
                     bounds = bounds, seed = sub_seed(seed, 11), call = call)
  }), call = call)
  fitted$fit_seconds <- proc.time()[["elapsed"]] - start
  fitted$settings <- series_fit_settings(v, transform, bounds)
  lone <- series_lone_warning(fitted)
  if (!is.null(lone)) cli::cli_warn("{lone}")
  # Many variables in one model over few frames: their cross-variable
  # covariance (d (d + 1) / 2 parameters) rests on fewer frames than twice
  # its size, and the intervals are noise (ChickWeight wide, 10 or 20 chicks
  # over 12 weighings in one model: 90% intervals covered 25-70%,
  # bench/results/series_wide_panel.md).
  parts <- if (inherits(fitted, "ditimpute_series_model_set")) fitted$parts else list(fitted)
  for (p in parts) {
    d_p <- ncol(p$Lambda)
    if (d_p > 1 && d_p > p$nobs / d_p / 2) {
      cli::cli_warn(c(sprintf("%d variables share one model with about %d observed values each: their cross-variable covariance matrix (%d entries) rests on too few frames, and the intervals are unreliable.",
                              d_p, as.integer(round(p$nobs / d_p)), as.integer(d_p * (d_p + 1) / 2)),
                      i = "Model them apart (separate = \"all\"), or impute fewer variables at once."),
                    class = c("ditimpute_warning_parameters", "ditimpute_warning"))
      break
    }
  }
  warn_fit_stretch(fitted, v)
  fitted
}

# What a fitted series model keeps of its fit for a later impute_series(x,
# model = ): the frames and variables, the `transform` and `bounds` asked
# (the result's warnings depend on them) and the values it was fitted on.
series_fit_settings <- function(v, transform, bounds) {
  list(n_time = nrow(v), variables = colnames(v), transform = transform, bounds = bounds, values = unname(v))
}

# impute_series(model = ): a fitted model (an earlier result of
# impute_series(), or its `$model`) to impute x with, or NULL for one of the
# strings that name the class to fit.
series_reused_model <- function(model, call = rlang::caller_env()) {
  classes <- c("auto", "level", "trend", "stationary")
  if (is.character(model) && (length(model) != 1 || model %in% classes)) return(NULL)  # checked as a class later
  if (inherits(model, "ditimpute_imputation")) model <- model$model
  kinds <- c("ditimpute_series_model", "ditimpute_series_model_set", "ditimpute_series_dit_model")
  if (!inherits(model, kinds)) {
    abort_input("model", paste("must be \"auto\", \"level\", \"trend\" or \"stationary\", or a fitted model to impute",
                               paste0("with: an earlier result of impute_series() or its `$model`",
                                      if (is.character(model) && length(model) == 1 && !is.na(model))
                                        sprintf(" (not \"%s\").", model) else ".")), call = call)
  }
  if (is.null(model$settings)) {
    abort_input("model", "is a fitted model from an older version of ditimpute, which did not keep its settings: fit it anew.",
                call = call)
  }
  model
}

# A reused model imputes the series it was fitted on: the same variables
# and frames (its trend, centre and scale, and a structural model's
# parameters, belong to those frames), with values hidden or filled in. A
# value observed both then and now must be the same: other values (the
# series times 1,000, or another series of its shape) were imputed on the
# fitted series' scale without a word (a DiT's 1,775 among observed values
# near 2e6; a review). A value filled in must suit the model's scale: within
# its bounds, positive on a log or Box-Cox scale (else the core met NaNs).
series_check_reuse <- function(model, v, call = rlang::caller_env()) {
  st <- model$settings
  if (!identical(colnames(v), st$variables)) {
    abort_input("x", sprintf("has the variables %s; the fitted `model` has %s (a fitted model imputes the series it was fitted on).",
                             paste(colnames(v), collapse = ", "), paste(st$variables, collapse = ", ")), call = call)
  }
  if (nrow(v) != st$n_time) {
    abort_input("x", sprintf(paste("has %s frames; the fitted `model` was fitted on %s (a fitted model imputes the series",
                                   "it was fitted on: its trend and level belong to those frames)."),
                             format(nrow(v), big.mark = ","), format(st$n_time, big.mark = ",")), call = call)
  }
  both <- !is.na(v) & !is.na(st$values)
  moved <- both & abs(v - st$values) > 1e-10 * pmax(abs(v), abs(st$values), 1e-300)
  if (any(moved)) {
    k <- which(moved, arr.ind = TRUE)[1, ]
    abort_input("x", sprintf(paste("differs from the series the fitted `model` was fitted on at %s (the first: frame %d of",
                                   "\"%s\", %s against %s). A fitted model imputes its own series again, with values hidden",
                                   "or filled in; for other values, fit anew without `model`."),
                             plural(sum(moved), "observed value"), k[[1]], colnames(v)[k[[2]]],
                             format(v[k[[1]], k[[2]]], digits = 15), format(st$values[k[[1]], k[[2]]], digits = 15)),
                call = call)
  }
  tf <- model$transform
  for (j in seq_len(ncol(v))) {
    new <- v[!is.na(v[, j]) & is.na(st$values[, j]), j]
    if (!length(new)) next
    lo <- tf$lower[[j]]; hi <- tf$upper[[j]]
    if (!is.na(lo) && (min(new) < lo || max(new) > hi)) {
      abort_input("x", sprintf("has values filled in for variable \"%s\" from %s to %s, outside the bounds [%s, %s] the fitted `model` has.",
                               colnames(v)[j], format(min(new)), format(max(new)), format(lo), format(hi)), call = call)
    }
    if (!is.na(tf$lambda[[j]]) && min(new) <= 0) {
      abort_input("x", sprintf(paste("has values filled in for variable \"%s\" down to %s; the fitted `model` has it on a %s",
                                     "scale, which needs positive values: fit anew without `model`."),
                               colnames(v)[j], format(min(new)), if (tf$lambda[[j]] == 0) "log" else "Box-Cox"),
                  call = call)
    }
  }
  invisible()
}

# What impute_series() says of its result, for either method: imputations
# below 0 of never-negative data, imputations piled below the floor of an
# "auto" Box-Cox scale, observed values far out of line (a GP's one-step
# errors; a DiT has none).
series_result_warnings <- function(v, imp, bounds, transform, call = rlang::caller_env()) {
  neg <- series_negative_warning(v, imp, bounds)  # not for two-valued variables (their own warning before)
  if (!is.null(neg)) cli::cli_warn("{neg}")
  low <- series_floor_warning(v, imp, transform)
  if (!is.null(low)) cli::cli_warn("{low}", class = c("ditimpute_warning_floor", "ditimpute_warning"))
  far <- series_outlier_warning(imp, call = call)
  if (!is.null(far)) cli::cli_warn("{far}", class = c("ditimpute_warning_outlier", "ditimpute_warning"))
  invisible()
}

# ------------------------------------------------------------------ input --

# The values (T x d numeric matrix), time axis, default period and a function
# that rebuilds an object of the input's class from completed values.
series_input <- function(x, arg, call = rlang::caller_env(), keep = character()) {
  if (stats::is.ts(x)) {
    v <- as.matrix(x)
    if (!is.numeric(v)) abort_input(arg, "must hold numbers.", call = call)
    if (is.null(colnames(v))) colnames(v) <- if (ncol(v) == 1) "x" else paste0("V", seq_len(ncol(v)))
    check_column_names(colnames(v), arg, call)
    f <- stats::frequency(x)
    rebuild <- function(vals) {
      out <- x  # keeps tsp, class and names exactly
      storage.mode(out) <- "double"
      out[] <- as.numeric(vals)
      out
    }
    return(list(values = unname_rows(v), time = as.numeric(stats::time(x)), period = if (f >= 2) f else NULL,
                rebuild = rebuild))
  }
  if (inherits(x, "ditimpute_series")) {
    period <- switch(as.character(x$freq), `3600` = 24, `86400` = 7, NULL)
    return(list(values = x$values, time = x$time, period = period,
                rebuild = function(vals) new_series(vals, x$time, x$name, x$freq)))
  }
  if (inherits(x, "zoo")) {  # zoo and xts: not a plain vector or matrix, whatever is.numeric() says
    abort_input(arg, paste("is a zoo/xts series: give it as a data frame with its time index as a column, e.g.",
                           "impute_series(data.frame(time = zoo::index(x), zoo::coredata(x))), or a regular one",
                           "(monthly, quarterly, yearly) as a ts: impute_series(stats::as.ts(x))."), call = call)
  }
  if (is.data.frame(x)) {
    # A column with nothing observed (what read.csv() gives an empty column) is logical NA: a variable with no values.
    empty <- vapply(x, function(col) is.logical(col) && all(is.na(col)), TRUE)
    x[empty] <- lapply(x[empty], as.numeric)
    return(frame_input(x, arg, call, keep))
  }
  if (is.logical(x) && is.null(dim(x)) && length(x) && all(is.na(x))) x <- as.numeric(x)
  if (is.numeric(x) && is.null(dim(x))) {
    if (arg == "x") warn_names_not_times(names(x), call)
    return(list(values = matrix(as.numeric(x), ncol = 1, dimnames = list(NULL, "x")), time = seq_along(x),
                period = NULL, rebuild = function(vals) stats::setNames(as.numeric(vals), names(x))))
  }
  if (is.matrix(x)) {
    if (!is.numeric(x)) abort_input(arg, "must be a numeric matrix; it holds non-numeric values.", call = call)
    v <- x
    if (is.null(colnames(v))) colnames(v) <- paste0("V", seq_len(ncol(v)))
    check_column_names(colnames(v), arg, call)
    storage.mode(v) <- "double"
    return(list(values = unname_rows(v), time = seq_len(nrow(v)), period = NULL,
                rebuild = function(vals) { dimnames(vals) <- dimnames(x); vals }))
  }
  abort_input(arg, "must be a ts, a data frame with a time column, a ditimpute_series, a numeric matrix or a numeric vector.",
              call = call)
}

# A named vector is imputed in the order given, as a series; names that are
# not times in order (precip's cities) say it may be no series at all.
warn_names_not_times <- function(nms, call) {
  if (is.null(nms)) return(invisible())
  num <- suppressWarnings(as.numeric(nms))
  dates <- parse_text_dates(nms)
  ordered <- function(v) !anyNA(v) && all(diff(as.numeric(v)) > 0)
  if (ordered(num) || (!is.null(dates) && ordered(dates))) return(invisible())
  shown <- gsub("([{}])", "\\1\\1", paste0("\"", utils::head(nms, 3), "\"", collapse = ", "))  # cli's braces
  cli::cli_warn(c(sprintf("{.arg x} is a named vector whose names (%s%s) are not times in increasing order.",
                          shown, if (length(nms) > 3) ", ..." else ""),
                  i = paste("Its values are imputed as one series in the order given, each missing value from its",
                            "neighbours; if that order is not time, a series model does not fit them."),
                  i = "Give a ts or a data frame with a time column to state the times, or unname(x) to silence this."),
                call = call)
}

unname_rows <- function(v) {
  rownames(v) <- NULL
  storage.mode(v) <- "double"
  v
}

# A data frame: one Date/POSIXct column is the time axis (equally spaced, or
# consecutive months), or the one impute_series(time = ) built (frame_time());
# every other column must be numeric. What is wrong is said with how to fix it
# (series-forms.R).
frame_input <- function(x, arg, call, keep = character()) {
  given <- attr(x, "ditimpute_time")
  attr(x, "ditimpute_time") <- NULL
  check_column_names(names(x), arg, call)
  if (is.null(given)) {
    is_time <- vapply(x, function(col) inherits(col, c("Date", "POSIXt", "yearmon", "yearqtr")), TRUE)
    if (sum(is_time) != 1) abort_input(arg, frame_time_advice(x, is_time), call = call)
    stamps <- x[[which(is_time)]]
    if (inherits(stamps, c("yearmon", "yearqtr"))) stamps <- zoo_month_dates(stamps)
    given <- list(time = stamps, columns = names(x)[is_time],
                  what = sprintf("the time stamps in column \"%s\"", names(x)[is_time]))
  }
  tcol <- given$columns
  time <- given$time
  col <- if (length(tcol) == 1 && identical(time, x[[tcol]])) tcol else NULL
  others <- setdiff(names(x), tcol)
  # Columns that are not numbers (factors, text, logical) are carried through
  # unchanged, not modelled: covariates for the analyses of as_mids(). Text
  # that reads as dates is an error (a time axis mistaken), as is a missing
  # value in such a column (nothing here imputes categories).
  bad <- others[!vapply(x[others], is.numeric, TRUE)]
  dates <- bad[vapply(bad, function(b) (is.character(x[[b]]) || is.factor(x[[b]])) &&
                        !is.null(parse_text_dates(as.character(x[[b]]))), TRUE)]
  if (length(dates)) abort_input(arg, non_numeric_advice(x, dates[1]), call = call)
  # Numbers read as text (a logger's "-" or "n/a" for a missing reading makes
  # read.csv() keep the column as text): carried through unimputed before.
  for (b in bad) {
    advice <- numbers_as_text_advice(x[[b]], b)
    if (!is.null(advice)) abort_input(arg, advice, call = call)
  }
  # Rows that are several series stacked (long or panel data): the same time
  # stamp once per id. Said before frame_grid() calls them unsorted or duplicated.
  panel_check(x, time, bad, arg, call)
  holes <- bad[vapply(bad, function(b) anyNA(x[[b]]), TRUE)]
  # A label that is the same wherever given (a station's name) and missing
  # only in rows added to complete the time grid: filled with its value
  # (a review: the grid advice's merge() gave BeijingAir's station column
  # NAs, then an error advising mice's "polyreg").
  # Only there: its missing rows are rows where every numeric column is
  # missing too (rows merge() added), and it is given in most rows; a note
  # or flag column, missing where there is nothing to note, stays an error
  # (a code review: one "sensor replaced" was copied into all 200 rows).
  others <- setdiff(others, bad)
  added <- if (length(others)) rowSums(!is.na(x[others])) == 0 else rep(FALSE, nrow(x))
  same <- holes[vapply(holes, function(b) {
    given <- !is.na(x[[b]])
    length(unique(x[[b]][given])) == 1 && sum(given) >= nrow(x) / 2 && all(added[!given])
  }, TRUE)]
  holes <- setdiff(holes, same)
  if (length(holes)) {
    abort_input(arg, sprintf(paste("column \"%s\" is not numeric and has missing values: impute_series() imputes",
                                   "numeric columns and carries the others through; impute it with a model for",
                                   "categories (e.g. mice's \"polyreg\") or drop it."), holes[1]), call = call)
  }
  if (!length(others)) abort_input(arg, "has no numeric column to impute.", call = call)
  # Complete numeric columns that are constant, only restate the time axis
  # (its year, month, day, hour, ...) or count the rows ride along unchanged
  # too: as
  # series they add a variable per column to every fit and can move the
  # model's form (airquality's Month and Day beside a date: Ozone's MAE
  # 1.10x, a trend form instead of a level; BeijingAir's row number No).
  clock <- clock_columns(x[others], time, fill = TRUE)
  rules <- attr(clock, "filled")
  clock <- clock[!clock %in% keep]  # named in separate or bounds: modelled
  # Such columns missing in some rows (rows added by merge() to complete the
  # time grid, as the grid advice says) are filled by their rule: the
  # calendar part from the time stamps, the constant, the even step (a
  # review: after the merge BeijingAir's year, hour and row number No were
  # modelled as series, hour imputed as 2.976).
  filled <- list()
  if (length(clock) && length(clock) < length(others)) {
    filled <- rules[clock]
    if (arg == "x") {
      gaps <- clock[vapply(clock, function(b) anyNA(x[[b]]), TRUE)]
      cli::cli_inform(c(i = cli_braces(paste0("Not modelled, carried through ", if (length(gaps)) "(unchanged where given)" else "unchanged", ": ",
                                   paste(sprintf("%s (%s%s)", clock, names(clock),
                                                 ifelse(clock %in% gaps, "; its missing rows filled by that rule", "")),
                                         collapse = ", "),
                                   ". Drop such columns to silence this, or name one in `separate` or `bounds` ",
                                   "to model it."))))
    }
    others <- setdiff(others, clock)
  }
  for (b in same) filled[[b]] <- replace(x[[b]], is.na(x[[b]]), x[[b]][!is.na(x[[b]])][1])
  if (length(bad) && arg == "x") {
    kinds <- vapply(x[bad], function(v) if (is.factor(v)) "factor" else if (is.character(v)) "text" else class(v)[1], "")
    cli::cli_inform(c(i = cli_braces(paste0("Not numeric, carried through ", if (length(same)) "(not modelled)" else
                                   "unchanged (not modelled; they have no missing value)", ": ",
                                 paste(sprintf("%s (%s%s)", bad, kinds,
                                               ifelse(bad %in% same, sprintf("; one value, \"%s\", filled into its missing rows",
                                                                             vapply(bad, function(b) as.character(x[[b]][!is.na(x[[b]])][1]), "")), "")),
                                       collapse = ", "), "."))))
  }
  for (b in names(filled)) x[[b]] <- filled[[b]]
  period <- NULL
  months <- calendar_step(time)
  if (!is.null(months)) {
    period <- if (12 %% months == 0 && months < 12) 12 / months  # months 12, quarters 4, half-years 2; years none
  } else {
    check_month_gaps(time, given$what, col, arg, call)
    step <- frame_grid(time, given$what, col, arg, call)
    if (inherits(time, c("Date", "POSIXt"))) period <- switch(as.character(step), `3600` = 24, `86400` = 7, NULL)
  }
  v <- as.matrix(x[others])
  list(values = unname_rows(v), time = time, period = period,
       rebuild = function(vals) {
         # only the columns with missing values change: a complete column
         # comes back as it was, an integer one as integer (a review: all
         # came back double)
         out <- x
         for (k in which(vapply(x[others], anyNA, TRUE))) out[[others[k]]] <- unname(vals[, k])
         out
       })
}

# The progress stage of fitting one group of variables (after the first fit of all):
# its names, at most three, for cli's one line.
fitting_step_text <- function(names, n_time) {
  shown <- if (length(names) > 3) sprintf("%s and %d more", paste(names[1:3], collapse = ", "), length(names) - 3) else
    paste(names, collapse = ", ")
  sprintf("Fitting %s on its own: %s (%s frames)", if (length(names) == 1) "a variable" else "a group", cli_braces(shown),
          format(n_time, big.mark = ","))
}

# The progress stage of drawing the paths (both methods).
drawing_step_text <- function(n_samples, n_missing, proper = FALSE, n_time = NA) {
  # proper draws cost a smoothing of the whole series per path (a review: 100
  # paths of 35,064 x 3 took 178 s behind a bare "Drawing 100 sample paths",
  # plug-in ones 0.4-0.8 s); short enough for cli's one line
  out <- sprintf("Drawing %s %spath%s of %s missing value%s", format(n_samples, big.mark = ","),
                 if (proper) "proper " else "sample ", if (n_samples == 1) "" else "s", format(n_missing, big.mark = ","),
                 if (n_missing == 1) "" else "s")
  if (proper) out <- sprintf("%s (each smooths %s frames)", out, format(n_time, big.mark = ","))
  out
}

# Text for cli's messages with the data's own braces doubled: a value or
# name holding "{" was read as a cli expression and failed (a code review:
# a station "site {A}").
cli_braces <- function(text) gsub("([{}])", "\\1\\1", text)

# Names that select one column each: a duplicated name (cbind() of two
# stations' data frames) left the second column unimputed; an empty one
# failed inside `[.data.frame`.
check_column_names <- function(nms, arg, call) {
  empty <- which(is.na(nms) | !nzchar(trimws(nms)))
  if (length(empty)) {
    abort_input(arg, sprintf("column %d has no name: name every column (e.g. names(x) <- make.names(names(x), unique = TRUE)).",
                             empty[1]), call = call)
  }
  dup <- which(duplicated(nms))
  if (length(dup)) {
    first <- match(nms[dup[1]], nms)
    abort_input(arg, sprintf("columns %d and %d are both named \"%s\": give every column its own name (e.g. names(x) <- make.unique(names(x))).",
                             first, dup[1], nms[dup[1]]), call = call)
  }
}

# A text or factor column most of whose entries are numbers: the advice to
# convert it, or NULL.
numbers_as_text_advice <- function(v, col) {
  if (!(is.character(v) || is.factor(v))) return(NULL)
  v <- trimws(as.character(v))
  given <- !is.na(v) & nzchar(v)
  num <- text_numbers(v)
  if (sum(given) < 2 || mean(!is.na(num[given])) < 0.5) return(NULL)
  odd <- which(given & is.na(num))
  # Every entry given and a number, with at most 12 distinct values (a month,
  # a weekday, a quarter) or written as a code with a leading zero ("00501"):
  # a label, carried through (a review: a factor station code was refused as
  # numbers). Numbers read as text have more values, or entries missing (NA
  # or blank), and stay this error (a code review: a 15-valued temperature
  # and blanks had slipped through).
  if (all(given) && !length(odd) &&
      (length(unique(v)) <= 12 || any(grepl("^0[0-9]", v)))) return(NULL)
  words <- unique(v[odd])
  # as.numeric() reads hexadecimal ("0x1A" is 26): the advice must not turn such an entry into a reading (a review)
  hex <- any(grepl("^[+-]?0[xX]", v[odd]))
  sprintf(paste0("column \"%s\" holds numbers as text%s: convert it, e.g. %sx$%s <- suppressWarnings(as.numeric(x$%s)) ",
                 "(such entries become NA, to be imputed), or drop it."),
          col, if (length(odd)) sprintf(" (%s in %s, not a number)", paste0("\"", utils::head(words, 3), "\"", collapse = ", "),
                                       plural(length(odd), "row")) else "",
          if (hex) sprintf("x$%s[grepl(\"^[+-]?0[xX]\", x$%s)] <- NA; ", col, col) else "", col, col)
}

# Long (panel) data: time stamps repeated, and a non-numeric column under
# which each stamp appears once per value: several series stacked.
panel_check <- function(x, time, candidates, arg, call) {
  if (!anyDuplicated(time)) return(invisible())
  key <- as.numeric(if (inherits(time, "POSIXt")) as.POSIXct(time) else time)
  for (b in candidates) {
    id <- as.character(x[[b]])
    if (anyNA(id) || length(unique(id)) < 2) next
    if (!anyDuplicated(data.frame(id, key))) {
      ids <- unique(id)
      abort_input(arg, sprintf(paste0("holds several series stacked in its rows: each time stamp appears once per value ",
                                      "of column \"%s\" (%s). Impute each on its own, e.g. lapply(split(x, x$%s), impute_series), ",
                                      "or put them side by side, one column per %s (e.g. with stats::reshape() or ",
                                      "tidyr::pivot_wider()), to impute them together."),
                               b, paste0(paste0("\"", utils::head(ids, 3), "\"", collapse = ", "), if (length(ids) > 3) ", ..." else ""),
                               b, b), call = call)
    }
  }
  invisible()
}

# The columns of `df` (numeric) that are constant, restate
# the time axis `time` (a calendar part that varies over it) or step evenly
# (a row number, a dose schedule: deterministic, and a model of it fails):
# named by what each is ("the month", ...), the value the column's name.
clock_columns <- function(df, time, fill = FALSE) {
  parts <- list()
  if (inherits(time, c("Date", "POSIXt")) && !anyNA(time)) {
    lt <- as.POSIXlt(time)
    parts <- list("the year" = lt$year + 1900, "the month" = lt$mon + 1, "the quarter" = lt$mon %/% 3 + 1,
                  "the day of the month" = lt$mday, "the day of the year" = lt$yday + 1, "the weekday" = lt$wday,
                  "the weekday" = ifelse(lt$wday == 0, 7, lt$wday), "the hour" = lt$hour)
  }
  # a calendar part that varies over the data (a constant column is
  # carried through as constant, whatever its value); the year, quarter or
  # month that does not (the year of a month's data) names a column only
  # where the column has missing values, which a constant may not have (a
  # zero column is no daily series' hour: those parts are never 0)
  varies <- vapply(parts, function(p) length(unique(p)) > 1, TRUE)
  coarse <- names(parts) %in% c("the year", "the quarter", "the month")
  # A part constant over the data names only a column named for it (a code
  # review: a 0/1 flag of 1s with a gap, in January's data, became "the month").
  named_as <- function(b, part) {
    key <- c("the year" = "year|^yr", "the quarter" = "quarter|qtr", "the month" = "month|^mon$|^mo$")[[part]]
    grepl(key, b, ignore.case = TRUE)
  }
  # Judged on the rows where a column is given (at least 3, and at least
  # half of them): a column missing where rows were added to complete the
  # grid is the same column. With fill = TRUE each such column comes back
  # complete by its rule (attribute "filled"). A constant with missing
  # values stays a variable (a rain gauge that read 0 wherever it read: not
  # filled with 0 unasked, see check_series_values()).
  rule <- function(col, b) {
    ok <- which(!is.na(col))
    complete <- length(ok) == length(col)
    if (length(ok) < 3 || length(ok) < length(col) / 2) return(NULL)
    y <- col[ok]
    if (complete && length(unique(y)) == 1) {
      return(list(what = "constant: nothing to impute or model", value = rep(y[1], length(col))))
    }
    hit <- vapply(seq_along(parts), function(k) {
      (varies[k] || (coarse[k] && !complete && named_as(b, names(parts)[k]))) && all(y == parts[[k]][ok])
    }, TRUE)
    if (any(hit)) return(list(what = names(parts)[which(hit)[1]], value = parts[[which(hit)[1]]]))
    if (length(unique(y)) == 1) return(NULL)
    slope <- diff(y) / diff(ok)
    if (all(abs(slope - slope[1]) <= 1e-12 * max(1, abs(slope[1])))) {
      return(list(what = "steps evenly: a row count or a schedule", value = y[1] + slope[1] * (seq_along(col) - ok[1])))
    }
    NULL
  }
  rules <- Map(rule, df, names(df))
  keep <- !vapply(rules, is.null, TRUE)
  out <- stats::setNames(names(df)[keep], vapply(rules[keep], `[[`, "", "what"))
  if (fill) {
    attr(out, "filled") <- stats::setNames(lapply(names(df)[keep], function(b) {
      col <- df[[b]]
      value <- rules[[b]]$value
      col[is.na(col)] <- if (is.integer(col) && all(value == round(value))) as.integer(value[is.na(col)]) else value[is.na(col)]
      col
    }), names(df)[keep])
  }
  out
}

# Calendar stamps: Date/POSIXct time stamps all on one day of the month, or
# all on the last day of their month, at one time of day -> their month
# numbers (12 year + month), else NULL.
calendar_months <- function(time) {
  if (!inherits(time, c("Date", "POSIXt")) || anyNA(time) || length(time) < 2) return(NULL)
  lt <- as.POSIXlt(time)
  if (length(unique(lt$hour * 3600 + lt$min * 60 + lt$sec)) != 1) return(NULL)
  next_day <- as.POSIXlt(as.Date(sprintf("%04d-%02d-%02d", lt$year + 1900, lt$mon + 1, lt$mday)) + 1)
  month_end <- all(next_day$mday == 1)
  if (length(unique(lt$mday)) != 1 && !month_end) return(NULL)
  12 * lt$year + lt$mon
}

# The step in months of calendar stamps that run a whole number of months
# apart, always the same (monthly, quarterly, yearly data, at the start, on
# one day or at the end of the month), or NULL when they do not (then
# check_month_gaps() and frame_grid() say what is wrong, or the stamps are
# equally spaced in time anyway).
calendar_step <- function(time) {
  m <- calendar_months(time)
  if (is.null(m)) return(NULL)
  dm <- diff(m)
  secs <- diff(as.numeric(as.POSIXct(time)))
  if (dm[1] >= 1 && all(dm == dm[1]) && any(secs != secs[1])) dm[1] else NULL
}

# A warning (or NULL) naming the variables with missing entries whose
# observed values take exactly two values: a Gaussian model imputes such an
# indicator on a continuous scale (bench/results/series_fresh_multi_2026-12-02.md:
# beaver2's 0/1 activity).
# A variable given bounds is left out: the user chose a bounded continuous
# model for it (a code review: the warning named bounds = c(0, Inf) to a
# rainfall that had them).
series_two_valued_warning <- function(v, bounds = NULL) {
  two <- lapply(seq_len(ncol(v)), function(j) {
    if (!is.null(bounds) && (!is.na(bounds$lower[[j]]) || !is.na(bounds$upper[[j]]))) return(NULL)
    seen <- unique(v[!is.na(v[, j]), j])
    if (anyNA(v[, j]) && length(seen) == 2) sort(seen) else NULL
  })
  hit <- which(!vapply(two, is.null, TRUE))
  if (!length(hit)) return(NULL)
  one <- length(hit) == 1
  # 0 and one positive value other than 1: an amount in a dry spell (rainfall), which a
  # review found better served by bounds than by a model for categories
  amount <- vapply(two[hit], function(u) u[1] == 0 && u[2] > 0 && u[2] != 1, TRUE)  # 0/1: an indicator
  sprintf(paste0("%s %s only two values where observed: %s imputed on a continuous scale, with imputations and ",
                 "bounds between or beyond %s two values. Round the imputations, or impute %s with a model for ",
                 "categories (e.g. mice's \"logreg\")%s."),
          if (one) "Variable" else "Variables",
          paste0(paste(sprintf("\"%s\" (%s and %s)", colnames(v)[hit], vapply(two[hit], function(u) format(u[1]), ""),
                               vapply(two[hit], function(u) format(u[2]), "")), collapse = ", "),
                 if (one) " takes" else " take"),
          if (one) "it is" else "they are", if (one) "its" else "their", if (one) "it" else "them",
          if (any(amount)) sprintf("; if %s an amount that is often 0 (rainfall in a dry spell), give it bounds = c(0, Inf) instead",
                                   paste(sprintf("\"%s\" is", colnames(v)[hit][amount]), collapse = " and ")) else "")
}

# A warning (or NULL) naming pairs of variables, one of them with missing
# values, that are copies (equal) or exact linear functions of each other
# wherever both are observed (at least 10 frames): the model imputes one from
# the other as a relation with noise (its Lambda carries a small ridge), so
# its intervals there are far wider than the exact relation allows (a review:
# a duplicated column imputed from its twin with intervals 0.86 wide where the
# truth was known exactly; the model said the twin explained 97.8%).
series_collinear_warning <- function(v) {
  d <- ncol(v)
  if (d < 2) return(NULL)
  miss <- colSums(is.na(v)) > 0
  if (!any(miss)) return(NULL)
  r <- suppressWarnings(stats::cor(v, use = "pairwise.complete.obs"))
  both <- crossprod(!is.na(v))  # frames where both are observed
  hit <- which(upper.tri(r) & !is.na(r) & abs(r) > 1 - 1e-10 & both >= 10 & outer(miss, miss, "|"), arr.ind = TRUE)
  if (!nrow(hit)) return(NULL)
  pairs <- vapply(seq_len(min(nrow(hit), 3)), function(k) {
    i <- hit[k, 1]; j <- hit[k, 2]
    ok <- !is.na(v[, i]) & !is.na(v[, j])
    same <- isTRUE(all.equal(v[ok, i], v[ok, j], tolerance = 1e-12, check.attributes = FALSE))
    sprintf("\"%s\" and \"%s\" (%s)", colnames(v)[i], colnames(v)[j], if (same) "equal" else "exactly linear")
  }, "")
  sprintf(paste("%s %s where both are observed: each is imputed from the other where only one is missing, with",
                "intervals for a relation with noise, far wider than an exact one allows. If one is a copy or a sum",
                "of others, leave it out and compute it from the imputed ones."),
          paste0(paste(pairs, collapse = ", "), if (nrow(hit) > 3) sprintf(" and %d more pairs", nrow(hit) - 3) else ""),
          if (nrow(hit) == 1) "are copies or exact linear functions of each other" else
            "are pairs of copies or exact linear functions of each other")
}

# A warning (or NULL) naming the variables without bounds that are never
# negative where observed (wind speeds, counts, sunspot numbers) but got a
# lower interval end (so perhaps an imputation too) below 0 on the data's
# own scale. Not for a variable with two observed values (an indicator:
# series_two_valued_warning() names it).
series_negative_warning <- function(v, imp, bounds, what = "imputed values") {
  hit <- which(vapply(seq_len(ncol(v)), function(j) {
    seen <- v[!is.na(v[, j]), j]
    miss <- imp$missing[, j]
    any(miss) && length(unique(seen)) > 2 && min(seen) >= 0 && (is.null(bounds) || is.na(bounds$lower[[j]])) &&
      min(imp$lower[miss, j]) < 0
  }, TRUE))
  if (!length(hit)) return(NULL)
  nm <- colnames(v)[hit]
  count <- vapply(hit, function(j) sum(imp$lower[imp$missing[, j], j] < 0), 0L)
  one <- length(hit) == 1
  sprintf(paste0("%s never negative where observed, but %s ", what, " %s a lower interval end below 0 ",
                 "(a model on the data's own scale). If %s cannot be negative, bounds = %s keeps imputations, draws and ",
                 "intervals at or above 0 (see ?impute_series, \"Non-negative data with zeros\"); if %s can (a temperature ",
                 "in degrees Celsius, a change), the intervals are right as they are."),
          paste0(if (one) "Variable " else "Variables ", paste(sprintf("\"%s\"", nm), collapse = ", "), if (one) " is" else " are"),
          paste(format(count, big.mark = ","), collapse = ", "), if (one && count == 1) "has" else "have",
          if (one) "it" else "they",
          if (ncol(v) == 1) "c(0, Inf)" else
            sprintf("list(%s)", paste(sprintf("%s = c(0, Inf)", ifelse(make.names(nm) == nm, nm, sprintf("`%s`", nm))),
                                      collapse = ", ")),
          if (one) "it" else "they")
}

# transform = "auto" puts a variable on a Box-Cox scale when its observed
# values are all positive and span an order of magnitude, and the scale's
# log tail below the smallest observed value (the floor) keeps every
# imputation and interval end positive. A variable that is positive only
# where it was observed passes that test: hourly temperatures in degrees
# Celsius whose frosty hours are the ones missing (a review, BeijingAir's
# Dongsi TEMP in spring 2015: 87 of 106 imputed values below the smallest
# observed 0.6, none below 0, where 84% of the truth was; 90% intervals
# covering 7.5% against 79.2% with transform = "none"). Under the model a
# gap's values lie below every observed value only rarely, so many
# imputations in the tail say the data may go on below it: said, with the
# remedy, when at least series_floor_share of a variable's imputed values
# (and at least series_floor_min of them) lie below its floor and its
# Box-Cox lambda is at least series_floor_lambda (the changes look additive,
# as a temperature's do: lambda 1.00 there; a concentration's look
# multiplicative, lambda 0-0.3: without this condition a first run of
# bench/series_outlier_errors.R warned on 3 of its 59 real series, O3 and
# SO2 at a detection limit of 2 that 1,000-1,600 of their values sat on;
# with it on none, bench/results/series_outlier_errors.md). Only for a scale that "auto"
# chose ("boxcox" or "log" is the user's word that the data are positive).
# NULL when there is nothing to say.
series_floor_share <- 0.1
series_floor_min <- 3L
series_floor_lambda <- 0.75
series_floor_warning <- function(v, imp, transform) {
  tr <- imp$model$transform
  if (transform != "auto" || is.null(tr$floor)) return(NULL)
  below <- vapply(seq_len(ncol(v)), function(j) {
    miss <- imp$missing[, j]
    if (!any(miss) || is.na(tr$lambda[j]) || is.na(tr$floor[j]) || tr$lambda[j] < series_floor_lambda) return(0L)
    sum(imp$point[miss, j] < tr$floor[j])
  }, 0L)
  share <- below / pmax(1, colSums(imp$missing))
  hit <- which(below >= series_floor_min & share >= series_floor_share)
  if (!length(hit)) return(NULL)
  one <- length(hit) == 1
  sprintf(paste0("%s lie below %s smallest observed value%s (%s), where the Box-Cox scale of transform = \"auto\" ",
                 "continues as a log so that none reaches 0 (the observed values were all positive and spanned an order ",
                 "of magnitude). If %s can be 0 or negative (a temperature in degrees Celsius, a difference), use ",
                 "transform = \"none\"; if not, the scale works as designed."),
          paste(sprintf("%s of the %s imputed values of \"%s\"", format(below[hit], big.mark = ","),
                        format(colSums(imp$missing)[hit], big.mark = ","), colnames(v)[hit]), collapse = " and "),
          if (one) "its" else "their", if (one) "" else "s", paste(signif(tr$floor[hit], 3), collapse = ", "),
          if (one) "it" else "they")
}

# A value far out of line with the rest of its series (a spike, a sensor
# fault, a unit slip) is one observation to the likelihood, but the model
# explains it with a larger noise: one hourly temperature set to 999 in two
# months of BeijingAir's Dongsi TEMP took the nugget's share of the variance
# from its fit to 0.953, the first interval of a gap 200 frames away from
# [5.7, 9.0] to [-36.4, 66.3], and summary()'s count of errors beyond 3 sds
# read 1 (a review). Its standardised one-step error was 37.5. The largest
# on 55 real series nobody tuned for (bench/results/series_outlier_errors.md:
# windows of 5,000 hours of BeijingAir, 4 stations x 9 variables, and 19
# others: ETTh1, sunspot.month, treering, 11 of R's short series) was 14.6
# (Wanliu PM10; 95th percentile 13.2): said above series_outlier_sd, with
# the frames. A PM2.5 reading at 10 times the series' maximum reached 18.2
# and is not said. NULL when there are none (and for a DiT, which has no
# one-step errors).
# Not for a variable with a point mass at its smallest value (a quarter or
# more of its observed values there): an intermittent amount such as hourly
# rainfall, whose downpours are real and lay 31-42 sds out on 4 stations'
# RAIN (a code review found the warning telling users to delete storms;
# with bounds = c(0, Inf), the remedy its other warnings name, at most
# 18.7), or SO2 at its detection limit (9-11).
series_outlier_sd <- 20
series_outlier_warning <- function(imp, call = rlang::caller_env()) {
  if (inherits(imp$model, "ditimpute_series_dit_model")) return(NULL)
  e <- series_innovations(imp$model, imp$x, call = call)
  massed <- vapply(seq_len(ncol(imp$x)), function(j) {
    seen <- imp$x[!imp$missing[, j], j]
    length(seen) > 0 && mean(seen == min(seen)) >= 0.25
  }, TRUE)
  e[, massed] <- NA
  far <- which(!is.na(e) & abs(e) > series_outlier_sd, arr.ind = TRUE)
  if (!nrow(far)) return(NULL)
  far <- far[order(-abs(e[far])), , drop = FALSE]
  shown <- far[seq_len(min(3L, nrow(far))), , drop = FALSE]
  time <- imp$time[shown[, 1]]
  where <- sprintf("\"%s\" at %s (value %s, error %.1f)", colnames(imp$x)[shown[, 2]],
                   if (is.numeric(time)) paste("frame", shown[, 1]) else sprintf("frame %d, %s", shown[, 1], format(time)),
                   format(signif(imp$x[shown], 4)), e[shown])
  sprintf(paste0("%s observed %s standardised one-step error%s beyond %d: %s%s. A value so far from the model's ",
                 "forecast (a spike, a sensor fault, a unit slip) is fitted as noise and widens every interval of its ",
                 "variable; check %s, and set %s to NA if %s an error (residuals(object) gives every error)."),
          format(nrow(far), big.mark = ","), if (nrow(far) == 1) "value has a" else "values have",
          if (nrow(far) == 1) "" else "s", as.integer(series_outlier_sd), paste(where, collapse = "; "),
          if (nrow(far) > 3) sprintf(" (the largest 3 of %d)", nrow(far)) else "",
          if (nrow(far) == 1) "it" else "them", if (nrow(far) == 1) "it" else "them",
          if (nrow(far) == 1) "it is" else "they are")
}

# What the model needs of the values: finite numbers or NA, at least
# `min_obs` observed values per variable (3 for the DiT: a trend and a
# variance; for the structural model twice the parameters per variable of
# its smallest form, `why` saying so), some spread.
check_series_values <- function(v, arg, min_obs = 3L, why = "",
                                remedy = "drop it, impute it separately, or interpolate so short a series, e.g. with stats::approx()",
                                call = rlang::caller_env()) {
  # the first bound met: the method's per-variable minimum when it is higher
  # (a 3-frame series was told 4, then at 4 frames that it needed 8)
  if (nrow(v) < max(4L, min_obs)) {
    abort_input(arg, sprintf("has %d time points; impute_series() needs at least %d%s (interpolate so short a series, e.g. with stats::approx()).",
                             nrow(v), as.integer(max(4L, min_obs)),
                             if (min_obs > 4) sprintf(" observed values a variable%s", why) else ""), call = call)
  }
  check_no_nan_inf(v, arg, call = call)  # impute_series() checked x in the user's own form already (errors.R)
  n_obs <- colSums(!is.na(v))
  if (any(n_obs == 0)) {
    abort_input(arg, sprintf("variable \"%s\" has no observed value: there is nothing to impute it from (drop it).",
                             colnames(v)[which(n_obs == 0)[1]]), call = call)
  }
  if (any(n_obs < min_obs)) {
    j <- which(n_obs < min_obs)[1]
    abort_input(arg, sprintf("variable \"%s\" has %s; each variable needs at least %d%s (%s).",
                             colnames(v)[j], plural(n_obs[[j]], "observed value"), as.integer(min_obs), why, remedy),
                call = call)
  }
  # magnitudes whose squares leave double precision (a user review: values
  # near 1e200 failed inside sample.int(), near 1e-200 were called constant)
  mag <- apply(abs(v), 2, max, na.rm = TRUE)
  odd <- which(mag > 1e150 | (mag > 0 & mag < 1e-150))
  if (length(odd)) {
    j <- odd[1]
    p10 <- floor(log10(mag[[j]]))
    abort_input(arg, sprintf(paste("variable \"%s\" has values of order 1e%d, beyond what the model's arithmetic",
                                   "(their squares) holds in double precision (1e-150 to 1e150): rescale it (multiply",
                                   "by 1e%d) and scale the imputations back."), colnames(v)[j], p10, -p10), call = call)
  }
  spread <- apply(v, 2, stats::sd, na.rm = TRUE)
  if (any(!(spread > 0))) {
    abort_input(arg, sprintf("variable \"%s\" is constant where observed; it has nothing to model: drop it (and fill its gaps with that value if it is known to be constant).",
                             colnames(v)[which(!(spread > 0))[1]]), call = call)
  }
  invisible(v)
}

# A model fitted on a stretch of a longer series (fit_frames) describes the
# rest only where the series keeps its noise and dynamics. Where the one-step
# errors outside the stretch lie on another scale than inside (the ratio of
# their median absolute values beyond 1.5 either way, at least 200 of each),
# a warning that names the variables and the remedy (a user review: a sensor
# whose noise grew fivefold after the quiet stretch the fit took: 90%
# intervals covered 30% of its hidden values, without a word).
warn_fit_stretch <- function(model, v) {
  set <- inherits(model, "ditimpute_series_model_set")
  parts <- if (set) model$parts else list(model)
  groups <- if (set) model$groups else list(seq_len(ncol(v)))
  found <- character()
  ratios <- numeric()
  frames <- NULL
  for (g in seq_along(parts)) {
    p <- parts[[g]]
    if (is.null(p$fit_frames) || p$fit_frames >= nrow(v)) next
    w <- series_innovations(p, v[, groups[[g]], drop = FALSE])
    inside <- p$fit_start + seq_len(p$fit_frames) - 1L
    for (j in seq_along(groups[[g]])) {
      e_in <- abs(w[inside, j])
      e_out <- abs(w[-inside, j])
      e_in <- e_in[!is.na(e_in)]
      e_out <- e_out[!is.na(e_out)]
      if (length(e_in) < 200 || length(e_out) < 200) next
      ratio <- stats::median(e_out) / stats::median(e_in)
      if (ratio > 1.5 || ratio < 1 / 1.5) {
        found <- c(found, sprintf("\"%s\" %.2gx", colnames(v)[groups[[g]][j]], ratio))
        ratios <- c(ratios, ratio)
        frames <- c(p$fit_start, p$fit_start + p$fit_frames - 1L)
      }
    }
  }
  if (!length(found)) return(invisible())
  cli::cli_warn(c(sprintf(paste("The model was fitted on frames %d-%d (fit_frames = %d) of %d, and the series changes",
                                "beyond them: its one-step errors elsewhere are on another scale (%s as large as on",
                                "the fitting stretch), so the intervals there are too %s."),
                          as.integer(frames[1]), as.integer(frames[2]), as.integer(diff(frames) + 1L), nrow(v),
                          paste(found, collapse = ", "),
                          if (all(ratios > 1)) "narrow" else if (all(ratios < 1)) "wide" else "narrow or wide"),
                  i = sprintf("Fit on the whole series (fit_frames = %d: slower) or let calibrate = TRUE correct the intervals.",
                              nrow(v))),
                class = c("ditimpute_warning_fit_stretch", "ditimpute_warning"))
}

# ----------------------------------------------------------------- result --

# impute_series(calibrate = TRUE): calibrate() with its defaults, then
# apply_calibration(); the seconds it took are kept (print() adds them to
# the call's time, which they can exceed: ten rounds of imputation).
series_self_calibrate <- function(imp, level, seed, threads) {
  start <- proc.time()[["elapsed"]]
  out <- apply_calibration(imp, calibrate_series(imp, NULL, level, "auto", 3L, 10L, NULL, sub_seed(seed, 7), threads))
  out$calibration_seconds <- proc.time()[["elapsed"]] - start
  out
}

new_series_imputation <- function(input, v, iv, model, level, n_samples, win, truth, blocks = 1L) {
  n_time <- nrow(v); d <- ncol(v)
  miss <- is.na(v)
  point <- iv$point; lower <- iv$lower; upper <- iv$upper; samples <- iv$samples; ij <- iv$ij
  radius <- NA_real_
  if (nrow(ij)) {
    # Each draw's column names its entry, "variable[frame]", as a forecast's do.
    colnames(samples) <- sprintf("%s[%d]", colnames(v)[ij[, 2]], ij[, 1])
    # The in-sample radius needs ceiling((n + 1) level) <= n paths (99 at
    # level 0.99); with fewer there is no region (the intervals, exact for
    # the GP, are unaffected), not a radius capped at the farthest path.
    dist <- sqrt(rowSums(sweep(samples, 2, point[ij])^2))
    k <- ceiling((n_samples + 1) * level - 1e-12)
    radius <- if (k <= n_samples) sort(dist)[k] else NA_real_
  }
  cases <- list(arr = array(v, c(1L, n_time, d)), single = TRUE, H = n_time, d = d, dimnames = dimnames(v))
  core <- list(point = array(point, c(1L, n_time, d)), lower = array(lower, c(1L, n_time, d)),
               upper = array(upper, c(1L, n_time, d)), radius = radius, samples = list(samples))
  opts <- list(level = level, n_samples = n_samples, median = FALSE)
  label <- if (inherits(model, "ditimpute_series_dit_model")) "DiT series (linear trend, DiT on the series' windows)" else
    sprintf("GP series (%s)", series_model_label(model))
  out <- new_imputation(cases, core, opts, method = label,
                        truth = truth, model = model)
  time <- input$time
  out$time <- time
  out$rebuild <- input$rebuild
  out$window <- win
  out$blocks <- blocks
  out$gaps <- gap_runs(miss, time)
  # The Gaussian law (model's scale) behind the intervals: the exact
  # conditional, or under proper draws the mixture's mean and sd, from which
  # the intervals are made at every level. confint() at another level uses
  # it, not the paths' order statistics (with proper draws it switched to
  # them: a 94.99% interval came out wider than the 95% one, a review).
  if (!is.null(iv$mean) && !inherits(model, "ditimpute_series_dit_model")) {
    out$exact <- list(mean = iv$mean, sd = iv$sd)
  }
  out$record <- if (nrow(ij)) {
    data.frame(time = time[ij[, 1]], frame = ij[, 1], variable = colnames(v)[ij[, 2]], estimate = point[ij],
               lower = lower[ij], upper = upper[ij])
  } else {
    data.frame(time = time[0], frame = integer(), variable = character(), estimate = numeric(),
               lower = numeric(), upper = numeric())
  }
  class(out) <- c("ditimpute_series_imputation", class(out))
  out
}

# One row per run of missing values of a variable.
gap_runs <- function(miss, time) {
  rows <- lapply(seq_len(ncol(miss)), function(j) {
    r <- rle(miss[, j])
    ends <- cumsum(r$lengths)
    starts <- ends - r$lengths + 1
    g <- r$values
    if (!any(g)) return(NULL)
    data.frame(variable = colnames(miss)[j], start = starts[g], end = ends[g], length = r$lengths[g])
  })
  out <- do.call(rbind, rows)
  if (is.null(out)) out <- data.frame(variable = character(), start = integer(), end = integer(), length = integer())
  out
}

#' The completed series of a series imputation
#'
#' Gives the series imputed by [impute_series()] back in the class of its
#' input (a `ts`, a data frame, a [ditimpute_series()], a matrix or a vector),
#' with the point estimates, or the lower or upper interval bounds, or one
#' sample path, in place of the missing values.
#'
#' @param object A result of [impute_series()].
#' @param what `"point"`, `"lower"`, `"upper"` (observed values stay in all
#'   three), or `"sample"`.
#' @param m With `what = "sample"`: which sample path.
#' @return The completed series, in the class of the imputed `x`. Imputed
#'   values are real numbers: an integer column or vector (counts) comes back
#'   as a double one with fractional imputations. Round them in the analysis
#'   if a count model needs it; rounding imputations tends to bias estimates.
#' @examples
#' y <- datasets::Nile
#' y[40:55] <- NA
#' imp <- impute_series(y, n_samples = 20, seed = 1)
#' window(completed_series(imp), 1900, 1930)
#' @export
completed_series <- function(object, what = c("point", "lower", "upper", "sample"), m = 1) {
  if (!inherits(object, "ditimpute_series_imputation")) abort_input("object", "must be a result of impute_series().")
  what <- check_string(what, c("point", "lower", "upper", "sample"))
  vals <- object$point
  miss <- object$missing
  if (what %in% c("lower", "upper")) vals[miss] <- object[[what]][miss]
  if (what == "sample") {
    m <- check_count(m, max = object$n_samples)
    vals <- completion_values(object, m)[[1]]
  }
  object$rebuild(vals)
}

# How a series imputation's intervals were made, for print() and summary():
# the paths' order statistics (DiT), the Gaussian of the proper draws'
# mixture, or the exact conditional law (the paths drawn beside it).
series_interval_text <- function(x) {
  how <- if (inherits(x$model, "ditimpute_series_dit_model")) {
    sprintf("from the order statistics of %d sample paths", as.integer(x$n_samples))
  } else if (isTRUE(x$model$proper)) {
    sprintf("from the mixture of %d proper draws (form and parameters drawn per path)", as.integer(x$n_samples))
  } else {
    sprintf("exact (the fitted model's conditional law; %d sample paths drawn)", as.integer(x$n_samples))
  }
  if (!is.null(x$calibration)) {
    # a review: "then self-calibrated" where no factor was applied (narrowing
    # needs 200 hidden gaps, UKgas had 20) read as if the intervals had moved;
    # the factors applied to the imputed entries decide (another group's
    # factor may be non-zero where no imputed entry falls)
    how <- if (isFALSE(x$calibration_moved)) {
      paste(how, "(self-calibration fitted, but left them unchanged: see calibration$factors)")
    } else {
      paste(how, "then self-calibrated")
    }
  }
  how
}

#' @export
print.ditimpute_series_imputation <- function(x, ...) {
  check_dots(environment(), "print()", also = print_dots)
  print_wrapped(series_imputation_text, x)
}

# Prints f(x)'s lines, each longer than getOption("width") wrapped under its
# own indent (a review: lines of up to 205 characters scrolled sideways in a
# knitted report).
print_wrapped <- function(f, x) {
  lines <- utils::capture.output(f(x))
  width <- getOption("width", 80)
  writeLines(unlist(lapply(lines, function(l) {
    if (nchar(l) <= width) return(l)
    ind <- nchar(l) - nchar(sub("^ +", "", l))
    strwrap(l, width = width, indent = ind, exdent = ind + 2)
  })))
  invisible(x)
}

series_imputation_text <- function(x) {
  n_time <- nrow(x$x); d <- ncol(x$x)
  cat(sprintf("<ditimpute_series_imputation> %s\n", x$method))
  n_gaps <- nrow(x$gaps)
  cat(sprintf("  %d time points x %s; %s\n", n_time, plural(d, "variable"),
              if (n_gaps) sprintf("%s imputed (%.1f%%) in %s, the longest %s", plural(sum(x$missing), "entry"),
                                  100 * mean(x$missing), plural(n_gaps, "gap"), plural(max(x$gaps$length), "frame"))
              else "nothing missing"))
  if (any(x$missing)) {
    # a mean width only in one variable's units
    cat(sprintf("  %g%% per-entry intervals %s%s; observed values unchanged\n", 100 * x$level, series_interval_text(x),
                if (d == 1) sprintf(", mean width %.4g", mean(x$upper - x$lower, na.rm = TRUE)) else
                  " (mean widths per variable: summary())"))
  }
  cal_s <- if (is.null(x$calibration_seconds)) "" else sprintf(", then %.1f s self-calibrating", x$calibration_seconds)
  # a model reused by impute_series(model = ) was not fitted by this call
  fit_s <- sprintf(if (isTRUE(x$model$reused)) "a fitted model reused, not refitted; fitting took %.1f s" else
    "%.1f s fitting", x$model$fit_seconds)
  if (is.null(x$window)) {
    cat(sprintf("  exact Kalman smoothing of the whole series; %.1f s (%s)%s\n", x$model$seconds, fit_s, cal_s))
  } else {
    cat(sprintf("  windows: %d past + %d block + %d future frames (%s imputed); %.1f s (%s)%s\n",
                x$window[["past"]], x$window[["block"]], x$window[["future"]], plural(as.integer(x$blocks), "block"),
                x$model$seconds, fit_s, cal_s))
  }
  print(x$model)
  if (!is.null(x$truth) && any(x$missing)) {
    met <- imputation_metrics(x, by = "all")
    if (ncol(x$x) == 1) {
      cat(sprintf("  against the truth: MAE %.4g, RMSE %.4g, interval coverage %.1f%%\n", met$mae, sqrt(met$mse),
                  100 * met$interval_coverage))
    } else {
      # per variable: a MAE pooled over variables mixed their units (a review:
      # PM2.5, PM10 and NO2 in one figure)
      truth <- matrix(x$truth, nrow(x$x), ncol(x$x))
      per <- vapply(seq_len(ncol(x$x)), function(j) {
        k <- x$missing[, j] & !is.na(truth[, j])
        if (!any(k)) return(NA_character_)
        e <- x$point[k, j] - truth[k, j]
        sprintf("%s MAE %.4g, RMSE %.4g", colnames(x$x)[j], mean(abs(e)), sqrt(mean(e^2)))
      }, "")
      cat(sprintf("  against the truth (each variable in its own units): %s; interval coverage %.1f%% of all\n",
                  paste(per[!is.na(per)], collapse = "; "), 100 * met$interval_coverage))
    }
  }
  invisible(x)
}

#' @export
summary.ditimpute_series_imputation <- function(object, ...) {
  check_dots(environment(), "summary()")
  miss <- object$missing
  vars <- colnames(object$x)
  per_var <- data.frame(variable = vars, missing = colSums(miss),
                        gaps = vapply(vars, function(v) sum(object$gaps$variable == v), 0L),
                        longest_gap = vapply(vars, function(v) max(c(0L, object$gaps$length[object$gaps$variable == v])), 0L),
                        mean_width = vapply(seq_along(vars), function(j) {
                          if (any(miss[, j])) mean(object$upper[miss[, j], j] - object$lower[miss[, j], j]) else NA_real_
                        }, 0), row.names = NULL)
  # A model set (variables in separate groups) keeps each group's choices in its part.
  parts <- object$model$parts
  selection <- if (is.null(parts)) object$model$selection else do.call(rbind, lapply(parts, `[[`, "selection"))
  residuals <- if (inherits(object$model, "ditimpute_series_dit_model")) NULL else series_residual_checks(object)
  structure(list(variables = per_var, candidates = object$model$candidates, selection = selection,
                 residuals = residuals, level = object$level, proper = isTRUE(object$model$proper),
                 n_samples = object$n_samples, intervals = series_interval_text(object), method = object$method),
            class = "summary.ditimpute_series_imputation")
}

# The per-variable table (missing, gaps, longest gap, mean width), as
# print() shows it first: knitr::kable(summary(imp)) in a report.
#' @export
as.data.frame.summary.ditimpute_series_imputation <- function(x, row.names = NULL, optional = FALSE, ...) {
  check_dots(environment(), "as.data.frame()", valid = c("row.names", "optional", "stringsAsFactors"))
  x$variables
}

#' @export
print.summary.ditimpute_series_imputation <- function(x, ...) {
  check_dots(environment(), "print()", also = print_dots)
  writeLines(strwrap(sprintf("Series imputation by %s", x$method), width = getOption("width", 80)))
  cat("\n")
  writeLines(strwrap(sprintf("Per variable (%g%% intervals %s):", 100 * x$level, x$intervals),
                     width = getOption("width", 80)))
  vars <- x$variables
  # to 4 significant digits each (a column printed with common decimals
  # showed 754.176567 beside 1.766955)
  vars$mean_width <- ifelse(is.na(vars$mean_width), "-", formatC(vars$mean_width, digits = 4, format = "fg"))
  print(vars, row.names = FALSE)
  if (!is.null(x$candidates)) {
    cat("\n")
    writeLines(strwrap(paste0("Candidate models (fitted by maximum likelihood; the chosen one has the smallest BIC",
                              if (is.null(x$selection)) "):" else
                                " among the forms of the kernel and model class chosen on hidden gaps, see print(object$model)):"),
                       width = getOption("width", 80)))
    # to fit a console: columns that say nothing for these forms (all NA, or
    # no transform) and AIC left out, likelihoods to one decimal, names shortened
    cand <- x$candidates
    cand <- cand[vapply(cand, function(col) !all(is.na(col)), TRUE)]
    if (length(unique(cand$transform)) == 1) cand$transform <- NULL  # one scale for all: the model's print gives it
    if (!is.null(cand$period)) cand$period <- signif(cand$period, 4)
    cand$AIC <- NULL
    for (k in intersect(c("logLik", "BIC"), names(cand))) cand[[k]] <- round(cand[[k]], 1)
    short <- c(envelope = "env", harmonics = "harm", evaluations = "evals", converged = "conv")
    hit <- names(cand) %in% names(short)
    names(cand)[hit] <- short[names(cand)[hit]]
    # the chosen forms marked by a star in a first column (as TRUE/FALSE in a
    # last one, the table of a model per variable wrapped at 80 columns and
    # printed that column on its own below it)
    if (is.logical(cand$chosen)) cand <- data.frame(` ` = ifelse(cand$chosen, "*", ""), cand[names(cand) != "chosen"],
                                                    check.names = FALSE)
    # a column of TRUE only says less than a word below the table (with three
    # variables in two groups the table was 86 columns wide: a review)
    all_conv <- is.logical(cand$conv) && all(cand$conv %in% TRUE)
    if (all_conv) cand$conv <- NULL
    groups <- unique(cand$variables)
    if (length(groups) > 1) {  # a table per group of variables, under its names
      for (g in groups) {
        cat(g, ":\n", sep = "")
        print(cand[cand$variables == g, names(cand) != "variables", drop = FALSE], row.names = FALSE)
      }
    } else {
      print(cand, row.names = FALSE)
    }
    # the shortened names said (a report writer's review: env and harm unexplained)
    said <- short[short %in% names(cand)]
    writeLines(strwrap(paste0(if (is.null(cand[[" "]])) "" else "* chosen; ",
                              if (length(said)) paste0(paste0(said, ": ", names(said), collapse = ", "), "; ") else "",
                              if (all_conv) "every fit converged; " else "",
                              "every column, AIC among them: object$model$candidates"), width = getOption("width", 80)))
  }
  r <- x$residuals
  if (!is.null(r)) {
    cat("\n")
    writeLines(strwrap(paste("Residual checks on the model's standardised one-step errors (residuals(object)): n of",
                             "them; Ljung-Box p-value at the lag shown (not adjusted for the fitted parameters); how",
                             "many lie beyond 3 sds, and how many a Gaussian would put there (exp); of the gaps inside",
                             "the series, how many are followed by an error beyond 3 sds, and the largest |error|",
                             "after one:"), width = getOption("width", 80)))
    shown <- r
    names(shown) <- c("variable", "n", "lag", "LB p", ">3sd", "exp", "gaps", "gap>3sd", "max gap")
    print(shown, row.names = FALSE)
    # Said only where more gaps are followed by an error beyond 3 sds than
    # chance would give at the 1% level (a long series has thousands of gaps).
    p3 <- 2 * stats::pnorm(-3)
    many <- r$after_gap_over_3sd > stats::qbinom(0.99, r$gaps_inside, p3)
    if (any(many)) {
      shifted <- sum(r$after_gap_over_3sd[many])
      chance <- sum(r$gaps_inside[many]) * p3
      writeLines(strwrap(sprintf(paste("After %s of %s (%s), about %.2g by chance, the next observed value lay more",
                                       "than 3 sds from the model's one-step forecast: the level may have moved inside",
                                       "%s, which the imputation bridges smoothly, with intervals too narrow there (see",
                                       "residuals(object) after the gaps in object$gaps)."),
                                 format(shifted), plural(sum(r$gaps_inside[many]), "gap"),
                                 paste(r$variable[many], collapse = ", "), chance, if (shifted == 1) "it" else "them"),
                         width = getOption("width", 80)))
    }
  }
  invisible(x)
}

# Evaluates `expr` (a fit or imputation of impute_series()); the core's
# failure on a series with next to no noise (the smoother's covariance not
# positive definite: a smooth term with a lengthscale far beyond the frames
# and a nugget at its floor, e.g. c(1:10, NA, 12:30) + sin(1:30)) comes out
# with advice a user of impute_series() can follow (the core's names a
# nugget, which impute_series() does not take).
series_smoothness_advice <- function(expr, call = rlang::caller_env()) {
  tryCatch(expr, ditimpute_error_numeric = function(e) {
    if (!grepl("not positive definite", conditionMessage(e), fixed = TRUE)) stop(e)
    abort_numeric(paste("the series is too smooth for the structural model's arithmetic: a variable moves with",
                        "next to no noise, and the Kalman smoother's covariance lost positive definiteness. A",
                        "deterministic curve is better interpolated (stats::spline(), stats::approx()); for a",
                        "measured series, check that it is not itself an interpolation, or give the model a little",
                        "noise, e.g. x + stats::rnorm(length(x), sd = 1e-4 * stats::sd(x, na.rm = TRUE))."),
                  call = call)
  })
}

# An imputation whose every interval of a variable has next to no width (at
# most 1e-8 of the variable's sd): a curve with no noise at all, such as
# c(1:10, NA, NA, 13:22), which the model fits exactly and imputes with zero
# uncertainty. Issue 27 asks for an error or an interval of honest width,
# never a zero-width one (a user review found them silent); the same advice
# as the smoother's failure on a nearly noiseless curve.
series_zero_width_check <- function(imp, call = rlang::caller_env()) {
  miss <- imp$missing
  for (j in which(colSums(miss) > 0)) {
    w <- (imp$upper - imp$lower)[miss[, j], j]
    s <- stats::sd(imp$x[!miss[, j], j])
    if (all(is.finite(w)) && is.finite(s) && max(w) <= 1e-8 * s) {
      abort_numeric(sprintf(paste("the series is too smooth for the structural model: variable \"%s\" follows its",
                                  "fitted curve with no noise, and its %d imputed value%s would get intervals of zero",
                                  "width (at most %.2g). A deterministic curve is better interpolated (stats::spline(),",
                                  "stats::approx()); for a measured series, check that it is not itself an",
                                  "interpolation, or give the model a little noise, e.g. x + stats::rnorm(length(x), sd",
                                  "= 1e-4 * stats::sd(x, na.rm = TRUE))."),
                            colnames(imp$x)[j], sum(miss[, j]), if (sum(miss[, j]) == 1) "" else "s", max(w)),
                    call = call)
    }
  }
  invisible(imp)
}

# summary()'s residual checks of a GP series imputation, one row per
# variable: the standardised one-step errors counted, a Ljung-Box p-value
# (lag 10, or two periods of a season or cycle, at most a fifth of the
# errors; none under 20 errors), how many lie beyond 3 sds (and how many a Gaussian would put
# there), and, at the first observed value after each gap inside the
# series, how many of those lie beyond 3 sds and the largest |error|.
series_residual_checks <- function(object) {
  w <- series_innovations(object$model, object$x)
  vars <- colnames(object$x)
  period <- series_variable_periods(object$model, length(vars))
  rows <- lapply(seq_along(vars), function(j) {
    e <- w[, j]
    k <- sum(!is.na(e))
    # no test on fewer than 20 errors (its lag would be 1 to 3)
    lag <- if (k < 20) 0L else min(if (is.finite(period[j])) max(10L, round(2 * period[j])) else 10L, floor(k / 5))
    p <- if (lag >= 1) stats::Box.test(e, lag = lag, type = "Ljung-Box")$p.value else NA_real_
    g <- object$gaps[object$gaps$variable == vars[j] & object$gaps$end < nrow(w) & object$gaps$start > 1, , drop = FALSE]
    z <- abs(e[g$end + 1])
    data.frame(variable = vars[j], errors = k, lag = if (lag >= 1) as.integer(lag) else NA_integer_,
               ljung_box_p = signif(p, 3), over_3sd = sum(abs(e) > 3, na.rm = TRUE),
               expected = round(k * 2 * stats::pnorm(-3), 1), gaps_inside = nrow(g),
               after_gap_over_3sd = sum(z > 3, na.rm = TRUE),
               largest_after_gap = if (any(!is.na(z))) round(max(z, na.rm = TRUE), 2) else NA_real_,
               stringsAsFactors = FALSE)
  })
  do.call(rbind, rows)
}

# Each variable's season or cycle period under a fitted model or model set
# (NA where its kernel has neither).
series_variable_periods <- function(model, d) {
  if (inherits(model, "ditimpute_series_model_set")) {
    out <- rep(NA_real_, d)
    for (g in seq_along(model$parts)) out[model$groups[[g]]] <- series_variable_periods(model$parts[[g]], length(model$groups[[g]]))
    return(out)
  }
  rep(if (model$kernel_name %in% c("seasonal", "cycle")) model$period else NA_real_, d)
}

#' @export
as.data.frame.ditimpute_series_imputation <- function(x, row.names = NULL, optional = FALSE, ...) {
  check_dots(environment(), "as.data.frame()", valid = c("row.names", "optional", "stringsAsFactors"))
  x$record
}
