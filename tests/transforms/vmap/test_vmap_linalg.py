"""The SVD under vmap (rules_linalg.linalg_svd_rule) against torch.func.vmap: svdvals, the
nuclear and spectral norms, every output of _linalg_svd, no for-loop fallback, and the
logical-rank error."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td
import tensordispatch.linalg  # td.linalg
from tensordispatch.transforms.vmap import (
    reset_vmap_fallback_counts,
    vmap,
    vmap_fallback_counts,
)

g = torch.Generator().manual_seed(0)

CASES: dict[str, tuple[Callable[[Any], Callable[..., Any]], Any]] = {
    "svdvals": (lambda m: m.linalg.svdvals, 0),
    "nuclear norm": (lambda m: lambda a: m.linalg.matrix_norm(a, "nuc"), 0),
    "spectral norm, batch dim last": (lambda m: lambda a: m.linalg.matrix_norm(a, 2), 2),
    "torch.norm nuc": (lambda m: lambda a: m.norm(a, "nuc"), 1),
    "S of _linalg_svd": (lambda m: lambda a: m.ops.aten._linalg_svd(a, False, True)[1], 0),
}


@pytest.mark.parametrize("name", CASES)
def test_matches_torch_func_vmap_without_fallback(name: str) -> None:
    make, in_dim = CASES[name]
    a = torch.randn(3, 4, 5, generator=g)
    expected = torch.func.vmap(make(torch), in_dims=in_dim)(a)
    reset_vmap_fallback_counts()
    got = vmap(make(td), in_dims=in_dim)(td.from_numpy(a.numpy().copy()))
    assert vmap_fallback_counts() == {}
    assert tuple(got.shape) == tuple(expected.shape)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-5, atol=1e-6)


def test_singular_vectors_rebuild_each_matrix() -> None:
    a = td.randn(3, 4, 2)
    u, s, vh = vmap(lambda x: td.ops.aten._linalg_svd(x, False, True))(a)
    assert (tuple(u.shape), tuple(s.shape), tuple(vh.shape)) == ((3, 4, 2), (3, 2), (3, 2, 2))
    rebuilt = (u.numpy() * s.numpy()[:, None, :]) @ vh.numpy()
    np.testing.assert_allclose(rebuilt, a.numpy(), rtol=1e-4, atol=1e-5)


def test_vector_per_sample_is_refused_as_torch() -> None:
    messages = []
    for fn, module in ((vmap, td), (torch.func.vmap, torch)):
        with pytest.raises(RuntimeError) as info:
            fn(module.linalg.svdvals)(module.ones(3, 4))
        messages.append(str(info.value))
    assert (
        messages[0]
        == messages[1]
        == ("linalg.svd: The input tensor A must have at least 2 dimensions.")
    )
