"""Every corpus model, from every module in corpus/families/ (each has `models()`)."""

from __future__ import annotations

import functools
import importlib
import pkgutil
from dataclasses import replace

from draftwise.testing.corpus import families, published
from draftwise.testing.corpus.spec import ModelSpec


def family_modules() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(families.__path__) if not m.name.startswith("_"))


@functools.lru_cache(maxsize=1)
def all_models() -> tuple[ModelSpec, ...]:
    out: list[ModelSpec] = []
    for name in family_modules():
        module = importlib.import_module(f"{families.__name__}.{name}")
        for spec in module.models():
            if spec.family != name:
                raise ValueError(f"{spec.name}: family {spec.family!r} but written by families/{name}.py")
            size, precision, source = published.PUBLISHED.get(spec.name, (None, 0, published.NOT_SOURCED))
            out.append(replace(spec, published_size=size, published_precision=precision, published_source=source))
    names = [s.name for s in out]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"corpus models named twice: {dupes}")
    return tuple(out)


def get(name: str) -> ModelSpec:
    for s in all_models():
        if s.name == name:
            return s
    raise KeyError(f"no corpus model {name!r} (known: {', '.join(s.name for s in all_models())})")
