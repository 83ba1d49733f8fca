"""The per-segment table ``meta segments`` reads, built from stored results and exported annotations.

A metric that judges a video segment by segment (KIVA: 16-frame segments) stores each segment's frame
span and value in its result row (``details.segments[]``: ``start``, ``stop``, ``score``...). Human
verdicts come from ``robojudge annotate`` in segments of a fixed number of seconds (RoboWorM: 3 s),
exported under ``meta.annotation`` of a labelled manifest (``segments``: one verdict per segment,
``segment_s``: their length). The two are cut differently, so :func:`segment_table` puts both on one
clock and gives each metric segment the verdict of the human segment it shares the most time with:

* a metric segment of frames ``[start, stop)`` covers seconds ``[start / fps, stop / fps)``, ``fps``
  being its own video's frame rate (:func:`robojudge.video.probe_video`): a suite that mixes 15 and
  30 fps (RoboWorM Table A1) places a 16-frame segment over 1.07 s in one video and 0.53 s in another;
* human segment ``k`` covers seconds ``[k * segment_s, (k + 1) * segment_s)`` (the last one ends with
  the clip);
* the verdict is that of the human segment, among those with a verdict, whose span overlaps the metric
  segment longest; on a tie the earlier one. A metric segment no verdict overlaps is left out and
  counted (:attr:`SegmentTableBuild.no_verdict`).
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from robojudge.meta._segments import VERDICT_LEVELS
from robojudge.meta._tables import ScoreTableError

if TYPE_CHECKING:
    from robojudge.store import ResultRow
    from robojudge.suite import Item

#: Columns of the table, in order; the metric's values follow in a column named after it.
TABLE_COLUMNS = ("item_id", "group", "clip", "video", "segment", "start_frame", "stop_frame", "fps",
                 "start_s", "end_s", "verdict", "human_segment", "overlap")

# Overlaps closer than this (seconds) are a tie, which goes to the earlier human segment.
_TIE = 1e-9


@dataclass(frozen=True)
class SegmentRow:
    """One metric segment with the verdict of the human segment that overlaps it most.

    Attributes:
        item_id: The item (``video`` in the table: the band overlap's video).
        group: Its embodiment (``-`` when unset).
        clip: Its clip id (else its item id): the bootstrap cluster.
        segment: ``<item_id>#<k>``, the metric's segment ``k``.
        start_frame, stop_frame: The metric segment's frames, ``stop_frame`` exclusive.
        fps: The video's frame rate the seconds are taken at.
        start_s, end_s: The segment's seconds, ``start_frame / fps`` and ``stop_frame / fps``.
        verdict: ``Good``, ``Medium`` or ``Bad``.
        human_segment: Which human segment the verdict is from.
        overlap: The share of the metric segment that human segment covers (0-1].
        value: The metric's value of the segment (None: the metric did not measure it).
    """

    item_id: str
    group: str
    clip: str
    segment: str
    start_frame: int
    stop_frame: int
    fps: float
    start_s: float
    end_s: float
    verdict: str
    human_segment: int
    overlap: float
    value: float | None


@dataclass(frozen=True)
class SegmentTableBuild:
    """What :func:`segment_table` found.

    Attributes:
        metric: The metric whose segments the rows are.
        value: The key of ``details.segments[]`` the values were read from.
        rows: One per metric segment with a human verdict.
        no_verdict: Metric segments left out because no human verdict overlaps them.
        skipped: Items that give no row, by reason (item ids in suite order).
        frame_rates: Items with rows per frame rate.
        configs: The ``(config hash, version)`` of the rows used.
    """

    metric: str
    value: str
    rows: list[SegmentRow]
    no_verdict: int
    skipped: dict[str, list[str]] = field(default_factory=dict)
    frame_rates: dict[float, int] = field(default_factory=dict)
    configs: tuple[tuple[str, str], ...] = ()


def human_spans(n_segments: int, segment_s: float) -> list[tuple[float, float]]:
    """Seconds ``[k * segment_s, (k + 1) * segment_s)`` of the ``n_segments`` human segments.

    >>> human_spans(2, 3.0)
    [(0.0, 3.0), (3.0, 6.0)]
    """
    return [(k * segment_s, (k + 1) * segment_s) for k in range(n_segments)]


def best_overlap(start_s: float, end_s: float, verdicts: Sequence[str | None], segment_s: float
                 ) -> tuple[int, float] | None:
    """The human segment with a verdict that overlaps seconds ``[start_s, end_s)`` longest, and the share
    of the span it covers; on a tie the earlier one. None when no segment with a verdict overlaps it.

    >>> k, share = best_overlap(32 / 15, 48 / 15, ["good", "bad"], 3.0)  # 2.13-3.20 s: 0.87 s in the first
    >>> k, round(share, 4)
    (0, 0.8125)
    >>> best_overlap(1.0, 2.0, ["good", "bad"], 1.5)  # half in each: the earlier
    (0, 0.5)
    """
    best: tuple[int, float] | None = None
    for k, (lo, hi) in enumerate(human_spans(len(verdicts), segment_s)):
        if verdicts[k] is None:
            continue
        shared = min(end_s, hi) - max(start_s, lo)
        if shared > _TIE and (best is None or shared > best[1] + _TIE):
            best = (k, shared)
    if best is None:
        return None
    return best[0], best[1] / (end_s - start_s)


def _annotation(item: Item, where: str, segment_s: float | None) -> tuple[list[str | None], float] | None:
    """An item's human segment verdicts (``Good``/``Medium``/``Bad``, None where unrated) and their
    length in seconds, from ``meta.annotation``; None when it has no segment verdicts."""
    note = (item.meta or {}).get("annotation")
    if not isinstance(note, Mapping):
        return None
    given = note.get("segments")
    if not given:
        return None
    here = f"{where}, item {item.item_id!r}"
    if not isinstance(given, list):
        raise ScoreTableError(f"{here}, field meta.annotation.segments: {given!r} is not a list of verdicts")
    names = {name.casefold(): name for name in VERDICT_LEVELS}
    verdicts: list[str | None] = []
    for k, v in enumerate(given):
        if v is None:
            verdicts.append(None)
            continue
        name = names.get(v.casefold()) if isinstance(v, str) else None
        if name is None:
            raise ScoreTableError(f"{here}, field meta.annotation.segments[{k}]: {v!r} is not one of "
                                  f"{', '.join(sorted(VERDICT_LEVELS))} (in any case)")
        verdicts.append(name)
    stored = note.get("segment_s")
    if stored is not None and (isinstance(stored, bool) or not isinstance(stored, int | float)
                               or not math.isfinite(stored) or stored <= 0):
        raise ScoreTableError(f"{here}, field meta.annotation.segment_s: {stored!r} is not a positive "
                              "number of seconds")
    if stored is None and segment_s is None:
        raise ScoreTableError(
            f"{here}, field meta.annotation.segment_s: the segment verdicts do not say how many seconds a "
            "segment is (labels exported before robojudge wrote it): export them again (robojudge annotate "
            "export --format manifest), or give the project's segment length (--human-segment SECONDS)")
    if stored is not None and segment_s is not None and not math.isclose(stored, segment_s):
        raise ScoreTableError(
            f"{here}, field meta.annotation.segment_s: the labels' segments are {stored:g} s and "
            f"--human-segment says {segment_s:g} s; leave the option out to use the labels' own length")
    length = stored if stored is not None else segment_s
    assert length is not None
    return verdicts, float(length)


def _segment_spans(row: ResultRow, value: str, where: str) -> list[tuple[int, int, float | None]] | None:
    """``(start, stop, value)`` of each segment in a stored row's ``details.segments``; None without."""
    segs = (row.details or {}).get("segments")
    if not isinstance(segs, list) or not segs:
        return None
    here = f"{where}, item {row.item_id!r}, metric {row.metric!r}"
    out: list[tuple[int, int, float | None]] = []
    for k, seg in enumerate(segs):
        at = f"{here}, field details.segments[{k}]"
        if not isinstance(seg, Mapping):
            raise ScoreTableError(f"{at}: {seg!r} is not an object with start, stop and {value}")
        start, stop = seg.get("start"), seg.get("stop")
        if not (isinstance(start, int) and isinstance(stop, int) and 0 <= start < stop) or isinstance(
                start, bool) or isinstance(stop, bool):
            raise ScoreTableError(f"{at}: start {start!r} and stop {stop!r} are not a frame span "
                                  "(whole numbers, 0 <= start < stop)")
        if value not in seg:
            keys = ", ".join(sorted(str(x) for x in seg))
            raise ScoreTableError(f"{at}.{value}: no such key; a segment has {keys}")
        x = seg[value]
        if x is not None and (isinstance(x, bool) or not isinstance(x, int | float) or not math.isfinite(x)):
            raise ScoreTableError(f"{at}.{value}: {x!r} is not a finite number (or null: not measured)")
        out.append((start, stop, None if x is None else float(x)))
    return out


def _pick_rows(rows: Sequence[ResultRow], metric: str, config: str | None, where: str
               ) -> dict[str, ResultRow]:
    """One stored row per item: all of one ``(config hash, version)``, chosen by ``config`` (a hash prefix,
    optionally ``@VERSION``) where the items' rows are stored under several."""
    keys = Counter((r.config_hash, r.version) for r in rows)
    if config is not None:
        prefix, _, version = config.partition("@")
        chosen = [k for k in keys if k[0].startswith(prefix) and (not version or k[1] == version)]
        if len(chosen) != 1:
            shown = "; ".join(f"{h} @{v} ({n} items)" for (h, v), n in sorted(keys.items())) or "none"
            what = "matches none" if not chosen else "matches several"
            raise ScoreTableError(f"{where}: --config {config!r} {what} of metric {metric!r}'s stored "
                                  f"configurations: {shown}")
        keys = Counter({chosen[0]: keys[chosen[0]]})
    elif len(keys) > 1:
        shown = "; ".join(f"{h[:8]} @{v} ({n} items)" for (h, v), n in sorted(keys.items()))
        raise ScoreTableError(
            f"{where}: metric {metric!r} is stored under {len(keys)} configurations for the suite's items "
            f"({shown}); their segments were judged by different rules, so choose one with --config "
            "HASH[@VERSION]")
    return {r.item_id: r for r in rows if (r.config_hash, r.version) in keys}


def segment_table(
    suite: str | os.PathLike[str],
    db: str,
    metric: str = "kiva",
    *,
    labels: str | os.PathLike[str] | None = None,
    value: str = "score",
    segment_s: float | None = None,
    config: str | None = None,
    note: Any = None,
) -> SegmentTableBuild:
    """One row per (item, metric segment) with the verdict of the human segment that overlaps it most
    (module docstring: the rule and the frame rates), for ``meta segments``.

    Args:
        suite: The suite manifest; its items' videos give the frame rates, their embodiment the group,
            their clip id the cluster.
        db: The result store holding ``metric``'s rows (a URL, SQLite path or run folder).
        metric: A metric that stores ``details.segments[]`` with ``start`` and ``stop`` frames (``kiva``,
            ``kiva_rigidity``, ``kiva_jerk``).
        labels: A labelled manifest (``robojudge annotate export --format manifest``) whose
            ``meta.annotation`` holds the segment verdicts; default: ``suite``'s own items'.
        value: The key of ``details.segments[]`` to take (KIVA's ``score``: the larger ratio of a part's
            value to its threshold; or ``rigidity``, ``jerk``).
        segment_s: Seconds per human segment, for labels that do not store it.
        config: ``HASH[@VERSION]`` (a hash prefix) of the rows to use where several are stored.
        note: Receives a remark that is not an error (the stale rows left out).

    Raises:
        ScoreTableError: No such metric in the store; the items' rows are of several configurations and
            ``config`` picks none; a stored segment without a frame span or ``value``; a verdict other
            than Good, Medium or Bad; no segment length; a video whose frame rate cannot be read (each
            naming the file, item and field).
    """
    from robojudge.run import stale_rows
    from robojudge.store import ResultStore, StoreError
    from robojudge.suite import ManifestError, load_suite
    from robojudge.video import VideoError, probe_video

    try:
        items = load_suite(Path(suite), strict=False, files="optional").items
        labelled = items if labels is None else load_suite(Path(labels), strict=False, files="optional").items
        with ResultStore(db, read_only=True) as store:
            stored = store.rows(metric=metric, status="ok")
            if not stored and store.count(metric=metric) == 0:
                known = sorted({r.metric for r in store.iter_rows()})
                raise ScoreTableError(f"{db}: no rows of metric {metric!r}; the store holds "
                                      f"{', '.join(known) or 'no rows'}")
    except (ManifestError, StoreError, OSError) as exc:
        raise ScoreTableError(str(exc)) from None
    by_id = {it.item_id: it for it in items}
    stored = [r for r in stored if r.item_id in by_id]
    stale = {(r.item_id, r.config_hash, r.version) for r in stale_rows(stored, items)}
    if stale and note is not None:
        note(f"left out {len(stale)} stale {metric} row(s): their videos changed since they were scored "
             "(`robojudge results status` lists them)")
    chosen = _pick_rows([r for r in stored if (r.item_id, r.config_hash, r.version) not in stale], metric,
                        config, str(db))
    label_where = str(labels if labels is not None else suite)
    human = {it.item_id: it for it in labelled}
    rows: list[SegmentRow] = []
    skipped: dict[str, list[str]] = {}
    rates: Counter[float] = Counter()
    no_verdict = 0
    for it in items:
        row = chosen.get(it.item_id)
        spans = None if row is None else _segment_spans(row, value, str(db))
        lab = human.get(it.item_id)
        verdicts = None if lab is None else _annotation(lab, label_where, segment_s)
        why = ("no stored value" if row is None else "no per-segment values (details.segments)"
               if spans is None else "no human segment verdicts" if verdicts is None else None)
        if why is not None:
            skipped.setdefault(why, []).append(it.item_id)
            continue
        assert spans is not None and verdicts is not None
        try:
            fps = float(probe_video(it.video).fps)
        except (VideoError, OSError) as exc:
            raise ScoreTableError(f"{suite}, item {it.item_id!r}, field video: cannot read its frame rate, "
                                  f"which places the metric's segments in seconds: {exc}") from None
        if not (math.isfinite(fps) and fps > 0):
            raise ScoreTableError(f"{suite}, item {it.item_id!r}, field video: frame rate {fps:g} is not "
                                  "positive")
        rates[fps] += 1
        group = it.embodiment.value if it.embodiment is not None else "-"
        for k, (start, stop, x) in enumerate(spans):
            lo, hi = start / fps, stop / fps
            best = best_overlap(lo, hi, verdicts[0], verdicts[1])
            if best is None:
                no_verdict += 1
                continue
            h, share = best
            rows.append(SegmentRow(it.item_id, group, it.clip_id or it.item_id, f"{it.item_id}#{k}", start,
                                   stop, fps, lo, hi, str(verdicts[0][h]), h, share, x))
    return SegmentTableBuild(metric, value, rows, no_verdict, skipped, dict(sorted(rates.items())),
                             tuple(sorted({(r.config_hash, r.version) for r in chosen.values()})))


def write_segment_table(build: SegmentTableBuild, out: str | os.PathLike[str]) -> None:
    """Write ``build``'s rows as CSV (:data:`TABLE_COLUMNS`, then a column named after the metric; a blank
    value is a segment it did not measure), replacing ``out`` in one step.

    Raises:
        ScoreTableError: ``out`` cannot be written (it is left as it was).
    """
    import io

    from robojudge._files import replace_text
    from robojudge.store import SafeCsvWriter

    def num(x: float) -> str:
        return f"{x:.6g}"

    buf = io.StringIO()
    w = SafeCsvWriter(buf, lineterminator="\n")
    w.writerow((*TABLE_COLUMNS, build.metric))
    for r in build.rows:
        w.writerow((r.item_id, r.group, r.clip, r.item_id, r.segment, r.start_frame, r.stop_frame,
                    num(r.fps), num(r.start_s), num(r.end_s), r.verdict, r.human_segment,
                    f"{r.overlap:.4f}", "" if r.value is None else repr(r.value)))
    path = Path(out)
    try:
        replace_text(path, buf.getvalue())
    except OSError as exc:
        raise ScoreTableError(f"cannot write {path}: {exc}") from None
