"""A suite of the opt-in kinematic profiles: deterministic, labelled per segment, drawn only on request."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from pathlib import Path

import numpy as np
import pytest

if importlib.util.find_spec("mujoco") is None and not os.environ.get("CI"):
    pytest.skip(
        "mujoco is not installed (pip install -e '.[sim]'); CI runs these tests", allow_module_level=True
    )

os.environ.setdefault("MUJOCO_GL", "egl")

from robojudge.suite import load_suite, validate_manifest  # noqa: E402
from robojudge.suite.sim import make_sim_suite  # noqa: E402
from robojudge.suite.sim._kinematic import KINEMATIC_TYPES  # noqa: E402
from robojudge.suite.sim._segments import keypoints_seen, segment_verdicts  # noqa: E402
from robojudge.video import sample_frames  # noqa: E402


def _build(out: Path, **kw: object) -> Path:
    return make_sim_suite(
        out, seed=7, episodes=2, views=1, size=32, profiles=("kin_severe", "oracle"), workers=1, **kw
    )


def _verdicts_from_state(root: Path, row: dict[str, object]) -> list[dict[str, object]]:
    meta = row["meta"]
    assert isinstance(meta, dict)
    with np.load(root / str(row["state"])) as z:
        seen = keypoints_seen(z["keypoints_2d"][:, 0], z["keypoints_visible"][:, 0], z["masks"][:, 0])
        return segment_verdicts(meta["failures"], len(z["joint_pos"]), keypoints_visible=seen,
                                keypoint_names=[str(k) for k in z["keypoint_names"]])


def _hashes(manifest: Path) -> dict[str, str]:
    out = {}
    for item in load_suite(manifest):
        frames = sample_frames(item.video, fps=None, max_frames=None).frames
        out[item.item_id] = hashlib.sha256(np.ascontiguousarray(frames).tobytes()).hexdigest()
    return out


@pytest.mark.slow
def test_kinematic_suite_is_deterministic_and_segment_labelled(tmp_path: Path) -> None:
    a = _build(tmp_path / "a")
    b = _build(tmp_path / "b")
    assert validate_manifest(a) == []
    assert _hashes(a) == _hashes(b)
    rows = [json.loads(x) for x in a.read_text().splitlines()]
    assert rows == [json.loads(x) for x in b.read_text().splitlines()]
    verdicts = []
    for row in rows:
        meta = row["meta"]
        # The verdicts count what the main view of the rendered rollout shows (its state's visibility).
        assert meta["segments"] == _verdicts_from_state(a.parent, row)
        assert "rollout_depth" not in meta and "chunks" not in meta
        assert [(s["start"], s["stop"]) for s in meta["segments"]] == [(0, 16), (16, 32), (32, 48)]
        if row["generator"] == "oracle":
            assert meta["failures"] == [] and {s["verdict"] for s in meta["segments"]} == {"Good"}
            continue
        assert 1 <= len(meta["failures"]) <= 2
        assert {f["type"] for f in meta["failures"]} <= set(KINEMATIC_TYPES)
        assert all(f["severity"] >= 0.6 and f["detail"]["keypoints"] for f in meta["failures"])
        assert all("visible" in x for s in meta["segments"] for x in s["failures"])
        assert row["labels"]["pa"] < 5 and row["labels"]["ia"] == 5
        verdicts += [s["verdict"] for s in meta["segments"]]
    assert "Bad" in verdicts


def test_unknown_profile_names_the_kinematic_ones(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="kin_mild"):
        make_sim_suite(tmp_path, episodes=1, profiles=("kin_nope",))


@pytest.mark.slow
def test_rollout_depth_is_written_and_failures_stay_in_their_chunks(tmp_path: Path) -> None:
    manifest = make_sim_suite(tmp_path, seed=7, episodes=2, views=1, size=32, scenes=["pick_and_place"],
                              profiles=("kin_severe", "oracle"), workers=1, rollout_depth=[4, 1])
    assert validate_manifest(manifest) == []
    rows = [json.loads(x) for x in manifest.read_text().splitlines()]
    for row in rows:
        meta = row["meta"]
        depth = 4 if meta["episode"] == 0 else 1
        assert meta["rollout_depth"] == depth
        chunks = meta["chunks"]
        assert len(chunks) == depth and chunks[0][0] == 0 and chunks[-1][1] == 48
        assert meta["segments"] == _verdicts_from_state(manifest.parent, row)
        if row["generator"] == "oracle":
            assert meta["failures"] == []
            continue
        for f in meta["failures"]:
            lo, hi = chunks[f["detail"]["chunk"]]
            assert lo <= f["start"] < f["stop"] <= hi, (f, chunks)
            assert f["type"] in KINEMATIC_TYPES and f["severity"] >= 0.6
        # One failure per chunk at most.
        got = [f["detail"]["chunk"] for f in meta["failures"]]
        assert len(got) == len(set(got))
        if depth == 4:  # the last chunk always draws one (rate 1 from the fourth chunk on)
            assert 3 in got
