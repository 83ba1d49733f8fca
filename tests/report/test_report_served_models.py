"""A judge configuration whose rows were answered by two models as the server named them is warned of:
the judge's identity has no endpoint, so the rows look like one judge's."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from _report_data import build_items, build_rows
from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.report import ReportInput
from robojudge.report._label_sections import judges_section
from robojudge.run._status import results_status
from robojudge.store import ResultStore, served_models


def _answered(row, model: str):  # type: ignore[no-untyped-def]
    turns = [{"score": row.value, "response": {"id": "r1", "model": model}}]
    return dataclasses.replace(row, details={"judge": "vlm", "turns": turns})


def _rows():  # type: ignore[no-untyped-def]
    # The first 20 items answered by weightsA, the other 16 by weightsB, on both rubrics.
    items = build_items()
    first = {it.item_id for it in items[:20]}
    rows = [_answered(r, "weightsA" if r.item_id in first else "weightsB") if r.metric.startswith("judge:")
            else r for r in build_rows(items)]
    return items, rows


def test_served_models_reads_each_turns_reply() -> None:
    turns = [{"response": {"model": "b"}}, {"response": {"model": "a"}}, {"response": {"model": "b"}},
             {"response": {}}, {"error": "timeout"}]
    assert served_models({"turns": turns}) == ["b", "a"]
    assert served_models(None) == [] and served_models({"turns": "?"}) == []


def test_the_judges_section_warns_of_two_served_models_under_one_configuration() -> None:
    items, rows = _rows()
    sec, _ = judges_section(ReportInput(rows, items, lambda m: m != "jitter", bootstrap=0))
    intro = " ".join(sec.intro.split())
    assert ("Warning: vlm: its rows were answered by 2 models as the server named them (weightsA in 40 rows, "
            "weightsB in 32 rows)") in intro
    # One model throughout: nothing to say.
    same = [_answered(r, "weightsA") if r.metric.startswith("judge:") else r for r in rows]
    sec, _ = judges_section(ReportInput(same, items, lambda m: m != "jitter", bootstrap=0))
    assert "Warning" not in sec.intro


def test_results_status_names_the_models_and_their_rows(tmp_path: Path) -> None:
    items, rows = _rows()
    manifest = tmp_path / "suite.jsonl"
    (tmp_path / "v.mp4").write_bytes(b"")
    manifest.write_text("".join(it.model_dump_json(exclude_none=True) + "\n" for it in items))
    db = tmp_path / "run" / "results.sqlite"
    with ResultStore(db) as store:
        store.add(rows)
    with ResultStore(db, read_only=True) as store:
        status = results_status(store, items)
    assert status.served_models[("judge:vlm:pa", "h", "1")] == {"weightsA": 20, "weightsB": 16}
    res = CliRunner().invoke(build_app("results"), ["results", "status", str(manifest), "--db", str(db)])
    assert res.exit_code == 0, res.output
    said = " ".join(res.output.split())
    assert ("warning: judge:vlm:pa [h]: its current rows were answered by 2 models as the server named them "
            "(weightsA in 20 rows, weightsB in 16 rows)") in said
    res = CliRunner().invoke(build_app("results"), ["results", "status", str(manifest), "--db", str(db),
                                                    "--json"])
    (pa,) = [m for m in json.loads(res.stdout)["metrics"] if m["metric"] == "judge:vlm:pa"]
    assert pa["served_models"] == {"weightsA": 20, "weightsB": 16}
