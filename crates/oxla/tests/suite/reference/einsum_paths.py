"""JAX's contraction paths for oxla's einsum_path test
(tests/suite/einsum_paths.rs): for each case (subscripts and operand
shapes, as CASES there), the path jnp.einsum_path chooses with its default
optimize="auto" and opt_einsum's naive and optimized flop counts and
largest intermediate. Prints one JSON list."""

import json

import jax.numpy as jnp
import numpy as np

CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk,kl->il", [(2, 3), (3, 100), (100, 5)]),
    ("ij,jk,kl->il", [(50, 3), (3, 40), (40, 2)]),
    ("bij,bjk,bkl,l->bi", [(2, 3, 4), (2, 4, 5), (2, 5, 3), (3,)]),
    ("ea,fb,abcd,gc,hd->efgh", [(10, 10)] * 4 + [(10, 10)]),
    ("abc,cd,de,ea->b", [(4, 5, 6), (6, 7), (7, 8), (8, 4)]),
    ("ii->", [(3, 3)]),
    ("ij->ji", [(3, 4)]),
    ("...ij,...jk,k->...i", [(2, 3, 4), (4, 5), (5,)]),
]


def main():
    out = []
    for subscripts, shapes in CASES:
        ops = [np.zeros(s, np.float32) for s in shapes]
        # The "ea,fb,abcd,gc,hd" case has five operands; its abcd operand
        # is rank 4.
        if subscripts.startswith("ea,fb,abcd"):
            ops[2] = np.zeros((10, 10, 10, 10), np.float32)
        path, info = jnp.einsum_path(subscripts, *ops)
        out.append({
            "subscripts": subscripts,
            "path": [list(p) for p in path],
            "naive_flops": float(info.naive_cost),
            "optimized_flops": float(info.opt_cost),
            "largest_intermediate": float(info.largest_intermediate),
        })
    print(json.dumps(out))


if __name__ == "__main__":
    main()
