// The whole-series block loop (series_blocks.hpp): which windows are imputed,
// what each window is conditioned on, the draw layout, seeds, and the law of
// the paths when one window covers the series.
#include <catch2/catch.hpp>

#include "ditimpute/impute.hpp"
#include "ditimpute/series_blocks.hpp"

#include <cmath>
#include <limits>
#include <vector>

using namespace ditimpute;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

// A window imputer that records what it is given and fills missing entry a of
// case z with 1000 * (call number) + z + a / 1000, so every value says which
// call and which path drew it.
class RecordingSampler : public CaseSampler {
 public:
  mutable std::vector<Batch> seen;
  std::vector<Matrix> draw(const Batch& x, const std::vector<Mask>& masks, int Z, std::uint64_t, int) const override {
    seen.push_back(x);
    std::vector<Matrix> out(masks.size());
    const double call = static_cast<double>(seen.size());
    for (std::size_t i = 0; i < masks.size(); ++i) {
      out[i].resize(Z, masks[i].n_missing());
      for (int z = 0; z < Z; ++z)
        for (int a = 0; a < masks[i].n_missing(); ++a) out[i](z, a) = 1000.0 * call + static_cast<double>(i) + a / 1000.0;
    }
    return out;
  }
  std::string name() const override { return "recording"; }
};

}  // namespace

TEST_CASE("The block loop draws each block once, conditioned on what its path holds and the data ahead", "[series_blocks]") {
  // 20 frames, d = 2, H = 8, past 2, future 2 -> blocks of 4 frames; the
  // block [4k, 4k + 4) is drawn from the window [4k - 2, 4k + 6) (shifted to
  // [0, 8) at the start).
  RowMatrix y(20, 2);
  for (int t = 0; t < 20; ++t) y.row(t) << t, -t;
  y(2, 0) = kNaN;                         // block 0, window [0, 8)
  y(6, 1) = kNaN;                         // block 1, window [2, 10)
  y(10, 0) = y(10, 1) = y(11, 0) = kNaN;  // block 2, window [6, 14)
  RecordingSampler rec;
  SeriesBlockOptions o;
  o.H = 8;
  o.past = 2;
  o.future = 2;
  o.n_samples = 3;
  const SeriesPaths p = sample_series_paths(rec, y, o);
  CHECK(p.block == 4);
  CHECK(p.starts == std::vector<int>{0, 2, 6});  // blocks 3 and 4 have nothing missing
  REQUIRE(rec.seen.size() == 3);
  CHECK(rec.seen[0].n == 3);
  CHECK(rec.seen[0].H == 8);
  for (int z = 0; z < 3; ++z) {
    // Window 0 draws frame 6 too (ahead of its block) but does not keep it:
    // window 1 sees frame 6 missing and path z's own draw at frame 2.
    CHECK(std::isnan(rec.seen[0].at(z, 6, 1)));
    CHECK(rec.seen[1].at(z, 0, 0) == Approx(1000.0 + z));
    CHECK(std::isnan(rec.seen[1].at(z, 4, 1)));
    CHECK(rec.seen[1].at(z, 7, 0) == 9.0);  // observed frame 9, ahead of block 1
    // Window 2 holds path z's draw of frame 6 from window 1.
    CHECK(rec.seen[2].at(z, 0, 1) == Approx(2000.0 + z));
  }
  // Samples: Z x m in frame-major order (2,0), (6,1), (10,0), (10,1), (11,0).
  REQUIRE(p.samples.rows() == 3);
  REQUIRE(p.samples.cols() == 5);
  for (int z = 0; z < 3; ++z) {
    CHECK(p.samples(z, 0) == Approx(1000.0 + z));
    CHECK(p.samples(z, 1) == Approx(2000.0 + z));
    CHECK(p.samples(z, 2) == Approx(3000.0 + z));
    CHECK(p.samples(z, 4) == Approx(3000.0 + z + 0.002));
  }
}

TEST_CASE("The block loop checks its input", "[series_blocks]") {
  RecordingSampler rec;
  RowMatrix y = RowMatrix::Constant(10, 1, 1.0);
  y(3, 0) = kNaN;
  SeriesBlockOptions o;
  o.H = 11;
  CHECK_THROWS_AS(sample_series_paths(rec, y, o), input_error);  // H > T
  o.H = 4;
  o.past = 2;
  o.future = 2;
  CHECK_THROWS_AS(sample_series_paths(rec, y, o), input_error);  // no frame left for a block
  o.past = o.future = -1;
  o.n_samples = 0;
  CHECK_THROWS_AS(sample_series_paths(rec, y, o), input_error);
  o.n_samples = 2;
  RowMatrix empty_start = y;
  for (int t = 0; t < 4; ++t) empty_start(t, 0) = kNaN;  // the first window holds nothing
  try {
    sample_series_paths(rec, empty_start, o);
    FAIL("no error for a window with no value");
  } catch (const input_error& e) {
    CHECK(e.arg() == "x");
  }
  y(5, 0) = std::numeric_limits<double>::infinity();
  CHECK_THROWS_AS(sample_series_paths(rec, y, o), input_error);
}

TEST_CASE("One window over the whole series: the paths follow the exact conditional law", "[series_blocks]") {
  // With H = T and no past or future the loop makes one call to the exact GP
  // sampler, so the paths' mean and sd must match the exact conditional. 2,000 paths: the mean's MC
  // SE is sd / sqrt(2000) = 0.022 sd, so 4 SE = 0.09 sd; the sd's relative SE
  // is about 1 / sqrt(2 * 2000) = 0.016, so 4 SE = 0.064.
  const int T = 24, d = 2;
  Kernel k;
  k.type = KernelType::laplace;
  k.lengthscale = 8.0;
  Matrix Lambda = Matrix::Identity(d, d);
  Lambda(0, 1) = Lambda(1, 0) = 0.6;
  const GaussianProcess gp(kernel_matrix(k, T), Lambda, RowMatrix::Zero(T, d));
  Rng rng(7);
  Batch x = gp.simulate(1, rng);
  for (int t = 9; t < 15; ++t) x.at(0, t, 0) = kNaN;
  x.at(0, 3, 1) = kNaN;
  const RowMatrix y = x.matrix(0);
  const ExactGPSampler exact(gp);
  ImputeOptions io;
  io.n_samples = 2000;
  io.level = 0.9;
  io.seed = 11;
  io.threads = 1;
  SeriesBlockOptions b;
  b.H = T;
  b.past = b.future = 0;
  const SeriesImputation s = impute_series_blocks(exact, y, b, io);
  const std::vector<Mask> masks = masks_from_nan(x);
  const GaussianLaw law = exact.laws(x, masks, 0.9, 1).front();
  const Matrix& S = s.imputation.samples.front();
  REQUIRE(S.cols() == law.mean.size());
  const Vector mean = S.colwise().mean().transpose();
  const Vector sd = ((S.rowwise() - mean.transpose()).colwise().squaredNorm() / (S.rows() - 1.0)).cwiseSqrt().transpose();
  for (Eigen::Index a = 0; a < S.cols(); ++a) {
    CHECK(std::abs(mean(a) - law.mean(a)) <= 0.09 * law.sd(a));
    CHECK(std::abs(sd(a) / law.sd(a) - 1.0) <= 0.064);
  }
  // The summaries are the pipeline's: observed entries untouched, intervals
  // only on missing entries and around the point estimate.
  CHECK(s.imputation.point.at(0, 0, 0) == y(0, 0));
  CHECK(std::isnan(s.imputation.lower.at(0, 0, 0)));
  CHECK(s.imputation.lower.at(0, 10, 0) < s.imputation.point.at(0, 10, 0));
  CHECK(s.imputation.upper.at(0, 10, 0) > s.imputation.point.at(0, 10, 0));
  // Same seed, other thread count: the same paths.
  io.threads = 2;
  const SeriesImputation again = impute_series_blocks(exact, y, b, io);
  CHECK((again.imputation.samples.front() - S).cwiseAbs().maxCoeff() == 0.0);
}

TEST_CASE("Windows of the exact GP bridge a gap as the whole-series conditional does", "[series_blocks]") {
  // A Markov (Laplace kernel = OU) series, d = 1, H = 16, past = future = 4:
  // the gap 20-25 starts in block [16, 24), drawn from the window [12, 28),
  // which holds the observed frames 19 and 26 on both sides of the gap; the
  // rest of the gap is drawn by the next window given the path's frame 23
  // and frame 26. For a Markov process that is the exact conditional, drawn
  // in two steps: the paths' means must match the whole-series conditional
  // within 4 MC SE (1,000 paths: 4 / sqrt(1000) = 0.13 sd) and their sds
  // within 4 SE of an sd (relative SE 1 / sqrt(2 * 1000): 0.09).
  const int T = 48;
  Kernel k;
  k.type = KernelType::laplace;
  k.lengthscale = 6.0;
  const GaussianProcess whole(kernel_matrix(k, T), Matrix::Identity(1, 1), RowMatrix::Zero(T, 1));
  const GaussianProcess window(kernel_matrix(k, 16), Matrix::Identity(1, 1), RowMatrix::Zero(16, 1));
  Rng rng(3);
  Batch x = whole.simulate(1, rng);
  for (int t = 20; t < 26; ++t) x.at(0, t, 0) = kNaN;  // a 6-frame gap
  const ExactGPSampler exact_window(window);
  ImputeOptions io;
  io.n_samples = 1000;
  io.seed = 5;
  SeriesBlockOptions b;
  b.H = 16;
  const SeriesImputation s = impute_series_blocks(exact_window, x.matrix(0), b, io);
  const GaussianLaw law = ExactGPSampler(whole).laws(x, masks_from_nan(x), 0.95, 1).front();
  const Matrix& S = s.imputation.samples.front();
  const Vector mean = S.colwise().mean().transpose();
  const Vector sd = ((S.rowwise() - mean.transpose()).colwise().squaredNorm() / (S.rows() - 1.0)).cwiseSqrt().transpose();
  REQUIRE(S.cols() == 6);
  for (Eigen::Index a = 0; a < S.cols(); ++a) {
    CHECK(std::abs(mean(a) - law.mean(a)) <= 0.13 * law.sd(a));
    CHECK(std::abs(sd(a) / law.sd(a) - 1.0) <= 0.09);
  }
}
