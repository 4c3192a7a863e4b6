"""The engine: runs a recorded graph backward (torch's Engine::execute, single-threaded).

Owns the traversal: dependency counting, the ready queue, gradient buffers, hooks,
capture of gradients for ``autograd.grad``, releasing saved values, and the user-facing
``backward`` / ``grad``. Must not know any operator's formula.

Note [Deterministic order]
Both passes are iterative (explicit stacks, a heap), so a graph of any depth runs without
recursion. Among ready nodes the one with the highest sequence number (created last) runs
first, AccumulateGrad nodes before everything (torch gives them the maximum sequence
number), so the order of node execution and hook calls is a pure function of the graph.
Since an AccumulateGrad that becomes ready would be the next node popped (ties in the order
they became ready), ``backward()`` runs one without node hooks at once instead of queueing it.

Note [Only what is needed]
With ``inputs`` (``autograd.grad`` or ``backward(inputs=...)``) a node runs only if some
target is reachable from it; a target's gradient is captured when its buffer is complete.
Every parent of a needed node is needed, so dependency counts over needed nodes are exact.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Any

import numpy as np

from tensordispatch.autograd.formulas import sum_to
from tensordispatch.autograd.graph import (
    AccumulateGrad,
    GraphRoot,
    Node,
    TensorMeta,
    gradient_edge,
)
from tensordispatch.dispatch.tls import local_state
from tensordispatch.ops.deferred import deferred_op as _deferred_op
from tensordispatch.tensor import Size, Tensor
from tensordispatch.tensor.tensor import new_cpu_tensor

__all__ = ["backward", "grad", "run_backward", "tensor_backward"]

_ones_like = _deferred_op(globals(), "_ones_like", "ones_like")
_ST = local_state()
_Edge = tuple[Node, int]


def _dependencies(root: Node) -> dict[Node, int]:
    """For every node reachable from root, how many edges point at it (one iterative DFS)."""
    deps: dict[Node, int] = {}
    _count_from([root], deps)
    return deps


def _count_from(stack: list[Node], deps: dict[Node, int]) -> None:
    """Add the edges reachable from the nodes on ``stack`` (already counted) to ``deps``.
    A node without edges (a leaf's AccumulateGrad) is counted but never stacked."""
    get = deps.get
    while stack:
        for nxt, _ in stack.pop().next_functions:
            if nxt is not None:
                count = get(nxt)
                if count is None:
                    deps[nxt] = 1
                    if nxt.next_functions:
                        stack.append(nxt)
                else:
                    deps[nxt] = count + 1


def _needed_nodes(root: Node, targets: set[Node]) -> set[Node]:
    """Nodes reachable from root from which a target is reachable (Note [Only what is
    needed])."""
    order: list[Node] = []
    seen = {root}
    stack = [root]
    while stack:
        node = stack.pop()
        order.append(node)
        for nxt, _ in node.next_functions:
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    needed: set[Node] = set()
    changed = True
    while changed:  # fixed point over a reverse DFS order (usually one or two sweeps)
        changed = False
        for node in reversed(order):
            if node in needed:
                continue
            if node in targets or any(n in needed for n, _ in node.next_functions):
                needed.add(node)
                changed = True
    return needed


def _validate(g: Tensor, meta: Any) -> Tensor:
    """Reduce a broadcast gradient to the input's shape and cast to its dtype."""
    if meta is None:
        return g
    shape, dtype = meta
    if g._shape != shape:
        g = sum_to(g, shape)
    if g.dtype != dtype:
        g = g.to(dtype) if hasattr(g, "to") else g
    return g


def run_backward(
    roots: Sequence[Tensor],
    grads: Sequence[Tensor],
    keep_graph: bool,
    create_graph: bool,
    inputs: Sequence[Tensor] | None = None,
    accumulate: bool = True,
) -> list[Tensor | None]:
    """Run the graph from ``roots`` with initial ``grads``; returns captured input grads."""
    edges = [gradient_edge(roots[0])] if len(roots) == 1 else [gradient_edge(t) for t in roots]
    st = _ST
    previous = st.grad_enabled
    st.grad_enabled = create_graph  # set_grad_enabled(create_graph), inlined
    try:
        if inputs is None and accumulate:
            _run_all(edges, grads, keep_graph)
            return []
        return _run_selected(GraphRoot(edges, list(grads)), keep_graph, inputs, accumulate)
    finally:
        st.grad_enabled = previous


def _run_all(
    edges: list[tuple[Node | None, int]], grads: Sequence[Tensor], keep_graph: bool
) -> None:
    """Every reachable node runs (``backward()`` without ``inputs``): the engine loop with
    nothing to filter or capture (Note [Deterministic order]). The roots' gradients are put
    in their nodes' buffers directly (what GraphRoot's apply would hand on)."""
    if len(edges) == 1:
        fn, nr = edges[0]
        if fn is not None:
            _run_root(fn, nr, grads[0], keep_graph)
        return
    deps: dict[Node, int] = {}
    buffers: dict[Node, list[Tensor | None]] = {}
    ready = _seed(edges, grads, deps, buffers)
    if ready:
        node = heapq.heappop(ready)[2]
        _loop(node, buffers.pop(node, [None]), deps, buffers, ready, len(ready) + 1, keep_graph)


def _run_root(fn: Node, nr: int, grad: Tensor, keep_graph: bool) -> None:
    """``loss.backward()``: one root, ready at once (nothing reaches it). Counts the
    dependencies (one iterative DFS, ``_count_from`` inlined; an edge without a node is
    counted under None, which nothing reads) and runs the loop from the root."""
    deps: dict[Any, int] = {fn: 0}
    get = deps.get
    stack = [fn]
    while stack:
        for nxt, _ in stack.pop().next_functions:
            count = get(nxt)
            if count is None:
                deps[nxt] = 1
                if nxt is not None and nxt.next_functions:
                    stack.append(nxt)
            else:
                deps[nxt] = count + 1
    grads_in: list[Tensor | None] = [grad]
    if nr:
        grads_in = [None] * (nr + 1)
        grads_in[nr] = grad
    _loop(fn, grads_in, deps, {}, [], 0, keep_graph)


def _loop(
    node: Node,
    grads_in: list[Tensor | None],
    deps: dict[Any, int],
    buffers: dict[Node, list[Tensor | None]],
    ready: list[tuple[int, int, Node]],
    tick: int,
    keep_graph: bool,
) -> None:
    """The engine loop of ``backward()`` from ``node`` (ready, with its gradients
    ``grads_in``). A node's gradients wait in ``buffers`` while more are to come; the one
    that completes them hands the list on directly. A leaf's AccumulateGrad without hooks
    runs as soon as it is ready, and a node made ready while the queue is empty, alone,
    runs next without going through the heap: either would be the next one popped (Note
    [Deterministic order])."""
    pop, push, take = heapq.heappop, heapq.heappush, buffers.pop
    while True:
        if node._pre_hooks:
            grads_in = _run_pre_hooks(node, grads_in)
        outputs = node.apply(grads_in)
        if node._post_hooks:
            for hook in node._post_hooks:
                hook(outputs, grads_in)
        if not keep_graph:
            node.release()
        alone: Node | None = None  # the one node made ready while the queue was empty
        alone_in: list[Tensor | None] = grads_in
        for (nxt, nr), g, meta in zip(node.next_functions, outputs, node._input_meta):
            if nxt is None:
                continue
            if g is not None and meta is not None and (g._shape != meta[0] or g.dtype != meta[1]):
                g = _validate(g, meta)
            count = deps[nxt] - 1
            if count:  # more gradients to come: into the buffer
                deps[nxt] = count
                if g is not None:
                    buf = buffers.get(nxt)
                    if buf is None:
                        _put(buffers, nxt, nr, g)
                    else:
                        _add_to(buf, nr, g)
                continue
            buf = take(nxt, None)
            if buf is None:  # its only gradient (or none at all)
                if nr == 0:
                    buf = [g]
                else:
                    buf = [None] * (nr + 1)
                    buf[nr] = g
            elif g is not None:
                _add_to(buf, nr, g)
            if type(nxt) is AccumulateGrad and not (nxt._pre_hooks or nxt._post_hooks):
                nxt.apply(buf)  # saves nothing: no release to do
            elif alone is None and not ready:
                alone, alone_in = nxt, buf
            else:
                if alone is not None:
                    buffers[alone] = alone_in
                    push(ready, (-alone._sequence_nr, tick, alone))
                    tick += 1
                    alone = None
                buffers[nxt] = buf
                push(ready, (-nxt._sequence_nr, tick, nxt))
                tick += 1
        if alone is not None:
            node, grads_in = alone, alone_in
        elif ready:
            node = pop(ready)[2]
            grads_in = take(node)
        else:
            return


def _add_to(buf: list[Tensor | None], nr: int, g: Tensor) -> None:
    """Add ``g`` to input ``nr`` of an open buffer."""
    if len(buf) <= nr:
        buf.extend([None] * (nr + 1 - len(buf)))
    old = buf[nr]
    buf[nr] = g if old is None else old + g


def _put(buffers: dict[Node, list[Tensor | None]], node: Node, nr: int, g: Tensor) -> None:
    """The first gradient for input ``nr`` of ``node`` opens its buffer."""
    if nr == 0:
        buffers[node] = [g]
    else:
        buf = buffers[node] = [None] * (nr + 1)
        buf[nr] = g


def _seed(
    edges: list[tuple[Node | None, int]],
    grads: Sequence[Tensor],
    deps: dict[Node, int],
    buffers: dict[Node, list[Tensor | None]],
) -> list[tuple[int, int, Node]]:
    """Count the dependencies of the graph under several roots' ``edges``, put the roots'
    gradients in their buffers, and return the ready queue of the roots that became ready
    (one root: ``_run_root``)."""
    stack = []
    for fn, _ in edges:
        if fn is not None:
            if fn in deps:
                deps[fn] += 1
            else:
                deps[fn] = 1
                stack.append(fn)
    _count_from(stack, deps)
    ready: list[tuple[int, int, Node]] = []
    for (fn, nr), g in zip(edges, grads):
        if fn is None:
            continue
        buf = buffers.get(fn)
        if buf is None:
            buf = buffers[fn] = [None] * (nr + 1)
        elif len(buf) <= nr:
            buf.extend([None] * (nr + 1 - len(buf)))
        old = buf[nr]
        buf[nr] = g if old is None else old + g
        count = deps[fn] - 1
        deps[fn] = count
        if count == 0:
            heapq.heappush(ready, (-fn._sequence_nr, len(ready), fn))
    return ready


def _run_selected(
    root: Node, keep_graph: bool, inputs: Sequence[Tensor] | None, accumulate: bool
) -> list[Tensor | None]:
    """The engine loop with capture of ``inputs``' gradients and only the needed nodes
    (Note [Only what is needed])."""
    capture: dict[_Edge, int] = {}
    targets: set[Node] | None = None
    if inputs is not None:
        targets = set()
        for i, t in enumerate(inputs):
            edge = gradient_edge(t)
            if edge[0] is not None:
                capture[(edge[0], edge[1])] = i
                targets.add(edge[0])
    if targets is None:
        deps = _dependencies(root)
        needed: Any = deps  # every reachable node runs
    else:
        needed = _needed_nodes(root, targets)
        deps = {}
        for node in needed:
            for nxt, _ in node.next_functions:
                if nxt is not None and nxt in needed:
                    deps[nxt] = deps.get(nxt, 0) + 1
    captured: list[Tensor | None] = [None] * (len(inputs) if inputs is not None else 0)
    buffers: dict[Node, list[Tensor | None]] = {}
    ready: list[tuple[int, int, Node]] = [(0, 0, root)]
    tick = 1
    pop, take = heapq.heappop, buffers.pop
    while ready:
        node = pop(ready)[2]
        grads_in = take(node, _EMPTY)
        if node._pre_hooks:
            grads_in = _run_pre_hooks(node, grads_in)
        if capture:
            _capture(node, grads_in, capture, captured, inputs)
        if isinstance(node, AccumulateGrad) or (
            targets is not None and not any(n in needed for n, _ in node.next_functions)
        ):
            continue  # a target only: captured, not run
        outputs = node.apply(grads_in)
        if node._post_hooks:
            for hook in node._post_hooks:
                hook(outputs, grads_in)
        if not keep_graph:
            node.release()
        tick = _propagate(node, outputs, needed, deps, buffers, ready, tick)
    return captured


_EMPTY: list[Any] = []


def _run_pre_hooks(node: Node, grads_in: list[Tensor | None]) -> list[Tensor | None]:
    for hook in node._pre_hooks:
        out = hook(grads_in)
        if out is not None:
            grads_in = list(out)
    return grads_in


def _propagate(
    node: Node,
    outputs: tuple[Tensor | None, ...],
    needed: Any,
    deps: dict[Node, int],
    buffers: dict[Node, list[Tensor | None]],
    ready: list[tuple[int, int, Node]],
    tick: int,
) -> int:
    """Add each output gradient to its next node's buffer; queue nodes that become ready."""
    for (nxt, nr), g, meta in zip(node.next_functions, outputs, node._input_meta, strict=False):
        if nxt is None or nxt not in needed:
            continue
        if g is not None:
            if meta is not None and (g._shape != meta[0] or g.dtype != meta[1]):
                g = _validate(g, meta)
            buf = buffers.get(nxt)
            if buf is None:
                buf = buffers[nxt] = [None] * (nr + 1)
            elif len(buf) <= nr:
                buf.extend([None] * (nr + 1 - len(buf)))
            old = buf[nr]
            buf[nr] = g if old is None else old + g
        count = deps[nxt] - 1
        deps[nxt] = count
        if count == 0:
            heapq.heappush(ready, (-nxt._sequence_nr, tick, nxt))
            tick += 1
    return tick


def _capture(
    node: Node,
    grads_in: list[Tensor | None],
    capture: dict[_Edge, int],
    captured: list[Tensor | None],
    inputs: Sequence[Tensor] | None,
) -> None:
    for nr, g in enumerate(grads_in if grads_in else [None]):
        i = capture.get((node, nr))
        if i is None or g is None:
            continue
        if isinstance(node, AccumulateGrad) and inputs is not None:
            m = inputs[i]._autograd_meta
            for hook in m.hooks if isinstance(m, TensorMeta) else ():
                out = hook(g)
                if out is not None:
                    g = out
        captured[i] = g


def _as_list(x: Any) -> list[Any]:
    if x is None:
        return []
    if isinstance(x, Tensor):
        return [x]
    return list(x)


_ONE: dict[Any, Any] = {}  # NumPy dtype -> a 0-dim array holding 1, copied per seed


def _ones(t: Tensor) -> Tensor:
    """The implicit seed gradient (ones_like), built directly for NumPy-backed tensors."""
    data = t._data
    if type(data) is np.ndarray:
        shape = t._shape
        if not shape:  # a 0-dim loss: a copy of a kept 0-dim one (np.ones is Python code)
            one = _ONE.get(data.dtype)
            if one is None:
                one = _ONE[data.dtype] = np.array(1, data.dtype)
            return new_cpu_tensor(one.copy(), (), (), t.dtype)
        return Tensor._wrap_numpy(np.ones(shape, data.dtype), t.dtype)
    result: Tensor = _ones_like(t)
    return result


def _real_only(out: Tensor) -> str:
    """torch's message for ``backward()`` without a gradient on a complex output."""
    return f"grad can be implicitly created only for real scalar outputs but got {out.dtype!r}"


def _make_grads(outputs: list[Tensor], grads: list[Any]) -> list[Tensor]:
    result = []
    if not grads:
        grads = [None] * len(outputs)
    for i, (out, g) in enumerate(zip(outputs, grads, strict=True)):
        if g is None:
            if out.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if out.dtype.is_complex:
                raise RuntimeError(_real_only(out))
            g = _ones(out)
        elif isinstance(g, Tensor) and g._shape != out._shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {Size(g._shape)!r} and "
                f"output[{i}] has a shape of {Size(out._shape)!r}."
            )
        result.append(g)
    return result


def _check_roots(outputs: list[Tensor]) -> None:
    for i, t in enumerate(outputs):
        m = t._autograd_meta
        if m is None or not m.requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )


def backward(
    tensors: Any,
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Any = None,
) -> None:
    """Accumulate d(tensors)/d(leaves) into the leaves' ``.grad`` (torch.autograd.backward).

    >>> import tensordispatch as td
    >>> x = td.tensor([1.0, 2.0]).requires_grad_()
    >>> backward((x * x).sum())
    >>> x.grad
    tensor([2., 4.])
    """
    if grad_tensors is None and inputs is None and isinstance(tensors, Tensor):
        tensor_backward(tensors, None, retain_graph, create_graph)
        return
    keep = create_graph if retain_graph is None else retain_graph
    outputs = _as_list(tensors)
    _check_roots(outputs)
    grads = _make_grads(outputs, _as_list(grad_tensors))
    ins = _as_list(inputs) if inputs is not None else None
    if ins is None:
        run_backward(outputs, grads, keep, create_graph)
        return
    captured = run_backward(outputs, grads, keep, create_graph, ins)
    for t, g in zip(ins, captured, strict=True):
        if g is not None:
            AccumulateGrad(t).apply([g])


def tensor_backward(
    self: Tensor,
    gradient: Tensor | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Any = None,
) -> None:
    """``Tensor.backward``: accumulate the gradient of this tensor into the graph's leaves
    (installed on Tensor by tensor_methods.py). ``loss.backward()`` on one scalar root runs
    here directly (``_check_roots``, ``_make_grads`` and ``run_backward`` inlined).

    >>> import tensordispatch as td
    >>> x = td.tensor([1.0, 2.0]).requires_grad_()
    >>> tensor_backward((x * x).sum())
    >>> x.grad
    tensor([2., 4.])
    """
    if gradient is not None or inputs is not None:
        backward(self, gradient, retain_graph, create_graph, inputs)
        return
    m = self._autograd_meta
    if m is None or not m.requires_grad:
        _check_roots([self])
    if self._shape and self.numel() != 1:  # a 0-dim loss has one element
        raise RuntimeError("grad can be implicitly created only for scalar outputs")
    if self.dtype.is_complex:
        raise RuntimeError(_real_only(self))
    fn, nr = gradient_edge(self)
    if fn is None:
        return
    seed = _ones(self)
    st = _ST
    previous = st.grad_enabled
    st.grad_enabled = create_graph  # set_grad_enabled(create_graph), inlined
    try:
        _run_root(fn, nr, seed, create_graph if retain_graph is None else retain_graph)
    finally:
        st.grad_enabled = previous


def grad(
    outputs: Any,
    inputs: Any,
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple[Tensor | None, ...]:
    """Gradients of ``outputs`` with respect to ``inputs`` (torch.autograd.grad).

    >>> import tensordispatch as td
    >>> x = td.tensor([3.0]).requires_grad_()
    >>> (g,) = grad((x * x * x).sum(), x, create_graph=True)
    >>> g, grad(g.sum(), x)[0]
    (tensor([27.], grad_fn=<AddBackward0>), tensor([18.]))
    """
    outs = _as_list(outputs)
    ins = _as_list(inputs)
    _check_roots(outs)
    for t in ins:
        m = t._autograd_meta
        if m is None or not m.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    grads = _make_grads(outs, _as_list(grad_outputs))
    keep = create_graph if retain_graph is None else retain_graph
    captured = run_backward(outs, grads, keep, create_graph, ins, accumulate=False)
    if allow_unused is None:
        allow_unused = materialize_grads
    for i, g in enumerate(captured):
        if g is None and not allow_unused:
            raise RuntimeError(
                f"The differentiated Tensor at index {i} appears to not have been used in the "
                "graph. Set allow_unused=True if this is the desired behavior."
            )
    if materialize_grads:
        from tensordispatch.autograd.formulas import zeros_like

        captured = [zeros_like(t) if g is None else g for t, g in zip(ins, captured, strict=True)]
    return tuple(captured)
