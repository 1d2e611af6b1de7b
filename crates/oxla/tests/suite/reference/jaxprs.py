"""JAX's make_jaxpr texts and type promotion table, for oxla's tests.

Prints JSON: {"jaxprs": {name: text}, "promotion": [[a, a_weak, b, b_weak, x64, result, result_weak], ...]}.
"""

import json
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax._src import dtypes

f32 = jnp.ones((2, 3), jnp.float32)


def matmul_highest(a, b):
    with jax.default_matmul_precision("highest"):
        return a @ b


JAXPRS = {
    "sin": (lambda a: jnp.sin(a), [f32]),
    "mul_literal": (lambda a: a * 2.0, [jnp.ones(3)]),
    "matmul_add": (lambda a, b: jnp.sin(a) @ b + 1, [f32, jnp.ones((3, 4))]),
    "matmul_highest": (matmul_highest, [f32, jnp.ones((3, 4))]),
    "broadcast_add": (lambda a, b: a + b, [f32, jnp.ones(3)]),
    "sum_f16_div": (lambda a: jnp.sum(a, axis=0) / 3, [jnp.ones((2, 3), jnp.float16)]),
    "convert_add": (lambda a: a.astype(jnp.int32) + 1, [jnp.ones(2)]),
    "relu": (lambda a: jnp.maximum(a, 0.0), [jnp.ones(2)]),
    # Control flow: nested jaxprs print indented, with their parameters.
    "cond": (lambda p, a: lax.cond(p, lambda a: a * 2.0, lambda a: jnp.sin(a), a), [True, jnp.ones(3)]),
    "switch": (lambda i, a: lax.switch(i, [lambda a: a + 1.0, lambda a: a * 2.0, lambda a: -a], a),
               [jnp.int32(1), jnp.ones(3)]),
    "while": (lambda a: lax.while_loop(lambda c: c[0] < 10, lambda c: (c[0] + 1, c[1] * 2.0), (0, a)),
              [jnp.ones(3)]),
    "scan": (lambda c, xs: lax.scan(lambda c, x: (c + x, jnp.sin(c)), c, xs), [jnp.ones(3), jnp.ones((4, 3))]),
    "fori": (lambda a: lax.fori_loop(0, 5, lambda i, c: c * i.astype(jnp.float32), a), [jnp.ones(3)]),
    "scan_closure": (lambda w, xs: lax.scan(lambda c, x: (c * w + x, None), jnp.zeros(3), xs, reverse=True),
                     [jnp.ones(3), jnp.ones((4, 3))]),
}

NAMES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
         "float16", "bfloat16", "float32", "float64", "complex64", "complex128"]


def promotion_table(x64):
    jax.config.update("jax_enable_x64", x64)
    rows = []
    weak = {"int": int, "float": float, "complex": complex}
    kind = lambda n: "complex" if "complex" in n else "float" if "float" in n else "int"  # noqa: E731
    operands = [(n, False) for n in NAMES if x64 or n not in ("int64", "uint64", "float64", "complex128")]
    operands += [("int32" if not x64 else "int64", True), ("float32" if not x64 else "float64", True),
                 ("complex64" if not x64 else "complex128", True)]
    for a, aw in operands:
        for b, bw in operands:
            ta = weak[kind(a)] if aw else jnp.dtype(a)
            tb = weak[kind(b)] if bw else jnp.dtype(b)
            d, w = dtypes.lattice_result_type(ta, tb)
            rows.append([a, aw, b, bw, x64, jnp.dtype(d).name, bool(w)])
    return rows


def main():
    texts = {name: str(jax.make_jaxpr(f)(*args)) for name, (f, args) in JAXPRS.items()}
    table = promotion_table(False) + promotion_table(True)
    json.dump({"jaxprs": texts, "promotion": table}, sys.stdout)


if __name__ == "__main__":
    main()
