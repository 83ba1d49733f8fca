"""Where a manifest's results go, and what a manifest must be for a run to write there."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

from robojudge.run._filehash import UNAVAILABLE, file_digest
from robojudge.store import ResultStore, StoreError, default_db_url, sqlite_url
from robojudge.suite import Item, ManifestError, Suite, load_suite

_log = logging.getLogger(__name__)


def default_run_dir(manifest: str | Path) -> Path:
    """The run folder a manifest's results go to and are read from when no ``--db`` or ``--run-dir`` is
    given: the run folder the manifest lies in (:func:`enclosing_run_dir`), else ``runs/<manifest file
    name without suffix>`` under the current folder.

    So a suite laid out as ``robojudge demo`` lays out ``runs/demo`` (``runs/demo/suite/suite.jsonl``
    scored into ``runs/demo/results.sqlite``) has one store, whether a command is given the run folder or
    the manifest: not ``runs/suite`` for the manifest beside ``runs/demo`` for the folder.
    """
    home = enclosing_run_dir(manifest, through_link=False)
    if home is not None:
        _log.debug("%s lies in the run folder %s, whose store notes it: using its store", manifest, home)
        return home
    fallback = Path("runs") / Path(manifest).stem
    if (fallback / "results.sqlite").is_file():  # (this path's own store, as a run through it made it)
        return fallback
    # A link to a manifest in a run folder: that folder, unless this path has a store of its own above
    # (a link scored before the links were followed keeps its store).
    home = enclosing_run_dir(manifest)
    if home is not None:
        _log.info("%s leads to %s, which lies in the run folder %s: using its store (--run-dir or --db "
                  "for another)", manifest, Path(manifest).resolve(), home)
        return home
    return fallback


def enclosing_run_dir(manifest: str | Path, *, through_link: bool = True) -> Path | None:
    """The nearest folder above ``manifest`` that holds a ``results.sqlite`` noting it
    (:meth:`ResultStore.note_manifest`: a run scored or judged it into that store, as ``robojudge demo``
    and ``robojudge score --run-dir`` do), or None. The folder is given relative to the current folder
    when it lies inside it. A store that cannot be read is passed over.

    The folders above the path as given are looked at first, then (``through_link``) those above the file
    it resolves to: a symlink to a manifest that lies in a run folder finds that run folder, as the
    manifest's own path does (:func:`default_run_dir` looks there only when the path has no
    ``runs/<name>`` store of its own)."""
    path = Path(manifest).expanduser()
    if not path.is_file():
        return None
    me = path.resolve()
    given = list(path.absolute().parents)
    for folder in given + ([f for f in me.parents if f not in given] if through_link else []):
        where = folder / "results.sqlite"
        if not where.is_file():
            continue
        try:
            with ResultStore(sqlite_url(where), read_only=True) as store:
                noted = [p for p, _ in store.manifests()]
        except (StoreError, OSError):
            continue
        if me in noted:
            try:
                return folder.relative_to(Path.cwd())
            except ValueError:
                return folder
    return None


def suite_store_url(manifest: str | Path, db: str | None = None) -> str:
    """The result store of a manifest's run: ``db``, else ``results.sqlite`` of :func:`default_run_dir` (the
    run folder the manifest lies in, else ``runs/<manifest name>``).

    Raises:
        StoreError: No ``db`` was given and the default store does not exist; the message says how to
            make one.
    """
    if db is not None:
        return db
    run_dir = default_run_dir(manifest)
    where = run_dir / "results.sqlite"
    if not where.exists():
        raise StoreError(f"no result store at {where}; pass --db or run `robojudge score` first")
    return default_db_url(run_dir)


def claim_store(
    store: ResultStore,
    manifest: str | Path,
    items: Sequence[Item],
    also: Callable[[list[Path]], None] | None = None,
    rest: Callable[[], Iterable[Sequence[Item]]] | None = None,
) -> None:
    """Note ``manifest`` in ``store`` (``robojudge report RUN`` finds it there) for a run about to write
    its results, unless :func:`refuse_shared_ids` -- or ``also``, given the same manifests -- refuses it
    against the manifests noted before it.

    The note comes first and the check against the manifests noted before it second
    (:meth:`ResultStore.claim_manifest`): of two clashing manifests whose runs start at once, the one
    noted later is refused, whichever run checks first (a check before the note let both pass). A
    refused manifest's note is taken back.

    ``rest``: the manifest's other items, block by block (a manifest scored as it is read), read and
    checked too when the store holds another manifest to check against; so a clash anywhere in it is
    refused before anything is stored, and the other manifests are let go before the run.

    Raises:
        ValueError: What the checks raise.
    """
    with store.claim_manifest(manifest) as before:
        shared = SharedIds(store, manifest, before)
        shared.check(items)
        if rest is not None and shared.others():
            for block in rest():
                shared.check(block)
        if also is not None:
            also(before)


class SharedIds:
    """:func:`refuse_shared_ids` for a manifest checked in parts (read block by block): the other
    manifests are read once, on the first part, not again for each."""

    def __init__(self, store: ResultStore, manifest: str | Path,
                 others: Iterable[Path] | None = None) -> None:
        self._store = store
        self._manifest = manifest
        self._others = None if others is None else list(others)
        self._theirs: list[tuple[Path, dict[str, Item]]] | None = None
        self._texts: list[str] | None = None  # (the registry's meta text keys, listed once, when needed)

    def others(self) -> int:
        """How many other manifests there are to check against (read on the first call)."""
        if self._theirs is None:
            self._theirs = [(path, {it.item_id: it for it in theirs})
                            for path, theirs in other_manifests(self._store, self._manifest, self._others)]
        return len(self._theirs)

    def check(self, items: Sequence[Item]) -> None:
        """Refuse ``items`` where another manifest gives one of their ids another input.

        Raises:
            ValueError: Naming both manifests, the item, its two inputs and how to give this one a store.
        """
        if not self.others():
            return
        assert self._theirs is not None
        me = Path(self._manifest).expanduser().resolve()
        for it in items:
            for path, theirs in self._theirs:
                other = theirs.get(it.item_id)
                if other is None:
                    continue
                self._texts = _meta_text_keys() if self._texts is None else self._texts
                differs = _first_difference(it, other, self._texts)
                if differs is None:
                    continue
                field, ours, their = differs
                own = f"runs/{me.parent.name}-{me.stem}" if me.parent.name else f"runs/{me.stem}-2"
                raise ValueError(
                    f"{self._store.url} holds results of another manifest, {path}, whose item "
                    f"{it.item_id!r} has another {field} ({their}) than in {self._manifest} ({ours}): "
                    "results are kept by item id, so the two would replace each other's. Give this "
                    f"manifest a store of its own: --run-dir {own} (or --db)")


def refuse_shared_ids(
    store: ResultStore, manifest: str | Path, items: Sequence[Item], others: Iterable[Path] | None = None
) -> None:
    """Refuse to write results of ``manifest`` into a store that holds those of another manifest which
    still exists and gives one of the same item ids another input: a video, reference, state file,
    initial frame, calibration or robot spec of other content, another instruction or embodiment, or
    another view.

    The default store is named after the manifest (``runs/<name>``), so two experiments whose manifests
    share a name (``exp1/videos.jsonl``, ``exp2/videos.jsonl``) meet in one store. Results are keyed by
    item id, so each run would take the other's results for stale and replace them, and a report of
    either would show whichever ran last. Several manifests of different items (one per generator)
    share a store as before, and so does a suite that was moved or copied (same content).

    ``others``: the manifests to check against (:func:`claim_store` gives those noted before this one);
    by default every manifest noted in ``store``.

    Raises:
        ValueError: Naming both manifests, the item, its two videos and how to give this one a store.
    """
    SharedIds(store, manifest, others).check(items)


#: The item fields whose files a result may read (compared by content), and those read as text.
_FILE_FIELDS = ("video", "reference_video", "state", "initial_frame", "calibration", "robot")
_TEXT_FIELDS = ("instruction", "embodiment", "main_view", "grid")


def _meta_text_keys() -> list[str]:
    """The ``meta`` keys metrics read as per-item texts (``meta.caption``...), from the registry."""
    from robojudge.metrics import list_metrics
    from robojudge.metrics._texts import item_text_fields

    return sorted({key for spec in list_metrics() for _, key in item_text_fields(spec.config_type)})


def _first_difference(a: Item, b: Item, texts: Sequence[str]) -> tuple[str, str, str] | None:
    """The first input two items of one id read differently, as ``(field, a's, b's)``, or None: a file
    of other content (one that cannot be read now counts as the same), a text, a view, the grid layout,
    or a ``meta`` text a metric reads (a caption). A moved or copied suite (same content) and fields no
    result reads (labels, generator) differ in nothing."""
    for name in _FILE_FIELDS:
        x, y = getattr(a, name), getattr(b, name)
        if _other_file(x, y):
            return name, str(x), str(y)
    for name in _TEXT_FIELDS:
        x, y = getattr(a, name), getattr(b, name)
        if x != y:
            return name, repr(x), repr(y)
    va, vb = a.views or {}, b.views or {}
    for view in sorted(set(va) | set(vb)):
        if _other_file(va.get(view), vb.get(view)):
            return f"view {view!r}", str(va.get(view)), str(vb.get(view))
    for key in texts:
        x, y = a.meta.get(key), b.meta.get(key)
        if x != y:
            return f"meta.{key}", repr(x), repr(y)
    return None


def _other_file(x: str | None, y: str | None) -> bool:
    if x == y:
        return False
    if x is None or y is None:
        return True
    digests = file_digest(x), file_digest(y)
    return digests[0] != digests[1] and not any(d in UNAVAILABLE for d in digests)


def other_manifests(store: ResultStore, manifest: str | Path, others: Iterable[Path] | None = None
                    ) -> Iterator[tuple[Path, list[Item]]]:
    """``(path, items)`` of each manifest in ``others`` (default: every one noted in ``store``) but
    ``manifest`` itself that exists and can be read now: one that cannot claims nothing."""
    me = Path(manifest).expanduser().resolve()
    for path in others if others is not None else [p for p, _ in store.manifests()]:
        if path == me or not path.is_file():
            continue
        try:
            yield path, load_suite(path, strict=False, files="optional").items
        except (ManifestError, OSError, ValueError):
            continue


def raise_if_no_items(suites: Sequence[Suite]) -> None:
    """Refuse a manifest of which no row validates (every block of it is in ``suites``), before a store is
    made: scoring it would do nothing, and a script would read the run as a success.

    Raises:
        ManifestError: With the rows' problems (or "manifest has no items" for an empty one).
    """
    if any(s.items for s in suites):
        return
    errors = [p for s in suites for p in s.problems if p.severity == "error"]
    raise ManifestError(errors or [p for s in suites for p in s.problems])


def refuse_run_folder(given: str | Path, instead: str) -> None:
    """Refuse a run folder (one holding ``results.sqlite``) where a manifest is wanted, naming the call
    that takes one; its items may come from several manifests, which only the report reads together.

    Raises:
        ValueError: ``given`` is a run folder.
    """
    path = Path(given)
    if path.is_dir() and (path / "results.sqlite").exists():
        raise ValueError(f"{given}: a run folder, not a manifest; for a run folder use {instead}, as the "
                         "CLI does, or pass the manifest scored into it")
