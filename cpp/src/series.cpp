// Whole-series imputation by sequential conditional sampling over blocks, and
// the profile likelihood of the kernel search (see series.hpp).
#include "ditimpute/series.hpp"
#include "gaussian_internal.hpp"

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace ditimpute {

namespace {

// Cholesky with a growing jitter (relative to the mean diagonal): covariances
// of many entries of a smooth kernel are numerically semidefinite.
bool jittered_llt(Matrix S, Eigen::LLT<Matrix>& llt) {
  const double scale = S.diagonal().mean();
  double jitter = 0.0;
  for (int attempt = 0; attempt < 6; ++attempt) {
    if (jitter > 0.0) S.diagonal().array() += jitter;
    llt.compute(S);
    if (llt.info() == Eigen::Success) return true;
    S.diagonal().array() -= jitter;
    jitter = jitter == 0.0 ? 1e-10 * scale : jitter * 10.0;
  }
  return false;
}

// A square root A (A A' = S) of a covariance: Cholesky, else the symmetric
// root with negative eigenvalues (rounding) set to 0.
Matrix psd_root(const Matrix& S) {
  Eigen::LLT<Matrix> llt(S);
  if (llt.info() == Eigen::Success) return llt.matrixL();
  Eigen::SelfAdjointEigenSolver<Matrix> es(S);
  return es.eigenvectors() * es.eigenvalues().cwiseMax(0.0).cwiseSqrt().asDiagonal();
}

// One block: where its window lies and what the draw of its missing entries needs.
struct BlockPlan {
  int k = 0;                      // block number (its seed)
  std::vector<long> miss;         // global vec indices t * d + j of the block's missing entries
  std::vector<long> cond;         // global vec indices of the conditioning entries
  Matrix K;                       // m x o: Sigma_MO Sigma_OO^{-1}
  Matrix root;                    // m x m: a root of Sigma_M|O
};

void plan_block(const RowMatrix& x, const Matrix& Gamma, const Matrix& Lambda, const SeriesOptions& o, int k,
                BlockPlan& p) {
  const int T = static_cast<int>(x.rows()), d = static_cast<int>(x.cols());
  const int b0 = k * o.block, b1 = std::min(T, b0 + o.block);
  const int w0 = std::max(0, b0 - o.past), w1 = std::min(T, b1 + o.future);
  p.k = k;
  p.miss.clear();
  p.cond.clear();
  for (int t = w0; t < w1; ++t)
    for (int j = 0; j < d; ++j) {
      const long id = static_cast<long>(t) * d + j;
      const bool obs = !std::isnan(x(t, j));
      if (t < b0 || obs) p.cond.push_back(id);   // the past: observed or imputed on the path
      else if (t < b1) p.miss.push_back(id);     // missing entries of the future are integrated out
    }
  const int m = static_cast<int>(p.miss.size()), n = static_cast<int>(p.cond.size());
  auto cov = [&](long a, long b) {
    return Gamma(static_cast<int>(a / d) - w0, static_cast<int>(b / d) - w0) * Lambda(a % d, b % d);
  };
  Matrix Smm(m, m), Smo(m, n);
  for (int a = 0; a < m; ++a) {
    for (int c = 0; c <= a; ++c) Smm(a, c) = Smm(c, a) = cov(p.miss[a], p.miss[c]);
    for (int c = 0; c < n; ++c) Smo(a, c) = cov(p.miss[a], p.cond[c]);
  }
  if (n == 0) {
    p.K.resize(m, 0);
    p.root = psd_root(Smm);
    return;
  }
  Matrix Soo(n, n);
  for (int a = 0; a < n; ++a)
    for (int c = 0; c <= a; ++c) Soo(a, c) = Soo(c, a) = cov(p.cond[a], p.cond[c]);
  Eigen::LLT<Matrix> llt;
  if (!jittered_llt(std::move(Soo), llt))
    throw numeric_error("the covariance of block " + std::to_string(k + 1) + "'s conditioning entries is singular.");
  p.K = llt.solve(Smo.transpose()).transpose();
  Matrix C = Smm - p.K * Smo.transpose();
  C = 0.5 * (C + C.transpose());
  p.root = psd_root(C);
}

void check_series_options(const RowMatrix& x, const RowMatrix& mean, const Matrix& Gamma, const Matrix& Lambda,
                          const SeriesOptions& o) {
  const long T = x.rows(), d = x.cols();
  if (T < 1 || d < 1) throw input_error("x", "the series must have at least one frame and one variable.");
  if (mean.rows() != T || mean.cols() != d || !mean.allFinite())
    throw input_error("mean", "the mean must be a finite T x d matrix like x.");
  if (Lambda.rows() != d || Lambda.cols() != d || !Lambda.allFinite())
    throw input_error("Lambda", "Lambda must be a finite d x d matrix.");
  if (Gamma.rows() != Gamma.cols() || !Gamma.allFinite()) throw input_error("Gamma", "Gamma must be finite and square.");
  if (o.block < 1) throw input_error("block", "block must be at least 1 frame.");
  if (o.past < 0) throw input_error("past", "past must be >= 0.");
  if (o.future < 0) throw input_error("future", "future must be >= 0.");
  if (o.past + o.block + o.future > Gamma.rows())
    throw input_error("Gamma", "Gamma must cover past + block + future frames.");
  if (o.n_samples < 1) throw input_error("n_samples", "n_samples must be at least 1.");
  for (long t = 0; t < T; ++t)
    for (long j = 0; j < d; ++j)
      if (!std::isnan(x(t, j)) && !std::isfinite(x(t, j)))
        throw input_error("x", "the series holds an infinite value at frame " + std::to_string(t + 1) + ".");
}

}  // namespace

SeriesImputation impute_series_gp(const RowMatrix& x, const RowMatrix& mean, const Matrix& Gamma,
                                  const Matrix& Lambda, const SeriesOptions& o) {
  check_series_options(x, mean, Gamma, Lambda, o);
  const int T = static_cast<int>(x.rows()), d = static_cast<int>(x.cols());
  const int Z = o.n_samples;
  // Column of each missing entry in the samples (-1 on observed entries).
  std::vector<long> col(static_cast<std::size_t>(T) * d, -1);
  long m_total = 0;
  for (int t = 0; t < T; ++t)
    for (int j = 0; j < d; ++j)
      if (std::isnan(x(t, j))) col[static_cast<std::size_t>(t) * d + j] = m_total++;
  SeriesImputation out;
  out.point = x;
  check_memory(8.0 * (Z + 1.0) * static_cast<double>(m_total), "n_samples",
               "the samples of " + std::to_string(m_total) + " missing entries");
  // Paths 0..Z-1 are the samples, path Z the noise-free mean path.
  Matrix paths = Matrix::Zero(Z + 1, m_total);
  std::vector<int> todo;
  const int n_blocks = (T + o.block - 1) / o.block;
  for (int k = 0; k < n_blocks; ++k) {
    const int b1 = std::min(T, (k + 1) * o.block);
    bool any = false;
    for (int t = k * o.block; t < b1 && !any; ++t)
      for (int j = 0; j < d; ++j) any = any || std::isnan(x(t, j));
    if (any) todo.push_back(k);
  }
  out.blocks = static_cast<int>(todo.size());
  const int threads = o.threads > 0 ? o.threads : 1;
  const int chunk = std::max(4, 4 * threads);
  std::vector<BlockPlan> plans(chunk);
  for (std::size_t c0 = 0; c0 < todo.size(); c0 += chunk) {
    check_cancelled();
    const int nc = static_cast<int>(std::min<std::size_t>(chunk, todo.size() - c0));
    // Factorisations depend on the pattern only, so a chunk of blocks is
    // planned in parallel; the draws then run in block order along each path.
    parallel_for(nc, o.threads, [&](int i) { plan_block(x, Gamma, Lambda, o, todo[c0 + i], plans[i]); });
    for (int i = 0; i < nc; ++i) {
      const BlockPlan& p = plans[i];
      const int m = static_cast<int>(p.miss.size()), n = static_cast<int>(p.cond.size());
      Matrix R(n, Z + 1);  // conditioning residuals, one column per path
      for (int c = 0; c < n; ++c) {
        const long id = p.cond[c];
        const int t = static_cast<int>(id / d), j = static_cast<int>(id % d);
        const double mu = mean(t, j);
        if (col[id] < 0) R.row(c).setConstant(x(t, j) - mu);
        else R.row(c) = paths.col(col[id]).transpose().array() - mu;
      }
      Matrix noise(m, Z + 1);
      Rng rng(case_seed(o.seed, static_cast<std::uint64_t>(p.k)));
      fill_standard_normal(rng, noise.data(), static_cast<std::size_t>(m) * Z);  // columns 0..Z-1
      noise.col(Z).setZero();
      Matrix draw = p.root * noise;
      if (n > 0) draw.noalias() += p.K * R;
      for (int a = 0; a < m; ++a) {
        const long id = p.miss[a];
        const double mu = mean(static_cast<int>(id / d), static_cast<int>(id % d));
        paths.col(col[id]) = draw.row(a).transpose().array() + mu;
      }
    }
  }
  for (int t = 0; t < T; ++t)
    for (int j = 0; j < d; ++j) {
      const long c = col[static_cast<std::size_t>(t) * d + j];
      if (c >= 0) out.point(t, j) = paths(Z, c);
    }
  out.samples = paths.topRows(Z);
  return out;
}

double series_profile_loglik(const Batch& x, const Matrix& Gamma, int threads) {
  if (Gamma.rows() != x.H || Gamma.cols() != x.H) throw input_error("Gamma", "Gamma must be H x H.");
  const int n = x.n, H = x.H, d = x.d;
  // Per (window, variable): 1'G^-1 1, 1'G^-1 y, y'G^-1 y, log|G_oo|, n_obs.
  std::vector<double> stats(static_cast<std::size_t>(n) * d * 5, 0.0);
  parallel_for(n, threads, [&](int i) {
    for (int j = 0; j < d; ++j) {
      std::vector<int> obs;
      for (int h = 0; h < H; ++h)
        if (!std::isnan(x.at(i, h, j))) obs.push_back(h);
      const int k = static_cast<int>(obs.size());
      if (k == 0) continue;
      Matrix G(k, k);
      Vector y(k);
      for (int a = 0; a < k; ++a) {
        y(a) = x.at(i, obs[a], j);
        for (int c = 0; c < k; ++c) G(a, c) = Gamma(obs[a], obs[c]);
      }
      Eigen::LLT<Matrix> llt(G);
      if (llt.info() != Eigen::Success) throw numeric_error("a window's kernel matrix is singular.");
      const Vector one = Vector::Ones(k);
      const Vector Lo = llt.matrixL().solve(one), Ly = llt.matrixL().solve(y);
      double* s = &stats[(static_cast<std::size_t>(i) * d + j) * 5];
      s[0] = Lo.squaredNorm();
      s[1] = Lo.dot(Ly);
      s[2] = Ly.squaredNorm();
      s[3] = 2.0 * llt.matrixLLT().diagonal().array().log().sum();
      s[4] = k;
    }
  });
  double ll = 0.0;
  for (int j = 0; j < d; ++j) {
    double A = 0, B = 0, C = 0, logdet = 0, N = 0;
    for (int i = 0; i < n; ++i) {
      const double* s = &stats[(static_cast<std::size_t>(i) * d + j) * 5];
      A += s[0]; B += s[1]; C += s[2]; logdet += s[3]; N += s[4];
    }
    if (N < 2) throw input_error("x", "variable " + std::to_string(j + 1) + " has fewer than 2 observed values.");
    const double mu = B / A;
    const double s2 = (C - 2.0 * mu * B + mu * mu * A) / N;
    if (!(s2 > 0.0)) throw input_error("x", "variable " + std::to_string(j + 1) + " has no spread.");
    ll += -0.5 * (N * detail::kLog2Pi + logdet + N * std::log(s2) + N);
  }
  return ll;
}

}  // namespace ditimpute
