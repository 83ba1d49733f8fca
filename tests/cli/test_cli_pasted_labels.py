"""A configuration label that an error lists reads back as itself when pasted onto the command line.

Two configurations of judge ``mk`` differ in a list setting, so their labels hold JSON with escaped
quotes (``mk [replies=["say \\"no\\""]]``). The error listed them with ``repr``, which doubled each
backslash, and the pasted label named no judge.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.select import selection_scores
from robojudge.store import ResultRow, ResultStore
from robojudge.suite import Item

runner = CliRunner()
REPLIES = ('say "yes"', 'say "no"')


def _items() -> list[Item]:
    return [Item(item_id=f"{g}{c}", video="v.mp4", clip_id=f"c{c}", generator=g, labels={"pa": pa, "ia": pa})
            for c in range(3) for g, pa in (("a", 4), ("b", 2))]


def _rows(items: list[Item]) -> list[ResultRow]:
    rows = []
    for k, reply in enumerate(REPLIES):
        for axis in ("pa", "ia"):
            rows += [ResultRow(it.item_id, f"judge:mk:{axis}", f"h{k}{axis}", "1", "ok", float(k + 1),
                               config={"replies": [reply], "rubric": axis}) for it in items]
        rows += [ResultRow(it.item_id, "flow", f"f{k}", "1", "ok", float(k), config={"replies": [reply]})
                 for it in items]
    return rows


def _choices(message: str) -> list[str]:
    """The labels after ``pick one of:``, read as a shell reads them."""
    listed = " ".join(message.split()).split("pick one of: ", 1)[1]
    return [w.rstrip(";") for w in shlex.split(listed)]


def test_a_listed_judge_label_pasted_back_ranks_by_that_judge(tmp_path: Path) -> None:
    items = _items()
    (tmp_path / "v.mp4").write_bytes(b"")
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps(it.model_dump(exclude_none=True)) + "\n" for it in items))
    db = tmp_path / "r.sqlite"
    with ResultStore(db) as store:
        store.add(_rows(items))
    base = ["leaderboard", "generators", str(manifest), "--db", str(db), "--bootstrap", "0", "--json"]
    refused = runner.invoke(build_app("leaderboard"), [*base, "--scores", "judge:mk"])
    assert refused.exit_code == 2, refused.output
    labels = _choices(refused.stderr)
    assert sorted(labels) == ['mk [replies=["say \\"no\\""]]', 'mk [replies=["say \\"yes\\""]]']
    for label, score in zip(sorted(labels), (2.0, 1.0), strict=True):
        done = runner.invoke(build_app("leaderboard"), [*base, "--scores", f"judge:{label}"])
        assert done.exit_code == 0, done.output
        board = json.loads(done.stdout)
        means = {e["generator"]: e["targets"]["pa"]["score"] for e in board["entries"]}
        assert means == {"a": score, "b": score}


def test_a_listed_metric_label_given_back_selects_by_that_configuration() -> None:
    items = _items()
    with pytest.raises(ValueError, match="pick one of") as info:
        selection_scores("flow", _rows(items), items, higher_is_better=lambda m: True)
    labels = _choices(str(info.value))
    assert len(labels) == 2 and all("\\" in lab for lab in labels)
    for label in labels:
        got = selection_scores(label, _rows(items), items, higher_is_better=lambda m: True).scores
        assert np.all(got == (0.0 if "yes" in label else 1.0))
