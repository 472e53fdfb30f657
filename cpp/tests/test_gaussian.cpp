// Tests of the Gaussian layer (gaussian.hpp): kernels, simulation,
// conditionals on the Kronecker and dense paths, kappa, score and sampling.
#include <catch2/catch.hpp>

#include "test_helpers.hpp"

#include "ditimpute/gaussian.hpp"

#include <cmath>
#include <numeric>

using namespace ditimpute;

namespace {

Kernel make_kernel(KernelType type, double lengthscale, double variance = 1.0) {
  Kernel k;
  k.type = type;
  k.lengthscale = lengthscale;
  k.variance = variance;
  return k;
}

// Random SPD matrix with eigenvalues in [0.5, 3]: a well-conditioned but
// far-from-diagonal Lambda.
Matrix random_spd(int d, Rng& rng) {
  Matrix M(d, d);
  fill_standard_normal(rng, M.data(), static_cast<std::size_t>(M.size()));
  Eigen::HouseholderQR<Matrix> qr(M);
  const Matrix Q = qr.householderQ();
  Vector ev(d);
  for (int i = 0; i < d; ++i) ev(i) = 0.5 + 2.5 * i / std::max(1, d - 1);
  return Q * ev.asDiagonal() * Q.transpose();
}

RowMatrix random_mean(int H, int d, Rng& rng) {
  RowMatrix mu(H, d);
  fill_standard_normal(rng, mu.data(), static_cast<std::size_t>(mu.size()));
  return mu;
}

// Full Gamma (x) Lambda in vec order (frame-major).
Matrix kron(const Matrix& G, const Matrix& L) {
  const Eigen::Index H = G.rows(), d = L.rows();
  Matrix S(H * d, H * d);
  for (Eigen::Index a = 0; a < H; ++a)
    for (Eigen::Index b = 0; b < H; ++b) S.block(a * d, b * d, d, d) = G(a, b) * L;
  return S;
}

// Textbook conditional (Bishop 2.81-2.82) from the full Hd x Hd covariance,
// solved with an LDLT: independent of both code paths under test.
struct Reference {
  Vector mean;
  Matrix cov;
};
Reference textbook(const GaussianProcess& gp, const Mask& mask, const double* x) {
  const Matrix S = kron(gp.Gamma(), gp.Lambda());
  const std::vector<int> m = mask.missing_entries(), o = mask.observed_entries();
  const Matrix Soo = gather(S, o, o), Smo = gather(S, m, o);
  Vector y(o.size());
  for (std::size_t p = 0; p < o.size(); ++p) y(p) = x[o[p]] - gp.mean().data()[o[p]];
  Eigen::LDLT<Matrix> ldlt(Soo);
  Reference r;
  r.mean = Smo * ldlt.solve(y);
  for (std::size_t k = 0; k < m.size(); ++k) r.mean(k) += gp.mean().data()[m[k]];
  r.cov = gather(S, m, m) - Smo * ldlt.solve(Smo.transpose());
  return r;
}

double rel_err(const Matrix& a, const Matrix& b) { return (a - b).norm() / b.norm(); }

Mask frames_mask(int H, int d, std::vector<int> frames1) {  // 1-based frames, as in the paper
  for (int& f : frames1) --f;
  return Mask::from_missing_frames(H, d, frames1);
}

std::vector<int> blocks1(std::vector<int> starts, int len) {
  std::vector<int> out;
  for (int s : starts)
    for (int k = 0; k < len; ++k) out.push_back(s + k);
  return out;
}

using testing::require_input_error;

}  // namespace

TEST_CASE("kernels: values, names and validation", "[gaussian]") {
  CHECK(kernel_value(make_kernel(KernelType::laplace, 2.0, 3.0), 1.0) == Approx(3.0 * std::exp(-0.5)));
  // a distance is >= 0: a negative one gave exp(+u) above the variance
  CHECK_THROWS_AS(kernel_value(make_kernel(KernelType::laplace, 2.0, 3.0), -1.0), input_error);
  CHECK_THROWS_AS(kernel_value(make_kernel(KernelType::rbf, 2.0), std::nan("")), input_error);
  CHECK(kernel_value(make_kernel(KernelType::rbf, 2.0), 0.0) == Approx(1.0));
  CHECK(kernel_value(make_kernel(KernelType::rbf, 2.0), 2.0) == Approx(std::exp(-0.5)));
  const double s3 = std::sqrt(3.0), s5 = std::sqrt(5.0);
  CHECK(kernel_value(make_kernel(KernelType::matern32, 1.0), 1.0) == Approx((1 + s3) * std::exp(-s3)));
  CHECK(kernel_value(make_kernel(KernelType::matern52, 1.0), 1.0) == Approx((1 + s5 + 5.0 / 3.0) * std::exp(-s5)));
  for (KernelType t : {KernelType::laplace, KernelType::rbf, KernelType::matern32, KernelType::matern52}) {
    CHECK(kernel_type_from_string(to_string(t)) == t);
    CHECK(kernel_value(make_kernel(t, 1.7, 2.5), 0.0) == Approx(2.5));
  }
  CHECK(kernel_type_from_string("Exponential") == KernelType::laplace);
  require_input_error([] { kernel_type_from_string("cubic"); }, "kernel");

  // Index embedding with scale: gamma(i, j) = k(|i - j| * scale).
  Kernel k = make_kernel(KernelType::laplace, 4.0);
  k.embedding.scale = 0.5;
  const Matrix G = kernel_matrix(k, 6);
  CHECK(G(1, 4) == Approx(std::exp(-1.5 / 4.0)));
  CHECK((G - G.transpose()).norm() == 0.0);

  // Sinusoidal embedding: the closed form equals ||e_i - e_j|| of the vectors.
  Kernel ks = make_kernel(KernelType::rbf, 1.3);
  ks.embedding.kind = Embedding::Kind::sinusoidal;
  ks.embedding.radius = 2.0;
  ks.embedding.period = 40.0;
  const Matrix Gs = kernel_matrix(ks, 10);
  const double pi = std::acos(-1.0);
  auto e = [&](int i) { return Eigen::Vector2d(2.0 * std::sin(2 * pi * i / 40.0), 2.0 * std::cos(2 * pi * i / 40.0)); };
  CHECK(Gs(2, 7) == Approx(kernel_value(ks, (e(3) - e(8)).norm())).epsilon(1e-12));

  Kernel bad = make_kernel(KernelType::laplace, 0.0);
  require_input_error([&] { kernel_matrix(bad, 5); }, "lengthscale");
  bad = make_kernel(KernelType::laplace, -1.0);
  require_input_error([&] { kernel_matrix(bad, 5); }, "lengthscale");
  bad = make_kernel(KernelType::laplace, 1.0, 0.0);
  require_input_error([&] { kernel_matrix(bad, 5); }, "variance");
  bad = make_kernel(KernelType::laplace, 1.0, -2.0);
  require_input_error([&] { kernel_matrix(bad, 5); }, "variance");
  bad = make_kernel(KernelType::laplace, 1.0);
  bad.embedding.scale = 0.0;
  require_input_error([&] { kernel_matrix(bad, 5); }, "scale");
  require_input_error([&] { kernel_matrix(make_kernel(KernelType::rbf, 1.0), 0); }, "H");
}

TEST_CASE("kappa of the paper's patterns: H = 96, laplace l = 128, Lambda = I_8", "[gaussian][kappa]") {
  // Reference values computed independently in R (see the issue):
  // 394.9054, 2.999878, 9.470782, 32.14768.
  const int H = 96, d = 8;
  const GaussianProcess gp(kernel_matrix(make_kernel(KernelType::laplace, 128.0), H), Matrix::Identity(d, d),
                           RowMatrix::Zero(H, d));
  std::vector<int> tail;
  for (int h = 81; h <= 96; ++h) tail.push_back(h);
  const auto c_tail = make_conditional(gp, frames_mask(H, d, tail));
  REQUIRE(c_tail->kronecker());
  CHECK(c_tail->kappa_cond() == Approx(394.9054).margin(0.01));
  CHECK(make_conditional(gp, frames_mask(H, d, blocks1({7, 19, 31, 43, 55, 67, 79, 91}, 2)))->kappa_cond() ==
        Approx(2.999878).margin(0.01));
  CHECK(make_conditional(gp, frames_mask(H, d, blocks1({11, 35, 59, 83}, 4)))->kappa_cond() ==
        Approx(9.470782).margin(0.01));
  CHECK(make_conditional(gp, frames_mask(H, d, blocks1({21, 61}, 8)))->kappa_cond() ==
        Approx(32.14768).margin(0.01));

  // The dense path agrees (it never uses the Kronecker structure).
  const auto dense = make_conditional_dense(gp, frames_mask(H, d, tail));
  CHECK_FALSE(dense->kronecker());
  CHECK(dense->kappa_cond() == Approx(c_tail->kappa_cond()).epsilon(1e-8));
  // kappa_obs = kappa(Gamma_oo) kappa(Lambda); the issue quotes ~1.7e4 here.
  CHECK(c_tail->kappa_obs() > 1e4);
  CHECK(c_tail->kappa_obs() < 3e4);
  CHECK(dense->kappa_obs() == Approx(c_tail->kappa_obs()).epsilon(1e-6));
}

TEST_CASE("conditionals equal the textbook formula on both paths, every kernel", "[gaussian]") {
  // Tolerance 1e-9 relative: every quantity here is computed by backward-stable
  // factorisations of matrices with condition numbers below ~1e4, so the
  // paths agree to ~1e-12; 1e-9 leaves room without hiding a wrong formula.
  Rng rng(20240501);
  const int H = 14, d = 3;
  const Matrix Lambda = random_spd(d, rng);
  const RowMatrix mu = random_mean(H, d, rng);
  Mask entry_mask(H, d);
  for (int k : {1, 5, 6, 7, 20, 21, 22, 23, 30, 41}) entry_mask.observed[k] = 0;
  for (KernelType type : {KernelType::laplace, KernelType::rbf, KernelType::matern32, KernelType::matern52}) {
    // The RBF kernel is nearly singular on a fine grid; a short lengthscale keeps Gamma well-posed.
    const double ls = type == KernelType::rbf ? 1.5 : 6.0;
    const GaussianProcess gp(kernel_matrix(make_kernel(type, ls, 1.7), H), Lambda, mu);
    const Batch x = gp.simulate(4, rng);
    for (const Mask& mask : {frames_mask(H, d, {2, 3, 9, 13, 14}), entry_mask}) {
      INFO("kernel " << to_string(type) << ", frame-level " << mask.frame_level());
      for (int which = 0; which < 2; ++which) {
        const auto c = which == 0 ? make_conditional(gp, mask) : make_conditional_dense(gp, mask);
        CHECK(c->kronecker() == (which == 0 && mask.frame_level()));
        const Matrix means = c->mean(x);
        for (int i = 0; i < x.n; ++i) {
          const Reference ref = textbook(gp, mask, x.seq(i));
          CHECK(rel_err(c->mean(x.seq(i)), ref.mean) < 1e-9);
          CHECK(rel_err(means.row(i).transpose(), ref.mean) < 1e-9);
          if (i == 0) CHECK(rel_err(c->covariance(), ref.cov) < 1e-9);
        }
        // Eigenvalues and kappa of Sigma_cond and Sigma_obs.
        const Reference ref = textbook(gp, mask, x.seq(0));
        Eigen::SelfAdjointEigenSolver<Matrix> es(ref.cov);
        CHECK(rel_err(c->eigenvalues(), es.eigenvalues()) < 1e-9);
        const Vector eo = Eigen::SelfAdjointEigenSolver<Matrix>(
                              gather(kron(gp.Gamma(), gp.Lambda()), mask.observed_entries(), mask.observed_entries()))
                              .eigenvalues();
        CHECK(c->kappa_obs() == Approx(eo(eo.size() - 1) / eo(0)).epsilon(1e-8));

        // Exact score (eq. 9) at a few states and times against a direct solve.
        Matrix V(3, c->n_missing());
        fill_standard_normal(rng, V.data(), static_cast<std::size_t>(V.size()));
        for (double t : {1e-3, 0.3, 2.0}) {
          const double a = vp_alpha(t), s2 = vp_sigma2(t);
          const Matrix M = a * a * ref.cov + s2 * Matrix::Identity(ref.cov.rows(), ref.cov.cols());
          const Matrix R = (V.rowwise() - a * ref.mean.transpose()).transpose();
          const Matrix want = -Eigen::LLT<Matrix>(M).solve(R).transpose();
          CHECK(rel_err(c->score(V, ref.mean, t), want) < 1e-9);
        }
      }
    }
  }
}

TEST_CASE("one factorisation serves a batch, mean(Batch) matches per-sequence means", "[gaussian]") {
  Rng rng(7);
  const int H = 20, d = 2;
  const GaussianProcess gp(kernel_matrix(make_kernel(KernelType::matern32, 5.0), H), random_spd(d, rng),
                           random_mean(H, d, rng));
  const auto c = make_conditional(gp, frames_mask(H, d, {15, 16, 17, 18, 19, 20}));
  const Batch x = gp.simulate(30, rng);
  const Matrix all = c->mean(x);
  REQUIRE(all.rows() == 30);
  REQUIRE(all.cols() == 12);
  for (int i = 0; i < x.n; ++i) CHECK((all.row(i).transpose() - c->mean(x.seq(i))).norm() < 1e-12);
  // Missing entries may hold anything (NA in R): only observed ones are read.
  Batch y = x;
  for (int i = 0; i < y.n; ++i)
    for (int k : c->missing_entries()) y.seq(i)[k] = std::nan("");
  CHECK((c->mean(y) - all).norm() == 0.0);
}

TEST_CASE("simulation: covariance Gamma (x) Lambda, mean, and repeatable seeds", "[gaussian][simulate]") {
  Rng rng(11);
  const int H = 4, d = 2, n = 40000;
  const Matrix Lambda = random_spd(d, rng);
  const RowMatrix mu = random_mean(H, d, rng);
  const GaussianProcess gp(kernel_matrix(make_kernel(KernelType::laplace, 3.0, 2.0), H), Lambda, mu);
  Rng r1(99), r2(99);
  const Batch X = gp.simulate(n, r1);
  const Batch X2 = gp.simulate(n, r2);
  CHECK(X.data == X2.data);
  const Eigen::Map<const Matrix> D(X.data.data(), H * d, n);  // one column a sequence
  const Vector m = D.rowwise().mean();
  const Matrix C = (D.colwise() - m) * (D.colwise() - m).transpose() / (n - 1);
  const Matrix S = kron(gp.Gamma(), Lambda);
  const Eigen::Map<const Vector> mu_vec(mu.data(), H * d);
  // Monte Carlo standard errors: sd(mean_k) = sqrt(S_kk / n) and
  // sd(C_kl) = sqrt((S_kk S_ll + S_kl^2) / n). 5 SE over 36 + 8 checks:
  // a false alarm has probability ~2e-5.
  for (int k = 0; k < H * d; ++k) {
    CHECK(std::abs(m(k) - mu_vec(k)) < 5 * std::sqrt(S(k, k) / n));
    for (int l = 0; l <= k; ++l)
      CHECK(std::abs(C(k, l) - S(k, l)) < 5 * std::sqrt((S(k, k) * S(l, l) + S(k, l) * S(k, l)) / n));
  }
}

TEST_CASE("conditional sampling matches mean and covariance on both paths", "[gaussian][sample]") {
  Rng rng(5);
  const int H = 10, d = 2, Z = 40000;
  const GaussianProcess gp(kernel_matrix(make_kernel(KernelType::matern52, 3.0), H), random_spd(d, rng),
                           random_mean(H, d, rng));
  Mask entry_mask(H, d);
  for (int k : {0, 7, 8, 13}) entry_mask.observed[k] = 0;
  for (const Mask& mask : {frames_mask(H, d, {4, 5, 9}), entry_mask}) {
    const auto c = make_conditional(gp, mask);
    const Batch x = gp.simulate(1, rng);
    const Vector mu = c->mean(x.seq(0));
    Rng r1(3), r2(3);
    const Matrix S = c->sample(mu, Z, r1);
    CHECK(S == c->sample(mu, Z, r2));
    REQUIRE(S.rows() == Z);
    const Vector m = S.colwise().mean().transpose();
    const Matrix C = (S.rowwise() - m.transpose()).transpose() * (S.rowwise() - m.transpose()) / (Z - 1);
    const Matrix T = c->covariance();
    for (int k = 0; k < c->n_missing(); ++k) {  // 5 SE as in the simulation test
      CHECK(std::abs(m(k) - mu(k)) < 5 * std::sqrt(T(k, k) / Z));
      for (int l = 0; l <= k; ++l)
        CHECK(std::abs(C(k, l) - T(k, l)) < 5 * std::sqrt((T(k, k) * T(l, l) + T(k, l) * T(k, l)) / Z));
    }
  }
}

TEST_CASE("latent GP of section 6.2: phi(X) + eps", "[gaussian]") {
  Rng rng(1);
  Batch X(2000, 3, 2);
  fill_standard_normal(rng, X.data.data(), X.data.size());
  Rng r0(2);
  const Batch Y0 = latent_transform(X, 0.0, r0);
  for (std::size_t k = 0; k < X.data.size(); ++k) {
    const double x = X.data[k];
    CHECK(Y0.data[k] == Approx(x + std::exp(-x * x) + 2 * std::sin(x)));
  }
  Rng r1(2);
  const Batch Y = latent_transform(X, 0.1, r1);
  double ss = 0;
  for (std::size_t k = 0; k < X.data.size(); ++k) ss += (Y.data[k] - Y0.data[k]) * (Y.data[k] - Y0.data[k]);
  // 12000 residuals of variance 0.1: the sample variance has sd 0.1 * sqrt(2 / 12000) ~ 1.3e-3.
  CHECK(ss / X.data.size() == Approx(0.1).margin(0.007));
  require_input_error([&] { latent_transform(X, -0.1, r1); }, "noise_var");
}

TEST_CASE("gaussian: bad input names the argument", "[gaussian][errors]") {
  const int H = 6, d = 2;
  const Matrix G = kernel_matrix(make_kernel(KernelType::laplace, 2.0), H);
  const Matrix L = Matrix::Identity(d, d);
  const RowMatrix mu = RowMatrix::Zero(H, d);

  Matrix Lbad = L;
  Lbad(1, 1) = -0.5;
  require_input_error([&] { GaussianProcess(G, Lbad, mu); }, "Lambda");  // not PD
  Lbad = L;
  Lbad(0, 1) = 0.3;
  require_input_error([&] { GaussianProcess(G, Lbad, mu); }, "Lambda");  // not symmetric
  require_input_error([&] { GaussianProcess(G, Matrix::Identity(2, 3), mu); }, "Lambda");  // not square
  Matrix Gbad = G;
  Gbad(2, 2) = std::nan("");
  require_input_error([&] { GaussianProcess(Gbad, L, mu); }, "Gamma");
  Gbad = Matrix::Ones(H, H);  // rank one: PSD but singular
  require_input_error([&] { GaussianProcess(Gbad, L, mu); }, "Gamma");
  // frames that repeat one another (a sinusoidal embedding of period 4: frames
  // 4 apart are one point) pass a Cholesky with pivots at rounding level (a
  // review: the conditional then had sd 1e-8 and kappa Inf, without an error)
  for (int Hs : {5, 8, 13}) {
    Kernel ks = make_kernel(KernelType::laplace, 1.0);
    ks.embedding.kind = Embedding::Kind::sinusoidal;
    ks.embedding.period = 4.0;
    require_input_error([&] { GaussianProcess(kernel_matrix(ks, Hs), Matrix::Identity(1, 1), RowMatrix::Zero(Hs, 1)); },
                        "Gamma");
    // a nugget makes it a covariance again
    Matrix Gn = kernel_matrix(ks, Hs);
    Gn.diagonal().array() += 1e-6;
    CHECK_NOTHROW(GaussianProcess(Gn, Matrix::Identity(1, 1), RowMatrix::Zero(Hs, 1)));
  }
  require_input_error([&] { GaussianProcess(G, L, RowMatrix::Zero(H, d + 1)); }, "mean");
  require_input_error([&] { GaussianProcess(G, L, RowMatrix::Zero(H - 1, d)); }, "mean");

  const GaussianProcess gp(G, L, mu);
  require_input_error([&] { make_conditional(gp, Mask(H, d, true)); }, "pattern");   // none missing
  require_input_error([&] { make_conditional(gp, Mask(H, d, false)); }, "pattern");  // all missing
  require_input_error([&] { make_conditional(gp, Mask(H + 1, d, true)); }, "pattern");
  require_input_error([&] { make_conditional_dense(gp, Mask(H, d, false)); }, "pattern");
  // a mask whose entries disagree with its shape (a review: taken as a pattern)
  Mask short_mask(H, d, true);
  short_mask.observed.resize(static_cast<std::size_t>(H));
  short_mask.observed[0] = 0;
  require_input_error([&] { make_conditional(gp, short_mask); }, "pattern");
  // covariance entries by index: inside 0..Hd-1 (a review: -7 read garbage, 100,000 crashed)
  require_input_error([&] { covariance_entries(gp, {-7}, {0}); }, "rows");
  require_input_error([&] { covariance_entries(gp, {0}, {H * d}); }, "cols");
  require_input_error([&] { gather(Matrix::Identity(3, 3), {0}, {3}); }, "cols");
  CHECK(covariance_entries(gp, {0}, {H * d - 1})(0, 0) == Approx(G(0, H - 1) * L(0, d - 1)).margin(1e-12));

  Rng rng(1);
  Mask entry(H, d);
  entry.observed[3] = 0;
  for (const Mask& mask : {frames_mask(H, d, {2}), entry}) {
    const auto c = make_conditional(gp, mask);
    std::vector<double> x(static_cast<std::size_t>(H * d), 0.5);
    x[static_cast<std::size_t>(c->observed_entries()[1])] = std::numeric_limits<double>::infinity();
    require_input_error([&] { c->mean(x.data()); }, "x");
    Batch wrong(1, H, d + 1);
    require_input_error([&] { c->mean(wrong); }, "x");
    const Vector m = Vector::Zero(c->n_missing());
    require_input_error([&] { c->score(Matrix::Zero(1, c->n_missing() + 1), m, 0.5); }, "v");
    require_input_error([&] { c->score(Matrix::Zero(1, c->n_missing()), Vector::Zero(1 + c->n_missing()), 0.5); },
                        "mu");
    require_input_error([&] { c->score(Matrix::Zero(1, c->n_missing()), m, -1.0); }, "t");
    require_input_error([&] { c->sample(m, -1, rng); }, "Z");
  }
  require_input_error([&] { gp.simulate(-1, rng); }, "n");
}
