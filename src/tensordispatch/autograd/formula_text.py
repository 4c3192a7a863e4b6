"""The text of a backward formula: torch's derivatives.yaml C++ expressions read as Python.

Owns ``translate`` (one formula string -> Python expression text), the rewrites it applies
(``REWRITES``) and ``saved_names`` (which inputs and attributes a formula reads). Must not
compile formulas or know their helpers (formulas.py does both).

Note [Formula translation]
torch's formulas are C++ expressions whose Python reading is almost the same text. The
rewrites, applied in order (``REWRITES``), are: drop ``at::`` and ``_symint``; read
``x.sym_sizes()`` / ``x.sym_numel()`` / ``x.sym_strides()`` / ``x.scalar_type()`` /
``x.layout()`` as saved attributes ``x_sym_sizes`` ... (so only the attribute is saved, not
the tensor, as torch's codegen does); ``<receiver>.conj()`` -> ``conj(<receiver>)`` (a
new tensor for complex dtypes: we have no conjugate views; Note [Complex gradients]), drop
``.resolve_conj()``; ``x.sgn()`` -> ``sgn(x)``, ``x.ger(y)`` -> ``ger(x, y)``. The result is
compiled once into ``def formula(<names>): return <expr>``. The names a formula reads
decide what the node saves. A formula whose translation does not compile, or calls a helper
that does not exist, fails at import with the YAML entry named.
"""

from __future__ import annotations

import itertools
import re

__all__ = ["REWRITES", "saved_names", "translate"]

_ATTRS = ("sym_sizes", "sym_numel", "sym_strides", "scalar_type", "layout", "options")
REWRITES: tuple[tuple[str, str], ...] = (
    (r"/\*(\w+)=\*/", r"\1="),
    (r"\bat::", ""),
    (r"\bGradMode::is_enabled\(\)", "is_grad_enabled()"),
    (r"\[\]\(c10::SymInt (\w+)\)\{return ([^;]*);\}", r"lambda \1: \2"),
    (r"std::tuple<[^>]*>\(\)", "None"),
    (r"_symint\(", "("),
    (r"->", "."),
    (r"\bgrad\.scalar_type\(\)", "grad.dtype"),
    (r"\bgrad\.options\(\)", "options(grad)"),
    (r"\b(\w+)\.(" + "|".join(_ATTRS) + r")\(\)", r"\1_\2"),
    (r"\b(\w+)\.sym_size\((-?\d+)\)", r"\1_sym_sizes[\2]"),
    (r"\bTensorGeometry\((\w+)\)", r"\1_geometry"),
    (r"\bto_args_sizes\((\w+)\)", r"\1_args_sizes"),
    (r"\bto_args_scalartypes\((\w+)\)", r"\1_args_scalartypes"),
    (r"\.resolve_conj\(\)", ""),
    (r"\bgrad\.expand\(", "expand_grad(grad, "),
    (r"\b(\w+)\.sgn\(\)", r"sgn(\1)"),
    (r"\b(\w+)\.ger\(", r"ger(\1, "),
    (r"\b(\w+)\.(new_zeros|index)\(", r"\2(\1, "),
    (r"\b(\w+)\.slice\(", r"slice_tensor(\1, "),
    (r"\b(\w+)\.isComplex\(\)", r"isinstance(\1, complex)"),
    (r"\b(\w+)\.toDouble\(\)", r"float(\1)"),
    (r"\b(\w+)\.toComplexDouble\(\)", r"complex(\1)"),
    (r"\bconj\((\w+)\)\.toComplexDouble\(\)", r"conj(complex(\1))"),
    (r"\b(\w+)\.has_value\(\)", r"(\1 is not None)"),
    (r"\b(\w+)\.value\(\)", r"\1"),
    (r"\b(\w+)\.defined\(\)", r"(\1 is not None)"),
    (r"\|\|", " or "),
    (r"&&", " and "),
    (r"!(?!=)", " not "),
    (r"\*(\w+)\b(?=\))", r"\1"),
    (r"\btrue\b", "True"),
    (r"\bfalse\b", "False"),
)
_OPEN = {"(": ")", "[": "]", "{": "}"}
_KEYWORDS = frozenset({"if", "else", "not", "and", "or", "lambda", "is", "in"})


def _close(s: str, i: int) -> int:
    """The index of the bracket closing the one at ``s[i]`` (strings skipped)."""
    depth = 0
    j = i
    while j < len(s):
        c = s[j]
        if c in "\"'":
            j = s.index(c, j + 1)
        elif c in _OPEN:
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return j
        j += 1
    raise ValueError(f"unbalanced brackets in {s!r}")


def _top_level(s: str, chars: str) -> list[int]:
    """Positions of ``chars`` in ``s`` outside brackets and strings."""
    out, j = [], 0
    while j < len(s):
        c = s[j]
        if c in "\"'":
            j = s.index(c, j + 1)
        elif c in _OPEN:
            j = _close(s, j)
        elif c in chars:
            out.append(j)
        j += 1
    return out


def _ternary(s: str) -> str:
    """C++ ``c ? a : b`` -> Python ``(a) if (c) else (b)``, at every nesting level; a braced
    list ``{ a, b }`` becomes ``[a, b]``."""
    out, j = [], 0
    while j < len(s):
        c = s[j]
        if c in _OPEN:
            k = _close(s, j)
            inner = s[j + 1 : k]
            cuts = [-1, *_top_level(inner, ","), len(inner)]
            parts = [_ternary(inner[a + 1 : b]) for a, b in itertools.pairwise(cuts)]
            opener, closer = ("[", "]") if c == "{" else (c, _OPEN[c])
            out.append(opener + ",".join(parts) + closer)
            j = k + 1
        elif c in "\"'":
            k = s.index(c, j + 1)
            out.append(s[j : k + 1])
            j = k + 1
        else:
            out.append(c)
            j += 1
    flat = "".join(out)
    marks = _top_level(flat, "?:")
    if not marks or flat[marks[0]] != "?":
        return flat
    depth = 0
    for m in marks:
        depth += 1 if flat[m] == "?" else -1
        if depth == 0:
            q = marks[0]
            cond, then, other = flat[:q], flat[q + 1 : m], flat[m + 1 :]
            return f"({then.strip()}) if ({cond.strip()}) else ({_ternary(other).strip()})"
    raise ValueError(f"a '?' without its ':' in {s!r}")


def translate(formula: str) -> str:
    """The Python text of a torch formula (Note [Formula translation]).

    >>> translate("mm_mat1_backward(grad, mat2, self.sym_sizes(), self.sym_strides(), self.layout(), 1)")
    'mm_mat1_backward(grad, mat2, self_sym_sizes, self_sym_strides, self_layout, 1)'
    >>> translate("grad * -self.sin().conj()")
    'grad * -conj(self.sin())'
    """
    formula = _conj_calls(formula)
    for pattern, repl in REWRITES:
        formula = re.sub(pattern, repl, formula)
    return _ternary(formula).strip()


def _opening(s: str, j: int) -> int:
    """The index of the bracket opening the one closing at ``s[j]``."""
    depth = 0
    for k in range(j, -1, -1):
        if s[k] in ")]}":
            depth += 1
        elif s[k] in "([{":
            depth -= 1
            if depth == 0:
                return k
    raise ValueError(f"unbalanced brackets in {s!r}")


def _receiver_start(s: str, end: int) -> int:
    """Where the postfix expression ending at ``s[end - 1]`` starts (``a.b(c)[d]``)."""
    j = end
    while j > 0:
        if s[j - 1] in ")]":
            j = _opening(s, j - 1)
            if j > 0 and (s[j - 1].isalnum() or s[j - 1] in "_)]"):
                continue  # a call or an index: its callee or indexed value precedes
        elif s[j - 1].isalnum() or s[j - 1] in "_:":
            while j > 0 and (s[j - 1].isalnum() or s[j - 1] in "_:"):
                j -= 1
        else:
            break
        if j > 0 and s[j - 1] == ".":
            j -= 1
            continue
        break
    return j


def _conj_calls(formula: str) -> str:
    """``<receiver>.conj()`` -> ``conj(<receiver>)`` (Note [Complex gradients]).

    >>> _conj_calls("grad * (value / tensor2).conj() + mat.t().conj().mv(grad)")
    'grad * conj((value / tensor2)) + conj(mat.t()).mv(grad)'
    """
    marker = ".conj()"
    while marker in formula:
        end = formula.index(marker)
        start = _receiver_start(formula, end)
        receiver = formula[start:end]
        formula = f"{formula[:start]}conj({receiver}){formula[end + len(marker) :]}"
    return formula


def saved_names(python_formula: str, candidates: set[str]) -> list[str]:
    """The names among ``candidates`` (inputs, attributes, ``result``) a formula reads.

    >>> saved_names("grad * other", {"self", "other", "grad"})
    ['grad', 'other']
    """
    words = set(re.findall(r"\b[A-Za-z_]\w*\b", python_formula))
    return sorted(words & candidates)
