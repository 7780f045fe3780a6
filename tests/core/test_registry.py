"""The one registry: members register themselves in their own modules, which it imports on
the first lookup; it reads as a mapping in registration order; it refuses what does not fit."""

from __future__ import annotations

import sys

import pytest

from suite.core.registry import LookupFailed, Registry


class Base:
    name = "base"


def _package(tmp_path, monkeypatch, name: str, modules: dict[str, str]) -> None:
    """A real package on sys.path whose modules register members of ``REGISTRY`` (set by the test)."""
    folder = tmp_path / name
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    for module, body in modules.items():
        (folder / f"{module}.py").write_text(body)
    monkeypatch.syspath_prepend(str(tmp_path))


MEMBER = """
from tests.core.test_registry import Base, REGISTRIES
@REGISTRIES[{key!r}].register({name!r})
class {cls}(Base):
    pass
"""

REGISTRIES: dict[str, Registry] = {}


def test_members_of_a_package_are_imported_on_first_lookup(tmp_path, monkeypatch):
    _package(tmp_path, monkeypatch, "pkg_members", {
        "one": MEMBER.format(key="package", name="one", cls="One"),
        "two": MEMBER.format(key="package", name="two", cls="Two"),
    })
    REGISTRIES["package"] = registry = Registry("thing", Base, members="pkg_members")
    assert "pkg_members.one" not in sys.modules  # declaring the registry imports nothing
    assert registry.names() == ["one", "two"]
    assert registry.get("two").__name__ == "Two" and "pkg_members.two" in sys.modules


def test_listed_modules_are_imported_in_order_and_read_as_a_mapping(tmp_path, monkeypatch):
    _package(tmp_path, monkeypatch, "tuple_members", {
        "b": MEMBER.format(key="tuple", name="zeta", cls="Zeta"),
        "a": MEMBER.format(key="tuple", name="alpha", cls="Alpha"),
    })
    REGISTRIES["tuple"] = registry = Registry("thing", Base, members=("tuple_members.b", "tuple_members.a"))
    assert list(registry) == ["zeta", "alpha"]  # registration order; names() sorts
    assert registry.names() == ["alpha", "zeta"] and len(registry) == 2
    assert "zeta" in registry and "eta" not in registry and registry["alpha"].__name__ == "Alpha"
    with pytest.raises(LookupFailed, match="did you mean 'zeta'"):
        registry.get("zet")


def test_register_uses_the_class_name_attribute_and_refuses_duplicates_and_strangers():
    registry = Registry("thing", Base)

    @registry.register()
    class Named(Base):
        name = "named"

    assert registry["named"] is Named
    with pytest.raises(ValueError, match="already registered"):
        registry.register("named")(type("Again", (Base,), {}))
    with pytest.raises(TypeError, match="must be a subclass of Base"):
        registry.register("stranger")(type("Stranger", (), {}))


def test_add_takes_instances_of_the_base_only():
    registry = Registry("thing", Base)
    member = registry.add("one", Base())
    assert registry["one"] is member and registry.values() == [member]
    with pytest.raises(TypeError, match="must be a Base"):
        registry.add("two", object())
    with pytest.raises(ValueError, match="already registered"):
        registry.add("one", Base())
