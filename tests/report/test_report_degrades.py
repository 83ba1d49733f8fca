"""``robojudge report`` always writes its page, and every section says what it is missing.

Each case goes through the command itself (typer's runner): a judge with only failed or unparsable
rows, generator names that matplotlib or a browser would interpret, two configurations of one metric,
and labels for some generators only.
"""

import csv
import json
import re
from pathlib import Path

import numpy as np
import pytest
import typer
from _report_data import build_items, build_rows
from typer.testing import CliRunner

from robojudge.cli._report import report
from robojudge.store import ResultRow, ResultStore
from robojudge.suite import Item

app = typer.Typer()
app.command("report")(report)
app.command("noop")(lambda: None)

MATH = "a$x^2$b"
BROKEN_MATH = "c$x^$"  # not even valid mathtext
TAG = "<script>alert(1)</script>"


def _write(folder: Path, items: list[Item], rows: list[ResultRow]) -> Path:
    manifest = folder / "suite" / "suite.jsonl"
    manifest.parent.mkdir(parents=True, exist_ok=True)
    (manifest.parent / "v.mp4").write_bytes(b"")
    manifest.write_text("".join(json.dumps(it.model_dump(exclude_none=True, exclude_defaults=True)) + "\n"
                                for it in items))
    with ResultStore(f"sqlite:///{folder / 'results.sqlite'}") as store:
        store.add(rows)
    return folder


def _run(folder: Path, *extra: str) -> tuple[str, Path]:
    res = CliRunner().invoke(app, ["report", str(folder), "--bootstrap", "30", *extra])
    assert res.exit_code == 0, res.output
    index = folder / "report" / "index.html"
    assert index.exists()
    return res.output, index


def _section(page: str, key: str) -> str:
    m = re.search(rf'<section id="{key}">(.*?)</section>', page, re.S)
    assert m, key
    return m.group(1)


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open() as f:
        return list(csv.DictReader(f))


def _err(item: str, metric: str) -> ResultRow:
    return ResultRow(item_id=item, metric=metric, config_hash="down", version="1", status="error",
                     value=None, error="connection refused")


def _unscored(item: str, metric: str) -> ResultRow:
    return ResultRow(item_id=item, metric=metric, config_hash="down", version="1", status="ok",
                     value=float("nan"), details={"parse_error": "no JSON"})


def test_judge_without_any_scored_row(tmp_path):
    items = build_items()
    rows = build_rows(items)
    rows += [_err(it.item_id, "judge:down:pa") for it in items[:20]]
    rows += [_unscored(it.item_id, "judge:down:ia") for it in items[:20]]
    out, index = _run(_write(tmp_path, items, rows))
    page = index.read_text()
    judges = _section(page, "judges")
    assert 'class="skipped"' not in judges
    table = _csv(tmp_path / "report" / "tables" / "judge_coverage.csv")
    coverage = {(r["judge"], r["rubric"]): r for r in table}
    assert coverage["down", "PA"]["failed"] == "20" and coverage["down", "PA"]["scored"] == "0"
    assert coverage["down", "IA"]["unparsable"] == "20"
    assert coverage["vlm", "PA"]["scored"] == str(len(items))
    assert "down" in judges and "no scored" in judges


def test_judge_without_any_scored_row_and_no_labels(tmp_path):
    rows = [r for r in build_rows(build_items()) if not r.metric.startswith("judge:")]
    items = [it.model_copy(update={"labels": None}) for it in build_items()]
    rows += [_err(it.item_id, "judge:down:pa") for it in items]
    out, index = _run(_write(tmp_path, items, rows))
    gens = _section(index.read_text(), "generators")
    assert "down" in gens and "no scored" in gens


def test_generator_names_are_text_everywhere(tmp_path):
    gen_of = {"good": MATH, "mid": TAG, "bad": BROKEN_MATH}
    items = [it.model_copy(update={"generator": gen_of[it.generator]}) for it in build_items()]
    out, index = _run(_write(tmp_path, items, build_rows(build_items())))
    page = index.read_text()
    assert "<script" not in page and "&lt;script&gt;" in page
    for key in ("overview", "generators", "robophys"):
        assert 'class="skipped"' not in _section(page, key), key
    plane = re.search(r'<svg[^>]*data-plot="generator-plane".*?</svg>', page, re.S)
    assert plane
    for name in (MATH, BROKEN_MATH):  # drawn as plain text, not as mathtext
        assert re.search(r">\s*" + re.escape(name) + r"\s*</text>", plane.group(0)), name


def _two_configs(items: list[Item]) -> list[ResultRow]:
    """``flow`` at the default config for every item, and at ``fps=2`` for the first half, with other
    values (the fps=2 ones are ten times larger)."""
    rows = []
    for k, it in enumerate(items):
        pa = it.labels.pa if it.labels else 3
        rows.append(ResultRow(item_id=it.item_id, metric="flow", config_hash="aaaa1111", version="1",
                              status="ok", value=float(pa), config={"fps": None}))
        if k % 2 == 0:
            rows.append(ResultRow(item_id=it.item_id, metric="flow", config_hash="bbbb2222", version="1",
                                  status="ok", value=10.0 * (6 - pa), config={"fps": 2}))
    return rows


def test_two_configs_of_one_metric_are_two_columns(tmp_path):
    items = build_items()
    rows = [r for r in build_rows(items) if r.metric.startswith("judge:")] + _two_configs(items)
    out, index = _run(_write(tmp_path, items, rows))
    tables = tmp_path / "report" / "tables"
    overview = {r["metric"]: r for r in _csv(tables / "summary.csv")}
    assert set(overview) == {"flow [fps=null]", "flow [fps=2]", "judge:vlm:pa", "judge:vlm:ia"}
    assert float(overview["flow [fps=null]"]["good"]) == pytest.approx(5.0)
    assert float(overview["flow [fps=2]"]["good"]) == pytest.approx(10.0)
    agree = {(r["metric"], r["axis"]): r for r in _csv(tables / "metric_agreement.csv")}
    assert float(agree["flow [fps=null]", "PA"]["Pearson r [95% CI]"]) == pytest.approx(1.0)
    # fps=2 falls with PA and this metric has no known direction: the raw correlation, not oriented.
    assert float(agree["flow [fps=2]", "PA"]["Pearson r [95% CI]"]) == pytest.approx(-1.0)
    assert int(agree["flow [fps=2]", "PA"]["n"]) == len(items) // 2 + len(items) % 2
    page = index.read_text()
    assert "flow [fps=2]" in page


def test_labels_for_some_generators_only(tmp_path):
    items = build_items()
    extra = [Item(item_id=f"c{c}-new", video="v.mp4", clip_id=f"c{c}", source="s", generator="new")
             for c in range(12)]
    out, index = _run(_write(tmp_path, items + extra, build_rows(items)))
    board = {r["generator"]: r for r in _csv(tmp_path / "report" / "tables" / "leaderboard.csv")}
    assert board["new"]["rank"] == "not ranked" and board["new"]["P(rank)"] == ""
    assert board["good"]["rank"] == "1"
    assert "new: not ranked" in _section(index.read_text(), "generators")


def test_set_level_rows_stay_out_of_per_item_tables(tmp_path):
    items = build_items()
    rows = build_rows(items) + [
        ResultRow(item_id=f"group:generator={g}", metric="fvd", config_hash="h", version="1", status="ok",
                  value=v) for g, v in (("good", 100.0), ("bad", 300.0))]
    out, index = _run(_write(tmp_path, items, rows))
    overview = {r["metric"]: r for r in _csv(tmp_path / "report" / "tables" / "summary.csv")}
    assert "fvd" not in overview and "(other)" not in next(iter(overview.values()))
    sets = _csv(tmp_path / "report" / "tables" / "set_level.csv")
    assert {(r["item"], r["metric"]) for r in sets} == {("group:generator=good", "fvd"),
                                                        ("group:generator=bad", "fvd")}
    assert np.isclose(sorted(float(r["value"]) for r in sets), [100.0, 300.0]).all()


def test_a_section_that_breaks_costs_only_itself(tmp_path, monkeypatch, caplog):
    from robojudge.report import _html

    def broken(inp):
        raise RuntimeError("unforeseen data")

    builders = [(k, t, broken if k == "metrics" else b) for k, t, b in _html._BUILDERS]
    monkeypatch.setattr(_html, "_BUILDERS", tuple(builders))
    items = build_items()
    out, index = _run(_write(tmp_path, items, build_rows(items)))
    metrics = _section(index.read_text(), "metrics")
    assert "could not be built (RuntimeError: unforeseen data)" in metrics
    assert "Metrics against the labels: not shown" in out and "Judges against the labels: 4 plots" in out
    assert "unforeseen data" in caplog.text
