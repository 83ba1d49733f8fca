"""suite_info keeps the items without a value apart from a real value spelt ``(unset)``.

The counts name the items that leave a field empty ``(unset)``. A manifest may use that spelling for a
real generator (or source, split, rater): the two used to be one count, 2 + 1 = 3 items under
``(unset)``. The items without a value now take ``(unset 2)`` (``(unset 3)`` when that is taken too),
as the report names them.
"""

from __future__ import annotations

import json
from pathlib import Path

from suite_manifest_helpers import write_jsonl
from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.suite import UNSET, load_suite, suite_info

VIDEO = "videos/ep3.mp4"


def _rows() -> list[dict]:
    # a, b: generator "(unset)", rater "(unset)"; c: no generator, rater r1; d: veo, labels without a rater;
    # e: no generator, no labels. split: "(unset 2)" on a, none elsewhere.
    return [
        {"item_id": "a", "video": VIDEO, "generator": UNSET, "split": "(unset 2)",
         "labels": {"pa": 3, "rater": UNSET}},
        {"item_id": "b", "video": VIDEO, "generator": UNSET, "labels": {"pa": 3, "rater": UNSET}},
        {"item_id": "c", "video": VIDEO, "labels": {"pa": 3, "rater": "r1"}},
        {"item_id": "d", "video": VIDEO, "generator": "veo", "labels": {"pa": 3}},
        {"item_id": "e", "video": VIDEO},
    ]


def test_a_value_spelt_unset_is_counted_apart(media_root: Path) -> None:
    info = suite_info(load_suite(write_jsonl(media_root / "suite.jsonl", _rows())))
    assert info.by_generator == {UNSET: 2, "(unset 2)": 2, "veo": 1}
    assert info.labels.by_rater == {UNSET: 2, "(unset 2)": 1, "r1": 1}
    assert info.by_split == {"(unset)": 4, "(unset 2)": 1}  # no real "(unset)" split: the usual name
    assert info.by_source == {UNSET: 5}


def test_both_names_taken_gives_the_next(media_root: Path) -> None:
    rows = _rows()
    rows[3]["generator"] = "(unset 2)"
    info = suite_info(load_suite(write_jsonl(media_root / "suite.jsonl", rows)))
    assert info.by_generator == {UNSET: 2, "(unset 3)": 2, "(unset 2)": 1}


def test_cli_json(media_root: Path) -> None:
    manifest = write_jsonl(media_root / "suite.jsonl", _rows())
    res = CliRunner().invoke(build_app(), ["suite", "info", str(manifest), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["by_generator"] == {UNSET: 2, "(unset 2)": 2, "veo": 1}
