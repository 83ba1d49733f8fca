"""`robojudge train export --exclude-clips-of BENCH`: a training export leaves out the clips a benchmark
manifest holds, so a judge is never tested on a clip it was trained on (RoboJudge Sec. 4.1; RoboPhys-3D
App. A.1). The export had no such option (audit gaps F10).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from robojudge.cli import app
from robojudge.train import export_training_data


def _invoke(*args: object) -> Any:
    return CliRunner().invoke(app, ["train", *map(str, args)])


def _bench(tmp_path: Path, clips: list[str | None]) -> Path:
    """A benchmark manifest naming ``clips`` (its videos need not exist: only clip ids are read)."""
    path = tmp_path / "bench.jsonl"
    path.write_text("".join(json.dumps({"item_id": f"b{k}", "video": f"missing/{k}.mp4",
                                        **({"clip_id": c} if c else {})}) + "\n"
                            for k, c in enumerate(clips)))
    return path


def _records(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for s in ("train", "val", "test") if (folder / f"{s}.jsonl").exists()
            for line in (folder / f"{s}.jsonl").read_text().splitlines()]


def test_the_benchmark_clips_are_left_out_and_said(labelled_suite: Path, tmp_path: Path) -> None:
    # 8 clips x 2 generators, each with PA: 16 records; the bench holds c1 and c2 (and a clip and an item
    # without one that the labels do not have), so 4 items go
    bench = _bench(tmp_path, ["c1", "c2", "c2", "elsewhere", None])
    out = tmp_path / "data"
    res = _invoke("export", "--labels", labelled_suite, "--rubric", "pa", "--out", out, "--val", "0.25",
                  "--max-frames", "2", "--exclude-clips-of", bench)
    assert res.exit_code == 0, res.output
    said = " ".join(res.output.split())
    assert f"left out 4 labelled item(s) of 2 clip(s) that {bench} holds (--exclude-clips-of): c1, c2" in said
    records = _records(out)
    assert len(records) == 12
    assert not {r["clip_id"] for r in records} & {"c1", "c2"}
    meta = json.loads((out / "export.json").read_text())
    assert meta["excluded_clips_of"] == str(bench) and meta["excluded_items"] == 4
    assert "left out 4 labelled item(s)" in (out / "README.md").read_text()


def test_the_python_api_lists_the_items_left_out(labelled_suite: Path, tmp_path: Path) -> None:
    summary = export_training_data(labelled_suite, ["pa"], tmp_path / "data",
                                   exclude_clips_of=_bench(tmp_path, ["c3"]))
    assert summary.excluded == ["c3-gen_a", "c3-gen_b"]
    assert sum(summary.records.values()) == 14


def test_a_benchmark_holding_every_clip_leaves_nothing_and_is_refused(labelled_suite: Path,
                                                                      tmp_path: Path) -> None:
    bench = _bench(tmp_path, [f"c{k}" for k in range(8)])
    res = _invoke("export", "--labels", labelled_suite, "--rubric", "pa", "--out", tmp_path / "data",
                  "--exclude-clips-of", bench)
    assert res.exit_code == 2
    said = " ".join(res.output.split())
    assert f"every labelled item is of a clip of {bench} (--exclude-clips-of: 8 clip(s)" in said
    assert not (tmp_path / "data").exists()
    res = _invoke("export", "--labels", labelled_suite, "--rubric", "pa", "--out", tmp_path / "data",
                  "--exclude-clips-of", tmp_path / "nope.jsonl")
    assert res.exit_code == 2 and "nope.jsonl" in res.output
