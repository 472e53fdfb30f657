// Structural series models: fit by maximum likelihood through the Kalman
// filter, exact conditionals through the smoother (structural.hpp).
#include "ditimpute/structural.hpp"

#include "ditimpute/common.hpp"

#include <Eigen/Eigenvalues>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

namespace ditimpute {

namespace {

constexpr double kLog2Pi = 1.8378770664093454836;

bool has_level(const StructuralSpec& s) { return s.trend != StructuralSpec::Trend::none; }

bool free_period(const StructuralSpec& s) { return s.seasonal && s.period_max > s.period_min; }

// With a fitted period, from its shortest value: the count must not change
// while the period moves, and no harmonic may pass the Nyquist frequency.
int harmonics_of(const StructuralSpec& s) {
  if (!s.seasonal) return 0;
  const double shortest = free_period(s) ? s.period_min : s.period;
  return s.harmonics > 0 ? s.harmonics : std::max(1, std::min(3, static_cast<int>(std::floor(shortest / 2.0))));
}

// Log scales of the parameters the fit moves, with the bounds that keep the
// filter well conditioned; the smooth term's variance is the unit (the scale
// of each variable is profiled out).
// A parameter moves by the factor exp(step) per unit of the optimiser's
// coordinate: the period's likelihood has a mode at each multiple of a
// cycle, so it moves in small steps from its start (a periodogram peak).
struct Param {
  double StructuralSpec::*field;
  double lo, hi;
  bool relative_to_period = false;
  double step = 1.0;
};

std::vector<Param> params_of(const StructuralSpec& s) {
  std::vector<Param> p;
  // First, so that spec_of() has the new period before the decay, which is relative to it.
  if (free_period(s)) p.push_back({&StructuralSpec::period, s.period_min, s.period_max, false, 0.05});
  p.push_back({&StructuralSpec::nugget, 1e-6, 1e4});
  p.push_back({&StructuralSpec::smooth_lengthscale, 0.3, 1e5});
  if (has_level(s)) p.push_back({&StructuralSpec::level_rate, 1e-10, 1e4});
  if (s.trend == StructuralSpec::Trend::trend) p.push_back({&StructuralSpec::slope_rate, 1e-14, 1e2});
  if (s.seasonal) {
    p.push_back({&StructuralSpec::season_var, 1e-6, 1e4});
    p.push_back({&StructuralSpec::periodic_lengthscale, 0.1, 10.0});
    p.push_back({&StructuralSpec::season_decay, 0.5, 1e4, true});
  }
  return p;
}

Vector theta_of(const StructuralSpec& s, const std::vector<Param>& ps) {
  Vector th(static_cast<Eigen::Index>(ps.size()));
  for (std::size_t i = 0; i < ps.size(); ++i) {
    double v = s.*(ps[i].field);
    if (ps[i].relative_to_period) v /= s.period;
    th(static_cast<Eigen::Index>(i)) = std::log(std::min(std::max(v, ps[i].lo), ps[i].hi)) / ps[i].step;
  }
  return th;
}

StructuralSpec spec_of(StructuralSpec s, const std::vector<Param>& ps, const Vector& th) {
  for (std::size_t i = 0; i < ps.size(); ++i) {
    double v = std::exp(
        std::min(std::max(th(static_cast<Eigen::Index>(i)) * ps[i].step, std::log(ps[i].lo)), std::log(ps[i].hi)));
    if (ps[i].relative_to_period) v *= s.period;
    // exp(log(lo)) can round below lo: the period's bounds are checked exactly (structural_process).
    if (ps[i].field == &StructuralSpec::period) v = std::min(std::max(v, ps[i].lo), ps[i].hi);
    s.*(ps[i].field) = v;
  }
  s.smooth_var = 1.0;
  return s;
}

// Minimises f by Nelder-Mead from x0 (initial steps `step`), restarting once
// from the best point; stops when the simplex's values agree to `tol`
// (relative) or after `max_eval` evaluations.
struct Minimum {
  Vector x;
  double f = 0.0;
  int evaluations = 0;
  bool converged = false;
};

Minimum nelder_mead(const std::function<double(const Vector&)>& f, const Vector& x0, double step, double tol,
                    int max_eval) {
  const int n = static_cast<int>(x0.size());
  Minimum best;
  best.x = x0;
  best.f = f(x0);
  best.evaluations = 1;
  for (int round = 0; round < 2 && best.evaluations < max_eval; ++round) {
    std::vector<Vector> X(n + 1, best.x);
    std::vector<double> F(n + 1, best.f);
    for (int i = 0; i < n; ++i) {
      X[i + 1](i) += step;
      F[i + 1] = f(X[i + 1]);
      ++best.evaluations;
    }
    std::vector<int> order(n + 1);
    bool converged = false;
    while (best.evaluations < max_eval) {
      std::iota(order.begin(), order.end(), 0);
      std::sort(order.begin(), order.end(), [&](int a, int b) { return F[a] < F[b]; });
      const int lo = order[0], hi = order[n], nh = order[n - 1];
      if (std::abs(F[hi] - F[lo]) <= tol * (std::abs(F[lo]) + 1e-10)) {
        converged = true;
        break;
      }
      Vector c = Vector::Zero(n);
      for (int i = 0; i <= n; ++i)
        if (i != hi) c += X[i];
      c /= n;
      const Vector xr = c + (c - X[hi]);
      const double fr = f(xr);
      ++best.evaluations;
      if (fr < F[lo]) {
        const Vector xe = c + 2.0 * (c - X[hi]);
        const double fe = f(xe);
        ++best.evaluations;
        if (fe < fr) {
          X[hi] = xe;
          F[hi] = fe;
        } else {
          X[hi] = xr;
          F[hi] = fr;
        }
      } else if (fr < F[nh]) {
        X[hi] = xr;
        F[hi] = fr;
      } else {
        const bool outside = fr < F[hi];
        const Vector xc = outside ? Vector(c + 0.5 * (xr - c)) : Vector(c + 0.5 * (X[hi] - c));
        const double fc = f(xc);
        ++best.evaluations;
        if (fc < (outside ? fr : F[hi])) {
          X[hi] = xc;
          F[hi] = fc;
        } else {
          for (int i = 0; i <= n; ++i) {
            if (i == lo) continue;
            X[i] = X[lo] + 0.5 * (X[i] - X[lo]);
            F[i] = f(X[i]);
            ++best.evaluations;
          }
        }
      }
    }
    const int arg = static_cast<int>(std::min_element(F.begin(), F.end()) - F.begin());
    if (F[arg] < best.f) {
      best.f = F[arg];
      best.x = X[arg];
    }
    // A converged simplex may have collapsed early: restart once, smaller,
    // from its best point; the fit has converged when the restart does too.
    best.converged = converged;
    if (!converged) break;
    step *= 0.5;
  }
  return best;
}

// One variable of the fitting stretch: its values and mask.
struct Column {
  RowMatrix values;  // T x 1
  Mask mask;
  int n_obs = 0;
};

// Variable j of y over frames [start, start + frames): its values (0 where
// missing), mask and count of observed values.
Column column_of(const RowMatrix& y, int j, int start, int frames) {
  Column c;
  c.values = y.block(start, j, frames, 1);
  c.mask = Mask(frames, 1, true);
  for (int t = 0; t < frames; ++t) {
    const bool obs = !std::isnan(c.values(t, 0));
    c.mask.observed[static_cast<std::size_t>(t)] = obs ? 1 : 0;
    if (!obs) c.values(t, 0) = 0.0;
    c.n_obs += obs ? 1 : 0;
  }
  return c;
}

// The OLS line (intercept, slope per frame) through a variable's observed values.
Eigen::Vector2d line_fit(const RowMatrix& y, int j, int start, int frames) {
  double n = 0, st = 0, sy = 0, stt = 0, sty = 0;
  for (int t = 0; t < frames; ++t) {
    const double v = y(start + t, j);
    if (std::isnan(v)) continue;
    const double tt = start + t;
    n += 1;
    st += tt;
    sy += v;
    stt += tt * tt;
    sty += tt * v;
  }
  Eigen::Vector2d out(0.0, 0.0);
  if (n < 1) return out;
  const double var = stt - st * st / n;
  out(1) = var > 0 ? (sty - st * sy / n) / var : 0.0;
  out(0) = (sy - out(1) * st) / n;
  return out;
}

struct Univariate {
  double loglik = 0.0;  // concentrated over the scale
  double scale2 = 1.0;  // its ML value
  long used = 0;
  RowMatrix innovations;
};

// The concentrated log-likelihood of one variable under the process (scale 1),
// given its first max(condition_on, diffuse count) observed values.
Univariate univariate(const LatentProcess& process, double nugget, const Column& col, const RowMatrix& mean,
                      bool keep_innovations, int condition_on = 0) {
  Univariate u;
  const StateSpaceGP ss(process, nugget, Matrix::Identity(1, 1), mean);
  RowMatrix w;
  long used = 0;
  const double ll1 = ss.log_likelihood(col.mask, col.values.data(), &used, &w, condition_on);
  double quad = 0.0;
  for (Eigen::Index t = 0; t < w.rows(); ++t)
    if (!std::isnan(w(t, 0))) quad += w(t, 0) * w(t, 0);
  u.used = used;
  if (used == 0) return u;
  const double n = static_cast<double>(used);
  const double sum_logF = -2.0 * ll1 - n * kLog2Pi - quad;
  u.scale2 = std::max(quad / n, 1e-300);
  u.loglik = -0.5 * (n * kLog2Pi + sum_logF + n * std::log(u.scale2) + n);
  if (keep_innovations) u.innovations = std::move(w);
  return u;
}

}  // namespace

std::string to_string(StructuralSpec::Trend trend) {
  switch (trend) {
    case StructuralSpec::Trend::none: return "stationary";
    case StructuralSpec::Trend::level: return "level";
    case StructuralSpec::Trend::trend: return "trend";
  }
  return "?";
}

LatentProcess structural_process(const StructuralSpec& s) {
  auto positive = [](double v) { return std::isfinite(v) && v > 0.0; };
  if (!positive(s.smooth_var) || !positive(s.smooth_lengthscale))
    throw input_error("model", "the smooth term needs a finite variance and lengthscale > 0.");
  if (!(std::isfinite(s.nugget) && s.nugget >= 0.0)) throw input_error("model", "the nugget must be finite and >= 0.");
  std::vector<LatentBlock> blocks;
  if (has_level(s)) {
    LatentBlock b;
    b.kind = s.trend == StructuralSpec::Trend::trend ? LatentBlock::Kind::trend : LatentBlock::Kind::level;
    b.rate = s.level_rate;
    b.slope_rate = s.trend == StructuralSpec::Trend::trend ? s.slope_rate : 0.0;
    blocks.push_back(b);
  }
  LatentBlock smooth;
  smooth.kind = LatentBlock::Kind::matern;
  smooth.order = 3;
  smooth.variance = s.smooth_var;
  smooth.lengthscale = s.smooth_lengthscale;
  blocks.push_back(smooth);
  if (s.seasonal) {
    if (!(std::isfinite(s.period) && s.period >= 2.0))
      throw input_error("model", "a season needs a period of at least 2 frames.");
    if (free_period(s) && !(std::isfinite(s.period_max) && s.period_min >= 2.0 && s.period >= s.period_min &&
                            s.period <= s.period_max))
      throw input_error("model", "a fitted period needs bounds of at least 2 frames around its starting value.");
    if (!positive(s.season_var) || !positive(s.periodic_lengthscale) || !positive(s.season_decay))
      throw input_error("model", "the season needs a finite variance, periodic lengthscale and decay > 0.");
    // harmonics: 0 (automatic) or up to the Nyquist frequency of the shortest
    // period (a review: -1 was read as automatic, 100 at period 12 gave a
    // state of 204 with frequencies above Nyquist)
    const int nyquist = static_cast<int>(std::floor((free_period(s) ? s.period_min : s.period) / 2.0));
    if (s.harmonics < 0 || s.harmonics > nyquist)
      throw input_error("model", "a season of period " + std::to_string(static_cast<int>(std::floor(
                                     free_period(s) ? s.period_min : s.period))) +
                                     " holds 0 (automatic) to " + std::to_string(nyquist) + " harmonics, not " +
                                     std::to_string(s.harmonics) + ".");
    const int K = harmonics_of(s);
    // exp(-2 sin^2(pi tau / P) / lp^2) = exp(-z) (I_0(z) + 2 sum_k I_k(z) cos(k w tau)), z = 1 / lp^2:
    // harmonic k has weight 2 exp(-z) I_k(z); the constant I_0 term is left to the level and the mean.
    const double z = 1.0 / (s.periodic_lengthscale * s.periodic_lengthscale);
    std::vector<double> q(static_cast<std::size_t>(K));
    double total = 0.0;
    for (int k = 1; k <= K; ++k) {
      q[static_cast<std::size_t>(k - 1)] = std::max(2.0 * std::exp(-z) * std::cyl_bessel_i(static_cast<double>(k), z), 1e-12);
      total += q[static_cast<std::size_t>(k - 1)];
    }
    for (int k = 1; k <= K; ++k) {
      LatentBlock b;
      b.kind = LatentBlock::Kind::harmonic;
      b.variance = s.season_var * q[static_cast<std::size_t>(k - 1)] / total;
      b.omega = 2.0 * 3.14159265358979323846 * k / s.period;
      b.decay = s.season_decay;
      b.order = s.season_envelope;
      blocks.push_back(b);
    }
  }
  // Diffuse starts: a prior variance far above everything else in the model.
  const double total = s.smooth_var + s.nugget + (s.seasonal ? s.season_var : 0.0) +
                       (has_level(s) ? s.level_rate + s.slope_rate : 0.0);
  return LatentProcess(std::move(blocks), 1e6 * std::max(total, 1.0));
}

int structural_parameter_count(const StructuralSpec& spec) { return static_cast<int>(params_of(spec).size()); }

RowMatrix structural_mean(const StructuralCandidate& c, int T) {
  const int d = static_cast<int>(c.trend.cols());
  RowMatrix mean(T, d);
  for (int t = 0; t < T; ++t)
    for (int j = 0; j < d; ++j) mean(t, j) = c.trend(0, j) + c.trend(1, j) * t;
  return mean;
}

StructuralFit fit_structural(const RowMatrix& y, const StructuralFitOptions& o) {
  const int T = static_cast<int>(y.rows()), d = static_cast<int>(y.cols());
  if (T < 2 || d < 1) throw input_error("x", "a series needs at least 2 frames and 1 variable.");
  if (o.candidates.empty()) throw input_error("model", "no candidate model to fit.");
  if (o.max_frames < 2) throw input_error("max_frames", "must be at least 2.");
  for (Eigen::Index i = 0; i < y.size(); ++i)
    if (std::isinf(y.data()[i])) throw input_error("x", "holds infinite values; use NaN (NA) for missing ones.");
  StructuralFit fit;
  // The stretch of at most max_frames frames with the most observed entries.
  const int frames = std::min(T, o.max_frames);
  std::vector<long> cum(static_cast<std::size_t>(T) + 1, 0);
  for (int t = 0; t < T; ++t) {
    long c = 0;
    for (int j = 0; j < d; ++j) c += std::isnan(y(t, j)) ? 0 : 1;
    cum[static_cast<std::size_t>(t) + 1] = cum[static_cast<std::size_t>(t)] + c;
  }
  int start = 0;
  long most = -1;
  for (int s = 0; s + frames <= T; ++s) {
    const long c = cum[static_cast<std::size_t>(s + frames)] - cum[static_cast<std::size_t>(s)];
    if (c > most) {
      most = c;
      start = s;
    }
  }
  fit.fit_start = start;
  fit.fit_frames = frames;
  std::vector<Column> cols(static_cast<std::size_t>(d));
  for (int j = 0; j < d; ++j) {
    Column& c = cols[static_cast<std::size_t>(j)];
    c = column_of(y, j, start, frames);
    if (c.n_obs < 3)
      throw input_error("x", "variable " + std::to_string(j + 1) + " has " + std::to_string(c.n_obs) +
                                 " observed values in the fitting stretch; each variable needs at least 3.");
  }
  // Each variable's OLS line over the whole series (the stationary model's mean: fitted on the
  // stretch alone, it would be extrapolated over the rest).
  Matrix lines(2, d);
  for (int j = 0; j < d; ++j) lines.col(j) = line_fit(y, j, 0, T);

  // One variable: the candidates run in parallel; several: the variables do.
  const int n_cand = static_cast<int>(o.candidates.size());
  // Every candidate's likelihood is reported given the first `common`
  // observed values of each variable, the most that any candidate's diffuse
  // start conditions on (1 for a level, 2 for a trend): the candidates then
  // score the same values, so their likelihoods and BICs compare, and the
  // comparison does not move with the data's units (with its own diffuse
  // count each, a trend scored one value a variable fewer than a level, and
  // the log-Jacobian of the units, added in R, then favoured the trend on
  // data in large units and the stationary form on small ones). The fits
  // themselves maximise each form's own likelihood.
  int common = 0;
  for (const StructuralSpec& form : o.candidates) common = std::max(common, structural_process(form).diffuse_count());
  const int inner = d == 1 ? 1 : o.threads, outer = d == 1 ? o.threads : 1;
  fit.candidates.assign(static_cast<std::size_t>(n_cand), StructuralCandidate());
  // What the likelihood of a candidate form needs: its parameters and each
  // variable's mean (the stationary model's line; zero otherwise).
  struct Context {
    std::vector<Param> ps;
    bool stationary = false;
    double mean_df = 0.0;
    std::vector<RowMatrix> means;
  };
  auto context_of = [&](const StructuralSpec& form) {
    Context c;
    c.ps = params_of(form);
    c.stationary = form.trend == StructuralSpec::Trend::none;
    const LatentProcess probe = structural_process(form);
    c.mean_df = c.stationary ? 2.0 : static_cast<double>(probe.diffuse_count());
    for (const Column& col : cols)
      if (col.n_obs <= static_cast<int>(c.ps.size()) + c.mean_df + 1)
        throw input_error("x", "a variable has " + std::to_string(col.n_obs) + " observed values, too few for the " +
                                   to_string(form.trend) + " model's " +
                                   std::to_string(static_cast<int>(c.ps.size() + 1 + c.mean_df)) +
                                   " parameters per variable.");
    c.means.assign(static_cast<std::size_t>(d), RowMatrix());
    for (int j = 0; j < d; ++j) {
      c.means[static_cast<std::size_t>(j)] = RowMatrix::Zero(frames, 1);
      if (c.stationary)
        for (int t = 0; t < frames; ++t) c.means[static_cast<std::size_t>(j)](t, 0) = lines(0, j) + lines(1, j) * (start + t);
    }
    return c;
  };
  auto evaluate = [&](const Context& c, const StructuralSpec& s, bool keep, std::vector<Univariate>& out,
                      int condition_on = 0) {
    const LatentProcess proc = structural_process(s);
    out.assign(static_cast<std::size_t>(d), Univariate());
    parallel_for(d, inner, [&](int j) {
      out[static_cast<std::size_t>(j)] = univariate(proc, s.nugget, cols[static_cast<std::size_t>(j)],
                                                    c.means[static_cast<std::size_t>(j)], keep, condition_on);
    });
  };
  // Minimises minus the log-likelihood of the form `base` (whose context is
  // `c`) over its parameters, from the spec `from`.
  auto minimise = [&](const Context& c, const StructuralSpec& base, const StructuralSpec& from) {
    auto objective = [&](const Vector& th) {
      std::vector<Univariate> u;
      try {
        evaluate(c, spec_of(base, c.ps, th), false, u);
      } catch (const numeric_error&) {
        return 1e300;
      }
      double ll = 0.0;
      for (const Univariate& v : u) ll += v.loglik;
      return std::isfinite(ll) ? -ll : 1e300;
    };
    return nelder_mead(objective, theta_of(from, c.ps), 1.0, o.tol, o.max_evaluations);
  };
  // A fitted period is checked against the same form with the period held at
  // its start: started free, the simplex can move the period while the
  // season's other parameters are far from theirs and stop in a worse optimum
  // than the held form's (112.8 log-likelihood units below it on ETTh1's oil
  // temperature, bench/results/series_cycle_two_stage_2026-12-02_one_stage.md).
  // When the held fit is the better, the period is freed from its optimum,
  // which can only improve on it; so the fitted period's likelihood is never
  // below the held form's. (Fitting both stages always, and keeping the
  // better of that and the free fit, cost 2-3 times the evaluations on lynx
  // and the sunspot series for at most 1.1 log-likelihood units; the check
  // costs 1.3-1.9 times the evaluations and, with the held fit a parallel
  // job, 1.04-1.44 times the time of an imputation:
  // bench/results/series_cycle_check.md.) The held form keeps the free one's harmonics
  // (counted from the shortest period searched). A budget of one evaluation
  // evaluates the likelihood at the spec as given (the proper draws'
  // information, rpkg/R/proper.R): no check then.
  auto held_of = [&](const StructuralSpec& form) {
    StructuralSpec held = form;
    held.smooth_var = 1.0;
    held.harmonics = harmonics_of(form);
    held.period_min = held.period_max = 0.0;
    return held;
  };
  auto checked = [&](int ci) {
    return free_period(o.candidates[static_cast<std::size_t>(ci)]) && o.max_evaluations > 1;
  };
  // The fits from the start, all in parallel: job 2 ci fits candidate ci,
  // job 2 ci + 1 its held form (when its period is checked).
  std::vector<int> jobs;
  for (int ci = 0; ci < n_cand; ++ci) {
    jobs.push_back(2 * ci);
    if (checked(ci)) jobs.push_back(2 * ci + 1);
  }
  std::vector<Minimum> first(2 * static_cast<std::size_t>(n_cand));
  parallel_for(static_cast<int>(jobs.size()), outer, [&](int k) {
    const int job = jobs[static_cast<std::size_t>(k)];
    const StructuralSpec& form = o.candidates[static_cast<std::size_t>(job / 2)];
    StructuralSpec start_spec = job % 2 ? held_of(form) : form;
    start_spec.smooth_var = 1.0;
    const StructuralSpec& base = job % 2 ? start_spec : form;
    first[static_cast<std::size_t>(job)] = minimise(context_of(base), base, start_spec);
  });
  parallel_for(n_cand, outer, [&](int ci) {
    const StructuralSpec& form = o.candidates[static_cast<std::size_t>(ci)];
    const Context ctx = context_of(form);
    const std::vector<Param>& ps = ctx.ps;
    const bool stationary = ctx.stationary;
    const double mean_df = ctx.mean_df;
    Minimum m = first[2 * static_cast<std::size_t>(ci)];
    int evaluations = m.evaluations;
    if (checked(ci)) {
      const Minimum& m1 = first[2 * static_cast<std::size_t>(ci) + 1];
      evaluations += m1.evaluations;
      if (m1.f < m.f) {
        const StructuralSpec held = held_of(form);
        StructuralSpec from = spec_of(held, params_of(held), m1.x);
        from.period_min = form.period_min;
        from.period_max = form.period_max;
        m = minimise(ctx, form, from);
        evaluations += m.evaluations;
      }
    }
    StructuralCandidate cand;
    cand.spec = spec_of(form, ps, m.x);
    cand.evaluations = evaluations;
    cand.converged = m.converged;
    std::vector<Univariate> u;
    evaluate(ctx, cand.spec, true, u);
    // Lambda = D R D: scales from the profiles, correlations of the innovations.
    Vector sd(d);
    for (int j = 0; j < d; ++j) sd(j) = std::sqrt(u[static_cast<std::size_t>(j)].scale2);
    Matrix R = Matrix::Identity(d, d);
    for (int a = 0; a < d; ++a)
      for (int b = a + 1; b < d; ++b) {
        double sab = 0, saa = 0, sbb = 0;
        long n = 0;
        for (int t = 0; t < frames; ++t) {
          const double wa = u[static_cast<std::size_t>(a)].innovations(t, 0), wb = u[static_cast<std::size_t>(b)].innovations(t, 0);
          if (std::isnan(wa) || std::isnan(wb)) continue;
          sab += wa * wb;
          saa += wa * wa;
          sbb += wb * wb;
          ++n;
        }
        R(a, b) = R(b, a) = (n >= 3 && saa > 0 && sbb > 0) ? sab / std::sqrt(saa * sbb) : 0.0;
      }
    if (d > 1) {
      Eigen::SelfAdjointEigenSolver<Matrix> es(R);
      const Vector ev = es.eigenvalues().cwiseMax(1e-3);
      R = es.eigenvectors() * ev.asDiagonal() * es.eigenvectors().transpose();
      const Vector s = R.diagonal().cwiseSqrt().cwiseInverse();
      R = s.asDiagonal() * R * s.asDiagonal();
    }
    R.diagonal().array() += o.ridge;
    cand.Lambda = sd.asDiagonal() * R * sd.asDiagonal();
    cand.trend = stationary ? lines : Matrix::Zero(2, d);
    // The joint log-likelihood with the fitted Lambda (the univariate sum for
    // one variable or a state too large to filter jointly).
    const LatentProcess proc = structural_process(cand.spec);
    double ll = 0.0;
    long used = 0;
    if (d == 1 || d * proc.dimension() > kMaxJointState) {
      // u scores the common values already unless the form's own start takes fewer.
      std::vector<Univariate> rescored;
      if (proc.diffuse_count() < common) evaluate(ctx, cand.spec, false, rescored, common);
      for (const Univariate& v : rescored.empty() ? u : rescored) {
        ll += v.loglik;
        used += v.used;
      }
    } else {
      RowMatrix ys = y.block(start, 0, frames, d);
      Mask mask(frames, d, true);
      for (int t = 0; t < frames; ++t)
        for (int j = 0; j < d; ++j) {
          const bool obs = !std::isnan(ys(t, j));
          mask.observed[static_cast<std::size_t>(t) * d + j] = obs ? 1 : 0;
          if (!obs) ys(t, j) = 0.0;
        }
      RowMatrix mean = structural_mean(cand, T).middleRows(start, frames);
      const StateSpaceGP ss(proc, cand.spec.nugget, cand.Lambda, mean);
      ll = ss.log_likelihood(mask, ys.data(), &used, nullptr, common);
    }
    cand.loglik = ll;
    cand.nobs = used;
    cand.df = static_cast<double>(ps.size()) + d + d * (d - 1) / 2.0 + mean_df * d;
    cand.aic = -2.0 * ll + 2.0 * cand.df;
    cand.bic = -2.0 * ll + std::log(static_cast<double>(std::max<long>(used, 1))) * cand.df;
    fit.candidates[static_cast<std::size_t>(ci)] = std::move(cand);
  });
  fit.chosen = 0;
  for (std::size_t i = 1; i < fit.candidates.size(); ++i)
    if (fit.candidates[i].bic < fit.candidates[static_cast<std::size_t>(fit.chosen)].bic) fit.chosen = static_cast<int>(i);
  return fit;
}

namespace {

// Whether d variables under a form of `form_dimension` coordinates are
// smoothed jointly (else one variable at a time, Lambda's off-diagonal
// ignored).
bool joint_smoothing(int d, int form_dimension, int max_joint_state) {
  return d == 1 || d * form_dimension <= max_joint_state;
}

// The conditional of y's missing entries under the latent process `proc`
// with mean path `mean`: the joint smoother when the form's state (of
// `form_dimension` coordinates a variable) is small enough, else each
// variable on its own (Lambda's off-diagonal ignored), merged back in
// frame-major order.
SmoothedConditional smoothed(const RowMatrix& y, const LatentProcess& proc, double nugget, const Matrix& Lambda,
                             const RowMatrix& mean, int form_dimension, int Z, std::uint64_t seed, int threads,
                             int max_joint_state) {
  const int T = static_cast<int>(y.rows()), d = static_cast<int>(y.cols());
  RowMatrix ys = y;
  Mask mask(T, d, true);
  for (int t = 0; t < T; ++t)
    for (int j = 0; j < d; ++j) {
      const bool obs = !std::isnan(ys(t, j));
      mask.observed[static_cast<std::size_t>(t) * d + j] = obs ? 1 : 0;
      if (!obs) ys(t, j) = 0.0;
    }
  if (joint_smoothing(d, form_dimension, max_joint_state)) {
    const StateSpaceGP ss(proc, nugget, Lambda, mean);
    Rng rng(case_seed(seed, 0));
    return ss.conditional(mask, ys.data(), Z, rng);
  }
  std::vector<SmoothedConditional> parts(static_cast<std::size_t>(d));
  parallel_for(d, threads, [&](int j) {
    Mask mj(T, 1, true);
    RowMatrix yj(T, 1);
    for (int t = 0; t < T; ++t) {
      mj.observed[static_cast<std::size_t>(t)] = mask.observed[static_cast<std::size_t>(t) * d + j];
      yj(t, 0) = ys(t, j);
    }
    const StateSpaceGP ss(proc, nugget, Lambda.block(j, j, 1, 1), mean.col(j));
    Rng rng(case_seed(seed, static_cast<std::uint64_t>(j)));
    parts[static_cast<std::size_t>(j)] = ss.conditional(mj, yj.data(), Z, rng);
  });
  SmoothedConditional out;
  out.missing = mask.missing_entries();
  const int m = static_cast<int>(out.missing.size());
  out.mean.resize(m);
  out.sd.resize(m);
  out.samples.resize(Z, m);
  std::vector<std::size_t> next(static_cast<std::size_t>(d), 0);
  for (int k = 0; k < m; ++k) {
    const int j = out.missing[static_cast<std::size_t>(k)] % d;
    const SmoothedConditional& p = parts[static_cast<std::size_t>(j)];
    const std::size_t i = next[static_cast<std::size_t>(j)]++;
    out.mean(k) = p.mean(static_cast<Eigen::Index>(i));
    out.sd(k) = p.sd(static_cast<Eigen::Index>(i));
    if (Z > 0) out.samples.col(k) = p.samples.col(static_cast<Eigen::Index>(i));
  }
  return out;
}

}  // namespace

SmoothedConditional structural_conditional(const RowMatrix& y, const StructuralCandidate& c, int Z, std::uint64_t seed,
                                           int threads, int max_joint_state, bool fixed_line) {
  const int T = static_cast<int>(y.rows()), d = static_cast<int>(y.cols());
  if (c.Lambda.rows() != d || c.trend.cols() != d)
    throw input_error("x", "the series has " + std::to_string(d) + " variables, the model " +
                               std::to_string(c.Lambda.rows()) + ".");
  const LatentProcess proc = structural_process(c.spec);
  const int dim = proc.dimension();
  const bool line = c.spec.trend == StructuralSpec::Trend::none && !fixed_line;
  RowMatrix mean = structural_mean(c, T);
  if (line)
    for (int j = 0; j < d; ++j) {
      const Eigen::Vector2d l = line_fit(y, j, 0, T);
      for (int t = 0; t < T; ++t) mean(t, j) = l(0) + l(1) * t;
    }
  SmoothedConditional plug =
      smoothed(y, proc, c.spec.nugget, c.Lambda, mean, dim, line ? 0 : Z, seed, threads, max_joint_state);
  if (!line) return plug;  // a level or trend (diffuse starts), or the stored line taken as known
  // The stationary form: the imputations are the plug-in ones of the
  // least-squares line through the observed values of y (the fit's line,
  // c.trend, when y is the series it was fitted to; refitted on each version
  // with values hidden, so that the hidden gaps that choose between forms do
  // not score a line fitted to the values they hide: with the fit's line, a
  // hidden stretch at a series' end was extrapolated by a slope that had
  // seen it), with the residuals kriged; the spread adds the line's own
  // uncertainty. With the line's intercept and slope per variable unknown
  // (diffuse states with no noise: universal kriging) the conditional
  // covariance is the plug-in one plus R V R^T, R = X_m - K_mo K_oo^-1 X_o
  // the line's design beyond what the observed values krige, V the
  // generalised least squares line's covariance; it grows with the distance
  // from the observed frames, so the intervals of a gap at an end keep
  // widening as the line is extrapolated, where the plug-in's stopped a few
  // lengthscales out. The sds and the draws' spread are the universal
  // kriging law's, centred on the least-squares imputations: the GLS line's
  // own imputations cost bench/series.R's long gaps in Nile and ldeaths 7.4%
  // and 5.8% more MAE (a GLS line under a misspecified covariance leans on
  // the series' ends; bench/results/series_2026-12-05_gls_line.md). V is the
  // GLS line's, a little below the least-squares line's, which would need
  // the dense covariance of every observed value. The joint smoother's size
  // limit is judged on the form's own state, so that the line does not move
  // a series from joint to per-variable smoothing.
  StructuralSpec spec = c.spec;
  spec.trend = StructuralSpec::Trend::trend;
  spec.level_rate = 0.0;
  spec.slope_rate = 0.0;
  SmoothedConditional uk = smoothed(y, structural_process(spec), c.spec.nugget, c.Lambda, RowMatrix::Zero(T, d), dim, Z,
                                    seed, threads, max_joint_state);
  for (Eigen::Index k = 0; k < uk.samples.cols(); ++k)
    uk.samples.col(k).array() += plug.mean(k) - uk.mean(k);
  uk.mean = plug.mean;
  return uk;
}

RowMatrix structural_innovations(const RowMatrix& y, const StructuralCandidate& c) {
  const int T = static_cast<int>(y.rows()), d = static_cast<int>(y.cols());
  if (c.Lambda.rows() != d || c.trend.cols() != d)
    throw input_error("x", "the series has " + std::to_string(d) + " variables, the model " +
                               std::to_string(c.Lambda.rows()) + ".");
  const LatentProcess proc = structural_process(c.spec);
  const RowMatrix mean = structural_mean(c, T);
  RowMatrix out = RowMatrix::Constant(T, d, std::numeric_limits<double>::quiet_NaN());
  for (int j = 0; j < d; ++j) {
    const Column col = column_of(y, j, 0, T);
    if (col.n_obs == 0) continue;
    const Univariate u = univariate(proc, c.spec.nugget, col, mean.col(j), true);
    if (u.innovations.rows() != T) continue;  // nothing counted beyond the diffuse start
    const double scale = std::sqrt(std::max(c.Lambda(j, j), 1e-300));
    out.col(j) = u.innovations.col(0) / scale;
  }
  return out;
}

std::vector<SmoothedConditional> structural_moments(const std::vector<RowMatrix>& ys,
                                                    const StructuralCandidate& candidate, int threads, bool fixed_line) {
  const int n = static_cast<int>(ys.size());
  std::vector<SmoothedConditional> out(ys.size());
  if (n == 1) {
    out[0] = structural_conditional(ys[0], candidate, 0, 0, threads, kMaxJointState, fixed_line);
    return out;
  }
  parallel_for(n, threads, [&](int i) {
    out[static_cast<std::size_t>(i)] =
        structural_conditional(ys[static_cast<std::size_t>(i)], candidate, 0, 0, 1, kMaxJointState, fixed_line);
  });
  return out;
}

std::vector<SmoothedConditional> structural_paths(const RowMatrix& y,
                                                  const std::vector<StructuralCandidate>& candidates,
                                                  const std::vector<std::uint64_t>& seeds, int threads) {
  if (seeds.size() != candidates.size())
    throw input_error("seeds", "one seed per candidate: " + std::to_string(seeds.size()) + " seeds for " +
                                   std::to_string(candidates.size()) + " candidates.");
  const int n = static_cast<int>(candidates.size());
  std::vector<SmoothedConditional> out(candidates.size());
  if (n == 1) {
    out[0] = structural_conditional(y, candidates[0], 1, seeds[0], threads);
    return out;
  }
  // Each path smooths the whole series under its own parameters (a review's
  // 1,416 x 11 series: 100 paths one after another took 365 s); on several
  // threads they run side by side, each holding a smoother of the whole
  // series at once: as many at a time as the memory limit holds (a review:
  // 20 paths of 3,000 x 11 peaked at 456 MB on one thread, 998 MB on four,
  // which each smoother's own check did not see). A path's smoother is the
  // joint one of d x the form's state, or one variable's at a time.
  const int T = static_cast<int>(y.rows()), d = static_cast<int>(y.cols());
  double per_path = 0.0;
  for (const StructuralCandidate& c : candidates) {
    const int p = structural_process(c.spec).dimension();
    per_path = std::max(per_path, smoother_bytes(T, joint_smoothing(d, p, kMaxJointState) ? d * p : p));
  }
  if (threads <= 0) threads = std::max(1u, std::thread::hardware_concurrency());
  const int fit = static_cast<int>(std::min<double>(threads, std::floor(memory_limit() / std::max(per_path, 1.0))));
  threads = std::max(1, fit);  // one path at a time still gets its own check
  parallel_for(n, threads, [&](int i) {
    check_cancelled();  // between paths (a no-op on workers)
    const std::size_t k = static_cast<std::size_t>(i);
    out[k] = structural_conditional(y, candidates[k], 1, seeds[k], 1);
  });
  return out;
}

}  // namespace ditimpute
