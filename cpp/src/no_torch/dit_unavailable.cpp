// The diffusion engine's interface (dit.hpp, dit_diagnostics.hpp, backend.hpp)
// for a build of the core without LibTorch: compiled in place of src/dit/*.cpp
// (the R package's configure does so when it finds no LibTorch; CMake with
// -DDITIMPUTE_TORCH=OFF). Every entry that needs the network throws
// unavailable_error("LibTorch", ...); has_torch() is false and backend_info()
// reports no version. The Gaussian layer and the samplers driven by the exact
// score need none of this and are unchanged.
#include "ditimpute/backend.hpp"
#include "ditimpute/common.hpp"
#include "ditimpute/dit.hpp"
#include "ditimpute/dit_diagnostics.hpp"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ditimpute {

namespace {

[[noreturn]] void no_torch() {
  throw unavailable_error("LibTorch",
                          "the diffusion transformer needs LibTorch, and this build of ditimpute was made without "
                          "it.");
}

}  // namespace

bool has_torch() { return false; }

BackendInfo backend_info() {
  BackendInfo info;  // torch_version "", no CUDA
  info.threads = 0;
  return info;
}

void set_threads(int) { no_torch(); }
void release_free_memory() {}
TorchCallScope::TorchCallScope(int) { no_torch(); }
TorchCallScope::~TorchCallScope() = default;
std::string resolve_device(const std::string&) { no_torch(); }

void DiTConfig::validate() const { no_torch(); }
void DiTConfig::validate_new() const { no_torch(); }
bool DiTConfig::operator==(const DiTConfig& other) const {
  return H == other.H && d == other.d && width == other.width && depth == other.depth && heads == other.heads &&
         mlp_ratio == other.mlp_ratio && t0 == other.t0 && T == other.T && prediction == other.prediction &&
         gp == other.gp;
}
void TrainOptions::validate() const { no_torch(); }

// No model can exist in this build: create/load throw, so the members below
// are never reached on a live object; they throw all the same.
struct DiTModel::Impl {};

DiTModel::DiTModel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
DiTModel::DiTModel(DiTModel&&) noexcept = default;
DiTModel& DiTModel::operator=(DiTModel&&) noexcept = default;
DiTModel::~DiTModel() = default;

DiTModel DiTModel::create(const DiTConfig&, std::uint64_t, const std::string&) { no_torch(); }
const DiTConfig& DiTModel::config() const { no_torch(); }
std::int64_t DiTModel::n_parameters() const { no_torch(); }
int DiTModel::steps_trained() const { no_torch(); }
bool DiTModel::has_ema() const { no_torch(); }
const std::vector<LossRecord>& DiTModel::loss_history() const { no_torch(); }
std::string DiTModel::device() const { no_torch(); }
void DiTModel::set_device(const std::string&) { no_torch(); }
const GaussianProcess* DiTModel::gp() const { no_torch(); }
void DiTModel::set_gp(const GaussianProcess&) { no_torch(); }
const std::string& DiTModel::notes() const { no_torch(); }
void DiTModel::set_notes(std::string) { no_torch(); }
TrainResult DiTModel::fit(const Batch&, const Batch*, const MaskStrategy&, const TrainOptions&,
                          const ProgressCallback&) {
  no_torch();
}
Batch DiTModel::predict_noise(const Batch&, const Mask&, double, int) const { no_torch(); }
Batch DiTModel::predict_noise(const Batch&, const std::vector<Mask>&, const std::vector<double>&, int) const {
  no_torch();
}
double DiTModel::denoising_loss(const Batch&, const MaskStrategy&, const std::string&, std::uint64_t, int,
                                const std::string&) const {
  no_torch();
}
std::vector<Matrix> DiTModel::sample_missing(const Batch&, const std::vector<Mask>&, int, const SamplerOptions&,
                                             std::uint64_t, int, int) const {
  no_torch();
}
Batch DiTModel::sample(const std::vector<double>&, int, const SamplerOptions&, std::uint64_t, int) const {
  no_torch();
}
std::string DiTModel::to_bytes() const { no_torch(); }
DiTModel DiTModel::from_bytes(const std::string&, const std::string&) { no_torch(); }
void DiTModel::save(const std::string&) const { no_torch(); }
DiTModel DiTModel::load(const std::string&, const std::string&) { no_torch(); }
DiTModel DiTModel::from_archive_bytes(const std::string&, const std::string&, const std::string&) { no_torch(); }

DenoisingRisk denoising_risk(const DiTModel&, const GaussianProcess&, const Batch&, int, const std::string&,
                             std::uint64_t, int) {
  no_torch();
}

}  // namespace ditimpute
