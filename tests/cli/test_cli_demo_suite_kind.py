"""``robojudge demo --suite KIND`` refuses a run folder that holds a demo suite of the other kind."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from robojudge.cli import app
from robojudge.demo import build_demo_suite, check_suite_kind, existing_suite_kind


def _fake_suite(out, kind: str | None):
    suite = out / "suite"
    suite.mkdir(parents=True)
    (suite / "suite.jsonl").write_text("")
    if kind is not None:
        (suite / "SUITE_KIND").write_text(kind + "\n")
    return suite


def test_demo_refuses_a_folder_holding_the_other_suite_kind(tmp_path) -> None:
    suite = _fake_suite(tmp_path / "demo", "sim")
    res = CliRunner().invoke(app, ["demo", "--out", str(tmp_path / "demo"), "--suite", "synthetic",
                                   "--no-progress"])
    assert res.exit_code == 2, res.output
    line = res.output.strip()
    assert line.startswith(f"error: {tmp_path / 'demo'} already holds the sim demo suite")
    assert "another --out" in line and f"remove {tmp_path / 'demo'}" in line and "--suite sim" in line
    assert sorted(p.name for p in suite.iterdir()) == ["SUITE_KIND", "suite.jsonl"]  # untouched
    with pytest.raises(ValueError, match="already holds the sim demo suite"):
        build_demo_suite(suite, "synthetic")


def test_demo_reuses_a_suite_of_the_kind_asked_for_or_any_with_auto(tmp_path) -> None:
    sim = _fake_suite(tmp_path / "a", "sim")
    for kind in ("sim", "auto"):
        check_suite_kind(sim, kind)  # type: ignore[arg-type]
        assert build_demo_suite(sim, kind) == ("sim", sim / "suite.jsonl")  # type: ignore[arg-type]
    old = _fake_suite(tmp_path / "b", None)  # a suite from before the kind marker: synthetic
    assert existing_suite_kind(old) == "synthetic"
    with pytest.raises(ValueError, match="holds the synthetic demo suite"):
        check_suite_kind(old, "sim")
    assert existing_suite_kind(tmp_path / "nothing") is None
