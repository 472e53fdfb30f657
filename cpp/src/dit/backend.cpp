#include "ditimpute/backend.hpp"

#include "ditimpute/common.hpp"

#include <torch/torch.h>

#include <thread>

namespace ditimpute {

BackendInfo backend_info() {
  BackendInfo info;
  info.torch_version = std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "." +
                       std::to_string(TORCH_VERSION_PATCH);
  info.cuda_available = torch::cuda::is_available();
  info.cuda_devices = info.cuda_available ? static_cast<int>(torch::cuda::device_count()) : 0;
  info.threads = at::get_num_threads();
  return info;
}

void set_threads(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (at::get_num_threads() != threads) at::set_num_threads(threads);
}

std::string resolve_device(const std::string& device) {
  if (device == "auto") return torch::cuda::is_available() ? "cuda" : "cpu";
  if (device == "cpu") return device;
  if (device == "cuda") {
    if (!torch::cuda::is_available())
      throw input_error("device", "device \"cuda\" was asked for, but the linked LibTorch " +
                                      backend_info().torch_version +
                                      " offers only \"cpu\" (built without CUDA, or no CUDA device visible). "
                                      "Build ditimpute against a CUDA LibTorch (DITIMPUTE_LIBTORCH=<folder>, see "
                                      "README) to use a GPU.");
    return device;
  }
  throw input_error("device", "device must be \"auto\", \"cpu\" or \"cuda\", not \"" + device + "\".");
}

}  // namespace ditimpute
