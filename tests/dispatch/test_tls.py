"""Thread-local include/exclude state against torch 2.13's TLS under the same guards."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

import pytest
import torch

from tensordispatch.dispatch.keys import DispatchKey
from tensordispatch.dispatch.keyset import (
    AUTOGRAD_DISPATCH_KEYSET,
    DEFAULT_EXCLUDED_RAW,
    DEFAULT_INCLUDED_RAW,
    DispatchKeySet,
)
from tensordispatch.dispatch.tls import (
    ExcludeDispatchKeyGuard,
    ForceDispatchKeyGuard,
    IncludeDispatchKeyGuard,
    PreserveDispatchKeyGuard,
    _AutoDispatchBelowADInplaceOrView,
    _AutoDispatchBelowAutograd,
    local_state,
    register_field,
    tls_is_dispatch_key_excluded,
    tls_is_dispatch_key_included,
    tls_is_pristine,
    tls_local_exclude_set,
    tls_local_include_set,
    tls_set_dispatch_key_excluded,
    tls_set_dispatch_key_included,
)

TK = torch._C.DispatchKey
TKS = torch._C.DispatchKeySet


@pytest.fixture(autouse=True)
def _pristine_tls() -> Iterator[None]:
    assert tls_is_pristine()
    yield
    assert tls_is_pristine()


def _ours() -> tuple[int, int]:
    return local_state().included, local_state().excluded


def _torch() -> tuple[int, int]:
    return (
        torch._C._dispatch_tls_local_include_set().raw_repr(),
        torch._C._dispatch_tls_local_exclude_set().raw_repr(),
    )


def _in_fresh_thread(fn: Callable[[], object]) -> object:
    out: list[object] = []
    t = threading.Thread(target=lambda: out.append(fn()))
    t.start()
    t.join()
    return out[0]


def test_fresh_thread_defaults_match_torch() -> None:
    ours = _in_fresh_thread(lambda: (_ours(), tls_is_pristine()))
    assert ours == (_in_fresh_thread(_torch), True)
    assert ours == ((DEFAULT_INCLUDED_RAW, DEFAULT_EXCLUDED_RAW), True)
    assert repr(tls_local_include_set()) == repr(torch._C._dispatch_tls_local_include_set())
    assert repr(tls_local_exclude_set()) == repr(torch._C._dispatch_tls_local_exclude_set())


def test_fresh_thread_has_empty_stacks_and_grad_enabled() -> None:
    state = _in_fresh_thread(
        lambda: (local_state().modes, local_state().transform_stack, local_state().grad_enabled)
    )
    assert state == ([], [], True)


def test_include_guard_matches_torch() -> None:
    with IncludeDispatchKeyGuard(DispatchKey.Python), torch._C._IncludeDispatchKeyGuard(TK.Python):
        assert _ours() == _torch()
        assert tls_is_dispatch_key_included(DispatchKey.Python)
    assert _ours() == _torch() == (DEFAULT_INCLUDED_RAW, DEFAULT_EXCLUDED_RAW)


def test_include_guard_with_backend_key_restores_backend_bit() -> None:
    with IncludeDispatchKeyGuard(DispatchKey.Meta), torch._C._IncludeDispatchKeyGuard(TK.Meta):
        assert _ours() == _torch()
        assert local_state().included & 0x18000 == 0x18000
    assert _ours() == _torch() == (DEFAULT_INCLUDED_RAW, DEFAULT_EXCLUDED_RAW)


def test_exclude_guard_matches_torch() -> None:
    ks = DispatchKeySet(DispatchKey.AutogradCPU, DispatchKey.Python)
    tks = TKS(TK.AutogradCPU) | TKS(TK.Python)
    with ExcludeDispatchKeyGuard(ks), torch._C._ExcludeDispatchKeyGuard(tks):
        assert _ours() == _torch()
        assert tls_is_dispatch_key_excluded(DispatchKey.AutogradCPU)
    assert _ours() == _torch()


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        (_AutoDispatchBelowAutograd, torch._C._AutoDispatchBelowAutograd),
        (_AutoDispatchBelowADInplaceOrView, torch._C._AutoDispatchBelowADInplaceOrView),
    ],
)
def test_below_guards_match_torch(ours: type, theirs: type) -> None:
    with ours(), theirs():
        assert _ours() == _torch()
    assert _ours() == _torch()


def test_below_autograd_excludes_autograd_dispatch_keyset() -> None:
    with _AutoDispatchBelowAutograd():
        assert tls_local_exclude_set().has_all(AUTOGRAD_DISPATCH_KEYSET)
        assert tls_local_exclude_set() - AUTOGRAD_DISPATCH_KEYSET == DispatchKeySet.from_raw(
            DEFAULT_EXCLUDED_RAW
        )


def test_force_guard_matches_torch() -> None:
    inc, exc = DispatchKeySet(DispatchKey.CPU), DispatchKeySet(DispatchKey.Meta)
    with (
        ForceDispatchKeyGuard(inc, exc),
        torch._C._ForceDispatchKeyGuard(TKS(TK.CPU), TKS(TK.Meta)),
    ):
        assert _ours() == _torch() == (0x10001, 0x18000)
    assert _ours() == _torch()


def test_guards_nest_and_restore_in_order() -> None:
    with IncludeDispatchKeyGuard(DispatchKey.Python), torch._C._IncludeDispatchKeyGuard(TK.Python):
        with _AutoDispatchBelowAutograd(), torch._C._AutoDispatchBelowAutograd():
            with (
                IncludeDispatchKeyGuard(DispatchKey.FuncTorchBatched),
                torch._C._IncludeDispatchKeyGuard(TK.FuncTorchBatched),
            ):
                assert _ours() == _torch()
            assert _ours() == _torch()
        assert _ours() == _torch()
        assert tls_is_dispatch_key_included(DispatchKey.Python)
    assert _ours() == _torch()


def test_guard_exit_undoes_unguarded_changes_made_inside_like_torch() -> None:
    # torch 2.13's guards restore a snapshot, not a delta.
    with IncludeDispatchKeyGuard(DispatchKey.Python), torch._C._IncludeDispatchKeyGuard(TK.Python):
        tls_set_dispatch_key_included(DispatchKey.FuncTorchBatched, True)
        torch._C._dispatch_tls_set_dispatch_key_included(TK.FuncTorchBatched, True)
        assert _ours() == _torch()
    assert _ours() == _torch() == (DEFAULT_INCLUDED_RAW, DEFAULT_EXCLUDED_RAW)


def test_include_guard_of_included_key_keeps_it_like_torch() -> None:
    with PreserveDispatchKeyGuard(), torch._C._PreserveDispatchKeyGuard():
        tls_set_dispatch_key_included(DispatchKey.Python, True)
        torch._C._dispatch_tls_set_dispatch_key_included(TK.Python, True)
        with (
            IncludeDispatchKeyGuard(DispatchKey.Python),
            torch._C._IncludeDispatchKeyGuard(TK.Python),
        ):
            pass
        assert _ours() == _torch()
        assert tls_is_dispatch_key_included(DispatchKey.Python)


def test_unguarded_set_and_unset_match_torch() -> None:
    with PreserveDispatchKeyGuard(), torch._C._PreserveDispatchKeyGuard():
        for key in (DispatchKey.Meta, DispatchKey.Python, DispatchKey.AutogradCPU):
            for desired in (True, True, False, False):
                tls_set_dispatch_key_included(key, desired)
                torch._C._dispatch_tls_set_dispatch_key_included(TK(int(key)), desired)
                tls_set_dispatch_key_excluded(key, desired)
                torch._C._dispatch_tls_set_dispatch_key_excluded(TK(int(key)), desired)
                assert _ours() == _torch(), (key, desired)
                assert tls_is_dispatch_key_included(key) == (
                    torch._C._dispatch_tls_is_dispatch_key_included(TK(int(key)))
                )
        # Un-including Meta keeps its backend bit, as in torch.
        assert local_state().included == DEFAULT_INCLUDED_RAW | 0x8000 | 0x1


def test_guard_restores_on_exception() -> None:
    with (
        pytest.raises(KeyError),
        IncludeDispatchKeyGuard(DispatchKey.Python),
        ExcludeDispatchKeyGuard(DispatchKeySet(DispatchKey.AutogradCPU)),
    ):
        raise KeyError("boom")
    assert _ours() == (DEFAULT_INCLUDED_RAW, DEFAULT_EXCLUDED_RAW)


def test_guard_object_is_reentrant() -> None:
    guard = ExcludeDispatchKeyGuard(DispatchKeySet(DispatchKey.Python))
    with guard:
        with IncludeDispatchKeyGuard(DispatchKey.Tracer), guard:
            assert tls_is_dispatch_key_excluded(DispatchKey.Python)
        assert tls_is_dispatch_key_excluded(DispatchKey.Python)
        assert not tls_is_dispatch_key_included(DispatchKey.Tracer)
    assert not tls_is_dispatch_key_excluded(DispatchKey.Python)


def test_state_is_per_thread() -> None:
    entered, checked = threading.Barrier(2), threading.Barrier(2)
    seen: dict[str, tuple[int, int]] = {}

    def guarded() -> None:
        with IncludeDispatchKeyGuard(DispatchKey.Python), _AutoDispatchBelowAutograd():
            entered.wait()
            seen["guarded"] = _ours()
            checked.wait()

    def plain() -> None:
        entered.wait()
        seen["plain"] = _ours()
        checked.wait()

    threads = [threading.Thread(target=guarded), threading.Thread(target=plain)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen["plain"] == (DEFAULT_INCLUDED_RAW, DEFAULT_EXCLUDED_RAW)
    assert seen["guarded"] != seen["plain"]
    assert _ours() == (DEFAULT_INCLUDED_RAW, DEFAULT_EXCLUDED_RAW)


def test_local_state_is_one_object_with_per_thread_values() -> None:
    assert _in_fresh_thread(local_state) is local_state()
    with IncludeDispatchKeyGuard(DispatchKey.Python):
        assert _in_fresh_thread(lambda: local_state().included) == DEFAULT_INCLUDED_RAW


def test_pristine_detects_every_field() -> None:
    state = local_state()
    with IncludeDispatchKeyGuard(DispatchKey.Python):
        assert not tls_is_pristine()
    state.modes.append(object())
    assert not tls_is_pristine()
    state.modes.pop()
    state.grad_enabled = False
    assert not tls_is_pristine()
    state.grad_enabled = True
    state.transform_stack.append(1)
    assert not tls_is_pristine()
    state.transform_stack.pop()
    assert tls_is_pristine()


def test_register_field_default_visible_in_every_thread() -> None:
    register_field("_test_tls_level", 0)
    register_field("_test_tls_level", 0)  # same default again: a no-op
    state = local_state()
    state._test_tls_level = 3
    assert not tls_is_pristine()
    assert _in_fresh_thread(lambda: local_state()._test_tls_level) == 0
    state._test_tls_level = 0
    assert tls_is_pristine()


def test_register_field_error_messages() -> None:
    with pytest.raises(ValueError) as info:
        register_field("modes", ())
    assert str(info.value) == (
        "register_field('modes'): the thread-local field 'modes' already exists; "
        "choose a name prefixed by your layer"
    )
    with pytest.raises(TypeError) as type_info:
        register_field("_test_tls_stack", [])
    assert str(type_info.value) == (
        "register_field('_test_tls_stack', []): the default is shared by every thread, "
        "so it must be immutable; use a tuple or a frozenset"
    )


def test_guard_rejects_raw_int_with_message() -> None:
    with pytest.raises(TypeError) as info:
        IncludeDispatchKeyGuard(0x10001)  # type: ignore[arg-type]
    assert str(info.value) == (
        "dispatch key guard: expected a DispatchKeySet or a DispatchKey, got int 65537; "
        "wrap raw words with DispatchKeySet.from_raw"
    )
