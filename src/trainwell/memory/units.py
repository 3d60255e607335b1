"""Counts and sizes as people write them: ``7B``, ``1.5M``, ``350m``; ``13.2 GiB (14.2 GB)``."""

from __future__ import annotations

import math

from trainwell.errors import TrainwellError

# Model sizes are decimal (a "7B" model has 7e9 parameters); case does not matter,
# so "350m" is 350 million, as in model names like "opt-350m".
_COUNT_SUFFIX = {"": 1, "k": 10**3, "m": 10**6, "b": 10**9, "g": 10**9, "t": 10**12}


def parse_count(text: str | int | float, what: str = "--params") -> int:
    """Parse ``7B``, ``1.5M``, ``350m``, ``125k``, ``1e9`` or ``12345`` into an integer count.

    Example:
        >>> parse_count("1.5M")
        1500000
    """
    if isinstance(text, bool):
        raise TrainwellError(f"{what}: expected a count such as 7B, 1.5M or 350m, got {text!r}")
    if isinstance(text, (int, float)):
        value = float(text)
    else:
        raw = text.strip().replace("_", "").replace(",", "")
        suffix = raw[-1:].lower() if raw[-1:].isalpha() and raw[-1:].lower() != "e" else ""
        try:
            number = float(raw[: len(raw) - len(suffix)])
        except ValueError:
            raise TrainwellError(f"{what}: expected a count such as 7B, 1.5M or 350m, got {text!r}") from None
        if suffix not in _COUNT_SUFFIX:
            raise TrainwellError(f"{what}: unknown suffix {raw[-1]!r} in {text!r}; use K, M, B or T (e.g. 7B, 350M)")
        value = number * _COUNT_SUFFIX[suffix]
    if not math.isfinite(value) or value < 0:
        raise TrainwellError(f"{what}: must be a non-negative number, got {text!r}")
    return int(round(value))


_BINARY = [("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)]
_DECIMAL = [("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("kB", 10**3)]


def _scaled(n: float, units: list[tuple[str, int]]) -> str:
    for name, size in units:
        if abs(n) >= size:
            return f"{n / size:.1f} {name}"
    return f"{n:.0f} B"


def format_bytes(n: float) -> str:
    """Binary size with the decimal size beside it: ``13.2 GiB (14.2 GB)``.

    Example:
        >>> format_bytes(16e9)
        '14.9 GiB (16.0 GB)'
    """
    if abs(n) < 1000:
        return f"{n:.0f} B"
    return f"{_scaled(n, _BINARY)} ({_scaled(n, _DECIMAL)})"


def format_count(n: int) -> str:
    """A parameter count in the short decimal form people use: ``6.74B``, ``125.0M``."""
    for name, size in (("T", 10**12), ("B", 10**9), ("M", 10**6), ("K", 10**3)):
        if abs(n) >= size:
            return f"{n / size:.2f}{name}"
    return str(n)
