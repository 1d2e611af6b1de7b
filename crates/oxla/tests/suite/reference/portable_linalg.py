"""Reference values for the portable linear algebra (portable_linalg.rs):
LU, QR, eigh, SVD and what is built on them, computed by JAX (CPU, LAPACK)
at test time, which oxla's expansions (lowered for several platforms, run
on the CPU plugin) must reproduce. Eigenvectors and singular vectors are
compared up to each column's sign or phase, so JAX's are given as they
are. Prints JSON {name: enc}."""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

from ops import enc  # noqa: E402

rng = np.random.default_rng(7)


def normal(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def cnormal(*shape):
    return (normal(*shape) + 1j * normal(*shape)).astype(np.complex64)


def symmetric(n, batch=()):
    a = normal(*batch, n, n)
    return (a + np.swapaxes(a, -1, -2)) / 2


def hermitian(n):
    a = cnormal(n, n)
    return ((a + a.conj().T) / 2).astype(np.complex64)


INPUTS = {
    "square": normal(4, 4),
    "tall": normal(5, 3),
    "wide": normal(3, 5),
    "batch": normal(2, 4, 4),
    "complex": cnormal(4, 3),
    "complex_square": cnormal(3, 3),
    "symmetric": symmetric(5),
    "symmetric_batch": symmetric(4, (2,)),
    "hermitian": hermitian(3),
    # Rank 2: one singular value is zero, and its vectors are any completion.
    "rank_deficient": (normal(4, 2) @ normal(2, 3)).astype(np.float32),
    "singular": np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]], np.float32),
    "rhs": normal(4, 2),
}

out = {f"in_{k}": enc(v) for k, v in INPUTS.items()}
for name in ["square", "tall", "wide", "batch", "complex_square", "singular"]:
    lu, pivots, _ = lax.linalg.lu(INPUTS[name])
    out[f"lu_{name}"] = enc(lu)
    out[f"pivots_{name}"] = enc(pivots)
for name in ["tall", "wide", "square", "complex"]:
    for mode in ["reduced", "complete"]:
        q, r = jnp.linalg.qr(INPUTS[name], mode=mode)
        out[f"qr_{mode}_q_{name}"] = enc(q)
        out[f"qr_{mode}_r_{name}"] = enc(r)
for name in ["symmetric", "symmetric_batch", "hermitian"]:
    w, v = jnp.linalg.eigh(INPUTS[name])
    out[f"eigh_w_{name}"] = enc(w)
    out[f"eigh_v_{name}"] = enc(v)
    w, v = jnp.linalg.eigh(INPUTS[name], UPLO="U")
    out[f"eigh_upper_w_{name}"] = enc(w)
for name in ["tall", "wide", "square", "batch", "complex", "rank_deficient"]:
    u, s, vh = jnp.linalg.svd(INPUTS[name], full_matrices=False)
    out[f"svd_s_{name}"] = enc(s)
    out[f"svd_u_{name}"] = enc(u)
    out[f"svd_vh_{name}"] = enc(vh)
a, b = INPUTS["square"], INPUTS["rhs"]
out["solve"] = enc(jnp.linalg.solve(a, b))
out["inv"] = enc(jnp.linalg.inv(a))
out["det"] = enc(jnp.linalg.det(a))
out["det_batch"] = enc(jnp.linalg.det(INPUTS["batch"]))
out["det_singular"] = enc(jnp.linalg.det(INPUTS["singular"]))
sign, logdet = jnp.linalg.slogdet(a)
out["slogdet_sign"], out["slogdet_logdet"] = enc(sign), enc(logdet)
out["pinv_tall"] = enc(jnp.linalg.pinv(INPUTS["tall"]))
out["norm_2"] = enc(jnp.linalg.norm(INPUTS["tall"], ord=2))
out["norm_nuc"] = enc(jnp.linalg.norm(INPUTS["wide"], ord="nuc"))
out["matrix_rank"] = enc(jnp.linalg.matrix_rank(INPUTS["rank_deficient"]))
out["lstsq"] = enc(jnp.linalg.lstsq(INPUTS["tall"], INPUTS["tall"][:, :2] + 0.5)[0])
print(json.dumps(out))
