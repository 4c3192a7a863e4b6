"""Random number generators: torch.Generator's interface over NumPy's ``np.random.Generator``.

``Generator(device='cpu')`` wraps a PCG64 bit generator; ``manual_seed(s)`` reseeds it and
returns it, ``initial_seed()`` gives the seed, ``get_state()``/``set_state()`` save and
restore it. ``default_generator`` is what random operators use when their ``generator``
argument is None, and ``manual_seed(s)`` (the module function) reseeds it.

Note [Random streams differ from torch]
The same seed gives the same numbers in tensordispatch on every run and platform, but not
the numbers torch gives: torch uses a Mersenne Twister (CPU) and its own transforms from
bits to distributions, we use NumPy's PCG64 and NumPy's samplers (``random``,
``standard_normal``, ``integers``). Tests check distributions statistically, and
determinism by seed, never values against torch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["Generator", "default_generator", "initial_seed", "manual_seed", "resolve", "seed"]

_DEFAULT_SEED = 67280421310721  # torch's default CPU seed; the streams still differ


class Generator:
    """A seeded source of random numbers for one device (NumPy's PCG64 underneath).

    >>> g = Generator().manual_seed(3)
    >>> a = g.numpy.random(2); _ = g.manual_seed(3); bool((g.numpy.random(2) == a).all())
    True
    """

    __slots__ = ("_seed", "device", "numpy")

    def __init__(self, device: Any = "cpu") -> None:
        from tensordispatch.tensor.device import device as make_device

        self.device = make_device(device) if isinstance(device, str) else device
        self._seed = _DEFAULT_SEED
        self.numpy = np.random.Generator(np.random.PCG64(self._seed))

    def manual_seed(self, seed: int) -> Generator:
        """Reseed; returns self (like torch)."""
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise TypeError(f"manual_seed expected an int seed, got {type(seed).__name__}")
        self._seed = seed & 0xFFFF_FFFF_FFFF_FFFF  # torch wraps negative seeds the same way
        self.numpy = np.random.Generator(np.random.PCG64(self._seed))
        return self

    def initial_seed(self) -> int:
        return self._seed

    def seed(self) -> int:
        """Reseed from fresh entropy; returns the new seed."""
        entropy: Any = np.random.SeedSequence().entropy  # an int when drawn fresh
        new = int(entropy) & 0xFFFF_FFFF_FFFF_FFFF
        self.manual_seed(new)
        return new

    def get_state(self) -> dict[str, Any]:
        """The bit generator's state (a dict, where torch returns a ByteTensor)."""
        return {"seed": self._seed, "state": self.numpy.bit_generator.state}

    def set_state(self, state: dict[str, Any]) -> Generator:
        self._seed = state["seed"]
        self.numpy.bit_generator.state = state["state"]
        return self

    def __repr__(self) -> str:
        return f"<tensordispatch.Generator device={self.device.type!s}>"


default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    """Seed the default generator (torch.manual_seed); returns it.

    >>> import tensordispatch as td
    >>> _ = manual_seed(0); a = td.rand(3); _ = manual_seed(0); bool((td.rand(3) == a).all())
    True
    """
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Seed the default generator from fresh entropy; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    """The seed the default generator was last seeded with."""
    return default_generator.initial_seed()


def resolve(generator: Generator | None) -> np.random.Generator:
    """The NumPy generator a random kernel draws from (the default one for None)."""
    if generator is None:
        return default_generator.numpy
    if not isinstance(generator, Generator):
        raise TypeError(
            f"generator must be a tensordispatch.Generator or None, got {type(generator).__name__}"
        )
    return generator.numpy
