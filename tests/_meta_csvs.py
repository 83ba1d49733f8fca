"""Judge and human score CSVs for the ``meta agreement`` tests: 40 items in 20 clips over 3 sources,
PA and IA; the first judge is within one point of the humans, the second random with one blank."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def write_agreement_csvs(folder: Path, judges: tuple[str, str] = ("good", "bad")) -> tuple[Path, Path]:
    """``(pred.csv, human.csv)`` written in ``folder`` (the same values whatever the judges' names)."""
    rng = np.random.default_rng(0)
    human, pred = ["item_id,axis,score,clip_id,source"], ["judge,item_id,axis,score"]
    for i in range(40):
        for axis in ("pa", "ia"):
            h = int(rng.integers(1, 6))
            human.append(f"v{i},{axis},{h},clip{i // 2},src{(i // 2) % 3}")
            pred.append(f"{judges[0]},v{i},{axis},{min(5, max(1, h + int(rng.integers(-1, 2))))}")
            pred.append(f"{judges[1]},v{i},{axis},{'' if i == 0 else int(rng.integers(1, 6))}")
    (folder / "human.csv").write_text("\n".join(human) + "\n")
    (folder / "pred.csv").write_text("\n".join(pred) + "\n")
    return folder / "pred.csv", folder / "human.csv"
