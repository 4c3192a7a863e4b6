"""Load + model + group the torch 2.13 native_functions.yaml: tensordispatch vs torchgen.

Run: python benchmarks/bench_schema.py [--repeat N]

Both sides do the same work from the file on disk: read the yaml and tags.yaml, build every
NativeFunction with its kernels, check the rules across entries, generate the `autogen`
variants, build the BackendIndex per key, then group (NativeFunctionsGroup) and view-group.
Every repeat starts from fresh caches on both sides: torchgen's per-path parse caches and
tags cache, and every functools cache in tensordispatch.schema (the schema parser caches
parsed pieces). Imports happen once, before timing. Prints the best of N for each and the
ratio (target: tensordispatch <= 0.25x torchgen).
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
from tensordispatch.schema import load_native_functions, native_model

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
    cleared = 1
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


def best_of(repeat: int, clear: Callable[[], object], run: Callable[[], tuple[int, int, int]]
            ) -> tuple[float, tuple[int, int, int]]:  # fmt: skip
    best = float("inf")
    result = (0, 0, 0)
    for _ in range(repeat):
        clear()
        gc.collect()
        start = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - start)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    # Alternate the two sides so that machine noise hits both alike.
    td_best, tg_best = float("inf"), float("inf")
    for _ in range(args.repeat):
        t, td_counts = best_of(1, clear_tensordispatch_caches, run_tensordispatch)
        td_best = min(td_best, t)
        t, tg_counts = best_of(1, clear_torchgen_caches, run_torchgen)
        tg_best = min(tg_best, t)
    if td_counts != tg_counts:
        raise SystemExit(
            f"the two sides disagree: tensordispatch {td_counts}, torchgen {tg_counts}"
        )
    print(f"native_functions.yaml: {td_counts[0]} functions, {td_counts[1]} grouped items, "
          f"{td_counts[2]} view-grouped items (best of {args.repeat}, fresh caches)")  # fmt: skip
    print(f"  torchgen        {tg_best * 1e3:8.1f} ms")
    print(f"  tensordispatch  {td_best * 1e3:8.1f} ms")
    print(f"  ratio           {td_best / tg_best:8.3f}x  (target <= 0.25x)")


if __name__ == "__main__":
    main()
