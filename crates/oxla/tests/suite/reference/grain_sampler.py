"""Reference orders and draws for oxla_train::data, computed by pip's
grain (0.2.18, pinned in third_party/python-requirements.txt) and numpy
when the tests run.

Prints one JSON object; the Rust test (data_loader.rs) computes the same
with oxla and compares index for index:

- "index_shuffle": [index, max_index, seed, rounds, grain's result] rows of
  grain's C++ index_shuffle.
- "samplers": grain.python.IndexSampler(num_records, ShardOptions(..),
  shuffle, num_epochs, seed) as its DataLoader reads shard i: position p
  is the sampler's global index p * shard_count + shard_index; "records"
  holds [position, record key] pairs (every position, the first "take" of
  an endless stream, a sample of the largest), "len" the shard's
  positions (None: endless).
- "loaders": grain.python.DataLoader(worker_count=0) runs over
  range(num_records) with an optional Filter (odd records dropped) and
  two RandomMapTransforms that draw from the record's generator in turn;
  "items" holds each record with its draws (floats as their bits).
- "datasets": MapDataset.source(range(n)).shuffle(seed=).repeat(E)[p] for
  every p.
- "dataset_random_maps": MapDataset.source(range(n)).random_map(f, seed=s)
  .random_map(g, seed=s)[i] for every i and a few past the end.
- "pipelines": MapDataset pipelines over source([[0], [1], ...]) given as
  a list of stages (seed, shuffle, map, filter, random_map, repeat), most
  deriving their seeds from ds.seed; "items" holds ds[i] (null where the
  filter dropped the record) for every i of the first len(ds) (at most
  3n) and a few past the end.
- "generators": numpy's Generator(Philox(key=k)) (or Philox(seed)) under a
  fixed sequence of draws: [op, arguments..., result] rows.

Grain's index_shuffle walks cycles in a block of at least 16 bits, so it
takes about 2^16 / n cipher passes per index of n records (milliseconds
in Python for a handful of records): the cases are sized to keep the
whole script to a few seconds.
"""

import itertools
import json
import logging
import random

import grain.python as gp
import numpy as np
from grain._src.python.experimental.index_shuffle.python import (
    index_shuffle_module,
)

# grain logs every remainder dropped by sharding on stderr.
logging.getLogger("absl").setLevel(logging.ERROR)

SEEDS = [0, 1, 42, 123456789, 2**32 - 1]


def f32_bits(x):
    return int(np.float32(x).view(np.uint32))


def f64_bits(x):
    return int(np.float64(x).view(np.uint64))


def index_shuffle_rows():
    rng = random.Random(0)
    maxima = [0, 1, 2, 3, 6, 9, 96, 999, 65535, 65536, 65537, 100002,
              2**20, 2**31, 2**32, 2**32 + 1, 2**40 + 17, 2**62, 2**63 - 1]
    rows = []
    runs = [(seed, 4) for seed in SEEDS] + [(42, 6), (7, 10)]
    for max_index in maxima:
        for seed, rounds in runs:
            indices = {0, max_index, max_index // 2, max(max_index - 1, 0)}
            indices |= {rng.randrange(max_index + 1) for _ in range(3)}
            for index in sorted(indices):
                out = index_shuffle_module.index_shuffle(
                    index, max_index=max_index, seed=seed, rounds=rounds)
                rows.append([index, max_index, seed, rounds, int(out)])
    return rows


def options(n, shard_index, shard_count, drop, epochs, seed, shuffle):
    return {"num_records": n, "shard_index": shard_index,
            "shard_count": shard_count, "drop_remainder": drop,
            "num_epochs": epochs, "seed": seed, "shuffle": shuffle}


def sampler_of(o):
    return gp.IndexSampler(
        o["num_records"],
        gp.ShardOptions(o["shard_index"], o["shard_count"], o["drop_remainder"]),
        shuffle=o["shuffle"], num_epochs=o["num_epochs"], seed=o["seed"])


def sampler_case(o, take=None, stride=1):
    sampler = sampler_of(o)
    count = o["shard_count"]
    endless = o["num_epochs"] is None
    end = take if endless else len(sampler) // count
    positions = sorted(set(range(0, end, stride)) | set(range(end - 40, end)))
    o = dict(o)
    o["len"] = None if endless else end
    o["records"] = [
        [p, int(sampler[p * count + o["shard_index"]].record_key)]
        for p in positions if p >= 0]
    return o


def sampler_cases():
    cases = []
    configs = itertools.product(
        [2, 7, 10, 13, 97], [1, 3, 4], [False, True], [1, 2, None])
    for k, (n, count, drop, epochs) in enumerate(configs):
        if n < count:
            continue
        # One shard of each configuration, in turn (every shard of 2 and 7
        # records in 2 epochs).
        shards = range(count) if n <= 7 and epochs == 2 else [k % count]
        for i in shards:
            seed = SEEDS[(k + i) % len(SEEDS)]
            shuffle = k % 4 != 3
            o = options(n, i, count, drop, epochs, seed, shuffle)
            cases.append(sampler_case(o, take=n + 3))
    # Records past 2^16: larger blocks, and 65537 records, where Grain's
    # block is one bit short for the last index (it lands where index 0
    # does): every 7th (13th) position and the last 40.
    cases.append(sampler_case(options(65537, 0, 1, False, 1, 7, True), stride=7))
    cases.append(sampler_case(
        options(100003, 1, 4, False, 1, 2**32 - 1, True), stride=13))
    cases.append(sampler_case(options(100003, 3, 4, True, 1, 5, True), stride=13))
    return cases


class Draw(gp.RandomMapTransform):
    def random_map(self, element, rng):
        return [int(element), int(rng.bit_generator.random_raw()),
                f32_bits(rng.random(dtype=np.float32)),
                int(rng.integers(0, 1000))]


class DrawMore(gp.RandomMapTransform):
    def random_map(self, element, rng):
        return element + [int(rng.integers(0, 2**40)), f64_bits(rng.random())]


class Even(gp.FilterTransform):
    def filter(self, element):
        return element % 2 == 0


def loader_cases():
    cases = []
    configs = [
        (10, 0, 1, False, 2, 3, False),
        (13, 0, 1, False, 3, 2**32 - 1, True),
        (10, 0, 3, False, 1, 5, False),
        (10, 1, 3, False, 2, 5, False),
        (10, 2, 3, True, 2, 5, True),
        (97, 3, 4, False, 2, 42, False),
        (97, 0, 4, True, None, 9, False),
        (64, 2, 3, False, 1, 123456789, True),
    ]
    for n, i, count, drop, epochs, seed, filtered in configs:
        o = options(n, i, count, drop, epochs, seed, True)
        o["filter"] = filtered
        operations = ([Even()] if filtered else []) + [Draw(), DrawMore()]
        loader = gp.DataLoader(data_source=list(range(n)),
                               sampler=sampler_of(o),
                               operations=operations, worker_count=0)
        take = 2 * n + 3 if epochs is None else None
        o["items"] = list(itertools.islice(loader, take))
        cases.append(o)
    return cases


def dataset_cases():
    cases = []
    epochs = 3
    for n in [1, 7, 10, 97, 300]:
        for seed in [0, 42, 2**32 - 1]:
            ds = (gp.MapDataset.source(list(range(n))).shuffle(seed=seed)
                  .repeat(epochs))
            cases.append({"num_records": n, "seed": seed, "num_epochs": epochs,
                          "records": [int(ds[p]) for p in range(len(ds))]})
    return cases


def dataset_random_map_cases():
    cases = []
    for n, seed in [(5, 0), (12, 7), (9, 2**32 - 1), (4, 2**40 + 3)]:
        ds = (gp.MapDataset.source(list(range(n)))
              .random_map(Draw(), seed=seed)
              .random_map(DrawMore(), seed=seed))
        cases.append({"num_records": n, "seed": seed,
                      "items": [ds[i] for i in range(n + 3)]})
    return cases


class DrawOnList(gp.RandomMapTransform):
    def random_map(self, element, rng):
        return element + [int(rng.bit_generator.random_raw()),
                          f32_bits(rng.random(dtype=np.float32)),
                          int(rng.integers(0, 1000))]


def apply_stage(ds, stage):
    name, args = stage[0], stage[1:]
    if name == "seed":
        return ds.seed(args[0])
    if name == "shuffle":
        return ds.shuffle(seed=args[0] if args else None)
    if name == "times3":
        return ds.map(lambda v: [v[0] * 3] + v[1:])
    if name == "even":
        return ds.filter(lambda v: v[0] % 2 == 0)
    if name == "draw":
        return ds.random_map(DrawOnList(), seed=args[0] if args else None)
    if name == "more":
        return ds.random_map(DrawMore(), seed=args[0] if args else None)
    if name == "repeat":
        return ds.repeat(args[0], reseed_each_epoch=args[1])
    raise ValueError(name)


def pipeline_cases():
    pipelines = [
        (10, [["seed", 5], ["shuffle"], ["draw"], ["more"]]),
        (7, [["seed", 2**40 + 1], ["times3"], ["shuffle"], ["repeat", 2, True],
             ["draw"]]),
        (12, [["seed", 1], ["shuffle"], ["seed", 2], ["draw"], ["shuffle"]]),
        (9, [["seed", 3], ["draw", 77], ["shuffle"], ["more"]]),
        (8, [["seed", 0], ["shuffle"], ["draw"], ["repeat", 3, False]]),
        (11, [["seed", 42], ["even"], ["shuffle", 9], ["draw"],
              ["repeat", None, True]]),
        (6, [["seed", 4], ["seed", 5], ["draw"]]),
    ]
    cases = []
    for n, stages in pipelines:
        ds = gp.MapDataset.source([[i] for i in range(n)])
        for stage in stages:
            ds = apply_stage(ds, stage)
        count = min(len(ds), 3 * n) + 3
        cases.append({"num_records": n, "stages": stages, "len": len(ds),
                      "items": [ds[i] for i in range(count)]})
    return cases


def draws(rng):
    rows = []
    for _ in range(3):
        rows.append(["raw", int(rng.bit_generator.random_raw())])
    rows.append(["u32", int(rng.integers(0, 2**32, dtype=np.uint32))])
    for _ in range(3):
        rows.append(["f32", f32_bits(rng.random(dtype=np.float32))])
    rows.append(["f64", f64_bits(rng.random())])
    rows.append(["u32", int(rng.integers(0, 2**32, dtype=np.uint32))])
    for bound in [1, 2, 3, 10, 256, 1000, 2**31 + 1, 2**32 - 1, 2**32,
                  2**32 + 5, 2**40, 3 * 2**61, 2**63]:
        for _ in range(2):
            rows.append(["below", bound, int(rng.integers(0, bound))])
    for n in [1, 2, 5, 37]:
        values = list(range(n))
        rng.shuffle(values)
        rows.append(["shuffle", n, values])
    rows.append(["raw", int(rng.bit_generator.random_raw())])
    return rows


def generator_cases():
    cases = []
    for key in [0, 1, 42, 2**32 + 5, 2**64 - 1]:
        rng = np.random.Generator(np.random.Philox(key=key))
        cases.append({"key": key, "draws": draws(rng)})
    for seed in [0, 5, 2**32 - 1, 2**32, 2**63 + 11]:
        rng = np.random.Generator(np.random.Philox(seed))
        cases.append({"seed": seed, "draws": draws(rng)})
    return cases


print(json.dumps({
    "index_shuffle": index_shuffle_rows(),
    "samplers": sampler_cases(),
    "loaders": loader_cases(),
    "datasets": dataset_cases(),
    "dataset_random_maps": dataset_random_map_cases(),
    "pipelines": pipeline_cases(),
    "generators": generator_cases(),
}))
