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
    "take": (lambda x: x[:, jnp.array([0, 2])], (x,)),
    "concat": (lambda x: jnp.concatenate([x, x * 2.0], axis=1), (x,)),
    "pad": (lambda x: jnp.pad(x, ((0, 0), (1, 1))), (x,)),
    "rev": (lambda x: x[::-1], (x,)),
    "where": (lambda x: jnp.where(x > 0.5, x, 0.0), (x,)),
    "sort": (lambda x: jnp.sort(x, axis=1), (x,)),
    "dynamic_slice": (lambda x: jax.lax.dynamic_slice(x, (0, 1), (8, 2)), (x,)),
    "scan_xs": (lambda x: jax.lax.scan(lambda c, r: (c + r, c * 2.0), x.T[0] * 0.0, x.T), (x,)),
    "errors_scan_carry": (lambda x: jax.lax.scan(lambda c, r: (c + r, c), jnp.zeros(8), x.T), (x,)),
    "scan_carry": (lambda x: jax.lax.scan(lambda c, r: (c * 0.5 + r, None), x, jnp.ones((3,)))[0], (x,)),
    "while": (lambda x: jax.lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2.0), (0, x))[1], (x,)),
    "nested_jit": (lambda x: jax.jit(lambda b: b * 2.0)(x) + 1.0, (x,)),
    "vmap_reshard": (jax.vmap(lambda r: reshard(r, P("y"))), (x,)),
    "vmap_reshard_spmd": (jax.vmap(lambda r: reshard(r, P("y")), spmd_axis_name="x"), (x,)),
    "shard_map": (jax.shard_map(lambda b: b * 2.0, in_specs=P("x"), out_specs=P("x")), (x,)),
    "shard_map_psum": (jax.shard_map(lambda b: jax.lax.psum(b, "x"), in_specs=P("x"), out_specs=P()), (x,)),
    "device_put": (lambda x: jax.device_put(x, NamedSharding(mesh, P(None, "y"))), (x,)),
    "errors_constraint": (lambda x: jax.lax.with_sharding_constraint(x, NamedSharding(mesh, P(None, "y"))), (x,)),
    "errors_scan_xs": (lambda x: jax.lax.scan(lambda c, r: (c + r, c), jnp.zeros(4), x), (x,)),
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
    cases["eager_add"] = type_text(x + y)

    # A data-parallel training step: the batch split over 'x', the
    # parameters replicated; the weight gradients contract the split batch,
    # so their product takes the parameters' (unsplit) type.
    W1 = (np.arange(4 * 6, dtype=np.float32).reshape(4, 6) % 7 - 3.0) / 5.0
    W2 = (np.arange(6 * 2, dtype=np.float32).reshape(6, 2) % 5 - 2.0) / 4.0
    T = (np.arange(8 * 2, dtype=np.float32).reshape(8, 2) % 3 - 1.0) / 2.0

    def dp_loss(params, xb, tb):
        w1, w2 = params
        return jnp.mean((jnp.tanh(xb @ w1) @ w2 - tb) ** 2)

    def dp_step(params, xb, tb):
        loss, grads = jax.value_and_grad(dp_loss)(params, xb, tb)
        return loss, jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)

    outs = jax.jit(dp_step)((put(W1), put(W2)), x, put(T, "x"))
    leaves = jax.tree_util.tree_leaves(outs)
    cases["dp_step"] = {
        "types": [type_text(o) for o in leaves],
        "values": [np.asarray(o).ravel().tolist() for o in leaves],
        "specs": [spec_text(o.sharding) for o in leaves],
        "inputs": [W1.ravel().tolist(), W2.ravel().tolist(), T.ravel().tolist()],
    }

# A mesh with one explicit and one auto axis: types name the explicit one;
# the partitioner still splits over the other.
mixed = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit, AxisType.Auto))
xm = jax.device_put(X, NamedSharding(mixed, P("x", None)))
wm = jax.device_put(W, NamedSharding(mixed, P(None, "y")))
out = jax.jit(lambda a, b: a @ b)(xm, wm)
cases["mixed"] = {"types": [type_text(xm), type_text(wm), type_text(out)],
                  "values": [np.asarray(out).ravel().tolist()]}
print(json.dumps(cases))
