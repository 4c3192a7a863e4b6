"""torch._lazy's functions: step closures, sync_multi, get_tensor_id, to_cpu and
torch._lazy.computation, each against torch._lazy (TorchScript backend) on the same program."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest
import torch
import torch._lazy
import torch._lazy.computation
import torch._lazy.debug
import torch._lazy.metrics

import tensordispatch as td
from tensordispatch import lazy
from tensordispatch.lazy import closures

LIBS = [td, torch]


def _step(lib: Any) -> None:
    (lazy.mark_step if lib is td else torch._lazy.mark_step)()


def _api(lib: Any) -> Any:
    return lazy if lib is td else torch._lazy


def _counter(lib: Any, name: str) -> int:
    metrics = lazy.metrics if lib is td else torch._lazy.metrics
    return metrics.counter_value(name) or 0


def _closure_program(lib: Any) -> list[Any]:
    seen: list[Any] = []
    x = lib.ones(3).to("lazy")
    y = x * 2.0
    _api(lib).add_step_closure(lambda t, k: seen.append((k, t.to("cpu").tolist())), args=(y, 1))
    _api(lib).add_step_closure(lambda: seen.append("second"))
    seen.append("traced")
    _step(lib)
    _step(lib)  # each closure ran once
    y = y + 1.0
    _api(lib).add_step_closure(lambda t: seen.append(t.to("cpu").tolist()), args=(y,))
    _step(lib)
    return seen


def test_step_closures_run_after_the_step_in_order_once() -> None:
    ours, theirs = _closure_program(td), _closure_program(torch)
    assert ours == theirs == ["traced", (1, [2.0, 2.0, 2.0]), "second", [3.0, 3.0, 3.0]]


def _failing_closures(lib: Any) -> tuple[str, list[str]]:
    seen: list[str] = []

    def bad() -> None:
        raise ValueError("boom")

    api = _api(lib)
    api.add_step_closure(lambda: seen.append("before"))
    api.add_step_closure(bad)
    api.add_step_closure(lambda: seen.append("dropped"))
    with pytest.raises(ValueError) as info:
        _step(lib)
    api.add_step_closure(lambda: seen.append("next step"))
    _step(lib)
    return str(info.value), seen


def test_a_failing_closure_propagates_and_drops_the_rest_of_its_step() -> None:
    assert _failing_closures(td) == _failing_closures(torch) == ("boom", ["before", "next step"])


def test_async_closures_run_on_another_thread() -> None:
    threads: list[threading.Thread] = []
    x = td.ones(2).to("lazy") + 1.0
    values: list[Any] = []
    lazy.add_step_closure(
        lambda t: (threads.append(threading.current_thread()), values.append(t.tolist())),
        args=(x,),
        run_async=True,
    )
    lazy.mark_step()
    closures._RUNNER.join()
    assert values == [[2.0, 2.0]]
    assert threads and threads[0] is not threading.current_thread()


def test_a_failed_async_closure_is_reported_by_the_next_one() -> None:
    def bad() -> None:
        raise KeyError("late")

    lazy.add_step_closure(bad, run_async=True)
    lazy.mark_step()
    closures._RUNNER.join()
    lazy.add_step_closure(lambda: None, run_async=True)
    with pytest.raises(RuntimeError) as info:
        lazy.mark_step()
    assert str(info.value) == ("Cannot run asynchronous closure due to previously raised exception")
    assert isinstance(info.value.__cause__, KeyError)
    lazy.mark_step()  # the error was reported once: the runner starts again
    closures._RUNNER.join()


def test_add_step_closure_refuses_what_it_cannot_call() -> None:
    with pytest.raises(TypeError) as info:
        lazy.add_step_closure(3)  # type: ignore[arg-type]
    assert str(info.value) == "add_step_closure: closure must be callable, got int"


def _sync_multi(lib: Any) -> tuple[list[list[str]], dict[str, int], list[float]]:
    x = lib.ones(3).to("lazy")
    _step(lib)
    y, z = x * 2.0 + 1.0, x - 4.0
    before = {n: _counter(lib, n) for n in ("SyncedTensorsWithIR", "MarkStep")}
    _api(lib).sync_multi([y], [])
    after = {n: _counter(lib, n) - before[n] for n in before}
    dump = td.lazy.debug.dump_ir if lib is td else torch._lazy.debug.dump_ir
    ops = [  # the operators (not device data) left in each graph
        [
            op
            for line in dump([t], "text").splitlines()[1:-1]
            if (op := next(w for w in line.split() if "::" in w).split("(")[0].split(".")[0])
            != "lazy_tensors::device_data"
        ]
        for t in (y, z)
    ]
    return ops, after, y.to("cpu").tolist() + z.to("cpu").tolist()


def test_sync_multi_cuts_only_the_given_tensors() -> None:
    ours, theirs = _sync_multi(td), _sync_multi(torch)
    assert ours[0] == theirs[0] == [[], ["aten::sub"]]
    assert ours[1] == theirs[1] == {"SyncedTensorsWithIR": 1, "MarkStep": 0}
    assert ours[2] == theirs[2]


@pytest.mark.parametrize("lib", LIBS, ids=lambda lib: lib.__name__)
def test_sync_multi_and_to_cpu_leave_cpu_tensors_alone(lib: Any) -> None:
    a = lib.ones(2)
    _api(lib).sync_multi([a], [])
    (out,) = _api(lib).to_cpu([a])
    assert out is a  # .to("cpu") of a CPU tensor is the tensor itself


def test_to_cpu_passes_other_leaves_through() -> None:
    out = lazy.to_cpu({"n": 3, "t": td.ones(1).to("lazy")})
    assert out["n"] == 3 and out["t"].device.type == "cpu"


def _tensor_ids(lib: Any) -> list[bool]:
    api = _api(lib)
    x = lib.ones(3).to("lazy")
    v = x[1:]
    first, view = api.get_tensor_id(x), api.get_tensor_id(v)
    same = api.get_tensor_id(x) == first
    x.add_(1.0)
    return [first == view, same, api.get_tensor_id(x) == first, api.get_tensor_id(v) == view]


def test_tensor_ids_relate_as_torch() -> None:
    assert _tensor_ids(td) == _tensor_ids(torch)


def test_get_tensor_id_refuses_cpu_tensors() -> None:
    with pytest.raises(TypeError) as info:
        lazy.get_tensor_id(td.ones(2))
    assert str(info.value) == (
        "get_tensor_id: expected a lazy tensor, got a Tensor on device 'cpu'; move it with "
        ".to('lazy') first"
    )


def test_to_cpu_keeps_the_structure_and_values_of_torch() -> None:
    def program(lib: Any) -> Any:
        x = lib.tensor([1.0, -2.0]).to("lazy")
        out = _api(lib).to_cpu({"a": [x * 2.0, (x.exp(), x - 1.0)], "b": x})
        return {
            "a": [out["a"][0].tolist(), tuple(t.tolist() for t in out["a"][1])],
            "b": out["b"].tolist(),
            "devices": {t.device.type for t in (out["a"][0], *out["a"][1], out["b"])},
        }

    ours, theirs = program(td), program(torch)
    assert ours["devices"] == theirs["devices"] == {"cpu"}
    assert ours["a"][0] == theirs["a"][0] and ours["b"] == theirs["b"]
    assert all(np.allclose(a, b) for a, b in zip(ours["a"][1], theirs["a"][1], strict=True))


def test_run_cached_graph_runs_the_synced_graph_on_new_inputs() -> None:
    def program(lib: Any) -> tuple[list[float], bool]:
        comp = td.lazy.computation if lib is td else torch._lazy.computation
        x = lib.ones(3).to("lazy")
        _step(lib)
        z = x * 3.0 + 1.0
        h = comp.get_graph_hash([z])
        ids, inputs = comp.get_tensors_ts_device_data_node([z])
        x_id = _api(lib).get_tensor_id(x)
        _api(lib).sync_multi([z], [])
        inputs[ids.index(x_id)] = lib.tensor([2.0, 5.0, -1.0])
        (result,) = comp.run_cached_graph(h, inputs)
        return result.tolist(), result.device.type == "cpu"

    assert program(td) == program(torch) == ([7.0, 16.0, -2.0], True)


def test_device_data_inputs_hold_the_tensor_values() -> None:
    x = td.tensor([1.0, 2.0]).to("lazy")
    lazy.mark_step()
    ids, values = lazy.computation.get_tensors_ts_device_data_node([x * 3.0])
    assert ids[0] == lazy.get_tensor_id(x) and values[0].tolist() == [1.0, 2.0]
    assert ids[1:] == [-1] and values[1].item() == 3.0  # a constant


def test_run_cached_graph_errors() -> None:
    comp = td.lazy.computation
    with pytest.raises(RuntimeError) as ours:
        comp.run_cached_graph(b"\x01" * 16, [])
    with pytest.raises(RuntimeError) as theirs:
        torch._lazy.computation.run_cached_graph(b"\x01" * 16, [])
    assert str(ours.value) == str(theirs.value).splitlines()[0]
    x = td.ones(2).to("lazy")
    lazy.mark_step()
    z = x + 1.0
    h = comp.get_graph_hash([z])
    lazy.sync_multi([z], [])
    with pytest.raises(ValueError) as info:
        comp.run_cached_graph(h, [td.ones(2)])
    assert str(info.value) == (
        "run_cached_graph: the graph takes 3 inputs, 1 were given "
        "(get_tensors_ts_device_data_node lists them)"
    )
    with pytest.raises(ValueError) as info:
        comp.run_cached_graph(h, [td.ones(3), 1.0, 1.0])
    assert str(info.value) == "run_cached_graph: input 0 must have shape [2], got [3]"


def test_deepcopy_of_a_lazy_tensor_is_lazy_with_its_synced_values_as_torch() -> None:
    import copy

    def program(lib: Any) -> tuple[str, list[float], list[float]]:
        x = lib.zeros(3).to("lazy")
        x[1:].add_(1.0)  # pending in the view's alias group until x is read
        c = copy.deepcopy(x)
        c.add_(5.0)  # the copy is a new root: x is not written
        return c.device.type, c.to("cpu").tolist(), x.to("cpu").tolist()

    assert program(td) == program(torch) == ("lazy", [5.0, 6.0, 6.0], [0.0, 1.0, 1.0])
