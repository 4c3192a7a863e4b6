"""What `import tensordispatch` does and does not do (issue 4: import time).

Note [Operators defined on first lookup] (codegen/gen_registrations.py): importing the package
defines no aten operator; the first lookup of a name defines it, and anything that enumerates
operators defines them all first. Each test runs a fresh interpreter, since this process has
long imported everything. The speed itself is measured only in benchmarks/bench_ops.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap


def _run(code: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


_AFTER_IMPORT = """
    import json, sys
    import tensordispatch as td
    from tensordispatch.dispatch.dispatcher import DISPATCHER
    from tensordispatch.generated.names import NAMES
    print(json.dumps({
        "pending": DISPATCHER.pending_operators("aten"),
        "names": ["aten::" + n for n in NAMES["aten"]],
        "aten_entries": sorted(
            e.qualified_overload_name for e in DISPATCHER.entries.values()
            if e.qualified_name.startswith("aten::")
        ),
        "modules": sorted(sys.modules),
    }))
"""


def test_import_defines_no_aten_operator() -> None:
    state = json.loads(_run(_AFTER_IMPORT))
    assert state["aten_entries"] == []
    assert state["pending"] == state["names"]
    assert len(state["names"]) > 250


def test_import_leaves_heavy_modules_unimported() -> None:
    modules = set(json.loads(_run(_AFTER_IMPORT))["modules"])
    deferred = {
        "tensordispatch.generated.registrations",  # ~6,000 lines, imports every kernel table
        "tensordispatch.backends.cpu",
        "tensordispatch.backends.meta",
        "tensordispatch.backends.composite",
        "tensordispatch.ops.decompositions",
        "tensordispatch.backends.boxed_fallback",
        "tensordispatch.ops.direct",
        "tensordispatch.generated.nn_functions",
        "tensordispatch.nn",
        "tensordispatch.optim",
        "tensordispatch.transforms.vmap",
        "tensordispatch.lazy",
        "numpy.random",
        "yaml",
        # debugging views, printing, the autograd engine and the schema parser (issue 4):
        "tensordispatch.dispatch.trace",
        "tensordispatch.dispatch.introspection",
        "tensordispatch.tensor.printing",
        "tensordispatch.autograd.engine",
        "tensordispatch.autograd.formulas",
        "tensordispatch.autograd.functions_manual",
        "tensordispatch.autograd.functions_nn",
        # the whole schema package (the dispatcher names its types in annotations only):
        "tensordispatch.schema",
        "tensordispatch.schema.types",
        "tensordispatch.schema.model",
        "tensordispatch.schema.defaults",
        "tensordispatch.schema.invariants",
        "tensordispatch.schema.parse",
        "tensordispatch.schema.boxing",
    }
    assert deferred & modules == set()
    assert "numpy" in modules and "tensordispatch.generated.functions" in modules


def test_names_imported_on_first_use_are_the_defining_modules_objects() -> None:
    out = _run(
        """
        import sys
        import tensordispatch as td
        import tensordispatch.autograd.gradcheck, tensordispatch.schema.boxing
        from tensordispatch.autograd import engine
        gc = sys.modules["tensordispatch.autograd.gradcheck"]  # td.autograd.gradcheck: the function
        from tensordispatch.dispatch import introspection, trace
        from tensordispatch.schema import boxing, defaults, invariants, model, parse
        from tensordispatch.tensor import printing
        print("yaml" in sys.modules)  # importing schema submodules skips the yaml model
        pairs = [
            (td.dump, introspection.dump), (td.dump_table, introspection.dump_table),
            (td.explain, introspection.explain),
            (td.check_invariants, introspection.check_invariants),
            (td.dispatch.has_kernel, introspection.has_kernel),
            (td.dispatch_trace, trace.dispatch_trace), (td.dispatch.Hop, trace.Hop),
            (td.get_printoptions, printing.get_printoptions),
            (td.printoptions, printing.printoptions),
            (td.tensor.set_printoptions, printing.set_printoptions),
            (td.autograd.backward, engine.backward), (td.autograd.grad, engine.grad),
            (td.autograd.gradcheck, gc.gradcheck),
            (td.schema.parse_schema, parse.parse_schema),
            (td.schema.boxing_info, boxing.boxing_info),
            (td.schema.FunctionSchema, model.FunctionSchema),
            (td.schema.SchemaKind, invariants.SchemaKind),
            (td.schema.default_value, defaults.default_value),
        ]
        print(all(a is b for a, b in pairs), len(pairs))
        names = td.__all__ + ["dispatch." + n for n in td.dispatch.__all__]
        print([n for n in names if not hasattr(td, n.split(".")[0])] + [
            n for n in td.dispatch.__all__ if not hasattr(td.dispatch, n)
        ])
        """
    )
    assert out == "False\nTrue 18\n[]\n"


def test_unknown_attribute_of_a_lazy_package_is_an_attribute_error() -> None:
    out = _run(
        """
        import tensordispatch as td
        import tensordispatch.schema
        for m in (td, td.dispatch, td.autograd, td.tensor, td.schema):
            try:
                m.no_such_name
            except AttributeError as e:
                print(e)
        """
    )
    assert out == (
        "module 'tensordispatch' has no attribute 'no_such_name'\n"
        "module 'tensordispatch.dispatch' has no attribute 'no_such_name'\n"
        "module 'tensordispatch.autograd' has no attribute 'no_such_name'\n"
        "module 'tensordispatch.tensor' has no attribute 'no_such_name'\n"
        "module 'tensordispatch.schema' has no attribute 'no_such_name'\n"
    )


def test_first_call_defines_only_what_it_uses() -> None:
    state = json.loads(
        _run(
            """
            import json
            import tensordispatch as td
            from tensordispatch.dispatch.dispatcher import DISPATCHER
            x = td.tensor([1.0, 2.0])
            y = x + x
            print(json.dumps({"pending": DISPATCHER.pending_operators("aten"),
                              "y": y.tolist()}))
            """
        )
    )
    assert state["y"] == [2.0, 4.0]
    assert "aten::add" not in state["pending"]
    assert "aten::mm" in state["pending"] and "aten::conv2d" in state["pending"]


def test_lookup_by_name_and_ops_namespace_define_the_operator() -> None:
    out = _run(
        """
        import tensordispatch as td
        from tensordispatch.dispatch.dispatcher import DISPATCHER
        print(DISPATCHER.find("aten::mm") is not None, "aten::mm" in DISPATCHER.pending_operators())
        print(td.ops.aten.bmm.default, "aten::bmm" in DISPATCHER.pending_operators())
        print(td.dump("aten::sin").splitlines()[0])
        """
    )
    assert out == "True False\naten.bmm.default False\nname: aten::sin\n"


def test_enumeration_sees_every_operator() -> None:
    state = json.loads(
        _run(
            """
            import json
            import tensordispatch as td
            from tensordispatch.dispatch.dispatcher import DISPATCHER
            from tensordispatch.generated.names import NAMES
            live = {e.qualified_name for e in DISPATCHER.live_entries()}
            print(json.dumps({"pending": DISPATCHER.pending_operators(),
                              "missing": sorted({"aten::" + n for n in NAMES["aten"]} - live)}))
            """
        )
    )
    assert state == {"pending": [], "missing": []}


_DUMP_ALL = """
    import tensordispatch as td
    from tensordispatch.dispatch.dispatcher import DISPATCHER
    for e in sorted(DISPATCHER.live_entries(), key=lambda e: e.qualified_overload_name):
        print(e.dump())
        print(e.dump_table())
"""


def test_state_does_not_depend_on_which_operators_were_used_first() -> None:
    # Registration order never matters (STYLE.md): defining add/mul/sum/zeros (and their
    # autograd kernels) first, by using them, ends in exactly the state of defining all at once.
    at_once = _run("import tensordispatch as td\n" + textwrap.dedent(_DUMP_ALL))
    used_first = _run(
        textwrap.dedent(
            """
            import tensordispatch as td
            x = td.ones(3, requires_grad=True)
            (x * x + td.zeros(3)).sum().backward()
            td.ops.aten.mm.default
            """
        )
        + textwrap.dedent(_DUMP_ALL)
    )
    assert len(at_once.splitlines()) > 10_000
    assert used_first == at_once


def test_operator_first_used_inside_a_batch_is_published_at_once() -> None:
    # Inside DISPATCHER.batch() tables publish at the batch's end; an aten operator defined on
    # first use there must work at once, as it did when it was defined at import.
    out = _run(
        """
        import tensordispatch as td
        from tensordispatch.dispatch.dispatcher import DISPATCHER
        with DISPATCHER.batch():
            x = td.ones(2, requires_grad=True)
            y = (x * 3).sum()
        y.backward()
        print(x.grad.tolist(), type(y.grad_fn).__name__)
        """
    )
    assert out == "[3.0, 3.0] SumBackward0\n"


def test_threads_racing_on_a_first_use_all_get_the_operator() -> None:
    out = _run(
        """
        import threading
        import tensordispatch as td
        barrier = threading.Barrier(8)
        results = []
        def work():
            a = td.ones(2, 2)
            barrier.wait()
            results.append(td.mm(a, a).tolist())
        threads = [threading.Thread(target=work) for _ in range(8)]
        for t in threads: t.start()
        for t in threads: t.join()
        print(len(results), all(r == [[2.0, 2.0], [2.0, 2.0]] for r in results))
        """
    )
    assert out == "8 True\n"


def test_threads_first_using_operators_inside_their_own_batches_all_finish() -> None:
    out = _run(
        """
        import threading
        import tensordispatch as td
        from tensordispatch.dispatch.dispatcher import DISPATCHER
        barrier = threading.Barrier(4)
        results = []
        def work(i):
            a = td.ones(2, 2)
            barrier.wait()
            with DISPATCHER.batch():
                r = [td.mm(a, a), td.bmm(a[None], a[None])[0], td.tanh(a), td.exp(a)][i]
            results.append(r.shape == (2, 2))
        threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(4)]
        for t in threads: t.start()
        for t in threads: t.join(60)
        print(sum(results), any(t.is_alive() for t in threads))
        """
    )
    assert out == "4 False\n"
