"""``posbench new-encoding NAME --family F``: the three files of a submitted encoding.

* ``encodings/NAME.yaml``: the spec; ``impl: ../plugins/NAME.py:Class`` (a file path is
  relative to the spec's folder and must stay inside the project);
* ``plugins/NAME.py``: an implementation through the plugin contract that is trivial but
  valid for its family (rotary: plain RoPE from suite.encodings.rotary's functions; bias:
  a zero bias; absolute: sinusoidal positions; contextual: logits left as they are), to
  be replaced by the real mechanism;
* ``tests/plugins/test_NAME.py``: the contract checks of suite.submission.contract and one property
  test of the family, passing at once.

Nothing is overwritten: an existing file is an error and nothing is written.
"""

from __future__ import annotations

import re
from pathlib import Path

from suite.core.boundary.atomic import write_atomic
from suite.core.boundary.paths import OutsideProject, own_path
from suite.specs import Project

FAMILIES = ("rotary", "bias", "absolute", "contextual")
NAME = re.compile(r"[a-z0-9][a-z0-9_-]*")
MAX_ENCODING_NAME = 100  # its test file is test_<name>.py, and a file name holds 255 bytes


class ScaffoldError(Exception):
    pass


def class_name(name: str) -> str:
    camel = "".join(part.capitalize() for part in re.split(r"[-_]", name) if part)
    return camel if camel[0].isalpha() else f"Encoding{camel}"


def paths(project: Project, name: str) -> tuple[Path, Path, Path]:
    return (project.root / "encodings" / f"{name}.yaml", project.root / "plugins" / f"{name}.py",
            project.root / "tests" / "plugins" / f"test_{name.replace('-', '_')}.py")


def new_encoding(project: Project, name: str, family: str) -> list[Path]:
    """Write the three files; returns their paths (spec, implementation, test)."""
    if not NAME.fullmatch(name) or len(name) > MAX_ENCODING_NAME:
        raise ScaffoldError(f"'{name[:MAX_ENCODING_NAME]}{'...' if len(name) > MAX_ENCODING_NAME else ''}' is not a "
                            f"valid encoding name: lower-case letters, digits, '-' and '_', starting with a letter or "
                            f"digit, at most {MAX_ENCODING_NAME} characters")
    if family not in FAMILIES:
        raise ScaffoldError(f"family must be one of {', '.join(FAMILIES)}")
    spec, impl, test = paths(project, name)
    existing = [p for p in (spec, impl, test) if p.exists()]
    if existing:
        raise ScaffoldError(f"{', '.join(map(str, existing))} already exist(s): nothing written")
    cls = class_name(name)
    texts = {spec: SPEC.format(name=name, cls=cls, family=family, params=PARAMS[family]),
             impl: IMPL_HEADER.format(name=name, family=family) + IMPLS[family].format(cls=cls),
             test: TEST.format(name=name, family=family) + PROPERTY_TESTS[family]}
    # every folder first, inside the project and through no link, so that a failure writes nothing
    # (a spec left behind would block the retry: "already exist(s)")
    try:
        for path in texts:
            own_path(project.root, path)
            path.parent.mkdir(parents=True, exist_ok=True)
    except (OSError, OutsideProject) as exc:
        raise ScaffoldError(f"cannot make the folder of {path}: {getattr(exc, 'strerror', None) or exc}: nothing written") \
            from None
    written = []
    try:
        for path, text in texts.items():
            written.append(write_atomic(path, text))
    except OSError as exc:
        for path in written:
            path.unlink(missing_ok=True)
        raise ScaffoldError(f"cannot write {path}: {exc.strerror or exc}: nothing written") from None
    return [spec, impl, test]


SPEC = """\
name: {name}
display_name: {cls}
family: {family}
paper: "TODO: authors year, title (and the equation this implements)"
impl: ../plugins/{name}.py:{cls}  # relative to this file; must stay inside the project
params: {params}
description: >
  TODO: what the encoding does, in two sentences.
  Scale behaviour: extrapolates as it is.
"""

PARAMS = {"rotary": "{base: 10000}", "bias": "{}", "absolute": "{base: 10000}", "contextual": "{}"}

IMPL_HEADER = '''"""{name}: a {family}-family positional encoding (skeleton written by `posbench new-encoding`).

TODO: name the paper and the equation this implements, and which convention it chose
where the literature has two. The plugin contract is in suite/encodings/base.py:
override only the hooks the encoding uses; its parameters are a frozen dataclass.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from suite.encodings.base import ModelDims, PositionalEncoding
'''

IMPLS = {
    "rotary": '''from suite.encodings.rotary import default_inv_freq, rotate_half_split


@dataclass(frozen=True)
class {cls}Params:
    base: float = 10000.0  # theta_i = base^(-2i/Dh)

    def __post_init__(self):
        if not self.base > 1:
            raise ValueError("base must be > 1")


class {cls}(PositionalEncoding):
    """Plain RoPE (Su et al. 2021, Eq. 34; half-split pairs): replace with your rotation."""

    Params = {cls}Params

    def __init__(self, params: {cls}Params, dims: ModelDims):
        super().__init__(params, dims)
        self.register_buffer("inv_freq", default_inv_freq(dims.head_dim, params.base), persistent=False)  # [Dh/2]

    def rotate(self, q, k, q_pos, k_pos):
        def rotated(x, pos):
            angles = pos.to(torch.float64)[:, None] * self.inv_freq[None, :]  # [T, Dh/2]
            return rotate_half_split(x, angles.cos().to(x.dtype), angles.sin().to(x.dtype))

        return rotated(q, q_pos), rotated(k, k_pos)  # [B, H, T, Dh] each
''',
    "bias": '''

@dataclass(frozen=True)
class {cls}Params:
    pass  # TODO: your parameters, each with a short comment


class {cls}(PositionalEncoding):
    """A zero additive bias: replace with your bias of i - j (or of i and j)."""

    Params = {cls}Params

    def bias(self, q_pos, k_pos):
        return torch.zeros(self.dims.n_heads, len(q_pos), len(k_pos), device=q_pos.device)  # [H, Tq, Tk]
''',
    "absolute": '''from suite.encodings.simple import sinusoidal_table


@dataclass(frozen=True)
class {cls}Params:
    base: float = 10000.0  # the wavelength base

    def __post_init__(self):
        if not self.base > 1:
            raise ValueError("base must be > 1")


class {cls}(PositionalEncoding):
    """Sinusoidal positions added to the token embeddings (Vaswani et al. 2017, Sec. 3.5):
    replace with your embedding."""

    Params = {cls}Params

    def embed(self, x, pos):
        return x + sinusoidal_table(pos, self.dims.d_model, self.params.base).to(x.dtype)  # [B, T, D]
''',
    "contextual": '''

@dataclass(frozen=True)
class {cls}Params:
    pass  # TODO: your parameters, each with a short comment


class {cls}(PositionalEncoding):
    """Leaves the logits as they are: replace with your edit of the attention scores
    (they arrive scaled by 1/sqrt(Dh), holding the causal mask as -inf; keep it)."""

    Params = {cls}Params

    def score(self, q, k, scores, q_pos, k_pos):
        return scores  # [B, H, Tq, Tk]
''',
}

TEST = '''"""Tests of the {name} encoding (written by `posbench new-encoding`): the plugin contract
and one property of the {family} family. Add your own: golden values from the authors'
code, with the command that produced them (see CONTRIBUTING.md)."""

from pathlib import Path

import pytest
import torch

from suite.submission.contract import CHECKS
from suite.encodings import ModelDims
from suite.specs import load_encoding

SPEC = Path(__file__).resolve().parents[2] / "encodings" / "{name}.yaml"
DIMS = ModelDims(d_model=32, n_heads=2, head_dim=16, n_layers=1, train_len=16)


def encoding():
    spec = load_encoding(SPEC)
    return spec.implementation()(spec.resolved_params(), DIMS)


@pytest.mark.parametrize("check", list(CHECKS))
def test_contract(check):
    CHECKS[check](load_encoding(SPEC))
'''

PROPERTY_TESTS = {
    "rotary": '''

def test_rotation_keeps_norms_and_qk_depends_on_distance_only():
    enc, pos = encoding(), torch.arange(12)
    q = torch.randn(16).expand(1, 1, 12, 16).clone()  # the same query and key at every position
    k = torch.randn(16).expand(1, 1, 12, 16).clone()
    rq, rk = enc.rotate(q, k, pos, pos)
    torch.testing.assert_close(rq.norm(dim=-1), q.norm(dim=-1))
    logits = (rq @ rk.transpose(-2, -1))[0, 0]  # [T, T]
    for d in range(-11, 12):
        diagonal = torch.diagonal(logits, d)
        torch.testing.assert_close(diagonal, diagonal[0].expand_as(diagonal), atol=1e-4, rtol=1e-4)
''',
    "bias": '''

def test_bias_shape_and_translation_invariance():
    enc, pos = encoding(), torch.arange(10)
    bias = enc.bias(pos, pos)
    assert bias.shape == (DIMS.n_heads, 10, 10)
    torch.testing.assert_close(enc.bias(pos + 7, pos + 7), bias)
''',
    "absolute": '''

def test_embedding_shape_and_positions_differ():
    enc, x = encoding(), torch.zeros(2, 10, DIMS.d_model)
    out = enc.embed(x, torch.arange(10))
    assert out.shape == x.shape
    assert not torch.equal(out[0, 0], out[0, 1])
''',
    "contextual": '''

def test_score_keeps_the_causal_mask():
    enc, T = encoding(), 6
    q, k = torch.randn(1, DIMS.n_heads, T, DIMS.head_dim), torch.randn(1, DIMS.n_heads, T, DIMS.head_dim)
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    scores = (q @ k.transpose(-2, -1)).masked_fill(future, float("-inf"))
    out = enc.score(q, k, scores, torch.arange(T), torch.arange(T))
    assert out.shape == scores.shape
    assert torch.isneginf(out[..., future]).all()
''',
}
