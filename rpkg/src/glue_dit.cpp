// Glue for the diffusion engine (cpp/include/ditimpute/dit.hpp, sampler.hpp,
// backend.hpp). A fitted model lives in R as raw bytes; an external pointer to
// the loaded C++ model is cached beside them.
#include "glue.h"

#include "ditimpute/backend.hpp"
#include "ditimpute/dit.hpp"
#include "ditimpute/series_blocks.hpp"
#include "ditimpute/sampler.hpp"

#include <Rinternals.h>

namespace {

using ModelPtr = Rcpp::XPtr<ditimpute::DiTModel>;

ditimpute::DiTConfig config_from_r(const Rcpp::List& c) {
  ditimpute::DiTConfig cfg;
  cfg.H = Rcpp::as<int>(c["H"]);
  cfg.d = Rcpp::as<int>(c["d"]);
  cfg.width = glue::get_or<int>(c, "width", cfg.width);
  cfg.depth = glue::get_or<int>(c, "depth", cfg.depth);
  cfg.heads = glue::get_or<int>(c, "heads", cfg.heads);
  cfg.mlp_ratio = glue::get_or<double>(c, "mlp_ratio", cfg.mlp_ratio);
  cfg.t0 = glue::get_or<double>(c, "t0", cfg.t0);
  cfg.T = glue::get_or<double>(c, "T", cfg.T);
  cfg.prediction = glue::get_or<std::string>(c, "prediction", cfg.prediction);
  cfg.gp = glue::get_or<std::string>(c, "gp", cfg.gp);
  cfg.tokens = glue::get_or<std::string>(c, "tokens", cfg.tokens);
  return cfg;
}

Rcpp::List config_to_r(const ditimpute::DiTConfig& c) {
  return Rcpp::List::create(Rcpp::Named("H") = c.H, Rcpp::Named("d") = c.d, Rcpp::Named("width") = c.width,
                            Rcpp::Named("depth") = c.depth, Rcpp::Named("heads") = c.heads,
                            Rcpp::Named("mlp_ratio") = c.mlp_ratio, Rcpp::Named("t0") = c.t0,
                            Rcpp::Named("T") = c.T, Rcpp::Named("prediction") = c.prediction,
                            Rcpp::Named("gp") = c.gp, Rcpp::Named("tokens") = c.tokens);
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

// Bytes between R raw vectors and the core's strings (model files, notes).
std::string raw_to_string(const Rcpp::RawVector& bytes) {
  return std::string(reinterpret_cast<const char*>(RAW(bytes)), static_cast<std::size_t>(bytes.size()));
}
Rcpp::RawVector string_to_raw(const std::string& s) {
  Rcpp::RawVector out(s.size());
  std::copy(s.begin(), s.end(), reinterpret_cast<char*>(RAW(out)));
  return out;
}

ModelPtr wrap_model(ditimpute::DiTModel&& model) {
  return ModelPtr(new ditimpute::DiTModel(std::move(model)), true);
}

}  // namespace

// An external pointer restored by readRDS() points nowhere.
// [[Rcpp::export]]
bool cpp_ptr_is_null(SEXP ptr) { return TYPEOF(ptr) != EXTPTRSXP || R_ExternalPtrAddr(ptr) == nullptr; }

// False when the package was installed without LibTorch (configure found
// none): the core then has src/no_torch/ in place of src/dit/.
// [[Rcpp::export]]
bool cpp_torch_available() { return ditimpute::has_torch(); }

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
  cfg.validate_new();
  return config_to_r(cfg);
  DITIMPUTE_GLUE_END
}

// [[Rcpp::export]]
SEXP cpp_dit_create(Rcpp::List config, double seed, std::string device) {
  DITIMPUTE_GLUE_BEGIN
  return wrap_model(ditimpute::DiTModel::create(config_from_r(config), glue::seed_from_double(seed), device));
  DITIMPUTE_GLUE_END
}

// Hands a GP-informed model its GP (DiTModel::set_gp).
// [[Rcpp::export]]
bool cpp_dit_set_gp(SEXP ptr, Eigen::MatrixXd Gamma, Eigen::MatrixXd Lambda, Eigen::MatrixXd mean) {
  DITIMPUTE_GLUE_BEGIN
  ModelPtr(ptr)->set_gp(glue::gp_from_r(Gamma, Lambda, mean));
  return true;
  DITIMPUTE_GLUE_END
}

// [[Rcpp::export]]
bool cpp_dit_set_notes(SEXP ptr, Rcpp::RawVector notes) {
  DITIMPUTE_GLUE_BEGIN
  ModelPtr(ptr)->set_notes(raw_to_string(notes));
  return true;
  DITIMPUTE_GLUE_END
}

// [[Rcpp::export]]
Rcpp::RawVector cpp_dit_notes(SEXP ptr) {
  DITIMPUTE_GLUE_BEGIN
  return string_to_raw(ModelPtr(ptr)->notes());
  DITIMPUTE_GLUE_END
}

// [[Rcpp::export]]
SEXP cpp_dit_from_bytes(Rcpp::RawVector bytes, std::string device) {
  DITIMPUTE_GLUE_BEGIN
  return wrap_model(ditimpute::DiTModel::from_bytes(raw_to_string(bytes), device));
  DITIMPUTE_GLUE_END
}

// [[Rcpp::export]]
Rcpp::RawVector cpp_dit_to_bytes(SEXP ptr) {
  DITIMPUTE_GLUE_BEGIN
  return string_to_raw(ModelPtr(ptr)->to_bytes());
  DITIMPUTE_GLUE_END
}

// [[Rcpp::export]]
SEXP cpp_dit_load(std::string path, std::string device) {
  DITIMPUTE_GLUE_BEGIN
  return wrap_model(ditimpute::DiTModel::load(path, device));
  DITIMPUTE_GLUE_END
}

// Moves the loaded model to "cpu", "cuda" or "auto" (input error when the
// linked LibTorch cannot).
// [[Rcpp::export]]
std::string cpp_dit_set_device(SEXP ptr, std::string device) {
  DITIMPUTE_GLUE_BEGIN
  ModelPtr m(ptr);
  m->set_device(device);
  return m->device();
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
  const ditimpute::Batch train_b = glue::batch_from_r(train);
  ditimpute::Batch val_b;
  if (val.isNotNull()) val_b = glue::batch_from_r(Rcpp::NumericVector(val.get()));
  const ditimpute::MaskStrategy strategy = glue::strategy_from_r(generators, weights);
  ditimpute::TrainOptions o;
  o.steps = glue::get_or<int>(options, "steps", o.steps);
  o.batch_size = glue::get_or<int>(options, "batch_size", o.batch_size);
  o.lr = glue::get_or<double>(options, "lr", o.lr);
  o.weight_decay = glue::get_or<double>(options, "weight_decay", o.weight_decay);
  o.optimizer = glue::get_or<std::string>(options, "optimizer", o.optimizer);
  o.ema = glue::get_or<double>(options, "ema", o.ema);
  o.ema_warmup = glue::get_or<bool>(options, "ema_warmup", o.ema_warmup);
  o.warmup_steps = glue::get_or<int>(options, "warmup_steps", o.warmup_steps);
  o.lr_schedule = glue::get_or<std::string>(options, "lr_schedule", o.lr_schedule);
  o.lr_min = glue::get_or<double>(options, "lr_min", o.lr_min);
  o.time_limit = glue::get_or<double>(options, "time_limit", o.time_limit);
  o.patience = glue::get_or<int>(options, "patience", o.patience);
  o.restore_best = glue::get_or<bool>(options, "restore_best", o.restore_best);
  o.grad_clip = glue::get_or<double>(options, "grad_clip", o.grad_clip);
  o.t_sampling = glue::get_or<std::string>(options, "t_sampling", o.t_sampling);
  o.loss_weight = glue::get_or<std::string>(options, "loss_weight", o.loss_weight);
  o.val_every = glue::get_or<int>(options, "val_every", o.val_every);
  o.checkpoint_every = glue::get_or<int>(options, "checkpoint_every", o.checkpoint_every);
  o.checkpoint_path = glue::get_or<std::string>(options, "checkpoint_path", o.checkpoint_path);
  o.resume_from = glue::get_or<std::string>(options, "resume_from", o.resume_from);
  o.seed = glue::seed_from_double(Rcpp::as<double>(options["seed"]));
  o.threads = glue::get_or<int>(options, "threads", o.threads);
  o.device = glue::get_or<std::string>(options, "device", o.device);
  o.gp_pool = glue::get_or<int>(options, "gp_pool", o.gp_pool);
  o.validate();

  bool interrupted = false;
  const bool has_cb = !Rf_isNull(callback);
  const int every = std::max(1, callback_every);
  ditimpute::ProgressCallback cb = [&](const ditimpute::TrainProgress& p) {
    if (glue::interrupt_pending()) {
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
                            Rcpp::Named("final_val_loss") = r.final_val_loss, Rcpp::Named("seconds") = r.seconds,
                            Rcpp::Named("stop_reason") = r.stop_reason, Rcpp::Named("best_step") = r.best_step,
                            Rcpp::Named("best_val_loss") = r.best_val_loss,
                            Rcpp::Named("restored_best") = r.restored_best);
  DITIMPUTE_GLUE_END
}

// [[Rcpp::export]]
double cpp_dit_loss(SEXP ptr, Rcpp::NumericVector data, Rcpp::List generators, std::vector<double> weights,
                    std::string t_sampling, std::string loss_weight, double seed, int threads) {
  DITIMPUTE_GLUE_BEGIN
  const ditimpute::MaskStrategy strategy = glue::strategy_from_r(generators, weights);
  return ModelPtr(ptr)->denoising_loss(glue::batch_from_r(data), strategy, t_sampling, glue::seed_from_double(seed),
                                       threads, loss_weight);
  DITIMPUTE_GLUE_END
}

// Z samples of the missing entries of every sequence of x (n x H x d, NA =
// missing): a list of Z x m_i matrices (frame-major).
// [[Rcpp::export]]
Rcpp::List cpp_dit_draw(SEXP ptr, Rcpp::NumericVector x, int Z, Rcpp::List sampler, double seed, int threads,
                        int batch_size) {
  DITIMPUTE_GLUE_BEGIN
  const ditimpute::Batch b = glue::batch_from_r(x);
  const std::vector<ditimpute::Mask> masks = ditimpute::masks_from_nan(b);
  return glue::matrices_to_r(ModelPtr(ptr)->sample_missing(b, masks, Z, glue::sampler_from_r(sampler),
                                                           glue::seed_from_double(seed), threads, batch_size));
  DITIMPUTE_GLUE_END
}

// The imputation pipeline with a DiT: one call for all sequences of x.
// [[Rcpp::export]]
Rcpp::List cpp_impute_dit(SEXP ptr, Rcpp::NumericVector x, Rcpp::List sampler, Rcpp::List options) {
  DITIMPUTE_GLUE_BEGIN
  const ditimpute::DiTSampler dit(*ModelPtr(ptr), glue::sampler_from_r(sampler),
                                  glue::get_or<int>(options, "batch_size", 0));
  return glue::imputation_to_r(ditimpute::impute(dit, glue::batch_from_r(x), glue::impute_options_from_r(options)));
  DITIMPUTE_GLUE_END
}

// A whole series (T x d, NA = missing) imputed block by block with a DiT of
// window H (series_blocks.hpp); blocks: list(past, future), -1 = H / 4.
// [[Rcpp::export]]
Rcpp::List cpp_series_dit_impute(SEXP ptr, Eigen::MatrixXd y, Rcpp::List sampler, Rcpp::List blocks,
                                 Rcpp::List options) {
  DITIMPUTE_GLUE_BEGIN
  const ditimpute::DiTModel& model = *ModelPtr(ptr);
  const ditimpute::DiTSampler dit(model, glue::sampler_from_r(sampler), glue::get_or<int>(options, "batch_size", 0));
  ditimpute::SeriesBlockOptions b;
  b.H = model.config().H;
  b.past = glue::get_or<int>(blocks, "past", b.past);
  b.future = glue::get_or<int>(blocks, "future", b.future);
  const ditimpute::RowMatrix series = y;  // R's NA is a NaN
  const ditimpute::SeriesImputation s =
      ditimpute::impute_series_blocks(dit, series, b, glue::impute_options_from_r(options));
  Rcpp::List out = glue::imputation_to_r(s.imputation);
  std::vector<int> starts(s.paths.starts.begin(), s.paths.starts.end());
  for (int& v : starts) ++v;
  out["starts"] = starts;
  out["window"] = Rcpp::IntegerVector::create(Rcpp::Named("past") = s.paths.past, Rcpp::Named("block") = s.paths.block,
                                              Rcpp::Named("future") = s.paths.future);
  return out;
  DITIMPUTE_GLUE_END
}
