"""KIVA by generator: the mean of the stored ``kiva`` values and the share of invalid segments, pooled.

A video's ``kiva`` is already a percentage of its segments, so the mean over a generator's videos
weighs a short video like a long one; the pooled share counts every measured segment once. Both are
shown. The rows are split by the robot the reader reads (``details.robot``), since each robot's
thresholds are its own, by stored configuration (config hash and version): a video scored under two
settings, or by two versions, is counted once in each, never pooled; and by the rules its reader's
calibration judged it with: a reader calibrated for an older measure follows older rules, marked.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from robojudge.kiva import MEASURE_VERSION, OLDER_RULES
from robojudge.report._sections import ReportInput, Section
from robojudge.report._series import unscored_reason
from robojudge.report._tables import Cell, Table, text
from robojudge.store import ResultRow
from robojudge.suite import Item

KIVA = "kiva"


@dataclass(frozen=True)
class KivaGroup:
    """One robot's KIVA over one group's videos.

    Attributes:
        robot: The robot its reader reads.
        group: The group (a generator, say).
        config: The configuration its rows are stored under: ``<config hash, 8> v<version>``.
        videos: Videos with a KIVA value.
        mean: Mean of their ``kiva`` (percent of a video's segments invalid).
        segments: Measured segments over those videos.
        invalid: Of them, invalid by rigidity or jerk.
        rigidity_judged: Segments with a rigidity verdict.
        rigidity_invalid: Of them, invalid by rigidity.
        jerk_judged: Segments with a jerk verdict.
        jerk_invalid: Of them, invalid by jerk.
        calibration: Empty when the reader's calibration is of the current measure; else the measure
            version it was drawn for and the older rules its rows were judged by (:func:`older_calibration`).
    """

    robot: str
    group: str
    config: str
    videos: int
    mean: float
    segments: int
    invalid: int
    rigidity_judged: int
    rigidity_invalid: int
    jerk_judged: int
    jerk_invalid: int
    calibration: str = ""

    @property
    def share(self) -> float:
        """Percentage of the measured segments that are invalid (NaN: none measured)."""
        return 100.0 * self.invalid / self.segments if self.segments else math.nan

    @property
    def rigidity_share(self) -> float:
        return 100.0 * self.rigidity_invalid / self.rigidity_judged if self.rigidity_judged else math.nan

    @property
    def jerk_share(self) -> float:
        return 100.0 * self.jerk_invalid / self.jerk_judged if self.jerk_judged else math.nan


# Rows stored before they named their calibration (``calibration_version``, ``older_rules``) tell their
# older rules by the keys each measure version added to the details: (key, older value, rule).
_OLDER_DETAILS = (("part_scales", False, "scales"), ("link_lengths", "pixel", "lengths"),
                  ("jerk_windows", "centre", "jerk_windows"))


def older_calibration(details: dict[str, Any]) -> str:
    """``""`` for a ``kiva`` row judged by today's rules; else ``"v5: pixel link lengths, ..."``: the
    measure version the reader's calibration was drawn for (``older than v8`` where a row stored before
    it was named does not tell) and the older rules it was judged by."""
    rules = details.get("older_rules")
    if isinstance(rules, list):
        version = details.get("calibration_version")
        return f"v{version}: {', '.join(map(str, rules))}" if rules else ""
    rules = [OLDER_RULES[key] for name, old, key in _OLDER_DETAILS
             if name in details and details[name] == old]
    if "calibrated before measure version" in str(details.get("recognition") or ""):
        rules.append(OLDER_RULES["confidence"])
    return f"older than v{MEASURE_VERSION}: {', '.join(rules)}" if rules else ""


def _counts(segments: Sequence[dict[str, Any]], key: str) -> tuple[int, int]:
    judged = [s[key] for s in segments if s.get(key) is not None]
    return len(judged), sum(bool(v) for v in judged)


def kiva_groups(rows: Sequence[ResultRow], items: Sequence[Item], by: str = "generator",
                configs: Collection[tuple[str, str]] | None = None) -> list[KivaGroup]:
    """KIVA per (robot, configuration, group) from the current ``kiva`` rows of ``items`` scored with a
    finite value.

    ``by`` is an item attribute (``generator``, ``embodiment``, ...); items without it are left out.
    ``configs``: only rows of these ``(config hash, version)`` (the demo shows what it scored now, not
    the rows an earlier robojudge stored beside them). Sorted by robot, configuration, then group.
    """
    group_of: dict[str, str] = {}
    for it in items:
        g = getattr(it, by, None)
        if g is not None:
            group_of[it.item_id] = str(getattr(g, "value", g))
    acc: dict[tuple[str, str, str, str], list[Any]] = {}
    for r in rows:
        if (r.metric != KIVA or r.status != "ok" or r.superseded_at is not None or r.value is None
                or not math.isfinite(r.value) or r.item_id not in group_of
                or (configs is not None and (r.config_hash, r.version) not in configs)):
            continue
        d = r.details or {}
        segs = [s for s in d.get("segments") or [] if isinstance(s, dict)]
        key = (str(d.get("robot", "?")), f"{r.config_hash[:8]} v{r.version}", group_of[r.item_id],
               older_calibration(d))
        a = acc.setdefault(key, [0, 0.0, 0, 0, 0, 0, 0, 0])
        measured, bad = _counts(segs, "invalid")
        rig = _counts(segs, "rigidity_invalid")
        jerk = _counts(segs, "jerk_invalid")
        for i, v in enumerate((1, r.value, measured, bad, *rig, *jerk)):
            a[i] += v
    return [
        KivaGroup(robot, group, config, a[0], a[1] / a[0], a[2], a[3], a[4], a[5], a[6], a[7], older)
        for (robot, config, group, older), a in sorted(acc.items())
    ]


def _pct(v: float) -> Cell:
    return Cell(v, digits=1)


def kiva_table(groups: Sequence[KivaGroup], by: str = "generator") -> Table:
    """The groups as a report table (lower is better in every numeric column but the counts); a
    ``config`` column when the rows come from several stored configurations."""
    several = len({g.config for g in groups}) > 1
    older = any(g.calibration for g in groups)
    note = ("mean kiva: the mean over videos of each video's share of invalid segments; invalid %: every "
            "measured segment of the group counted once (invalid by rigidity or jerk)")
    if several:
        note += ("; config: the stored configuration (config hash and version), each counted apart: a "
                 "video scored under two is in both")
    if older:
        note += (f"; calibration: a reader calibrated for an older measure than today's (v{MEASURE_VERSION}) "
                 "judged these rows by the older rules named, so they do not compare with current rows; "
                 "`robojudge kiva calibrate` on the reader, then `robojudge score`, judges them by today's")
    table = Table(
        "kiva", f"KIVA by {by} (percent of 16-frame segments invalid; lower is better)",
        ["robot", *(["config"] if several else []), by, *(["calibration"] if older else []), "videos",
         "mean kiva", "segments", "invalid %", "rigidity invalid %", "jerk invalid %"],
        note=note,
    )
    for g in groups:
        table.add([text(g.robot), *([text(g.config)] if several else []), text(g.group),
                   *([text(g.calibration or "current")] if older else []), text(g.videos),
                   _pct(g.mean), text(g.segments), _pct(g.share), _pct(g.rigidity_share),
                   _pct(g.jerk_share)])
    return table


def kiva_section(inp: ReportInput) -> Section:
    """The report's KIVA section: per robot and generator, when ``kiva`` results are stored."""
    sec = Section("kiva", "Kinematic stability (KIVA)")
    groups = kiva_groups(inp.item_rows, inp.items) if inp.items else []
    if not groups:
        why = unscored_reason(inp.all_item_rows, [KIVA])
        if why is not None and not any(r.metric == KIVA and r.status == "ok" and r.value is not None
                                       and math.isfinite(r.value) for r in inp.all_item_rows):
            sec.skipped = f"kiva left every video unscored; the most common reason: {why}"
        else:
            sec.skipped = ("no kiva value stored for a suite item with a generator (KIVA needs a trained "
                           "reader: docs/kiva.md; `robojudge demo` trains one per robot of the simulator "
                           "suite)")
        return sec
    sec.intro = ("KIVA (RoboWorM, Fig. 3a): a keypoint reader trained on the robot's forward kinematics "
                 "reads each video; a 16-frame segment is invalid when a rigid link's 2D length varies, or "
                 "keypoints jerk, beyond thresholds calibrated on reference videos of the same robot. Each "
                 "robot has its own reader and thresholds, so compare generators within a robot.")
    sec.tables.append(kiva_table(groups))
    return sec
