// The DiT file format: one self-describing binary blob used for save(),
// to_bytes() and checkpoints.
//
//   magic "DITIMPUTE-DIT\n\x1a\0" (16 bytes), u32 version, u32 0x01020304 (byte order)
//   sections: 4-byte tag, u64 length, payload
//     CONF  text "key=value\n" lines (architecture, time range, steps)
//     WGTS  weights: u32 count, then per tensor: name, u32 ndim, i64 dims, float32 data
//     EMAW  EMA weights (optional), as WGTS
//     HIST  u64 count, then per record: i32 step, f64 train loss, f64 val loss
//     TRST  training state of a checkpoint (optional)
//     GPRI  the GP of a GP-informed model (version 2): u32 H, u32 d, f64 Gamma
//           (H x H), Lambda (d x d), mean (H x d, row-major)
//     NOTE  the front end's opaque bytes (optional; DiTModel::notes). Older
//           releases skip it, so it needs no new version.
//     END.  u64 FNV-1a hash of every byte before this section
// Unknown sections are skipped, so later versions can add some.
#include "model_impl.hpp"

#include <cmath>
#include <cstring>
#include <sstream>

namespace ditimpute {
namespace detail {

namespace {

const char kMagic[16] = {'D', 'I', 'T', 'I', 'M', 'P', 'U', 'T', 'E', '-', 'D', 'I', 'T', '\n', '\x1a', '\0'};
// Version 2 adds GP-informed models (CONF "gp=", section GPRI), version 3
// entry tokens (CONF "tokens=entry"); a file gets the lowest version that
// holds it (models with frame tokens and no GP are still version 1), so older
// releases read what they can and name the version of what they cannot.
constexpr std::uint32_t kVersion = 3;
constexpr std::uint32_t kByteOrder = 0x01020304u;

std::uint64_t fnv1a(const char* p, std::size_t n) {
  std::uint64_t h = 1469598103934665603ull;
  for (std::size_t i = 0; i < n; ++i) {
    h ^= static_cast<unsigned char>(p[i]);
    h *= 1099511628211ull;
  }
  return h;
}

class Writer {
 public:
  template <class T>
  void put(T v) { out.append(reinterpret_cast<const char*>(&v), sizeof(T)); }
  void put_str(const std::string& s) { put<std::uint64_t>(s.size()); out += s; }
  void section(const char tag[4], const std::string& payload) {
    out.append(tag, 4);
    put_str(payload);
  }
  std::string out;
};

class Reader {
 public:
  Reader(const char* p, std::size_t n, const std::string& arg) : p_(p), n_(n), arg_(arg) {}
  template <class T>
  T get() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, p_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string get_str() {
    auto len = get<std::uint64_t>();
    need(len);
    std::string s(p_ + pos_, len);
    pos_ += len;
    return s;
  }
  void get_raw(void* dst, std::size_t len) {
    need(len);
    std::memcpy(dst, p_ + pos_, len);
    pos_ += len;
  }
  bool done() const { return pos_ == n_; }
  [[noreturn]] void fail(const std::string& what) const {
    throw input_error(arg_, "not a valid ditimpute DiT model: " + what + ".");
  }

 private:
  void need(std::uint64_t len) const {
    if (len > n_ - pos_) fail("the data end early (truncated?)");
  }
  const char* p_;
  std::size_t n_, pos_ = 0;
  std::string arg_;
};

std::string num(double v) {
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}

std::string write_tensors(const torch::nn::Module& net) {
  Writer w;
  auto params = net.named_parameters();
  w.put<std::uint32_t>(static_cast<std::uint32_t>(params.size()));
  for (const auto& kv : params) {
    auto t = kv.value().detach().to(torch::kCPU, torch::kFloat32).contiguous();
    w.put_str(kv.key());
    w.put<std::uint32_t>(static_cast<std::uint32_t>(t.dim()));
    for (auto s : t.sizes()) w.put<std::int64_t>(s);
    w.out.append(reinterpret_cast<const char*>(t.data_ptr<float>()), t.numel() * sizeof(float));
  }
  return w.out;
}

std::vector<std::pair<std::string, torch::Tensor>> read_tensors(const std::string& payload, const std::string& arg) {
  Reader r(payload.data(), payload.size(), arg);
  std::vector<std::pair<std::string, torch::Tensor>> out;
  auto count = r.get<std::uint32_t>();
  for (std::uint32_t i = 0; i < count; ++i) {
    auto name = r.get_str();
    auto ndim = r.get<std::uint32_t>();
    if (ndim > 8) r.fail("a tensor has " + std::to_string(ndim) + " dimensions");
    std::vector<std::int64_t> dims(ndim);
    std::int64_t numel = 1;
    for (auto& s : dims) {
      s = r.get<std::int64_t>();
      if (s < 0 || s > (std::int64_t{1} << 32)) r.fail("a tensor has an impossible size");
      numel *= s;
    }
    if (numel > (std::int64_t{1} << 34)) r.fail("a tensor has an impossible size");
    auto t = torch::empty(dims, torch::kFloat32);
    r.get_raw(t.data_ptr<float>(), static_cast<std::size_t>(numel) * sizeof(float));
    out.emplace_back(std::move(name), t);
  }
  if (!r.done()) r.fail("a weight section has trailing bytes");
  return out;
}

std::string write_train_state(const TrainState& s) {
  Writer w;
  w.put<std::int32_t>(s.step);
  w.put_str(s.optimizer);
  w.put_str(s.rng);
  w.put<std::uint64_t>(s.perm.size());
  for (auto i : s.perm) w.put<std::int32_t>(i);
  w.put<std::uint64_t>(s.pos);
  w.put_str(s.optimizer_state);
  return w.out;
}

TrainState read_train_state(const std::string& payload, const std::string& arg) {
  Reader r(payload.data(), payload.size(), arg);
  TrainState s;
  s.step = r.get<std::int32_t>();
  s.optimizer = r.get_str();
  s.rng = r.get_str();
  auto n = r.get<std::uint64_t>();
  if (n > payload.size()) r.fail("the training state is inconsistent");
  s.perm.resize(n);
  for (auto& i : s.perm) i = r.get<std::int32_t>();
  s.pos = r.get<std::uint64_t>();
  s.optimizer_state = r.get_str();
  if (!r.done()) r.fail("the training state has trailing bytes");
  return s;
}

DiTConfig parse_config(const std::string& text, int& steps_trained, const std::string& arg) {
  DiTConfig c;
  c.prediction = "eps";
  std::istringstream is(text);
  std::string line;
  int seen = 0;
  while (std::getline(is, line)) {
    auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    try {
      if (key == "H") c.H = std::stoi(value), ++seen;
      else if (key == "d") c.d = std::stoi(value), ++seen;
      else if (key == "width") c.width = std::stoi(value), ++seen;
      else if (key == "depth") c.depth = std::stoi(value), ++seen;
      else if (key == "heads") c.heads = std::stoi(value), ++seen;
      else if (key == "mlp_ratio") c.mlp_ratio = std::stod(value), ++seen;
      else if (key == "t0") c.t0 = std::stod(value), ++seen;
      else if (key == "T") c.T = std::stod(value), ++seen;
      else if (key == "steps_trained") steps_trained = std::stoi(value), ++seen;
      else if (key == "prediction") c.prediction = value;  // absent in files of 0.1 models: "eps"
      else if (key == "gp") c.gp = value;  // absent in version-1 files: ""
      else if (key == "tokens") c.tokens = value;  // absent before entry tokens: "frame"

    } catch (const std::exception&) {
      throw input_error(arg, "not a valid ditimpute DiT model: config entry '" + line + "' is unreadable.");
    }
  }
  if (seen != 9) throw input_error(arg, "not a valid ditimpute DiT model: the config is incomplete.");
  try {
    c.validate();
  } catch (const input_error& e) {
    throw input_error(arg, std::string("not a valid ditimpute DiT model: ") + e.what());
  }
  return c;
}

}  // namespace

std::string write_archive(const DiTModel::Impl& m, const TrainState* state) {
  const auto& c = m.config;
  std::string conf = "format=ditimpute-dit\nH=" + std::to_string(c.H) + "\nd=" + std::to_string(c.d) +
                     "\nwidth=" + std::to_string(c.width) + "\ndepth=" + std::to_string(c.depth) +
                     "\nheads=" + std::to_string(c.heads) + "\nmlp_ratio=" + num(c.mlp_ratio) + "\nt0=" + num(c.t0) +
                     "\nT=" + num(c.T) + "\nsteps_trained=" + std::to_string(m.steps_trained) +
                     "\nprediction=" + c.prediction + "\n" + (c.gp.empty() ? std::string() : "gp=" + c.gp + "\n") +
                     (c.tokens == "frame" ? std::string() : "tokens=" + c.tokens + "\n");
  Writer w;
  w.out.append(kMagic, sizeof kMagic);
  w.put<std::uint32_t>(c.tokens != "frame" ? 3u : c.gp.empty() ? 1u : 2u);
  w.put<std::uint32_t>(kByteOrder);
  w.section("CONF", conf);
  w.section("WGTS", write_tensors(*m.net));
  if (m.ema) w.section("EMAW", write_tensors(*m.ema));
  Writer h;
  h.put<std::uint64_t>(m.history.size());
  for (const auto& r : m.history) {
    h.put<std::int32_t>(r.step);
    h.put<double>(r.train_loss);
    h.put<double>(r.val_loss);
  }
  w.section("HIST", h.out);
  if (state) w.section("TRST", write_train_state(*state));
  if (m.gp) {
    Writer g;
    const auto& gp = *m.gp;
    g.put<std::uint32_t>(static_cast<std::uint32_t>(gp.H()));
    g.put<std::uint32_t>(static_cast<std::uint32_t>(gp.d()));
    for (int j = 0; j < gp.H(); ++j)
      for (int i = 0; i < gp.H(); ++i) g.put<double>(gp.Gamma()(i, j));
    for (int j = 0; j < gp.d(); ++j)
      for (int i = 0; i < gp.d(); ++i) g.put<double>(gp.Lambda()(i, j));
    for (int h = 0; h < gp.H(); ++h)
      for (int j = 0; j < gp.d(); ++j) g.put<double>(gp.mean()(h, j));
    w.section("GPRI", g.out);
  }
  if (!m.notes.empty()) w.section("NOTE", m.notes);
  const auto hash = fnv1a(w.out.data(), w.out.size());
  w.out.append("END.", 4);
  w.put<std::uint64_t>(sizeof hash);
  w.put<std::uint64_t>(hash);
  return w.out;
}

Archive read_archive(const std::string& bytes, const std::string& arg) {
  if (bytes.size() < sizeof kMagic + 8 || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    throw input_error(arg, "not a ditimpute DiT model (the header is missing).");
  Reader r(bytes.data(), bytes.size(), arg);
  char magic[sizeof kMagic];
  r.get_raw(magic, sizeof magic);
  const auto version = r.get<std::uint32_t>();
  if (version > kVersion)
    throw input_error(arg, "the DiT model was written by a newer ditimpute (format version " +
                               std::to_string(version) + ", this one reads up to " + std::to_string(kVersion) + ").");
  if (r.get<std::uint32_t>() != kByteOrder)
    throw input_error(arg, "the DiT model was written on a machine with another byte order.");

  Archive a;
  bool have_conf = false, have_weights = false, have_hist = false, have_end = false;
  std::string weights, ema, gp_payload;
  std::size_t offset = sizeof kMagic + 8;
  while (!r.done()) {
    char tag[4];
    r.get_raw(tag, 4);
    const std::string t(tag, 4);
    if (t == "END.") {
      const auto hash = fnv1a(bytes.data(), offset);
      if (r.get<std::uint64_t>() != 8 || r.get<std::uint64_t>() != hash)
        throw input_error(arg, "the DiT model is corrupt (checksum mismatch).");
      if (!r.done()) r.fail("there are bytes after the end marker");
      have_end = true;
      break;
    }
    auto payload = r.get_str();
    offset += 4 + 8 + payload.size();
    if (t == "CONF") a.config = parse_config(payload, a.steps_trained, arg), have_conf = true;
    else if (t == "WGTS") weights = std::move(payload), have_weights = true;
    else if (t == "EMAW") ema = std::move(payload);
    else if (t == "HIST") {
      Reader h(payload.data(), payload.size(), arg);
      auto n = h.get<std::uint64_t>();
      if (n > payload.size()) h.fail("the loss history is inconsistent");
      a.history.resize(n);
      for (auto& rec : a.history) {
        rec.step = h.get<std::int32_t>();
        rec.train_loss = h.get<double>();
        rec.val_loss = h.get<double>();
      }
      have_hist = true;
    } else if (t == "GPRI") {
      gp_payload = std::move(payload);
    } else if (t == "NOTE") {
      a.notes = std::move(payload);
    } else if (t == "TRST") {
      a.train_state = read_train_state(payload, arg);
      a.has_train_state = true;
    }
  }
  if (!have_end) r.fail("the end marker is missing (truncated?)");
  if (!have_conf || !have_weights || !have_hist) r.fail("a required section is missing");
  // Tensors are parsed after the checksum passed, so a flipped byte never
  // reaches them.
  a.weights = read_tensors(weights, arg);
  if (!gp_payload.empty()) {
    Reader g(gp_payload.data(), gp_payload.size(), arg);
    const auto H = g.get<std::uint32_t>(), d = g.get<std::uint32_t>();
    if (static_cast<int>(H) != a.config.H || static_cast<int>(d) != a.config.d) g.fail("the GP's size differs from the model's");
    Matrix Gamma(H, H), Lambda(d, d);
    RowMatrix mean(H, d);
    for (std::uint32_t j = 0; j < H; ++j)
      for (std::uint32_t i = 0; i < H; ++i) Gamma(i, j) = g.get<double>();
    for (std::uint32_t j = 0; j < d; ++j)
      for (std::uint32_t i = 0; i < d; ++i) Lambda(i, j) = g.get<double>();
    for (std::uint32_t h = 0; h < H; ++h)
      for (std::uint32_t j = 0; j < d; ++j) mean(h, j) = g.get<double>();
    if (!g.done()) g.fail("the GP section has trailing bytes");
    try {
      a.gp = std::make_shared<GaussianProcess>(std::move(Gamma), std::move(Lambda), std::move(mean));
    } catch (const input_error& e) {
      g.fail(std::string("its GP is invalid: ") + e.what());
    }
  }
  if (!ema.empty()) a.ema = read_tensors(ema, arg);
  return a;
}

void load_weights(DiTNet& net, const std::vector<std::pair<std::string, torch::Tensor>>& weights,
                  const std::string& arg) {
  torch::NoGradGuard no_grad;
  auto params = net->named_parameters();
  if (weights.size() != params.size())
    throw input_error(arg, "the DiT model holds " + std::to_string(weights.size()) + " weight tensors where " +
                               std::to_string(params.size()) + " were expected.");
  for (const auto& kv : weights) {
    auto* p = params.find(kv.first);
    if (!p) throw input_error(arg, "the DiT model has an unknown weight '" + kv.first + "'.");
    if (p->sizes() != kv.second.sizes())
      throw input_error(arg, "the weight '" + kv.first + "' has the wrong shape.");
    if (!torch::isfinite(kv.second).all().item<bool>())
      throw numeric_error("the DiT model's weight '" + kv.first + "' holds NaN or Inf values.");
    p->copy_(kv.second);
  }
}

void copy_weights(DiTNet& to, const DiTNet& from) {
  torch::NoGradGuard no_grad;
  auto dst = to->parameters();
  auto src = from->parameters();
  for (std::size_t i = 0; i < dst.size(); ++i) dst[i].copy_(src[i]);
}

}  // namespace detail
}  // namespace ditimpute
