"""RoPE's frequency variants against their references (golden values from
scripts/golden/rotary_frequencies.py: Resonance RoPE's own tables, transformers' default
frequencies for the base sweep, transformers' proportional RoPE for p-RoPE; HoPE's rule from
its paper, which has no public code) and their properties."""

from __future__ import annotations

import math

import pytest
import torch

from tests.encodings.helpers import dims, encoding, golden


def f64(values) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64)


@pytest.mark.parametrize("seq_len", ["64", "200"])
def test_resonance_tables_are_the_authors(seq_len):
    g = golden("resonance-rope")
    enc = encoding("resonance-rope", dims(head_dim=g["head_dim"]))
    inv_freq, _ = enc.frequencies()
    torch.testing.assert_close(inv_freq, f64(g["r_inv_freq"]), rtol=1e-6, atol=0)  # theirs: float32
    cos, sin = enc.cos_sin(int(seq_len), "cpu")
    torch.testing.assert_close(cos[: int(seq_len)].double(), f64(g["tables"][seq_len]["cos"]), rtol=0, atol=2e-5)
    torch.testing.assert_close(sin[: int(seq_len)].double(), f64(g["tables"][seq_len]["sin"]), rtol=0, atol=2e-5)


def test_resonance_wavelengths_are_whole_and_angles_repeat():
    enc = encoding("resonance-rope", dims(head_dim=16))
    inv_freq, _ = enc.frequencies()
    wavelengths = 2 * math.pi / inv_freq
    torch.testing.assert_close(wavelengths, wavelengths.round(), rtol=0, atol=1e-9)
    cos, _ = enc.cos_sin(400, "cpu")
    for i, lam in enumerate(wavelengths.round().long().tolist()):
        if lam < 300:
            torch.testing.assert_close(cos[100 + lam, i], cos[100, i], rtol=0, atol=1e-5)


@pytest.mark.parametrize("name", ["rope-base500", "rope-base500k"])
def test_the_base_sweep_has_transformers_frequencies(name):
    g = golden(name)
    enc = encoding(name, dims(head_dim=g["head_dim"]))
    torch.testing.assert_close(enc.frequencies()[0], f64(g["inv_freq"]), rtol=1e-6, atol=0)


@pytest.mark.parametrize("head_dim", ["16", "20", "64"])
def test_p_rope_pairs_are_transformers_proportional_rope(head_dim):
    """The kept frequencies and their number, floor(p Dh / 2), as transformers' proportional
    RoPE gives them; at 20 (p Dh / 2 = 7.5) rounding would keep 8 pairs, not 7."""
    g = golden("p-rope")
    enc = encoding("p-rope", dims(head_dim=int(head_dim)), p=g["p"])
    inv_freq = enc.frequencies()[0]
    torch.testing.assert_close(inv_freq, f64(g["inv_freq"][head_dim]), rtol=1e-6, atol=0)
    assert int((inv_freq > 0).sum()) == sum(f > 0 for f in g["inv_freq"][head_dim]) == int(g["p"] * int(head_dim) // 2)


def test_p_rope_leaves_the_removed_pairs_unrotated_at_every_position():
    """The pairs of frequency 0 read the same at every position (semantic channels); the
    kept pairs rotate as RoPE's do."""
    enc, rope = encoding("p-rope", dims(head_dim=16)), encoding("rope", dims(head_dim=16))
    x = torch.randn(1, 1, 50, 16)
    pos = torch.arange(50) * 7
    rotated, _ = enc.rotate(x, x, pos, pos)
    plain, _ = rope.rotate(x, x, pos, pos)
    removed = [6, 7, 14, 15]  # pairs 6 and 7 of 8 (half-split: dims i and i + 8)
    torch.testing.assert_close(rotated[..., removed], x[..., removed])
    kept = [i for i in range(16) if i not in removed]
    torch.testing.assert_close(rotated[..., kept], plain[..., kept])


def test_p_equal_to_one_is_rope():
    enc, rope = encoding("p-rope", dims(head_dim=16), p=1.0), encoding("rope", dims(head_dim=16))
    torch.testing.assert_close(enc.frequencies()[0], rope.frequencies()[0])


@pytest.mark.parametrize("train_len", ["64", "256"])
def test_hope_keeps_the_pairs_that_turn_a_whole_period_in_training(train_len):
    g = golden("hope")
    enc = encoding("hope", dims(head_dim=g["head_dim"], train_len=int(train_len)))
    torch.testing.assert_close(enc.frequencies()[0], f64(g["inv_freq"][train_len]), rtol=1e-6, atol=0)


def test_hope_kept_pairs_complete_a_period_within_l_and_the_rest_never_rotate():
    """Every kept pair's wavelength fits in L; the zeroed ones read the same at every
    position (so no pair carries a partial, U-shaped turn); a longer L keeps more pairs."""
    kept = {}
    for L in (16, 64, 1024, 10**5):
        inv_freq = encoding("hope", dims(head_dim=16, train_len=L)).frequencies()[0]
        nonzero = inv_freq[inv_freq > 0]
        assert (2 * math.pi / nonzero <= L).all()
        kept[L] = len(nonzero)
    assert kept[16] <= kept[64] <= kept[1024] <= kept[10**5] == 8
    enc = encoding("hope", dims(head_dim=16, train_len=64))
    x = torch.randn(1, 1, 40, 16)
    pos = torch.arange(40) * 13
    rotated, _ = enc.rotate(x, x, pos, pos)
    zeroed = [3, 4, 5, 6, 7, 11, 12, 13, 14, 15]  # pairs 3..7 (half-split: dims i and i + 8)
    torch.testing.assert_close(rotated[..., zeroed], x[..., zeroed])


def test_hope_keeps_its_pairs_under_a_scaling():
    """A scaling (here PI at 4x) divides the kept frequencies, and never revives a zeroed pair."""
    enc = encoding("hope", dims(head_dim=16, train_len=64), scaling="pi")
    plain = enc.frequencies(1.0)[0]
    scaled = enc.frequencies(4.0)[0]
    assert ((plain == 0) == (scaled == 0)).all()
    torch.testing.assert_close(scaled, plain / 4)
