"""The registry describes only the installed version of a metric: the report says which series of another
version were oriented and bounded by the installed version's direction and native range."""

from __future__ import annotations

from robojudge.metric_info import direction, registry_config_key, registry_range
from robojudge.report import ReportInput
from robojudge.report._sections import overview_section
from robojudge.store import ResultRow
from robojudge.suite import Item

METRIC = "pixel_frame_consistency"


def _input(versions: list[str]) -> ReportInput:
    chash, _ = registry_config_key(METRIC, None)
    items = [Item(item_id=f"c{k}", video="v.mp4", clip_id=f"c{k}", generator="g") for k in range(4)]
    rows = [ResultRow(it.item_id, METRIC, chash, v, "ok", 10.0 + k) for v in versions
            for k, it in enumerate(items)]
    rows += [ResultRow(it.item_id, "judge:mk:pa", "j", "1", "ok", 3.0) for it in items]  # no registry entry
    return ReportInput(rows, items, direction, bootstrap=0, native_range=registry_range,
                       config_key=registry_config_key)


def test_series_of_another_version_are_named_with_the_version_whose_direction_they_took() -> None:
    _, installed = registry_config_key(METRIC, None)
    assert installed != "1"
    sec = overview_section(_input([installed, "1"]))
    said = (f"another version are the installed version's: {METRIC} [v1] (v1: v{installed}'s). Should that "
            "version have changed either")
    assert said in " ".join(sec.intro.split())
    (summary,) = [t for t in sec.tables if t.name == "summary"]
    assert f"{METRIC} [v1] (v1: v{installed}'s)" in summary.note
    assert f"[v{installed}] (v" not in summary.note and "judge:mk" not in summary.note
    # Only the installed version stored (or no way to tell which is installed): nothing to say.
    assert "installed version" not in overview_section(_input([installed])).intro
    bare = _input(["1"])
    bare = ReportInput(bare.rows, bare.items, direction, bootstrap=0)
    assert "installed version" not in overview_section(bare).intro
