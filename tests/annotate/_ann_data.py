"""The annotation tests' small suite and helpers, in a module of their own: ``from conftest import``
finds whichever test folder's conftest.py was imported first (tests/kiva/_kiva_consts.py says the same)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from robojudge.video import write_video

GENERATORS = ("secret-gen-alpha", "secret-gen-beta")
N_ITEMS = 6
FPS = 4
SECONDS = 7  # three RoboWorM segments of 3 s: 0-3, 3-6, 6-7


@dataclass(frozen=True)
class SuiteFiles:
    manifest: Path
    root: Path
    item_ids: tuple[str, ...]


def make_suite(root: Path, n: int = N_ITEMS) -> SuiteFiles:
    """``n`` tiny clips (7 s at 4 fps); item 0 has two views; every item an instruction and initial frame."""
    (root / "videos").mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    records = []
    for k in range(n):
        item_id = f"clip{k // 2}-{GENERATORS[k % 2]}"
        frames = rng.integers(0, 255, size=(SECONDS * FPS, 16, 16, 3), dtype=np.uint8)
        write_video(root / "videos" / f"{item_id}.mp4", frames, fps=FPS)
        cv2.imwrite(str(root / "videos" / f"{item_id}_first.png"), frames[0])
        rec = {
            "item_id": item_id,
            "video": f"videos/{item_id}.mp4",
            "instruction": f"put the cup {k} on the plate",
            "initial_frame": f"videos/{item_id}_first.png",
            "generator": GENERATORS[k % 2],
            "clip_id": f"clip{k // 2}",
            "source": "droid" if k < 4 else "egodex",
        }
        if k == 0:
            write_video(root / "videos" / f"{item_id}_wrist.mp4", frames, fps=FPS)
            rec["views"] = {"front": rec["video"], "wrist": f"videos/{item_id}_wrist.mp4"}
            rec["main_view"] = "front"
        records.append(rec)
    manifest = root / "suite.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return SuiteFiles(manifest, root, tuple(r["item_id"] for r in records))


SQLITE_ONLY = pytest.mark.parametrize("db_backend", ["sqlite"])
"""For tests whose subject does not depend on the database (PostgreSQL adds time, not coverage)."""


PA_FIELDS = (
    "pa",
    "checklist.agent_consistency",
    "checklist.scene_consistency",
    "checklist.interaction_realism",
)


def label_through(svc: Any, who: Any, aid: str, values: dict[str, Any]) -> None:
    """Label one task as the app does: PA and its checklist first, then the instruction, then submit.

    Segment verdicts beyond the item's segments are dropped, so one dict fits every item.
    """
    from robojudge.annotate import LabelValues

    page = svc.task(who, aid)
    # Segment verdicts only for the segments this item has (multi-view items have none).
    values = {
        k: v for k, v in values.items() if not k.startswith("segments.") or int(k[9:]) < len(page.segments)
    }
    if page.stage == "pa":
        pa = {k: v for k, v in values.items() if k in PA_FIELDS}
        svc.save_draft(who, aid, LabelValues.from_form(pa), page.version)
        page = svc.reveal_instruction(who, aid)
    svc.submit(who, aid, LabelValues.from_form(values), page.version)
