"""MNIST MLP (784-512-512-10) trained with AdamW: the Flax NNX + Optax + Orbax twin of
`crates/oxla/examples/mnist`, used for the line-count comparison and run by the tests in
short mode.

    python examples/flax/mnist.py
    python examples/flax/mnist.py --steps 150 --min-accuracy 0.9   # short
"""

import argparse
import json
import os
import time
from pathlib import Path

import jax
import numpy as np
import optax
import orbax.checkpoint as ocp
from flax import nnx
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


def load_idx(path):
    """An IDX file (big-endian header: magic, then one u32 per dimension) as a uint8 array."""
    data = path.read_bytes()
    ndim = data[3]
    shape = np.frombuffer(data, ">u4", count=ndim, offset=4)
    return np.frombuffer(data, np.uint8, offset=4 + 4 * ndim).reshape(shape)


def load_mnist(directory, split):
    images = load_idx(directory / f"{split}-images-idx3-ubyte")
    labels = load_idx(directory / f"{split}-labels-idx1-ubyte")
    return images.reshape(len(images), -1).astype(np.float32) / 255.0, labels.astype(np.int32)


class MLP(nnx.Module):
    def __init__(self, sizes, *, rngs: nnx.Rngs):
        self.layers = nnx.List([nnx.Linear(a, b, rngs=rngs) for a, b in zip(sizes[:-1], sizes[1:])])

    def __call__(self, x):
        for layer in self.layers[:-1]:
            x = nnx.relu(layer(x))
        return self.layers[-1](x)


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
    parser = argparse.ArgumentParser(description="Train an MLP on MNIST with Flax NNX.")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--steps", type=int, help="stop after this many steps (short run)")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--learning-rate", type=float, default=2e-3)
    parser.add_argument("--weight-decay", type=float, default=1e-4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--min-accuracy", type=float, default=0.97)
    oxla_home = Path(os.environ.get("OXLA_HOME", Path.home() / ".cache/oxla"))
    parser.add_argument("--data", type=Path, default=oxla_home / "datasets/mnist")
    parser.add_argument("--out", type=Path, default=Path("target/mnist-run-flax"))
    args = parser.parse_args()

    train_images, train_labels = load_mnist(args.data, "train")
    test_images, test_labels = load_mnist(args.data, "t10k")
    steps_per_epoch = len(train_images) // args.batch_size
    total_steps = min(args.steps or steps_per_epoch * args.epochs, steps_per_epoch * args.epochs)
    sizes = (784, 512, 512, 10)
    print(
        f"MNIST from {args.data}: {len(train_images)} training and {len(test_images)} test "
        f"images; MLP {list(sizes)}, AdamW, batch {args.batch_size}, {total_steps} steps"
    )

    schedule = optax.warmup_cosine_decay_schedule(
        init_value=0.0,
        peak_value=args.learning_rate,
        warmup_steps=max(total_steps // 20, 1),
        decay_steps=max(total_steps, 2),
        end_value=args.learning_rate * 0.01,
    )
    init_key, shuffle_key = jax.random.split(jax.random.key(args.seed))
    model = MLP(sizes, rngs=nnx.Rngs(init_key))
    optimizer = nnx.Optimizer(
        model, optax.adamw(schedule, weight_decay=args.weight_decay), wrt=nnx.Param
    )

    losses, accuracies, recent = [], [], []
    step = 0
    started = time.perf_counter()
    progress = Progress(
        TextColumn("epoch {task.fields[epoch]}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[status]}"),
        TimeElapsedColumn(),
    )
    with progress:
        task = progress.add_task("train", total=total_steps, epoch=1, status="")
        for epoch in range(args.epochs):
            if step == total_steps:
                break
            progress.update(task, epoch=epoch + 1)
            shuffle_key, epoch_key = jax.random.split(shuffle_key)
            order = np.asarray(jax.random.permutation(epoch_key, len(train_images)))
            epoch_started = time.perf_counter()
            for i in range(min(steps_per_epoch, total_steps - step)):
                batch = order[i * args.batch_size : (i + 1) * args.batch_size]
                recent.append(
                    train_step(model, optimizer, train_images[batch], train_labels[batch])
                )
                step += 1
                # Read the losses back every 25 steps (reading each would wait for every step).
                if step % 25 == 0 or step == total_steps:
                    loss = float(np.mean(jax.device_get(recent)))
                    recent.clear()
                    losses.append((step, loss))
                    rate = (i + 1) * args.batch_size / (time.perf_counter() - epoch_started)
                    progress.update(task, status=f"loss {loss:.4f}, {rate:.0f} examples/s")
                progress.update(task, completed=step)
            accuracies.append((step, test_accuracy(model, test_images, test_labels)))
            progress.console.print(
                f"epoch {epoch + 1}: step {step}, held-out accuracy {accuracies[-1][1]:.2%}"
            )
    seconds = time.perf_counter() - started
    accuracy = accuracies[-1][1]
    print(
        f"trained {step} steps in {seconds:.1f} s ({step * args.batch_size / seconds:.0f} "
        f"examples/s); held-out accuracy {accuracy:.2%}"
    )

    args.out.mkdir(parents=True, exist_ok=True)
    checkpoint = args.out.absolute() / "checkpoint"
    checkpointer = ocp.StandardCheckpointer()
    checkpointer.save(
        checkpoint, {"model": nnx.state(model), "optimizer": nnx.state(optimizer)}, force=True
    )
    checkpointer.wait_until_finished()
    metrics = args.out / "metrics.json"
    metrics.write_text(
        json.dumps(
            {
                "steps": step,
                "seconds": round(seconds, 3),
                "batch_size": args.batch_size,
                "loss": losses,
                "accuracy": accuracies,
            }
        )
        + "\n"
    )
    print(f"wrote {checkpoint} and {metrics}")
    if accuracy < args.min_accuracy:
        raise SystemExit(
            f"held-out accuracy {accuracy:.2%} is below the required {args.min_accuracy:.2%}"
        )


if __name__ == "__main__":
    main()
