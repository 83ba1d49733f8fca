"""The RoboPhys-3D metric taxonomy (50 metrics, 18 sub-dimensions, 4 levels), loaded from package data.

A low-level module (standard library only) so that both the metric registry and the aggregation layer
can use it; `robojudge.aggregate` re-exports its names.
"""

from __future__ import annotations

import csv
import difflib
import io
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Literal

NormalizationKind = Literal[
    "identity",
    "affine_clip",
    "psnr_anchor",
    "fvd_anchor",
    "one_minus",
    "likert_1_5",
    "divide",
    "divide_clip",
]
_KINDS: frozenset[str] = frozenset(NormalizationKind.__args__)  # type: ignore[attr-defined]

#: Bound source of the metrics whose Table 13 bounds are 1st/99th percentiles of the paper's own pool.
POOL_PERCENTILE_SOURCE = "RoboPhys-3D pool percentiles (1st/99th)"
#: The sub-dimension holding the task-success measures that eq. 3 correlates against.
TASK_SUCCESS_SUBDIM = "TS"
#: The grounding of the metrics a VLM judges (their built-in rubrics have their ids, docs/judges.md).
VLM_GROUNDED = "VLM-Grounded"

_RESOURCE = ("data", "taxonomy", "robophys3d_metrics.csv")
_EXPECTED = {"metrics": 50, "subdims": 18, "levels": 4}


@dataclass(frozen=True)
class MetricSpec:
    """One RoboPhys-3D metric and how its raw value maps onto [0, 1].

    Attributes:
        id: Metric id used throughout robojudge (e.g. ``iq1_fvd``).
        name: Display name from the paper.
        subdim: Sub-dimension code (e.g. ``IQ-1``).
        subdim_name: Sub-dimension display name.
        level: Level number, 1..4.
        level_name: Level display name.
        grounding: Reference-Free, Video-Grounded, VLM-Grounded or Simulator-Grounded.
        higher_is_better: Direction of the raw value.
        normalization: Transform kind (App. B.5).
        lower: Lower bound or anchor used by the transform.
        upper: Upper bound or anchor used by the transform.
        bound_source: Where the bounds come from.
        in_robophyscore: Whether the paper's default RoboPhyscore uses this metric.
    """

    id: str
    name: str
    subdim: str
    subdim_name: str
    level: int
    level_name: str
    grounding: str
    higher_is_better: bool
    normalization: NormalizationKind
    lower: float
    upper: float
    bound_source: str
    in_robophyscore: bool

    @property
    def uses_pool_percentiles(self) -> bool:
        """True for the affine metrics whose published bounds are percentiles of the paper's pool."""
        return self.normalization == "affine_clip" and self.bound_source == POOL_PERCENTILE_SOURCE


@dataclass(frozen=True)
class Taxonomy:
    """The ordered metric list with lookups by sub-dimension and level."""

    metrics: tuple[MetricSpec, ...]
    _by_id: dict[str, MetricSpec] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_id", {m.id: m for m in self.metrics})
        if len(self._by_id) != len(self.metrics):
            raise ValueError("taxonomy has duplicate metric ids")

    def __contains__(self, metric_id: object) -> bool:
        return metric_id in self._by_id

    def __getitem__(self, metric_id: str) -> MetricSpec:
        try:
            return self._by_id[metric_id]
        except KeyError:
            raise KeyError(unknown_metric_message(metric_id, self.ids)) from None

    @property
    def ids(self) -> tuple[str, ...]:
        """Metric ids in taxonomy order."""
        return tuple(m.id for m in self.metrics)

    @property
    def levels(self) -> tuple[int, ...]:
        """Level numbers in ascending order."""
        return tuple(sorted({m.level for m in self.metrics}))

    @property
    def subdims(self) -> tuple[str, ...]:
        """Sub-dimension codes in taxonomy order."""
        return tuple(dict.fromkeys(m.subdim for m in self.metrics))

    def subdims_of(self, level: int) -> tuple[str, ...]:
        """Sub-dimension codes of ``level`` in taxonomy order."""
        return tuple(dict.fromkeys(m.subdim for m in self.metrics if m.level == level))

    def metrics_of(self, subdim: str) -> tuple[str, ...]:
        """Metric ids of sub-dimension ``subdim`` in taxonomy order."""
        ids = tuple(m.id for m in self.metrics if m.subdim == subdim)
        if not ids:
            raise KeyError(f"unknown sub-dimension {subdim!r}; known: {', '.join(self.subdims)}")
        return ids

    def level_of(self, subdim: str) -> int:
        """Level number of sub-dimension ``subdim``."""
        return self[self.metrics_of(subdim)[0]].level

    @property
    def robophyscore_default(self) -> tuple[str, ...]:
        """The eight metrics the paper selects at threshold 0.7 (Sec. 4.3)."""
        return tuple(m.id for m in self.metrics if m.in_robophyscore)

    @property
    def task_success(self) -> tuple[str, ...]:
        """Action Planner, Data Engine and VLM-2: the targets of eq. 3."""
        return self.metrics_of(TASK_SUCCESS_SUBDIM)

    def fed_by_judge(self, metric: str) -> str | None:
        """The VLM-grounded metric a stored judge rubric score feeds: ``judge:NAME:<id>`` where ``<id>``
        is one (the built-in rubric of a VLM-grounded metric has the metric's id, docs/judges.md), else
        None. A user's rubric file that declares ``taxonomy`` says so in its rows' ``details``."""
        if not metric.startswith("judge:"):
            return None
        judge, sep, rubric = metric[len("judge:"):].rpartition(":")  # (a judge's name may hold ':')
        if not sep or not judge or rubric not in self:
            return None
        return rubric if self[rubric].grounding == VLM_GROUNDED else None

    def validate(self) -> None:
        """Check the counts the paper states: 50 metrics, 18 sub-dimensions, 4 levels.

        Raises:
            ValueError: When a count differs or a sub-dimension spans two levels.
        """
        counts = {"metrics": len(self.metrics), "subdims": len(self.subdims), "levels": len(self.levels)}
        if counts != _EXPECTED:
            raise ValueError(f"taxonomy counts {counts} differ from the paper's {_EXPECTED}")
        for sd in self.subdims:
            if len({self[m].level for m in self.metrics_of(sd)}) != 1:
                raise ValueError(f"sub-dimension {sd} spans more than one level")


def unknown_metric_message(metric_id: str, known: tuple[str, ...]) -> str:
    """An error line for an unknown metric id with a "did you mean" hint."""
    close = difflib.get_close_matches(metric_id, known, n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    return f"unknown RoboPhys-3D metric {metric_id!r}{hint}"


def _parse_row(row: dict[str, str], line: int) -> MetricSpec:
    kind = row["normalization"].split(":", 1)[0].strip()
    if kind not in _KINDS:
        raise ValueError(f"robophys3d_metrics.csv line {line}: unknown normalization {kind!r}")
    direction = row["direction"].strip()
    if direction not in ("higher", "lower"):
        raise ValueError(f"robophys3d_metrics.csv line {line}: direction must be higher or lower")
    return MetricSpec(
        id=row["metric_id"],
        name=row["name"],
        subdim=row["subdim"],
        subdim_name=row["subdim_name"],
        level=int(row["level"]),
        level_name=row["level_name"],
        grounding=row["grounding"],
        higher_is_better=direction == "higher",
        normalization=kind,  # type: ignore[arg-type]
        lower=float(row["lower"]),
        upper=float(row["upper"]),
        bound_source=row["bound_source"],
        in_robophyscore=row["in_robophyscore"].strip() == "1",
    )


@cache
def load_taxonomy() -> Taxonomy:
    """The packaged RoboPhys-3D taxonomy, validated and cached.

    Returns:
        The taxonomy in the paper's order (levels 1..4, sub-dimensions as in Table 1).
    """
    text = resources.files("robojudge").joinpath(*_RESOURCE).read_text(encoding="utf-8")
    reader = csv.DictReader(io.StringIO(text))
    tax = Taxonomy(tuple(_parse_row(r, i) for i, r in enumerate(reader, start=2)))
    tax.validate()
    return tax
