"""What the demo scores: a fixed list of weights-free metrics, the README's count."""

from __future__ import annotations

from pathlib import Path

import pytest

from robojudge.demo import demo_metrics
from robojudge.metrics import Provider, expand_metric_ids, get_metric, is_set_metric

ROOT = Path(__file__).resolve().parents[1]
RAFT = Path("raft_things") / "raft_large_C_T_V1-22a6c225.pth"


def test_the_demo_scores_the_same_metrics_when_weights_are_present(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ROBOJUDGE_WEIGHTS", raising=False)
    before = demo_metrics("sim")
    # A weights folder holding RAFT's file (its presence is all `all` checks): `all` now brings in RAFT
    # where torch is installed, and the demo's list stays as it was.
    (tmp_path / RAFT).parent.mkdir(parents=True)
    (tmp_path / RAFT).write_bytes(b"\0" * 1000)
    monkeypatch.setenv("ROBOJUDGE_WEIGHTS", str(tmp_path))
    if "flow_motion_magnitude_raft" not in expand_metric_ids(["all"]):
        pytest.skip("RAFT's libraries are not installed: the placeholder weights bring in nothing")
    assert demo_metrics("sim") == before
    assert "flow_motion_magnitude_raft" not in before


def test_the_demo_metrics_are_weights_free_single_view_and_as_many_as_the_readme_says() -> None:
    sim = demo_metrics("sim")
    assert len(set(sim)) == len(sim)
    for mid in sim + demo_metrics("synthetic"):
        assert get_metric(mid).provider is Provider.computed, mid
        assert not is_set_metric(mid), mid
    # The 60 rollouts of the simulator suite, each scored by every metric of the list.
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"({len(sim)} metrics, {60 * len(sim):,} results" in readme
