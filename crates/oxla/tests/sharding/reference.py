"""JAX's answers for oxla's sharding tests, on 8 CPU devices: for each
program, the output values and the partition spec JAX's jit gives each
output. Prints JSON on stdout."""

import json
import os

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip()
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P  # noqa: E402

mesh = jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))


def named(*spec):
    return NamedSharding(mesh, P(*spec))


def inputs():
    x = (np.arange(8 * 4, dtype=np.float32).reshape(8, 4) - 10.0) / 7.0
    w = (np.arange(4 * 6, dtype=np.float32).reshape(4, 6) - 5.0) / 11.0
    return x, w


def spec_text(sharding):
    """The spec as oxla prints it: P('data', None) with trailing Nones dropped."""
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
            parts.append(f"'{e}'")
    return "P(" + ", ".join(parts) + ")"


def run(f, *args):
    out = jax.jit(f)(*args)
    return {"value": np.asarray(out).ravel().tolist(), "shape": list(out.shape), "spec": spec_text(out.sharding)}


x, w = inputs()
xs = jax.device_put(x, named("data", None))
ws = jax.device_put(w, named(None, "model"))


def matmul_tanh_sum(x, w):
    return jnp.tanh(x @ w).sum(0)


def matmul(x, w):
    return x @ w


def constrained(x, w):
    y = jax.lax.with_sharding_constraint(x @ w, named("data", "model"))
    return jnp.sin(y) * 2.0


def tensor_parallel_mlp(x, w1, w2):
    return jax.nn.relu(x @ w1) @ w2


w1 = (np.arange(4 * 8, dtype=np.float32).reshape(4, 8) - 13.0) / 9.0
w2 = (np.arange(8 * 4, dtype=np.float32).reshape(8, 4) - 7.0) / 10.0
w1s = jax.device_put(w1, named(None, "model"))
w2s = jax.device_put(w2, named("model", None))

cases = {
    "tensor_parallel_mlp": run(tensor_parallel_mlp, xs, w1s, w2s),
    "matmul_tanh_sum": run(matmul_tanh_sum, xs, ws),
    "matmul": run(matmul, xs, ws),
    "constrained": run(constrained, xs, ws),
    "elementwise": run(lambda x: jnp.exp(x) + 1.0, xs),
}

# Inputs without a sharding stay unconstrained: the partitioner chooses
# their layout (JAX's compiled.input_shardings), and the outputs follow.
def equivalent_spec(sharding, ndim):
    """The spec (as spec_text prints it) of a NamedSharding on mesh
    equivalent to a compiled input sharding."""
    entries = [None, "data", "model", ("data", "model"), ("model", "data")]
    for d0 in entries:
        for d1 in entries:
            candidate = named(d0, d1)
            try:
                if sharding.is_equivalent_to(candidate, ndim):
                    return spec_text(candidate)
            except ValueError:
                continue
    raise AssertionError(f"no spec for {sharding}")


def unconstrained(name, f, *args, **jit_kwargs):
    jitted = jax.jit(f, **jit_kwargs)
    out = jitted(*args)
    ins = jitted.lower(*args).compile().input_shardings[0]
    cases[name] = {"value": np.asarray(out).ravel().tolist(), "shape": list(out.shape),
                   "spec": spec_text(out.sharding),
                   "input_specs": [equivalent_spec(s, np.ndim(a)) for s, a in zip(ins, args)]}


# The per-shard view: each mesh device (in mesh order) with its block.
def indices(spec, shape):
    sharding = named(*spec)
    table = sharding.devices_indices_map(shape)
    def ranges(index):
        return [[sl.start or 0, shape[d] if sl.stop is None else sl.stop] for d, sl in enumerate(index)]
    return {"shard_shape": list(sharding.shard_shape(shape)),
            "map": [[int(dev.id), ranges(table[dev])] for dev in mesh.devices.flat]}


shard_views = {"data": indices(("data", None), (8, 4)), "model": indices((None, "model"), (8, 4)),
               "both": indices((("data", "model"),), (8, 4)), "replicated": indices((), (8, 4))}
from_callback = jax.make_array_from_callback((8, 4), named("data", "model"), lambda index: x[index])
shard_views["callback_shards"] = [
    [int(sh.device.id), np.asarray(sh.data).ravel().tolist()] for sh in from_callback.addressable_shards]

# A jit with shardings inside other transformations (unsharded x): its
# in/out shardings still lay out the values.
inner = jax.jit(lambda v: jnp.sin(v) * 2.0, in_shardings=named("data", None),
                out_shardings=named(None, "model"))
cases["nested_jit"] = run(lambda v: inner(v) + 1.0, x)
cases["grad_of_jit"] = run(jax.grad(lambda v: jnp.sum(inner(v) ** 2)), x)
row_inner = jax.jit(lambda r: jnp.sin(r) * 2.0, out_shardings=named("model"))
cases["vmap_of_jit"] = run(jax.vmap(lambda r: row_inner(r) * 3.0), x)

def smap(f, in_specs, out_specs, check_vma=True):
    return jax.shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs, check_vma=check_vma)


def flat(out):
    return {"value": np.asarray(out).ravel().tolist(), "shape": list(out.shape), "spec": ""}


grid = P("data", "model")
collective_cases = {
    "sm_psum": (lambda x: jax.lax.psum(x, "data"), grid, P(None, "model")),
    # A named vmap over each block's rows: collectives mix its axis with
    # the mesh's.
    "sm_vmap_named": (
        lambda x: jax.vmap(
            lambda r: jax.lax.psum(r, ("data", "i"))
            + jax.lax.axis_index(("data", "i")).astype(jnp.float32) * 100.0
            + jax.lax.pmax(r, ("i", "model")),
            axis_name="i",
        )(x),
        grid,
        grid,
    ),
    "sm_pmean_all": (lambda x: jax.lax.pmean(x, ("data", "model")), grid, P()),
    "sm_pmax": (lambda x: jax.lax.pmax(x, "data"), grid, P(None, "model")),
    "sm_pmin": (lambda x: jax.lax.pmin(x, "model"), grid, P("data")),
    "sm_all_gather": (lambda x: jax.lax.all_gather(x, "model", axis=0, tiled=True), grid, P("data")),
    "sm_all_gather_stacked": (lambda x: jax.lax.all_gather(x, "data", axis=1), grid, P(None, None, "model")),
    "sm_psum_scatter": (lambda x: jax.lax.psum_scatter(x, "model", scatter_dimension=1, tiled=True), grid, grid),
    "sm_all_to_all": (lambda x: jax.lax.all_to_all(x, "data", 0, 1, tiled=True), P(None, "model"), grid),
    # Axes out of mesh order: group positions as JAX numbers them.
    "sm_ppermute_axes_reversed": (
        lambda x: jax.lax.ppermute(x, ("model", "data"), [(i, (i + 3) % 8) for i in range(8)]),
        grid,
        grid,
    ),
    "sm_axis_index_reversed": (
        lambda x: x * 0.0 + jax.lax.axis_index(("model", "data")).astype(jnp.float32),
        grid,
        grid,
    ),
    "sm_ppermute_index": (
        lambda x: jax.lax.ppermute(x, "data", [(0, 1), (1, 2), (2, 3), (3, 0)]) * 10.0
        + jax.lax.axis_index("data").astype(jnp.float32),
        grid,
        grid,
    ),
    # Untiled all_to_all (JAX's default), pswapaxes, pshuffle, negative axes.
    "sm_all_to_all_untiled": (lambda x: jax.lax.all_to_all(x.reshape(4, 1), "data", 0, 1), grid, grid),
    "sm_all_to_all_untiled_back": (lambda x: jax.lax.all_to_all(x.reshape(1, 4), "data", 1, 0), grid, grid),
    "sm_pswapaxes": (lambda x: jax.lax.pswapaxes(x.reshape(4, 1), "data", 0), grid, grid),
    "sm_pshuffle": (lambda x: jax.lax.pshuffle(x, "data", [2, 0, 3, 1]), grid, grid),
    "sm_all_gather_negative": (lambda x: jax.lax.all_gather(x, "model", axis=-1, tiled=True), grid, P("data")),
    "sm_all_gather_stacked_negative": (lambda x: jax.lax.all_gather(x, "data", axis=-1), grid, P(None, "model")),
    # axis_index_groups (JAX allows them with check_vma=False).
    "sm_psum_groups": (lambda x: jax.lax.psum(x, "data", axis_index_groups=[[0, 2], [3, 1]]), grid, grid),
    "sm_pmean_groups": (lambda x: jax.lax.pmean(x, "data", axis_index_groups=[[0, 1], [2, 3]]), grid, grid),
    "sm_pmax_groups": (lambda x: jax.lax.pmax(x, "data", axis_index_groups=[[1, 2], [3, 0]]), grid, grid),
    "sm_all_gather_groups": (
        lambda x: jax.lax.all_gather(x, "data", axis_index_groups=[[0, 2], [3, 1]], axis=0, tiled=True),
        grid,
        grid,
    ),
    "sm_psum_scatter_groups": (
        lambda x: jax.lax.psum_scatter(x, "data", scatter_dimension=0, tiled=True,
                                       axis_index_groups=[[0, 1], [2, 3]]),
        grid,
        grid,
    ),
    "sm_all_to_all_groups": (
        lambda x: jax.lax.all_to_all(x, "data", 0, 1, tiled=True, axis_index_groups=[[0, 1], [2, 3]]),
        grid,
        grid,
    ),
}
for name, (f, i, o) in collective_cases.items():
    # Values only: JAX cannot infer every result's replication statically.
    cases[name] = flat(jax.jit(smap(f, i, o, check_vma=False))(x))


def sm_matmul(x, w):
    return smap(lambda x, w: jax.lax.psum(x @ w, "model"), (grid, P("model", None)), P("data", None))(x, w)


def sm_loss(x, w):
    return jnp.sum(jnp.tanh(sm_matmul(x, w)))


gx, gw = jax.jit(jax.grad(sm_loss, argnums=(0, 1)))(x, w)
cases["sm_grad_x"] = flat(gx)
cases["sm_grad_w"] = flat(gw)
ring = [(0, 1), (1, 2), (2, 3), (3, 0)]


def sm_collectives_loss(x):
    f = smap(
        lambda x: jnp.sin(jax.lax.all_gather(jax.lax.ppermute(x, "data", ring), "model", axis=1, tiled=True)) * 2.0,
        grid, P("data", None), check_vma=False)
    g = smap(lambda x: jax.lax.psum_scatter(x, "model", scatter_dimension=1, tiled=True),
             P("data", None), grid, check_vma=False)
    copy = smap(lambda x: x * 3.0, P(), P(), check_vma=False)
    return jnp.sum(g(f(x)) ** 2) + jnp.sum(copy(x))


cases["sm_grad_collectives"] = flat(jax.jit(jax.grad(sm_collectives_loss))(x))

GROUPS = [[0, 2], [3, 1]]


def sm_grouped_loss(x):
    f = smap(
        lambda x: jnp.sin(jax.lax.all_gather(x, "data", axis_index_groups=GROUPS, axis=0, tiled=True))
        * jax.lax.psum(x, "data", axis_index_groups=GROUPS).sum(),
        grid, grid, check_vma=False)
    g = smap(lambda x: jax.lax.psum_scatter(x, "data", scatter_dimension=0, tiled=True, axis_index_groups=GROUPS),
             grid, grid, check_vma=False)
    return jnp.sum(g(f(x)) ** 2)


cases["sm_grad_grouped"] = flat(jax.jit(jax.grad(sm_grouped_loss))(x))

# all_gather_invariant: replicated over the gathered axis under
# check_vma=True, and transposed to each device's own slice.
gather_invariant = smap(lambda b: jax.lax.all_gather(b, "data", axis=-2, tiled=True, to="invarying") * 2.0,
                        grid, P(None, "model"))
cases["sm_all_gather_invariant"] = flat(jax.jit(gather_invariant)(x))
cases["sm_grad_all_gather_invariant"] = flat(
    jax.jit(jax.grad(lambda v: jnp.sum(jnp.sin(gather_invariant(v)) * v)))(x))
x3 = np.stack([x, x * 2.0, x - 1.0])
cases["sm_vmap"] = flat(jax.jit(jax.vmap(smap(lambda x: jax.lax.psum(jnp.sin(x), "data"), grid, P(None, "model"))))(x3))
cases["shard_views"] = shard_views
# Arrays on two meshes over the same devices in the same order meet in one
# program (the output is laid out on the first); devices in another order
# are an error.
wide = jax.sharding.Mesh(np.array(jax.devices()).reshape(2, 4), ("a", "b"))
x_wide = jax.device_put(x, NamedSharding(wide, P("a", "b")))
two_meshes = jax.jit(lambda a, b: a * b + 1.0)(x_wide, xs)
cases["two_meshes"] = {"value": np.asarray(two_meshes).ravel().tolist(), "shape": list(two_meshes.shape),
                       "spec": spec_text(two_meshes.sharding)}
# P.UNCONSTRAINED in a sharding constraint: the partitioner keeps (or
# picks) the layout of those dimensions.
x_grid = jax.device_put(x, named("data", "model"))
cases["constraint_unconstrained_keeps"] = run(
    lambda y: jax.lax.with_sharding_constraint(y * 2.0, named(P.UNCONSTRAINED, "model")), xs)
cases["constraint_unconstrained_closed"] = run(
    lambda y: jax.lax.with_sharding_constraint(y * 2.0, named(P.UNCONSTRAINED, None)), x_grid)
# in_shardings / out_shardings as pytrees of shardings.
bias = (np.arange(6, dtype=np.float32) - 2.0) / 5.0


def pytree_layer(params, v):
    kernel, b = params
    return jnp.tanh(v @ kernel + b), (v @ kernel).sum(0)


pytree_out = jax.jit(pytree_layer, in_shardings=((named(None, "model"), named("model")), named("data")),
                     out_shardings=(named("data", "model"), named()))((w, bias), x)
for i, out in enumerate(pytree_out):
    cases[f"pytree_shardings_{i}"] = {"value": np.asarray(out).ravel().tolist(), "shape": list(out.shape),
                                      "spec": spec_text(out.sharding)}
# vmap of a shard_map with spmd_axis_name: the batch is split over 'data'
# in the shard_map's specs; the replicated w's gradient is summed over it.
spmd_w = np.array([0.5, -1.5], np.float32)


def spmd_example(v, wv):
    return jax.shard_map(lambda vb, wb: jax.lax.psum(jnp.sin(vb) * wb, "model"), mesh=mesh,
                         in_specs=(P("model"), P()), out_specs=P())(v, wv)


spmd_vmap = jax.vmap(spmd_example, in_axes=(0, None), spmd_axis_name="data")
spmd_out = jax.jit(spmd_vmap)(x, spmd_w)
cases["vmap_spmd_shard_map"] = {"value": np.asarray(spmd_out).ravel().tolist(), "shape": list(spmd_out.shape),
                                "spec": spec_text(spmd_out.sharding)}
cases["vmap_spmd_shard_map_grad"] = flat(jax.jit(jax.grad(lambda wv: jnp.sum(spmd_vmap(x, wv) ** 2)))(spmd_w))
unconstrained("unconstrained_from_out_sharding", lambda y: jnp.tanh(y) + 1.0, x,
              out_shardings=named(None, "model"))
unconstrained("unconstrained_from_constraint",
              lambda y: jax.lax.with_sharding_constraint(y * 2.0, named("data")).sum(1), x)
unconstrained("unconstrained_beside_sharded", lambda a, b: a * b + 1.0, xs, x)

# pmap with in_axes, out_axes, static arguments and devices.
pm_in = jax.pmap(lambda a, b: a * b + jax.lax.psum(a, "i"), axis_name="i", in_axes=(1, None))
cases["pmap_in_axes"] = flat(pm_in(x.T, w[:, 0]))
cases["pmap_grad_in_axes"] = flat(jax.grad(lambda a: jnp.sum(pm_in(a, w[:, 0]) ** 2))(x.T))
pm_out = jax.pmap(lambda a: (a * 2.0, jax.lax.psum(a, "i")), axis_name="i", out_axes=(1, None))
cases["pmap_out_axes_stacked"] = flat(pm_out(x)[0])
cases["pmap_out_axes_none"] = flat(pm_out(x)[1])
cases["pmap_static"] = flat(jax.pmap(lambda a, k: a ** k, axis_name="i", static_broadcasted_argnums=(1,))(x, 3))
cases["pmap_groups_devices"] = flat(jax.pmap(
    lambda v: jax.lax.all_gather(v, "i", axis_index_groups=[[0, 2], [3, 1]]),
    axis_name="i", devices=jax.devices()[:4])(np.arange(16.0, dtype=np.float32).reshape(4, 4)))

# Gradients taken inside a shard_map body, with JAX's default replication
# checking: a replicated parameter's cotangent is summed over the devices.
DP_W1 = (np.arange(4 * 6, dtype=np.float32).reshape(4, 6) % 7 - 3.0) / 5.0
DP_W2 = (np.arange(6 * 2, dtype=np.float32).reshape(6, 2) % 5 - 2.0) / 4.0
DP_Y = (np.arange(8 * 2, dtype=np.float32).reshape(8, 2) % 3 - 1.0) / 2.0


def dp_loss(params, xb, yb):
    w1, w2 = params
    return jnp.mean((jnp.tanh(xb @ w1) @ w2 - yb) ** 2)


def dp_step(params, xb, yb):
    loss, grads = jax.value_and_grad(dp_loss)(params, xb, yb)
    return jax.lax.pmean(loss, "data"), grads


def dp_mixed(params, xb, yb):
    # Replicated-only and data-dependent terms: only the second is summed.
    reg = lambda p: jnp.sum(p[0] ** 2) + jax.lax.pmean(dp_loss(p, xb, yb), "data")
    return jax.grad(reg)(params)


for name, f in {"dp_grads": dp_step, "dp_mixed": dp_mixed}.items():
    out = jax.jit(smap(f, (P(), P("data"), P("data")), P()))((DP_W1, DP_W2), x, DP_Y)
    cases[name] = [np.asarray(leaf).ravel().tolist() for leaf in jax.tree_util.tree_leaves(out)]
def loop_grad(w, xb):
    def loss(w):
        step = lambda c, _: (c * w + xb, None)
        c, _ = jax.lax.scan(step, jax.lax.pcast(jnp.zeros((2, 4), jnp.float32), "data", to="varying"), None, length=3)
        return jnp.sum(c)
    return jax.grad(loss)(w)


cases["loop_grad"] = np.asarray(
    jax.jit(smap(loop_grad, (P(), P("data")), P()))(np.float32(0.5), x)).ravel().tolist()
cases["dp_inputs"] = [DP_W1.ravel().tolist(), DP_W2.ravel().tolist(), DP_Y.ravel().tolist()]
print(json.dumps(cases))
