"""One small generic registry: names -> classes, with lazy external code.

A name is looked up in this order: a registered name; ``module:attr`` (imported);
``path/to/file.py:Class`` (loaded from the file). Every result must subclass the
registry's base class, duplicate names are refused, and a miss suggests the nearest
registered name.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Generic, TypeVar

T = TypeVar("T")


def did_you_mean(name: str, choices) -> str:
    """' (did you mean 'x'?)' for the closest choice, or '' when nothing is close."""
    close = difflib.get_close_matches(str(name), [str(c) for c in choices], n=1, cutoff=0.5)
    return f" (did you mean '{close[0]}'?)" if close else ""


class Registry(Generic[T]):
    def __init__(self, kind: str, base: type[T]):
        self.kind = kind
        self.base = base
        self._items: dict[str, type[T]] = {}

    def register(self, name: str):
        def decorator(cls: type[T]) -> type[T]:
            if name in self._items:
                raise ValueError(f"{self.kind} '{name}' is already registered by {self._items[name].__qualname__}")
            self._check(cls, name)
            self._items[name] = cls
            return cls

        return decorator

    def names(self) -> list[str]:
        return sorted(self._items)

    def get(self, ref: str, relative_to: Path | None = None) -> type[T]:
        if ref in self._items:
            return self._items[ref]
        if ":" in ref:
            target, attr = ref.rsplit(":", 1)
            obj = getattr(self._import(target, relative_to), attr, None)
            if obj is None:
                raise KeyError(f"{target} has no attribute '{attr}'")
            self._check(obj, ref)
            return obj
        raise KeyError(f"unknown {self.kind} '{ref}'{did_you_mean(ref, self._items)}; "
                       f"known: {', '.join(self.names())}; or give module:Class or path/to/file.py:Class")

    def _check(self, obj, name: str) -> None:
        if not (isinstance(obj, type) and issubclass(obj, self.base)):
            raise TypeError(f"{self.kind} '{name}' must be a subclass of {self.base.__qualname__}")

    @staticmethod
    def _import(target: str, relative_to: Path | None):
        if target.endswith(".py"):
            path = Path(target)
            if not path.is_absolute() and relative_to is not None:
                path = (relative_to / path).resolve()
            if not path.is_file():
                raise KeyError(f"no such file: {path}")
            module_name = f"posbench_plugin_{abs(hash(str(path)))}"
            if module_name in sys.modules:
                return sys.modules[module_name]
            spec = importlib.util.spec_from_file_location(module_name, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[module_name] = module
            spec.loader.exec_module(module)
            return module
        try:
            return importlib.import_module(target)
        except ImportError as exc:
            raise KeyError(f"cannot import module '{target}': {exc}") from exc
