"""The self-contained HTML report: ``index.html`` (inline CSS and SVG, no script, no network) plus tables.

``write_html_report`` reads a result store (and, when known, the suite manifest the results belong
to), builds every section it can, and writes ``index.html`` and ``tables/<name>.{csv,md,tex}``, all
under temporary names first and renamed into place once every one is whole, the page last: a write
that fails (a full disk) or is stopped leaves the previous report as it was. The report owns the table
files it writes: ``tables/written_by_robojudge.txt`` lists them, and the next
report into the same folder removes those it does not write again, so no table of an earlier report
is left beside the new ones (other files in ``tables/`` are never touched). A report folder written
before that list existed has none: there the files named after the report's tables
(:data:`REPORT_TABLES`) are taken for the earlier report's.
``resolve_source`` turns what a user typed (a run folder, a database URL or a store file) into a
store URL and the manifest, if one can be found.
"""

from __future__ import annotations

import html
import logging
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from robojudge import DEFAULT_SEED
from robojudge._activity import step
from robojudge._files import Staged, replacing
from robojudge.meta import ConfigKey
from robojudge.metric_info import taxonomy_direction
from robojudge.report._audit import acceleration_section
from robojudge.report._kiva import kiva_section
from robojudge.report._label_sections import generators_section, judges_section, metrics_section
from robojudge.report._leaderboard import Direction
from robojudge.report._library_section import libraries_section
from robojudge.report._motion import motion_section
from robojudge.report._network_section import networks_section
from robojudge.report._print_split import table_html
from robojudge.report._provenance import (
    DefaultsOf,
    configurations_table,
    header_lines,
    no_defaults,
    report_provenance,
    stage_provenance,
)
from robojudge.report._robophys import heatmap_section, robophys_section, sensitivity_section
from robojudge.report._sections import NetworksOf, ReportInput, Section, no_networks, overview_section
from robojudge.report._size_section import sizes_section
from robojudge.report._summary import RangeOf, StaleFinder, stale_note, unknown_range
from robojudge.report._tables import Table
from robojudge.report._warnings_section import video_warnings_section
from robojudge.store import ResultRow, ResultStore, StoreError, default_db_url, sqlite_url
from robojudge.suite import Item, ManifestProblem, load_suite, run_manifest
from robojudge.suite._schema import GROUP_PREFIX

log = logging.getLogger(__name__)


_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d1d1f;background:#fafafa}
header{background:#20344f;color:#fff;padding:1.2rem 2rem}header h1{margin:0;font-size:1.5rem}
header p{margin:.3rem 0 0;opacity:.85;font-size:.9rem}
header p.warning{opacity:1;font-weight:600;color:#fcd34d}
nav{padding:.6rem 2rem;background:#e8edf3;font-size:.9rem}nav a{margin-right:1rem;color:#20344f}
main{padding:1rem 2rem;max-width:1200px}
section{background:#fff;border:1px solid #dde3ea;border-radius:6px;margin:1rem 0;padding:1rem 1.4rem}
h2{margin-top:0;color:#20344f}p.intro{font-size:.92rem;line-height:1.45;color:#333}
p.skipped{color:#8a5a00;background:#fff6e0;padding:.5rem .8rem;border-radius:4px}
.figures{display:flex;flex-wrap:wrap;gap:1rem;align-items:flex-start}
figure{margin:0;max-width:100%;overflow-x:auto}svg.plot{max-width:100%;height:auto}svg.plot.wide{max-width:none}
table{border-collapse:collapse;font-size:.82rem;margin:.8rem 0;display:block;overflow-x:auto}
caption{text-align:left;font-weight:600;padding:.3rem 0}
th,td{border-bottom:1px solid #e3e3e3;padding:.25rem .55rem;white-space:nowrap}
th{background:#f1f4f8;text-align:left}.num{text-align:right;font-variant-numeric:tabular-nums}
tbody th{background:#fff;font-weight:400}
thead th.key,tbody th:first-of-type{position:sticky;left:0;z-index:1}
td strong,th strong{color:#0b6e2f}p.files{font-size:.8rem;color:#555}
header p,p.intro,p.files,p.skipped{overflow-wrap:anywhere}.print-only{display:none}
@media print{
.print-only{display:block}.screen-only{display:none}
body{background:#fff}nav{display:none}main{padding:0;max-width:none}
header{background:none;color:#000;padding:0 0 .5rem}header p.warning{color:#000}
section{border:0;padding:0;break-inside:auto}
figure{overflow:visible}svg.plot,svg.plot.wide{max-width:100%}
table{display:table;overflow:visible;font-size:7pt}thead{display:table-header-group}
th,td{white-space:normal;overflow-wrap:anywhere;padding:.1rem .15rem}tr{break-inside:avoid}
thead th.key,tbody th:first-of-type{position:static}
}
"""


@dataclass(frozen=True)
class HtmlReport:
    """What :func:`write_html_report` wrote.

    Attributes:
        index: Path of ``index.html``.
        sections: Every section, shown or skipped (with its reason).
        tables: The CSV, Markdown and LaTeX files.
        stale: The stored rows left out because their inputs changed since (with ``stale=``).
        outside: With a manifest: the stored rows of item ids that none of the manifests read holds
            (set-level ``group:`` rows aside), listed in the overview and in no per-item table.
        added_from: The manifests of ``more_manifests`` that gave items (:func:`report_items`); one that
            adds none is not read into the report and not named on the page.
        removed_unlisted: Table files of an earlier report that listed none (:func:`stage_tables`),
            removed because this one does not write them again.
        manifest_problems: The manifest rows left out because they do not validate (a name over its
            length limit, a control character...): their stored results are in no per-item table. The
            page says how many; the CLI prints each, as ``score`` does.
    """

    index: Path
    sections: tuple[Section, ...]
    tables: tuple[Path, ...]
    stale: tuple[ResultRow, ...] = ()
    added_from: tuple[Path, ...] = ()
    outside: int = 0
    removed_unlisted: tuple[str, ...] = ()
    manifest_problems: tuple[ManifestProblem, ...] = ()


def resolve_source(target: str | Path, *, manifest: str | Path | None = None) -> tuple[str, Path | None]:
    """The store URL and the suite manifest (if any) for a run folder, a store file or a database URL.

    A run folder (``runs/<name>/``) holds ``results.sqlite``. The manifest is ``manifest`` when given,
    else the one :func:`robojudge.suite.run_manifest` finds inside a run folder, else the latest one
    scored or judged into the store that still exists (:func:`noted_manifest`), else None (the report
    then has no labels).

    Raises:
        FileNotFoundError: A folder without ``results.sqlite`` or a path that does not exist.
    """
    given = Path(manifest) if manifest is not None else None
    text = str(target)
    if "://" in text:
        return text, given or noted_manifest(text)
    path = Path(target)
    if path.is_dir():
        if not (path / "results.sqlite").exists():
            raise FileNotFoundError(f"{path}: no results.sqlite in this run folder; score a suite into it "
                                    "first")
        url = default_db_url(path)
        return url, given or run_manifest(path) or noted_manifest(url)
    if path.is_file():
        url = sqlite_url(path.resolve())
        return url, given or noted_manifest(url)
    raise FileNotFoundError(f"{path}: no such run folder or result store")


def noted_manifest(url: str) -> Path | None:
    """The latest manifest scored or judged into the store at ``url`` that still exists, else None.

    See :meth:`robojudge.store.ResultStore.note_manifest`. A store that cannot be opened gives None: the
    report opens it next and says why.
    """
    found = noted_manifests(url)
    return found[0] if found else None


def noted_manifests(url: str, besides: str | Path | None = None) -> list[Path]:
    """Every manifest scored or judged into the store at ``url`` that still exists, latest first (a
    store scored from one manifest per generator has several), less ``besides`` (the one a caller
    already has). A store that cannot be opened: none."""
    try:
        with ResultStore(url, read_only=True) as store:
            noted = store.manifests()
    except StoreError:
        return []
    skip = Path(besides).resolve() if besides is not None else None
    return [path for path, _ in noted if path.is_file() and path.resolve() != skip]


def gone_manifests(url: str) -> list[Path]:
    """The manifests noted in the store at ``url`` that are no longer where they were scored from (the
    project folder moved or copied): named when a run folder finds no manifest."""
    try:
        with ResultStore(url, read_only=True) as store:
            noted = store.manifests()
    except StoreError:
        return []
    return [path for path, _ in noted if not path.is_file()]


def gone_note(url: str) -> str:
    """`` (its store notes ...)`` naming the manifests that are gone, or nothing."""
    gone = gone_manifests(url)
    if not gone:
        return ""
    shown = ", ".join(map(str, gone[:3])) + (f" and {len(gone) - 3} more" if len(gone) > 3 else "")
    return f" (its store notes {shown}, no longer there: a moved or copied project?)"


def report_items(rows: Sequence[ResultRow], manifest: str | Path | None,
                 more_manifests: Sequence[str | Path] = ()) -> list[Item]:
    """The items a report of ``rows`` describes: ``manifest``'s, then, from each of ``more_manifests``
    in turn, those of its items that an earlier manifest lacks and ``rows`` hold results of.

    Bad records are left out (``strict=False``), as the report of one manifest always did.
    """
    return _report_items({r.item_id for r in rows}, manifest, more_manifests)[0]


def _report_items(
    stored: Collection[str], manifest: str | Path | None, more_manifests: Sequence[str | Path]
) -> tuple[list[Item], list[Path], list[ManifestProblem]]:
    """:func:`report_items`, those of ``more_manifests`` that gave some of them, and the rows left out as
    invalid: every one of ``manifest``, those of ``more_manifests`` whose item id is ``stored`` (the
    store holds rows of it; a row left out there is a row the report would have added)."""
    # The stored results are read, not the files: an item whose video is missing now keeps them.
    problems: list[ManifestProblem] = []
    items: list[Item] = []
    if manifest is not None:
        suite = load_suite(manifest, strict=False, files="optional")
        items, problems = list(suite.items), [p for p in suite.problems if p.is_error]
    seen = {it.item_id for it in items}
    added: list[Path] = []
    for extra in more_manifests:
        before = len(items)
        more = load_suite(extra, strict=False, files="optional")
        for it in more.items:
            if it.item_id in stored and it.item_id not in seen:
                items.append(it)
                seen.add(it.item_id)
        problems += [p for p in more.problems if p.is_error and p.item_id in stored and p.item_id not in seen]
        if len(items) > before:
            added.append(Path(extra))
    return items, added, problems


def manifest_rows_note(problems: Sequence[ManifestProblem]) -> str | None:
    """The line that says how many manifest rows a report left out as invalid, or None."""
    if not problems:
        return None
    n = len(problems)
    return (f"{n} manifest row{'s' if n != 1 else ''} left out, {'they do' if n != 1 else 'it does'} not "
            f"validate, so {'their' if n != 1 else 'its'} stored results are in no per-item table (first: "
            f"{problems[0]}); `robojudge suite validate` lists them")


@dataclass(frozen=True)
class RunResults:
    """What :func:`load_run_results` read: the store, its current rows, and the items of the
    manifests behind them (with those manifests, the first one primary; a noted manifest that gave
    no item is not listed)."""

    db_url: str
    rows: list[ResultRow]
    items: list[Item]
    manifests: list[Path]
    #: Rows left out of ``rows`` because their inputs changed since (:func:`robojudge.run.stale_rows`).
    stale: list[ResultRow] = field(default_factory=list)


def load_run_results(run: str | Path, db: str | None = None, stale: StaleFinder | None = None,
                     metrics: Callable[[Sequence[str]], Collection[str] | None] | None = None
                     ) -> RunResults:
    """A run folder's results and items, read-only: its store (``results.sqlite``, or ``db``), and the
    items of the manifest in the folder (:func:`robojudge.suite.run_manifest`) and of every manifest
    scored or judged into the store (:func:`noted_manifests`), merged by :func:`report_items` (the
    later ones add the item ids the store holds rows of). A run scored from one manifest per generator
    is then ranked whole. Rows ``stale`` finds (:func:`robojudge.run.stale_rows`) are left out, into
    ``RunResults.stale``. ``metrics``: the rows read, as :func:`robojudge.run.load_suite_results` takes
    it (the items are those of every stored row all the same).

    Raises:
        FileNotFoundError: No store in the folder (and no ``db``).
        ValueError: No manifest in the folder or noted in the store, or none with a usable item.
        StoreError: The store cannot be read.
    """
    folder = Path(run)
    if db is None and not (folder / "results.sqlite").is_file():
        raise FileNotFoundError(f"{folder}: no results.sqlite in this run folder; score a suite into it "
                                "first")
    url = db or default_db_url(folder)
    own = run_manifest(folder)
    manifests = ([own] if own is not None else []) + noted_manifests(url, besides=own)
    if not manifests:
        raise ValueError(f"{folder}: no suite manifest in this run folder or scored into its store"
                         f"{gone_note(url)}; pass the manifest instead")
    with ResultStore(url, read_only=True) as store:
        chosen = None if metrics is None else metrics(store.metric_ids())
        rows = store.rows(metrics=chosen)
        stored = {r.item_id for r in rows} if chosen is None else store.item_ids()
    items, added, _ = _report_items(stored, manifests[0], manifests[1:])
    if not items:
        raise ValueError(f"{', '.join(map(str, manifests))}: no usable items (see `robojudge suite "
                         "validate`)")
    rows, left_out = without_stale(rows, items, stale)
    # Only the noted manifests that gave items, as the report names them: the original of a copied run
    # folder adds none, and naming it said the copy was read with another project's manifest.
    return RunResults(url, rows, items, [manifests[0], *added], left_out)


def without_stale(rows: list[ResultRow], items: Sequence[Item],
                  stale: StaleFinder | None) -> tuple[list[ResultRow], list[ResultRow]]:
    """``rows`` less those ``stale`` finds (their inputs changed since they were computed: a video
    replaced after scoring no longer has the old score), and those; ``rows`` whole without ``stale``."""
    found = stale(rows, items) if stale is not None else []
    if not found:
        return rows, []
    gone = {id(r) for r in found}
    return [r for r in rows if id(r) not in gone], found


_BUILDERS: tuple[tuple[str, str, Callable[[ReportInput], Section]], ...] = (
    ("overview", "Overview", overview_section),
    ("video_warnings", "Video warnings", video_warnings_section),
    ("judges", "Judges against the labels", lambda inp: judges_section(inp)[0]),
    ("metrics", "Metrics against the labels", metrics_section),
    ("generators", "Generator leaderboard", generators_section),
    ("robophys", "RoboPhys-3D scores", robophys_section),
    ("sensitivity", "RoboPhyscore threshold sensitivity", sensitivity_section),
    ("correlations", "Metric correlations", heatmap_section),
    ("motion", "Consistency and motion", motion_section),
    ("kiva", "Kinematic stability (KIVA)", kiva_section),
    ("sizes", "Evaluation sizes", sizes_section),
    ("libraries", "Library versions", libraries_section),
    ("networks", "Networks", networks_section),
    ("acceleration", "Acceleration audit", acceleration_section),
)


def build_sections(inp: ReportInput) -> list[Section]:
    """Every section of the report, in page order; skipped ones carry their reason.

    A section that fails on data it did not expect becomes a skipped section naming the error, so
    the rest of the report is still written (the error is logged with its traceback).
    """
    out = []
    for key, title, build in _BUILDERS:
        try:
            with step(f"writing the report's section \"{title}\""):
                out.append(build(inp))
        except Exception as exc:  # noqa: BLE001 (one section's bug must not cost the whole report)
            log.warning("report section %r failed", key, exc_info=True)
            out.append(Section(key, title, skipped=f"this section could not be built "
                               f"({type(exc).__name__}: {exc}); the other sections are unaffected"))
    return out


def write_html_report(
    db: str,
    out_dir: str | Path,
    *,
    manifest: str | Path | None = None,
    more_manifests: Sequence[str | Path] = (),
    higher_is_better: Direction | None = None,
    native_range: RangeOf | None = None,
    title: str = "robojudge report",
    bootstrap: int = 2000,
    seed: int = DEFAULT_SEED,
    stale: StaleFinder | None = None,
    config_key: ConfigKey | None = None,
    networks: NetworksOf | None = None,
    named: bool = True,
    command: Sequence[str] | None = None,
    defaults: DefaultsOf | None = None,
    rows: Sequence[ResultRow] | None = None,
) -> HtmlReport:
    """Write ``index.html`` and ``tables/*.{csv,md,tex}`` for the results stored at ``db``.

    Args:
        db: Result store URL (``sqlite:///...`` or PostgreSQL).
        out_dir: Report folder (created).
        manifest: The suite the results belong to; without it there are no labels or generators and
            the sections that need them say so.
        more_manifests: Other manifests scored into the same store (one per generator, say): their
            items that ``manifest`` lacks and the store holds results of are added
            (:func:`report_items`).
        higher_is_better: Direction of each stored metric (``KeyError`` for an id it does not know);
            defaults to the taxonomy's (RoboPhys-3D ids only). ``robojudge.metric_info.direction``
            adds the metric registry's and the rubrics' (the CLI passes it). A metric of unknown
            direction is reported as such.
        native_range: Native range of each stored metric (None: unknown); unknown for every metric by
            default (``robojudge.metric_info.registry_range`` gives the registry's).
        title: Page title.
        bootstrap: Cluster-bootstrap replicates for every interval.
        seed: Seed of the bootstrap and of the calibrated judge's folds.
        stale: Finds the rows whose inputs changed since they were computed
            (:func:`robojudge.run.stale_rows`, which the CLI passes): they are left out, and the page
            says how many. Without it every current row is reported.
        config_key: What configuration a metric's values are stored under
            (:func:`robojudge.metric_info.registry_config_key`, which the CLI passes): the acceleration
            audit reads a metric stored under several configurations under its default one. Without
            it, such a metric is left out of the audit (the section says so).
        networks: The networks each stored metric computes with
            (:func:`robojudge.metric_info.registry_networks`, which the CLI passes), for the "Networks"
            section; without it that section is skipped.
        named: ``out_dir`` is a folder the user named (``--out``): a link in it to a file is followed
            wherever it leads (an ``index.html`` linked into a published folder). False for a folder the
            caller chose (a run folder's default ``report/``, which may have been downloaded): only links
            staying inside it are followed. Either way a ``tables/`` leading out of it is refused
            (:func:`robojudge._files.replacing`).
        command: The command line that made the report (the CLI passes it), for the page's header and
            ``provenance.json`` (:mod:`robojudge.report._provenance`), which every report folder holds.
        defaults: Each metric's default config (:func:`robojudge.metric_info.registry_defaults`, which
            the CLI passes), so that the "Configurations" table and ``provenance.json`` say which
            settings differ from it; without it they give each config whole.
        rows: The store's current rows, read already (``robojudge report MANIFEST`` reads them once for
            the summary and the page, so that one report folder is one snapshot while a run writes the
            store); else they are read here.

    Returns:
        An :class:`HtmlReport`.
    """
    with ResultStore(db, read_only=True) as store:
        rows = store.rows() if rows is None else list(rows)
        where = store.url
    items, added, invalid = _report_items({r.item_id for r in rows}, manifest, more_manifests)
    rows, left_out = without_stale(rows, items, stale)
    inp = ReportInput(rows, items, higher_is_better or taxonomy_direction, bootstrap, seed,
                      native_range or unknown_range, config_key, networks or no_networks, left_out)
    sections = build_sections(inp)
    out = Path(out_dir)
    read = ([Path(manifest)] if manifest is not None else []) + list(added)
    suites = [str(m.absolute()) for m in read]
    plural = "s" if len(suites) > 1 else ""
    source = f"store {where}" + (f", suite{plural} {', '.join(suites)}" if suites else "")
    index = out / "index.html"
    notes = [n for n in (manifest_rows_note(invalid), stale_note(left_out)) if n]
    now = datetime.now(UTC)
    record = report_provenance(rows, store=where, manifests=read, bootstrap=bootstrap, seed=seed,
                               command=command, written=now, defaults=defaults or no_defaults)
    sections.insert(1, Section("configurations", "Configurations", intro=_CONFIGURATIONS_INTRO,
                               tables=[configurations_table(record)]))
    page = render_page(sections, title=title, source=source, notes=notes, about=header_lines(record),
                       written=now)
    with replacing(out, named=named) as files:  # the page last: it never names tables of another report
        written, unlisted = stage_tables(files, [t for sec in sections for t in sec.tables], out / "tables")
        stage_provenance(files, out, record)
        files.write_text(index, page)
    known = {it.item_id for it in items}
    outside = 0 if manifest is None else sum(
        r.item_id not in known and not r.item_id.startswith(GROUP_PREFIX) for r in rows)
    return HtmlReport(index, tuple(sections), tuple(written), tuple(left_out), tuple(added), outside,
                      tuple(unlisted), tuple(invalid))


_CONFIGURATIONS_INTRO = (
    "What produced each series of this report, from its stored rows: the metric version, the config hash, "
    "the settings that differ from the installed metric's defaults and the library versions; for a judge, "
    "its backend, model, rubrics and frame sampling. provenance.json beside this page holds the same, with "
    "each config whole, the bootstrap seed, the robojudge version, the command and the manifests' digests.")


#: The list of the table files a report wrote, in its ``tables/`` folder.
WRITTEN = "written_by_robojudge.txt"
_WRITTEN_HEAD = ("# The table files `robojudge report` wrote here; the next report into this folder removes "
                 "them.\n")
_TABLE_SUFFIXES = (".csv", ".md", ".tex")


def stage_tables(files: Staged, tables: Sequence[Table], folder: Path) -> tuple[list[Path], list[str]]:
    """Write ``tables`` into ``folder`` as part of ``files``: when they are renamed into place, the table
    files the previous report listed in :data:`WRITTEN` that are not written again are removed, then the
    new list replaces the old.

    Only what that list names is removed, and only plain ``.csv``, ``.md`` or ``.tex`` names in
    ``folder`` itself: a file of the user's in ``tables/`` is never touched. A report written before the
    list existed left none: in a report folder (``index.html`` beside ``folder``) without a list, the
    files named after a table the report writes (:func:`report_table_name`) are taken for that report's.

    Returns:
        The files written, and the names removed that no list named (those of a report without one).
    """
    listed = folder / WRITTEN
    unlisted = not listed.exists() and (folder.parent / "index.html").is_file()
    before = _earlier_tables(folder) if unlisted else _listed(listed)
    # A name that differs only in case from one written now (a generator renamed from Wan to wan) is
    # removed before the writes, the others after: where the file system ignores case (macOS, Windows)
    # the two names are one file, and removing it last took the table just written.
    planned = {f"{t.name}{suffix}" for t in tables for suffix in _TABLE_SUFFIXES}
    folded = {name.casefold() for name in planned}
    stale = sorted(before - planned)
    removed = [name for name in stale if name.casefold() in folded and _remove(files, folder / name)]
    written = [p for t in tables for p in t.stage(files, folder)]
    names = {p.name.casefold() for p in written} | folded
    removed += [name for name in stale if name.casefold() not in names and _remove(files, folder / name)]
    files.write_text(listed, _WRITTEN_HEAD + "".join(f"{p.name}\n" for p in written))
    return written, sorted(removed) if unlisted else []


def _remove(files: Staged, gone: Path) -> bool:
    """Stage the removal of ``gone`` when it is a file or a link; whether it was staged."""
    if gone.is_file() or gone.is_symlink():
        files.remove(gone)
        return True
    return False


#: The names of the tables the report writes (and has written since its first version), besides the
#: acceleration audit's, which are named after a generator (:data:`_PER_GENERATOR`).
REPORT_TABLES = frozenset({
    "configurations", "consistency_motion", "failed_everywhere", "fps_ablation", "judge_confusion",
    "judge_coverage", "judge_differences", "judge_self_consistency", "judge_statistics", "judges", "kiva",
    "leaderboard", "leaderboard_pairs", "libraries", "low_motion", "metric_agreement", "metric_correlations",
    "networks", "robophys", "robophys_coverage", "sample_size", "set_level", "sizes", "summary",
    "threshold_sensitivity",
    "video_warnings", "video_warnings_by_group",
})
_PER_GENERATOR = re.compile(r"(acceleration|retention)_[A-Za-z0-9_-]+")


def report_table_name(stem: str) -> bool:
    """Whether ``stem`` names a table the report writes (:data:`REPORT_TABLES`, or an acceleration
    audit's ``acceleration_<generator>`` and ``retention_<generator>``)."""
    return stem in REPORT_TABLES or _PER_GENERATOR.fullmatch(stem) is not None


def _earlier_tables(folder: Path) -> set[str]:
    """The files in ``folder`` named after a table the report writes, with a table file's suffix."""
    try:
        return {p.name for p in folder.iterdir()
                if p.suffix in _TABLE_SUFFIXES and report_table_name(p.stem) and not p.is_dir()}
    except OSError:  # no tables/ yet
        return set()


def _listed(path: Path) -> set[str]:
    """The table file names :func:`stage_tables` listed in ``path`` (none when it is missing)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return set()
    return {n for n in lines if not n.startswith("#") and n == Path(n).name and n.endswith(_TABLE_SUFFIXES)}


def render_page(sections: Sequence[Section], *, title: str, source: str, notes: Sequence[str] = (),
                about: Sequence[str] = (), written: datetime | None = None) -> str:
    """The HTML document of the report; ``about``: lines of the header under ``source`` (what made the
    report: :func:`robojudge.report._provenance.header_lines`), ``written``: its date (now by default)."""
    stamp = (written or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")
    nav = "".join(f'<a href="#{s.key}">{html.escape(s.title)}</a>' for s in sections)
    body = []
    for s in sections:
        parts = [f'<section id="{s.key}"><h2>{html.escape(s.title)}</h2>']
        if s.skipped is not None:
            parts.append(f'<p class="skipped">Not shown: {html.escape(s.skipped)}.</p>')
        else:
            if s.intro:
                parts.append(f'<p class="intro">{html.escape(s.intro)}</p>')
            if s.plots:
                parts.append('<div class="figures">' + "".join(f"<figure>{p}</figure>" for p in s.plots)
                             + "</div>")
            for t in s.tables:
                parts += [f'<p class="intro">{html.escape(n)}</p>' for n in t.notes()]
                parts.append(table_html(t))
            if s.tables:
                names = ", ".join(f"tables/{t.name}.{{csv,md,tex}}" for t in s.tables)
                parts.append(f'<p class="files">Also as {html.escape(names)}.</p>')
        parts.append("</section>")
        body.append("".join(parts))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        # An empty data: icon, so that browsers do not ask the server for /favicon.ico.
        '<link rel="icon" href="data:,">'
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>"
        f"<header><h1>{html.escape(title)}</h1><p>{html.escape(source)} &middot; written {stamp}</p>"
        + "".join(f"<p>{html.escape(line)}</p>" for line in about)
        + "".join(f'<p class="warning">{html.escape(n)}</p>' for n in notes) + "</header>"
        f"<nav>{nav}</nav><main>{''.join(body)}</main></body></html>\n"
    )
