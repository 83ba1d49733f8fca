"""The set-level metric API: registration, grouping, rows, errors, CSV (toy metrics, no networks)."""

import csv
import json
import math

import pytest

from robojudge.metrics import METRICS, SET_METRICS, MetricInputError, UnknownMetricError, get_metric
from robojudge.metrics import _sets as sets
from robojudge.metrics._score import Score
from robojudge.metrics._select import expand_metric_ids, not_run_summary
from robojudge.suite import Item


@pytest.fixture
def toy():
    # Registered in scratch registries: the toy metrics are gone after the test.
    with METRICS.scratch(), SET_METRICS.scratch():
        _register_toys()
        yield


def _register_toys():
    @sets.set_metric("toy_group_mean", output="group", family="features", inputs={"video"},
                     higher_is_better=True, native_range=(0.0, None), citation="toy", description="mean of x",
                     provider="computed", min_items=2)
    def group_mean(group, config):
        if group.key == "boom":
            raise RuntimeError("kaput")
        xs = [it.meta["x"] for it in group.items]
        return sets.SetScores(group=Score(value=sum(xs) / len(xs)), warnings=["small"] if len(xs) < 3 else [])

    @sets.set_metric("toy_item_rank", output=sets.SetOutput.item, family="features", inputs={"video"},
                     higher_is_better=False, native_range=(0.0, None), citation="toy", description="rank",
                     provider="computed")
    def item_rank(group, config):
        refs = group.references(scope="all")
        out = {it.item_id: Score(value=float(i), details={"refs": len(refs)})
               for i, it in enumerate(group.items) if it.meta["x"] >= 0}
        if any(it.meta["x"] == -9 for it in group.items):
            raise MetricInputError("bad input in group")
        return sets.SetScores(items=out)

    return None


def items():
    spec = [("a", "g1", 1.0, "r1.mp4"), ("b", "g1", 3.0, "r1.mp4"), ("c", "g2", 5.0, "r2.mp4"),
            ("d", "g2", -1.0, None), ("e", "boom", 0.0, "r3.mp4"), ("f", "boom", 0.0, "r1.mp4")]
    return [Item(item_id=i, video=f"{i}.mp4", generator=g, reference_video=r, meta={"x": x})
            for i, g, x, r in spec]


def test_group_rows_and_errors(toy):
    rows = sets.score_sets(items(), ["toy_group_mean"], by="generator")
    by = {r.group: r for r in rows}
    assert [r.item_id for r in rows] == [None, None, None]
    assert by["g1"].value == 2.0 and by["g1"].warning == "small" and by["g1"].n_items == 2
    assert by["g1"].n_references == 1  # r1.mp4 counted once for items a and b
    assert by["g2"].value == 2.0 and by["g2"].status == "ok"
    assert by["boom"].status == "error" and math.isnan(by["boom"].value)
    assert "RuntimeError: kaput" in by["boom"].error


def test_min_items_and_one_group(toy):
    rows = sets.score_sets(items()[:3], ["toy_group_mean"], by="item_id")
    assert {r.status for r in rows} == {"error"}
    assert "needs at least 2 items per group, group 'a' has 1" in rows[0].error
    (row,) = sets.score_sets(items()[:4], ["toy_group_mean"], by=None)
    assert row.group == "all" and row.value == pytest.approx((1 + 3 + 5 - 1) / 4) and row.n_references == 2


def test_item_rows(toy):
    rows = sets.score_sets(items()[:4], ["toy_item_rank"], by="generator")
    got = {r.item_id: r for r in rows}
    assert got["a"].value == 0.0 and got["b"].value == 1.0 and got["c"].value == 0.0
    assert got["a"].details == {"refs": 2}  # the whole manifest's distinct references: r1, r2
    assert got["d"].status == "error" and "gave no value for item 'd'" in got["d"].error
    bad = items()[:2] + [items()[2].model_copy(update={"meta": {"x": -9}})]
    rows = sets.score_sets(bad, ["toy_item_rank"], by="generator")
    assert [(r.item_id, r.status) for r in rows if r.group == "g2"] == [("c", "error")]
    assert rows[-1].error == "bad input in group"


def test_registry_entry_and_per_item_stub(toy):
    spec = get_metric("toy_group_mean")
    assert spec.description.startswith("[set-level, one value per group]")
    assert sets.is_set_metric("toy_group_mean") and not sets.is_set_metric("pixel_frame_consistency")
    with pytest.raises(MetricInputError, match="set-level metric.*robojudge metrics sets"):
        spec.compute(items()[0])
    assert "toy_group_mean" not in expand_metric_ids(["all"])
    assert any("set-level" in line and "toy_group_mean" in line for line in not_run_summary())


def test_bad_requests(toy):
    with pytest.raises(UnknownMetricError, match="did you mean|Did you mean"):
        sets.score_sets(items(), ["toy_group_maen"])
    with pytest.raises(ValueError, match="per-item metric"):
        sets.score_sets(items(), ["pixel_frame_consistency"])
    with pytest.raises(ValueError, match="not an item field"):
        sets.score_sets(items(), ["toy_group_mean"], by="colour")
    with pytest.raises(ValueError, match="already registered"):
        sets.set_metric("toy_group_mean", output="group", family="features", inputs={"video"},
                        higher_is_better=True, native_range=(0, 1), citation="c",
                        description="d")(lambda g, c: None)
    with pytest.raises(ValueError, match="taxonomy id"):
        sets.set_metric("ts_data_engine", output="group", family="features", inputs={"video"},
                        higher_is_better=False, description="d")(lambda g, c: None)


def test_write_csv_and_jsonl(toy, tmp_path):
    rows = sets.score_sets(items(), ["toy_group_mean"], by="generator")
    out = sets.write_set_rows(rows, tmp_path / "sets.csv")
    with out.open() as fh:
        back = list(csv.DictReader(fh))
    assert [b["group"] for b in back] == ["g1", "g2", "boom"]
    assert float(back[0]["value"]) == 2.0 and back[2]["status"] == "error"
    lines = sets.write_set_rows(rows, tmp_path / "sets.jsonl").read_text().splitlines()
    assert len(lines) == 3 and '"group": "g1"' in lines[0]


def test_jsonl_is_strict_json(tmp_path):
    # An error row's NaN value and a non-finite detail were written as NaN and Infinity, which strict
    # JSON readers (jq, JavaScript, Go) refuse.
    rows = [sets.SetRow("m", "g", None, "error", float("nan"), error="too few",
                        details={"a": float("inf"), "b": [1.0, float("-inf")]})]
    (line,) = sets.write_set_rows(rows, tmp_path / "sets.jsonl").read_text().splitlines()
    back = json.loads(line, parse_constant=lambda c: pytest.fail(f"non-standard JSON {c}"))
    assert back["value"] is None and back["details"] == {"a": None, "b": [1.0, None]}
    out = sets.write_set_rows(rows, tmp_path / "sets.csv")
    with out.open() as fh:
        (cell,) = list(csv.DictReader(fh))
    details = json.loads(cell["details"], parse_constant=lambda c: pytest.fail(c))
    assert details == {"a": None, "b": [1.0, None]}
    assert cell["value"] == ""  # no value: an empty cell, as every robojudge CSV writes it (was "nan")


def test_stub_specs_pickle_for_worker_processes():
    import pickle

    for mid in ("vjepa_manifold_similarity", "ts_action_planner"):  # a set-level entry and a catalog stub
        spec = pickle.loads(pickle.dumps(get_metric(mid)))
        with pytest.raises(MetricInputError, match=mid):
            spec.compute(items()[0])


def test_write_csv_escapes_cells_a_spreadsheet_would_run(tmp_path):
    from robojudge.store import SafeCsvWriter

    rows = [sets.SetRow(metric="m", group="=HYPERLINK(1)", item_id="-take,1", status="ok", value=-0.5)]
    out = sets.write_set_rows(rows, tmp_path / "sets.csv")
    with out.open() as fh:
        (back,) = list(csv.DictReader(fh))
    assert (back["group"], back["item_id"], back["value"]) == ("'=HYPERLINK(1)", "'-take,1", "-0.5")
    assert SafeCsvWriter.unescape(back["group"]) == "=HYPERLINK(1)"
