"""The plugin contract, for every file in encodings/ (new files are covered automatically):
each check of ``suite.submission.contract.CHECKS`` (the checks ``posbench validate --import`` runs
on a submission) on each shipped spec: it loads, runs in a tiny model, is causal in
training and evaluation, deterministic, trainable, states the scale behaviour it
declares, and takes the attention path its hooks call for."""

from __future__ import annotations

import pytest
import torch

from suite.submission.contract import CHECKS, ContractError

from tests.encodings.helpers import SPECS, spec

NAMES = [p.stem for p in SPECS]


@pytest.mark.parametrize("check", CHECKS)
@pytest.mark.parametrize("name", NAMES)
def test_contract(name, check):
    torch.manual_seed(0)
    try:
        CHECKS[check](spec(name))
    except ContractError as exc:
        pytest.fail(f"{name}: {check}: {exc}")


def test_a_broken_encoding_fails_the_contract(monkeypatch):
    """The checks can fail: a RoPE whose rotate mixes the next token's key into each query
    is caught as not causal (the checks are the same code a submission runs)."""
    from suite.encodings.rotary import Rotary

    original = Rotary.rotate
    monkeypatch.setattr(Rotary, "rotate", lambda self, q, k, qp, kp: (original(self, q, k, qp, kp)[0] + k.roll(-1, dims=2),
                                                                        original(self, q, k, qp, kp)[1]))
    with pytest.raises(ContractError, match="sees the future"):
        CHECKS["causal"](spec("rope"))


def test_a_false_claim_of_real_valued_ids_fails_the_contract(monkeypatch):
    """Learned positions index a table by id: claiming continuous_positions fails the check
    (a real id indexes no row; validate reports what the check raises), while the
    sinusoidal table's claim holds."""
    from suite.encodings.learned import Learned

    CHECKS["continuous positions"](spec("sinusoidal"))
    monkeypatch.setattr(Learned, "continuous_positions", True)
    with pytest.raises((ContractError, RuntimeError, IndexError)):
        CHECKS["continuous positions"](spec("learned"))
