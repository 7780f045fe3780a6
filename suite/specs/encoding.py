"""Encoding specs: ``encodings/<name>.yaml`` -> :class:`EncodingSpec`."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Literal

import pydantic
from pydantic import Field

from suite.core.registry import NotImported, parse_ref, resolve_file
from suite.encodings.params import ParamsError, validate_params
from suite.core.yamldoc import SpecError, SpecErrors, YamlDoc, read_yaml
from suite.specs.base import _validate, failed_keys, Label, Spec


# -- encodings --------------------------------------------------------------------


class Conformance(Spec):
    """What an encoding's golden values were checked against (shown on its page)."""

    reference: str  # repository or library, e.g. "huggingface/transformers"
    version: str  # the pinned version or the commit the golden script ran
    script: str  # the committed script that regenerates the golden values
    tolerance: float = Field(1e-5, gt=0, le=1)
    convention: str = ""  # e.g. "half-split rotary pairs"


class TrainPositions(Spec):
    """A training-time position-id transform (suite.encodings.position_transforms)."""

    impl: str
    params: dict[str, Any] = {}

    @pydantic.model_validator(mode="after")
    def _builds(self):
        from suite.encodings.position_transforms import build_transform

        build_transform(self.impl, self.params)  # ValueError: unknown impl or parameter, failed check
        return self


class EncodingSpec(Spec):
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")
    display_name: Label
    family: Literal["none", "absolute", "rotary", "bias", "contextual", "additive", "wrapper", "hybrid", "decay"]
    paper: str
    impl: str
    params: dict[str, Any] = {}
    description: str = ""
    # The encoding whose checkpoint this one evaluates (training-free variants: YaRN, PI,
    # NTK, ReRoPE ... train as RoPE). None: it trains as itself.
    trains_as: str | None = Field(None, pattern=r"^[a-z0-9][a-z0-9_-]*$")
    conformance: Conformance | None = None
    # The ids the model reads while it trains (PoSE, randomized ids); None: 0 .. T-1.
    train_positions: TrainPositions | None = None
    # What the row is (suite.report's boards rank positional encodings among themselves):
    # "positional" changes only how position enters the model, and its weights are within 1% of
    # the same model without positions (`posbench validate --import` checks it:
    # suite.submission.weights); "architecture" changes more (extra layers or convolutions, token
    # mixing, gates, latent projections, layer schedules) and is shown on its own board beside
    # ``base``, the positional encoding it is built on.
    kind: Literal["positional", "architecture"] = "positional"
    base: str | None = Field(None, pattern=r"^[a-z0-9][a-z0-9_-]*$")
    source: str = Field("", exclude=True)  # the file it came from (provenance, not content)

    def resolved_params(self):
        """The implementation's frozen parameter dataclass, with defaults filled in."""
        cls = self.implementation()
        return cls.Params(**self.params)

    def implementation(self):
        from suite.encodings import ENCODINGS

        return ENCODINGS.get(self.impl, relative_to=Path(self.source).parent if self.source else None)


def check_params(params_cls, params: dict, doc: YamlDoc) -> list[SpecError]:
    """Every problem of ``params`` against ``params_cls`` (suite.encodings.params), as file:line errors."""
    try:
        validate_params(params_cls, params)
    except ParamsError as exc:
        return [doc.error(("params", *path), message) for path, message in exc.problems]
    return []


def spec_project_root(source: Path) -> Path:
    """The project a spec file belongs to: the folder holding its kind's folder."""
    return Path(source).resolve().parent.parent


def check_impl_form(spec: EncodingSpec, doc: YamlDoc) -> list[SpecError]:
    """An external ``impl:`` without importing it: its form, its file (inside the spec's
    project unless the path is absolute) or its module's top-level package."""
    from suite.encodings import ENCODINGS

    if ENCODINGS.is_registered(spec.impl) or ":" not in spec.impl:
        return []
    try:
        target, _ = parse_ref(spec.impl)
        if target.endswith(".py") and not Path(target).is_absolute():
            path, root = resolve_file(target, Path(spec.source).parent), spec_project_root(spec.source)
            if not path.is_relative_to(root):
                return [doc.error(("impl",), f"'{target}' resolves to {path}, outside the project {root}: "
                                             "give an absolute path to load code from elsewhere")]
        ENCODINGS.check_exists(target, Path(spec.source).parent)
    except KeyError as exc:
        return [doc.error(("impl",), str(exc))]
    return []


def check_implementation(cls) -> str | None:
    """What is wrong with an implementation class beyond the registry's subclass check."""
    params = getattr(cls, "Params", None)
    if not (isinstance(params, type) and dataclasses.is_dataclass(params)):
        return f"{cls.__name__}.Params must be a frozen dataclass (got {params!r})"
    if not params.__dataclass_params__.frozen:
        return f"{cls.__name__}.Params must be a frozen dataclass: add @dataclass(frozen=True)"
    return None


def load_encoding(path: Path) -> EncodingSpec:
    doc = read_yaml(path)
    spec, errors = _validate(EncodingSpec, doc, source=str(path))
    if isinstance(doc.data, dict):  # the checks of the keys that validated, whether or not the others did
        errors += _checks_of_the_keys(doc, Path(path), failed_keys(errors))
    if errors:
        raise SpecErrors(sorted(errors, key=lambda e: e.line))
    return spec


def _checks_of_the_keys(doc: YamlDoc, path: Path, failed: set[str]) -> list[SpecError]:
    """The checks beyond each key's type, on the keys of the document that are not in ``failed``
    (a bad family must not hide a name that differs from the file's, nor an unknown parameter)."""
    data, errors = {k: v for k, v in doc.data.items() if k not in failed}, []
    name, trains_as = data.get("name"), data.get("trains_as")
    if isinstance(name, str) and name != path.stem:
        errors.append(doc.error(("name",), f"must match the file name '{path.stem}'"))
    if trains_as is not None and trains_as == name:
        errors.append(doc.error(("trains_as",), "an encoding trains as itself by default: remove trains_as"))
    if trains_as is not None and data.get("train_positions") is not None:
        errors.append(doc.error(("train_positions",), "a training-free variant evaluates another checkpoint: "
                                                      "its training positions are that encoding's"))
    kind, base = data.get("kind", "positional"), data.get("base")
    if kind == "architecture" and base is None:
        errors.append(doc.error(("base",), "an architecture change names the positional encoding it is compared "
                                           "beside: add base"))
    if kind == "positional" and base is not None:
        errors.append(doc.error(("base",), "only an architecture change has a base: remove base, or declare "
                                           "kind: architecture"))
    if isinstance(data.get("impl"), str):
        # only what the implementation's checks read: impl, params and the file it is relative to
        probe = EncodingSpec.model_construct(impl=data["impl"], params=data.get("params", {}), source=str(path))
        form = check_impl_form(probe, doc)
        errors += form
        if not form:
            errors += _check_loaded_implementation(probe, doc, params="params" not in failed)
    return errors


def _check_loaded_implementation(spec: EncodingSpec, doc: YamlDoc, params: bool = True) -> list[SpecError]:
    """The implementation's own checks and, with ``params``, its params' (nothing when imports
    are off and the implementation is external: see :func:`suite.core.registry.no_imports`)."""
    try:
        cls = spec.implementation()
    except NotImported:
        return []
    except (KeyError, TypeError) as exc:
        return [doc.error(("impl",), str(exc))]
    problem = check_implementation(cls)
    if problem:
        return [doc.error(("impl",), problem)]
    return check_params(cls.Params, spec.params, doc) if params else []
