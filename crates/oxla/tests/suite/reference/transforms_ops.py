"""Reference values for oxla's transformation rules, computed by JAX (CPU).

Takes every case of ops.py and prints JSON of JAX's jvp, vjp and vmap of it:

  {"jvp":  {name: {"primals": [...], "tangents": [enc or null], "primal": enc, "out": enc}},
   "vjp":  {name: {"primals": [...], "ct": enc, "primal": enc, "out": [enc or null]}},
   "vmap": {name: {"inputs": [...], "in_axes": [int or null], "out": enc}}}

jvp and vjp cover the differentiable cases (a floating input and a floating
output, and not piecewise constant); integer and bool inputs get no tangent
(null here, float0 for JAX) and no cotangent (null). vmap covers every case
with inputs, over a batch of 3: the first input is batched along axis 0, the
second along its last axis, the third is not batched, and so on cyclically
(rank-0 inputs along axis 0). A case JAX itself cannot transform is left out
of that section (and named on stderr). Arrays are encoded as in ops.py.

Everything runs in one jit (one XLA compilation instead of hundreds).
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from ops import CASES, enc  # noqa: E402

rng = np.random.default_rng(4321)

BATCH = 3

# Floating in and out, but piecewise constant (or not differentiable at all).
NOT_DIFFERENTIABLE = {"sign", "floor", "ceil", "round", "nextafter", "c_sign", "np_spacing", "lax_zeta",
                      "lax_igamma_grad_a", "lax_random_gamma_grad", "lax_betainc",
                      "np_spacing_normal", "np_spacing_f16",
                      # JAX: "scatter_apply is not compatible with automatic differentiation"
                      # (its jvp is the plain scatter's); oxla's is checked by finite differences.
                      "lax_scatter_apply_repeated", "lax_scatter_apply_rows_clip",
                      "lax_scatter_apply_dropped"}


# JAX's batched mulhi (jaxlib 0.10.2) emits an HLO mulhi that its XLA:CPU
# cannot compile ("Unsupported elementwise operation"): nothing to compare.
JAX_CANNOT_BATCH = {"lax_mulhi", "lax_mulhi_u8"}


def is_float(a):
    """Whether `a` has tangents: a floating-point or complex dtype."""
    return jnp.issubdtype(a.dtype if hasattr(a, "dtype") else np.asarray(a).dtype, jnp.inexact)


def normal_like(shape, dtype):
    if jnp.issubdtype(dtype, jnp.complexfloating):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def differentiable(name, args, out):
    return name not in NOT_DIFFERENTIABLE and any(is_float(a) for a in args) and is_float(out)


# Each section's builder returns (g, g's arguments, the JSON of the inputs,
# the JSON keys of g's outputs).


def jvp_case(fn, args):
    floats = [is_float(a) for a in args]
    tangents = [normal_like(np.shape(a), np.asarray(a).dtype) for a, f in zip(args, floats) if f]

    def g(primals, tangents):
        ts = iter(tangents)
        full = tuple(next(ts) if f else np.zeros(np.shape(a), dtype=jax.dtypes.float0)
                     for a, f in zip(args, floats))
        return jax.jvp(fn, tuple(primals), full)

    ts = iter(tangents)
    encoded = {"primals": [enc(a) for a in args], "tangents": [enc(next(ts)) if f else None for f in floats]}
    return g, (list(args), tangents), encoded, ["primal", "out"]


def vjp_case(fn, args):
    floats = [is_float(a) for a in args]
    out = jax.eval_shape(fn, *args)
    ct = normal_like(out.shape, out.dtype)

    def g(primals, ct):
        primal, pullback = jax.vjp(fn, *primals)
        return primal, [c if f else None for c, f in zip(pullback(ct), floats)]

    encoded = {"primals": [enc(a) for a in args], "ct": enc(ct)}
    return g, (list(args), ct), encoded, ["primal", "out"]


def copies(a):
    """BATCH distinct variants of `a` that keep its domain: floats scaled
    elementwise by up to ±5% (so positive, (-0.9, 0.9) and > 1.1 inputs stay
    in range; inf and nan stay), integers and bools permuted (the same
    values, so indices and shift amounts stay valid)."""
    out = [a]
    for k in range(1, BATCH):
        if is_float(a):
            scale = 1.0 + 0.05 * rng.uniform(-1.0, 1.0, a.shape)
            out.append((a.astype(np.float64) * scale).astype(a.dtype))
        else:
            out.append(np.roll(a.reshape(-1), k).reshape(a.shape))
    return out


def vmap_case(fn, args):
    in_axes, inputs = [], []
    for n, a in enumerate(args):
        a = np.asarray(a)
        if n % 3 == 2:
            in_axes.append(None)
            inputs.append(a)
            continue
        axis = 0 if n % 3 == 0 or a.ndim == 0 else -1
        in_axes.append(axis)
        inputs.append(np.stack(copies(a), axis=axis))

    def g(inputs):
        return (jax.vmap(fn, in_axes=tuple(in_axes))(*inputs),)

    encoded = {"inputs": [enc(a) for a in inputs], "in_axes": in_axes}
    return g, (inputs,), encoded, ["out"]


def main():
    result = {"jvp": {}, "vjp": {}, "vmap": {}}
    work = {}  # "section/name" -> (g, arguments)
    for name, (fn, args) in CASES.items():
        if not args:
            continue
        out = jax.eval_shape(fn, *args)
        sections = [] if name in JAX_CANNOT_BATCH else [("vmap", vmap_case)]
        if differentiable(name, args, out):
            sections = [("jvp", jvp_case), ("vjp", vjp_case)] + sections
        for section, make in sections:
            try:
                g, g_args, encoded, keys = make(fn, args)
                jax.eval_shape(g, *g_args)  # JAX can trace it
            except Exception as e:  # JAX cannot transform it: nothing to compare
                print(f"transforms_ops.py: JAX cannot do {section} of {name}: {type(e).__name__}",
                      file=sys.stderr)
                continue
            result[section][name] = encoded
            work[f"{section}/{name}"] = (g, g_args, keys)

    outs = jax.jit(lambda data: {k: work[k][0](*v) for k, v in data.items()})(
        {k: w[1] for k, w in work.items()})
    for k, values in outs.items():
        section, name = k.split("/", 1)
        for key, v in zip(work[k][2], values):
            result[section][name][key] = (
                [None if c is None else enc(c) for c in v] if isinstance(v, list) else enc(v))
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
