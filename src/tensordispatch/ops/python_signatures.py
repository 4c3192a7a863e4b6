"""torch 2.13's visible Python signatures of the names with several, in torch's order
(what its "received an invalid combination of arguments" TypeError lists), and of the
names whose one visible signature hides others (deprecated forms: torch words any
mismatch as an invalid combination naming the visible one), keyed by (Python name, is a
Tensor method). Data from torch: rebuild with docs/codegen/python_signatures.py;
ops/binding_errors.py words the errors.
"""

PYTHON_SIGNATURES: dict[tuple[str, bool], tuple[str, ...]] = {
    ("addmm", False): (
        "Tensor input, Tensor mat1, Tensor mat2, *, Number beta = 1, Number alpha = 1, Tensor out = None",
        "Tensor input, Tensor mat1, Tensor mat2, torch.dtype out_dtype, *, Number beta = 1, Number alpha = 1, Tensor out = None",
    ),
    ("all", False): (
        "Tensor input, *, Tensor out = None",
        "Tensor input, tuple of ints dim = None, bool keepdim = False, *, Tensor out = None",
        "Tensor input, int dim, bool keepdim = False, *, Tensor out = None",
    ),
    ("all", True): (
        "",
        "tuple of ints dim = None, bool keepdim = False",
        "int dim, bool keepdim = False",
    ),
    ("any", False): (
        "Tensor input, *, Tensor out = None",
        "Tensor input, tuple of ints dim = None, bool keepdim = False, *, Tensor out = None",
        "Tensor input, int dim, bool keepdim = False, *, Tensor out = None",
    ),
    ("any", True): (
        "",
        "tuple of ints dim = None, bool keepdim = False",
        "int dim, bool keepdim = False",
    ),
    ("arange", False): (
        "Number end, *, Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, bool pin_memory = False, bool requires_grad = False",
        "Number start, Number end, *, torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, bool pin_memory = False, bool requires_grad = False",
        "Number start, Number end, Number step = 1, *, Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, bool pin_memory = False, bool requires_grad = False",
    ),
    ("argsort", False): (
        "Tensor input, *, bool stable, int dim = -1, bool descending = False, Tensor out = None",
        "Tensor input, int dim = -1, bool descending = False",
    ),
    ("argsort", True): (
        "*, bool stable, int dim = -1, bool descending = False",
        "int dim = -1, bool descending = False",
    ),
    ("baddbmm", False): (
        "Tensor input, Tensor batch1, Tensor batch2, *, Number beta = 1, Number alpha = 1, Tensor out = None",
        "Tensor input, Tensor batch1, Tensor batch2, torch.dtype out_dtype, *, Number beta = 1, Number alpha = 1, Tensor out = None",
    ),
    ("bitwise_and", False): (
        "Tensor input, Tensor other, *, Tensor out = None",
        "Number self, Tensor other",
        "Tensor input, Number other, *, Tensor out = None",
    ),
    ("bitwise_and", True): (
        "Tensor other",
        "Number other",
    ),
    ("bitwise_and_", True): (
        "Tensor other",
        "Number other",
    ),
    ("bitwise_left_shift", False): (
        "Tensor input, Tensor other, *, Tensor out = None",
        "Number self, Tensor other",
        "Tensor input, Number other, *, Tensor out = None",
    ),
    ("bitwise_left_shift", True): (
        "Tensor other",
        "Number other",
    ),
    ("bitwise_left_shift_", True): (
        "Tensor other",
        "Number other",
    ),
    ("bitwise_or", False): (
        "Tensor input, Tensor other, *, Tensor out = None",
        "Number self, Tensor other",
        "Tensor input, Number other, *, Tensor out = None",
    ),
    ("bitwise_or", True): (
        "Tensor other",
        "Number other",
    ),
    ("bitwise_or_", True): (
        "Tensor other",
        "Number other",
    ),
    ("bitwise_right_shift", False): (
        "Tensor input, Tensor other, *, Tensor out = None",
        "Number self, Tensor other",
        "Tensor input, Number other, *, Tensor out = None",
    ),
    ("bitwise_right_shift", True): (
        "Tensor other",
        "Number other",
    ),
    ("bitwise_right_shift_", True): (
        "Tensor other",
        "Number other",
    ),
    ("bitwise_xor", False): (
        "Tensor input, Tensor other, *, Tensor out = None",
        "Number self, Tensor other",
        "Tensor input, Number other, *, Tensor out = None",
    ),
    ("bitwise_xor", True): (
        "Tensor other",
        "Number other",
    ),
    ("bitwise_xor_", True): (
        "Tensor other",
        "Number other",
    ),
    ("bmm", False): (
        "Tensor input, Tensor mat2, *, Tensor out = None",
        "Tensor input, Tensor mat2, torch.dtype out_dtype, *, Tensor out = None",
    ),
    ("clamp", False): (
        "Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None",
        "Tensor input, Number min = None, Number max = None, *, Tensor out = None",
    ),
    ("clamp", True): (
        "Tensor min = None, Tensor max = None",
        "Number min = None, Number max = None",
    ),
    ("clamp_", False): (
        "Tensor input, Tensor min = None, Tensor max = None",
        "Tensor input, Number min = None, Number max = None",
    ),
    ("clamp_", True): (
        "Tensor min = None, Tensor max = None",
        "Number min = None, Number max = None",
    ),
    ("clamp_max", False): (
        "Tensor input, Tensor max, *, Tensor out = None",
        "Tensor input, Number max, *, Tensor out = None",
    ),
    ("clamp_max", True): (
        "Tensor max",
        "Number max",
    ),
    ("clamp_max_", False): (
        "Tensor input, Tensor max",
        "Tensor input, Number max",
    ),
    ("clamp_max_", True): (
        "Tensor max",
        "Number max",
    ),
    ("clamp_min", False): (
        "Tensor input, Tensor min, *, Tensor out = None",
        "Tensor input, Number min, *, Tensor out = None",
    ),
    ("clamp_min", True): (
        "Tensor min",
        "Number min",
    ),
    ("clamp_min_", False): (
        "Tensor input, Tensor min",
        "Tensor input, Number min",
    ),
    ("clamp_min_", True): (
        "Tensor min",
        "Number min",
    ),
    ("clip", False): (
        "Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None",
        "Tensor input, Number min = None, Number max = None, *, Tensor out = None",
    ),
    ("clip", True): (
        "Tensor min = None, Tensor max = None",
        "Number min = None, Number max = None",
    ),
    ("clip_", False): (
        "Tensor input, Tensor min = None, Tensor max = None",
        "Tensor input, Number min = None, Number max = None",
    ),
    ("clip_", True): (
        "Tensor min = None, Tensor max = None",
        "Number min = None, Number max = None",
    ),
    ("conv1d", False): (
        "Tensor input, Tensor weight, Tensor bias = None, tuple of ints stride = 1, tuple of ints padding = 0, tuple of ints dilation = 1, int groups = 1",
        'Tensor input, Tensor weight, Tensor bias = None, tuple of ints stride = 1, str padding = "valid", tuple of ints dilation = 1, int groups = 1',
    ),
    ("conv2d", False): (
        "Tensor input, Tensor weight, Tensor bias = None, tuple of ints stride = 1, tuple of ints padding = 0, tuple of ints dilation = 1, int groups = 1",
        'Tensor input, Tensor weight, Tensor bias = None, tuple of ints stride = 1, str padding = "valid", tuple of ints dilation = 1, int groups = 1',
    ),
    ("count_nonzero", False): (
        "Tensor input, int dim = None",
        "Tensor input, tuple of ints dim",
    ),
    ("count_nonzero", True): (
        "int dim = None",
        "tuple of ints dim",
    ),
    ("div", False): (
        "Tensor input, Tensor other, *, Tensor out = None",
        "Tensor input, Tensor other, *, str rounding_mode, Tensor out = None",
        "Tensor input, Number other, *, str rounding_mode",
    ),
    ("div", True): (
        "Tensor other",
        "Tensor other, *, str rounding_mode",
        "Number other, *, str rounding_mode",
    ),
    ("div_", True): (
        "Tensor other",
        "Tensor other, *, str rounding_mode",
        "Number other, *, str rounding_mode",
    ),
    ("divide", False): (
        "Tensor input, Tensor other, *, Tensor out = None",
        "Tensor input, Tensor other, *, str rounding_mode, Tensor out = None",
        "Tensor input, Number other",
        "Tensor input, Number other, *, str rounding_mode",
    ),
    ("divide", True): (
        "Tensor other",
        "Tensor other, *, str rounding_mode",
        "Number other",
        "Number other, *, str rounding_mode",
    ),
    ("divide_", True): (
        "Tensor other",
        "Tensor other, *, str rounding_mode",
        "Number other",
        "Number other, *, str rounding_mode",
    ),
    ("eq", False): (
        "Tensor input, Tensor other, *, Tensor out = None",
        "Tensor input, Number other, *, Tensor out = None",
    ),
    ("eq", True): (
        "Tensor other",
        "Number other",
    ),
    ("eq_", True): (
        "Tensor other",
        "Number other",
    ),
    ("eye", False): (
        "int n, *, Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, bool pin_memory = False, bool requires_grad = False",
        "int n, int m, *, Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, bool pin_memory = False, bool requires_grad = False",
    ),
    ("fill", False): (
        "Tensor input, Tensor value",
        "Tensor input, Number value",
    ),
    ("fill_", False): (
        "Tensor input, Tensor value",
        "Tensor input, Number value",
    ),
    ("fill_", True): (
        "Tensor value",
        "Number value",
    ),
    ("floor_divide", False): (
        "Tensor input, Tensor other, *, Tensor out = None",
        "Tensor input, Number other",
    ),
    ("floor_divide", True): (
        "Tensor other",
        "Number other",
    ),
    ("floor_divide_", True): (
        "Tensor other",
        "Number other",
    ),
    ("fmod", False): (
        "Tensor input, Tensor other, *, Tensor out = None",
        "Tensor input, Number other, *, Tensor out = None",
    ),
    ("fmod", True): (
        "Tensor other",
        "Number other",
    ),
    ("fmod_", True): (
        "Tensor other",
        "Number other",
    ),
    ("ge", False): (
        "Tensor input, Tensor other, *, Tensor out = None",
        "Tensor input, Number other, *, Tensor out = None",
    ),
    ("ge", True): (
        "Tensor other",
        "Number other",
    ),
    ("ge_", True): (
        "Tensor other",
        "Number other",
    ),
    ("greater", False): (
        "Tensor input, Tensor other, *, Tensor out = None",
        "Tensor input, Number other, *, Tensor out = None",
    ),
    ("greater", True): (
        "Tensor other",
        "Number other",
    ),
    ("greater_", True): (
        "Tensor other",
        "Number other",
    ),
    ("greater_equal", False): (
        "Tensor input, Tensor other, *, Tensor out = None",
        "Tensor input, Number other, *, Tensor out = None",
    ),
    ("greater_equal", True): (
        "Tensor other",
        "Number other",
    ),
    ("greater_equal_", True): (
        "Tensor other",
        "Number other",
    ),
    ("gt", False): (
        "Tensor input, Tensor other, *, Tensor out = None",
        "Tensor input, Number other, *, Tensor out = None",
    ),
    ("gt", True): (
        "Tensor other",
        "Number other",
    ),
    ("gt_", True): (
        "Tensor other",
        "Number other",
    ),
    ("le", False): (
        "Tensor input, Tensor other, *, Tensor out = None",
        "Tensor input, Number other, *, Tensor out = None",
    ),
    ("le", True): (
        "Tensor other",
        "Number other",
    ),
    ("le_", True): (
        "Tensor other",
        "Number other",
    ),
    ("lerp", False): (
        "Tensor input, Tensor end, Tensor weight, *, Tensor out = None",
        "Tensor input, Tensor end, Number weight, *, Tensor out = None",
    ),
    ("lerp", True): (
        "Tensor end, Tensor weight",
        "Tensor end, Number weight",
    ),
    ("lerp_", True): (
        "Tensor end, Tensor weight",
        "Tensor end, Number weight",
    ),
    ("less", False): (
        "Tensor input, Tensor other, *, Tensor out = None",
        "Tensor input, Number other, *, Tensor out = None",
    ),
    ("less", True): (
        "Tensor other",
        "Number other",
    ),
    ("less_", True): (
        "Tensor other",
        "Number other",
    ),
    ("less_equal", False): (
        "Tensor input, Tensor other, *, Tensor out = None",
        "Tensor input, Number other, *, Tensor out = None",
    ),
    ("less_equal", True): (
        "Tensor other",
        "Number other",
    ),
    ("less_equal_", True): (
        "Tensor other",
        "Number other",
    ),
    ("linspace", False): (
        "Tensor start, Tensor end, int steps, *, Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, bool pin_memory = False, bool requires_grad = False",
        "Number start, Tensor end, int steps, *, Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, bool pin_memory = False, bool requires_grad = False",
        "Tensor start, Number end, int steps, *, Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, bool pin_memory = False, bool requires_grad = False",
        "Number start, Number end, int steps, *, Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, bool pin_memory = False, bool requires_grad = False",
    ),
    ("lt", False): (
        "Tensor input, Tensor other, *, Tensor out = None",
        "Tensor input, Number other, *, Tensor out = None",
    ),
    ("lt", True): (
        "Tensor other",
        "Number other",
    ),
    ("lt_", True): (
        "Tensor other",
        "Number other",
    ),
    ("masked_fill", False): (
        "Tensor input, Tensor mask, Tensor value",
        "Tensor input, Tensor mask, Number value",
    ),
    ("masked_fill", True): (
        "Tensor mask, Tensor value",
        "Tensor mask, Number value",
    ),
    ("masked_fill_", True): (
        "Tensor mask, Tensor value",
        "Tensor mask, Number value",
    ),
    ("max", False): (
        "Tensor input, *, Tensor out = None",
        "Tensor input, Tensor other, *, Tensor out = None",
        "Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None",
    ),
    ("max", True): (
        "",
        "Tensor other",
        "int dim, bool keepdim = False",
    ),
    ("mean", False): (
        "Tensor input, *, torch.dtype dtype = None, Tensor out = None",
        "Tensor input, tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None, Tensor out = None",
    ),
    ("mean", True): (
        "*, torch.dtype dtype = None",
        "tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None",
    ),
    ("min", False): (
        "Tensor input, *, Tensor out = None",
        "Tensor input, Tensor other, *, Tensor out = None",
        "Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None",
    ),
    ("min", True): (
        "",
        "Tensor other",
        "int dim, bool keepdim = False",
    ),
    ("mm", False): (
        "Tensor input, Tensor mat2, *, Tensor out = None",
        "Tensor input, Tensor mat2, torch.dtype out_dtype, *, Tensor out = None",
    ),
    ("moveaxis", False): (
        "Tensor input, int source, int destination",
        "Tensor input, tuple of ints source, tuple of ints destination",
    ),
    ("moveaxis", True): (
        "int source, int destination",
        "tuple of ints source, tuple of ints destination",
    ),
    ("movedim", False): (
        "Tensor input, int source, int destination",
        "Tensor input, tuple of ints source, tuple of ints destination",
    ),
    ("movedim", True): (
        "int source, int destination",
        "tuple of ints source, tuple of ints destination",
    ),
    ("multiply", False): (
        "Tensor input, Tensor other, *, Tensor out = None",
        "Tensor input, Number other",
    ),
    ("multiply", True): (
        "Tensor other",
        "Number other",
    ),
    ("multiply_", True): (
        "Tensor other",
        "Number other",
    ),
    ("narrow", False): (
        "Tensor input, int dim, Tensor start, int length",
        "Tensor input, int dim, int start, int length",
    ),
    ("narrow", True): (
        "int dim, Tensor start, int length",
        "int dim, int start, int length",
    ),
    ("ne", False): (
        "Tensor input, Tensor other, *, Tensor out = None",
        "Tensor input, Number other, *, Tensor out = None",
    ),
    ("ne", True): (
        "Tensor other",
        "Number other",
    ),
    ("ne_", True): (
        "Tensor other",
        "Number other",
    ),
    ("nonzero", True): (
        "",
        "*, bool as_tuple",
    ),
    ("not_equal", False): (
        "Tensor input, Tensor other, *, Tensor out = None",
        "Tensor input, Number other, *, Tensor out = None",
    ),
    ("not_equal", True): (
        "Tensor other",
        "Number other",
    ),
    ("not_equal_", True): (
        "Tensor other",
        "Number other",
    ),
    ("pow", False): (
        "Tensor input, Tensor exponent, *, Tensor out = None",
        "Number self, Tensor exponent, *, Tensor out = None",
        "Tensor input, Number exponent, *, Tensor out = None",
    ),
    ("pow", True): (
        "Tensor exponent",
        "Number exponent",
    ),
    ("pow_", True): (
        "Tensor exponent",
        "Number exponent",
    ),
    ("prod", False): (
        "Tensor input, *, torch.dtype dtype = None",
        "Tensor input, int dim, bool keepdim = False, *, torch.dtype dtype = None, Tensor out = None",
    ),
    ("prod", True): (
        "*, torch.dtype dtype = None",
        "int dim, bool keepdim = False, *, torch.dtype dtype = None",
    ),
    ("rand", False): (
        "tuple of ints size, *, torch.Generator generator, Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, bool pin_memory = False, bool requires_grad = False",
        "tuple of ints size, *, Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, bool pin_memory = False, bool requires_grad = False",
    ),
    ("rand_like", False): (
        "Tensor input, *, torch.Generator generator, torch.memory_format memory_format = None, torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, bool pin_memory = False, bool requires_grad = False",
        "Tensor input, *, torch.memory_format memory_format = None, torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, bool pin_memory = False, bool requires_grad = False",
    ),
    ("randint", False): (
        "int high, tuple of ints size, *, torch.Generator generator, Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, bool pin_memory = False, bool requires_grad = False",
        "int high, tuple of ints size, *, Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, bool pin_memory = False, bool requires_grad = False",
        "int low, int high, tuple of ints size, *, torch.Generator generator, Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, bool pin_memory = False, bool requires_grad = False",
        "int low, int high, tuple of ints size, *, Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, bool pin_memory = False, bool requires_grad = False",
    ),
    ("randn", False): (
        "tuple of ints size, *, torch.Generator generator, Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, bool pin_memory = False, bool requires_grad = False",
        "tuple of ints size, *, Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, bool pin_memory = False, bool requires_grad = False",
    ),
    ("randn_like", False): (
        "Tensor input, *, torch.Generator generator, torch.memory_format memory_format = None, torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, bool pin_memory = False, bool requires_grad = False",
        "Tensor input, *, torch.memory_format memory_format = None, torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, bool pin_memory = False, bool requires_grad = False",
    ),
    ("random_", True): (
        "*, torch.Generator generator = None",
        "int from, int to, *, torch.Generator generator = None",
        "int to, *, torch.Generator generator = None",
    ),
    ("remainder", False): (
        "Tensor input, Tensor other, *, Tensor out = None",
        "Number self, Tensor other",
        "Tensor input, Number other, *, Tensor out = None",
    ),
    ("remainder", True): (
        "Tensor other",
        "Number other",
    ),
    ("remainder_", True): (
        "Tensor other",
        "Number other",
    ),
    ("round", False): (
        "Tensor input, *, Tensor out = None",
        "Tensor input, *, int decimals, Tensor out = None",
    ),
    ("round", True): (
        "",
        "*, int decimals",
    ),
    ("round_", False): (
        "Tensor input",
        "Tensor input, *, int decimals",
    ),
    ("round_", True): (
        "",
        "*, int decimals",
    ),
    ("rsub", False): (
        "Tensor input, Tensor other, *, Number alpha = 1",
        "Tensor input, Number other, Number alpha = 1",
    ),
    ("scatter", False): (
        "Tensor input, int dim, Tensor index, Tensor src, *, Tensor out = None",
        "Tensor input, int dim, Tensor index, Tensor src, *, str reduce, Tensor out = None",
        "Tensor input, int dim, Tensor index, Number value, *, Tensor out = None",
        "Tensor input, int dim, Tensor index, Number value, *, str reduce, Tensor out = None",
    ),
    ("scatter", True): (
        "int dim, Tensor index, Tensor src",
        "int dim, Tensor index, Tensor src, *, str reduce",
        "int dim, Tensor index, Number value",
        "int dim, Tensor index, Number value, *, str reduce",
    ),
    ("scatter_", True): (
        "int dim, Tensor index, Tensor src",
        "int dim, Tensor index, Tensor src, *, str reduce",
        "int dim, Tensor index, Number value",
        "int dim, Tensor index, Number value, *, str reduce",
    ),
    ("sort", False): (
        "Tensor input, *, bool stable, int dim = -1, bool descending = False, tuple of Tensors out = None",
        "Tensor input, int dim = -1, bool descending = False, *, tuple of Tensors out = None",
    ),
    ("sort", True): (
        "*, bool stable, int dim = -1, bool descending = False",
        "int dim = -1, bool descending = False",
    ),
    ("squeeze", False): (
        "Tensor input",
        "Tensor input, int dim",
        "Tensor input, tuple of ints dim",
    ),
    ("squeeze", True): (
        "",
        "int dim",
        "tuple of ints dim",
    ),
    ("squeeze_", True): (
        "",
        "int dim",
        "tuple of ints dim",
    ),
    ("squeeze_copy", False): (
        "Tensor input, *, Tensor out = None",
        "Tensor input, int dim, *, Tensor out = None",
        "Tensor input, tuple of ints dim, *, Tensor out = None",
    ),
    ("std", False): (
        "Tensor input, tuple of ints dim, bool unbiased = True, bool keepdim = False, *, Tensor out = None",
        "Tensor input, tuple of ints dim = None, *, Number correction = None, bool keepdim = False, Tensor out = None",
        "Tensor input, bool unbiased = True",
    ),
    ("std", True): (
        "tuple of ints dim, bool unbiased = True, bool keepdim = False",
        "tuple of ints dim = None, *, Number correction = None, bool keepdim = False",
        "bool unbiased = True",
    ),
    ("subtract", False): (
        "Tensor input, Tensor other, *, Number alpha = 1, Tensor out = None",
        "Tensor input, Number other, Number alpha = 1",
    ),
    ("subtract", True): (
        "Tensor other, *, Number alpha = 1",
        "Number other, Number alpha = 1",
    ),
    ("subtract_", True): (
        "Tensor other, *, Number alpha = 1",
        "Number other, Number alpha = 1",
    ),
    ("sum", False): (
        "Tensor input, *, torch.dtype dtype = None",
        "Tensor input, tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None, Tensor out = None",
    ),
    ("sum", True): (
        "*, torch.dtype dtype = None",
        "tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None",
    ),
    ("to", True): (
        "torch.device device = None, torch.dtype dtype = None, bool non_blocking = False, bool copy = False, *, torch.memory_format memory_format = None",
        "torch.dtype dtype, bool non_blocking = False, bool copy = False, *, torch.memory_format memory_format = None",
        "Tensor tensor, bool non_blocking = False, bool copy = False, *, torch.memory_format memory_format = None",
    ),
    ("true_divide", False): (
        "Tensor input, Tensor other, *, Tensor out = None",
        "Tensor input, Number other",
    ),
    ("true_divide", True): (
        "Tensor other",
        "Number other",
    ),
    ("true_divide_", True): (
        "Tensor other",
        "Number other",
    ),
    ("var", False): (
        "Tensor input, tuple of ints dim, bool unbiased = True, bool keepdim = False, *, Tensor out = None",
        "Tensor input, tuple of ints dim = None, *, Number correction = None, bool keepdim = False, Tensor out = None",
        "Tensor input, bool unbiased = True",
    ),
    ("var", True): (
        "tuple of ints dim, bool unbiased = True, bool keepdim = False",
        "tuple of ints dim = None, *, Number correction = None, bool keepdim = False",
        "bool unbiased = True",
    ),
    ("view", True): (
        "torch.dtype dtype",
        "tuple of ints size",
    ),
    ("view_copy", False): (
        "Tensor input, torch.dtype dtype, *, Tensor out = None",
        "Tensor input, tuple of ints size, *, Tensor out = None",
    ),
    ("where", False): (
        "Tensor condition",
        "Tensor condition, Tensor input, Tensor other, *, Tensor out = None",
        "Tensor condition, Number self, Tensor other",
        "Tensor condition, Tensor input, Number other",
        "Tensor condition, Number self, Number other",
    ),
    ("where", True): (
        "Tensor condition, Tensor other",
        "Tensor condition, Number other",
    ),
}

HIDDEN_SIGNATURES: dict[tuple[str, bool], str] = {
    ("add", False): "Tensor input, Tensor other, *, Number alpha = 1, Tensor out = None",
    ("add", True): "Tensor other, *, Number alpha = 1",
    ("add_", True): "Tensor other, *, Number alpha = 1",
    (
        "addbmm",
        False,
    ): "Tensor input, Tensor batch1, Tensor batch2, *, Number beta = 1, Number alpha = 1, Tensor out = None",
    ("addbmm", True): "Tensor batch1, Tensor batch2, *, Number beta = 1, Number alpha = 1",
    ("addbmm_", True): "Tensor batch1, Tensor batch2, *, Number beta = 1, Number alpha = 1",
    (
        "addcdiv",
        False,
    ): "Tensor input, Tensor tensor1, Tensor tensor2, *, Number value = 1, Tensor out = None",
    ("addcdiv", True): "Tensor tensor1, Tensor tensor2, *, Number value = 1",
    ("addcdiv_", True): "Tensor tensor1, Tensor tensor2, *, Number value = 1",
    (
        "addcmul",
        False,
    ): "Tensor input, Tensor tensor1, Tensor tensor2, *, Number value = 1, Tensor out = None",
    ("addcmul", True): "Tensor tensor1, Tensor tensor2, *, Number value = 1",
    ("addcmul_", True): "Tensor tensor1, Tensor tensor2, *, Number value = 1",
    ("addmm", True): "Tensor mat1, Tensor mat2, *, Number beta = 1, Number alpha = 1",
    ("addmm_", True): "Tensor mat1, Tensor mat2, *, Number beta = 1, Number alpha = 1",
    (
        "addmv",
        False,
    ): "Tensor input, Tensor mat, Tensor vec, *, Number beta = 1, Number alpha = 1, Tensor out = None",
    ("addmv", True): "Tensor mat, Tensor vec, *, Number beta = 1, Number alpha = 1",
    ("addmv_", False): "Tensor input, Tensor mat, Tensor vec, *, Number beta = 1, Number alpha = 1",
    ("addmv_", True): "Tensor mat, Tensor vec, *, Number beta = 1, Number alpha = 1",
    ("baddbmm", True): "Tensor batch1, Tensor batch2, *, Number beta = 1, Number alpha = 1",
    ("baddbmm_", True): "Tensor batch1, Tensor batch2, *, Number beta = 1, Number alpha = 1",
    ("copy_", True): "Tensor other, bool non_blocking = False",
    ("sub", False): "Tensor input, Tensor other, *, Number alpha = 1, Tensor out = None",
    ("sub", True): "Tensor other, *, Number alpha = 1",
    ("sub_", True): "Tensor other, *, Number alpha = 1",
    (
        "type",
        True,
    ): "object dtype = None, bool non_blocking = False, *, torch.memory_format memory_format = None",
}
