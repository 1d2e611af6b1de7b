"""Writes Orbax checkpoints for the orbax_checkpoints test: argv[1] a
directory, in which it saves one pytree (a Flax linen MLP's params, bf16,
int32, uint8 and bool arrays, scalars, a list of dicts, and an array big
enough to span several chunks when Orbax is asked to chunk it) four ways:

- "default": ocp.StandardCheckpointer().save with every default (OCDBT,
  zarr 2, zstd, one chunk per array);
- "chunked": PyTreeCheckpointer with chunk_byte_size, so arrays span
  several zarr 2 chunks;
- "zarr3": use_zarr3=True (zarr 3's sharding codec) with chunk_byte_size;
- "plain": use_ocdbt=False (zarr files in directories, no OCDBT);
- "empties_only": {"d": {}, "n": None}, empty values and no array.

Prints JSON {"checkpoints": {kind: path}, "expected": {orbax name: array},
"mlp": {"x": array, "y": the MLP's output on x}}, each array as
{"dtype", "shape", "data": base64}; an Orbax name is the leaf's keys
joined by "." (params.Dense_0.kernel, layers.1.w).

Then it restores the checkpoints oxla wrote (argv[1]/oxla.json lists them,
{name: {"path", "twin"}}) four ways each: StandardCheckpointer and
PyTreeCheckpointer, without a target and with an abstract one
(ShapeDtypeStructs on the first device). For a checkpoint with a "twin"
(the Orbax settings oxla was asked to mirror: {"chunk_byte_size",
"use_compression", "use_ocdbt", "use_zarr3"}), it saves what it restored
again with Orbax under argv[1]/twins/<name>, and lists both stores' keys
and array metadata texts (.zarray, zarr.json).
Reported as "restored": {name: {"<checkpointer>/<target or none>":
{"leaves": {orbax name: array}, "keys": {orbax name: [[kind, key], ...]},
"empties": {orbax name: "None" | "dict" | "list" | "tuple"}}},
"twins": {name: path}, "stores": {path: {"keys": [...], "zarray": {key:
text}}}}, kind "seq" or "dict"."""

import base64
import json
import os
import sys

import flax.linen as nn
import jax

# oxla's 64-bit arrays restore as themselves only with x64 on.
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
import numpy as np
import orbax.checkpoint as ocp
import tensorstore as ts


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
    # Empty values: recorded in _METADATA without an array.
    "unused": None,
    "opt_state": {"mu": {}, "count": []},
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


def save_empties_only():
    path = os.path.join(out, "empties_only")
    with ocp.StandardCheckpointer() as checkpointer:
        checkpointer.save(path, {"d": {}, "n": None})
    return path


checkpoints = {
    "empties_only": save_empties_only(),
    "default": save("default"),
    "chunked": save("chunked", ocp.PyTreeCheckpointHandler(), 40_000),
    "zarr3": save("zarr3", ocp.PyTreeCheckpointHandler(use_zarr3=True), 40_000),
    "plain": save("plain", ocp.PyTreeCheckpointHandler(use_ocdbt=False), 40_000),
}


def orbax_name(path):
    return ".".join(str(getattr(p, "key", getattr(p, "idx", p))) for p in path)


def leaves_and_keys(tree):
    flat = jax.tree_util.tree_flatten_with_path(tree)[0]
    leaves = {orbax_name(p): enc(v) for p, v in flat}
    keys = {orbax_name(p): [["seq", str(k.idx)] if hasattr(k, "idx") else ["dict", str(k.key)]
                            for k in p] for p, _ in flat}
    return {"leaves": leaves, "keys": keys, "empties": empties(tree)}


def empties(tree, path=()):
    """The None values and empty dicts, lists and tuples in `tree`, by Orbax
    name, with their kind."""
    if tree is None:
        return {".".join(path): "None"}
    if isinstance(tree, (dict, list, tuple)) and not tree:
        return {".".join(path): type(tree).__name__}
    items = (tree.items() if isinstance(tree, dict)
             else enumerate(tree) if isinstance(tree, (list, tuple)) else ())
    out = {}
    for key, value in items:
        out.update(empties(value, path + (str(key),)))
    return out


def store(path):
    if os.path.exists(os.path.join(path, "manifest.ocdbt")):
        spec = {"driver": "ocdbt", "base": "file://" + path + "/"}
    else:
        spec = {"driver": "file", "path": path + "/"}
    kv = ts.KvStore.open(spec).result()
    keys = sorted(k.decode() for k in kv.list().result())
    zarray = {k: kv.read(k).result().value.decode() for k in keys
              if k.endswith("/.zarray") or k.endswith("/zarr.json")}
    return {"keys": keys, "zarray": zarray}


def restore_all(path):
    out = {}
    with ocp.StandardCheckpointer() as c:
        plain = c.restore(path)
    out["standard/none"] = leaves_and_keys(plain)
    device = jax.sharding.SingleDeviceSharding(jax.devices()[0])
    abstract = jax.tree.map(
        lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=device), plain)
    with ocp.StandardCheckpointer() as c:
        restored = c.restore(path, abstract)
    out["standard/target"] = leaves_and_keys(restored)
    with ocp.PyTreeCheckpointer() as c:
        out["pytree/none"] = leaves_and_keys(c.restore(path))
        restore_args = ocp.checkpoint_utils.construct_restore_args(abstract)
        pytree = c.restore(path, args=ocp.args.PyTreeRestore(item=abstract, restore_args=restore_args))
        out["pytree/target"] = leaves_and_keys(pytree)
    return out, restored


def twin(tree, path, settings):
    chunk = settings.get("chunk_byte_size")
    save_args = jax.tree.map(lambda _: ocp.SaveArgs(chunk_byte_size=chunk), tree)
    handler_settings = {k: settings[k] for k in
                        ["use_compression", "use_ocdbt", "use_zarr3"] if k in settings}
    if not handler_settings:
        with ocp.StandardCheckpointer() as c:
            c.save(path, tree, save_args=save_args)
    else:
        handler = ocp.PyTreeCheckpointHandler(**handler_settings)
        with ocp.Checkpointer(handler) as c:
            c.save(path, args=ocp.args.PyTreeSave(tree, save_args=save_args))


restored, twins, stores = {}, {}, {}
listed = os.path.join(out, "oxla.json")
for name, entry in (json.load(open(listed)) if os.path.exists(listed) else {}).items():
    restored[name], restored_tree = restore_all(entry["path"])
    stores[entry["path"]] = store(entry["path"])
    if entry.get("twin") is not None:
        twins[name] = os.path.join(out, "twins", name)
        twin(restored_tree, twins[name], entry["twin"])
        stores[twins[name]] = store(twins[name])

# oxla's checkpoint of empty values alone, restored without a target.
empties_only = os.path.join(out, "oxla", "empties_only")
if os.path.exists(empties_only):
    with ocp.StandardCheckpointer() as c:
        restored["empties_only"] = {"empties": empties(c.restore(empties_only))}

expected = {orbax_name(p): enc(v) for p, v in jax.tree_util.tree_flatten_with_path(tree)[0]}
print(json.dumps({
    "checkpoints": checkpoints,
    "expected": expected,
    "mlp": {"x": enc(x), "y": enc(MLP().apply(variables, x))},
    "restored": restored,
    "twins": twins,
    "stores": stores,
}))
