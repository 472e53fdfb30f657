// Tests of the nested gradient descent (Algorithm 2) and Lemma 1's counts.
#include <catch2/catch.hpp>

#include "test_helpers.hpp"

#include "ditimpute/score.hpp"

#include <cmath>

using namespace ditimpute;

namespace {

// H = 32, laplace lengthscale 8, d = 2 with a correlated Lambda: big enough
// for a tail block to be much harder than scattered frames, small enough that
// the auxiliary loop (~kappa_obs steps per major step) runs in milliseconds.
GaussianProcess small_process() {
  Kernel k;
  k.type = KernelType::laplace;
  k.lengthscale = 8.0;
  Matrix Lambda(2, 2);
  Lambda << 1.0, 0.4, 0.4, 0.8;
  RowMatrix mu(32, 2);
  for (int h = 0; h < 32; ++h) mu.row(h) << std::sin(h / 5.0), 0.1 * h;
  return GaussianProcess(kernel_matrix(k, 32), Lambda, mu);
}

Mask tail_mask() { return Mask::from_missing_frames(32, 2, {24, 25, 26, 27, 28, 29, 30, 31}); }
Mask scattered_mask() { return Mask::from_missing_frames(32, 2, {2, 6, 10, 14, 18, 22, 26, 30}); }

struct Case {
  Batch x;
  Vector v;
};
// A sequence from the process and a state v_t drawn as the forward process
// would: alpha_t x_miss + sigma_t z.
Case make_case(const GaussianProcess& gp, const Mask& mask, double t, Rng& rng) {
  Case c;
  c.x = gp.simulate(1, rng);
  const std::vector<int> me = mask.missing_entries();
  c.v.resize(static_cast<Eigen::Index>(me.size()));
  Vector z(c.v.size());
  fill_standard_normal(rng, z.data(), static_cast<std::size_t>(z.size()));
  for (std::size_t k = 0; k < me.size(); ++k)
    c.v(k) = vp_alpha(t) * c.x.seq(0)[me[k]] + std::sqrt(vp_sigma2(t)) * z(k);
  return c;
}

using testing::require_input_error;

}  // namespace

TEST_CASE("lemma1_counts: step sizes and counts from the spectra", "[score]") {
  const GaussianProcess gp = small_process();
  Mask entry(32, 2);
  for (int k : {3, 10, 11, 40, 41, 50, 63}) entry.observed[k] = 0;
  for (const Mask& mask : {tail_mask(), entry}) {
    const double t = 0.4, eps = 1e-5;
    const Lemma1Counts L = lemma1_counts(gp, mask, t, eps);
    // Direct spectra of the dense blocks.
    const std::vector<int> oe = mask.observed_entries();
    const Vector eo = Eigen::SelfAdjointEigenSolver<Matrix>(covariance_entries(gp, oe, oe)).eigenvalues();
    const Vector ec = make_conditional_dense(gp, mask)->eigenvalues();
    const double a2 = std::exp(-t), s2 = 1 - std::exp(-t);
    CHECK(L.theta == Approx(2.0 / (eo(0) + eo(eo.size() - 1))).epsilon(1e-9));
    CHECK(L.eta == Approx(2.0 / (a2 * ec(0) + a2 * ec(ec.size() - 1) + 2 * s2)).epsilon(1e-9));
    CHECK(L.kappa_obs == Approx(eo(eo.size() - 1) / eo(0)).epsilon(1e-9));
    CHECK(L.kappa_cond == Approx(ec(ec.size() - 1) / ec(0)).epsilon(1e-9));
    CHECK(L.kappa_t == Approx((a2 * ec(ec.size() - 1) + s2) / (a2 * ec(0) + s2)).epsilon(1e-9));
    CHECK(L.kappa_t <= L.kappa_cond);
    CHECK(L.K_aux == static_cast<long long>(std::ceil((L.kappa_obs + 1) / 2 *
                                                      std::log(64 * L.kappa_obs / (std::sqrt(s2) * eps)))));
    CHECK(L.K == static_cast<long long>(std::ceil(L.kappa_t * std::log(64 * L.kappa_t * L.kappa_obs / eps))));
  }
}

TEST_CASE("nested GD reaches the exact score, iterations grow with kappa", "[score]") {
  const GaussianProcess gp = small_process();
  Rng rng(42);
  const double tol = 1e-6;
  NestedGDOptions opt;
  opt.tol = tol;
  for (double t : {0.2, 2.0}) {
    const Mask tail = tail_mask(), scat = scattered_mask();
    const Case ct = make_case(gp, tail, t, rng), cs = make_case(gp, scat, t, rng);
    const NestedGDResult rt = score_nested_gd(gp, tail, ct.x.seq(0), ct.v, t, opt);
    const NestedGDResult rs = score_nested_gd(gp, scat, cs.x.seq(0), cs.v, t, opt);
    INFO("t = " << t << ": tail kappa_t " << rt.lemma.kappa_t << " major " << rt.major_iterations << " aux "
                << rt.aux_iterations_total << "; scattered kappa_t " << rs.lemma.kappa_t << " major "
                << rs.major_iterations << " aux " << rs.aux_iterations_total);
    for (const NestedGDResult* r : {&rt, &rs}) {
      CHECK(r->converged);
      CHECK(r->rel_error <= tol);
      // The stopping rules are the convergence bounds of Lemma 1's proof, so
      // the counts used stay within the (constant-1) predictions.
      CHECK(r->major_iterations <= r->lemma.K);
      CHECK(static_cast<long long>(r->aux_iterations.size()) == r->major_iterations + 1);
      for (long long n : r->aux_iterations) CHECK(n <= r->lemma.K_aux);
      CHECK(r->eta == r->lemma.eta);
    }
    // The tail block is the harder pattern in both condition numbers, and it
    // costs more of both kinds of iteration.
    CHECK(rt.lemma.kappa_t > rs.lemma.kappa_t);
    CHECK(rt.lemma.kappa_obs > rs.lemma.kappa_obs);
    CHECK(rt.major_iterations > rs.major_iterations);
    CHECK(rt.aux_iterations_total > rs.aux_iterations_total);
  }
}

TEST_CASE("major iterations scale like kappa_t log(1/tol)", "[score]") {
  // GD with eta = 2/(lmin + lmax) contracts by (kappa_t - 1)/(kappa_t + 1), so
  // reaching tol from s = 0 takes about (kappa_t + 1)/2 log(1/tol) steps when
  // the start has weight on the slowest eigenvector (it does here: v is
  // random). Check the measured count lies within a factor 3 of that.
  const GaussianProcess gp = small_process();
  Rng rng(3);
  NestedGDOptions opt;
  opt.tol = 1e-8;
  for (const Mask& mask : {tail_mask(), scattered_mask()}) {
    const double t = 0.3;
    const Case c = make_case(gp, mask, t, rng);
    const NestedGDResult r = score_nested_gd(gp, mask, c.x.seq(0), c.v, t, opt);
    const double expected = (r.lemma.kappa_t + 1) / 2 * std::log(1 / opt.tol);
    INFO("kappa_t " << r.lemma.kappa_t << " major " << r.major_iterations << " expected ~" << expected);
    CHECK(r.rel_error <= opt.tol);
    CHECK(r.major_iterations > expected / 3);
    CHECK(r.major_iterations < expected * 3);
  }
}

TEST_CASE("fixed counts run Algorithm 2 verbatim", "[score]") {
  const GaussianProcess gp = small_process();
  Rng rng(8);
  const Mask mask = scattered_mask();
  const double t = 0.5;
  const Case c = make_case(gp, mask, t, rng);
  const Lemma1Counts L = lemma1_counts(gp, mask, t, 1e-6);
  NestedGDOptions opt;
  opt.tol = 1e-6;
  opt.K = L.K;
  opt.K_aux = L.K_aux;
  const NestedGDResult full = score_nested_gd(gp, mask, c.x.seq(0), c.v, t, opt);
  CHECK(full.major_iterations == L.K);
  CHECK(full.mean_aux_iterations == L.K_aux);
  CHECK(full.aux_iterations_total == (L.K + 1) * L.K_aux);
  CHECK(full.rel_error <= 1e-6);  // Lemma 1's counts suffice here
  opt.K = 2;
  opt.K_aux = 2;
  const NestedGDResult short_run = score_nested_gd(gp, mask, c.x.seq(0), c.v, t, opt);
  CHECK(short_run.major_iterations == 2);
  CHECK(short_run.rel_error > 1e-3);  // two steps are far from the answer
  CHECK_FALSE(short_run.converged);
}

TEST_CASE("nested GD on an entry-level mask", "[score]") {
  const GaussianProcess gp = small_process();
  Rng rng(9);
  Mask mask(32, 2);
  for (int k : {5, 20, 21, 22, 23, 24, 40, 62, 63}) mask.observed[k] = 0;
  const double t = 0.3;
  const Case c = make_case(gp, mask, t, rng);
  NestedGDOptions opt;
  opt.tol = 1e-7;
  const NestedGDResult r = score_nested_gd(gp, mask, c.x.seq(0), c.v, t, opt);
  CHECK(r.converged);
  CHECK(r.rel_error <= 1e-7);
}

TEST_CASE("nested GD: bad input names the argument", "[score][errors]") {
  const GaussianProcess gp = small_process();
  Rng rng(1);
  const Mask mask = tail_mask();
  const Case c = make_case(gp, mask, 0.5, rng);
  const double* x = c.x.seq(0);
  NestedGDOptions opt;
  require_input_error([&] { score_nested_gd(gp, mask, x, c.v, 0.0, opt); }, "t");
  require_input_error([&] { lemma1_counts(gp, mask, -1.0, 1e-3); }, "t");
  require_input_error([&] { lemma1_counts(gp, mask, 1.0, 0.0); }, "eps");
  opt.tol = 2.0;
  require_input_error([&] { score_nested_gd(gp, mask, x, c.v, 0.5, opt); }, "tol");
  opt = NestedGDOptions();
  opt.K = 5;
  require_input_error([&] { score_nested_gd(gp, mask, x, c.v, 0.5, opt); }, "K");
  opt = NestedGDOptions();
  require_input_error([&] { score_nested_gd(gp, mask, x, Vector::Zero(3), 0.5, opt); }, "v");
  Batch bad = c.x;
  bad.seq(0)[0] = std::nan("");
  require_input_error([&] { score_nested_gd(gp, mask, bad.seq(0), c.v, 0.5, opt); }, "x");
  require_input_error([&] { score_nested_gd(gp, Mask(32, 2, true), x, c.v, 0.5, opt); }, "pattern");
  require_input_error([&] { lemma1_counts(gp, Mask(32, 3, false), 0.5, 1e-3); }, "pattern");
}
