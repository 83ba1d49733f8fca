"""``robojudge score`` on a one-item manifest, as a user runs it: what the end-of-run summary prints."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner


def score_one(tmp_path: Path, item_id: str, video: Path, metric: str = "pixel_frame_consistency") -> Any:
    """The CLI's result of scoring ``video`` as item ``item_id`` with ``metric`` into a store under
    ``tmp_path`` (asserted to have exited 0)."""
    from robojudge.cli import build_app

    manifest = tmp_path / "suite.jsonl"
    manifest.write_text(json.dumps({"item_id": item_id, "video": str(video)}) + "\n")
    result = CliRunner().invoke(
        build_app("score"),
        ["score", str(manifest), "-m", metric, "--db", str(tmp_path / "c.sqlite"), "--no-progress"],
    )
    assert result.exit_code == 0, result.output
    return result
