"""RoboWorM Fig. 3a: "at inference, five denoised candidates are averaged". The reader's reads of the
five test-time candidates, each on its own, average to what :func:`predict` returns by default."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from robojudge.kiva._infer import CANDIDATES, SHIFT, predict_confident  # noqa: E402
from robojudge.kiva._net import KeypointReader  # noqa: E402


def test_five_candidates_as_the_module_lists_them() -> None:
    assert len(CANDIDATES) == 5 and len(set(CANDIDATES)) == 5
    # as is; 2 px right and left; brightness x1.1 and x0.9 (the range training draws from)
    assert SHIFT == 2
    assert set(CANDIDATES) == {(0, 1.0), (2, 1.0), (-2, 1.0), (0, 1.1), (0, 0.9)}


def test_prediction_is_the_mean_of_the_five_single_candidate_reads() -> None:
    torch.manual_seed(0)
    net = KeypointReader(4, 3, 8).eval()  # untrained and tiny: the arithmetic, not the accuracy
    frames = np.random.default_rng(0).integers(0, 255, (5, 32, 32, 3), dtype=np.uint8)
    pos, vis, conf = predict_confident(net, frames, 3)  # the default candidates
    singles = [predict_confident(net, frames, 3, candidates=[c]) for c in CANDIDATES]
    # each candidate reads something else (else averaging them would prove nothing here)
    assert not np.allclose(singles[0][0], singles[1][0], atol=1e-3)
    assert not np.allclose(singles[3][1], singles[4][1], atol=1e-4)
    for got, part in zip((pos, vis, conf), range(3), strict=True):
        np.testing.assert_allclose(got, np.mean([s[part] for s in singles], axis=0), atol=1e-5)
