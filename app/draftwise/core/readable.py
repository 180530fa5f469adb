"""Numbers in words people read: sizes, parameter counts, context lengths, durations."""

from __future__ import annotations

GIB = 1024**3
MIB = 1024**2


def human_bytes(n: int | float | None, *, digits: int = 1) -> str:
    """Sizes counted in 1024s, labelled as what they are: KiB, MiB, GiB (a "MB" label on a
    1024-based number is 5% off at GB sizes, and RAM and GPU memory are 1024-based)."""
    if n is None:
        return "?"
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(size) < 1024 or unit == "TiB":
            if unit == "B":
                return f"{size:.0f} B"
            return f"{size:.{digits}f} {unit}"
        size /= 1024
    return f"{n} B"  # pragma: no cover


def human_gb_pair(used: int, total: int) -> str:
    """"7.1 / 8.0 GiB" — both in the unit of the total."""
    unit, div = ("GiB", GIB) if total >= GIB else ("MiB", MIB)
    return f"{used / div:.1f} / {total / div:.1f} {unit}"


def human_use(used: int, free_total: int) -> tuple[str, str]:
    """("11.9 MiB", "22.1 GiB") — what the plan uses and what it may use, each in its own
    unit (MiB below 1 GiB), for "11.9 MiB of 22.1 GiB free"."""
    return human_bytes(used), human_bytes(free_total)


def human_params(n: int | None) -> str:
    if not n:
        return "?"
    for div, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if n >= div:
            value = n / div
            return f"{value:.1f} {suffix}" if value < 100 else f"{value:.0f} {suffix}"
    return str(n)


def human_ctx(n: int | None) -> str:
    """Context lengths: 40960 -> "40k", 131072 -> "128k", 512 -> "512"."""
    if not n:
        return "?"
    if n >= 1024 and n % 1024 == 0:
        k = n // 1024
        return f"{k // 1024}M" if k >= 1024 and k % 1024 == 0 else f"{k}k"
    if n >= 1000:
        return f"{n / 1000:.0f}k" if n % 1000 == 0 else f"{n / 1024:.1f}k"
    return str(n)


def human_duration(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{seconds:.0f} s" if seconds >= 10 else f"{seconds:.1f} s"
    m, s = divmod(int(seconds), 60)
    if m < 60:
        return f"{m} min {s:02d} s"
    h, m = divmod(m, 60)
    return f"{h} h {m:02d} min"


def quote_arg(token: str) -> str:
    """Display-only quoting (the engine is never started through a shell)."""
    if not token or any(c in token for c in " \t'\"$\\"):
        return "'" + token.replace("'", "'\\''") + "'"
    return token


def command_line(argv: list[str] | tuple[str, ...]) -> str:
    return " ".join(quote_arg(a) for a in argv)
