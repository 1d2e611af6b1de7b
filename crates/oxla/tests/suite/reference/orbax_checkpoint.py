"""Writes Orbax checkpoints for the orbax_checkpoints test: argv[1] a
directory, in which it saves one pytree (a Flax linen MLP's params, bf16,
int32, uint8 and bool arrays, scalars, a list of dicts, and an array big
enough to span several chunks when Orbax is asked to chunk it) four ways:

- "default": ocp.StandardCheckpointer().save with every default (OCDBT,
  zarr 2, zstd, one chunk per array);
- "chunked": PyTreeCheckpointer with chunk_byte_size, so arrays span
  several zarr 2 chunks;
- "zarr3": use_zarr3=True (zarr 3's sharding codec) with chunk_byte_size;
- "plain": use_ocdbt=False (zarr files in directories, no OCDBT).

Prints JSON {"checkpoints": {kind: path}, "expected": {orbax name: array},
"mlp": {"x": array, "y": the MLP's output on x}}, each array as
{"dtype", "shape", "data": base64}; an Orbax name is the leaf's keys
joined by "." (params.Dense_0.kernel, layers.1.w)."""

import base64
import json
import os
import sys

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import orbax.checkpoint as ocp


def enc(a):
    a = np.asarray(a)
    return {"dtype": a.dtype.name, "shape": list(a.shape),
            "data": base64.b64encode(np.ascontiguousarray(a).tobytes()).decode()}


class MLP(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.Dense(8)(x))
        return nn.Dense(3)(x)


out = sys.argv[1]
k = jax.random.split(jax.random.key(0), 4)
x = jax.random.normal(k[0], (2, 4), jnp.float32)
variables = MLP().init(k[1], x)
tree = {
    "params": variables["params"],
    "emb": jax.random.normal(k[2], (3, 5), jnp.bfloat16),
    "counts": jnp.arange(-3, 4, dtype=jnp.int32),
    "bytes": jnp.array([0, 7, 255], dtype=jnp.uint8),
    "flags": jnp.array([True, False, True]),
    "step": jnp.array(1234, dtype=jnp.int32),
    "scale": jnp.array(0.25, dtype=jnp.float32),
    "layers": [{"w": jnp.full((2,), 1.5, jnp.float32)},
               {"w": jnp.full((3,), -2.0, jnp.float32)}],
    "table": jax.random.normal(k[3], (300, 250), jnp.float32),
}


def save(name, handler=None, chunk_byte_size=None):
    path = os.path.join(out, name)
    if handler is None:
        with ocp.StandardCheckpointer() as checkpointer:
            checkpointer.save(path, tree)
        return path
    save_args = jax.tree.map(lambda _: ocp.SaveArgs(chunk_byte_size=chunk_byte_size), tree)
    with ocp.Checkpointer(handler) as checkpointer:
        checkpointer.save(path, args=ocp.args.PyTreeSave(tree, save_args=save_args))
    return path


checkpoints = {
    "default": save("default"),
    "chunked": save("chunked", ocp.PyTreeCheckpointHandler(), 40_000),
    "zarr3": save("zarr3", ocp.PyTreeCheckpointHandler(use_zarr3=True), 40_000),
    "plain": save("plain", ocp.PyTreeCheckpointHandler(use_ocdbt=False), 40_000),
}


def orbax_name(path):
    return ".".join(str(getattr(p, "key", getattr(p, "idx", p))) for p in path)


expected = {orbax_name(p): enc(v) for p, v in jax.tree_util.tree_flatten_with_path(tree)[0]}
print(json.dumps({
    "checkpoints": checkpoints,
    "expected": expected,
    "mlp": {"x": enc(x), "y": enc(MLP().apply(variables, x))},
}))
