// What the linked LibTorch offers, and the thread count it uses. Torch-free
// header; implemented in cpp/src/dit/backend.cpp.
#pragma once

#include <string>

namespace ditimpute {

struct BackendInfo {
  std::string torch_version;
  bool cuda_available = false;
  int cuda_devices = 0;
  int threads = 1;
};

BackendInfo backend_info();
// Sets LibTorch's intra-op thread count; threads <= 0 means every hardware core.
// The first call also tunes glibc's allocator for tensor work (see backend.cpp).
void set_threads(int threads);
// "auto" -> "cuda" when the linked LibTorch has CUDA and a device, else "cpu";
// "cpu" and "cuda" are checked (input_error "device" for cuda without CUDA).
std::string resolve_device(const std::string& device);

}  // namespace ditimpute
