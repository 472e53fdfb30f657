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

// False when the core was built without LibTorch (src/no_torch/ in place of
// src/dit/): then backend_info() reports no version and every function of
// dit.hpp, dit_diagnostics.hpp and this header that needs the network throws
// unavailable_error("LibTorch", ...).
bool has_torch();
BackendInfo backend_info();
// Sets LibTorch's intra-op thread count; threads <= 0 means every hardware core.
// The first call also tunes glibc's allocator for tensor work (see backend.cpp).
void set_threads(int threads);
// One user-level call into LibTorch (sampling, training, a loss or noise
// evaluation): sets the thread count (set_threads) and, when the outermost
// scope ends, gives the freed heap pages back to the system (glibc only). The
// allocator tuning keeps freed tensor memory for reuse by the next network
// call of the same call; between calls that memory is not kept, so a host
// that loops over calls (an R session) does not see its resident memory creep
// up with its own garbage interleaved on the same heap (bench/results/soak.md).
class TorchCallScope {
 public:
  explicit TorchCallScope(int threads);
  ~TorchCallScope();
  TorchCallScope(const TorchCallScope&) = delete;
  TorchCallScope& operator=(const TorchCallScope&) = delete;
};
// Returns free heap pages to the system now (malloc_trim; glibc only, else a
// no-op). Called by the outermost TorchCallScope.
void release_free_memory();
// "auto" -> "cuda" when the linked LibTorch has CUDA and a device, else "cpu";
// "cpu" and "cuda" are checked (input_error "device" for cuda without CUDA).
std::string resolve_device(const std::string& device);

}  // namespace ditimpute
