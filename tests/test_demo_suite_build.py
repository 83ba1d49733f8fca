"""The demo suite is built whole or not at all: a build killed half-way is built again, never reused."""

from __future__ import annotations

from pathlib import Path

from robojudge.demo import build_demo_suite
from robojudge.suite import load_suite


def test_a_build_killed_half_way_is_built_again(tmp_path: Path) -> None:
    folder = tmp_path / "suite"
    (folder / "videos").mkdir(parents=True)
    (folder / "videos" / "half.mp4").write_bytes(b"a video cut short by the kill")
    (folder / "SUITE_KIND").write_text("synthetic\n")  # the kind is written first; no manifest yet
    kind, manifest = build_demo_suite(folder, "synthetic", seed=0)
    assert kind == "synthetic" and manifest == folder / "suite.jsonl"
    suite = load_suite(manifest)  # strict: every row valid, every file there
    assert len(suite.items) > 0 and not suite.problems
    assert not list(folder.glob("*.partial"))  # the manifest was written whole and renamed into place
    assert (folder / "SUITE_KIND").read_text().strip() == "synthetic"
    # A finished build is reused as it is.
    stamp = manifest.stat().st_mtime_ns
    assert build_demo_suite(folder, "synthetic", seed=0) == (kind, manifest)
    assert manifest.stat().st_mtime_ns == stamp
