"""JAX's side of oxla's linear-algebra and FFT benchmark
(bench/src/bin/linalg_vs_jax.rs): jitted cholesky, solve, eigh, svd and qr of
f32 matrices 256x256, 1024x1024 and a batch of 64 32x32, and fft/rfft of 2**20
points, on the same inputs, which this script writes into DIR as NAME.npy.

Prints JSON (one line) with the step names, then serves "NAME N" timing
requests (see jax_twin.serve_named).
"""

import json
import pathlib
import sys

import jax
import jax.numpy as jnp
import numpy as np

from jax_twin import serve_named

SHAPES = {"256": (256, 256), "1024": (1024, 1024), "64x32x32": (64, 32, 32)}
OPS = {
    "cholesky": jnp.linalg.cholesky,
    "solve": jnp.linalg.solve,
    "eigh": jnp.linalg.eigh,
    "svd": lambda a: jnp.linalg.svd(a, full_matrices=False),
    "qr": jnp.linalg.qr,
}


def main():
    out = pathlib.Path(sys.argv[1])
    rng = np.random.default_rng(0)
    steps, args = {}, {}
    for label, shape in SHAPES.items():
        a = rng.standard_normal(shape).astype(np.float32)
        n = shape[-1]
        spd = (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(np.float32)
        b = rng.standard_normal(shape[:-1] + (16,)).astype(np.float32)
        np.save(out / f"a_{label}.npy", a)
        np.save(out / f"spd_{label}.npy", spd)
        np.save(out / f"b_{label}.npy", b)
        for name, op in OPS.items():
            step = f"{name}_{label}"
            steps[step] = jax.jit(op)
            args[step] = (spd,) if name in ("cholesky", "eigh") else (a, b) if name == "solve" else (a,)
    points = 1 << 20
    z = (rng.standard_normal(points) + 1j * rng.standard_normal(points)).astype(np.complex64)
    x = rng.standard_normal(points).astype(np.float32)
    np.save(out / "z.npy", z)
    np.save(out / "x.npy", x)
    steps["fft"], args["fft"] = jax.jit(jnp.fft.fft), (z,)
    steps["rfft"], args["rfft"] = jax.jit(jnp.fft.rfft), (x,)
    args = {k: tuple(jnp.asarray(v) for v in vs) for k, vs in args.items()}
    for name, step in steps.items():
        jax.block_until_ready(step(*args[name]))
    print(json.dumps({"steps": list(steps)}), flush=True)
    serve_named({name: (lambda s=step, a=args[name]: s(*a)) for name, step in steps.items()})


if __name__ == "__main__":
    main()
