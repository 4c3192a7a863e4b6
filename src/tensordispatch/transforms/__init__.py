"""Function transforms stacked as dispatch keys above autograd and the backends.

`functionalize/` (the Functionalize key: functional wrappers, view replay, input-mutation
write-back) and `vmap/` (the FuncTorchBatched key: batched wrappers, batching rules, the
boxed for-loop fallback, and the `grad`/`vjp`/`jacrev` transforms). `tensordispatch.func`
gathers their public names under torch.func's spelling.
"""
