"""backend.yaml drives the Lazy kernels; metrics API; user-facing errors (goldens)."""

from __future__ import annotations

import pytest

import tensordispatch as td
from tensordispatch import lazy
from tensordispatch.codegen.backend_stubs import build_external_backend, read_backend_yaml
from tensordispatch.dispatch.dispatcher import DISPATCHER
from tensordispatch.dispatch.keys import DispatchKey
from tensordispatch.lazy import registration
from tensordispatch.lazy.kernels import HANDWRITTEN
from tensordispatch.lazy.tensor import from_array
from tensordispatch.schema.native import load_native_functions


def test_backend_yaml_passes_gen_backend_stubs_checks() -> None:
    path = registration.BACKEND_YAML
    backend = build_external_backend(
        read_backend_yaml(path.read_text(encoding="utf-8"), str(path)), load_native_functions()
    )
    spec = registration.read_backend_yaml()
    assert backend.backend_key == "Lazy"
    assert {k.operator.removeprefix("aten::") for k in backend.kernels} >= set(spec.full_codegen)


def test_every_listed_operator_has_a_lazy_kernel() -> None:
    spec = registration.read_backend_yaml()
    for name in spec.full_codegen + spec.supported:
        base, _, overload = name.partition(".")
        entry = DISPATCHER.find(f"aten::{base}", overload)
        assert DispatchKey.Lazy in entry.kernels, name
    assert set(spec.supported) == set(HANDWRITTEN)


def test_in_place_and_out_siblings_are_derived() -> None:
    for name, overload in (("aten::add_", "Tensor"), ("aten::add", "out"), ("aten::exp_", "")):
        assert DispatchKey.Lazy in DISPATCHER.find(name, overload).kernels


def test_unlisted_operator_falls_back() -> None:
    entry = DISPATCHER.find("aten::nonzero", "")
    assert DispatchKey.Lazy not in entry.kernels
    x = td.tensor([0.0, 2.0]).to("lazy")
    assert x.nonzero().to("cpu").tolist() == [[1]]
    assert lazy.metrics.counter_value("aten::nonzero") == 1


def test_uninstall_and_install_round_trip() -> None:
    lazy.uninstall()
    try:
        assert not lazy.installed()
        assert DispatchKey.Lazy not in DISPATCHER.find("aten::add", "Tensor").kernels
    finally:
        lazy.install()
    assert lazy.installed() and (td.ones(2).to("lazy") + 1).to("cpu").tolist() == [2.0, 2.0]


def test_metrics_report_lists_values_and_counters() -> None:
    x = td.ones(3).to("lazy")
    (x + 1).to("cpu")
    report = lazy.metrics.metrics_report()
    assert "Metric: TensorsGraphSize\n  TotalSamples: 1\n" in report
    assert "Counter: lazy::add\n  Value: 1" in report
    # x's device data, the scalar 1 (shared by `other` and alpha=1), add
    assert lazy.metrics.metric_values("TensorsGraphSize") == [3]


def test_scalar_device_data_cache_misses_once_per_value() -> None:
    x = td.ones(2).to("lazy")
    lazy.metrics.reset_metrics()
    _ = x * 7.25, x * 7.25, x * 8.25
    assert lazy.metrics.counter_value("DeviceDataCacheMiss") == 2


def test_error_mixing_cpu_and_lazy() -> None:
    with pytest.raises(RuntimeError) as info:
        td.ones(2).to("lazy") + td.ones(2)
    assert str(info.value) == (
        "lazy: every tensor argument must be a lazy tensor, but found a Tensor on device "
        "'cpu'; move it with .to('lazy') first (only 0-dim CPU tensors may join lazy ones)"
    )


def test_error_view_of_unwrapped_lazy_tensor() -> None:
    raw = from_array(td.ones(4).numpy(), td.float32)
    with pytest.raises(RuntimeError) as info:
        raw.transpose(0, 0)
    assert str(info.value) == (
        "lazy tensors: a view of a lazy tensor without functionalization is not supported "
        "(lazy device buffers are immutable); create lazy tensors with x.to('lazy') or a "
        "factory with device='lazy', which wrap them in a functional tensor that handles views"
    )


def test_error_dump_ir_format() -> None:
    with pytest.raises(ValueError) as info:
        lazy.debug.dump_ir([td.ones(1).to("lazy")], "svg")
    assert str(info.value) == "dump_ir: ir_format must be 'text' or 'dot' (given 'svg')"


def test_error_unknown_operator_in_backend_yaml(tmp_path: pytest.TempPathFactory) -> None:
    path = tmp_path / "backend.yaml"  # type: ignore[operator]
    path.write_text("backend: Lazy\nfull_codegen:\n- not_an_op\n")
    spec = registration.read_backend_yaml(path)
    with pytest.raises(LookupError) as info:
        registration._entry(spec.full_codegen[0])
    assert str(info.value) == (
        "lazy backend.yaml: aten::not_an_op is not an operator of the library; remove it "
        "from backend.yaml or add the operator first"
    )


def test_error_item_of_a_many_element_lazy_tensor() -> None:
    with pytest.raises(RuntimeError) as info:
        td.ones(2).to("lazy").item()
    assert str(info.value) == "item(): a Tensor with 2 elements cannot be converted to Scalar"


def test_to_meta_from_lazy_gives_a_meta_tensor_like_torch() -> None:
    m = td.ones(2).to("lazy").to("meta")
    assert m.device.type == "meta" and tuple(m.shape) == (2,)
