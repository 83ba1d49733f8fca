"""The report's "Networks" section: which network each model-backed metric in the report computes
with, where its published file is, and whether robojudge's loader was ever checked on that file."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from robojudge.report._sections import ReportInput, Section, no_networks
from robojudge.report._tables import Table, text
from robojudge.store import ResultRow


def networks_section(inp: ReportInput) -> Section:
    """One row per (metric, network) for the metrics with values in the report that compute with a
    network (:attr:`ReportInput.networks`); skipped when there are none."""
    sec = Section("networks", "Networks")
    if inp.networks is no_networks:
        sec.skipped = ("the report was written without the metric registry's list of networks (robojudge "
                       "report and the demo pass it; from Python: write_html_report(..., "
                       "networks=robojudge.metric_info.registry_networks))")
        return sec
    shown = sorted({r.metric for r in [*inp.item_rows, *inp.group_rows] if r.status == "ok"})
    used = [(m, n) for m in shown for n in inp.networks(m)]
    if not used:
        sec.skipped = ("no metric with values in this report computes with a network" if shown
                       else "no metric has values in this report")
        return sec
    metrics = sorted({m for m, _ in used})
    unverified = sorted({m for m, n in used if n.unverified})
    sec.intro = (
        f"{len(metrics)} metric{'s' if len(metrics) != 1 else ''} in this report compute their values with "
        "networks, listed as the weights catalogue pins them (robojudge weights list; docs/weights.md). A "
        "run reads the files it finds in $ROBOJUDGE_WEIGHTS or the Hugging Face cache (robojudge weights "
        "status says which), and each stored value's inputs fingerprint includes those files, so values "
        "from other files are other results.")
    if unverified:
        sec.intro += (
            f" Unverified ({', '.join(unverified)}): robojudge reads these checkpoints with code of its own "
            "(a port of the network or a mapping of its weights) that has run only on tiny random networks "
            "saved in the published layout, never on the published file: a file that does not fit stops "
            "with an error, but no value has been compared with the publisher's implementation.")
    files, bare = _recorded_files([*inp.item_rows, *inp.group_rows])
    mixed = sorted({m for m, n in used if len(files.get((m, n.name), {})) > 1})
    if mixed:
        sec.intro += (
            f" Computed with different files of one network ({', '.join(mixed)}): the values of such a "
            "metric come from other networks and are other results, though they share its rows here. Each "
            "stored value records the digest of the files it was computed with (details.network_weights); "
            "the last column counts them. Rescore with one set of files (robojudge weights status) to "
            "compare them.")
    table = Table("networks", "Networks behind the metrics",
                  ["metric", "network", "what it is", "published at", "pinned by", "loader checked",
                   "files behind the values"])
    for m, n in used:
        table.add([text(m), text(n.name), text(n.description), text(n.source), text(n.pinning),
                   text("no (unverified)" if n.unverified else "yes"),
                   text(_files_text(files.get((m, n.name), {}), bare.get(m, 0)))])
    sec.tables.append(table)
    return sec


Counts = dict[tuple[str, str], dict[str, int]]


def _recorded_files(rows: Sequence[ResultRow]) -> tuple[Counts, dict[str, int]]:
    """Per (metric, network): how many scored rows record each digest of its files; and per metric, how
    many record none (stored before rows recorded their weights, on 2026-12-07)."""
    files: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    bare: dict[str, int] = defaultdict(int)
    for r in rows:
        if r.status != "ok":
            continue
        # (the key robojudge.run._fingerprint.WEIGHTS_DETAIL: network name -> digest of its files)
        recorded = (r.details or {}).get("network_weights")
        if isinstance(recorded, dict):
            for name, digest in recorded.items():
                files[(r.metric, str(name))][str(digest)] += 1
        else:
            bare[r.metric] += 1
    return files, bare


_SHOWN = 3


def _files_text(counts: Mapping[str, int], none: int) -> str:
    """``1 file (a1b2c3d4e5f6)``, ``2 files: a1b2c3d4e5f6 (40 values), ...``, and the ``none`` values that
    record none."""
    named = sorted(counts.items(), key=lambda dn: (-dn[1], dn[0]))
    if not named:
        return "not recorded"
    if len(named) == 1:
        parts = [f"1 file ({named[0][0][:12]})"]
    else:
        shown = ", ".join(f"{d[:12]} ({n} value{'s' if n != 1 else ''})" for d, n in named[:_SHOWN])
        more = f" and {len(named) - _SHOWN} more" if len(named) > _SHOWN else ""
        parts = [f"{len(named)} files: {shown}{more}"]
    if none:
        parts.append(f"{none} {'values record' if none != 1 else 'value records'} none")
    return "; ".join(parts)
