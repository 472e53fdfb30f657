// The DiT score network, its training by denoising score matching with mixed
// masking, sampling, and save/load (the paper's eqs. 6,
// 12-13 and Algorithm 1). This header is torch-free: the network lives behind
// a pimpl in cpp/src/dit/.
//
// Conventions:
//  * forward VP-SDE dx = -x/2 dt + dW on [t0, T]: alpha_t = exp(-t/2),
//    sigma_t^2 = 1 - exp(-t) (schedule.hpp);
//  * the network predicts the noise, eps_hat = -sigma_t * s(x_t, x_obs, t), so
//    the score handed to the sampler is s = -eps_hat / sigma_t;
//  * masks: 1 = observed, 0 = missing; the loss counts missing entries only;
//  * training data may hold NaN: such entries are "not observed in the data",
//    never enter the loss and are shown to the network as missing;
//  * the network computes in float32; inputs and outputs are double.
#pragma once

#include "ditimpute/common.hpp"
#include "ditimpute/impute.hpp"
#include "ditimpute/patterns.hpp"
#include "ditimpute/sampler.hpp"

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace ditimpute {

// Architecture and diffusion time range. The paper's size is width 256,
// depth 12, heads 16.
struct DiTConfig {
  int H = 0;               // frames (tokens)
  int d = 0;               // variables per frame
  int width = 128;         // token width
  int depth = 4;           // number of adaLN-Zero blocks
  int heads = 4;           // attention heads (must divide width)
  double mlp_ratio = 4.0;  // MLP hidden width = mlp_ratio * width
  double t0 = 1e-5;        // early-stopping time (SamplerOptions' default)
  double T = 15.0;         // terminal time (SamplerOptions' default)
  // What the network's output F means (the loss and the sampler always see
  // the noise prediction eps_hat):
  //  "v":   eps_hat = sigma_t x_t - alpha_t F on the missing entries, i.e. F
  //         predicts v = alpha_t eps - sigma_t x0 (EDM preconditioning of the
  //         VP process for unit-variance data). At large t eps_hat -> x_t with
  //         no learning and F carries the conditional mean; at small t
  //         eps_hat -> -F.
  //  "eps": eps_hat = F (plain noise prediction).
  std::string prediction = "v";
  // GP-informed network (the model then holds a GaussianProcess, set_gp()):
  //  "":         none (tokens [x, mask]);
  //  "channels": tokens [x, mask, mu, sd], mu and sd the GP's conditional
  //              mean and sd of each entry given the observed ones;
  //  "residual": the same inputs, and the network's output is a correction
  //              to the exact noise of the GP's marginal law N(mu, diag(sd^2))
  //              (network.hpp): the output layer starts at zero, so the
  //              untrained model samples each missing entry from its exact
  //              GP conditional marginal (the joint law of the untrained
  //              model is the product of these marginals; training adds the
  //              dependence between entries and what the GP misses).
  //  "score":    the same inputs, and the output is a correction to the
  //              exact noise of the GP's joint conditional law N(mu, Sigma):
  //              eps_gp = sigma_t (alpha_t^2 Sigma + sigma_t^2 I)^{-1}
  //              (x - alpha_t mu) on the missing entries, through the
  //              eigen-decomposition of Sigma (gp_conditional_eigen): the
  //              untrained model samples the GP's exact conditional law, and
  //              training can only add what the GP misses. One m x m
  //              eigenvector matrix per example (cheap for frame-level masks,
  //              Kronecker; O(m^3) for entry-level ones).
  std::string gp;
  // What a token is:
  //  "frame": one token per time frame holding its d values and mask (the
  //           paper's DiT): attention runs across the H frames only, and the
  //           d variables share one token of `width` features.
  //  "entry": one token per entry (frame, variable) holding its value and
  //           mask, plus the frame's position and a learned embedding of the
  //           variable; each block attends across the H frames of every
  //           variable and then across the d variables of every frame (the
  //           two-axis design of CSDI). H * d tokens a sequence: the cost of a
  //           step grows about d times, what a token must hold does not.
  std::string tokens = "frame";
  // input_error "H", "d", "width", "depth", "heads", "mlp_ratio", "t0", "T", "prediction", "gp",
  // "tokens".
  void validate() const;
  // validate() and the limits of a new model: T at most 50, at most 2e9
  // weights (input_error "T", "width", "depth"); create() asks it, loading a
  // saved model asks validate() alone.
  void validate_new() const;
  bool operator==(const DiTConfig& other) const;
  bool operator!=(const DiTConfig& other) const { return !(*this == other); }
};

struct TrainOptions {
  int steps = 1000;            // optimizer steps in this call (see resume_from)
  int batch_size = 64;
  double lr = 3e-4;
  double weight_decay = 0.0;
  std::string optimizer = "adamw";  // "adam" or "adamw"
  double ema = 0.0;            // EMA decay of the weights, 0 = off (e.g. 0.999)
  // Warm the EMA up: the decay at the model's k-th step (resumed steps
  // counted) is min(ema, (1 + k) / (10 + k)), so the average forgets the
  // initial weights within a few dozen steps. Without it, 0.999 keeps
  // 0.999^k of the initial (zero-gated) network after k steps: 37% at k = 1000
  // (bench/results/dit_learning.md measures what that costs).
  bool ema_warmup = true;
  // Learning rate at run step k (0-based, counted in this run and its
  // resumptions): lr * min(1, (k + 1) / warmup_steps) * decay(f), where f is
  // the share of the budget spent, max(k / steps, seconds / time_limit), and
  // decay is 1 ("constant"), lr_min + (1 - lr_min) (1 - f) ("linear") or
  // lr_min + (1 - lr_min) (1 + cos(pi f)) / 2 ("cosine").
  int warmup_steps = 0;
  std::string lr_schedule = "constant";
  double lr_min = 0.1;         // final learning rate as a share of lr
  // Stop after this many seconds (0 = no limit; the step count still caps the
  // run). A run cut by time is not repeatable step for step.
  double time_limit = 0;
  // Early stopping on the validation loss (needs a validation batch): stop
  // after `patience` validation records (every val_every steps) without a new
  // best (0 = never stop early).
  int patience = 0;
  // At the end, return the weights (and EMA) of the best validation record
  // when the last one is worse. The history and the step count keep the whole
  // run; a checkpoint written at the end holds the last weights (so that
  // resume_from continues the run), not the best ones.
  bool restore_best = false;
  double grad_clip = 1.0;      // max global gradient norm, 0 = off
  // How t is drawn for each example: "log_uniform" (default) or "uniform" on
  // [t0, T]. Log-uniform puts the same weight on every decade of t, as the
  // sampler's geometric grid does (half of its steps lie below t ~ 0.01 on
  // [1e-5, 15]); uniform t (the plain integral of eq. 13) gives t < 0.1 to
  // under 1% of the examples, so the small-noise end where sampling finishes
  // is barely trained.
  std::string t_sampling = "log_uniform";
  // Weight of each example's squared noise error in eq. 13: "eps" (1, the
  // plain noise-prediction loss) or "v" (1 / alpha_t^2 = 1 + sigma_t^2 /
  // alpha_t^2: the squared error of the v prediction; puts the weight where the
  // observed frames decide the answer, at moderate and large t). "auto" = "v"
  // for prediction "v" and "eps" for prediction "eps" (1 / alpha_t^2 reaches
  // e^T there and a plain eps network would not tolerate it).
  std::string loss_weight = "auto";
  int val_every = 100;         // validation loss / history record every k steps
  int checkpoint_every = 0;    // write checkpoint_path every k steps (0: only at the end)
  std::string checkpoint_path; // "" = no checkpoints
  // Continue a run from a checkpoint written by fit(): weights, EMA, optimizer
  // state, random state and history are restored, and training runs until the
  // model has `steps` steps in total, so rerunning an interrupted call with
  // resume_from = its checkpoint_path finishes it (same data, same seed).
  std::string resume_from;
  std::uint64_t seed = 1;
  int threads = 0;             // 0 = hardware cores
  std::string device = "auto"; // "auto", "cpu", "cuda"
  // GP-informed models (DiTConfig::gp): the GP's conditional mean and sd of
  // a training example cost one factorisation of its missing entries'
  // precision (O(m^3), about a second at m ~ 3000). 0 = computed afresh for
  // every example; k > 0 = a pool of k examples (sequence, mask, mu, sd)
  // drawn once at the start of fit() (from the seed) and every batch drawn
  // from it with fresh times and noise, so the cost is bounded whatever the
  // number of steps.
  int gp_pool = 0;
  // input_error naming the field.
  void validate() const;
};

struct TrainProgress {
  int step = 0;        // steps done (counting resumed ones)
  int total = 0;       // steps planned
  double loss = 0;     // training loss of this step
  double loss_avg = 0; // mean training loss since the last history record
  double val_loss = std::numeric_limits<double>::quiet_NaN();  // latest, NaN if none
  double seconds = 0;  // since fit() started
};
// Return false to stop training cleanly (the model keeps the weights reached
// and a checkpoint is written when checkpoint_path is set).
using ProgressCallback = std::function<bool(const TrainProgress&)>;

struct LossRecord {
  int step = 0;
  double train_loss = 0;  // mean over the steps since the previous record
  double val_loss = std::numeric_limits<double>::quiet_NaN();
};

struct TrainResult {
  int steps_done = 0;   // total step count of the model after the call
  bool stopped = false; // the callback asked to stop
  double final_loss = std::numeric_limits<double>::quiet_NaN();
  double final_val_loss = std::numeric_limits<double>::quiet_NaN();
  double seconds = 0;
  // Why the run ended: "steps", "time_limit", "early_stop" or "callback".
  std::string stop_reason = "steps";
  int best_step = -1;   // model step of the best validation record (-1: none)
  double best_val_loss = std::numeric_limits<double>::quiet_NaN();
  bool restored_best = false;  // the returned weights are those of best_step
};

class DiTModel {
 public:
  // A fresh network; `seed` fixes the initial weights. Device "auto" picks
  // CUDA when the linked LibTorch has it.
  static DiTModel create(const DiTConfig& config, std::uint64_t seed, const std::string& device = "auto");

  DiTModel(DiTModel&&) noexcept;
  DiTModel& operator=(DiTModel&&) noexcept;
  DiTModel(const DiTModel&) = delete;
  DiTModel& operator=(const DiTModel&) = delete;
  ~DiTModel();

  const DiTConfig& config() const;
  std::int64_t n_parameters() const;
  int steps_trained() const;
  bool has_ema() const;
  const std::vector<LossRecord>& loss_history() const;
  std::string device() const;  // "cpu" or "cuda"
  void set_device(const std::string& device);
  // The GP of a GP-informed model (DiTConfig::gp); null for other models.
  // set_gp() needs gp != "" in the config and the model's H and d
  // (input_error "gp"); it is saved with the model.
  const GaussianProcess* gp() const;
  void set_gp(const GaussianProcess& gp);
  // Opaque bytes a front end keeps with the model (the R package: the mask
  // strategy and the record of the training run), saved with it in section
  // NOTE; the core never reads them. Empty by default and for files written
  // before the section existed.
  const std::string& notes() const;
  void set_notes(std::string notes);

  // Denoising score matching (eq. 13, noise-prediction form) on the n x H x d
  // `train` batch (NaN = not observed in the data), a mask drawn from
  // `strategy` for every example of every batch. `val` (may be null) gives a
  // held-out loss with masks, t and noise fixed once per fit() call (drawn from
  // the seed) so the curve is comparable across steps. Throws numeric_error when
  // the loss or the gradient turns NaN/Inf (the model keeps the weights of the
  // last finite step; the last checkpoint file is left untouched).
  TrainResult fit(const Batch& train, const Batch* val, const MaskStrategy& strategy,
                  const TrainOptions& options, const ProgressCallback& callback = nullptr);

  // The network's noise prediction eps_hat for Z states of one sequence at
  // time t: `x` is Z x H x d (observed entries hold the data, missing ones the
  // noisy state), `mask` the pattern. For diagnostics against the exact score
  // (eps* = -sigma_t s*). Uses the EMA weights when present.
  Batch predict_noise(const Batch& x, const Mask& mask, double t, int threads = 0) const;
  // The same for n states with their own masks and times (masks[i], t[i]),
  // in chunks of 256 (dit/diagnostics.cpp; dit_diagnostics.hpp builds on it).
  Batch predict_noise(const Batch& x, const std::vector<Mask>& masks, const std::vector<double>& t,
                      int threads = 0) const;

  // Mean denoising loss over `data` with masks, t and noise drawn from `seed`
  // (uses the EMA weights when present, as sampling does). `loss_weight` as in
  // TrainOptions; the default "eps" is eq. 13's plain noise-prediction loss.
  double denoising_loss(const Batch& data, const MaskStrategy& strategy, const std::string& t_sampling,
                        std::uint64_t seed, int threads = 0, const std::string& loss_weight = "eps") const;

  // Z samples of the missing entries of every case of `x` (NaN = missing;
  // masks[i] its pattern, as from masks_from_nan): Z x m_i matrices in vec
  // order. All cases' samples go through the network together, in batches of
  // at most `batch_size` sequences made of whole cases (0: 128 on the CPU,
  // where small batches stay in cache, 4096 on CUDA; never fewer than Z), so
  // many cases cost no more per sample than one. Case i
  // draws its noise from Rng(case_seed(seed, i)): its samples do not depend
  // on the batching. A complete case (no missing entry, which the pipeline
  // passes through) gets a Z x 0 matrix and takes no network rows. Uses the
  // EMA weights when present; options.t0/T must lie inside the config's
  // [t0, T].
  std::vector<Matrix> sample_missing(const Batch& x, const std::vector<Mask>& masks, int Z,
                                     const SamplerOptions& options, std::uint64_t seed, int threads = 0,
                                     int batch_size = 0) const;
  // Z completed sequences of one case (`x` its H*d values, NaN = missing),
  // Z x H x d with observed entries exactly as given; the same draws as case 0
  // of sample_missing() with this seed.
  Batch sample(const std::vector<double>& x, int Z, const SamplerOptions& options, std::uint64_t seed,
               int threads = 0) const;

  // Self-describing binary format: magic, version, config, weights, EMA
  // weights, loss history, notes, checksum. Corrupt or foreign input throws
  // input_error("file") / input_error("bytes").
  std::string to_bytes() const;
  static DiTModel from_bytes(const std::string& bytes, const std::string& device = "auto");
  void save(const std::string& path) const;
  static DiTModel load(const std::string& path, const std::string& device = "auto");

  struct Impl;

 private:
  explicit DiTModel(std::unique_ptr<Impl> impl);
  static DiTModel from_archive_bytes(const std::string& bytes, const std::string& device, const std::string& arg);
  std::unique_ptr<Impl> impl_;
};

// The GP's conditional mean and sd of every entry of one sequence `x` (H*d
// values, NaN = not observed) given the entries observed under `mask` and
// finite in x: mu and sd get H*d values each, with mu = x and sd = 0 on
// those entries, the exact conditional marginals elsewhere (the prior's when
// nothing is observed). Entry-level masks go through make_conditional's
// precision path, frame-level ones through the Kronecker path.
void gp_entry_marginals(const GaussianProcess& gp, const double* x, const Mask& mask, double* mu, double* sd);

// The GP's conditional covariance of the same missing entries (missing under
// `mask` or not finite in x) as Sigma_cond = U diag(lambda) U^T: U gets H*d
// rows in vec order (zero on the observed entries) and one column per
// missing entry, lambda the eigenvalues (>= 0). Frame-level masks use
// Sigma_cond = Gamma_cond (x) Lambda (two small eigen-decompositions),
// entry-level ones the dense covariance (O(m^3)). The base of a gp = "score"
// DiT (DiTConfig::gp). With mu and sd (H*d values each), they also get what
// gp_entry_marginals gives, from the same conditional: an entry-level mask is
// then factorised once, not twice (input_error "mu" when only one is given).
void gp_conditional_eigen(const GaussianProcess& gp, const double* x, const Mask& mask, Matrix& U, Vector& lambda,
                          double* mu = nullptr, double* sd = nullptr);

// A fitted DiT as an imputer of the pipeline (impute.hpp). Holds a reference:
// the model must outlive it.
class DiTSampler : public CaseSampler {
 public:
  DiTSampler(const DiTModel& model, const SamplerOptions& options, int batch_size = 0)
      : model_(model), options_(options), batch_size_(batch_size) {}
  std::vector<Matrix> draw(const Batch& x, const std::vector<Mask>& masks, int Z, std::uint64_t seed,
                           int threads) const override {
    return model_.sample_missing(x, masks, Z, options_, seed, threads, batch_size_);
  }
  std::string name() const override { return "DiT"; }

 private:
  const DiTModel& model_;
  SamplerOptions options_;
  int batch_size_;
};

}  // namespace ditimpute
