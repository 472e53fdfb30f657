// The exact conditional of a long series under a Markov kernel by Kalman
// filtering and smoothing over frames (state_space.hpp, cpp/DESIGN.md).
//
// Notation: n = d p state coordinates, component-major (coordinate k of
// component j at j * p + k; the value f_j at j * p). Per frame the forward
// pass keeps only the filtered mean and covariance (packed lower triangle);
// the backward pass recomputes the prediction it needs, so memory is
// H (n (n + 1) / 2 + n) doubles plus the outputs.
#include "ditimpute/state_space.hpp"

#include "ditimpute/gaussian.hpp"

#include "gaussian_internal.hpp"

#include <Eigen/Cholesky>

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace ditimpute {

namespace {

using detail::dims;

// kron(I_d, B) for a p x p block B.
Matrix block_diagonal(const Matrix& B, int d) {
  const int p = static_cast<int>(B.rows());
  Matrix out = Matrix::Zero(static_cast<Eigen::Index>(d) * p, static_cast<Eigen::Index>(d) * p);
  for (int j = 0; j < d; ++j) out.block(j * p, j * p, p, p) = B;
  return out;
}

// A square root B (B B^T = S) of a positive semi-definite S that may be
// singular (a covariance after exact observations): pivoted LDL^T with the
// tiny negative pivots of rounding set to zero.
Matrix psd_sqrt(const Matrix& S) {
  Eigen::LDLT<Matrix> ldlt(S);
  const Vector D = ldlt.vectorD().cwiseMax(0.0).cwiseSqrt();
  Matrix B = Matrix(ldlt.matrixL()) * D.asDiagonal();
  return ldlt.transpositionsP().transpose() * B;
}

Matrix symmetric(const Matrix& S) { return 0.5 * (S + S.transpose()); }

// The transition of the whole state over one gap, cached for regular grids.
struct Transition {
  double delta = -1.0;
  Matrix A, Q;  // n x n
};

// What one frame's entries look like given the values f of the state (d
// components): x_miss = c + M f + eps, eps ~ N(0, R R^T) independent of
// everything observed (R empty without a nugget).
struct FrameReadout {
  std::vector<int> miss, obs;  // variable indices at this frame
  Vector c;
  Matrix M, R;
};

}  // namespace

bool state_space_supported(const Kernel& kernel) {
  return kernel.embedding.kind == Embedding::Kind::index &&
         (kernel.type == KernelType::laplace || kernel.type == KernelType::matern32 ||
          kernel.type == KernelType::matern52);
}

StateSpaceGP::StateSpaceGP(const Kernel& kernel, double nugget, Matrix Lambda, RowMatrix mean, Vector times)
    : kernel_(kernel), nugget_(nugget) {
  if (!state_space_supported(kernel)) {
    const bool emb = kernel.embedding.kind != Embedding::Kind::index;
    throw input_error("kernel", "the state-space (Kalman) path supports the laplace (Matern 1/2), matern32 and "
                                "matern52 kernels over the index embedding, not " +
                                    (emb ? std::string("the sinusoidal embedding") : "the " + to_string(kernel.type) +
                                                                                       " kernel") +
                                    "; use the dense conditional (gp_spec() with impute()) for it.");
  }
  kernel_matrix(kernel, 1);  // validates lengthscale, variance and scale (input_error naming each)
  if (!(std::isfinite(nugget) && nugget >= 0.0)) throw input_error("nugget", "nugget must be a finite number >= 0.");
  L_ = detail::checked_cholesky(Lambda, "Lambda");
  Lambda_ = symmetric(Lambda);
  if (mean.cols() != Lambda_.rows() || mean.rows() < 1)
    throw input_error("mean", "mean must be H x d with d = " + std::to_string(Lambda_.rows()) + " and H >= 1, not " +
                                  dims(mean.rows(), mean.cols()) + ".");
  if (!mean.allFinite()) throw input_error("mean", "mean has non-finite entries (NA, NaN or Inf).");
  mean_ = std::move(mean);
  const int H = static_cast<int>(mean_.rows());
  if (times.size() == 0) {
    times_.resize(H);
    for (int i = 0; i < H; ++i) times_(i) = (i + 1.0) * kernel.embedding.scale;
  } else {
    if (times.size() != H) throw input_error("times", "times must have H = " + std::to_string(H) + " values.");
    for (int i = 0; i < H; ++i)
      if (!std::isfinite(times(i)) || (i > 0 && !(times(i) > times(i - 1))))
        throw input_error("times", "times must be finite and strictly increasing.");
    times_ = std::move(times);
  }
  // Matern nu = p - 1/2: lambda = sqrt(2 nu) / lengthscale; the SDE's
  // companion matrix F has the p-fold eigenvalue -lambda.
  p_ = kernel.type == KernelType::laplace ? 1 : kernel.type == KernelType::matern32 ? 2 : 3;
  lambda_ = std::sqrt(2.0 * p_ - 1.0) / kernel.lengthscale;
  const double s2 = kernel.variance, l2 = lambda_ * lambda_;
  // Pinf = Cov of (f, f', f'') = [k(0), 0, k''(0); 0, -k''(0), 0; k''(0), 0, k''''(0)].
  Pinf_ = Matrix::Zero(p_, p_);
  Pinf_(0, 0) = s2;
  if (p_ == 2) Pinf_(1, 1) = l2 * s2;
  if (p_ == 3) {
    Pinf_(1, 1) = l2 * s2 / 3.0;
    Pinf_(0, 2) = Pinf_(2, 0) = -l2 * s2 / 3.0;
    Pinf_(2, 2) = l2 * l2 * s2;
  }
}

Matrix StateSpaceGP::transition(double delta) const {
  // exp(F delta) = exp(-lambda delta) exp(N delta) with N = F + lambda I
  // nilpotent (N^p = 0): a finite sum. F's last row is -binom(p, k) lambda^(p-k).
  Matrix N = Matrix::Identity(p_, p_) * lambda_;
  for (int k = 0; k + 1 < p_; ++k) N(k, k + 1) = 1.0;
  const double binom[3][3] = {{1, 0, 0}, {1, 2, 0}, {1, 3, 3}};  // binom(p, k), k < p
  for (int k = 0; k < p_; ++k) N(p_ - 1, k) -= binom[p_ - 1][k] * std::pow(lambda_, p_ - k);
  Matrix A = Matrix::Identity(p_, p_), term = Matrix::Identity(p_, p_);
  for (int k = 1; k < p_; ++k) {
    term = term * N * (delta / k);
    A += term;
  }
  return std::exp(-lambda_ * delta) * A;
}

SmoothedConditional StateSpaceGP::conditional(const Mask& mask, const double* x, int Z, Rng& rng) const {
  const int H = this->H(), d = this->d(), p = p_, n = d * p;
  if (mask.H != H || mask.d != d)
    throw input_error("x", "the mask is " + dims(mask.H, mask.d) + ", the process " + dims(H, d) + ".");
  if (Z < 0) throw input_error("n_samples", "the number of draws must be >= 0.");
  SmoothedConditional out;
  out.missing = mask.missing_entries();
  const int m = static_cast<int>(out.missing.size());
  const double tri = n * (n + 1.0) / 2.0;
  check_memory(8.0 * H * (tri + n) + 8.0 * 3.0 * m, "x",
               "the state-space smoother of " + std::to_string(H) + " frames (state dimension " + std::to_string(n) +
                   ")");
  check_memory(8.0 * Z * static_cast<double>(m) + 8.0 * 2.0 * n * Z, "n_samples",
               std::to_string(Z) + " draws of " + std::to_string(m) + " missing entries");
  out.mean.resize(m);
  out.sd.resize(m);
  out.samples.resize(Z, m);
  if (m == 0) return out;

  // Frame t's observed and missing variables, and where its missing entries start.
  auto frame_vars = [&](int t, std::vector<int>& obs, std::vector<int>& miss) {
    obs.clear();
    miss.clear();
    for (int j = 0; j < d; ++j) (mask.is_observed(t, j) ? obs : miss).push_back(j);
  };
  std::vector<int> first_missing(H + 1, 0);
  for (int t = 0; t < H; ++t) {
    int c = 0;
    for (int j = 0; j < d; ++j) c += mask.is_observed(t, j) ? 0 : 1;
    first_missing[t + 1] = first_missing[t] + c;
  }
  auto residual = [&](int t, const std::vector<int>& obs) {
    Vector y(obs.size());
    for (std::size_t i = 0; i < obs.size(); ++i) {
      const double v = x[static_cast<std::size_t>(t) * d + obs[i]];
      if (!std::isfinite(v))
        throw input_error("x", "observed entries must be finite (frame " + std::to_string(t + 1) + ", variable " +
                                   std::to_string(obs[i] + 1) + ").");
      y(i) = v - mean_(t, obs[i]);
    }
    return y;
  };
  std::vector<int> value_rows(d);
  for (int j = 0; j < d; ++j) value_rows[j] = j * p;
  const Matrix Pinf = block_diagonal(Pinf_, d);
  auto step = [&](Transition& tr, double delta) {
    if (delta == tr.delta) return;
    const Matrix A1 = transition(delta);
    tr.delta = delta;
    tr.A = block_diagonal(A1, d);
    tr.Q = block_diagonal(symmetric(Pinf_ - A1 * Pinf_ * A1.transpose()), d);
  };
  auto llt_or_throw = [](const Matrix& S, const char* what) {
    Eigen::LLT<Matrix> llt(S);
    if (llt.info() != Eigen::Success)
      throw numeric_error(std::string("the state-space smoother's ") + what +
                          " is not positive definite (a lengthscale far longer than the frame spacing with no "
                          "nugget: add a small nugget)");
    return llt;
  };

  // ---- forward: Kalman filter, keeping the filtered moments of every frame.
  std::vector<double> store(static_cast<std::size_t>(H) * static_cast<std::size_t>(tri + n));
  const std::size_t stride = static_cast<std::size_t>(tri + n);
  auto save = [&](int t, const Vector& mt, const Matrix& P) {
    double* s = store.data() + t * stride;
    for (int i = 0; i < n; ++i) *s++ = mt(i);
    for (int j = 0; j < n; ++j)
      for (int i = j; i < n; ++i) *s++ = P(i, j);
  };
  auto load = [&](int t, Vector& mt, Matrix& P) {
    const double* s = store.data() + t * stride;
    mt.resize(n);
    P.resize(n, n);
    for (int i = 0; i < n; ++i) mt(i) = *s++;
    for (int j = 0; j < n; ++j)
      for (int i = j; i < n; ++i) P(i, j) = P(j, i) = *s++;
  };
  Transition tr;
  Vector mt = Vector::Zero(n);
  Matrix P = Pinf;
  std::vector<int> obs, miss;
  for (int t = 0; t < H; ++t) {
    if (t > 0) {
      step(tr, times_(t) - times_(t - 1));
      mt = tr.A * mt;
      P = symmetric(tr.A * P * tr.A.transpose() + tr.Q);
    }
    frame_vars(t, obs, miss);
    if (!obs.empty()) {
      // y = L_o f + noise, noise ~ N(0, nugget Lambda_oo); f = the value rows.
      const Vector y = residual(t, obs);
      Matrix Lobs(obs.size(), d);
      for (std::size_t i = 0; i < obs.size(); ++i) Lobs.row(i) = L_.row(obs[i]);
      Matrix Pcols(n, d);  // P(:, value rows)
      for (int j = 0; j < d; ++j) Pcols.col(j) = P.col(value_rows[j]);
      const Matrix PH = Pcols * Lobs.transpose();  // n x o
      Matrix Pvv(d, d);
      for (int j = 0; j < d; ++j) Pvv.row(j) = Pcols.row(value_rows[j]);
      Matrix S = Lobs * Pvv * Lobs.transpose();
      if (nugget_ > 0.0) S += nugget_ * gather(Lambda_, obs, obs);
      const auto llt = llt_or_throw(symmetric(S), "innovation covariance");
      Vector fv(d);
      for (int j = 0; j < d; ++j) fv(j) = mt(value_rows[j]);
      const Matrix KT = llt.solve(PH.transpose());  // o x n, K = PH S^{-1}
      mt += KT.transpose() * (y - Lobs * fv);
      P = symmetric(P - PH * KT);
    }
    save(t, mt, P);
    if ((t & 1023) == 0) check_cancelled();
  }

  // ---- backward: RTS smoother (means, sds) and backward sampling (draws).
  // Each frame's readout of its missing entries from the state's values.
  auto readout = [&](int t) {
    FrameReadout r;
    frame_vars(t, r.obs, r.miss);
    const int mm = static_cast<int>(r.miss.size());
    r.c.resize(mm);
    for (int i = 0; i < mm; ++i) r.c(i) = mean_(t, r.miss[i]);
    r.M.resize(mm, d);
    for (int i = 0; i < mm; ++i) r.M.row(i) = L_.row(r.miss[i]);
    if (nugget_ > 0.0) {
      // The noise n = L e ~ N(0, nugget Lambda): n_miss = G n_obs + eps with
      // G = Lambda_mo Lambda_oo^{-1}, eps ~ N(0, nugget (Lambda_mm - G Lambda_om));
      // n_obs = y_obs - L_o f.
      Matrix Smm = gather(Lambda_, r.miss, r.miss);
      if (!r.obs.empty()) {
        const Matrix Loo = gather(Lambda_, r.obs, r.obs), Lmo = gather(Lambda_, r.miss, r.obs);
        const Eigen::LLT<Matrix> llt(Loo);
        const Matrix G = llt.solve(Lmo.transpose()).transpose();  // mm x o
        Matrix Lobs(r.obs.size(), d);
        for (std::size_t i = 0; i < r.obs.size(); ++i) Lobs.row(i) = L_.row(r.obs[i]);
        r.c += G * residual(t, r.obs);
        r.M -= G * Lobs;
        Smm -= G * Lmo.transpose();
      }
      r.R = llt_or_throw(symmetric(nugget_ * Smm), "nugget part of a frame").matrixL();
    }
    return r;
  };
  auto values = [&](const Vector& v) {
    Vector out(d);
    for (int j = 0; j < d; ++j) out(j) = v(value_rows[j]);
    return out;
  };
  Vector ms, mf;     // smoothed mean of frame t + 1, filtered mean of frame t
  Matrix Ps, Pf;     // the same covariances
  Matrix F;          // n x Z: the draws of the state at frame t + 1, then t
  Matrix noise;
  tr = Transition();
  for (int t = H - 1; t >= 0; --t) {
    load(t, mf, Pf);
    Matrix Bc;  // square root of the backward conditional covariance of the state
    if (t == H - 1) {
      ms = mf;
      Ps = Pf;
      if (Z > 0) Bc = psd_sqrt(Pf);
      if (Z > 0) F = mf.replicate(1, Z);
    } else {
      step(tr, times_(t + 1) - times_(t));
      const Matrix W = tr.A * Pf;  // Cov(s_{t+1}, s_t | y_1:t)
      const Vector mp = tr.A * mf;
      const auto llt = llt_or_throw(symmetric(W * tr.A.transpose() + tr.Q), "predicted covariance");
      const Matrix V = llt.matrixL().solve(W);
      const Matrix J = llt.matrixU().solve(V).transpose();  // Pf A^T Ppred^{-1}
      const Matrix C = symmetric(Pf - V.transpose() * V);  // Cov(s_t | s_{t+1}, y_1:t)
      ms = mf + J * (ms - mp);
      Ps = symmetric(C + J * Ps * J.transpose());
      if (Z > 0) {
        Bc = psd_sqrt(C);
        F = (J * (F.colwise() - mp)).colwise() + mf;
      }
    }
    if (Z > 0) {
      noise.resize(n, Z);
      fill_standard_normal(rng, noise.data(), static_cast<std::size_t>(noise.size()));
      F.noalias() += Bc * noise;
    }
    const int k0 = first_missing[t], mm = first_missing[t + 1] - k0;
    if (mm > 0) {
      const FrameReadout r = readout(t);
      Matrix Pvv(d, d);
      for (int i = 0; i < d; ++i)
        for (int j = 0; j < d; ++j) Pvv(i, j) = Ps(value_rows[i], value_rows[j]);
      out.mean.segment(k0, mm) = r.c + r.M * values(ms);
      Matrix cov = r.M * Pvv * r.M.transpose();
      if (r.R.size() > 0) cov += r.R * r.R.transpose();
      out.sd.segment(k0, mm) = cov.diagonal().cwiseMax(0.0).cwiseSqrt();
      if (Z > 0) {
        Matrix Fv(d, Z);
        for (int j = 0; j < d; ++j) Fv.row(j) = F.row(value_rows[j]);
        Matrix draws = (r.M * Fv).colwise() + r.c;  // mm x Z
        if (r.R.size() > 0) {
          Matrix e(mm, Z);
          fill_standard_normal(rng, e.data(), static_cast<std::size_t>(e.size()));
          draws.noalias() += r.R * e;
        }
        out.samples.middleCols(k0, mm) = draws.transpose();
      }
    }
    if ((t & 1023) == 0) check_cancelled();
  }
  return out;
}

std::vector<GaussianLaw> StateSpaceSampler::draw_and_laws(const Batch& x, const std::vector<Mask>& masks, int Z,
                                                          std::uint64_t seed, double, int threads,
                                                          std::vector<Matrix>& samples) const {
  std::vector<GaussianLaw> out(masks.size());
  samples.assign(masks.size(), Matrix());
  parallel_for(static_cast<int>(masks.size()), threads, [&](int i) {
    Rng rng(case_seed(seed, static_cast<std::uint64_t>(i)));
    SmoothedConditional c = gp_.conditional(masks[i], x.seq(i), Z, rng);
    out[i].mean = std::move(c.mean);
    out[i].sd = std::move(c.sd);
    out[i].radius = std::numeric_limits<double>::quiet_NaN();
    samples[i] = std::move(c.samples);
  });
  return out;
}

std::vector<Matrix> StateSpaceSampler::draw(const Batch& x, const std::vector<Mask>& masks, int Z, std::uint64_t seed,
                                            int threads) const {
  std::vector<Matrix> samples;
  draw_and_laws(x, masks, Z, seed, 0.0, threads, samples);
  return samples;
}

std::vector<GaussianLaw> StateSpaceSampler::laws(const Batch& x, const std::vector<Mask>& masks, double level,
                                                 int threads) const {
  std::vector<Matrix> none;
  return draw_and_laws(x, masks, 0, 0, level, threads, none);
}

}  // namespace ditimpute
