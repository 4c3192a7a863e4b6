"""The same MLP trained in torch and in tensordispatch: losses agree at every step."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import tensordispatch as td
from tensordispatch import nn, optim


def _models() -> tuple[Any, Any]:
    with torch.random.fork_rng():  # leave the global generator to the other tests
        torch.manual_seed(0)
        tm = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    dm = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    for (_, tp), (name, dp) in zip(tm.named_parameters(), dm.named_parameters(), strict=True):
        module = dm[int(name.split(".")[0])]
        setattr(module, name.split(".")[1], nn.Parameter(td.from_numpy(tp.detach().numpy().copy())))
    return tm, dm


def _data() -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 8)).astype(np.float32)
    return x, (x[:, 0] > 0).astype(np.int64) + (x[:, 1] > 0).astype(np.int64)


@pytest.mark.parametrize(
    ("make", "kwargs"),
    [
        ("SGD", {"lr": 0.1}),
        ("SGD", {"lr": 0.05, "momentum": 0.9, "weight_decay": 1e-3, "nesterov": True}),
        ("Adam", {"lr": 0.01}),
    ],
)
def test_training_losses_match_torch(make: str, kwargs: dict[str, Any]) -> None:
    tm, dm = _models()
    topt = getattr(torch.optim, make)(tm.parameters(), **kwargs)
    dopt = getattr(optim, make)(list(dm.parameters()), **kwargs)
    x, y = _data()
    tloss, dloss = torch.nn.CrossEntropyLoss(), nn.CrossEntropyLoss()
    tx, ty, dx, dy = torch.from_numpy(x), torch.from_numpy(y), td.from_numpy(x), td.from_numpy(y)
    for _ in range(50 if make == "SGD" and "momentum" not in kwargs else 15):
        topt.zero_grad()
        dopt.zero_grad()
        lt = tloss(tm(tx), ty)
        ld = dloss(dm(dx), dy)
        assert abs(lt.item() - ld.item()) < 1e-5
        lt.backward()
        ld.backward()
        topt.step()
        dopt.step()


def test_module_registers_parameters_in_order() -> None:
    model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1, bias=False))
    assert [n for n, _ in model.named_parameters()] == ["0.weight", "0.bias", "2.weight"]
    assert all(p.requires_grad and p.is_leaf for p in model.parameters())


def test_relu_and_cross_entropy_gradients_match_torch() -> None:
    x = np.array([[1.0, -2.0, 0.5], [-0.3, 0.2, 3.0]], dtype=np.float32)
    y = np.array([2, 0])
    tx = torch.tensor(x, requires_grad=True)
    dx = td.from_numpy(x.copy()).requires_grad_()
    torch.nn.functional.cross_entropy(torch.relu(tx) * tx, torch.from_numpy(y)).backward()
    nn.cross_entropy(nn.relu(dx) * dx, td.from_numpy(y)).backward()
    np.testing.assert_allclose(dx.grad._data, tx.grad.numpy(), rtol=1e-6, atol=1e-7)


def test_functional_names_match_torch() -> None:
    x = np.linspace(-2, 2, 6).reshape(2, 3)
    tx, dx = torch.tensor(x, requires_grad=True), td.tensor(x).requires_grad_()
    for name, args in (("gelu", ()), ("silu", ()), ("relu", ()), ("layer_norm", ([3],))):
        t_out = getattr(torch.nn.functional, name)(tx, *args)
        d_out = getattr(nn.functional, name)(dx, *args)
        np.testing.assert_allclose(np.asarray(d_out.detach()._data), t_out.detach().numpy())
        assert d_out.grad_fn.name() == type(t_out.grad_fn).__name__


@pytest.mark.parametrize("requires_grad", [True, False])
def test_parameters_survive_deepcopy_and_pickle_as_torch(requires_grad: bool) -> None:
    import copy
    import pickle

    def kept(lib: Any, param: Any) -> list[Any]:
        p = param(lib.tensor([1.0, -2.0]), requires_grad=requires_grad)
        same = copy.deepcopy([p, p])
        out = []
        for c in (copy.deepcopy(p), pickle.loads(pickle.dumps(p)), same[0]):
            out.append((type(c).__name__, c.requires_grad, c.is_leaf, c.tolist(), c is p))
        out.append(same[0] is same[1])
        return out

    assert kept(td, nn.Parameter) == kept(torch, torch.nn.Parameter)


def test_a_deepcopied_model_keeps_its_parameters_and_values() -> None:
    import copy

    _, dm = _models()
    twin = copy.deepcopy(dm)
    pairs = list(zip(dm.parameters(), twin.parameters(), strict=True))
    assert all(type(b) is nn.Parameter and b is not a for a, b in pairs)
    assert all(a.tolist() == b.tolist() for a, b in pairs)
