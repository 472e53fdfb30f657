// The separable process Gamma (x) Lambda of the Gaussian-process layer
// (cpp/DESIGN.md): validation and factorisation of the covariances,
// exact simulation, and the latent transform of the paper's section 6.2.
#include "ditimpute/gaussian.hpp"

#include "gaussian_internal.hpp"
#include "lapack.hpp"

#include <Eigen/Cholesky>

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace ditimpute {

using detail::dims;

namespace detail {

// Strict check of a covariance given by the caller, then its lower Cholesky
// factor. Symmetry is judged relative to the largest entry so that scaling a
// matrix does not change the verdict.
Eigen::MatrixXd checked_cholesky(const Matrix& S, const std::string& arg, bool strict_pivots) {
  if (S.rows() == 0 || S.rows() != S.cols())
    throw input_error(arg, arg + " must be a non-empty square matrix, not " + dims(S.rows(), S.cols()) + ".");
  if (!S.allFinite()) throw input_error(arg, arg + " has non-finite entries (NA, NaN or Inf).");
  const double scale = S.cwiseAbs().maxCoeff();
  if ((S - S.transpose()).cwiseAbs().maxCoeff() > 1e-10 * scale)
    throw input_error(arg, arg + " is not symmetric.");
  Eigen::LLT<Matrix> llt(S);
  if (llt.info() != Eigen::Success)
    throw input_error(arg, arg + " is not positive definite (its Cholesky factorisation fails).");
  Eigen::MatrixXd L = llt.matrixL();
  if (strict_pivots) {
    // A pivot at rounding level passes the factorisation but is no pivot:
    // frames that repeat one another (a sinusoidal embedding whose period
    // divides a frame difference) gave conditionals with sd 1e-8 and
    // kappa = Inf (a review). Judged against each row's own variance, so
    // that rows on different scales do not decide for one another.
    const double tol = static_cast<double>(S.rows()) * std::numeric_limits<double>::epsilon();
    for (Eigen::Index i = 0; i < S.rows(); ++i)
      if (L(i, i) * L(i, i) <= tol * S(i, i))
        throw input_error(arg, arg + " is numerically singular (row " + std::to_string(i + 1) +
                                   " is, to rounding, a combination of the rows before it): add a small nugget to "
                                   "its diagonal.");
  }
  return L;
}

}  // namespace detail

GaussianProcess::GaussianProcess(Matrix Gamma, Matrix Lambda, RowMatrix mean) {
  // Gamma strictly: repeated frames make a model that contradicts itself
  // wherever they are observed with different values. Lambda as given: a
  // singular one (a total column beside its parts) states an exact relation
  // between variables, which gp_fit() warns of and the conditionals honour.
  LG_ = detail::checked_cholesky(Gamma, "Gamma", true);
  LL_ = detail::checked_cholesky(Lambda, "Lambda");
  if (mean.rows() != Gamma.rows() || mean.cols() != Lambda.rows())
    throw input_error("mean", "mean must be H x d = " + dims(Gamma.rows(), Lambda.rows()) + ", not " +
                                  dims(mean.rows(), mean.cols()) + ".");
  if (!mean.allFinite()) throw input_error("mean", "mean has non-finite entries (NA, NaN or Inf).");
  // Exactly symmetric copies, so later eigen-solvers see what they assume.
  Gamma_ = 0.5 * (Gamma + Gamma.transpose());
  Lambda_ = 0.5 * (Lambda + Lambda.transpose());
  mean_ = std::move(mean);
}

Batch GaussianProcess::simulate(int n, Rng& rng) const {
  if (n < 0) throw input_error("n", "the number of sequences n must be >= 0.");
  check_memory(8.0 * n * H() * d(), "n", std::to_string(n) + " sequences of " + std::to_string(H()) + " x " +
                                            std::to_string(d()));
  Batch out(n, H(), d());
  RowMatrix Z(H(), d());
  for (int i = 0; i < n; ++i) {
    fill_standard_normal(rng, Z.data(), Z.size());
    out.matrix(i) = mean_ + LG_ * Z * LL_.transpose();
  }
  return out;
}

Batch latent_transform(const Batch& X, double noise_var, Rng& rng) {
  if (!(std::isfinite(noise_var) && noise_var >= 0.0))
    throw input_error("noise_var", "noise_var must be a finite variance >= 0.");
  Batch Y = X;
  std::vector<double> eps(Y.data.size());
  fill_standard_normal(rng, eps.data(), eps.size());
  const double sd = std::sqrt(noise_var);
  for (std::size_t k = 0; k < Y.data.size(); ++k) {
    const double x = Y.data[k];
    if (!std::isfinite(x)) throw input_error("x", "the latent values must be finite.");
    Y.data[k] = x + std::exp(-x * x) + 2.0 * std::sin(x) + sd * eps[k];
  }
  return Y;
}

namespace detail {

namespace {
constexpr Eigen::Index kBlockBase = 64;  // below this, plain triangular solves (blocking gains nothing)

// Eigen's code for invert_lower and lower_gram (on parallel_for workers and
// small matrices; LAPACK otherwise, see lapack.hpp).
void invert_lower_blocked(Eigen::Ref<Eigen::MatrixXd> T) {
  const Eigen::Index n = T.rows();
  if (n <= kBlockBase) {
    Eigen::MatrixXd I = Eigen::MatrixXd::Identity(n, n);
    T.triangularView<Eigen::Lower>().solveInPlace(I);
    T = I.triangularView<Eigen::Lower>();
    return;
  }
  const Eigen::Index k = n / 2;
  invert_lower_blocked(T.topLeftCorner(k, k));
  invert_lower_blocked(T.bottomRightCorner(n - k, n - k));
  const Eigen::MatrixXd BA = T.bottomLeftCorner(n - k, k) * T.topLeftCorner(k, k).triangularView<Eigen::Lower>();
  T.bottomLeftCorner(n - k, k).noalias() = -(T.bottomRightCorner(n - k, n - k).triangularView<Eigen::Lower>() * BA);
  T.topRightCorner(k, n - k).setZero();
}

// Lower triangle of L^T L into G (same size as L).
void lower_gram_into(const Eigen::Ref<const Eigen::MatrixXd>& L, Eigen::Ref<Eigen::MatrixXd> G) {
  const Eigen::Index n = L.rows();
  if (n <= kBlockBase) {
    G.triangularView<Eigen::Lower>() = L.triangularView<Eigen::Lower>().transpose() * L.triangularView<Eigen::Lower>().toDenseMatrix();
    return;
  }
  // [A 0; B C]^T [A 0; B C] = [A'A + B'B, B'C; C'B, C'C].
  const Eigen::Index k = n / 2;
  const auto B = L.bottomLeftCorner(n - k, k);
  lower_gram_into(L.topLeftCorner(k, k), G.topLeftCorner(k, k));
  G.topLeftCorner(k, k).selfadjointView<Eigen::Lower>().rankUpdate(B.transpose());
  G.bottomLeftCorner(n - k, k).noalias() = L.bottomRightCorner(n - k, n - k).triangularView<Eigen::Lower>().transpose() * B;
  lower_gram_into(L.bottomRightCorner(n - k, n - k), G.bottomRightCorner(n - k, n - k));
}

}  // namespace

void invert_lower(Eigen::Ref<Eigen::MatrixXd> T) {
  if (use_lapack(T.rows())) {
    lapack_invert_lower(T);
  } else {
    invert_lower_blocked(T);
  }
}

Eigen::MatrixXd lower_gram(const Eigen::MatrixXd& L) {
  Eigen::MatrixXd G;
  if (use_lapack(L.rows())) {
    G = L;
    lapack_lower_gram(G);
  } else {
    G = Eigen::MatrixXd::Zero(L.rows(), L.cols());
    lower_gram_into(L, G);
  }
  G.triangularView<Eigen::StrictlyUpper>() = G.transpose();
  return G;
}

}  // namespace detail

}  // namespace ditimpute
