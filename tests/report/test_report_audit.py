"""The acceleration and sample-size report sections, built from items, rows and results."""

from __future__ import annotations

import numpy as np
import pytest

from robojudge.meta import sample_size_sensitivity
from robojudge.report import ReportInput
from robojudge.report._audit import acceleration_section, sample_size_section, sample_size_table
from robojudge.report._html import build_sections, render_page
from robojudge.store import ResultRow
from robojudge.suite import Item

DIRECTION = {"sharp": True, "jerk": False}


def _higher(metric: str) -> bool:
    return DIRECTION[metric]  # KeyError for an unknown metric, as the report's lookups do


def _data() -> tuple[list[Item], list[ResultRow]]:
    # dense: sharp 4, 6 (mean 5), jerk 1, 3 (mean 2), 10 s per rollout
    # cache: sharp 5, 5 (retention 1), jerk 2, 2 (retention 1): Q 1, 2 s -> speedup 5
    # prune: sharp 2, 3 (2.5/5 = 0.5), jerk 4, 4 (2/4 = 0.5): Q 0.5, 1 s -> speedup 10
    values = {"dense": ((4, 6), (1, 3), 10.0), "cache": ((5, 5), (2, 2), 2.0), "prune": ((2, 3), (4, 4), 1.0)}
    items, rows = [], []
    for gen, (sharp, jerk, secs) in values.items():
        for k in range(2):
            iid = f"c{k}-{gen}"
            meta = {"generation_seconds": secs} | ({} if gen == "dense" else {"accelerates": "dense"})
            items.append(Item(item_id=iid, video=f"{iid}.mp4", generator=gen, clip_id=f"c{k}", meta=meta))
            for metric, v in (("sharp", sharp[k]), ("jerk", jerk[k]), ("mystery", 1.0)):
                rows.append(ResultRow(item_id=iid, metric=metric, config_hash="h", version="1", status="ok",
                                      value=float(v)))
    return items, rows


def test_acceleration_section_from_declared_generators() -> None:
    items, rows = _data()
    sec = acceleration_section(ReportInput(rows, items, _higher, bootstrap=100))
    assert sec.skipped is None
    frontier, retention = sec.tables
    by_method = {r[0].text: r for r in frontier.rows}
    assert list(by_method) == ["dense", "cache", "prune"]
    speed_q = {m: (r[1].value, r[4].value) for m, r in by_method.items()}
    assert speed_q == {"dense": (1.0, 1.0), "cache": pytest.approx((5.0, 1.0)),
                       "prune": pytest.approx((10.0, 0.5))}
    assert by_method["cache"][6].text == "best"  # largest speedup with Q >= 0.95
    # dense is dominated by cache (as good, faster): off the frontier
    assert by_method["dense"][5].text == "" and by_method["prune"][5].text == "yes"
    assert {r[1].text for r in retention.rows} == {"sharp", "jerk"}  # "mystery" has no known direction
    assert sec.plots and sec.plots[0].startswith("<svg") and "frontier-dense" in sec.plots[0]
    page = render_page([sec], title="t", source="s")
    assert "Acceleration audit" in page and "cache" in page


def test_acceleration_section_says_why_it_is_empty() -> None:
    items, rows = _data()
    plain = [it.model_copy(update={"meta": {}}) for it in items]
    sec = acceleration_section(ReportInput(rows, plain, _higher))
    assert sec.skipped is not None and "meta.accelerates" in sec.skipped
    keys = [s.key for s in build_sections(ReportInput(rows, items, _higher, bootstrap=20))]
    assert "acceleration" in keys


def test_sample_size_section_renders() -> None:
    rng = np.random.default_rng(0)
    feats = {"a": rng.normal(size=(30, 2)), "b": rng.normal(1.0, size=(12, 2))}
    result = sample_size_sensitivity(feats, lambda x: float(np.abs(x.mean(axis=0)).sum()), [2, 8, 20],
                                     draws=20)
    sec = sample_size_section(result, "FVD", features="test")
    table = sec.tables[0]
    assert [r[0].text for r in table.rows] == ["a", "b", "flip share", "flip share per draw",
                                                "generator pairs compared"]
    assert table.rows[1][5].text == ""  # b has 12 windows: no subset of 20 without replacement
    assert [c.text for c in table.rows[4][3:]] == ["1", "1", "0"]  # so no pair compares at 20
    # A result built without the pair counts (its field's default) still makes a table, without the row.
    from dataclasses import replace

    bare = sample_size_table(replace(result, pairs=()))
    assert [r[0].text for r in bare.rows][-1] == "flip share per draw"
    assert sec.plots[0].startswith("<svg")
    assert "sample-size" in render_page([sec], title="t", source="s")


def test_generator_names_stay_out_of_file_paths(tmp_path) -> None:
    from robojudge.meta import GenerationCost, acceleration_audit
    from robojudge.report import frontier_table

    scores = {g: {"sharp": {"c1": 1.0, "c2": 2.0}} for g in ("../../evil dense", "fast")}
    audit = acceleration_audit("../../evil dense", scores, {"sharp": True},
                               {"fast": GenerationCost(seconds=1.0)}, ["fast"], bootstrap=0)
    written = frontier_table(audit).write(tmp_path / "tables")
    assert all(p.parent == tmp_path / "tables" for p in written)
    assert written[0].name.startswith("acceleration_evil_dense-") and written[0].suffix == ".csv"


def test_two_dense_generators_never_share_a_table_file_and_long_names_fit(tmp_path) -> None:
    # "x y" and "x_y" wrote the same acceleration_x_y.* files (the first audit's tables were lost), and a
    # 250-character name stopped the report with "File name too long".
    from robojudge.meta import GenerationCost, acceleration_audit
    from robojudge.report import frontier_table

    names: list[str] = []
    for dense in ("x y", "x_y", "d" * 250):
        scores = {g: {"sharp": {"c1": 1.0, "c2": 2.0}} for g in (dense, "fast")}
        audit = acceleration_audit(dense, scores, {"sharp": True}, {"fast": GenerationCost(seconds=1.0)},
                                   ["fast"], bootstrap=0)
        names += [p.name for p in frontier_table(audit).write(tmp_path / "tables")]
    assert len(names) == len(set(names)) and "acceleration_x_y.csv" in names
    assert max(len(n) for n in names) < 100


def test_generators_named_alike_but_for_case_get_files_apart_where_case_is_ignored(tmp_path) -> None:
    # "Wan" and "wan" wrote acceleration_Wan.* and acceleration_wan.*: one file on macOS and Windows,
    # where the second audit's tables replaced the first's and the list still named both.
    from robojudge.meta import GenerationCost, acceleration_audit
    from robojudge.report import frontier_table
    from robojudge.report._audit import retention_table

    names: list[str] = []
    for dense in ("Wan", "wan", "WAN"):
        scores = {g: {"sharp": {"c1": 1.0, "c2": 2.0}} for g in (dense, "fast")}
        audit = acceleration_audit(dense, scores, {"sharp": True}, {"fast": GenerationCost(seconds=1.0)},
                                   ["fast"], bootstrap=0)
        names += [p.name for t in (frontier_table(audit), retention_table(audit))
                  for p in t.write(tmp_path / "tables")]
    assert len({n.casefold() for n in names}) == len(names) == 18, names
    assert "acceleration_wan.csv" in names  # a lower-case plain name is kept as it is
    assert len(list((tmp_path / "tables").iterdir())) == 18
