"""Load + model + group the torch 2.13 native_functions.yaml: tensordispatch vs torchgen.

Run: python benchmarks/bench_schema.py [--repeat N]

Both sides do the same work from the file on disk: read the yaml and tags.yaml, build every
NativeFunction with its kernels, check the rules across entries, generate the `autogen`
variants, build the BackendIndex per key, then group (NativeFunctionsGroup) and view-group.
Every repeat starts from fresh caches on both sides: torchgen's per-path parse caches and
tags cache, and every functools cache in tensordispatch.schema (the schema parser caches
parsed pieces). Imports happen once, before timing. Prints the best of N for each and the
ratio (target: tensordispatch <= 0.25x torchgen), both in wall-clock time and in CPU time of
the process (the latter is steadier on a shared, busy machine).
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from collections.abc import Callable

import torchgen
import torchgen.gen as tg

import tensordispatch.schema as td_schema
from tensordispatch.schema import load_native_functions, native_model, native_parse, native_yaml

NATIVE = os.path.join(os.path.dirname(torchgen.__file__), "packaged", "ATen", "native")
YAML = os.path.join(NATIVE, "native_functions.yaml")
TAGS = os.path.join(NATIVE, "tags.yaml")


def clear_torchgen_caches() -> None:
    tg._GLOBAL_PARSE_NATIVE_YAML_CACHE.clear()
    tg._GLOBAL_PARSE_TAGS_YAML_CACHE.clear()
    tg.parse_tags_yaml.cache_clear()


def clear_tensordispatch_caches() -> int:
    """Clear every functools cache of the tensordispatch.schema modules; return how many."""
    native_model._TYPE_TEXTS.clear()  # the type -> text memo of the signature keys
    native_parse._METADATA.clear()  # shared BackendMetadata objects
    native_parse._VARIANTS_CACHE.clear()  # parsed `variants:` values
    native_yaml._ENTRY_KEY_OK.clear()  # verdicts on entry keys
    cleared = 4
    for name, module in list(sys.modules.items()):
        if module is None or not name.startswith(td_schema.__name__):
            continue
        for value in list(vars(module).values()):
            if callable(value) and hasattr(value, "cache_clear"):
                value.cache_clear()
                cleared += 1
    return cleared


def run_torchgen() -> tuple[int, int, int]:
    parsed = tg.parse_native_yaml(YAML, TAGS)
    funcs = parsed.native_functions
    grouped = tg.get_grouped_native_functions(funcs)
    view_grouped = tg.get_grouped_by_view_native_functions(funcs)
    return len(funcs), len(grouped), len(view_grouped)


def run_tensordispatch() -> tuple[int, int, int]:
    parsed = load_native_functions(YAML, tags_path=TAGS)
    return len(parsed.native_functions), len(parsed.grouped), len(parsed.view_grouped)


Counts = tuple[int, int, int]


def timed(clear: Callable[[], object], run: Callable[[], Counts]) -> tuple[float, float, Counts]:
    """(wall seconds, CPU seconds of this process, counts) of one run from fresh caches."""
    clear()
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    counts = run()
    return time.perf_counter() - wall, time.process_time() - cpu, counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    # Alternate the two sides so that machine noise hits both alike; keep the best of each.
    best = {"td": [float("inf")] * 2, "tg": [float("inf")] * 2}
    counts: dict[str, Counts] = {}
    for _ in range(args.repeat):
        for side, clear, run in (
            ("td", clear_tensordispatch_caches, run_tensordispatch),
            ("tg", clear_torchgen_caches, run_torchgen),
        ):
            wall, cpu, counts[side] = timed(clear, run)
            best[side] = [min(best[side][0], wall), min(best[side][1], cpu)]
    if counts["td"] != counts["tg"]:
        raise SystemExit(
            f"the two sides disagree: tensordispatch {counts['td']}, torchgen {counts['tg']}"
        )
    n_funcs, n_grouped, n_view = counts["td"]
    print(
        f"native_functions.yaml: {n_funcs} functions, {n_grouped} grouped items, {n_view} view-grouped items (best of {args.repeat}, fresh caches)"
    )
    print("                    wall ms    cpu ms")
    for name, side in (("torchgen", "tg"), ("tensordispatch", "td")):
        print(f"  {name:<15} {best[side][0] * 1e3:8.1f}  {best[side][1] * 1e3:8.1f}")
    ratio_wall = best["td"][0] / best["tg"][0]
    ratio_cpu = best["td"][1] / best["tg"][1]
    print(f"  {'ratio':<15} {ratio_wall:7.3f}x  {ratio_cpu:7.3f}x  (target <= 0.25x)")


if __name__ == "__main__":
    main()
