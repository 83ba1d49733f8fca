"""What produced a report's numbers: ``provenance.json`` and the page's "Configurations" section.

The stored rows say it (each row's metric version, config and config hash, ``details.libraries``; a
judge row's backend, model, rubric and frame sampling, and the model the server said answered), but a
metric stored under one configuration is labelled in the tables by its bare id, so a report made with
``--max-frames 10`` read like one made with the defaults. Every report folder therefore holds
``provenance.json``, and the page a table of the same: per series its version, config hash, the
settings that differ from the installed metric's defaults (the whole config too, in the file) and the
library versions of its rows; per judge configuration its backend, model, rubrics and frames. The file
also records the report's own settings (bootstrap replicates and seed), the robojudge and Python
versions, the command line, the date, and each manifest read: its absolute path, the SHA-256 of its
bytes and how many items and labelled items it holds (the labels decide every agreement number).
"""

from __future__ import annotations

import hashlib
import json
import platform
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import robojudge
from robojudge._files import Staged
from robojudge.report._libraries import UNKNOWN, row_libraries
from robojudge.report._series import (
    JUDGE_AXES,
    JUDGE_PREFIX,
    Series,
    SeriesKey,
    StoredSeries,
    _flatten,
    _judge_key,
    _rubric_of,
    _without_rubric,
    rubric_owners,
)
from robojudge.report._tables import Table, text
from robojudge.store import ResultRow
from robojudge.store import served_models as row_served_models

#: The file every report folder holds.
PROVENANCE = "provenance.json"
#: Bumped when a key of :data:`PROVENANCE` changes meaning or goes away.
PROVENANCE_FORMAT = 1
#: What a set of values differing between a series' rows is given as (the sets are listed beside it).
MIXED = "mixed"


#: The default config of a stored metric id, as rows store it (None: unknown); the CLI passes
#: :func:`robojudge.metric_info.registry_defaults` (the report itself loads no metric registry).
DefaultsOf = Callable[[str], Mapping[str, Any] | None]


def no_defaults(metric: str) -> None:
    """The report's default: no metric's defaults known, so each series' whole config is shown."""
    return None


def non_default(config: Mapping[str, Any] | None,
                defaults: Mapping[str, Any] | None) -> dict[str, str] | None:
    """The settings of ``config`` (flattened, ``frames.fps``) whose values differ from ``defaults`` or
    that ``defaults`` lacks; None when either is unknown. A setting the stored config leaves out (one
    kept out of the hash while at its default) is at its default."""
    if config is None or defaults is None:
        return None
    flat, base = _flatten(config), _flatten(defaults)
    return {k: v for k, v in sorted(flat.items()) if base.get(k) != v}


def _one_or_mixed(values: Iterable[str | None], unknown: str | None) -> tuple[str | None, list[str]]:
    """The value the rows share (``unknown`` when none records one), or :data:`MIXED` with every value
    met, rows without one as ``unknown``."""
    seen = sorted({v if v is not None else (unknown or "") for v in values})
    if len(seen) <= 1:
        return (seen[0] if seen and seen[0] else unknown), []
    return MIXED, seen


def _release(row: ResultRow) -> str | None:
    found = (row.details or {}).get("robojudge")
    return found if isinstance(found, str) and found else None


def _rows_record(rows: Sequence[ResultRow]) -> dict[str, Any]:
    """The library versions and robojudge releases of a series' scored rows (one set, or mixed)."""
    scored = [r for r in rows if r.status == "ok"]
    libraries, library_sets = _one_or_mixed((row_libraries(r) for r in scored), UNKNOWN)
    release, releases = _one_or_mixed((_release(r) for r in scored), None)
    out: dict[str, Any] = {"rows": len(rows), "libraries": libraries if scored else None}
    if library_sets:
        out["library_sets"] = library_sets
    out["robojudge"] = release
    if releases:
        out["robojudge_releases"] = releases
    return out


def served_models(rows: Iterable[ResultRow]) -> dict[str, int]:
    """How many of a judge's rows each server-reported model answered (:func:`robojudge.store.served_models`,
    from ``turns[].response.model``, which an OpenAI-compatible server returns); empty when no reply names
    one (the mock and local backends)."""
    found: Counter[str] = Counter()
    for r in rows:
        found.update(row_served_models(r.details))
    return dict(sorted(found.items()))


def network_weights(rows: Iterable[ResultRow]) -> dict[str, dict[str, int]] | None:
    """Per network a series' scored rows were computed with, how many rows record each digest of its
    files (``details.network_weights``, which the rows' fingerprints cover); None when no row records
    any (a weights-free metric, or rows stored before rows recorded them). Two reports of one metric and
    config made from different ``ROBOJUDGE_WEIGHTS`` folders differ here, and only here."""
    out: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for r in rows:
        recorded = (r.details or {}).get("network_weights") if r.status == "ok" else None
        if isinstance(recorded, Mapping):
            for name, digest in recorded.items():
                out[str(name)][str(digest)] += 1
    return {name: dict(sorted(digests.items())) for name, digests in sorted(out.items())} or None


def _metric_record(s: Series, rows: Sequence[ResultRow], defaults: DefaultsOf) -> dict[str, Any]:
    record = {"label": s.label, "metric": s.metric, "version": s.key.version,
              "config_hash": s.key.config_hash, "non_default": non_default(s.config, defaults(s.metric)),
              "config": s.config, **_rows_record(rows)}
    weights = network_weights(rows)
    if weights is not None:
        record["network_weights"] = weights
    return record


def _judge_record(label: str, name: str, rubric_series: Sequence[tuple[str, Series]],
                  by_key: Mapping[SeriesKey, Sequence[ResultRow]]) -> dict[str, Any]:
    """One judge configuration: its settings (from its first series' config less the rubric) and, per
    rubric it was run with, the rubric's id, version and digest."""
    config = _without_rubric(rubric_series[0][1].config) or {}
    rubrics: dict[str, dict[str, Any]] = {}
    rows: list[ResultRow] = []
    for name_of, s in rubric_series:
        version, digest = _rubric_of(s)
        rubric = (s.config or {}).get("rubric")
        rubric_id = rubric.get("id", name_of) if isinstance(rubric, Mapping) else name_of
        key = name_of if name_of not in rubrics else f"{name_of} #{digest[:8]}"
        rubrics[key] = {"metric": s.metric, "id": rubric_id, "version": version, "digest": digest,
                        "config_hash": s.key.config_hash, "metric_version": s.key.version}
        rows += by_key.get(s.key, ())
    return {"label": label, "name": name, "backend": config.get("backend"), "model": config.get("model"),
            "revision": config.get("revision"), "served_models": served_models(rows), "rubrics": rubrics,
            "frames": config.get("frames"), "sampling": config.get("sampling"),
            "scoring": config.get("scoring"), "samples": config.get("samples"),
            "config": config or None, **_rows_record(rows)}


def _judge_records(rows: Sequence[ResultRow], stored: StoredSeries,
                   by_key: Mapping[SeriesKey, Sequence[ResultRow]]) -> list[dict[str, Any]]:
    """Every judge configuration with every rubric it was run with: PA and IA per judge of
    ``stored.judges``, then its other rubrics (``pla_physical_commonsense``, ``sa_vlm1``, ``ts_vlm2``...);
    a configuration run with other rubrics only is a record of its own (:func:`rubric_owners`). Only the
    PA/IA judges were listed, so two reports whose task-success or PLA scores came from different VLMs
    had the same provenance (audit reportdata F2)."""
    owned: dict[str, list[tuple[str, Series]]] = defaultdict(list)
    for label, rubric, s in rubric_owners(rows, stored.judges, stored=stored).values():
        if rubric not in JUDGE_AXES:
            owned[label].append((rubric, s))
    out = []
    for j in stored.judges:
        pa_ia = [(a, j.axes[a]) for a in JUDGE_AXES if a in j.axes]
        out.append(_judge_record(j.label, j.name, pa_ia + sorted(owned.pop(j.label, []), key=_by_rubric),
                                 by_key))
    for label, group in sorted(owned.items()):
        # One record per configuration: two under one label (rubrics of one judge name, each with one
        # series, judged with different settings) are told apart by their settings' hash.
        configs: dict[str | None, list[tuple[str, Series]]] = defaultdict(list)
        for rubric, s in group:
            configs[_judge_key(s)].append((rubric, s))
        for key, members in sorted(configs.items(), key=lambda kv: kv[0] or ""):
            name = members[0][1].metric[len(JUDGE_PREFIX):].rpartition(":")[0]
            shown = label if len(configs) == 1 else f"{label} [config {key[:8] if key else 'none'}]"
            out.append(_judge_record(shown, name, sorted(members, key=_by_rubric), by_key))
    return out


def _by_rubric(member: tuple[str, Series]) -> tuple[str, SeriesKey]:
    return member[0], member[1].key


def manifest_record(path: str | Path) -> dict[str, Any]:
    """A manifest as a report read it: its absolute path, the SHA-256 of its bytes, and how many items
    (valid records) and labelled items it holds; ``"missing": true`` when it cannot be read now."""
    from robojudge.suite import ManifestError, load_suite

    where = Path(path).absolute()
    try:
        digest = hashlib.sha256(where.read_bytes()).hexdigest()
        suite = load_suite(where, strict=False, files="optional")
    except (OSError, ManifestError):
        return {"path": str(where), "missing": True}
    return {"path": str(where), "sha256": digest, "items": len(suite.items),
            "labelled": sum(it.labels is not None for it in suite.items)}


def report_provenance(
    rows: Sequence[ResultRow],
    *,
    store: str,
    manifests: Sequence[str | Path] = (),
    bootstrap: int | None = None,
    seed: int | None = None,
    command: Sequence[str] | None = None,
    written: datetime | None = None,
    defaults: DefaultsOf = no_defaults,
) -> dict[str, Any]:
    """The content of :data:`PROVENANCE` for a report of ``rows`` (see the module docstring).

    ``store``: the store's URL as the page names it (its password masked). ``bootstrap`` and ``seed``:
    the HTML report's cluster bootstrap (None for a manifest's summary alone, whose intervals are
    t-intervals). ``command``: the command line when run from the CLI (None otherwise). ``defaults``:
    each metric's default config, to say which settings differ from it (:data:`DefaultsOf`).
    """
    stored = StoredSeries.of(rows)
    by_key: dict[SeriesKey, list[ResultRow]] = defaultdict(list)
    for r in rows:
        by_key[SeriesKey(r.metric, r.config_hash, r.version)].append(r)
    when = written or datetime.now(UTC)
    return {
        "format": PROVENANCE_FORMAT,
        "written": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "robojudge": robojudge.__version__,
        "python": platform.python_version(),
        "command": list(command) if command is not None else None,
        "store": store,
        "manifests": [manifest_record(m) for m in manifests],
        "bootstrap": None if bootstrap is None else {"replicates": bootstrap, "seed": seed},
        "metrics": [_metric_record(s, by_key[s.key], defaults) for s in stored.metrics],
        "judges": _judge_records(rows, stored, by_key),
    }


def stage_provenance(files: Staged, folder: Path, record: Mapping[str, Any]) -> Path:
    """Write ``record`` as ``folder/provenance.json`` within ``files`` (replaced with the rest)."""
    return files.write_text(folder / PROVENANCE, json.dumps(record, indent=2, default=str) + "\n")


def header_lines(record: Mapping[str, Any]) -> list[str]:
    """What the page's header says of ``record``: how the intervals were drawn, what wrote the report,
    and each manifest read."""
    made = f"robojudge {record['robojudge']}, Python {record['python']}"
    boot = record.get("bootstrap")
    if boot is not None:
        made = f"{boot['replicates']} bootstrap replicates, seed {boot['seed']} \u00b7 {made}"
    if record.get("command"):
        import shlex

        made += f" \u00b7 command: {shlex.join(record['command'])}"
    lines = [made]
    for m in record.get("manifests", ()):
        if m.get("missing"):
            lines.append(f"manifest {m['path']}: not readable now")
        else:
            lines.append(f"manifest {m['path']}: sha256 {m['sha256']}, {m['items']} items, "
                         f"{m['labelled']} labelled")
    return lines


def _settings(found: Mapping[str, str] | None, config: Mapping[str, Any] | None) -> str:
    if found is None:  # defaults unknown (not registered here): the whole stored config
        shown = ", ".join(f"{k}={v}" for k, v in _flatten(config).items()) if config else "not stored"
        return f"config {shown}"
    return ", ".join(f"{k}={v}" for k, v in found.items()) or "defaults"


def _libraries_cell(record: Mapping[str, Any]) -> str:
    found = record.get("libraries")
    if found == MIXED:
        return f"mixed ({len(record.get('library_sets', ()))} sets; see Library versions)"
    return found or "none (no scored row)"


def configurations_table(record: Mapping[str, Any]) -> Table:
    """The page's table of every series and judge configuration in ``record``."""
    table = Table("configurations", "What produced each series",
                  ["series", "version", "config hash", "settings", "libraries"],
                  note="Settings: those that differ from the installed metric's defaults (the whole config "
                       "where those are not known: a metric not registered here); provenance.json holds "
                       "every config whole.")
    for m in record["metrics"]:
        table.add([text(m["label"]), text(m["version"]), text(m["config_hash"][:8]),
                   text(_settings(m["non_default"], m["config"])), text(_libraries_cell(m))])
    for j in record["judges"]:
        rubrics = ", ".join(f"{axis} v{r['version']} #{r['digest'][:8]}" for axis, r in j["rubrics"].items())
        frames = j.get("frames") or {}
        parts = [f"backend {j['backend']}", f"model {j['model']}"]
        if j.get("revision"):
            parts.append(f"revision {j['revision']}")
        parts += [f"rubrics {rubrics}"] + [f"{k}={v}" for k, v in frames.items() if v is not None]
        if j["served_models"]:
            parts.append("served " + ", ".join(f"{m} x{n}" for m, n in j["served_models"].items()))
        versions = ", ".join(sorted({r["metric_version"] for r in j["rubrics"].values()}))
        hashes = ", ".join(r["config_hash"][:8] for r in j["rubrics"].values())
        table.add([text(f"judge {j['label']}"), text(versions), text(hashes), text("; ".join(parts)),
                   text(_libraries_cell(j))])
    return table
