"""Reading a heatmap near its peak (``local_window``) instead of over the whole map."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from robojudge.kiva._net import KeypointReader, ReaderEnsemble, local_window, set_local_radius  # noqa: E402


def _soft_argmax(prob: torch.Tensor) -> tuple[float, float]:
    hh, ww = prob.shape[-2:]
    x = float((prob.sum(dim=-2) * torch.arange(ww)).sum())
    return x, float((prob.sum(dim=-1) * torch.arange(hh)).sum())


def test_a_far_bump_pulls_the_whole_map_read_but_not_the_local_one():
    # A peak of 0.6 at (x=3, y=4) spread over its neighbours, and a second bump of 0.2 at (x=12, y=10).
    prob = torch.zeros(1, 1, 16, 16)
    prob[0, 0, 4, 3] = 0.6
    prob[0, 0, 4, 2] = prob[0, 0, 4, 4] = 0.1
    prob[0, 0, 10, 12] = 0.2
    # the whole map: x = 0.1*2 + 0.6*3 + 0.1*4 + 0.2*12 = 4.8, y = 0.8*4 + 0.2*10 = 5.2 (worked by hand)
    assert _soft_argmax(prob[0, 0]) == pytest.approx((4.8, 5.2))
    near = local_window(prob, 2)
    assert float(near.sum()) == pytest.approx(1.0)
    assert _soft_argmax(near[0, 0]) == pytest.approx((3.0, 4.0))  # the bump is 9 cells away: left out
    # radius 0 keeps the peak's cell only; a radius wider than the gap keeps the whole map
    assert _soft_argmax(local_window(prob, 0)[0, 0]) == pytest.approx((3.0, 4.0))
    assert torch.allclose(local_window(prob, 9), prob)
    with pytest.raises(ValueError, match="radius"):
        local_window(prob, -1)


def test_window_is_cut_at_the_edges_and_taken_per_map():
    prob = torch.zeros(2, 3, 8, 8)
    prob[0, 0, 0, 0], prob[0, 0, 0, 1], prob[0, 0, 7, 7] = 0.5, 0.3, 0.2  # peak in a corner
    prob[0, 1, 5, 5], prob[0, 1, 5, 6] = 0.5, 0.5  # a tie: the first in row-major order is the peak
    prob[:, 2] = 1.0 / 64  # flat: the first cell is the peak, its 2-cell square is kept
    prob[1] = prob[0].flip(-1)
    near = local_window(prob, 1)
    assert torch.allclose(near.sum(dim=(2, 3)), torch.ones(2, 3))
    assert near[0, 0, 0, 0] == pytest.approx(0.5 / 0.8) and near[0, 0, 7, 7] == 0
    assert near[0, 1, 5, 5] == pytest.approx(0.5) and near[0, 1, 5, 6] == pytest.approx(0.5)
    assert int((near[0, 2] > 0).sum()) == 4  # (0..1) x (0..1): the square cut at the corner
    assert near[1, 0, 0, 7] == pytest.approx(0.5 / 0.8) and near[1, 0, 7, 0] == 0


def test_set_local_radius_reaches_every_member_and_changes_only_reads_with_far_mass():
    torch.manual_seed(0)
    members = [KeypointReader(3, 3, 8).eval() for _ in range(2)]
    ensemble = ReaderEnsemble(members).eval()
    x = torch.rand(2, 9, 32, 32)
    with torch.no_grad():
        whole = ensemble(x)[0]
        set_local_radius(ensemble, 1)
        assert all(m.local_radius == 1 for m in members)
        near = ensemble(x)[0]
        set_local_radius(ensemble, 100)  # a window wider than the map reads as the whole map
        wide = ensemble(x)[0]
        set_local_radius(ensemble, None)
        again = ensemble(x)[0]
    assert not torch.allclose(near, whole)  # an untrained net's maps are flat: the window matters
    assert torch.allclose(wide, whole, atol=1e-5) and torch.equal(again, whole)
    assert KeypointReader.local_radius is None  # the class default is untouched
    with pytest.raises(ValueError, match="radius"):
        set_local_radius(ensemble, -2)
