"""Trained judges in the judges leaderboard: base / + SFT / + SFT + RL per base model (RoboJudge Table 3)."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import numpy as np

from robojudge.judges import make_judge
from robojudge.report import judges_report, write_judges
from robojudge.store import ResultRow
from robojudge.suite import Item


def _rows(name: str, config: dict[str, Any], pa: Any, ia: Any, items: list[Item]) -> list[ResultRow]:
    out = []
    for axis, values in (("pa", pa), ("ia", ia)):
        cfg = {**config, "rubric": {"id": axis}}
        out += [ResultRow(item_id=it.item_id, metric=f"judge:{name}:{axis}", config_hash=f"{name}-{axis}",
                          version="1", status="ok", value=float(v), config=cfg)
                for it, v in zip(items, values, strict=True)]
    return out


def test_trained_judges_are_laid_out_by_stage(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    n = 30
    pa, ia = rng.integers(1, 6, n), rng.integers(1, 6, n)
    items = [Item(item_id=f"i{k}", video="v.mp4", clip_id=f"c{k}",
                  labels={"pa": int(pa[k]), "ia": int(ia[k])}) for k in range(n)]
    noise = lambda s: np.clip(pa + rng.integers(-s, s + 1, n), 1, 5)  # noqa: E731
    rows: list[ResultRow] = []
    stages = [("qwen-rl", "sft+rl", 0), ("qwen", "base", 3), ("qwen-sft", "sft", 1), ("other", None, 2)]
    for name, stage, spread in stages:
        extra: dict[str, Any] = {"stage": stage, "base_model": "Qwen/Qwen3.5-9B"} if stage else {}
        judge = make_judge({"name": name, "backend": "hf", "model": f"/ckpt/{name}", **extra})
        rows += _rows(name, judge.identity(), noise(spread), np.clip(ia + (spread > 1), 1, 5), items)
    report, table, _, _ = judges_report(rows, items, lambda m: True, bootstrap=0, calibrated=False)
    by = {r.judge: r for r in table}
    assert by["qwen-sft"].stage == "sft" and by["qwen-sft"].base_model == "Qwen/Qwen3.5-9B"
    assert by["other"].stage is None and by["other"].base_model is None
    write_judges(table, report, tmp_path)
    md = (tmp_path / "judges.md").read_text()
    section = md.split("## Training stages")[1]
    lines = [line for line in section.splitlines() if line.startswith("| Qwen/Qwen3.5-9B")]
    assert [line.split("|")[2].strip() for line in lines] == ["base", "+ SFT", "+ SFT + RL"]
    assert [line.split("|")[3].strip() for line in lines] == ["qwen", "qwen-sft", "qwen-rl"]
    assert "other" not in section
    # the stage row's PA r is the judge's own
    r_pa = float(lines[2].split("|")[4].split()[0])
    assert abs(r_pa - report.cells["qwen-rl"]["pa"].stats["pearson"].value) < 1e-3
    with (tmp_path / "judges.csv").open() as f:
        got = {r["judge"]: r for r in csv.DictReader(f)}
    assert got["qwen-rl"]["stage"] == "sft+rl" and got["other"]["stage"] == ""


def test_a_stage_changes_no_other_judge_s_config_hash() -> None:
    plain = make_judge({"name": "j", "backend": "hf", "model": "m"})
    assert "stage" not in plain.identity() and "base_model" not in plain.identity()
    base = make_judge({"name": "j", "backend": "hf", "model": "m", "stage": "base"})
    assert base.identity()["base_model"] == "m"
