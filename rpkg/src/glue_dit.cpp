// Glue for the diffusion engine (cpp/include/ditimpute/dit.hpp, sampler.hpp,
// backend.hpp). A fitted model lives in R as raw bytes; an external pointer to
// the loaded C++ model is cached beside them.
#include "glue.h"

#include "ditimpute/backend.hpp"
#include "ditimpute/dit.hpp"
#include "ditimpute/sampler.hpp"

#include <Rinternals.h>

namespace {

using ModelPtr = Rcpp::XPtr<ditimpute::DiTModel>;

void check_interrupt_fn(void*) { R_CheckUserInterrupt(); }
// True when the user pressed Ctrl-C; never long-jumps over C++ frames.
bool interrupt_pending() { return R_ToplevelExec(check_interrupt_fn, nullptr) == FALSE; }

template <typename T>
T get_or(const Rcpp::List& l, const char* name, T fallback) {
  if (!l.containsElementNamed(name)) return fallback;
  SEXP v = l[name];
  if (Rf_isNull(v)) return fallback;
  return Rcpp::as<T>(v);
}

ditimpute::DiTConfig config_from_r(const Rcpp::List& c) {
  ditimpute::DiTConfig cfg;
  cfg.H = Rcpp::as<int>(c["H"]);
  cfg.d = Rcpp::as<int>(c["d"]);
  cfg.width = get_or<int>(c, "width", cfg.width);
  cfg.depth = get_or<int>(c, "depth", cfg.depth);
  cfg.heads = get_or<int>(c, "heads", cfg.heads);
  cfg.mlp_ratio = get_or<double>(c, "mlp_ratio", cfg.mlp_ratio);
  cfg.t0 = get_or<double>(c, "t0", cfg.t0);
  cfg.T = get_or<double>(c, "T", cfg.T);
  cfg.prediction = get_or<std::string>(c, "prediction", cfg.prediction);
  return cfg;
}

Rcpp::List config_to_r(const ditimpute::DiTConfig& c) {
  return Rcpp::List::create(Rcpp::Named("H") = c.H, Rcpp::Named("d") = c.d, Rcpp::Named("width") = c.width,
                            Rcpp::Named("depth") = c.depth, Rcpp::Named("heads") = c.heads,
                            Rcpp::Named("mlp_ratio") = c.mlp_ratio, Rcpp::Named("t0") = c.t0,
                            Rcpp::Named("T") = c.T, Rcpp::Named("prediction") = c.prediction);
}

ditimpute::SamplerOptions sampler_from_r(const Rcpp::List& s) {
  ditimpute::SamplerOptions o;
  if (s.containsElementNamed("method") && !Rf_isNull(s["method"]))
    o.method = ditimpute::sampler_method_from_string(Rcpp::as<std::string>(s["method"]));
  if (s.containsElementNamed("grid") && !Rf_isNull(s["grid"]))
    o.grid = ditimpute::time_grid_from_string(Rcpp::as<std::string>(s["grid"]));
  o.steps = get_or<int>(s, "steps", o.steps);
  o.t0 = get_or<double>(s, "t0", o.t0);
  o.T = get_or<double>(s, "T", o.T);
  o.validate();
  return o;
}

Rcpp::DataFrame history_to_r(const std::vector<ditimpute::LossRecord>& h) {
  Rcpp::IntegerVector step(h.size());
  Rcpp::NumericVector train(h.size()), val(h.size());
  for (std::size_t i = 0; i < h.size(); ++i) {
    step[i] = h[i].step;
    train[i] = h[i].train_loss;
    val[i] = std::isnan(h[i].val_loss) ? NA_REAL : h[i].val_loss;
  }
  return Rcpp::DataFrame::create(Rcpp::Named("step") = step, Rcpp::Named("train_loss") = train,
                                 Rcpp::Named("val_loss") = val);
}

ditimpute::Batch batch_from_r(const Rcpp::NumericVector& x) {
  const Rcpp::IntegerVector dim = x.attr("dim");
  return glue::batch_from_array(x, dim[0], dim[1], dim[2]);
}

ModelPtr wrap_model(ditimpute::DiTModel&& model) {
  return ModelPtr(new ditimpute::DiTModel(std::move(model)), true);
}

}  // namespace

// An external pointer restored by readRDS() points nowhere.
// [[Rcpp::export]]
bool cpp_ptr_is_null(SEXP ptr) { return TYPEOF(ptr) != EXTPTRSXP || R_ExternalPtrAddr(ptr) == nullptr; }

// [[Rcpp::export]]
Rcpp::List cpp_backend_info() {
  DITIMPUTE_GLUE_BEGIN
  const ditimpute::BackendInfo b = ditimpute::backend_info();
  return Rcpp::List::create(Rcpp::Named("torch_version") = b.torch_version,
                            Rcpp::Named("cuda_available") = b.cuda_available,
                            Rcpp::Named("cuda_devices") = b.cuda_devices, Rcpp::Named("threads") = b.threads);
  DITIMPUTE_GLUE_END
}

// [[Rcpp::export]]
Rcpp::List cpp_dit_config_check(Rcpp::List config) {
  DITIMPUTE_GLUE_BEGIN
  const ditimpute::DiTConfig cfg = config_from_r(config);
  cfg.validate();
  return config_to_r(cfg);
  DITIMPUTE_GLUE_END
}

// [[Rcpp::export]]
SEXP cpp_dit_create(Rcpp::List config, double seed, std::string device) {
  DITIMPUTE_GLUE_BEGIN
  return wrap_model(ditimpute::DiTModel::create(config_from_r(config), glue::seed_from_double(seed), device));
  DITIMPUTE_GLUE_END
}

// [[Rcpp::export]]
SEXP cpp_dit_from_bytes(Rcpp::RawVector bytes, std::string device) {
  DITIMPUTE_GLUE_BEGIN
  const std::string s(reinterpret_cast<const char*>(RAW(bytes)), static_cast<std::size_t>(bytes.size()));
  return wrap_model(ditimpute::DiTModel::from_bytes(s, device));
  DITIMPUTE_GLUE_END
}

// [[Rcpp::export]]
Rcpp::RawVector cpp_dit_to_bytes(SEXP ptr) {
  DITIMPUTE_GLUE_BEGIN
  const std::string s = ModelPtr(ptr)->to_bytes();
  Rcpp::RawVector out(s.size());
  std::copy(s.begin(), s.end(), reinterpret_cast<char*>(RAW(out)));
  return out;
  DITIMPUTE_GLUE_END
}

// [[Rcpp::export]]
SEXP cpp_dit_load(std::string path, std::string device) {
  DITIMPUTE_GLUE_BEGIN
  return wrap_model(ditimpute::DiTModel::load(path, device));
  DITIMPUTE_GLUE_END
}

// [[Rcpp::export]]
bool cpp_dit_save(SEXP ptr, std::string path) {
  DITIMPUTE_GLUE_BEGIN
  ModelPtr(ptr)->save(path);
  return true;
  DITIMPUTE_GLUE_END
}

// [[Rcpp::export]]
Rcpp::List cpp_dit_info(SEXP ptr) {
  DITIMPUTE_GLUE_BEGIN
  const ModelPtr m(ptr);
  return Rcpp::List::create(Rcpp::Named("config") = config_to_r(m->config()),
                            Rcpp::Named("n_parameters") = static_cast<double>(m->n_parameters()),
                            Rcpp::Named("steps") = m->steps_trained(), Rcpp::Named("has_ema") = m->has_ema(),
                            Rcpp::Named("device") = m->device(),
                            Rcpp::Named("history") = history_to_r(m->loss_history()));
  DITIMPUTE_GLUE_END
}

// Trains in place. `callback` (an R function or NULL) gets (step, total, loss,
// val_loss) every `callback_every` steps; Ctrl-C stops training cleanly.
// [[Rcpp::export]]
Rcpp::List cpp_dit_fit(SEXP ptr, Rcpp::NumericVector train, Rcpp::Nullable<Rcpp::NumericVector> val,
                       Rcpp::List generators, std::vector<double> weights, Rcpp::List options, SEXP callback,
                       int callback_every) {
  DITIMPUTE_GLUE_BEGIN
  ModelPtr m(ptr);
  const ditimpute::Batch train_b = batch_from_r(train);
  ditimpute::Batch val_b;
  if (val.isNotNull()) val_b = batch_from_r(Rcpp::NumericVector(val.get()));
  const ditimpute::MaskStrategy strategy = glue::strategy_from_r(generators, weights);
  ditimpute::TrainOptions o;
  o.steps = get_or<int>(options, "steps", o.steps);
  o.batch_size = get_or<int>(options, "batch_size", o.batch_size);
  o.lr = get_or<double>(options, "lr", o.lr);
  o.weight_decay = get_or<double>(options, "weight_decay", o.weight_decay);
  o.optimizer = get_or<std::string>(options, "optimizer", o.optimizer);
  o.ema = get_or<double>(options, "ema", o.ema);
  o.grad_clip = get_or<double>(options, "grad_clip", o.grad_clip);
  o.t_sampling = get_or<std::string>(options, "t_sampling", o.t_sampling);
  o.loss_weight = get_or<std::string>(options, "loss_weight", o.loss_weight);
  o.val_every = get_or<int>(options, "val_every", o.val_every);
  o.checkpoint_every = get_or<int>(options, "checkpoint_every", o.checkpoint_every);
  o.checkpoint_path = get_or<std::string>(options, "checkpoint_path", o.checkpoint_path);
  o.resume_from = get_or<std::string>(options, "resume_from", o.resume_from);
  o.seed = glue::seed_from_double(Rcpp::as<double>(options["seed"]));
  o.threads = get_or<int>(options, "threads", o.threads);
  o.device = get_or<std::string>(options, "device", o.device);
  o.validate();

  bool interrupted = false;
  const bool has_cb = !Rf_isNull(callback);
  const int every = std::max(1, callback_every);
  ditimpute::ProgressCallback cb = [&](const ditimpute::TrainProgress& p) {
    if (interrupt_pending()) {
      interrupted = true;
      return false;
    }
    if (has_cb && (p.step % every == 0 || p.step == p.total)) {
      Rcpp::Function f(callback);
      f(p.step, p.total, p.loss_avg, std::isnan(p.val_loss) ? NA_REAL : p.val_loss, p.seconds);
    }
    return true;
  };
  const ditimpute::TrainResult r = m->fit(train_b, val.isNotNull() ? &val_b : nullptr, strategy, o, cb);
  return Rcpp::List::create(Rcpp::Named("steps_done") = r.steps_done, Rcpp::Named("stopped") = r.stopped,
                            Rcpp::Named("interrupted") = interrupted, Rcpp::Named("final_loss") = r.final_loss,
                            Rcpp::Named("final_val_loss") = r.final_val_loss, Rcpp::Named("seconds") = r.seconds);
  DITIMPUTE_GLUE_END
}

// [[Rcpp::export]]
double cpp_dit_loss(SEXP ptr, Rcpp::NumericVector data, Rcpp::List generators, std::vector<double> weights,
                    std::string t_sampling, double seed, int threads) {
  DITIMPUTE_GLUE_BEGIN
  const ditimpute::MaskStrategy strategy = glue::strategy_from_r(generators, weights);
  return ModelPtr(ptr)->denoising_loss(batch_from_r(data), strategy, t_sampling, glue::seed_from_double(seed),
                                       threads);
  DITIMPUTE_GLUE_END
}

// Z samples of one sequence x (H x d, NA = missing): Z x H x d array.
// [[Rcpp::export]]
Rcpp::NumericVector cpp_dit_sample(SEXP ptr, Rcpp::NumericMatrix x, int Z, Rcpp::List sampler, double seed,
                                   int threads) {
  DITIMPUTE_GLUE_BEGIN
  std::vector<double> v = glue::vec_from_matrix(x);
  for (double& e : v)
    if (Rcpp::NumericVector::is_na(e)) e = std::numeric_limits<double>::quiet_NaN();
  return glue::array_from_batch(
      ModelPtr(ptr)->sample(v, Z, sampler_from_r(sampler), glue::seed_from_double(seed), threads));
  DITIMPUTE_GLUE_END
}

// Oracle mode: the same reverse-time sampler driven by the exact GP score.
// Returns Z x m (missing entries, frame-major).
// [[Rcpp::export]]
Eigen::MatrixXd cpp_sample_oracle(Eigen::MatrixXd Gamma, Eigen::MatrixXd Lambda, Eigen::MatrixXd mean,
                                  Rcpp::NumericMatrix x, Rcpp::LogicalMatrix missing, int Z, Rcpp::List sampler,
                                  double seed, int threads) {
  DITIMPUTE_GLUE_BEGIN
  const ditimpute::GaussianProcess gp = glue::gp_from_r(Gamma, Lambda, mean);
  auto cond = ditimpute::make_conditional(gp, glue::mask_from_missing(missing));
  const std::vector<double> v = glue::vec_from_matrix(x);
  return ditimpute::sample_oracle(*cond, v.data(), Z, sampler_from_r(sampler), glue::seed_from_double(seed),
                                  threads);
  DITIMPUTE_GLUE_END
}
