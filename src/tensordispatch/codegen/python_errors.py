"""The error-path lines of the generated Python bindings (codegen/gen_python.py emits them):
what a binding does once a call has failed or was given the wrong number of arguments, worded
at run time by ops/binding_errors.py as torch's Python arg parser words it.

Note [Functions count their arguments]
A binding's required parameters default to REQUIRED (Note [Missing arguments] in
ops/binding_errors.py), so that a missing one reaches the operator's entry, whose check rejects
it and whose except clause words torch's text. With defaults Python would word too many
arguments itself ("add() takes from 0 to 2 positional arguments but 3 were given", torch:
"takes 2"), so the binding also takes ``*_td_more`` and words that error from its frame
(``extra_arguments``): one test of an empty tuple on the success path (in-process A/B of the
two bindings, loaded machine: add, neg, full, ones_like, empty_strided within -8..+11 ns of
~1-2 us). Only bindings with keyword-only parameters do so. Without them CPython specializes
the call of a plain function (defaults included), which a ``*`` parameter loses (whole
calls, t: 1186 -> 1226 ns, transpose 1092 -> 1115), and defaults alone would turn Python's
too-many text into "takes from 0 to 1": those 61 functions (t, transpose, select, unsqueeze,
the in-place abs_ ...) are left as they were, with Python's texts (equal to torch's for too
many arguments, not for missing ones); Tensor methods without keyword-only parameters keep
REQUIRED defaults and Python's too-many text (torch's differs: it counts no self, and its
methods without parameters say "Tensor.abs() takes no arguments (1 given)", which no Python
function can). An unknown keyword is still Python's text, equal to torch's for a name with
one signature only (77 of 204 functions, 15 of 203 methods): catching it would need
``**kwargs``, a dict made on every call (~20 ns).

Note [Size lists given as varargs]
A binding taking a lone int list as varargs (``zeros(2, 3)``, ``t.flip(0)``) turns a single
non-int argument into the list (``zeros((2, 3))``). torch rejects no argument at all
(``t.flip()``: missing "dims") and a single object that is no list (``zeros(torch.int64)``),
and takes a single integer-like (``zeros(np.int64(2))``). The binding makes a list of REQUIRED
for an empty varargs tuple, which fails as a non-iterable does; its ``except TypeError``
clause, reached only while the list is unset, lets ``varargs_list`` word the error from the
untouched ``_td_args`` or convert an integer-like, and calls the binding again with the list.
"""

from __future__ import annotations

__all__ = ["extra_arguments_line", "number_input_retry", "varargs_except", "varargs_lines"]


def extra_arguments_line(name: str, method: bool) -> str:
    """The first line of a binding taking ``*_td_more`` (Note [Functions count their
    arguments]).

    >>> extra_arguments_line("add", False)
    "    if _td_more: raise _extra_arguments('add', False)"
    """
    return f"    if _td_more: raise _extra_arguments({name!r}, {method})"


def varargs_lines(name: str, param: str) -> list[str]:
    r"""Lines turning ``*_td_args`` into the list parameter ``param`` (Note [Size lists given
    as varargs]).

    >>> print("\n".join(varargs_lines("flip", "dims")))
        if dims is _NO:
            if len(_td_args) == 1 and not isinstance(_td_args[0], int):
                dims = list(_td_args[0])
            else:
                dims = list(_td_args or _REQ)
        elif _td_args:
            raise TypeError("flip() got multiple values for argument 'dims'")
    """
    return [
        f"    if {param} is _NO:",
        "        if len(_td_args) == 1 and not isinstance(_td_args[0], int):",
        f"            {param} = list(_td_args[0])",
        "        else:",
        f"            {param} = list(_td_args or _REQ)",
        "    elif _td_args:",
        f"        raise TypeError({name + '() got multiple values for argument ' + repr(param)!r})",
    ]


def varargs_except(fname: str, name: str, param: str, others: list[str], method: bool) -> list[str]:
    r"""The ``except TypeError`` clause of varargs binding ``fname`` (Python name ``name``);
    ``others``: its keyword parameters besides ``param`` (Note [Size lists given as varargs]).

    >>> print("\n".join(varargs_except("_m_flip", "flip", "dims", [], True)))
        except TypeError:
            if dims is not _NO: raise
            _size = _varargs_list('flip', 'dims', True)
            return _m_flip(self, dims=_size)
    """
    call = ", ".join(["self"] * method + [f"{param}=_size"] + [f"{k}={k}" for k in others])
    return [
        "    except TypeError:",
        f"        if {param} is not _NO: raise",
        f"        _size = _varargs_list({name!r}, {param!r}, {method})",
        f"        return {fname}({call})",
    ]


def number_input_retry(fname: str, names: list[str]) -> list[str]:
    r"""Lines of the except clause that retry a numbers-as-tensors function with a number
    ``input`` wrapped (torch.add(2, t)): done after the entry rejected it, so the common
    call, with a Tensor input, pays no check. ``names``: the binding's parameters.

    >>> print("\n".join(number_input_retry("add", ["input", "other"])))
            if not isinstance(input, _Tensor) and isinstance(_wrap_argument(input), _Tensor):
                return add(input=_wrap_argument(input), other=other)
    """
    call = ", ".join(f"{n}={'_wrap_argument(input)' if n == 'input' else n}" for n in names)
    return [
        "        if not isinstance(input, _Tensor) and isinstance(_wrap_argument(input), _Tensor):",
        f"            return {fname}({call})",
    ]
