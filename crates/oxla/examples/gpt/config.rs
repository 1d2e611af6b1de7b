//! The command line: the default (about 10M parameters) and `--short`
//! (CI-sized) presets, each setting overridable by its own flag.

use std::path::PathBuf;

use clap::Parser;

/// Train a GPT-style decoder on Shakespeare with oxla: a BPE tokenizer,
/// FSDP over 8 CPU devices, bf16 compute, gradient accumulation,
/// TensorBoard logs and resumable checkpoints.
#[derive(Parser, Debug)]
pub struct Args {
    /// The CI-sized preset (a tiny model, a few seconds a step in debug
    /// builds) instead of the ~10M-parameter one.
    #[arg(long)]
    pub short: bool,
    /// Optimizer updates to train (each of `--accumulate` micro-batches).
    #[arg(long)]
    pub steps: Option<u64>,
    /// Sequences per micro-batch (a multiple of the device count).
    #[arg(long)]
    pub batch_size: Option<usize>,
    /// Micro-batches whose gradients are averaged into one update.
    #[arg(long)]
    pub accumulate: Option<u32>,
    /// Tokens per sequence (the model's context).
    #[arg(long)]
    pub length: Option<usize>,
    /// Width of the model.
    #[arg(long)]
    pub d_model: Option<i64>,
    /// Attention heads.
    #[arg(long)]
    pub heads: Option<i64>,
    /// Transformer blocks.
    #[arg(long)]
    pub layers: Option<usize>,
    /// Tokens in the BPE vocabulary.
    #[arg(long)]
    pub vocab_size: Option<usize>,
    /// Peak learning rate (linear warmup over a tenth of the steps, then
    /// cosine decay to a tenth of it).
    #[arg(long)]
    pub learning_rate: Option<f64>,
    /// Fail unless the final held-out loss is below this.
    #[arg(long)]
    pub max_loss: Option<f64>,
    /// AdamW's decoupled weight decay.
    #[arg(long, default_value_t = 0.1)]
    pub weight_decay: f64,
    /// Clip each update's gradients to this global norm.
    #[arg(long, default_value_t = 1.0)]
    pub clip_norm: f64,
    /// Mixed precision, as jmp's policy strings. Default: bf16 compute with
    /// f32 parameters and output ([`BF16_POLICY`]), except for the default
    /// preset on the CPU plugin, which computes in f32 ([`F32_POLICY`]):
    /// XLA's CPU backend emulates bf16, 9 times slower than f32 on 2 cores
    /// (the same loss curve to the third decimal). `--short` computes in
    /// bf16 everywhere, so CI runs the bf16 path.
    #[arg(long)]
    pub policy: Option<String>,
    /// CPU devices the parameters, optimizer state and batches are split
    /// over (mesh axis 'data').
    #[arg(long, default_value_t = 8)]
    pub devices: usize,
    /// Save a checkpoint every this many steps (and at the last).
    #[arg(long)]
    pub checkpoint_every: Option<u64>,
    /// Evaluate the held-out loss every this many steps.
    #[arg(long)]
    pub eval_every: Option<u64>,
    /// Continue from the latest checkpoint in `--out`.
    #[arg(long)]
    pub resume: bool,
    /// Where the tokenizer, checkpoints and TensorBoard logs go.
    #[arg(long, default_value = "target/gpt-run")]
    pub out: PathBuf,
    /// Tokens to sample before and after training.
    #[arg(long)]
    pub sample_tokens: Option<usize>,
    /// Sampling temperature (0: greedy).
    #[arg(long, default_value_t = 0.8)]
    pub temperature: f64,
    /// Seed of the parameters, the data order and the samples.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

/// bf16 compute, f32 parameters and output (jmp's usual mixed precision).
pub const BF16_POLICY: &str = "params=float32,compute=bfloat16,output=float32";

/// Everything in f32.
pub const F32_POLICY: &str = "params=float32,compute=float32,output=float32";

impl Args {
    /// The policy string: `--policy`, else bf16 compute unless this is the
    /// default preset on the CPU plugin (see [`Args::policy`]).
    pub fn policy_text(&self, on_cpu: bool) -> &str {
        match &self.policy {
            Some(policy) => policy,
            None if on_cpu && !self.short => F32_POLICY,
            None => BF16_POLICY,
        }
    }
}

/// The settings of a run, from a preset and the flags given.
#[derive(Debug, Clone)]
pub struct Config {
    /// Optimizer updates to train.
    pub steps: u64,
    /// Sequences per micro-batch.
    pub batch_size: usize,
    /// Micro-batches per update.
    pub accumulate: u32,
    /// Tokens per sequence.
    pub length: usize,
    /// Width of the model.
    pub d_model: i64,
    /// Attention heads.
    pub heads: i64,
    /// Transformer blocks.
    pub layers: usize,
    /// Tokens in the BPE vocabulary.
    pub vocab_size: usize,
    /// Peak learning rate.
    pub learning_rate: f64,
    /// The bar the final held-out loss must be below.
    pub max_loss: f64,
    /// Steps between checkpoints.
    pub checkpoint_every: u64,
    /// Steps between held-out evaluations.
    pub eval_every: u64,
    /// Tokens sampled before and after training.
    pub sample_tokens: usize,
    /// Held-out windows evaluated (a multiple of the device count).
    pub eval_windows: usize,
}

impl Config {
    /// The preset `args` picks with its flags applied.
    pub fn from_args(args: &Args) -> Config {
        let preset = if args.short {
            Config {
                steps: 20,
                batch_size: 16,
                accumulate: 2,
                length: 32,
                d_model: 64,
                heads: 4,
                layers: 2,
                vocab_size: 1024,
                learning_rate: 3e-3,
                max_loss: 6.3,
                checkpoint_every: 4,
                eval_every: 5,
                sample_tokens: 24,
                eval_windows: 64,
            }
        } else {
            Config {
                steps: 60,
                batch_size: 8,
                accumulate: 2,
                length: 64,
                d_model: 320,
                heads: 8,
                layers: 6,
                vocab_size: 4096,
                learning_rate: 1e-3,
                max_loss: 6.2,
                checkpoint_every: 20,
                eval_every: 10,
                sample_tokens: 60,
                eval_windows: 64,
            }
        };
        Config {
            steps: args.steps.unwrap_or(preset.steps),
            batch_size: args.batch_size.unwrap_or(preset.batch_size),
            accumulate: args.accumulate.unwrap_or(preset.accumulate),
            length: args.length.unwrap_or(preset.length),
            d_model: args.d_model.unwrap_or(preset.d_model),
            heads: args.heads.unwrap_or(preset.heads),
            layers: args.layers.unwrap_or(preset.layers),
            vocab_size: args.vocab_size.unwrap_or(preset.vocab_size),
            learning_rate: args.learning_rate.unwrap_or(preset.learning_rate),
            max_loss: args.max_loss.unwrap_or(preset.max_loss),
            checkpoint_every: args.checkpoint_every.unwrap_or(preset.checkpoint_every),
            eval_every: args.eval_every.unwrap_or(preset.eval_every),
            sample_tokens: args.sample_tokens.unwrap_or(preset.sample_tokens),
            eval_windows: preset.eval_windows,
        }
    }
}
