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
#include <Eigen/Eigenvalues>
#include <unsupported/Eigen/KroneckerProduct>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#ifdef __linux__
#include <sys/mman.h>
#endif

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
// singular (a covariance after exact observations): LDL^T in the natural
// order, B = L sqrt(D), where a pivot below 1e-15 of S's largest diagonal
// (zero, or rounding) contributes nothing.
//
// No pivoting, so that B is continuous in S: the same seed gives the same
// draws when S changes in its last bits (the BLAS's summation order varies
// with the load). Eigen's pivoted LDL^T, used before, chose its order by the
// diagonal's size, near ties flipped under 1e-13 relative changes of Lambda,
// and the draws moved by up to 0.31 of their sds (2e-4 now; the continuity
// test in cpp/tests/test_structural.cpp).
//
// A guard for covariances whose rounding errors exceed their entries: a
// backward covariance Pf - V^T V whose Pf holds a diffuse start (1e10 with a
// nugget at its bound) keeps errors of 5e-7 where its exact entries are 0,
// and the pivoted LDL^T divided them by pivots of 1e-24: draws 1e6 sds from
// the mean. A PSD S has factor rows of norm sqrt(S_ii); where a row exceeds
// it by more than rounding, the symmetric square root V sqrt(max(lambda, 0))
// V^T replaces B (its error is the square root of S's).
Matrix psd_sqrt(const Matrix& S) {
  const Eigen::Index n = S.rows();
  const Vector diag = S.diagonal().cwiseMax(0.0);
  const double top = n ? diag.maxCoeff() : 0.0;
  Matrix A = S;  // its lower triangle becomes the Schur complements, then B
  for (Eigen::Index k = 0; k < n; ++k) {
    const Eigen::Index rest = n - k - 1;
    const double pivot = A(k, k);
    if (pivot > 1e-15 * top) {
      const double root = std::sqrt(pivot);
      A.col(k).tail(rest) /= root;
      A.bottomRightCorner(rest, rest).template triangularView<Eigen::Lower>() -=
          A.col(k).tail(rest) * A.col(k).tail(rest).transpose();
      A(k, k) = root;
    } else {
      A.col(k).tail(rest).setZero();
      A(k, k) = 0.0;
    }
  }
  Matrix B = A.triangularView<Eigen::Lower>();
  if (((B.rowwise().squaredNorm() - diag).array() <= 1e-8 * top).all()) return B;
  const Eigen::SelfAdjointEigenSolver<Matrix> es(S);
  if (es.info() != Eigen::Success) throw numeric_error("the eigen-decomposition of a smoothed covariance failed.");
  const Vector root = es.eigenvalues().cwiseMax(0.0).cwiseSqrt();
  return es.eigenvectors() * root.asDiagonal() * es.eigenvectors().transpose();
}

// (S + S^T) / 2 in the storage of S (dynamic, or of fixed capacity).
template <class M>
M symmetrized(const M& S) {
  return 0.5 * (S + S.transpose());
}
Matrix symmetric(const Matrix& S) { return symmetrized(S); }

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

namespace {

// Matern nu = p - 1/2: lambda = sqrt(2 nu) / lengthscale; the SDE's companion
// matrix F has the p-fold eigenvalue -lambda, and exp(F delta) = exp(-lambda
// delta) exp(N delta) with N = F + lambda I nilpotent (N^p = 0): a finite sum.
// F's last row is -binom(p, k) lambda^(p-k).
Matrix matern_transition(int p, double lengthscale, double delta) {
  const double lambda = std::sqrt(2.0 * p - 1.0) / lengthscale;
  Matrix N = Matrix::Identity(p, p) * lambda;
  for (int k = 0; k + 1 < p; ++k) N(k, k + 1) = 1.0;
  const double binom[3][3] = {{1, 0, 0}, {1, 2, 0}, {1, 3, 3}};  // binom(p, k), k < p
  for (int k = 0; k < p; ++k) N(p - 1, k) -= binom[p - 1][k] * std::pow(lambda, p - k);
  Matrix A = Matrix::Identity(p, p), term = Matrix::Identity(p, p);
  for (int k = 1; k < p; ++k) {
    term = term * N * (delta / k);
    A += term;
  }
  return std::exp(-lambda * delta) * A;
}

// Pinf = Cov of (f, f', f'') = [k(0), 0, k''(0); 0, -k''(0), 0; k''(0), 0, k''''(0)].
Matrix matern_stationary(int p, double lengthscale, double s2) {
  const double lambda = std::sqrt(2.0 * p - 1.0) / lengthscale, l2 = lambda * lambda;
  Matrix P = Matrix::Zero(p, p);
  P(0, 0) = s2;
  if (p == 2) P(1, 1) = l2 * s2;
  if (p == 3) {
    P(1, 1) = l2 * s2 / 3.0;
    P(0, 2) = P(2, 0) = -l2 * s2 / 3.0;
    P(2, 2) = l2 * l2 * s2;
  }
  return P;
}

// The process noise of a Matern block over delta: Q = q int_0^delta e^{Fs}
// e_p e_p^T e^{F^T s} ds, q = 2 s2 sqrt(pi) lambda^(2 nu) Gamma(nu + 1/2) /
// Gamma(nu) the white noise's spectral density (nu = p - 1/2: 2 s2 lambda,
// 4 s2 lambda^3, 16/3 s2 lambda^5). Where lambda delta is small (a
// lengthscale far beyond the frame spacing), Pinf - A Pinf A^T cancels to
// its last digits and below (a user review: Matern 3/2 and 5/2 with
// lengthscales of 1e5-1e10 frames gave the Laplace kernel's answer, or an
// error, depending on the digits left); there the integral is taken by
// 16-point Gauss-Legendre quadrature, exact for the polynomial part (degree
// 2 p - 2) and to rounding for exp(-2 lambda s) with 2 lambda delta <= 1.
// Elsewhere the difference keeps its digits (A has decayed).
Matrix matern_noise(int p, double lengthscale, double s2, double delta, const Matrix& A, const Matrix& P) {
  const double lambda = std::sqrt(2.0 * p - 1.0) / lengthscale;
  if (lambda * delta > 0.5) return P - A * P * A.transpose();
  static const double x[8] = {0.0950125098376374, 0.2816035507792589, 0.4580167776572274, 0.6178762444026438,
                              0.7554044083550030, 0.8656312023878318, 0.9445750230732326, 0.9894009349916499};
  static const double w[8] = {0.1894506104550685, 0.1826034150449236, 0.1691565193950025, 0.1495959888165767,
                              0.1246289712555339, 0.0951585116824928, 0.0622535239386479, 0.0271524594117541};
  const double q = p == 1 ? 2.0 * s2 * lambda
                 : p == 2 ? 4.0 * s2 * lambda * lambda * lambda
                          : 16.0 / 3.0 * s2 * std::pow(lambda, 5);
  Matrix Q = Matrix::Zero(p, p);
  for (int i = 0; i < 8; ++i)
    for (const double sign : {-1.0, 1.0}) {
      const double at = 0.5 * delta * (1.0 + sign * x[i]);
      const Vector c = matern_transition(p, lengthscale, at).col(p - 1);
      Q.noalias() += (0.5 * delta * w[i] * q) * c * c.transpose();
    }
  return Q;
}

bool positive_finite(double v) { return std::isfinite(v) && v > 0.0; }

}  // namespace

int LatentBlock::dimension() const {
  switch (kind) {
    case Kind::matern: return order;
    case Kind::level: return 1;
    case Kind::trend: return 2;
    case Kind::harmonic: return 2 * order;
  }
  return 0;
}

LatentProcess::LatentProcess(std::vector<LatentBlock> blocks, double diffuse)
    : blocks_(std::move(blocks)), diffuse_(diffuse) {
  if (blocks_.empty()) throw input_error("kernel", "a latent process needs at least one block.");
  if (!positive_finite(diffuse_)) throw input_error("kernel", "the diffuse prior variance must be finite and > 0.");
  for (const LatentBlock& b : blocks_) {
    switch (b.kind) {
      case LatentBlock::Kind::matern:
        if (b.order < 1 || b.order > 3) throw input_error("kernel", "a Matern block has order 1, 2 or 3.");
        if (!positive_finite(b.variance) || !positive_finite(b.lengthscale))
          throw input_error("kernel", "a Matern block needs a finite variance and lengthscale > 0.");
        break;
      case LatentBlock::Kind::level:
      case LatentBlock::Kind::trend:
        if (!(std::isfinite(b.rate) && b.rate >= 0.0) || !(std::isfinite(b.slope_rate) && b.slope_rate >= 0.0))
          throw input_error("kernel", "level and trend noise rates must be finite and >= 0.");
        n_diffuse_ += b.dimension();
        break;
      case LatentBlock::Kind::harmonic:
        if (!positive_finite(b.variance) || !positive_finite(b.decay) || !std::isfinite(b.omega))
          throw input_error("kernel", "a harmonic block needs a finite variance and decay > 0 and a finite frequency.");
        if (b.order < 1 || b.order > 2) throw input_error("kernel", "a harmonic's envelope has order 1 or 2.");
        break;
    }
    n_ += b.dimension();
  }
}

LatentProcess LatentProcess::matern(const Kernel& kernel) {
  LatentBlock b;
  b.kind = LatentBlock::Kind::matern;
  b.order = kernel.type == KernelType::laplace ? 1 : kernel.type == KernelType::matern32 ? 2 : 3;
  b.variance = kernel.variance;
  b.lengthscale = kernel.lengthscale;
  return LatentProcess({b});
}

void LatentProcess::transition(double delta, Matrix& A, Matrix& Q) const {
  // a step back in time has no Markov transition (a review: delta -1 gave a
  // matrix whose noise Q was not a covariance)
  if (!(delta >= 0.0) || !std::isfinite(delta)) {
    throw input_error("delta", "a transition's time step delta must be finite and >= 0, not " + std::to_string(delta) + ".");
  }
  A = Matrix::Zero(n_, n_);
  Q = Matrix::Zero(n_, n_);
  int o = 0;
  for (const LatentBlock& b : blocks_) {
    const int p = b.dimension();
    switch (b.kind) {
      case LatentBlock::Kind::matern: {
        const Matrix A1 = matern_transition(p, b.lengthscale, delta);
        const Matrix P = matern_stationary(p, b.lengthscale, b.variance);
        A.block(o, o, p, p) = A1;
        Q.block(o, o, p, p) = matern_noise(p, b.lengthscale, b.variance, delta, A1, P);
        break;
      }
      case LatentBlock::Kind::level:
        A(o, o) = 1.0;
        Q(o, o) = b.rate * delta;
        break;
      case LatentBlock::Kind::trend:
        // (level, slope): the level integrates the slope; continuous-time
        // noise: a Wiener level (rate) plus an integrated Wiener slope.
        A(o, o) = A(o + 1, o + 1) = 1.0;
        A(o, o + 1) = delta;
        Q(o, o) = b.rate * delta + b.slope_rate * delta * delta * delta / 3.0;
        Q(o, o + 1) = Q(o + 1, o) = b.slope_rate * delta * delta / 2.0;
        Q(o + 1, o + 1) = b.slope_rate * delta;
        break;
      case LatentBlock::Kind::harmonic: {
        // A rotation by omega delta times a Matern envelope of order
        // `order` (1: exp(-delta / decay); 2: Matern 3/2 with lengthscale
        // decay): state kron(envelope state, (cos, sin)).
        Matrix R(2, 2);
        const double c = std::cos(b.omega * delta), s = std::sin(b.omega * delta);
        R << c, -s, s, c;
        const Matrix M = matern_transition(b.order, b.decay, delta);
        const Matrix Pm = matern_stationary(b.order, b.decay, b.variance);
        const Matrix Ah = Eigen::kroneckerProduct(M, R);
        A.block(o, o, p, p) = Ah;
        // Ph - Ah Ph Ah^T with Ph = Pm (x) I: R R^T = I leaves the envelope's noise (x) I.
        Q.block(o, o, p, p) =
            Eigen::kroneckerProduct(matern_noise(b.order, b.decay, b.variance, delta, M, Pm), Matrix::Identity(2, 2));
        break;
      }
    }
    o += p;
  }
  Q = 0.5 * (Q + Q.transpose()).eval();
}

Matrix LatentProcess::initial_covariance() const {
  Matrix P = Matrix::Zero(n_, n_);
  int o = 0;
  for (const LatentBlock& b : blocks_) {
    const int p = b.dimension();
    switch (b.kind) {
      case LatentBlock::Kind::matern: P.block(o, o, p, p) = matern_stationary(p, b.lengthscale, b.variance); break;
      case LatentBlock::Kind::level:
      case LatentBlock::Kind::trend: P.block(o, o, p, p) = diffuse_ * Matrix::Identity(p, p); break;
      case LatentBlock::Kind::harmonic:
        P.block(o, o, p, p) = Eigen::kroneckerProduct(matern_stationary(b.order, b.decay, b.variance),
                                                       Matrix::Identity(2, 2));
        break;
    }
    o += p;
  }
  return P;
}

Vector LatentProcess::readout() const {
  Vector h = Vector::Zero(n_);
  int o = 0;
  for (const LatentBlock& b : blocks_) {
    h(o) = 1.0;  // the value of each block is its first coordinate
    o += b.dimension();
  }
  return h;
}

double LatentProcess::covariance(double tau) const {
  if (n_diffuse_ > 0) throw input_error("kernel", "a process with a level or trend has no stationary covariance.");
  Matrix A, Q;
  transition(std::abs(tau), A, Q);
  const Vector h = readout();
  return h.dot(A * initial_covariance() * h);
}

StateSpaceGP::StateSpaceGP(const Kernel& kernel, double nugget, Matrix Lambda, RowMatrix mean, Vector times) {
  if (!state_space_supported(kernel)) {
    const bool emb = kernel.embedding.kind != Embedding::Kind::index;
    throw input_error("kernel", "the state-space (Kalman) path supports the laplace (Matern 1/2), matern32 and "
                                "matern52 kernels over the index embedding, not " +
                                    (emb ? std::string("the sinusoidal embedding") : "the " + to_string(kernel.type) +
                                                                                       " kernel") +
                                    "; use the dense conditional (gp_spec() with impute()) for it.");
  }
  kernel_matrix(kernel, 1);  // validates lengthscale, variance and scale (input_error naming each)
  process_ = LatentProcess::matern(kernel);
  if (times.size() == 0) {
    const int H = static_cast<int>(mean.rows());
    times.resize(std::max(H, 0));
    for (int i = 0; i < H; ++i) times(i) = (i + 1.0) * kernel.embedding.scale;
  }
  validate(nugget, std::move(Lambda), std::move(mean), std::move(times));
}

StateSpaceGP::StateSpaceGP(LatentProcess process, double nugget, Matrix Lambda, RowMatrix mean, Vector times)
    : process_(std::move(process)) {
  if (process_.dimension() == 0) throw input_error("kernel", "the latent process has no block.");
  validate(nugget, std::move(Lambda), std::move(mean), std::move(times));
}

void StateSpaceGP::validate(double nugget, Matrix Lambda, RowMatrix mean, Vector times) {
  if (!(std::isfinite(nugget) && nugget >= 0.0)) throw input_error("nugget", "nugget must be a finite number >= 0.");
  nugget_ = nugget;
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
    for (int i = 0; i < H; ++i) times_(i) = i + 1.0;
  } else {
    if (times.size() != H) throw input_error("times", "times must have H = " + std::to_string(H) + " values.");
    for (int i = 0; i < H; ++i)
      if (!std::isfinite(times(i)) || (i > 0 && !(times(i) > times(i - 1))))
        throw input_error("times", "times must be finite and strictly increasing.");
    times_ = std::move(times);
  }
}

Matrix StateSpaceGP::transition(double delta) const {
  Matrix A, Q;
  process_.transition(delta, A, Q);
  return A;
}

namespace {

// What the filter and the smoother share: the frame layout of the mask, the
// residuals of observed entries, the transition of the whole state (cached
// per gap length), and the readout of the d process values from the state
// (component j's value is h^T of its block of p coordinates).
struct Frames {
  const Mask& mask;
  const double* x;
  const RowMatrix& mean;
  int d, p;
  Vector h;

  void vars(int t, std::vector<int>& obs, std::vector<int>& miss) const {
    obs.clear();
    miss.clear();
    for (int j = 0; j < d; ++j) (mask.is_observed(t, j) ? obs : miss).push_back(j);
  }
  Vector residual(int t, const std::vector<int>& obs) const {
    Vector y(obs.size());
    for (std::size_t i = 0; i < obs.size(); ++i) {
      const double v = x[static_cast<std::size_t>(t) * d + obs[i]];
      if (!std::isfinite(v))
        throw input_error("x", "observed entries must be finite (frame " + std::to_string(t + 1) + ", variable " +
                                   std::to_string(obs[i] + 1) + ").");
      y(i) = v - mean(t, obs[i]);
    }
    return y;
  }
  // d values of a state vector.
  Vector values(const Vector& s) const {
    Vector out(d);
    for (int j = 0; j < d; ++j) out(j) = s.segment(j * p, p).dot(h);
    return out;
  }
  // P H^T (n x d): the covariance of the state with the d values.
  Matrix value_cols(const Matrix& P) const {
    Matrix out(P.rows(), d);
    for (int j = 0; j < d; ++j) out.col(j) = P.middleCols(j * p, p) * h;
    return out;
  }
  // H P H^T (d x d) from value_cols(P).
  Matrix value_cov(const Matrix& PH) const {
    Matrix out(d, d);
    for (int j = 0; j < d; ++j) out.row(j) = h.transpose() * PH.middleRows(j * p, p);
    return out;
  }
  // Rows of the state draws F (n x Z) read out as values (d x Z).
  Matrix value_rows(const Matrix& F) const {
    Matrix out(d, F.cols());
    for (int j = 0; j < d; ++j) out.row(j) = h.transpose() * F.middleRows(j * p, p);
    return out;
  }
};

void check_llt(Eigen::ComputationInfo info, const char* what) {
  if (info != Eigen::Success)
    throw numeric_error(std::string("the state-space smoother's ") + what +
                        " is not positive definite (a lengthscale far longer than the frame spacing with no "
                        "nugget: add a small nugget)");
}

Eigen::LLT<Matrix> llt_or_throw(const Matrix& S, const char* what) {
  Eigen::LLT<Matrix> llt(S);
  check_llt(llt.info(), what);
  return llt;
}

}  // namespace

namespace {

// The filter of one variable (d = 1) with a small state, in fixed-capacity
// matrices: no allocation per frame. The same recursion as the general
// filter below, with h^T s the value and nugget * Lambda the noise.
constexpr int kSmall = 20;
using SmallMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, kSmall, kSmall>;
using SmallVector = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, kSmall, 1>;
struct FreeDeleter {
  void operator()(double* p) const { std::free(p); }
};

// `count` doubles, not initialised. Past 4 MB, on Linux, aligned to and
// advised for transparent huge pages where the system allows them: the
// smoother's store of a long series is hundreds of MB written once, and the
// page faults of first touching it 4 KB at a time took 12-13% of a smoother
// call's time in a profile (200,000 frames, one variable).
std::unique_ptr<double[], FreeDeleter> large_buffer(std::size_t count) {
  const std::size_t bytes = std::max<std::size_t>(count, 1) * sizeof(double);
#ifdef __linux__
  constexpr std::size_t huge = std::size_t{2} << 20;
  if (bytes >= 2 * huge) {
    void* p = nullptr;
    const std::size_t rounded = (bytes + huge - 1) / huge * huge;
    if (posix_memalign(&p, huge, rounded) != 0) throw std::bad_alloc();
    madvise(p, rounded, MADV_HUGEPAGE);  // advice only: ignored where huge pages are off
    return std::unique_ptr<double[], FreeDeleter>(static_cast<double*>(p));
  }
#endif
  void* p = std::malloc(bytes);
  if (!p) throw std::bad_alloc();
  return std::unique_ptr<double[], FreeDeleter>(static_cast<double*>(p));
}

// A pair of matrix and vector types, to choose a code path's storage.
template <class M, class V>
struct MatrixTypes {
  using Mat = M;
  using Vec = V;
};

// a * b: coefficient-wise (lazyProduct) for operands of fixed capacity, which
// Eigen would otherwise send through its blocked product (packing, kernels)
// at 10 coordinates; the usual product for dynamic ones. The result must not
// be assigned to an operand (no temporary protects a lazy product).
template <class A, class B>
auto times(const Eigen::MatrixBase<A>& a, const Eigen::MatrixBase<B>& b) {
  if constexpr (A::MaxRowsAtCompileTime != Eigen::Dynamic && B::MaxColsAtCompileTime != Eigen::Dynamic) {
    return a.lazyProduct(b);
  } else {
    return a.derived() * b.derived();
  }
}

// Where the state's diagonal blocks start: each latent block of each of the
// d components (component-major, as block_diagonal() stacks them), then n.
std::vector<int> block_starts(const LatentProcess& process, int d) {
  std::vector<int> starts;
  for (int k = 0; k < d; ++k) {
    int o = k * process.dimension();
    for (const LatentBlock& b : process.blocks()) {
      starts.push_back(o);
      o += b.dimension();
    }
  }
  starts.push_back(d * process.dimension());
  return starts;
}

// Products with a transition A that is block diagonal with square blocks at
// `starts` (every latent process's is: its blocks are independent), each
// block of rows or columns multiplied by its own block of A: n sum(b_k^2)
// operations instead of n^3 (a level seasonal form's 10 coordinates have
// blocks of 1, 3, 2, 2 and 2: 0.22x the work). The blocks latent processes have (1-4
// coordinates) are of fixed size, so that the products unroll (as dynamic
// blocks they ran coefficient by coefficient: over half a fit's time).
template <int B, class M, class X>
void block_rows(const M& A, const X& x, X& out, int o, int b) {
  if constexpr (B == Eigen::Dynamic) {
    out.middleRows(o, b).noalias() = A.block(o, o, b, b).lazyProduct(x.middleRows(o, b));
  } else {
    const Eigen::Matrix<double, B, B> Ab = A.template block<B, B>(o, o);
    out.template middleRows<B>(o).noalias() = Ab.lazyProduct(x.template middleRows<B>(o));
  }
}
// Column by column (each a sum of B scaled columns of x, contiguous in
// storage): as one lazy product of n x B by B x B, whole fits took 1.2-1.3
// times the CPU time.
template <int B, class M>
void block_cols(const M& A, const M& x, M& out, int o, int b) {
  if constexpr (B == Eigen::Dynamic) {
    out.middleCols(o, b).noalias() = x.middleCols(o, b).lazyProduct(A.block(o, o, b, b).transpose());
  } else {
    for (int j = 0; j < B; ++j) {
      out.col(o + j) = x.col(o) * A(o + j, o);
      for (int k = 1; k < B; ++k) out.col(o + j) += x.col(o + k) * A(o + j, o + k);
    }
  }
}

// Calls f(std::integral_constant<int, B>) for each diagonal block of A at
// `starts` (offset o, size b), B = b for the fixed sizes, else Eigen::Dynamic.
template <class F>
void for_each_block(const std::vector<int>& starts, F&& f) {
  for (std::size_t k = 0; k + 1 < starts.size(); ++k) {
    const int o = starts[k], b = starts[k + 1] - o;
    switch (b) {
      case 1: f(std::integral_constant<int, 1>{}, o, b); break;
      case 2: f(std::integral_constant<int, 2>{}, o, b); break;
      case 3: f(std::integral_constant<int, 3>{}, o, b); break;
      case 4: f(std::integral_constant<int, 4>{}, o, b); break;
      default: f(std::integral_constant<int, Eigen::Dynamic>{}, o, b);
    }
  }
}

// out = A x (x: n rows).
template <class M, class X>
void transition_times(const M& A, const std::vector<int>& starts, const X& x, X& out) {
  eigen_assert(starts.back() == x.rows() && &out != &x);
  out.resize(x.rows(), x.cols());
  for_each_block(starts, [&](auto B, int o, int b) { block_rows<decltype(B)::value>(A, x, out, o, b); });
}

// out = x A^T + Q (x: n columns): with x = A P, the predicted covariance.
template <class M>
void times_transition_plus(const M& x, const M& A, const std::vector<int>& starts, const M& Q, M& out) {
  eigen_assert(starts.back() == x.cols() && &out != &x);
  out.resize(x.rows(), x.cols());
  for_each_block(starts, [&](auto B, int o, int b) { block_cols<decltype(B)::value>(A, x, out, o, b); });
  out += Q;
}

// P <- A P A^T + Q (AP: scratch).
template <class M>
void propagate(const M& A, const M& Q, const std::vector<int>& starts, M& P, M& AP) {
  transition_times(A, starts, P, AP);
  times_transition_plus(AP, A, starts, Q, P);
}

// One frame's filtered moments into the store: the mean, then the lower
// triangle of the covariance column by column (what the smoother reads back).
template <class V, class M>
void store_moments(double* s, const V& m, const M& P) {
  const int n = static_cast<int>(m.size());
  for (int i = 0; i < n; ++i) *s++ = m(i);
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) *s++ = P(i, j);
}

}  // namespace

double StateSpaceGP::filter_univariate(const Mask& mask, const double* x, double* store, long* used,
                                       RowMatrix* innovations, int condition_on) const {
  const int H = this->H(), n = process_.dimension();
  // The state keeps the unit scale of the general filter (what the smoother
  // reads back); the value is L h^T s with L = sqrt(Lambda).
  const double lam = Lambda_(0, 0), l = std::sqrt(lam), noise = nugget_ * lam;
  const std::size_t stride = static_cast<std::size_t>(n * (n + 1) / 2 + n);
  if (innovations) innovations->setConstant(H, 1, std::numeric_limits<double>::quiet_NaN());
  long diffuse_left = std::max(process_.diffuse_count(), condition_on);
  const Vector hv = process_.readout();
  const SmallVector h = hv;
  Matrix A1, Q1;
  SmallMatrix A, Q, P, AP;
  SmallVector m = SmallVector::Zero(n), Ph;
  P = process_.initial_covariance();
  const std::vector<int> starts = block_starts(process_, 1);
  double cached = -1.0;
  double loglik = 0.0;
  long counted = 0;
  const double log_2pi = std::log(2.0 * 3.14159265358979323846);
  for (int t = 0; t < H; ++t) {
    if (t > 0) {
      const double delta = times_(t) - times_(t - 1);
      if (delta != cached) {
        process_.transition(delta, A1, Q1);
        A = A1;
        Q = Q1;
        cached = delta;
      }
      m = A * m;
      propagate(A, Q, starts, P, AP);
    }
    if (mask.is_observed(t, 0)) {
      const double y = x[t];
      if (!std::isfinite(y))
        throw input_error("x", "observed entries must be finite (frame " + std::to_string(t + 1) + ", variable 1).");
      Ph.noalias() = P * h;
      const double F = lam * h.dot(Ph) + noise;
      if (!(F > 0.0) || !std::isfinite(F))
        throw numeric_error("the state-space smoother's innovation covariance is not positive definite (a "
                            "lengthscale far longer than the frame spacing with no nugget: add a small nugget)");
      const double v = y - mean_(t, 0) - l * h.dot(m);
      if (diffuse_left > 0) {
        --diffuse_left;
      } else {
        loglik -= 0.5 * (log_2pi + std::log(F) + v * v / F);
        ++counted;
        if (innovations) (*innovations)(t, 0) = v / std::sqrt(F);
      }
      m += Ph * (l * v / F);
      P.noalias() -= Ph * (Ph.transpose() * (lam / F));
      P = 0.5 * (P + P.transpose()).eval();
    }
    if (store) store_moments(store + t * stride, m, P);
    if ((t & 1023) == 0) check_cancelled();
  }
  if (used) *used = counted;
  return loglik;
}

double StateSpaceGP::filter(const Mask& mask, const double* x, double* store, long* used,
                            RowMatrix* innovations, int condition_on) const {
  const int H = this->H(), d = this->d(), p = process_.dimension(), n = d * p;
  if (d == 1 && p <= kSmall) return filter_univariate(mask, x, store, used, innovations, condition_on);
  const Frames fr{mask, x, mean_, d, p, process_.readout()};
  const std::size_t stride = static_cast<std::size_t>(n * (n + 1) / 2 + n);
  if (innovations) innovations->setConstant(H, d, std::numeric_limits<double>::quiet_NaN());
  // The first observed entries, as many as there are diffuse coordinates
  // (or condition_on per variable, if more), are conditioned on, not scored:
  // they only start the level (and slope).
  long diffuse_left = static_cast<long>(std::max(process_.diffuse_count(), condition_on)) * d;
  Matrix A1, Q1, A, Q, AP;
  double cached = -1.0;
  Vector mt = Vector::Zero(n);
  Matrix P = block_diagonal(process_.initial_covariance(), d);
  const std::vector<int> starts = block_starts(process_, d);
  std::vector<int> obs, miss;
  double loglik = 0.0;
  long counted = 0;
  const double log_2pi = std::log(2.0 * 3.14159265358979323846);
  for (int t = 0; t < H; ++t) {
    if (t > 0) {
      const double delta = times_(t) - times_(t - 1);
      if (delta != cached) {
        process_.transition(delta, A1, Q1);
        A = block_diagonal(A1, d);
        Q = block_diagonal(Q1, d);
        cached = delta;
      }
      mt = A * mt;
      propagate(A, Q, starts, P, AP);
      P = symmetric(P);
    }
    fr.vars(t, obs, miss);
    if (!obs.empty()) {
      // y = L_o f + noise, noise ~ N(0, nugget Lambda_oo); f = the values.
      const Vector y = fr.residual(t, obs);
      Matrix Lobs(obs.size(), d);
      for (std::size_t i = 0; i < obs.size(); ++i) Lobs.row(i) = L_.row(obs[i]);
      const Matrix Pcols = fr.value_cols(P);  // n x d
      const Matrix PH = Pcols * Lobs.transpose();  // n x o
      Matrix S = Lobs * fr.value_cov(Pcols) * Lobs.transpose();
      if (nugget_ > 0.0) S += nugget_ * gather(Lambda_, obs, obs);
      S = symmetric(S);
      const auto llt = llt_or_throw(S, "innovation covariance");
      const Vector v = y - Lobs * fr.values(mt);
      if (diffuse_left > 0) {
        diffuse_left -= static_cast<long>(obs.size());
      } else {
        const Vector w = llt.matrixL().solve(v);
        const double logdet = 2.0 * Matrix(llt.matrixL()).diagonal().array().log().sum();
        loglik -= 0.5 * (static_cast<double>(obs.size()) * log_2pi + logdet + w.squaredNorm());
        counted += static_cast<long>(obs.size());
        if (innovations)
          for (std::size_t i = 0; i < obs.size(); ++i) (*innovations)(t, obs[i]) = v(i) / std::sqrt(S(i, i));
      }
      const Matrix KT = llt.solve(PH.transpose());  // o x n, K = PH S^{-1}
      mt += KT.transpose() * v;
      P = symmetric(P - PH * KT);
    }
    if (store) store_moments(store + t * stride, mt, P);
    if ((t & 1023) == 0) check_cancelled();
  }
  if (used) *used = counted;
  return loglik;
}

double StateSpaceGP::log_likelihood(const Mask& mask, const double* x, long* used, RowMatrix* innovations,
                                    int condition_on) const {
  if (mask.H != H() || mask.d != d())
    throw input_error("x", "the mask is " + dims(mask.H, mask.d) + ", the process " + dims(H(), d()) + ".");
  return filter(mask, x, nullptr, used, innovations, condition_on);
}

double smoother_bytes(int frames, int state) {
  const double n = state;
  return 8.0 * frames * (n * (n + 1.0) / 2.0 + n);
}

SmoothedConditional StateSpaceGP::conditional(const Mask& mask, const double* x, int Z, Rng& rng,
                                              bool rts_moments) const {
  const int H = this->H(), d = this->d(), p = process_.dimension(), n = d * p;
  if (mask.H != H || mask.d != d)
    throw input_error("x", "the mask is " + dims(mask.H, mask.d) + ", the process " + dims(H, d) + ".");
  if (Z < 0) throw input_error("n_samples", "the number of draws must be >= 0.");
  SmoothedConditional out;
  out.missing = mask.missing_entries();
  const int m = static_cast<int>(out.missing.size());
  const double tri = n * (n + 1.0) / 2.0;  // the stored moments of a frame: tri + n doubles
  check_memory(smoother_bytes(H, n) + 8.0 * 3.0 * m, "x",
               "the state-space smoother of " + std::to_string(H) + " frames (state dimension " + std::to_string(n) +
                   ")");
  check_memory(8.0 * Z * static_cast<double>(m) + 8.0 * 2.0 * n * Z, "n_samples",
               std::to_string(Z) + " draws of " + std::to_string(m) + " missing entries");
  out.mean.resize(m);
  out.sd.resize(m);
  out.samples.resize(Z, m);
  if (m == 0) return out;

  const Frames fr{mask, x, mean_, d, p, process_.readout()};
  std::vector<int> first_missing(H + 1, 0);
  for (int t = 0; t < H; ++t) {
    int c = 0;
    for (int j = 0; j < d; ++j) c += mask.is_observed(t, j) ? 0 : 1;
    first_missing[t + 1] = first_missing[t] + c;
  }

  // ---- forward: Kalman filter, keeping the filtered moments of every frame
  // (the store is not zero-filled first: the filter writes every frame's).
  const std::size_t stride = static_cast<std::size_t>(tri + n);
  const std::unique_ptr<double[], FreeDeleter> store = large_buffer(static_cast<std::size_t>(H) * stride);
  filter(mask, x, store.get(), nullptr, nullptr);
  auto load = [&](int t, auto& mt, auto& P) {
    const double* s = store.get() + t * stride;
    mt.resize(n);
    P.resize(n, n);
    for (int i = 0; i < n; ++i) mt(i) = *s++;
    for (int j = 0; j < n; ++j)
      for (int i = j; i < n; ++i) P(i, j) = P(j, i) = *s++;
  };

  // ---- backward: RTS smoother (means, sds) and backward sampling (draws).
  // Each frame's readout of its missing entries from the state's values.
  auto readout = [&](int t) {
    FrameReadout r;
    fr.vars(t, r.obs, r.miss);
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
        r.c += G * fr.residual(t, r.obs);
        r.M -= G * Lobs;
        Smm -= G * Lmo.transpose();
      }
      r.R = llt_or_throw(symmetric(nugget_ * Smm), "nugget part of a frame").matrixL();
    }
    return r;
  };
  // Frame t's smoothed moments read out at its missing entries (r: its
  // readout, ms: the state's mean, Pvv: the d values' covariance).
  auto emit = [&](int t, const FrameReadout& r, const Vector& ms, const Matrix& Pvv) {
    const int k0 = first_missing[t], mm = first_missing[t + 1] - k0;
    out.mean.segment(k0, mm) = r.c + r.M * fr.values(ms);
    Matrix cov = r.M * Pvv * r.M.transpose();
    if (r.R.size() > 0) cov += r.R * r.R.transpose();
    out.sd.segment(k0, mm) = cov.diagonal().cwiseMax(0.0).cwiseSqrt();
  };
  // The backward pass in matrices of the state's size `Mat` and `Vec`: for
  // one variable and a small state (long univariate series) of fixed
  // capacity, which allocates nothing per frame and multiplies coefficient-
  // wise instead of by blocked products (with the store below, 0.63-0.78x the
  // CPU time of a self-calibrated imputation of 150,000-600,000 frames:
  // bench/results/series_scaling.md); otherwise dynamic, as before. The draws
  // and the readout stay dynamic (copies of n x n per frame, against the
  // pass's n^3).
  const std::vector<int> starts = block_starts(process_, d);
  // `top` is the first frame of the pass (H - 1); with `seed_mean` and
  // `seed_cov`, the smoothed moments of frame top + 1 (information() below
  // hands the diffuse start over to this pass that way).
  auto backward = [&](auto types, int top, const Vector* seed_mean, const Matrix* seed_cov) {
    using Mat = typename decltype(types)::Mat;
    using Vec = typename decltype(types)::Vec;
    Vec ms, mf, mp, dm;  // smoothed mean of frame t + 1, filtered mean of frame t, predicted mean
    Mat Ps, Pf;      // the same covariances
    Mat A, Q, W, Pp, V, J, C;
    Eigen::LLT<Mat> llt(n);
    Matrix A1, Q1;
    Matrix F;  // n x Z: the draws of the state at frame t + 1, then t
    Matrix noise;
    double cached = -1.0;
    if (seed_mean) {
      ms = *seed_mean;
      Ps = *seed_cov;
    }
    for (int t = top; t >= 0; --t) {
      load(t, mf, Pf);
      Matrix Bc;  // square root of the backward conditional covariance of the state
      if (t == H - 1) {
        ms = mf;
        Ps = Pf;
        if (Z > 0) Bc = psd_sqrt(Matrix(Pf));
        if (Z > 0) F = Vector(mf).replicate(1, Z);
      } else {
        const double delta = times_(t + 1) - times_(t);
        if (delta != cached) {
          process_.transition(delta, A1, Q1);
          A = block_diagonal(A1, d);
          Q = block_diagonal(Q1, d);
          cached = delta;
        }
        transition_times(A, starts, Pf, W);  // Cov(s_{t+1}, s_t | y_1:t)
        mp = times(A, mf);
        times_transition_plus(W, A, starts, Q, Pp);
        llt.compute(symmetrized(Pp));
        check_llt(llt.info(), "predicted covariance");
        V = llt.matrixL().solve(W);
        J = llt.matrixU().solve(V).transpose();  // Pf A^T Ppred^{-1}
        C = symmetrized(Mat(Pf - times(V.transpose(), V)));  // Cov(s_t | s_{t+1}, y_1:t)
        dm = ms - mp;
        ms = mf + times(J, dm);
        Ps = symmetrized(Mat(C + times(Mat(times(J, Ps)), J.transpose())));
        if (Z > 0) {
          Bc = psd_sqrt(Matrix(C));
          F = (Matrix(J) * (F.colwise() - Vector(mp))).colwise() + Vector(mf);
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
        emit(t, r, Vector(ms), fr.value_cov(fr.value_cols(Matrix(Ps))));
        if (Z > 0) {
          Matrix draws = (r.M * fr.value_rows(F)).colwise() + r.c;  // mm x Z
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
  };
  // ---- backward for means and sds only (Z = 0) with several variables: the
  // information form of the smoother (de Jong; Durbin and Koopman, section
  // 4.4), r_{t-1} = Z' F^-1 v + L' r_t and N_{t-1} = Z' F^-1 Z + L' N_t L
  // with L = A (I - K Z), which gives the smoothed mean a + P r and the
  // values' covariance H (P - P N P) H' from the predicted moments (a, P).
  // The transition is block diagonal, so A' N A costs n^2 times the block
  // sizes, and the observation's part n^2 o: no n x n factorisation or
  // product per frame, as the RTS pass above has (five of them: 1.52 s
  // against the filter's 0.12 s for 7 variables of 3,000 frames, state 70).
  // Where a predicted variance is still diffuse (over kDiffuseFree: frames
  // before a level or trend is pinned down), P N P cancels to P's last
  // digits, so the RTS pass takes over there, seeded with the moments of
  // the frame after; returns the frame it starts at (-1: none).
  auto information = [&]() -> int {
    constexpr double kDiffuseFree = 1e3;  // variances of the standardised series: far above any fitted one
    const Vector& h = fr.h;
    const Matrix hh = h * h.transpose();
    const int p_ = p;
    // Z' Y for the values' rows Y (d x k): block j of rows is h Y.row(j)
    // (h: one component's readout, p coordinates).
    auto spread = [&](const Matrix& Y) {
      Matrix outm(n, Y.cols());
      for (int j = 0; j < d; ++j) outm.middleRows(j * p_, p_).noalias() = h * Y.row(j);
      return outm;
    };
    Vector r = Vector::Zero(n), a, a_next, mf, u;
    Matrix N = Matrix::Zero(n, n), P, P_next, Pf, M, AP, A, At, Q, A_next_t;
    Matrix A1, Q1;
    const Matrix Qzero = Matrix::Zero(n, n);
    double cached = -1.0;
    std::vector<int> obs, miss;
    for (int t = H - 1; t >= 0; --t) {
      // u = A' r_t, M = A' N_t A: the information about frame t + 1 carried to t.
      if (t < H - 1) {
        u.noalias() = A_next_t * r;
        M = N;
        propagate(A_next_t, Qzero, starts, M, AP);
      } else {
        u = Vector::Zero(n);
        M = Matrix::Zero(n, n);
      }
      // The predicted moments of frame t.
      if (t == 0) {
        a = Vector::Zero(n);
        P = block_diagonal(process_.initial_covariance(), d);
      } else {
        const double delta = times_(t) - times_(t - 1);
        if (delta != cached) {
          process_.transition(delta, A1, Q1);
          A = block_diagonal(A1, d);
          At = A.transpose();
          Q = block_diagonal(Q1, d);
          cached = delta;
        }
        load(t - 1, mf, Pf);
        a.noalias() = A * mf;
        P = Pf;
        propagate(A, Q, starts, P, AP);
        P = symmetric(P);
      }
      if (P.diagonal().maxCoeff() > kDiffuseFree) {
        if (t == H - 1) {  // diffuse to the end: the RTS pass does it all
          backward(MatrixTypes<Matrix, Vector>{}, H - 1, nullptr, nullptr);
          return t;
        }
        // Frame t + 1's smoothed moments (its predicted ones and r_t, N_t) seed the RTS pass from t.
        const Vector ms = a_next + P_next * r;
        const Matrix Ps = symmetric(Matrix(P_next - P_next * N * P_next));
        backward(MatrixTypes<Matrix, Vector>{}, t, &ms, &Ps);
        return t;
      }
      fr.vars(t, obs, miss);
      if (!obs.empty()) {
        const int o = static_cast<int>(obs.size());
        Matrix Lobs(o, d);
        for (int i = 0; i < o; ++i) Lobs.row(i) = L_.row(obs[i]);
        const Matrix PZ = fr.value_cols(P) * Lobs.transpose();  // P Z' (n x o)
        Matrix F = Lobs * fr.value_cov(fr.value_cols(P)) * Lobs.transpose();
        if (nugget_ > 0.0) F += nugget_ * gather(Lambda_, obs, obs);
        const auto llt = llt_or_throw(symmetric(F), "innovation covariance");
        const Vector v = fr.residual(t, obs) - Lobs * fr.values(a);
        // r_{t-1} = u + Z' F^-1 (v - (P Z')' u)
        const Vector w = llt.solve(Vector(v - PZ.transpose() * u));
        r = u + spread(Lobs.transpose() * w);
        // N_{t-1} = M - Z'E - (Z'E)' + Z' S Z, G = M P Z', E = F^-1 G',
        // S = F^-1 + F^-1 (P Z')' G F^-1.
        const Matrix G = M * PZ;  // n x o
        const Matrix E = llt.solve(G.transpose());  // o x n
        const Matrix Finv = llt.solve(Matrix::Identity(o, o));
        const Matrix S = Finv + llt.solve(Matrix(PZ.transpose() * E.transpose()));  // F^-1 + F^-1 PZ' G F^-1
        // In place, block by block: Z'E has rows h (Lobs' E).row(j), Z' S Z
        // blocks C(j, k) h h'; N = M - Z'E - (Z'E)' + Z' S Z is symmetric.
        const Matrix LE = Lobs.transpose() * E;  // d x n
        const Matrix C = Lobs.transpose() * symmetric(S) * Lobs;  // d x d
        N.swap(M);
        for (int j = 0; j < d; ++j) {
          N.middleRows(j * p_, p_).noalias() -= h * LE.row(j);
          N.middleCols(j * p_, p_).noalias() -= LE.row(j).transpose() * h.transpose();
        }
        for (int k = 0; k < d; ++k)
          for (int j = 0; j < d; ++j)
            N.block(j * p_, k * p_, p_, p_).noalias() += C(j, k) * hh;
        N = symmetric(N);
      } else {
        r = u;
        N = M;
      }
      if (first_missing[t + 1] > first_missing[t]) {
        const Matrix Pv = fr.value_cols(P);  // P H' (n x d)
        emit(t, readout(t), Vector(a + P * r), Matrix(fr.value_cov(Pv) - Pv.transpose() * N * Pv));
      }
      a_next = a;
      P_next = P;
      A_next_t = At;
    }
    return -1;
  };

  if (Z == 0 && !(d == 1 && n <= kSmall) && !rts_moments) {
    information();
  } else if (d == 1 && n <= kSmall) {
    backward(MatrixTypes<SmallMatrix, SmallVector>{}, H - 1, nullptr, nullptr);
  } else {
    backward(MatrixTypes<Matrix, Vector>{}, H - 1, nullptr, nullptr);
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
