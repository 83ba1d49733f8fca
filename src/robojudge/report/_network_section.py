"""The report's "Networks" section: which network each model-backed metric in the report computes
with, where its published file is, and whether robojudge's loader was ever checked on that file."""

from __future__ import annotations

from robojudge.report._sections import ReportInput, Section, no_networks
from robojudge.report._tables import Table, text


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
    table = Table("networks", "Networks behind the metrics",
                  ["metric", "network", "what it is", "published at", "pinned by", "loader checked"])
    for m, n in used:
        table.add([text(m), text(n.name), text(n.description), text(n.source), text(n.pinning),
                   text("no (unverified)" if n.unverified else "yes")])
    sec.tables.append(table)
    return sec
