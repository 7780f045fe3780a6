"""One small generic registry: names -> classes, with lazy external code.

A name is looked up in this order: a registered name; ``module:attr`` (imported);
``path/to/file.py:Class`` (loaded from the file). Every result must subclass the
registry's base class, duplicate names are refused, and a miss suggests the nearest
registered name.

External code runs only where it is allowed: :func:`no_imports` makes every lookup
of a ``module:attr`` or ``file.py:Class`` reference raise :class:`NotImported` after
checking its form (``posbench validate`` without ``--import`` checks specs that way).
Code a record names runs only where the project's own specs name it: within :func:`only_refs`
(``posbench verify``, ``replicate``, ``eval`` rebuilding a record's run) any other external
reference is :class:`NotImported` before it is looked for (suite.specs.project_code).
Whatever goes wrong while importing (a syntax error, an exception at import time, a
missing attribute) is a ``KeyError`` naming the reference, never a traceback.
"""

from __future__ import annotations

import contextlib
import contextvars
import difflib
import importlib
import importlib.util
import pkgutil
import re
import sys
from pathlib import Path
from typing import Generic, TypeVar

T = TypeVar("T")

_IDENTIFIER = r"[A-Za-z_][A-Za-z0-9_]*"
_MODULE = re.compile(rf"{_IDENTIFIER}(\.{_IDENTIFIER})*")
_ATTR = re.compile(_IDENTIFIER)
_imports_allowed: contextvars.ContextVar[bool] = contextvars.ContextVar("imports_allowed", default=True)
# None: any external reference may be imported; a set: only these (ref_key), the ones the project's own specs name
_only_refs: contextvars.ContextVar[frozenset | None] = contextvars.ContextVar("only_refs", default=None)


def did_you_mean(name: str, choices) -> str:
    """' (did you mean 'x'?)' for the closest choice, or '' when nothing is close."""
    close = difflib.get_close_matches(str(name), [str(c) for c in choices], n=1, cutoff=0.5)
    return f" (did you mean '{close[0]}'?)" if close else ""


class LookupFailed(KeyError):
    """A reference that names nothing usable; ``str()`` is the message (KeyError's is its repr)."""

    def __str__(self) -> str:
        return str(self.args[0])


class NotImported(LookupFailed):
    """An external reference of the right form, not imported because imports are off."""


@contextlib.contextmanager
def no_imports():
    """Within this block, external references are checked for form only, never imported."""
    token = _imports_allowed.set(False)
    try:
        yield
    finally:
        _imports_allowed.reset(token)


def imports_allowed() -> bool:
    return _imports_allowed.get()


@contextlib.contextmanager
def only_refs(allowed: frozenset):
    """Within this block, an external reference is imported only when its :func:`ref_key` is in
    ``allowed``: code a record names runs only when the project's own specs name it too
    (suite.specs.project_code), and any other is :class:`NotImported` before anything is read."""
    token = _only_refs.set(frozenset(allowed))
    try:
        yield
    finally:
        _only_refs.reset(token)


def ref_key(ref: str, relative_to: Path | None) -> str:
    """What an external reference names, wherever it is written: ``/abs/file.py:Attr`` (resolved)
    or ``module:Attr``; LookupFailed when its form is wrong."""
    target, attr = parse_ref(ref)
    return f"{resolve_file(target, relative_to)}:{attr}" if target.endswith(".py") else f"{target}:{attr}"


def parse_ref(ref: str) -> tuple[str, str]:
    """(module or file, attribute) of ``module:attr`` or ``path/to/file.py:Class``;
    KeyError says what is wrong with the form."""
    target, sep, attr = ref.rpartition(":")
    if not sep:
        raise LookupFailed(f"'{ref}' is neither a registered name nor module:Class or path/to/file.py:Class")
    if not target:
        raise LookupFailed(f"'{ref}': no module or file before ':' (give module:Class or path/to/file.py:Class)")
    if not _ATTR.fullmatch(attr):
        raise LookupFailed(f"'{ref}': '{attr}' after ':' is not a Python name")
    if target.endswith(".py"):
        if "\0" in target:
            raise LookupFailed(f"'{ref}': not a file path")
    elif not _MODULE.fullmatch(target):
        raise LookupFailed(f"'{ref}': '{target}' is neither a module name (dotted Python names) nor a .py file")
    return target, attr


def resolve_file(target: str, relative_to: Path | None) -> Path:
    """The file of a ``path/to/file.py`` reference (relative paths: to ``relative_to``)."""
    path = Path(target)
    if not path.is_absolute() and relative_to is not None:
        path = relative_to / path
    return path.resolve()


class Registry(Generic[T]):
    """Names -> subclasses of ``base``. Members register themselves with the
    :meth:`register` decorator, in their own modules; ``members`` names where they are
    (a package, all of whose modules are imported, or a tuple of modules), imported on
    the first lookup, so the module that declares a registry and its contract never
    imports the ones that fill it."""

    def __init__(self, kind: str, base: type[T], members: str | tuple[str, ...] | None = None):
        self.kind = kind
        self.base = base
        self.members = members
        self._items: dict[str, type[T]] = {}
        self._discovered = members is None

    def _discover(self) -> None:
        if self._discovered:
            return
        self._discovered = True
        if isinstance(self.members, tuple):
            modules = list(self.members)
        else:
            package = importlib.import_module(self.members)
            modules = [info.name for info in pkgutil.iter_modules(package.__path__, f"{self.members}.")]
        for module in modules:
            importlib.import_module(module)

    def register(self, name: str | None = None):
        """Class decorator: registers the class under ``name`` (default: its ``name`` attribute)."""

        def decorator(cls: type[T]) -> type[T]:
            key = name if name is not None else cls.name
            if key in self._items:
                raise ValueError(f"{self.kind} '{key}' is already registered by {self._items[key]!r}")
            self._check(cls, key)
            self._items[key] = cls
            return cls

        return decorator

    def unregister(self, name: str) -> None:
        """Withdraws a member (a test's own, once the test is done): its name is free again."""
        del self._items[name]

    def member(self, name: str):
        """The member registered as ``name`` (no external references); ValueError, with the nearest
        name and every known one, otherwise (what a pydantic validator or a caller reports)."""
        if name not in self:
            raise ValueError(f"unknown {self.kind} '{name}'{did_you_mean(name, list(self))}; known: {', '.join(self)}")
        return self._items[name]

    def add(self, name: str, member: T) -> T:
        """Registers an instance of the base class (a table of tasks that differ in data only)."""
        if name in self._items:
            raise ValueError(f"{self.kind} '{name}' is already registered")
        if not isinstance(member, self.base):
            raise TypeError(f"{self.kind} '{name}' must be a {self.base.__qualname__}")
        self._items[name] = member
        return member

    def names(self) -> list[str]:
        self._discover()
        return sorted(self._items)

    # read as a mapping, in registration order: registry[name], name in registry, iteration
    def __getitem__(self, name: str) -> type[T]:
        self._discover()
        return self._items[name]

    def __contains__(self, name: object) -> bool:
        self._discover()
        return name in self._items

    def __iter__(self):
        self._discover()
        return iter(list(self._items))

    def __len__(self) -> int:
        self._discover()
        return len(self._items)

    def items(self) -> list[tuple[str, type[T]]]:
        self._discover()
        return list(self._items.items())

    def values(self) -> list[type[T]]:
        self._discover()
        return list(self._items.values())

    def is_registered(self, ref: str) -> bool:
        self._discover()
        return ref in self._items

    def get(self, ref: str, relative_to: Path | None = None) -> type[T]:
        self._discover()
        if ref in self._items:
            return self._items[ref]
        if ":" not in ref:
            raise LookupFailed(f"unknown {self.kind} '{ref}'{did_you_mean(ref, self._items)}; "
                           f"known: {', '.join(self.names())}; or give module:Class or path/to/file.py:Class")
        target, attr = parse_ref(ref)
        allowed = _only_refs.get()
        if allowed is not None and ref_key(ref, relative_to) not in allowed:
            raise NotImported(f"'{ref}' is code that no spec of this project names: not imported (a record "
                              "chooses no code; the project's encodings/ name what may run)")
        self.check_exists(target, relative_to)
        if not imports_allowed():
            raise NotImported(f"'{ref}' is external code: not imported (run with --import to load it)")
        obj = getattr(self._import(target, relative_to), attr, None)
        if obj is None:
            raise LookupFailed(f"{target} has no attribute '{attr}'")
        self._check(obj, ref)
        return obj

    def _check(self, obj, name: str) -> None:
        if not (isinstance(obj, type) and issubclass(obj, self.base)):
            raise TypeError(f"{self.kind} '{name}' must be a subclass of {self.base.__qualname__}")

    @staticmethod
    def check_exists(target: str, relative_to: Path | None) -> None:
        """The file exists, or the module's top-level package can be found (without
        running any of it: a dotted module's parents would be imported to look further)."""
        if target.endswith(".py"):
            path = resolve_file(target, relative_to)
            if not path.is_file():
                raise LookupFailed(f"no such file: {path}")
            return
        top = target.split(".")[0]
        if top not in sys.modules and importlib.util.find_spec(top) is None:
            raise LookupFailed(f"no module named '{top}'")

    @staticmethod
    def _import(target: str, relative_to: Path | None):
        if target.endswith(".py"):
            path = resolve_file(target, relative_to)
            module_name = f"posbench_plugin_{abs(hash(str(path)))}"
            if module_name in sys.modules:
                return sys.modules[module_name]
            spec = importlib.util.spec_from_file_location(module_name, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[module_name] = module
            try:
                spec.loader.exec_module(module)
            except BaseException as exc:
                del sys.modules[module_name]
                if isinstance(exc, KeyboardInterrupt):
                    raise
                raise LookupFailed(f"cannot load {path}: {_describe(exc)}") from None
            return module
        try:
            return importlib.import_module(target)
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            raise LookupFailed(f"cannot import module '{target}': {_describe(exc)}") from None


def _describe(exc: BaseException) -> str:
    """One line for an exception raised by external code, with its file and line where known."""
    if isinstance(exc, SyntaxError):
        return f"SyntaxError: {exc.msg} ({exc.filename}, line {exc.lineno})"
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    where = f" ({tb.tb_frame.f_code.co_filename}, line {tb.tb_lineno})" if tb is not None else ""
    return f"{type(exc).__name__}: {exc}{where}"
