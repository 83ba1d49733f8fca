"""A small labelled run for the report tests: a manifest, a store and the planted values behind them.

Three generators over 12 clips with planted PA/IA labels. The stored metrics (RoboPhys-3D taxonomy
metrics, one of them constant, a lower-is-better one, sim_task_success) follow the labels with
noise; a judge ``vlm`` scores PA exactly and IA one point high (capped at 5).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from robojudge.store import ResultRow, ResultStore
from robojudge.suite import Item

#: generator -> planted (PA, IA).
GENS = {"good": (5, 5), "mid": (3, 4), "bad": (1, 2)}
N_CLIPS = 12


def _row(item: str, metric: str, value: float) -> ResultRow:
    return ResultRow(item_id=item, metric=metric, config_hash="h", version="1", status="ok", value=value)


def build_items() -> list[Item]:
    return [Item(item_id=f"c{c}-{g}", video="v.mp4", clip_id=f"c{c}", source="s", generator=g,
                 labels={"pa": pa, "ia": ia}) for c in range(N_CLIPS) for g, (pa, ia) in GENS.items()]


def build_rows(items: list[Item], *, judge: bool = True) -> list[ResultRow]:
    rng = np.random.default_rng(0)
    rows = []
    for it in items:
        assert it.labels is not None and it.generator is not None
        pa, ia = GENS[it.generator]
        rows.append(_row(it.item_id, "iq1_ssim", 0.2 * pa - 0.1 + rng.normal(0, 0.02)))  # in [0, 1]
        rows.append(_row(it.item_id, "iq1_psnr", 8.0 * pa + rng.normal(0, 1.0)))
        rows.append(_row(it.item_id, "mq_flow_score", 0.1 * ia + rng.normal(0, 0.02)))
        rows.append(_row(it.item_id, "jitter", -float(ia) + rng.normal(0, 0.3)))
        rows.append(_row(it.item_id, "sim_task_success", 1.0 if pa >= 3 else 0.0))
        # Constant: its pool-percentile bounds are degenerate, so the Table 13 bounds are used.
        rows.append(_row(it.item_id, "cs_collision_count", 0.0))
        if judge:
            rows.append(_row(it.item_id, "judge:vlm:pa", float(pa)))
            rows.append(_row(it.item_id, "judge:vlm:ia", float(min(5, ia + 1))))
    return rows


def write_run(folder: Path, *, judge: bool = True, manifest_name: str = "suite/suite.jsonl"
              ) -> tuple[str, Path]:
    """A run folder: ``results.sqlite`` and the manifest at ``folder/manifest_name``."""
    items = build_items()
    manifest = folder / manifest_name
    manifest.parent.mkdir(parents=True, exist_ok=True)
    (manifest.parent / "v.mp4").write_bytes(b"")  # the loader checks that media exist; none is decoded
    manifest.write_text("".join(json.dumps(it.model_dump(exclude_none=True, exclude_defaults=True)) + "\n"
                                for it in items))
    url = f"sqlite:///{folder / 'results.sqlite'}"
    with ResultStore(url) as store:
        store.add(build_rows(items, judge=judge))
    return url, manifest


def higher_is_better(metric: str) -> bool:
    return metric != "jitter"


def stored_suite(folder: Path, items: list[Item], rows: list[ResultRow]) -> tuple[Path, str]:
    """``folder/suite.jsonl`` of ``items`` (their videos an empty ``v.mp4``) and a store holding
    ``rows``: the manifest and the store's URL."""
    manifest = folder / "suite.jsonl"
    (folder / "v.mp4").write_bytes(b"")
    manifest.write_text("".join(it.model_dump_json(exclude_none=True) + "\n" for it in items))
    db = f"sqlite:///{folder / 'r.sqlite'}"
    with ResultStore(db) as store:
        store.add(rows)
    return manifest, db
