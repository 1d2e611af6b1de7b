"""MNIST convolutional network trained with AdamW, checkpointed and resumable: the Flax NNX +
Optax + Orbax twin of `crates/oxla/examples/cnn`, used for the line-count comparison and run by
the tests in short mode.

    python examples/flax/cnn.py
    python examples/flax/cnn.py --steps 20 --checkpoint-every 10 --min-accuracy 0   # short
    python examples/flax/cnn.py --steps 30 --checkpoint-every 10 --min-accuracy 0 --resume
"""

import argparse
import os
import time
from pathlib import Path

import jax
import numpy as np
import optax
import orbax.checkpoint as ocp
from flax import nnx


def load_idx(path):
    """An IDX file (big-endian header: magic, then one u32 per dimension) as a uint8 array."""
    data = path.read_bytes()
    ndim = data[3]
    shape = np.frombuffer(data, ">u4", count=ndim, offset=4)
    return np.frombuffer(data, np.uint8, offset=4 + 4 * ndim).reshape(shape)


def load_mnist(directory, split):
    images = load_idx(directory / f"{split}-images-idx3-ubyte")
    labels = load_idx(directory / f"{split}-labels-idx1-ubyte")
    return images[..., None].astype(np.float32) / 255.0, labels.astype(np.int32)


class CNN(nnx.Module):
    def __init__(self, *, rngs: nnx.Rngs):
        self.conv1 = nnx.Conv(1, 32, kernel_size=(3, 3), padding="SAME", rngs=rngs)
        self.conv2 = nnx.Conv(32, 64, kernel_size=(3, 3), padding="SAME", rngs=rngs)
        self.linear1 = nnx.Linear(7 * 7 * 64, 256, rngs=rngs)
        self.dropout = nnx.Dropout(0.5, rngs=rngs)
        self.linear2 = nnx.Linear(256, 10, rngs=rngs)

    def __call__(self, x):
        x = nnx.max_pool(nnx.relu(self.conv1(x)), window_shape=(2, 2), strides=(2, 2))
        x = nnx.max_pool(nnx.relu(self.conv2(x)), window_shape=(2, 2), strides=(2, 2))
        x = x.reshape(x.shape[0], -1)
        x = self.dropout(nnx.relu(self.linear1(x)))
        return self.linear2(x)


@nnx.jit(donate_argnums=(0, 1))
def train_step(model, optimizer, images, labels):
    def loss_fn(model):
        logits = model(images)
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()

    loss, grads = nnx.value_and_grad(loss_fn)(model)
    optimizer.update(model, grads)
    return loss


@nnx.jit
def count_correct(model, images, labels):
    return (model(images).argmax(-1) == labels).sum()


def test_accuracy(model, images, labels, batch_size=1000):
    count = len(images) - len(images) % batch_size
    hits = sum(
        int(count_correct(model, images[i : i + batch_size], labels[i : i + batch_size]))
        for i in range(0, count, batch_size)
    )
    return hits / count


def main():
    parser = argparse.ArgumentParser(description="Train a CNN on MNIST with Flax NNX.")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--steps", type=int, help="stop after this many steps (short run)")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--weight-decay", type=float, default=1e-4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--min-accuracy", type=float, default=0.97)
    oxla_home = Path(os.environ.get("OXLA_HOME", Path.home() / ".cache/oxla"))
    parser.add_argument("--data", type=Path, default=oxla_home / "datasets/mnist")
    parser.add_argument("--out", type=Path, default=Path("target/cnn-run-flax"))
    parser.add_argument("--checkpoint-every", type=int, default=100)
    parser.add_argument("--resume", action="store_true", help="continue from the latest checkpoint")
    args = parser.parse_args()

    train_images, train_labels = load_mnist(args.data, "train")
    test_images, test_labels = load_mnist(args.data, "t10k")
    steps_per_epoch = len(train_images) // args.batch_size
    # The schedule spans every epoch; --steps only stops early (so a run stopped and resumed
    # follows the same schedule as one that is not).
    schedule_steps = steps_per_epoch * args.epochs
    total_steps = min(args.steps or schedule_steps, schedule_steps)
    print(
        f"MNIST from {args.data}: {len(train_images)} training and {len(test_images)} test "
        f"images; CNN, AdamW, batch {args.batch_size}, {total_steps} steps"
    )

    schedule = optax.warmup_cosine_decay_schedule(
        init_value=0.0,
        peak_value=args.learning_rate,
        warmup_steps=max(schedule_steps // 20, 1),
        decay_steps=max(schedule_steps, 2),
        end_value=args.learning_rate * 0.01,
    )
    tx = optax.chain(
        optax.clip_by_global_norm(1.0),
        optax.adamw(schedule, weight_decay=args.weight_decay),
    )
    init_key, dropout_key, shuffle_key = jax.random.split(jax.random.key(args.seed), 3)
    # The dropout stream (its key and call count) is part of the model state, so it is
    # checkpointed with the parameters and a resumed run draws the same masks.
    model = CNN(rngs=nnx.Rngs(params=init_key, dropout=dropout_key))
    optimizer = nnx.Optimizer(model, tx, wrt=nnx.Param)

    checkpoints = ocp.CheckpointManager(
        args.out.absolute(), options=ocp.CheckpointManagerOptions(max_to_keep=2)
    )
    step = 0
    if args.resume:
        step = checkpoints.latest_step()
        if step is None:
            raise SystemExit(f"--resume: no checkpoint in {args.out}")
        restored = checkpoints.restore(
            step,
            args=ocp.args.Composite(
                model=ocp.args.StandardRestore(nnx.state(model)),
                optimizer=ocp.args.StandardRestore(nnx.state(optimizer)),
            ),
        )
        nnx.update(model, restored.model)
        nnx.update(optimizer, restored.optimizer)
        print(f"resumed from step {step}")
    else:
        for old in checkpoints.all_steps():  # a fresh run replaces an earlier run's checkpoints
            checkpoints.delete(old)

    started, first_step = time.perf_counter(), step
    while step < total_steps:
        # Each epoch's order depends only on the seed and the epoch, so a resumed run skips
        # the batches it has already trained on and sees the rest in the same order.
        epoch, first = divmod(step, steps_per_epoch)
        order = np.asarray(
            jax.random.permutation(jax.random.fold_in(shuffle_key, epoch), len(train_images))
        )
        for i in range(first, min(steps_per_epoch, first + total_steps - step)):
            batch = order[i * args.batch_size : (i + 1) * args.batch_size]
            loss = train_step(model, optimizer, train_images[batch], train_labels[batch])
            step += 1
            if step % 50 == 0:
                print(f"step {step}: loss {float(loss):.4f}")
            if step % args.checkpoint_every == 0 or step == total_steps:
                checkpoints.save(
                    step,
                    args=ocp.args.Composite(
                        model=ocp.args.StandardSave(nnx.state(model)),
                        optimizer=ocp.args.StandardSave(nnx.state(optimizer)),
                    ),
                )
    checkpoints.wait_until_finished()
    checkpoints.close()
    seconds = time.perf_counter() - started

    model.eval()
    accuracy = test_accuracy(model, test_images, test_labels)
    print(
        f"step {step}: held-out accuracy {accuracy:.2%} (steps {first_step}..{step} in "
        f"{seconds:.1f} s); checkpoints in {args.out}"
    )
    if accuracy < args.min_accuracy:
        raise SystemExit(
            f"held-out accuracy {accuracy:.2%} is below the required {args.min_accuracy:.2%}"
        )


if __name__ == "__main__":
    main()
