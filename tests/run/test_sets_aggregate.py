"""Set-level values stored as group rows reach ``robojudge aggregate`` through ``results export --by``."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.metrics import SET_METRICS
from robojudge.metrics import _sets as sets
from robojudge.metrics._score import Score
from robojudge.store import ResultRow, ResultStore
from robojudge.suite import Item
from robojudge.video import write_video

FAKE_FVD = {"g1": 120.0, "g2": 480.0}
SSIM = {"i0": 0.9, "i1": 0.7, "i2": 0.4, "i3": 0.5}


def invoke(*args: object) -> str:
    res = CliRunner().invoke(build_app(str(args[0])), [str(a) for a in args])
    assert res.exit_code == 0, res.output
    return res.output


def fake_fvd(group: sets.ItemGroup, config: object) -> sets.SetScores:  # no I3D weights in tests
    return sets.SetScores(group=Score(value=FAKE_FVD[group.key]))


@pytest.fixture
def fake_fvd_registered() -> Iterator[None]:
    with SET_METRICS.scratch():  # the real FVD is back after the test
        SET_METRICS.add("iq1_fvd", dataclasses.replace(SET_METRICS.get("iq1_fvd"), fn=fake_fvd), replace=True)
        yield


@pytest.mark.usefixtures("fake_fvd_registered")
def test_export_by_generator_feeds_aggregate(tmp_path: Path) -> None:
    items = []
    for n, gen in enumerate(["g1", "g1", "g2", "g2"]):
        write_video(tmp_path / f"v{n}.mp4", np.full((4, 16, 16, 3), 30 * n, np.uint8), fps=4)
        items.append(Item(item_id=f"i{n}", video=f"v{n}.mp4", reference_video=f"v{n}.mp4", generator=gen))
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps(it.model_dump(exclude_none=True)) + "\n" for it in items))
    run_dir = tmp_path / "run"
    invoke("metrics", "sets", manifest, "--metrics", "iq1_fvd", "--run-dir", run_dir)
    with ResultStore(run_dir / "results.sqlite") as store:  # a per-item taxonomy metric beside it
        assert [p for p, _ in store.manifests()] == [manifest.resolve()]
        # (without a fingerprint: one made up would be stale against the items' inputs, and the export
        # would mark it so)
        store.add([ResultRow(i, "iq1_ssim", "h", "1", "ok", v) for i, v in SSIM.items()])

    out = tmp_path / "long.csv"
    invoke("results", "export", "--db", run_dir / "results.sqlite", "--out", out, "--by", "generator",
           "--suite", manifest)
    long = pd.read_csv(out)
    assert set(long.columns) >= {"item_id", "metric", "value", "generator", "fingerprint"}
    got = sorted(zip(long["generator"], long["metric"], long["value"], strict=True))
    assert got == sorted([("g1", "iq1_fvd", 120.0), ("g2", "iq1_fvd", 480.0)]
                         + [("g1" if i in ("i0", "i1") else "g2", "iq1_ssim", v) for i, v in SSIM.items()])

    # The same values written by hand as a long table give the same scores.
    by_hand = tmp_path / "by_hand.csv"
    pd.DataFrame(got, columns=["generator", "metric", "value"]).to_csv(by_hand, index=False)
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    for src, dst in ((out, a), (by_hand, b)):
        invoke("aggregate", "scores", "--in", src, "--by", "generator", "--missing", "drop", "--out", dst)
    scores, expected = pd.read_csv(a), pd.read_csv(b)
    pd.testing.assert_frame_equal(scores, expected)
    assert list(scores["generator"]) == ["g1", "g2"]
    # IQ-1 holds both metrics; g1 has the better (lower) FVD and the better SSIM, so the higher IQ-1.
    assert scores.loc[0, "subdim_IQ-1"] > scores.loc[1, "subdim_IQ-1"]
