// The core built without LibTorch (-DDITIMPUTE_TORCH=OFF): the diffusion
// engine's entries throw unavailable_error naming LibTorch, and the Gaussian
// layer, oracle sampler included, works as in the full build.
#include "ditimpute/backend.hpp"
#include "ditimpute/dit.hpp"
#include "ditimpute/gaussian.hpp"
#include "ditimpute/impute.hpp"
#include "ditimpute/kernel.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>

using namespace ditimpute;

TEST_CASE("without LibTorch the DiT entries throw unavailable_error naming LibTorch", "[no_torch]") {
  CHECK_FALSE(has_torch());
  const BackendInfo b = backend_info();
  CHECK(b.torch_version.empty());
  CHECK_FALSE(b.cuda_available);

  DiTConfig cfg;
  cfg.H = 8;
  cfg.d = 2;
  auto feature_of = [](auto&& f) -> std::string {
    try {
      f();
    } catch (const unavailable_error& e) {
      return e.feature();
    }
    return "no error";
  };
  CHECK(feature_of([&] { cfg.validate(); }) == "LibTorch");
  CHECK(feature_of([&] { DiTModel::create(cfg, 1, "cpu"); }) == "LibTorch");
  CHECK(feature_of([&] { DiTModel::load("model.dit", "cpu"); }) == "LibTorch");
  CHECK(feature_of([&] { DiTModel::from_bytes("bytes", "cpu"); }) == "LibTorch");
  CHECK(feature_of([&] { resolve_device("auto"); }) == "LibTorch");
  CHECK(feature_of([&] { TorchCallScope scope(1); }) == "LibTorch");
}

TEST_CASE("without LibTorch the exact and oracle imputers still run", "[no_torch]") {
  const int H = 12, d = 2;
  Kernel k;
  k.type = KernelType::laplace;
  k.lengthscale = 4;
  const GaussianProcess gp(kernel_matrix(k, H), Matrix::Identity(d, d), RowMatrix::Zero(H, d));
  Batch x(1, H, d);
  for (int h = 0; h < H; ++h)
    for (int j = 0; j < d; ++j) x.at(0, h, j) = h < 9 ? std::sin(0.3 * h + j) : std::numeric_limits<double>::quiet_NaN();
  ImputeOptions o;
  o.n_samples = 40;
  o.seed = 1;
  o.threads = 1;
  const Imputation exact = impute(ExactGPSampler(gp), x, o);
  SamplerOptions so;
  const Imputation oracle = impute(OracleGPSampler(gp, so), x, o);
  for (int h = 0; h < H; ++h)
    for (int j = 0; j < d; ++j) {
      if (h < 9) {
        CHECK(exact.point.at(0, h, j) == x.at(0, h, j));
        CHECK(oracle.point.at(0, h, j) == x.at(0, h, j));
      } else {
        CHECK(std::isfinite(exact.point.at(0, h, j)));
        CHECK(std::isfinite(oracle.point.at(0, h, j)));
      }
    }
}
