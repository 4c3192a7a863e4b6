"""Error messages of the F2 operators (reductions, linear algebra, nn), golden: each case
names the exception type and first line we raise, and checks that torch 2.13 raises the same
(so the golden text is torch's, not a capture of ours)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

import tests.ops.conftest as _c

TD = _c.TD

CASES: list[tuple[str, Callable[[Any], Any], type[Exception], str]] = [
    (
        "amax_empty_dim",
        lambda L: L.amax(L.ones(0, 3), 0),
        IndexError,
        "amax(): Expected reduction dim 0 to have non-zero size.",
    ),
    (
        "amax_no_dim",
        lambda L: L.amax(L.ones(0, 3)),
        RuntimeError,
        "amax(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument.",
    ),
    (
        "amax_out_dtype",
        lambda L: L.amax(L.ones(2, 3), 0, out=L.empty(0, dtype=L.float64)),
        RuntimeError,
        "Expected the dtype for input and out to match, but got Float for input's dtype and Double for out's dtype.",
    ),
    (
        "max_empty",
        lambda L: L.max(L.ones(0, 3)),
        RuntimeError,
        "max(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument.",
    ),
    (
        "max_complex",
        lambda L: L.max(L.ones(2, dtype=L.complex64), 0),
        RuntimeError,
        "max(): does not support complex input",
    ),
    (
        "argmax_empty",
        lambda L: L.argmax(L.ones(0, 3)),
        IndexError,
        "argmax(): Expected reduction dim to be specified for input.numel() == 0.",
    ),
    (
        "var_int",
        lambda L: L.var(L.ones(3, dtype=L.int64)),
        RuntimeError,
        "std and var only support floating point and complex dtypes",
    ),
    (
        "var_out_int",
        lambda L: L.var(L.ones(3), 0, out=L.empty(0, dtype=L.int64)),
        RuntimeError,
        "result type Float can't be cast to the desired output type Long",
    ),
    (
        "norm_int",
        lambda L: L.ops.aten.norm.Scalar(L.ones(3, dtype=L.int64)),
        RuntimeError,
        "norm(): input dtype should be either floating point or complex. Got Long instead.",
    ),
    (
        "norm_dtype",
        lambda L: L.ops.aten.norm.ScalarOpt_dim_dtype(L.ones(3), 2, [0], False, dtype=L.int64),
        RuntimeError,
        "norm(): the desired output dtype should be either floating point or complex. Got Long instead.",
    ),
    (
        "logsumexp_out",
        lambda L: L.logsumexp(L.ones(2, 3), 1, out=L.empty(0, dtype=L.int64)),
        RuntimeError,
        "logsumexp(): Expected floating point type for result tensor, but got: Long",
    ),
    (
        "softmax_half",
        lambda L: L.ops.aten._softmax(L.ones(3), 0, True),
        RuntimeError,
        "softmax with half to float conversion is not supported on CPU",
    ),
    (
        "softmax_int",
        lambda L: L.ops.aten._softmax(L.ones(3, dtype=L.int64), 0, False),
        NotImplementedError,
        "\"softmax_lastdim_kernel_impl\" not implemented for 'Long'",
    ),
    (
        "all_out",
        lambda L: L.all(L.ones(2, 3), 0, out=L.empty(0)),
        RuntimeError,
        "all only supports bool tensor for result, got: Float",
    ),
    (
        "dup_dim",
        lambda L: L.amax(L.ones(2, 3), (0, 0)),
        RuntimeError,
        "dim 0 appears multiple times in the list of dims",
    ),
    (
        "baddbmm_sizes",
        lambda L: L.baddbmm(L.ones(3), L.ones(2, 3, 4), L.ones(2, 5, 3)),
        RuntimeError,
        "Expected size for first two dimensions of batch2 tensor to be: [2, 4] but got: [2, 5].",
    ),
    (
        "baddbmm_dtype",
        lambda L: L.baddbmm(L.ones(3, dtype=L.int64), L.ones(2, 3, 4), L.ones(2, 4, 3)),
        RuntimeError,
        "Input dtypes must be the same, got: input long int, batch1: float, batch2: float",
    ),
    (
        "addmv_size",
        lambda L: L.addmv(L.ones(2), L.ones(2, 3), L.ones(4)),
        RuntimeError,
        "size mismatch, got input (2), mat (2x3), vec (4)",
    ),
    (
        "addmv_dtype",
        lambda L: L.addmv(L.ones(2), L.ones(2, 3), L.ones(3, dtype=L.float64)),
        RuntimeError,
        "addmv input tensors must have the same dtype, but got Float, Float, and Double",
    ),
    (
        "addbmm_sizes",
        lambda L: L.addbmm(L.ones(3, 3), L.ones(2, 3, 4), L.ones(2, 5, 3)),
        RuntimeError,
        "Incompatible matrix sizes for bmm (3x4 and 5x3)",
    ),
    (
        "outer_dim",
        lambda L: L.outer(L.ones(2, 2), L.ones(2)),
        RuntimeError,
        "outer: Expected 1-D argument self, but got 2-D",
    ),
    (
        "nll_target_dtype",
        lambda L: L.ops.aten.nll_loss(L.ones(2, 3), L.ones(2, dtype=L.int32)),
        RuntimeError,
        "expected target dtype to be Long or Byte, but got Int",
    ),
    (
        "nll_bounds",
        lambda L: L.ops.aten.nll_loss(L.ones(2, 3), L.tensor([0, 5])),
        IndexError,
        "Target 5 is out of bounds.",
    ),
    (
        "nll_size",
        lambda L: L.ops.aten.nll_loss(L.ones(2, 3), L.tensor([0, 1, 1])),
        RuntimeError,
        "size mismatch (got input: [2, 3], target: [3])",
    ),
    (
        "nll_weight",
        lambda L: L.ops.aten.nll_loss(L.ones(2, 3), L.tensor([0, 1]), L.ones(2)),
        RuntimeError,
        "weight tensor should be defined either for all 3 classes or no classes but got weight tensor of shape: [2]",
    ),
    (
        "nll_nd_batch",
        lambda L: L.ops.aten.nll_loss_nd(L.ones(2, 3, 4), L.zeros(3, 4, dtype=L.int64)),
        ValueError,
        "Expected input batch_size (2) to match target batch_size (3).",
    ),
    (
        "nll_nd_target",
        lambda L: L.ops.aten.nll_loss_nd(L.ones(2, 3, 4), L.zeros(2, 5, dtype=L.int64)),
        RuntimeError,
        "Expected target size [2, 4], got [2, 5]",
    ),
    (
        "nll2d_dim",
        lambda L: L.ops.aten.nll_loss2d(L.ones(2, 3, 4), L.zeros(2, 4, 5, dtype=L.int64)),
        RuntimeError,
        "only batches of spatial inputs supported (4D tensors), but got input of dimension: 3",
    ),
    (
        "nll2d_size",
        lambda L: L.ops.aten.nll_loss2d(L.ones(2, 3, 4, 5), L.zeros(2, 4, 6, dtype=L.int64)),
        RuntimeError,
        "size mismatch (got input: [2, 3, 4, 5] , target: [2, 4, 6]",
    ),
    (
        "ce_prob_dtype",
        lambda L: L.ops.aten.cross_entropy_loss(L.ones(2, 3), L.ones(2, 3, dtype=L.int64)),
        RuntimeError,
        "Expected floating point type for target with class probabilities, got Long",
    ),
    (
        "ce_smoothing",
        lambda L: L.ops.aten.cross_entropy_loss(L.ones(2, 3), L.tensor([0, 1]), None, 1, -100, 1.5),
        RuntimeError,
        "label_smoothing must be between 0.0 and 1.0. Got: 1.5",
    ),
    (
        "ce_prob_ignore",
        lambda L: L.ops.aten.cross_entropy_loss(L.ones(2, 3), L.ones(2, 3), None, 1, 0),
        RuntimeError,
        "ignore_index is not supported for floating point target",
    ),
    (
        "ln_empty",
        lambda L: L.ops.aten.layer_norm(L.ones(2, 3), []),
        RuntimeError,
        "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one element, but got normalized_shape = []",
    ),
    (
        "ln_shape",
        lambda L: L.ops.aten.layer_norm(L.ones(2, 3), [2]),
        RuntimeError,
        "Given normalized_shape=[2], expected input with shape [*, 2], but got input of size[2, 3]",
    ),
    (
        "ln_weight",
        lambda L: L.ops.aten.layer_norm(L.ones(2, 3), [3], L.ones(2)),
        RuntimeError,
        "Expected weight to be of same shape as normalized_shape, but got weight of shape [2] and normalized_shape = [3]",
    ),
    (
        "emb_2d",
        lambda L: L.ops.aten.embedding(L.ones(3), L.tensor([0])),
        RuntimeError,
        "'weight' must be 2-D",
    ),
    (
        "emb_dtype",
        lambda L: L.ops.aten.embedding(L.ones(3, 2), L.ones(2)),
        RuntimeError,
        "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got torch.FloatTensor instead (while checking arguments for embedding)",
    ),
    (
        "onehot_dtype",
        lambda L: L.ops.aten.one_hot(L.ones(2, dtype=L.int32), 3),
        RuntimeError,
        "one_hot is only applicable to index tensor of type LongTensor.",
    ),
    (
        "onehot_neg",
        lambda L: L.ops.aten.one_hot(L.tensor([-1]), 3),
        RuntimeError,
        "Class values must be non-negative.",
    ),
    (
        "onehot_big",
        lambda L: L.ops.aten.one_hot(L.tensor([3]), 3),
        RuntimeError,
        "Class values must be smaller than num_classes.",
    ),
    (
        "onehot_empty",
        lambda L: L.ops.aten.one_hot(L.zeros(0, dtype=L.int64)),
        RuntimeError,
        "Can not infer total number of classes from empty tensor.",
    ),
    (
        "conv_bias",
        lambda L: L.conv2d(L.ones(1, 3, 5, 5), L.ones(4, 3, 3, 3), L.ones(5)),
        RuntimeError,
        "Given weight of size [4, 3, 3, 3], expected bias to be 1-dimensional with 4 elements, but got bias of size [5] instead",
    ),
    (
        "conv_groups",
        lambda L: L.conv2d(L.ones(1, 2, 5, 5), L.ones(4, 3, 3, 3)),
        RuntimeError,
        "Given groups=1, weight of size [4, 3, 3, 3], expected input[1, 2, 5, 5] to have 3 channels, but got 2 channels instead",
    ),
    (
        "conv_dims",
        lambda L: L.conv2d(L.ones(5, 5), L.ones(4, 3, 3, 3)),
        RuntimeError,
        "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [5, 5]",
    ),
    (
        "conv_stride",
        lambda L: L.conv2d(L.ones(1, 3, 5, 5), L.ones(4, 3, 3, 3), stride=0),
        RuntimeError,
        "non-positive stride is not supported",
    ),
    (
        "conv_pad",
        lambda L: L.conv2d(L.ones(1, 3, 5, 5), L.ones(4, 3, 3, 3), padding=-1),
        RuntimeError,
        "negative padding is not supported",
    ),
    (
        "conv_dil",
        lambda L: L.ops.aten.convolution(
            L.ones(1, 3, 5, 5), L.ones(4, 3, 3, 3), None, [1, 1], [0, 0], [0, 1], False, [0, 0], 1
        ),
        RuntimeError,
        "dilation should be greater than zero, but got [0, 1]",
    ),
    (
        "conv_kernel",
        lambda L: L.conv2d(L.ones(1, 3, 2, 5), L.ones(4, 3, 3, 3)),
        RuntimeError,
        "Calculated padded input size per channel: (2 x 5). Kernel size: (3 x 3). Kernel size can't be greater than actual input size",
    ),
    (
        "conv_wdims",
        lambda L: L.ops.aten.convolution(
            L.ones(3, 5, 5), L.ones(4, 3, 3, 3), None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1
        ),
        RuntimeError,
        "Expected 4-dimensional input for 4-dimensional weight [4, 3, 3, 3], but got 3-dimensional input of size [3, 5, 5] instead",
    ),
    (
        "conv_gdiv",
        lambda L: L.conv2d(L.ones(1, 4, 5, 5), L.ones(3, 2, 3, 3), groups=2),
        RuntimeError,
        "Given groups=2, expected weight to be divisible by 2 at dimension 0, but got weight of size [[3, 2, 3, 3]] instead",
    ),
    (
        "conv_dtype",
        lambda L: L.conv2d(L.ones(1, 3, 5, 5), L.ones(4, 3, 3, 3, dtype=L.float64)),
        RuntimeError,
        "expected scalar type Float but found Double",
    ),
    (
        "conv_bias_dtype",
        lambda L: L.conv2d(L.ones(1, 3, 5, 5), L.ones(4, 3, 3, 3), L.ones(4, dtype=L.float64)),
        RuntimeError,
        "Input type (float) and bias type (double) should be the same",
    ),
    (
        "conv_same_stride",
        lambda L: L.conv2d(L.ones(1, 3, 5, 5), L.ones(4, 3, 3, 3), padding="same", stride=2),
        RuntimeError,
        "padding='same' is not supported for strided convolutions",
    ),
    (
        "conv_pad_str",
        lambda L: L.conv2d(L.ones(1, 3, 5, 5), L.ones(4, 3, 3, 3), padding="full"),
        RuntimeError,
        "Invalid padding string: 'full'",
    ),
    (
        "dropout_p",
        lambda L: L.ops.aten.dropout(L.ones(3), 1.5, True),
        RuntimeError,
        "dropout probability has to be between 0 and 1, but got 1.5",
    ),
]


def _raised(fn: Callable[[Any], Any], lib: Any) -> BaseException:
    try:
        fn(lib)
    except Exception as e:  # noqa: BLE001 - the exception is what is compared
        return e
    raise AssertionError("no exception raised")


@pytest.mark.parametrize(
    ("fn", "kind", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_message(fn: Callable[[Any], Any], kind: type[Exception], message: str) -> None:
    ours = _raised(fn, TD)
    assert type(ours) is kind and str(ours).split("\n")[0] == message


@pytest.mark.parametrize(
    ("fn", "kind", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_torch_says_the_same(fn: Callable[[Any], Any], kind: type[Exception], message: str) -> None:
    theirs = _raised(fn, torch)
    assert type(theirs) is kind and str(theirs).split("\n")[0] == message
