"""Stored results of two stores (or two metric versions in one) compared item by item.

A series is one ``(metric, config hash, version)``: the store's key without the item. The config hash
does not include the version (a metric moved to version 4 keeps its hash), so two versions of one
configuration are two series and the join of two sides is on the full key, never on the hash alone
(joining on ``(item, metric, config hash)`` paired every v3 row with the v4 row of its item as well as
its own, and doubled the rows). :func:`diff_results` pairs, per series, the items with a value on
both sides; with ``versions`` it pairs version ``a`` of each configuration on side A with version
``b`` of the same configuration on side B (one store on both sides compares two versions in it).

A version bump that adds a setting (``iq1_psnr`` 4 added ``min_reference_coverage``) gives the new
version's rows another config hash than the old version's, so no configuration has both versions.
With ``versions``, a configuration found at one version only is then paired with the one
configuration of the other version that holds the same settings, apart from settings only one of the
two has; the series says so, naming those settings. Where there is no such configuration, or several,
nothing is paired and the diff names the settings that differ.
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from robojudge.store._row import ResultRow, parse_libraries
from robojudge.store._store import ResultStore

#: A series' key: metric, config hash, version.
SeriesKey = tuple[str, str, str]


@dataclass(frozen=True)
class SeriesDiff:
    """One series compared across the two sides.

    Attributes:
        metric, config_hash: The series' metric and configuration.
        version_a, version_b: Its version on each side (equal unless versions were named); None where
            the side has no row of it.
        n_shared: Items with a value (an ``ok`` row with a finite value) on both sides.
        mean_a, mean_b: The means of those items' values on each side (NaN without a shared item).
        mean_delta: The mean of ``b - a`` over them; ``max_abs_delta`` the largest ``|b - a|``.
        n_changed: Shared items whose values differ (beyond a relative ``1e-9``).
        only_a, only_b: Items with a value on one side and none on the other (no row, a failure, NaN).
        libraries_differ: Shared items whose recorded library versions (``details["libraries"]``) differ
            between the sides, where both record them.
        config_hash_b: With ``versions``, B's configuration where it is another than A's (``config_hash``):
            the two configurations hold the same settings apart from ``settings_added``.
        settings_added: Those settings, as ``side:key=value`` (``B:min_reference_coverage=0.9``).
    """

    metric: str
    config_hash: str
    version_a: str | None
    version_b: str | None
    n_shared: int
    mean_a: float
    mean_b: float
    mean_delta: float
    max_abs_delta: float
    n_changed: int
    only_a: int
    only_b: int
    libraries_differ: int = 0
    config_hash_b: str | None = None
    settings_added: tuple[str, ...] = ()


@dataclass
class ResultsDiff:
    """What :func:`diff_results` found.

    Attributes:
        series: One entry per series (sorted by metric, config hash, versions).
        items_only_a, items_only_b: Item ids with some row on one side and none on the other.
        version_changes: Per metric whose set of stored versions differs between the sides (two
            stores only), ``(versions on A, versions on B)``.
        config_changes: Per metric whose set of config hashes differs, ``(hashes on A, hashes on B)``.
        versions: The two versions compared, when named.
        unpaired_configs: With ``versions``, per metric with configurations at one of the versions only
            that could not be paired (none or several match), how their settings differ
            (``A 2b8262e6 / B c4d4a37e: min_reference_coverage (unset / 0.9)``).
    """

    series: list[SeriesDiff] = field(default_factory=list)
    items_only_a: list[str] = field(default_factory=list)
    items_only_b: list[str] = field(default_factory=list)
    version_changes: dict[str, tuple[list[str], list[str]]] = field(default_factory=dict)
    config_changes: dict[str, tuple[list[str], list[str]]] = field(default_factory=dict)
    versions: tuple[str, str] | None = None
    unpaired_configs: dict[str, list[str]] = field(default_factory=dict)

    def flags(self, s: SeriesDiff) -> list[str]:
        """What sets a series apart besides its values: its metric's versions or configurations differ
        between the sides, some shared item was computed with other library versions, or the series is
        on one side only."""
        out = []
        if s.version_a is None or s.version_b is None:
            out.append(f"only in {'B' if s.version_a is None else 'A'}")
        if s.metric in self.version_changes:
            out.append("versions differ")
        if s.metric in self.config_changes:
            out.append("configs differ")
        if s.libraries_differ:
            out.append(f"libraries differ on {s.libraries_differ} item(s)")
        if s.config_hash_b is not None:
            out.append(f"B's config {s.config_hash_b[:8]}, the same but for {', '.join(s.settings_added)}")
        return out

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary (NaN becomes None)."""
        def clean(v: Any) -> Any:
            return None if isinstance(v, float) and math.isnan(v) else v

        return {
            "versions": list(self.versions) if self.versions else None,
            "series": [{**{k: clean(v) for k, v in asdict(s).items()}, "flags": self.flags(s)}
                       for s in self.series],
            "items_only_a": self.items_only_a, "items_only_b": self.items_only_b,
            "version_changes": {m: {"a": a, "b": b} for m, (a, b) in self.version_changes.items()},
            "config_changes": {m: {"a": a, "b": b} for m, (a, b) in self.config_changes.items()},
            "unpaired_configs": self.unpaired_configs,
        }


def _has_value(r: ResultRow) -> bool:
    return r.status == "ok" and r.value is not None and not math.isnan(r.value)


def _libraries(r: ResultRow) -> dict[str, str] | None:
    found = (r.details or {}).get("libraries")
    return parse_libraries(found) if isinstance(found, str) else None


def _current(rows: Iterable[ResultRow], metric: str | None) -> list[ResultRow]:
    return [r for r in rows if r.superseded_at is None and (metric is None or r.metric == metric)]


def _by_series(rows: Iterable[ResultRow]) -> dict[tuple[str, str], dict[str, dict[str, ResultRow]]]:
    """``(metric, config hash) -> version -> item -> row``."""
    out: dict[tuple[str, str], dict[str, dict[str, ResultRow]]] = {}
    for r in rows:
        out.setdefault((r.metric, r.config_hash), {}).setdefault(r.version, {})[r.item_id] = r
    return out


def _compare(metric: str, config_hash: str, va: str | None, vb: str | None, a: dict[str, ResultRow],
             b: dict[str, ResultRow]) -> SeriesDiff:
    have_a = {i for i, r in a.items() if _has_value(r)}
    have_b = {i for i, r in b.items() if _has_value(r)}
    shared = sorted(have_a & have_b)
    xs = [float(a[i].value) for i in shared]  # type: ignore[arg-type]  # (_has_value: not None)
    ys = [float(b[i].value) for i in shared]  # type: ignore[arg-type]
    deltas = [y - x for x, y in zip(xs, ys, strict=True)]
    n = len(shared)
    changed = sum(not math.isclose(x, y, rel_tol=1e-9, abs_tol=0.0) for x, y in zip(xs, ys, strict=True))
    libs = 0
    for i in shared:
        la, lb = _libraries(a[i]), _libraries(b[i])
        libs += la is not None and lb is not None and la != lb
    return SeriesDiff(metric, config_hash, va, vb, n, sum(xs) / n if n else math.nan,
                      sum(ys) / n if n else math.nan, sum(deltas) / n if n else math.nan,
                      max((abs(d) for d in deltas), default=math.nan), changed, len(have_a - have_b),
                      len(have_b - have_a), libs)


def diff_results(rows_a: Sequence[ResultRow], rows_b: Sequence[ResultRow], *,
                 versions: tuple[str, str] | None = None, metric: str | None = None) -> ResultsDiff:
    """Compare the current rows of two sides, per series, over the items both give a value.

    Args:
        rows_a, rows_b: The two sides' stored rows (superseded ones are ignored); the same rows twice
            with ``versions`` compare two versions within one store.
        versions: ``(a, b)``: compare version ``a`` of each configuration on side A with version ``b``
            of the same configuration on side B, and nothing else. Without it, each series is compared
            with the same series (same version) of the other side.
        metric: Only this metric.

    Returns:
        A :class:`ResultsDiff`; ``mean_delta`` is ``b - a``.

    Raises:
        ValueError: ``metric`` has no current row on either side (a typo would compare nothing and
            read as "no change"), or a version of ``versions`` has none on its side.
    """
    a_rows, b_rows = _current(rows_a, metric), _current(rows_b, metric)
    if metric is not None and not a_rows and not b_rows:
        raise ValueError(_unknown_metric(metric, rows_a, rows_b))
    out = ResultsDiff(versions=versions)
    sa, sb = _by_series(a_rows), _by_series(b_rows)
    if versions is not None:
        va, vb = _as_stored(a_rows, versions[0]), _as_stored(b_rows, versions[1])
        _refuse_unheld_versions(versions, (va, vb), a_rows, b_rows, metric, one=rows_a is rows_b)
        out.versions = (va, vb)
        lone_a = [k for k in sorted(sa) if va in sa[k] and vb not in sb.get(k, {})]
        lone_b = [k for k in sorted(sb) if vb in sb[k] and va not in sa.get(k, {})]
        paired = _pair_configs(lone_a, lone_b, sa, sb, va, vb, out.unpaired_configs)
        taken = set(paired.values())
        for key in sorted(set(sa) | set(sb)):
            a, b = sa.get(key, {}).get(va), sb.get(key, {}).get(vb)
            if key in taken:
                b = None  # compared with its A configuration
            if key in paired:
                other = paired[key]
                b = sb[other][vb]
                added = _settings_apart(_config_of(a), _config_of(b))
                out.series.append(replace(_compare(*key, va, vb, a or {}, b), config_hash_b=other[1],
                                          settings_added=tuple(added or ())))
                continue
            if a is None and b is None:
                continue
            out.series.append(_compare(*key, va if a is not None else None, vb if b is not None else None,
                                       a or {}, b or {}))
        items_a = {r.item_id for r in a_rows if r.version == va}
        items_b = {r.item_id for r in b_rows if r.version == vb}
    else:
        for key in sorted(set(sa) | set(sb)):
            for v in sorted(set(sa.get(key, {})) | set(sb.get(key, {}))):
                a, b = sa.get(key, {}).get(v), sb.get(key, {}).get(v)
                out.series.append(_compare(*key, v if a is not None else None, v if b is not None else None,
                                           a or {}, b or {}))
        for m in sorted({r.metric for r in a_rows} & {r.metric for r in b_rows}):
            ver_a = sorted({r.version for r in a_rows if r.metric == m})
            ver_b = sorted({r.version for r in b_rows if r.metric == m})
            if ver_a != ver_b:
                out.version_changes[m] = (ver_a, ver_b)
            cfg_a = sorted({r.config_hash for r in a_rows if r.metric == m})
            cfg_b = sorted({r.config_hash for r in b_rows if r.metric == m})
            if cfg_a != cfg_b:
                out.config_changes[m] = (cfg_a, cfg_b)
        items_a, items_b = {r.item_id for r in a_rows}, {r.item_id for r in b_rows}
    out.items_only_a = sorted(items_a - items_b)
    out.items_only_b = sorted(items_b - items_a)
    return out


def _unknown_metric(metric: str, rows_a: Sequence[ResultRow], rows_b: Sequence[ResultRow]) -> str:
    """The refusal of a ``metric`` no current row of either side has, with the closest stored id."""
    held_a = sorted({r.metric for r in _current(rows_a, None)})
    held_b = sorted({r.metric for r in _current(rows_b, None)})
    stored = sorted(set(held_a) | set(held_b))
    if not stored:
        return f"--metric {metric!r}: the stores hold no current rows"
    close = difflib.get_close_matches(metric, stored, n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    if rows_a is rows_b:
        return (f"--metric {metric!r}: no rows of that metric in the store{hint}; its metrics: "
                f"{', '.join(stored)}")
    return (f"--metric {metric!r}: no rows of that metric in either store{hint}; A holds "
            f"{', '.join(held_a) or 'none'}; B holds {', '.join(held_b) or 'none'}")


def _refuse_unheld_versions(given: tuple[str, str], stored: tuple[str, str], a_rows: Sequence[ResultRow],
                            b_rows: Sequence[ResultRow], metric: str | None, *, one: bool) -> None:
    """Refuse ``versions`` of which one has no current row on its side: every series would read as held
    on the other side only, as if the version had been dropped."""
    of = f" of metric {metric}" if metric is not None else ""
    missing: list[str] = []
    for side, want, shown, rows in (("A", stored[0], given[0], a_rows), ("B", stored[1], given[1], b_rows)):
        if not any(r.version == want for r in rows):
            held = ", ".join(sorted({r.version for r in rows}, key=lambda v: (len(v), v))) or "none"
            missing.append(f"no current row{of} in {'the store' if one else 'store ' + side} is of version "
                           f"{shown} (its versions: {held})")
    if missing:
        raise ValueError(f"--versions {given[0]},{given[1]}: " + "; ".join(dict.fromkeys(missing)))


def _config_of(rows: dict[str, ResultRow] | None) -> dict[str, Any] | None:
    """The configuration a series' rows were computed with (None when they carry none)."""
    for r in (rows or {}).values():
        return dict(r.config) if isinstance(r.config, dict) else None
    return None


def _flat(config: dict[str, Any], prefix: str = "") -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in config.items():
        if isinstance(v, dict):
            out |= _flat(v, f"{prefix}{k}.")
        else:
            out[f"{prefix}{k}"] = json.dumps(v, sort_keys=True, default=str)
    return out


def _settings_apart(a: dict[str, Any] | None, b: dict[str, Any] | None,
                    metric: str | None = None) -> list[str] | None:
    """The settings only one of two configurations has, as ``A:key=value`` or ``B:key=value``; None when
    a setting both have differs, or either configuration is unknown, or (given ``metric``, a registered
    one) a setting only one has is not at the installed metric's default: a setting the version bump
    added holds its default, any other value is a change of setting, not of version."""
    if a is None or b is None:
        return None
    fa, fb = _flat(a), _flat(b)
    if any(fa[k] != fb[k] for k in fa.keys() & fb.keys()):
        return None
    if metric is not None:
        from robojudge.metric_info import registry_defaults

        defaults = registry_defaults(metric)
        if defaults is not None:
            fd = _flat(defaults)
            lone = [(k, f[k]) for f, other in ((fa, fb), (fb, fa)) for k in f if k not in other]
            if any(k in fd and value != fd[k] for k, value in lone):
                return None
    return [f"{side}:{k}={f[k]}" for side, f, other in (("A", fa, fb), ("B", fb, fa)) for k in sorted(f)
            if k not in other]


def _differences(a: dict[str, Any] | None, b: dict[str, Any] | None) -> str:
    """The settings in which two configurations differ, as ``key (A's / B's)``."""
    if a is None or b is None:
        return "a configuration not stored with its rows"
    fa, fb = _flat(a), _flat(b)
    keys = sorted(k for k in fa.keys() | fb.keys() if fa.get(k) != fb.get(k))
    return ", ".join(f"{k} ({fa.get(k, '(unset)')} / {fb.get(k, '(unset)')})" for k in keys) or "nothing"


def _pair_configs(lone_a: list[tuple[str, str]], lone_b: list[tuple[str, str]],
                  sa: dict[tuple[str, str], dict[str, dict[str, ResultRow]]],
                  sb: dict[tuple[str, str], dict[str, dict[str, ResultRow]]], va: str, vb: str,
                  unpaired: dict[str, list[str]]) -> dict[tuple[str, str], tuple[str, str]]:
    """A's configurations at ``va`` that B lacks at ``vb``, each paired with the one configuration of its
    metric that B has at ``vb`` only and that holds the same settings apart from those one side lacks
    (a setting a version bump added); where none or several match, ``unpaired`` says how they differ."""
    out: dict[tuple[str, str], tuple[str, str]] = {}
    for metric in sorted({k[0] for k in lone_a} & {k[0] for k in lone_b}):
        mine = [k for k in lone_a if k[0] == metric]
        theirs = [k for k in lone_b if k[0] == metric]
        match = {k: [o for o in theirs if _settings_apart(_config_of(sa[k][va]), _config_of(sb[o][vb]),
                                                          metric) is not None] for k in mine}
        chosen = [o for found in match.values() for o in found]
        for k, found in match.items():
            if len(found) == 1 and chosen.count(found[0]) == 1:
                out[k] = found[0]
        left_a = [k for k in mine if k not in out]
        left_b = [o for o in theirs if o not in out.values()]
        for k in left_a:
            for o in left_b:
                unpaired.setdefault(metric, []).append(
                    f"A {k[1][:8]} / B {o[1][:8]}: "
                    f"{_differences(_config_of(sa[k][va]), _config_of(sb[o][vb]))}")
    return out


def _as_stored(rows: Sequence[ResultRow], version: str) -> str:
    """``version`` as the rows spell it: as given where some row has it, else without a leading ``v``
    (``v4`` names the stored ``4``; a store whose versions are ``v1`` and ``v2`` keeps them)."""
    if version[:1] in ("v", "V") and not any(r.version == version for r in rows):
        return version[1:]
    return version


def diff_stores(a: str, b: str | None = None, *, versions: tuple[str, str] | None = None,
                metric: str | None = None) -> ResultsDiff:
    """:func:`diff_results` of two stores (URLs, SQLite paths or run folders), opened read-only; ``b``
    None reads ``a`` on both sides (with ``versions``: two versions within one store).

    Raises:
        StoreError: A store that cannot be read.
        ValueError: Neither ``b`` nor ``versions``: a store against itself compares nothing.
    """
    if b is None and versions is None:
        raise ValueError("give a second store, or two versions to compare within one (versions=(a, b))")
    with ResultStore(a, read_only=True) as store:
        rows_a = store.rows()
    if b is None:
        rows_b = rows_a
    else:
        with ResultStore(b, read_only=True) as store:
            rows_b = store.rows()
    return diff_results(rows_a, rows_b, versions=versions, metric=metric)
