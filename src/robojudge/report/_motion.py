"""Consistency next to motion: the metrics that reward stillness, read beside how much each clip moves.

Pixel, flow, flicker, stability and camera-control consistency measure how little changes from frame
to frame. A clip that barely moves (a frozen copy of an episode, a robot that never starts) is as
consistent as a clip can be, so these metrics rank it above a real rollout in which objects move;
this is what they measure, but it reads as quality. (A clip in which nothing moves at all is left
unscored by them, see docs/metrics.md; a clip that moves a little is not.) The report therefore puts
the clips' motion beside every such metric and flags the low-motion clips.

A clip is *low motion* when no step of ``mq_dynamic_degree`` moved: in none of its ~8 fps frame steps
did the top 5% of the flow exceed VBench's 6 px per 256 px of short side (``details.moving_fraction``
is 0). Checked on 157 real clips (docs/sensitivity.md, "The low-motion rule on real videos"), this
is the one stored measure that separates them: every recorded or generated clip with a moving arm
had at least a tenth of its steps moving, every still image with drawn dots had none. VBench's own
decision (a quarter of the steps) called 26 of 44 recorded DROID episodes not dynamic, and the Flow
Score (``mq_flow_score``) of still images on flat backgrounds reached 0.19 px per frame, four times
the lower WorldArena bound of 0.0531 (RoboPhys-3D App. B.5.1), because DIS spreads the dots' motion
into flat regions. Rows without that detail fall back on the values: dynamic degree 0 and a Flow
Score below 0.0531, or the one of them that is stored.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from robojudge.report._sections import ReportInput, Section
from robojudge.report._series import Series, unscored_reason
from robojudge.report._tables import Cell, Table, text
from robojudge.store import ResultRow

#: Metrics whose best values go to clips in which little changes (docs/metrics.md, "Metrics that reward
#: stillness"). Ids that are not stored are simply absent from the section.
STILLNESS_METRICS: tuple[str, ...] = (
    "pixel_frame_consistency",
    "flow_warp_error",
    "cc_photometric",
    "mq_temporal_flickering",
    "mq_motion_smoothness",
    "rbg_stability",
    "ctg_camera_control",
    "rbg_reprojection_geometric",
    "rbg_reprojection_photometric",
    "clip_frame_consistency",
    "dino_frame_consistency",
    "cc_background",
    "cc_subject",
    "cc_style",
)
#: VBench's per-clip dynamic degree: 0 = not dynamic.
DYNAMIC = "mq_dynamic_degree"
#: Flow Score in px per frame, and the value below which a clip counts as low motion.
FLOW = "mq_flow_score"
FLOW_LOW = 0.0531
#: Flagged clips listed at most (the count says how many there are).
MAX_LISTED = 200


@dataclass(frozen=True)
class ClipMotion:
    """What the stored motion measures say about one clip.

    Attributes:
        dynamic: Its dynamic degree (0 or 1), None when not stored.
        flow: Its Flow Score, None when not stored.
        moving: The share of its dynamic-degree steps above VBench's threshold, None when not stored.
    """

    dynamic: float | None = None
    flow: float | None = None
    moving: float | None = None

    @property
    def low(self) -> bool:
        """No step moved at VBench's threshold; without that share, every stored value says still."""
        if self.moving is not None:
            return self.moving <= 0.0
        says = [] if self.dynamic is None else [self.dynamic < 0.5]
        if self.flow is not None:
            says.append(self.flow < FLOW_LOW)
        return bool(says) and all(says)


def _pick(series: Sequence[Series], metric: str) -> Series | None:
    """The configuration of ``metric`` with the most values (None when the metric is not stored)."""
    found = [s for s in series if s.metric == metric]
    return max(found, key=lambda s: len(s.values)) if found else None


def _moving_shares(rows: Iterable[ResultRow], dyn: Series | None) -> dict[str, float]:
    """``details.moving_fraction`` of the current ok rows of the dynamic-degree series ``dyn``."""
    if dyn is None:
        return {}
    out = {}
    for r in rows:
        if (r.metric, r.config_hash, r.version) != (dyn.metric, dyn.key.config_hash, dyn.key.version):
            continue
        share = (r.details or {}).get("moving_fraction")
        if (r.status == "ok" and r.superseded_at is None and r.item_id in dyn.values
                and isinstance(share, (int, float)) and math.isfinite(share)):
            out[r.item_id] = float(share)
    return out


def clip_motion(series: Sequence[Series], rows: Iterable[ResultRow] = ()) -> dict[str, ClipMotion]:
    """Per item id with a stored motion measure, its :class:`ClipMotion` (``rows``: for the moving share)."""
    dyn, flow = _pick(series, DYNAMIC), _pick(series, FLOW)
    moving = _moving_shares(rows, dyn)
    ids = set(dyn.values if dyn else {}) | set(flow.values if flow else {})
    return {i: ClipMotion(dyn.values.get(i) if dyn else None, flow.values.get(i) if flow else None,
                          moving.get(i)) for i in ids}


def _mean(values: Sequence[float]) -> Cell:
    return Cell(sum(values) / len(values), digits=3) if values else text("")


def consistency_table(stillness: Sequence[Series], motion: Mapping[str, ClipMotion],
                      group_of: Mapping[str, str]) -> Table:
    """Every stillness-rewarding configuration per group, with the motion of the clips it scored."""
    groups = sorted(set(group_of.values()))
    table = Table("consistency_motion", "Consistency metrics next to the motion of the clips they scored",
                  ["metric", "group", "n", "mean", "low-motion clips", "mean without them",
                   "dynamic degree", "flow score"],
                  note="Over the clips each metric scored: its mean, how many of them are low motion "
                  "(no dynamic-degree step above VBench's threshold), its mean over the "
                  "others, and the mean dynamic degree (share of dynamic clips) and Flow Score of those "
                  "clips.")
    for s in stillness:
        for g in groups:
            ids = sorted(i for i in s.values if group_of.get(i) == g)
            if not ids:
                continue
            low = [i for i in ids if i in motion and motion[i].low]
            moving = [s.values[i] for i in ids if i not in low]
            dyn = [d for i in ids if i in motion and (d := motion[i].dynamic) is not None]
            flow = [f for i in ids if i in motion and (f := motion[i].flow) is not None]
            table.add([text(s.label), text(g), text(len(ids)), _mean([s.values[i] for i in ids]),
                       text(len(low)), _mean(moving), _mean(dyn), _mean(flow)])
    return table


def low_motion_table(stillness: Sequence[Series], motion: Mapping[str, ClipMotion],
                     group_of: Mapping[str, str]) -> Table:
    """The low-motion clips, with their motion and the consistency values they were given."""
    flagged = sorted(i for i, m in motion.items() if m.low)
    shown = flagged[:MAX_LISTED]
    note = ("Clips whose stored motion says they barely move: their consistency values say little about "
            "quality. 'unscored' = the metric found nothing moving to measure.")
    if len(flagged) > len(shown):
        note += f" The first {len(shown)} of {len(flagged)}."
    table = Table("low_motion", "Low-motion clips", ["item", "group", "dynamic degree", "flow score",
                                                    "moving steps", "consistency values"], note=note)
    for i in shown:
        m = motion[i]
        values = []
        for s in stillness:
            if i in s.values:
                values.append(f"{s.label}={s.values[i]:.3g}")
            elif i in s.unscored:
                values.append(f"{s.label}=unscored")
        table.add([text(i), text(group_of.get(i, "")), _number(m.dynamic), _number(m.flow), _number(m.moving),
                   text("; ".join(values))])
    return table


def _number(v: float | None) -> Cell:
    return text("") if v is None or math.isnan(v) else Cell(v, digits=3)


def motion_section(inp: ReportInput) -> Section:
    """The stillness-rewarding metrics beside the clips' motion, and the low-motion clips."""
    sec = Section("motion", "Consistency and motion")
    series = list(inp.stored.metrics)
    stillness = [s for s in series if s.metric in STILLNESS_METRICS]
    if not stillness:
        sec.skipped = ("no stored metric rewards stillness (" + ", ".join(STILLNESS_METRICS[:4]) + ", ...)")
        return sec
    motion = clip_motion(series, inp.all_item_rows)
    if not motion:
        stored = [m for m in (DYNAMIC, FLOW) if _pick(series, m) is not None]
        if stored:  # stored, and unscored on every clip (nothing the flow could follow)
            why = unscored_reason(inp.all_item_rows, stored)
            sec.skipped = (f"{' and '.join(stored)} left every clip unscored, so no clip's motion is known"
                           + (f"; the most common reason: {why}" if why else ""))
        else:
            sec.skipped = (f"no motion measure is stored to read the consistency metrics against: score "
                           f"{DYNAMIC} or {FLOW} too (`robojudge score SUITE -m {DYNAMIC},{FLOW}`)")
        return sec
    group_of = inp.group_of
    n_low = sum(m.low for m in motion.values())
    names = ", ".join(s.label for s in stillness)
    sec.intro = (f"These metrics ({names}) give their best values to clips in which little changes, so "
                 "a clip that barely moves (a frozen copy of an episode, a robot that never starts) "
                 "outscores a real rollout on them. A clip counts as low motion when none of the "
                 f"~8 fps steps of its dynamic degree ({DYNAMIC}) moved: the top 5% of the flow never "
                 "exceeded VBench's 6 px per 256 px of short side ('moving steps' 0; rows without that "
                 f"share: dynamic degree 0 and a Flow Score ({FLOW}) below {FLOW_LOW} px per frame). "
                 "VBench's own decision, a quarter of the steps, is not used: recorded robot episodes "
                 "with a moving arm often fall short of it. "
                 f"{n_low} of {len(motion)} clips with a motion measure are low motion.")
    sec.tables.append(consistency_table(stillness, motion, group_of))
    if n_low:
        sec.tables.append(low_motion_table(stillness, motion, group_of))
    return sec
