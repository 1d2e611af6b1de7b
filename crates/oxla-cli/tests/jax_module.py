"""Writes into DIR a module lowered by JAX (text and portable bytecode), its
inputs as .npy, and JAX's outputs as expected_<i>.npy."""

import pathlib
import sys

import jax
import jax.numpy as jnp
import numpy as np

out = pathlib.Path(sys.argv[1])
rng = np.random.default_rng(3)
x = rng.standard_normal((2, 3)).astype(np.float32)
y = rng.integers(-5, 5, (3,)).astype(np.int32)


def f(x, y):
    return jnp.tanh(x) * y.astype(jnp.float32), jnp.sum(y * 2)


lowered = jax.jit(f).lower(x, y)
(out / "module.mlir").write_text(lowered.as_text())
(out / "module.mlirbc").write_bytes(jax.export.export(jax.jit(f))(x, y).mlir_module_serialized)
np.save(out / "x.npy", x)
np.save(out / "y.npy", y)
np.save(out / "x_f64.npy", x.astype(np.float64))
np.save(out / "x_wrong_shape.npy", x.T.copy())
for i, o in enumerate(jax.jit(f)(x, y)):
    np.save(out / f"expected_{i}.npy", np.asarray(o))

# A linear solve, exported: JAX lowers it to LAPACK custom calls
# (lapack_sgetrf_ffi, lapack_strsm_ffi), which oxla runs through the
# system's LAPACK.
a = (rng.standard_normal((4, 4)) + 4 * np.eye(4)).astype(np.float32)
b = rng.standard_normal((4, 2)).astype(np.float32)
(out / "solve.jaxexport").write_bytes(jax.export.export(jax.jit(jnp.linalg.solve))(a, b).serialize())
np.save(out / "a.npy", a)
np.save(out / "b.npy", b)
np.save(out / "solve_expected.npy", np.asarray(jnp.linalg.solve(a, b)))
