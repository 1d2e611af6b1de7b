"""A GPT-style decoder LM on five Shakespeare plays: the Flax NNX + Optax + Orbax + Grain twin
of `crates/oxla/examples/gpt`, used for the line-count comparison and run by the tests in short
mode. A byte-level BPE tokenizer (Hugging Face's `tokenizers`) trained at start-up and cached in
--out; FSDP over 8 CPU devices (each parameter and optimizer-state leaf split along its largest
dimension 8 divides, each batch along its rows); a jmp-style policy (f32 parameters, bf16
compute, f32 loss; f32 compute for the default preset on the CPU, where XLA emulates bf16);
AdamW on a warmup-cosine schedule after global-norm clipping in optax.MultiSteps; a Grain loader
with prefetch whose position is checkpointed; TensorBoard scalars in <out>/tb; asynchronous
Orbax checkpoints (the last 2 kept) and --resume.

    python examples/flax/gpt.py                 # ~10M parameters
    python examples/flax/gpt.py --short         # CI-sized
    python examples/flax/gpt.py --resume        # continue in --out
"""

import argparse
import dataclasses
import math
import os
import time
from pathlib import Path

# Before JAX starts: the CPU platform is made with 8 devices.
os.environ["XLA_FLAGS"] = (
    os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"
)

import grain
import jax
import jax.numpy as jnp
import numpy as np
import optax
import orbax.checkpoint as ocp
from flax import nnx
from jax.sharding import NamedSharding, PartitionSpec as P
from tensorboard.summary import Writer
from tokenizers import ByteLevelBPETokenizer, Tokenizer

PLAYS = ["hamlet.txt", "macbeth.txt", "lear.txt", "othello.txt", "julius_caesar.txt"]
EVAL_WINDOWS = 64
# The CI-sized preset: the defaults of the flags --short changes.
SHORT = dict(
    steps=20,
    batch_size=16,
    length=32,
    d_model=64,
    heads=4,
    layers=2,
    vocab_size=1024,
    learning_rate=3e-3,
    max_loss=6.3,
    checkpoint_every=4,
    eval_every=5,
    sample_tokens=24,
)
BF16_POLICY = "params=float32,compute=bfloat16,output=float32"
F32_POLICY = "params=float32,compute=float32,output=float32"


@dataclasses.dataclass(frozen=True)
class Policy:
    """A jmp mixed-precision policy: the dtypes of the parameters, the computation and the
    output. Flax modules take the first two as `param_dtype` and `dtype`."""

    param_dtype: jnp.dtype
    compute_dtype: jnp.dtype
    output_dtype: jnp.dtype

    @classmethod
    def parse(cls, text):
        fields = dict(part.split("=") for part in text.split(","))
        return cls(*(jnp.dtype(fields[name]) for name in ("params", "compute", "output")))


class Block(nnx.Module):
    """`x + attention(ln1(x))`, then `x + mlp(ln2(x))`: GPT-2's pre-norm block, MLP ratio 4."""

    def __init__(self, d_model, heads, policy, *, rngs: nnx.Rngs):
        dtypes = dict(dtype=policy.compute_dtype, param_dtype=policy.param_dtype)
        self.ln1 = nnx.LayerNorm(d_model, **dtypes, rngs=rngs)
        self.attention = nnx.MultiHeadAttention(
            heads, d_model, decode=False, keep_rngs=False, **dtypes, rngs=rngs
        )
        self.ln2 = nnx.LayerNorm(d_model, **dtypes, rngs=rngs)
        self.mlp_in = nnx.Linear(d_model, 4 * d_model, **dtypes, rngs=rngs)
        self.mlp_out = nnx.Linear(4 * d_model, d_model, **dtypes, rngs=rngs)

    def __call__(self, x, mask):
        x = x + self.attention(self.ln1(x), mask=mask)
        return x + self.mlp_out(nnx.gelu(self.mlp_in(self.ln2(x))))


class TransformerLm(nnx.Module):
    """Token and learned position embeddings (the latter normal with standard deviation 0.02),
    the blocks, a final norm and a linear head over the vocabulary."""

    def __init__(self, vocab, d_model, heads, layers, max_length, policy, *, rngs: nnx.Rngs):
        dtypes = dict(dtype=policy.compute_dtype, param_dtype=policy.param_dtype)
        self.token_embedding = nnx.Embed(vocab, d_model, **dtypes, rngs=rngs)
        init = jax.nn.initializers.normal(0.02)
        self.position_embedding = nnx.Param(
            init(rngs.params(), (max_length, d_model), policy.param_dtype)
        )
        self.blocks = nnx.List([Block(d_model, heads, policy, rngs=rngs) for _ in range(layers)])
        self.ln_final = nnx.LayerNorm(d_model, **dtypes, rngs=rngs)
        self.head = nnx.Linear(d_model, vocab, **dtypes, rngs=rngs)

    def __call__(self, tokens):
        x = self.token_embedding(tokens)
        x = x + self.position_embedding[: tokens.shape[-1]].astype(x.dtype)
        mask = nnx.make_causal_mask(tokens)
        for block in self.blocks:
            x = block(x, mask)
        return self.head(self.ln_final(x))


def fsdp_sharding(mesh, shape):
    """Split over 'data' along the largest dimension the device count divides (the first of
    equal ones), else replicated."""
    dims = [d for d, size in enumerate(shape) if size % mesh.size == 0]
    if not dims:
        return NamedSharding(mesh, P())
    dim = max(dims, key=lambda d: (shape[d], -d))
    return NamedSharding(mesh, P(*[None] * dim, "data"))


def shard(mesh, node):
    """Lays out every array of an NNX object (a model or an optimizer) for FSDP, in place."""
    state = nnx.state(node)
    nnx.update(node, jax.tree.map(lambda x: jax.device_put(x, fsdp_sharding(mesh, x.shape)), state))


def load_or_train_tokenizer(path, text, vocab_size):
    """The tokenizer cached in `path`, else a byte-level BPE trained on `text` (one sequence a
    line) and written there. Returns it and whether it was trained now."""
    if path.is_file():
        tokenizer = Tokenizer.from_file(str(path))
        if tokenizer.get_vocab_size() != vocab_size:
            raise SystemExit(
                f"the cached tokenizer {path} has {tokenizer.get_vocab_size()} tokens, "
                f"--vocab-size asks for {vocab_size}; remove it or pass that --vocab-size"
            )
        return tokenizer, False
    tokenizer = ByteLevelBPETokenizer()
    lines = (line + "\n" for line in text.splitlines())
    tokenizer.train_from_iterator(
        lines, vocab_size=vocab_size, min_frequency=2, show_progress=False
    )
    partial = path.with_suffix(".json.partial")
    tokenizer.save(str(partial))
    partial.rename(path)
    return tokenizer, True


def token_windows(ids, length):
    """The non-overlapping windows of `length + 1` tokens of `ids`: the model's input and,
    shifted by one, its targets."""
    return np.lib.stride_tricks.sliding_window_view(ids, length + 1)[::length]


def loss_fn(model, tokens, policy):
    """Mean next-token cross entropy of `tokens` [batch, length + 1], in the output dtype."""
    logits = model(tokens[:, :-1]).astype(policy.output_dtype)
    return optax.softmax_cross_entropy_with_integer_labels(logits, tokens[:, 1:]).mean()


@nnx.jit(donate_argnums=(0, 1), static_argnums=3)
def train_step(model, optimizer, tokens, policy):
    loss, grads = nnx.value_and_grad(loss_fn)(model, tokens, policy)
    optimizer.update(model, grads)
    return loss


evaluate = nnx.jit(loss_fn, static_argnums=2)


@nnx.jit
def next_logits(model, context, position):
    return model(context)[0, position].astype(jnp.float32)


def sample(model, tokenizer, key, args):
    """`--sample-tokens` tokens after a newline, each drawn at `--temperature` (0: greedy) from
    the logits of the last `--length` tokens, decoded."""
    ids = tokenizer.encode("\n").ids
    for _ in range(args.sample_tokens):
        window = ids[-args.length :]
        context = np.zeros((1, args.length), np.int32)
        context[0, : len(window)] = window
        logits = next_logits(model, context, len(window) - 1)
        draw, key = jax.random.split(key)
        if args.temperature > 0:
            ids.append(int(jax.random.categorical(draw, logits / args.temperature)))
        else:
            ids.append(int(logits.argmax()))
    return tokenizer.decode(ids)


def parse_args():
    parser = argparse.ArgumentParser(
        description="Train a GPT-style decoder on Shakespeare with Flax NNX: a BPE tokenizer, "
        "FSDP over 8 CPU devices, bf16 compute, gradient accumulation, TensorBoard logs and "
        "resumable checkpoints."
    )
    parser.add_argument("--short", action="store_true", help="the CI-sized preset")
    parser.add_argument("--steps", type=int, default=60, help="optimizer updates")
    parser.add_argument("--batch-size", type=int, default=8, help="sequences per micro-batch")
    parser.add_argument("--accumulate", type=int, default=2, help="micro-batches per update")
    parser.add_argument("--length", type=int, default=64, help="tokens per sequence")
    parser.add_argument("--d-model", type=int, default=320)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--vocab-size", type=int, default=4096)
    parser.add_argument("--learning-rate", type=float, default=1e-3, help="the peak")
    parser.add_argument("--max-loss", type=float, default=6.2, help="the final held-out bar")
    parser.add_argument("--weight-decay", type=float, default=0.1)
    parser.add_argument("--clip-norm", type=float, default=1.0)
    parser.add_argument(
        "--policy",
        help=f"jmp's policy string; default {BF16_POLICY}, but {F32_POLICY} for the default "
        "preset on the CPU, where XLA emulates bf16 (9 times slower)",
    )
    parser.add_argument("--checkpoint-every", type=int, default=20)
    parser.add_argument("--eval-every", type=int, default=10)
    parser.add_argument("--resume", action="store_true", help="continue from the latest checkpoint")
    oxla_home = Path(os.environ.get("OXLA_HOME", Path.home() / ".cache/oxla"))
    parser.add_argument("--data", type=Path, default=oxla_home / "datasets/shakespeare")
    parser.add_argument("--out", type=Path, default=Path("target/gpt-run-flax"))
    parser.add_argument("--sample-tokens", type=int, default=60)
    parser.add_argument("--temperature", type=float, default=0.8)
    parser.add_argument("--seed", type=int, default=0)
    if parser.parse_known_args()[0].short:
        parser.set_defaults(**SHORT)
    return parser.parse_args()


def main():
    args = parse_args()
    mesh = jax.make_mesh((jax.device_count(),), ("data",), (jax.sharding.AxisType.Auto,))
    rows = NamedSharding(mesh, P("data"))
    on_cpu = jax.default_backend() == "cpu"
    policy_text = args.policy or (F32_POLICY if on_cpu and not args.short else BF16_POLICY)
    policy = Policy.parse(policy_text)
    args.out.mkdir(parents=True, exist_ok=True)
    checkpoints = ocp.CheckpointManager(
        (args.out / "checkpoints").absolute(),
        options=ocp.CheckpointManagerOptions(max_to_keep=2),
    )
    if not args.resume and checkpoints.latest_step() is not None:
        raise SystemExit(
            f"{args.out} has checkpoints: pass --resume to continue them, or another --out"
        )

    # The text and its tokens.
    text = "".join((args.data / name).read_text() + "\n" for name in PLAYS)
    started = time.perf_counter()
    tokenizer, trained = load_or_train_tokenizer(args.out / "tokenizer.json", text, args.vocab_size)
    ids = np.array(tokenizer.encode(text).ids, np.int32)
    print(
        f"tokenizer: byte-level BPE of {tokenizer.get_vocab_size()} tokens "
        f"({'trained' if trained else 'cached'} in {time.perf_counter() - started:.1f} s); "
        f"{len(text)} characters are {len(ids)} tokens"
    )
    split = len(ids) * 9 // 10
    held_out = jax.device_put(token_windows(ids[split:], args.length)[:EVAL_WINDOWS], rows)
    dataset = (
        grain.MapDataset.source(token_windows(ids[:split], args.length))
        .shuffle(seed=args.seed)
        .repeat()
        .batch(args.batch_size, drop_remainder=True)
    )
    loader = iter(dataset.to_iter_dataset(grain.ReadOptions(num_threads=1, prefetch_buffer_size=2)))

    # The model and optimizer, split over the devices.
    # The same sample key before and after training.
    init_key, sample_key = jax.random.split(jax.random.key(args.seed))
    vocab = tokenizer.get_vocab_size()
    model = TransformerLm(
        vocab, args.d_model, args.heads, args.layers, args.length, policy, rngs=nnx.Rngs(init_key)
    )
    parameters = sum(x.size for x in jax.tree.leaves(nnx.state(model, nnx.Param)))
    print(
        f"GPT: {args.layers} blocks, d_model {args.d_model}, {args.heads} heads, context "
        f"{args.length}, {parameters} parameters; policy {policy_text}; FSDP over "
        f"{mesh.size} {jax.default_backend().upper()} devices; {args.accumulate} x "
        f"{args.batch_size} sequences per update"
    )
    schedule = optax.warmup_cosine_decay_schedule(
        init_value=0.0,
        peak_value=args.learning_rate,
        warmup_steps=max(args.steps // 10, 1),
        decay_steps=max(args.steps, 2),
        end_value=args.learning_rate * 0.1,
    )
    tx = optax.MultiSteps(
        optax.chain(
            optax.clip_by_global_norm(args.clip_norm),
            optax.adamw(schedule, weight_decay=args.weight_decay),
        ),
        every_k_schedule=args.accumulate,
    )
    shard(mesh, model)
    optimizer = nnx.Optimizer(model, tx, wrt=nnx.Param)
    shard(mesh, optimizer)

    # Where the run starts: step 1, or after the latest checkpoint.
    first_step = 1
    if args.resume:
        step = checkpoints.latest_step()
        if step is None:
            print(f"no checkpoint in {args.out} yet: starting at step 1")
        else:
            restored = checkpoints.restore(
                step,
                args=ocp.args.Composite(
                    model=ocp.args.StandardRestore(nnx.state(model)),
                    optimizer=ocp.args.StandardRestore(nnx.state(optimizer)),
                    loader=grain.checkpoint.CheckpointRestore(loader),
                ),
            )
            nnx.update(model, restored.model)
            nnx.update(optimizer, restored.optimizer)
            print(f"resumed from step {step} (loader state {loader.get_state()})")
            first_step = step + 1
    if first_step == 1:
        print(
            f"held-out loss before training: {float(evaluate(model, held_out, policy)):.3f} "
            f"(uniform guessing: {math.log(vocab):.3f})"
        )
        print(
            f"sample before training (temperature {args.temperature}):\n---\n"
            f"{sample(model, tokenizer, sample_key, args)}\n---"
        )

    writer = Writer(str(args.out / "tb"))
    tokens_per_step = args.accumulate * args.batch_size * args.length
    started = time.perf_counter()
    train_loss = math.nan
    for step in range(first_step, args.steps + 1):
        total = 0.0
        for _ in range(args.accumulate):
            total += float(train_step(model, optimizer, jax.device_put(next(loader), rows), policy))
        train_loss = total / args.accumulate
        rate = (step - first_step + 1) * tokens_per_step / (time.perf_counter() - started)
        learning_rate = float(schedule(step - 1))
        writer.add_scalar("train/loss", train_loss, step)
        writer.add_scalar("train/learning_rate", learning_rate, step)
        writer.add_scalar("train/tokens_per_second", rate, step)
        if step % args.eval_every == 0 or step == args.steps:
            held = float(evaluate(model, held_out, policy))
            writer.add_scalar("eval/loss", held, step)
            print(
                f"step {step}: loss {train_loss:.3f}, held-out {held:.3f}, "
                f"lr {learning_rate:.2e}, {rate:.0f} tokens/s"
            )
        if step % args.checkpoint_every == 0 or step == args.steps:
            checkpoints.save(
                step,
                args=ocp.args.Composite(
                    model=ocp.args.StandardSave(nnx.state(model)),
                    optimizer=ocp.args.StandardSave(nnx.state(optimizer)),
                    loader=grain.checkpoint.CheckpointSave(loader),
                ),
            )
    checkpoints.wait_until_finished()
    checkpoints.close()
    writer.close()
    final_loss = float(evaluate(model, held_out, policy))
    print(
        f"trained {max(args.steps + 1 - first_step, 0)} steps in "
        f"{time.perf_counter() - started:.1f} s; final train loss {train_loss:.6f}; "
        f"final held-out loss {final_loss:.6f}"
    )
    print(
        f"sample after training (temperature {args.temperature}):\n---\n"
        f"{sample(model, tokenizer, sample_key, args)}\n---"
    )
    if not final_loss < args.max_loss:  # a NaN loss fails too
        raise SystemExit(
            f"the final held-out loss {final_loss:.3f} is not below the bar "
            f"--max-loss {args.max_loss}"
        )
    print(f"held-out loss {final_loss:.3f} < {args.max_loss} (the bar)")


if __name__ == "__main__":
    main()
