"""JAX's answers for oxla's explicit-sharding tests, on 8 CPU devices and
the mesh ('x': 2, 'y': 4) with both axes Explicit: for each program, the
types of its outputs (`jax.typeof`, dtypes spelled as oxla spells them),
their values and their partition specs; for programs JAX rejects, the
exception's class and first line. Prints JSON on stdout."""

import json
import os

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip()
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P, reshard, auto_axes  # noqa: E402

mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit, AxisType.Explicit))


def put(a, *spec):
    return jax.device_put(a, NamedSharding(mesh, P(*spec)))


def type_text(a):
    return str(jax.typeof(a)).replace("float32", "f32").replace("int32", "i32")


def spec_text(sharding):
    entries = list(sharding.spec)
    while entries and entries[-1] is None:
        entries.pop()
    parts = []
    for e in entries:
        if e is None:
            parts.append("None")
        elif isinstance(e, tuple):
            parts.append("(" + ", ".join(f"'{a}'" for a in e) + ")")
        else:
            parts.append(f"'{a}'" if False else f"'{e}'")
    return "P(" + ", ".join(parts) + ")"


X = (np.arange(8 * 4, dtype=np.float32).reshape(8, 4) - 10.0) / 7.0
W = (np.arange(4 * 16, dtype=np.float32).reshape(4, 16) % 9 - 4.0) / 5.0
Y = (np.arange(8 * 4, dtype=np.float32).reshape(8, 4) % 5 - 2.0) / 3.0
B = (np.arange(4 * 8, dtype=np.float32).reshape(4, 8) % 7 - 3.0) / 4.0
x = put(X, "x", None)
w = put(W, None, "y")
y = put(Y, None, "y")
a = put(Y, None, "y")
b = put(B, "y", None)

programs = {
    "mlp": (lambda x, w: (x @ w, jnp.sum(jnp.tanh(x @ w), axis=0)), (x, w)),
    "broadcast_add": (lambda x, y: x + y, (x, y)),
    "row_add": (lambda x, y: x + y[0], (x, y)),
    "reshape_split": (lambda x: x.reshape(2, 4, 4), (x,)),
    "reshape_merge": (lambda x: x.reshape(32), (x,)),
    "transpose": (lambda x, w: (x @ w).T, (x, w)),
    "argmax": (lambda x: jnp.argmax(x, axis=1), (x,)),
    "max": (lambda x: jnp.max(x, axis=0), (x,)),
    "slice": (lambda x: x[1:5, 1:3], (x,)),
    "softmax": (lambda x: jax.nn.softmax(x, axis=-1), (x,)),
    "fori": (lambda x: jax.lax.fori_loop(0, 3, lambda i, v: v * 1.5 + 1.0, x), (x,)),
    "cond": (lambda x: jax.lax.cond(True, lambda v: v * 2.0, lambda v: v + 1.0, x), (x,)),
    "vmap_sum": (jax.vmap(jnp.sum), (x,)),
    "grad": (jax.grad(lambda x, w: jnp.sum(jnp.tanh(x @ w)), argnums=(0, 1)), (x, w)),
    "dot_out_sharding": (lambda a, b: jnp.dot(a, b, out_sharding=P("x", None)), (a, b)),
    "auto_axes": (lambda a, b: auto_axes(lambda u, v: u @ v, out_sharding=P("x", None))(a, b), (a, b)),
    "reshard": (lambda x: reshard(x, P(None, "y")), (x,)),
    "reshard_grad": (jax.grad(lambda x: jnp.sum(reshard(x, P(None, "y")) ** 2)), (x,)),
    "errors_add": (lambda x: x + put(Y, "y", None), (x,)),
    "errors_reshape": (lambda x: x.reshape(4, 8), (x,)),
    "errors_dot": (lambda a, b: a @ b, (a, b)),
    "errors_dot_same_axis": (lambda x: x @ put(B, None, "x"), (x,)),
    "errors_cumsum": (lambda x: jnp.cumsum(x, axis=0), (x,)),
}

cases = {"inputs": {"x": X.ravel().tolist(), "w": W.ravel().tolist(), "y": Y.ravel().tolist(), "b": B.ravel().tolist()}}
with jax.set_mesh(mesh):
    for name, (f, args) in programs.items():
        try:
            outs = jax.jit(f)(*args)
        except Exception as e:  # noqa: BLE001
            cases[name] = {"error": type(e).__name__, "message": str(e).splitlines()[0]}
            continue
        leaves = jax.tree_util.tree_leaves(outs)
        cases[name] = {
            "types": [type_text(o) for o in leaves],
            "values": [np.asarray(o, dtype=np.float32).ravel().tolist() for o in leaves],
            "specs": [spec_text(o.sharding) for o in leaves],
        }
    cases["eval_shape"] = [type_text(o) for o in jax.tree_util.tree_leaves(
        jax.eval_shape(programs["mlp"][0], x, w))]
print(json.dumps(cases))
