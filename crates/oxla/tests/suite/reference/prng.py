"""Reference values for oxla::random (named prng.py: a random.py here would
shadow Python's own module), computed by JAX (CPU) when the tests run.

Prints JSON: for each group of cases (keys, split, fold_in, bits, every
sampler, vmap) a list of cases with their parameters and JAX's output, each
array as {"dtype", "shape", "data": base64 of little-endian bytes}. The Rust
test (random.rs) draws the same with oxla and compares.

With OXLA_ENABLE_X64=1 in the environment (the x64 child process of the
Rust test), JAX runs with jax_enable_x64 and only the x64 cases are made.
"""

import base64
import json
import os

import jax
import jax.numpy as jnp
import numpy as np
from jax import random

X64 = os.environ.get("OXLA_ENABLE_X64") in ("1", "true", "True")
if X64:
    jax.config.update("jax_enable_x64", True)

DEFAULT_PARTITIONABLE = bool(jax.config.jax_threefry_partitionable)


def enc(a):
    a = np.asarray(a)
    name = {"bfloat16": "bf16"}.get(a.dtype.name, a.dtype.name)
    return {"dtype": name, "shape": list(a.shape),
            "data": base64.b64encode(np.ascontiguousarray(a).tobytes()).decode()}


def partitionable(flag, fn):
    jax.config.update("jax_threefry_partitionable", flag)
    try:
        return fn()
    finally:
        jax.config.update("jax_threefry_partitionable", DEFAULT_PARTITIONABLE)


def u64(seed):
    """The seed as oxla's Key::new takes it (two's complement for negatives)."""
    return seed % 2**64


def bound(v):
    """A Python scalar stays weakly typed; arrays are encoded."""
    if isinstance(v, (int, float)):
        return {"scalar": v}
    return {"array": enc(v)}


SEEDS = [0, 1, 42, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**32 + 5, 2**40 + 7,
         2**62 + 3, 2**63 - 1, -1, -2**31]
out = {"jax_version": jax.__version__, "x64": X64,
       "partitionable_default": DEFAULT_PARTITIONABLE}

out["keys"] = [{"seed": u64(s), "out": enc(random.PRNGKey(s))} for s in SEEDS]


def bits_cases(dtypes, shapes, seeds):
    cases = []
    for part in (True, False):
        for seed in seeds:
            for dtype in dtypes:
                for shape in shapes:
                    def draw():
                        return random.bits(random.PRNGKey(seed), shape, dtype)
                    cases.append({"seed": u64(seed), "shape": list(shape),
                                  "dtype": np.dtype(dtype).name, "partitionable": part,
                                  "out": enc(partitionable(part, draw))})
    return cases


if X64:
    out["bits"] = bits_cases([jnp.uint64, jnp.uint32, jnp.uint8],
                             [(), (3,), (7,), (2, 5)], [0, 2**40 + 7])
    out["split"] = [
        {"seed": u64(s), "num": n, "partitionable": part,
         "out": enc(partitionable(part, lambda: random.split(random.PRNGKey(s), n)))}
        for part in (True, False) for s in [2**40 + 7, -1] for n in [2, 3]]
    k = random.PRNGKey(2**40 + 7)
    out["uniform"] = [{"seed": u64(2**40 + 7), "shape": [5], "dtype": "float64",
                       "out": enc(random.uniform(k, (5,), jnp.float64))},
                      {"seed": u64(2**40 + 7), "shape": [5], "dtype": "float32",
                       "out": enc(random.uniform(k, (5,), jnp.float32))}]
    out["normal"] = [{"seed": u64(2**40 + 7), "shape": [6], "dtype": "float64",
                      "out": enc(random.normal(k, (6,), jnp.float64))}]
    out["randint"] = [
        {"seed": u64(2**40 + 7), "shape": [10], "minval": -2**40, "maxval": 2**40,
         "dtype": "int64", "out": enc(random.randint(k, (10,), -2**40, 2**40, jnp.int64))},
        {"seed": u64(3), "shape": [10], "minval": -2**63, "maxval": 2**63 - 1,
         "dtype": "int64",
         "out": enc(random.randint(random.PRNGKey(3), (10,), -2**63, 2**63 - 1, jnp.int64))},
        {"seed": u64(4), "shape": [10], "minval": 0, "maxval": 1000, "dtype": "int32",
         "out": enc(random.randint(random.PRNGKey(4), (10,), 0, 1000, jnp.int32))},
    ]
    out["permutation"] = [{"seed": u64(5), "n": 10,
                           "out": enc(random.permutation(random.PRNGKey(5), 10))}]
    print(json.dumps(out))
    raise SystemExit(0)


# --- x32 (the default) ------------------------------------------------------

out["split"] = [
    {"seed": u64(s), "num": n, "partitionable": part,
     "out": enc(partitionable(part, lambda: random.split(random.PRNGKey(s), n)))}
    for part in (True, False) for s in [0, 42, 2**40 + 7] for n in [1, 2, 3, 7]]
out["split_batched"] = [
    {"seed": 9, "shape": [2, 3], "partitionable": part,
     "out": enc(partitionable(part, lambda: random.split(random.PRNGKey(9), (2, 3))))}
    for part in (True, False)]
out["fold_in"] = [
    {"seed": u64(s), "data": d, "out": enc(random.fold_in(random.PRNGKey(s), d))}
    for s in [0, 42, -1] for d in [0, 1, 12345, 2**31, 2**32 - 1]]
out["bits"] = bits_cases([jnp.uint8, jnp.uint16, jnp.uint32],
                         [(), (1,), (3,), (7,), (2, 3), (4, 5, 6), (131, 257)],
                         [0, 42, 1234567])

f32, f16, bf16 = jnp.float32, jnp.float16, jnp.bfloat16
key = random.PRNGKey


def sampler(fn, seed, **params):
    enc_params = {k: (np.dtype(v).name if k == "dtype" else v) for k, v in params.items()}
    return {"seed": u64(seed), **enc_params, "out": enc(fn(key(seed)))}


out["uniform"] = []
for seed, shape, dtype, lo, hi in [
        (0, (5,), f32, 0.0, 1.0), (1, (3, 4), f32, -2.5, 7.0), (2, (), f32, 0.0, 1.0),
        (3, (1000,), f16, 0.0, 1.0), (4, (1000,), bf16, 0.0, 1.0), (5, (777,), f32, 0.0, 1.0),
        (6, (2, 3), f32, np.array([[-1.0], [0.0]], np.float32),
         np.array([1.0, 2.0, 3.0], np.float32)),
        (7, (4,), f16, -3.0, 5.0)]:
    for part in (True, False):
        r = partitionable(part, lambda: random.uniform(key(seed), shape, dtype, lo, hi))
        out["uniform"].append({"seed": seed, "shape": list(shape), "dtype": np.dtype(dtype).name,
                               "minval": bound(lo), "maxval": bound(hi),
                               "partitionable": part, "out": enc(r)})

out["normal"] = []
for seed, shape, dtype in [(0, (5,), f32), (1, (1000,), f32), (2, (), f32), (3, (64,), f16),
                           (4, (64,), bf16), (5, (3, 7), f32)]:
    # The uniform in (-1, 1) that erf_inv maps, as _normal_real draws it.
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype), dtype=dtype)
    u = random.uniform(key(seed), shape, dtype, lo, np.array(1.0, dtype))
    out["normal"].append({"seed": seed, "shape": list(shape), "dtype": np.dtype(dtype).name,
                          "lo": float(lo), "u": enc(u),
                          "out": enc(random.normal(key(seed), shape, dtype))})

out["truncated_normal"] = []
for seed, lo, hi, shape, dtype in [
        (0, -1.0, 1.0, (10,), f32), (1, -2.0, 0.5, (4, 5), f32),
        (2, np.array([-1.0, -0.5, 0.0], np.float32), 2.0, None, f32),
        (3, -1.0, 1.0, (16,), f16), (4, 0.0, 3.0, (500,), f32)]:
    r = random.truncated_normal(key(seed), lo, hi, shape, dtype)
    # The uniform between the bounds' CDFs, as _truncated_normal draws it.
    sqrt2 = np.array(np.sqrt(2), dtype)
    a = jax.lax.erf(jax.lax.convert_element_type(lo, dtype) / sqrt2)
    b = jax.lax.erf(jax.lax.convert_element_type(hi, dtype) / sqrt2)
    u = random.uniform(key(seed), r.shape, dtype, a, b)
    out["truncated_normal"].append({"seed": seed, "lower": bound(lo), "upper": bound(hi),
                                    "shape": None if shape is None else list(shape),
                                    "dtype": np.dtype(dtype).name, "u": enc(u),
                                    "out": enc(r)})

out["bernoulli"] = []
for seed, p, shape in [(0, 0.5, (20,)), (1, 0.1, (5, 5)),
                       (2, np.array([0.1, 0.5, 0.9, 1.0], np.float32), None),
                       (3, np.array([0.1, 0.5, 0.9, 0.0], np.float32), (3, 4)),
                       (4, np.array([0.25, 0.75], np.float16), (3, 2))]:
    r = random.bernoulli(key(seed), p, shape)
    out["bernoulli"].append({"seed": seed, "p": bound(p),
                             "shape": None if shape is None else list(shape), "out": enc(r)})

out["gumbel"] = [
    sampler(lambda k, s=s, d=d: random.gumbel(k, s, d), seed, shape=list(s), dtype=d)
    for seed, s, d in [(0, (10,), f32), (1, (3, 4), f32), (2, (16,), f16), (3, (1000,), f32)]]

# Samplers that are formulas of uniform, normal and bernoulli draws.
half, two = np.array(0.5, np.float32), np.array(2.0, np.float32)
MVN_MEAN = np.array([1.0, -2.0, 0.5], np.float32)
MVN_COV = np.array([[2.0, 0.3, -0.2], [0.3, 1.0, 0.1], [-0.2, 0.1, 0.5]], np.float32)
SAMPLERS = {
    "exponential": lambda k: random.exponential(k, (7, 3)),
    "exponential_f16": lambda k: random.exponential(k, (64,), f16),
    "laplace": lambda k: random.laplace(k, (50,)),
    "logistic": lambda k: random.logistic(k, (4, 5)),
    "cauchy": lambda k: random.cauchy(k, (30,)),
    "rademacher": lambda k: random.rademacher(k, (20,)),
    "rademacher_f32": lambda k: random.rademacher(k, (3, 4), f32),
    "rayleigh": lambda k: random.rayleigh(k, two, (12,)),
    "pareto": lambda k: random.pareto(k, two, (12,)),
    "weibull_min": lambda k: random.weibull_min(k, two, np.array(1.5, np.float32), (12,)),
    "maxwell": lambda k: random.maxwell(k, (10,)),
    "double_sided_maxwell": lambda k: random.double_sided_maxwell(k, half, two, (6,)),
    "lognormal": lambda k: random.lognormal(k, half, (9,)),
    "wald": lambda k: random.wald(k, two, (16,)),
    "geometric": lambda k: random.geometric(k, np.array(0.3, np.float32), (20,)),
    "triangular": lambda k: random.triangular(k, np.array(-1.0, np.float32), half, two, (25,)),
    # Gamma's rejection sampler and what builds on it; LAPACK's factors.
    "gamma": lambda k: random.gamma(k, np.array([0.5, 1.0, 2.5, 7.0], np.float32)),
    "gamma_shape": lambda k: random.gamma(k, two, (3, 2)),
    "loggamma": lambda k: random.loggamma(k, np.array([0.1, 0.8, 3.0], np.float32)),
    "beta": lambda k: random.beta(k, half, two, (8,)),
    "dirichlet": lambda k: random.dirichlet(k, np.array([0.5, 1.0, 2.0], np.float32), (4,)),
    "chisquare": lambda k: random.chisquare(k, np.array(3.0, np.float32), (6,)),
    "f": lambda k: random.f(k, two, np.array(5.0, np.float32), (6,)),
    "t": lambda k: random.t(k, np.array(4.0, np.float32), (6,)),
    "generalized_normal": lambda k: random.generalized_normal(k, 1.5, (8,)),
    "ball": lambda k: random.ball(k, 3, 2.0, (4,)),
    "multivariate_normal": lambda k: random.multivariate_normal(k, MVN_MEAN, MVN_COV, (5,)),
    "multivariate_normal_eigh": lambda k: random.multivariate_normal(k, MVN_MEAN, MVN_COV, (5,), method="eigh"),
    "multivariate_normal_svd": lambda k: random.multivariate_normal(k, MVN_MEAN, MVN_COV, (5,), method="svd"),
    "orthogonal": lambda k: random.orthogonal(k, 3, (2,)),
    "orthogonal_wide": lambda k: random.orthogonal(k, 2, (), m=4),
    # The counting samplers' loops: Knuth and transformed rejection
    # (poisson), inversion and BTRS (binomial), a binomial per outcome
    # (multinomial), with JAX's answers for zero, NaN, negative and
    # infinite parameters.
    "poisson": lambda k: random.poisson(k, np.array([0.5, 3.0, 9.5, 12.0, 50.0, 0.0], np.float32)),
    "poisson_shape": lambda k: random.poisson(k, np.array(4.0, np.float32), (3, 4)),
    "binomial": lambda k: random.binomial(
        k, np.array([5.0, 20.0, 100.0, 1000.0, 40.0], np.float32),
        np.array([0.3, 0.7, 0.1, 0.45, 0.9], np.float32)),
    "binomial_edge": lambda k: random.binomial(
        k, np.array([-1.0, np.inf, 10.0, 10.0, 0.0], np.float32),
        np.array([0.5, 0.5, np.nan, 1.0, 0.5], np.float32)),
    "multinomial": lambda k: random.multinomial(
        k, np.array(20.0, np.float32), np.array([0.2, 0.5, 0.3], np.float32), shape=(4, 3)),
    "multinomial_batch": lambda k: random.multinomial(
        k, np.array([5.0, 300.0], np.float32), np.array([[0.1, 0.9], [0.25, 0.75]], np.float32)),
}
# Gamma samples differentiated in their shape parameters (implicit
# reparameterization).
GRAD_A = np.array([0.5, 1.5, 4.0], np.float32)
out["gamma_grads"] = {
    "gamma": enc(jax.grad(lambda a: jnp.sum(random.gamma(key(3), a)))(GRAD_A)),
    "loggamma": enc(jax.grad(lambda a: jnp.sum(random.loggamma(key(3), a)))(GRAD_A)),
    "beta": enc(jax.grad(lambda a: jnp.sum(random.beta(key(4), a, 2.0 * a)))(GRAD_A)),
}
out["samplers"] = [{"name": name, "seed": u64(seed), "out": enc(fn(key(seed)))}
                   for name, fn in SAMPLERS.items() for seed in (0, 7)]

out["key_functions"] = {
    "key": enc(random.key_data(random.key(7))), "prngkey": enc(random.PRNGKey(7)),
    "wrapped": enc(random.key_data(random.wrap_key_data(np.array([1, 2], np.uint32)))),
    "clone": enc(random.key_data(random.clone(random.key(9)))),
    "impl": str(random.key_impl(random.key(0))), "dtype": str(random.key_dtype()),
}

rng = np.random.default_rng(0)
logits35 = rng.standard_normal((3, 5)).astype(np.float32)
logits10 = rng.standard_normal((10,)).astype(np.float32)
logits26 = rng.standard_normal((2, 6)).astype(np.float32)
out["categorical"] = []
for seed, logits, axis, shape, replace in [
        (0, logits35, -1, None, True), (1, logits35, 0, None, True),
        (2, logits35, -1, (7, 3), True), (3, logits10, -1, (4,), False),
        (4, logits26, -1, (3, 2), False), (5, logits26, 1, (5, 2), True),
        (6, logits26[:1], -1, (4, 3), True)]:
    r = random.categorical(key(seed), logits, axis, shape, replace)
    out["categorical"].append({"seed": seed, "logits": enc(logits), "axis": axis,
                               "shape": None if shape is None else list(shape),
                               "replace": replace, "out": enc(r)})

out["randint"] = []
for seed, shape, lo, hi, dtype in [
        (0, (10,), 0, 10, jnp.int32), (1, (3, 4), -5, 5, jnp.int32),
        (2, (20,), -2**31, 2**31 - 1, jnp.int32), (3, (8,), 0, 256, jnp.uint8),
        (4, (8,), -128, 128, jnp.int8), (5, (6,), 0, 2**16, jnp.uint16),
        (6, (5,), 10, 3, jnp.int32), (7, (5,), 0, 1, jnp.int32),
        (8, (2, 3), np.array([0, 10, 100], np.int32), np.array([5, 20, 1000], np.int32),
         jnp.int32),
        (9, (12,), 0, 2**31 - 1, jnp.uint32), (10, (9,), -300, 300, jnp.int16),
        (11, (7,), -1000, 1000, jnp.uint8)]:
    for part in (True, False):
        r = partitionable(part, lambda: random.randint(key(seed), shape, lo, hi, dtype))
        out["randint"].append({"seed": seed, "shape": list(shape), "minval": bound(lo),
                               "maxval": bound(hi), "dtype": np.dtype(dtype).name,
                               "partitionable": part, "out": enc(r)})

out["permutation"] = []
for seed, n in [(0, 10), (1, 1), (2, 0), (3, 2000), (4, 100)]:
    for part in (True, False):
        r = partitionable(part, lambda: random.permutation(key(seed), n))
        out["permutation"].append({"seed": seed, "n": n, "partitionable": part, "out": enc(r)})

grid = np.arange(12, dtype=np.float32).reshape(3, 4)
line = np.arange(10, dtype=np.float32) * 1.5
out["permutation_of"] = [
    {"seed": seed, "x": enc(x), "axis": axis, "independent": ind,
     "out": enc(random.permutation(key(seed), x, axis, ind))}
    for seed, x, axis, ind in [(0, grid, 0, False), (1, grid, 1, True), (2, line, 0, False),
                               (3, grid, -1, False)]]

pr = np.array([0.125, 0.25, 0.5, 0.125], np.float32)
out["choice"] = [
    {"seed": seed, "n": n, "shape": list(shape), "replace": replace,
     "p": None if p is None else enc(p),
     "out": enc(random.choice(key(seed), n, shape, replace, p))}
    for seed, n, shape, replace, p in [
        (0, 10, (5,), True, None), (1, 10, (5,), False, None), (2, 4, (6,), True, pr),
        (3, 4, (3,), False, pr), (4, 5, (2, 3), True, None), (5, 7, (0,), True, None),
        (6, 6, (2, 3), False, None)]]
table = np.arange(12, dtype=np.float32).reshape(4, 3)
out["choice_from"] = [
    {"seed": seed, "a": enc(a), "shape": list(shape), "replace": replace,
     "p": None if p is None else enc(p), "axis": axis,
     "out": enc(random.choice(key(seed), a, shape, replace, p, axis))}
    for seed, a, shape, replace, p, axis in [
        (0, table, (2,), True, None, 0), (1, table, (2,), False, None, 1),
        (2, table, (5,), True, pr, 0), (3, table, (2, 2), False, pr, 0),
        (4, np.arange(6, dtype=np.int32) * 3, (4,), False, None, 0)]]


def flax_dropout(k, rate, x):
    # flax.linen.Dropout's computation (flax is not installed here).
    keep = 1.0 - rate
    mask = random.bernoulli(k, p=keep, shape=x.shape)
    return jax.lax.select(mask, x / keep, jnp.zeros_like(x))


xs = rng.standard_normal((4, 5)).astype(np.float32)
out["dropout"] = [{"seed": seed, "rate": rate, "x": enc(xs),
                   "out": enc(flax_dropout(key(seed), rate, jnp.asarray(xs)))}
                  for seed, rate in [(0, 0.25), (1, 0.5), (2, 0.9)]]

# --- vmap over a batch of keys (and of seeds, fold_in data) -------------------
keys = random.split(key(7), 4)
out["vmap"] = {
    "keys": enc(keys),
    "uniform": enc(jax.vmap(lambda k: random.uniform(k, (3,)))(keys)),
    "normal": enc(jax.vmap(lambda k: random.normal(k, (2, 3)))(keys)),
    "randint": enc(jax.vmap(lambda k: random.randint(k, (5,), 0, 100))(keys)),
    "bits": enc(jax.vmap(lambda k: random.bits(k, (4,), jnp.uint32))(keys)),
    "bits_u8": enc(jax.vmap(lambda k: random.bits(k, (5,), jnp.uint8))(keys)),
    "split": enc(jax.vmap(lambda k: random.split(k, 3))(keys)),
    "fold_in": enc(jax.vmap(lambda k: random.fold_in(k, 5))(keys)),
    "permutation": enc(jax.vmap(lambda k: random.permutation(k, 8))(keys)),
    "gumbel": enc(jax.vmap(lambda k: random.gumbel(k, (3,)))(keys)),
    "categorical": enc(jax.vmap(lambda k: random.categorical(k, logits35))(keys)),
    "bernoulli": enc(jax.vmap(lambda k: random.bernoulli(k, 0.3, (6,)))(keys)),
    "fold_in_data": enc(jax.vmap(lambda d: random.fold_in(key(3), d))(jnp.arange(5, dtype=jnp.uint32))),
    "seeds": enc(jax.vmap(random.PRNGKey)(jnp.arange(5, dtype=jnp.int32) * 1000 - 2)),
    "uniform_original": enc(partitionable(
        False, lambda: jax.vmap(lambda k: random.uniform(k, (3,)))(keys))),
}

# --- grad through a reparameterized sampler ---------------------------------


def reparam(params, k):
    mu, sigma = params
    return jnp.mean(mu + sigma * random.normal(k, (1000,)))


g = jax.grad(reparam)((jnp.float32(0.5), jnp.float32(2.0)), key(11))
out["grad"] = {"seed": 11, "dmu": enc(g[0]), "dsigma": enc(g[1]),
               "mean_normal": enc(jnp.mean(random.normal(key(11), (1000,))))}

print(json.dumps(out))
