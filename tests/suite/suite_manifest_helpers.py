"""Canonical manifest rows and writers for every manifest format, shared by the suite tests."""

from __future__ import annotations

import copy
import csv
import json
from pathlib import Path
from typing import Any

Row = dict[str, Any]

# Placeholder media; nothing is decoded during validation, so empty files do.
MEDIA_FILES = (
    "videos/ep1.mp4",
    "videos/ep1_wrist.mp4",
    "videos/ep3.mp4",
    "frames/ep1.png",
    "frames/ep2/000000.jpg",
    "frames/ep2/000001.jpg",
    "real/ep1.mp4",
    "state/ep1.npz",
)

ROWS: list[Row] = [
    {
        "item_id": "ep1",
        "video": "videos/ep1.mp4",
        "instruction": "pick up the red cup and put it on the plate",
        "initial_frame": "frames/ep1.png",
        "reference_video": "real/ep1.mp4",
        "views": {"front": "videos/ep1.mp4", "wrist": "videos/ep1_wrist.mp4"},
        "main_view": "front",
        "source": "droid",
        "clip_id": "droid-0001",
        "generator": "wan2.2",
        "embodiment": "gripper",
        "task": "pick_place",
        "regime": "i2v",
        "prompt_variant": "prefix-1",
        "split": "test",
        "state": "state/ep1.npz",
        "labels": {
            "pa": 4,
            "ia": 3,
            "checklist": {
                "agent_consistency": 2,
                "scene_consistency": 2,
                "interaction_realism": 1,
                "agent_match": 2,
                "object_correctness": 2,
                "goal_completion": 0,
            },
            "evidence": "cup slides through the gripper; never reaches the plate",
            "overall": 6,
            "rater": "r1",
        },
        "meta": {"seed": "3", "fps": "16"},
    },
    {
        "item_id": "ep2",
        "video": "frames/ep2",
        "instruction": "open the drawer",
        "source": "egodex",
        "clip_id": "egodex-17",
        "generator": "cosmos",
        "embodiment": "human_hand",
        "split": "test",
        "labels": {"pa": 2, "rater": "r2"},
    },
    {
        "item_id": "ep3",
        "video": "videos/ep3.mp4",
        "instruction": "wipe the table",
        "source": "droid",
        "clip_id": "droid-0002",
        "generator": "wan2.2",
    },
]


def rows() -> list[Row]:
    """A fresh deep copy of the canonical rows (tests may edit them)."""
    return copy.deepcopy(ROWS)


def flatten(row: Row) -> Row:
    """Dotted-column form of a row (``labels.checklist.agent_match``, ``views.front``, ``meta.seed``)."""
    out: Row = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(f"{prefix}.{k}" if prefix else k, v)
        else:
            out[prefix] = value

    walk("", row)
    return out


def json_cells(row: Row) -> Row:
    """Row with ``labels``, ``views`` and ``meta`` written as JSON object strings."""
    return {k: json.dumps(v) if k in ("labels", "views", "meta") else v for k, v in row.items()}


def write_jsonl(path: Path, rs: list[Row]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rs), encoding="utf-8")
    return path


def write_csv(path: Path, rs: list[Row]) -> Path:
    columns: list[str] = []
    for r in rs:
        columns += [c for c in r if c not in columns]
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=columns, restval="")
        w.writeheader()
        for r in rs:
            w.writerow({k: "" if v is None else v for k, v in r.items()})
    return path


def write_parquet(path: Path, rs: list[Row]) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns: list[str] = []
    for r in rs:
        columns += [c for c in r if c not in columns]
    table = pa.table({c: pa.array([r.get(c) for r in rs]) for c in columns})
    pq.write_table(table, path)
    return path
