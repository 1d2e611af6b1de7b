"""Writes .npy files with NumPy into DIR and prints, as JSON, each file's
expected shape, oxla element type and row-major little-endian bytes (hex).
With --check DIR, loads the files oxla wrote (listed in DIR/written.json)
and compares them with the arrays they should hold."""

import json
import pathlib
import sys

import ml_dtypes
import numpy as np

rng = np.random.default_rng(7)


def arrays():
    yield "f32", np.float32, rng.standard_normal((2, 3)).astype(np.float32)
    yield "f64_be", np.float64, rng.standard_normal((4,)).astype(">f8")
    yield "i64_fortran", np.int64, np.asfortranarray(np.arange(24, dtype=np.int64).reshape(2, 3, 4))
    yield "bool", np.bool_, rng.integers(0, 2, (5,)).astype(bool)
    yield "u16", np.uint16, rng.integers(0, 60000, (3, 1)).astype(np.uint16)
    yield "i8_scalar", np.int8, np.array(-5, dtype=np.int8)
    yield "f16", np.float16, rng.standard_normal((7,)).astype(np.float16)
    yield "c64_be", np.complex64, (rng.standard_normal(3) + 1j * rng.standard_normal(3)).astype(">c8")
    yield "c128", np.complex128, (rng.standard_normal(2) + 1j).astype(np.complex128)
    yield "bf16", ml_dtypes.bfloat16, rng.standard_normal((2, 2)).astype(ml_dtypes.bfloat16)
    yield "empty", np.float32, np.zeros((0, 3), np.float32)


def write(out):
    cases = []
    for name, _, a in arrays():
        path = out / f"{name}.npy"
        np.save(path, a)
        c = np.ascontiguousarray(a)
        c = c.astype(c.dtype.newbyteorder("<")) if c.dtype.byteorder == ">" else c
        cases.append({"name": name, "path": str(path), "shape": list(a.shape), "hex": c.tobytes().hex()})
    json.dump(cases, sys.stdout)


def check(out):
    expected = {name: (dtype, np.array(a, order="C")) for name, dtype, a in arrays()}
    for name in json.loads((out / "written.json").read_text()):
        got = np.load(out / f"{name}.out.npy")
        dtype, want = expected[name]
        if dtype is ml_dtypes.bfloat16:
            got = got.view(ml_dtypes.bfloat16)
        assert got.shape == want.shape, (name, got.shape, want.shape)
        assert got.dtype == np.dtype(dtype), (name, got.dtype, dtype)
        assert np.array_equal(got, want.astype(np.dtype(dtype))), name
    print("ok")


if __name__ == "__main__":
    if sys.argv[1] == "--check":
        check(pathlib.Path(sys.argv[2]))
    else:
        write(pathlib.Path(sys.argv[1]))
