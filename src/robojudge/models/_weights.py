"""Where each network's weights come from, and how a missing one is reported.

A :class:`WeightSpec` names one network: a Hugging Face repository pinned to a revision, optionally
one file inside it. :func:`resolve_weights` finds it, in this order, without ever downloading:

1. ``$ROBOJUDGE_WEIGHTS/<name>/`` (a folder holding the repository's files) or, for single-file
   weights, ``$ROBOJUDGE_WEIGHTS/<name>/<filename>``;
2. the standard Hugging Face hub cache (``HF_HUB_CACHE`` / ``HF_HOME``), at the pinned revision
   when the cache has it, else any cached snapshot of the repository.

``robojudge weights fetch NAME`` is the one place that downloads (on a machine with network).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from robojudge import settings
from robojudge.registry import Registry
from robojudge.settings import WEIGHTS_ENV


class MissingWeightsError(FileNotFoundError):
    """A metric needs a network whose weights are not on this machine.

    The message names the metric, the network, what was looked for and how to provide it. The runner
    records it per item like any other unscorable input (it subclasses ``FileNotFoundError``; the
    metrics layer wraps it in its input error).
    """

    def __init__(self, spec: WeightSpec, metric: str | None, looked: list[str]) -> None:
        self.spec, self.metric, self.looked = spec, metric, looked
        who = f"metric {metric!r} needs" if metric else "needs"
        where = "; ".join(looked)
        super().__init__(
            f"{who} the {spec.description} weights '{spec.name}' ({spec.source()}), not found (looked in: "
            f"{where}). {how_to_provide(spec)}" + (f". {spec.how}" if spec.how else "")
        )

    def __str__(self) -> str:
        return str(self.args[0])


class UnusableWeightsError(MissingWeightsError, ValueError):
    """A network's weights are on this machine but cannot be used: a file is missing from the folder, a
    file has the wrong size or hash, or the loader failed on it.

    ``state`` is ``"incomplete"`` or ``"corrupt"``; ``path`` the file or folder; ``problem`` what is wrong.
    It is a :class:`MissingWeightsError` (the runner records it per item) and a ``ValueError`` (what
    loaders raised for a file that does not match the network before it was wrapped).
    """

    def __init__(self, spec: WeightSpec, metric: str | None, path: Path, state: str, problem: str) -> None:
        self.spec, self.metric, self.looked = spec, metric, [str(path)]
        self.path, self.state, self.problem = path, state, problem
        who = f"metric {metric!r} needs" if metric else "needs"
        FileNotFoundError.__init__(
            self,
            f"{who} the {spec.description} weights '{spec.name}', but {path} is {state}: {problem}. "
            f"{how_to_provide(spec, 'Replace')}",
        )


def how_to_provide(spec: WeightSpec, verb: str = "Provide") -> str:
    """How a user gets ``spec``'s weights onto this machine, one sentence without its full stop
    (``verb``: ``Provide`` or ``Replace``)."""
    if spec.manual:
        return f"`robojudge weights fetch` cannot download '{spec.name}': {spec.manual}"
    where = f"${WEIGHTS_ENV}/{spec.name}/" + (spec.filename or "")
    return (f"{verb} them with `robojudge weights fetch {spec.name}` on a machine with network access, "
            f"or copy the files to {where}")


@dataclass(frozen=True)
class WeightSpec:
    """One network's weights.

    Attributes:
        name: Short stable name, also the folder name under ``$ROBOJUDGE_WEIGHTS``.
        repo_id: Hugging Face repository id the weights are published under, or ``None`` for a file
            published only at ``url``.
        revision: The pinned commit (or tag) of that repository; ``None`` only where no pin is known.
        filename: For single-file checkpoints, the file inside the repository; ``None`` means the whole
            repository is loaded with ``from_pretrained``.
        description: What the network is, in words ("CLIP ViT-B/32 image encoder").
        library: What loads it (``transformers``, ``torchvision``, ``pyiqa``, ``torchscript``, or
            robojudge's own network on torch: ``torch``, ``viclip``).
        how: Extra advice shown when the weights are missing.
        metrics: The metric ids that use this network (filled by :func:`register_weights` callers).
        url: A direct download address of the single file, for checkpoints published outside the hub
            (torchvision's); ``robojudge weights fetch`` uses it when there is no ``repo_id``.
        sha256: The full SHA-256 (64 lowercase hex digits) of the file at ``url``, where the publisher
            states one; ``robojudge weights fetch`` refuses a download that does not match it. Without
            it, only a hash prefix in a torchvision-style file name is checked.
        unverified: True where robojudge reads the checkpoint with code of its own (a port of the
            network, a mapping of its key names, a file format worked out from the publisher's code)
            that has never been run against the published file: tests run it on tiny random networks
            saved in the same layout. A mismatch with the real file stops with an error rather than a
            wrong value, but no value from the real file has been compared with the publisher's.
            False where the library's own loader reads the checkpoint as published for it
            (``transformers``' ``from_pretrained`` of a repository published for transformers,
            torchvision's weight files).
        manual: For weights nobody publishes as a download (a file you export yourself): how to make
            them, in words. ``robojudge weights fetch`` then refuses and says this instead.
        requires: For a folder spec, the files it must hold, each ``"a|b"`` for alternatives (default for
            transformers: ``config.json`` and a weights file). A folder that lacks one is incomplete.
        also: For a single-file spec, other names the same checkpoint may have in
            ``$ROBOJUDGE_WEIGHTS/<name>/`` (a ``model.safetensors`` beside ``model.pt``): the loader reads
            either, so either counts as present.
    """

    name: str
    repo_id: str | None
    revision: str | None
    description: str
    library: str
    filename: str | None = None
    how: str = ""
    metrics: tuple[str, ...] = field(default_factory=tuple)
    url: str | None = None
    sha256: str | None = None
    unverified: bool = False
    manual: str = ""
    requires: tuple[str, ...] = ()
    also: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.repo_id is None and not ((self.url or self.manual) and self.filename):
            raise ValueError(f"weights {self.name!r}: give a hub repo_id, or a url (or manual instructions) "
                             "and the filename it saves")
        if self.sha256 is not None and not re.fullmatch(r"[0-9a-f]{64}", self.sha256):
            raise ValueError(f"weights {self.name!r}: sha256 must be 64 lowercase hex digits, "
                             f"got {self.sha256!r}")

    def pinning(self) -> str:
        """How the exact file is fixed: a hub revision, a full SHA-256, a hash prefix in the file name
        (torchvision's convention, checked by ``weights fetch``), or ``"not pinned"``."""
        if self.repo_id is not None and self.revision:
            return f"revision {self.revision}"
        if self.sha256:
            return "sha256"
        if self.filename and re.search(r"-[0-9a-f]{8,64}\.[A-Za-z0-9]+$", self.filename):
            return "hash prefix in file name"
        return "not pinned"

    @property
    def pinned(self) -> bool:
        """Whether :meth:`pinning` fixes the file (anything but ``"not pinned"``)."""
        return self.pinning() != "not pinned"

    def source(self) -> str:
        if self.repo_id is None:
            return str(self.url) if self.url else f"made by you: {self.filename}, no download exists"
        rev = f"@{self.revision}" if self.revision else " (revision not pinned)"
        return f"hf://{self.repo_id}{rev}" + (f"/{self.filename}" if self.filename else "")


#: Every network robojudge knows, by name. The built-in specs are registered by the modules listed
#: under ``"weights"`` in :data:`robojudge.registry.BUILTIN_MODULES` (``robojudge.models._specs``);
#: installed packages add theirs through the ``robojudge.weights`` entry-point group.
def _check_spec(name: str, spec: WeightSpec) -> WeightSpec:
    """Only a :class:`WeightSpec` filed under its own name is registered (a plugin's entry point too)."""
    if not isinstance(spec, WeightSpec):
        raise TypeError(f"weights {name!r}: expected a WeightSpec, got {type(spec).__name__}")
    if spec.name != name:
        raise ValueError(f"weights {name!r}: the spec is named {spec.name!r}; register it under that name")
    return spec


WEIGHTS: Registry[WeightSpec] = Registry(
    "weights",
    entry_point_group="robojudge.weights",
    hint=" Run `robojudge weights list` to see all.",
    check=_check_spec,
)


def register_weights(spec: WeightSpec) -> WeightSpec:
    """Add a network to the catalogue shown by ``robojudge weights list``; returns ``spec``.

    Registering an equal spec again is a no-op, so a module that declares specs may be imported twice.

    Raises:
        ValueError: A different spec is already registered under the same name.
    """
    if WEIGHTS.is_registered(spec.name):
        if WEIGHTS.get(spec.name) != spec:
            raise ValueError(f"weights {spec.name!r} are already registered with different settings")
        return spec
    WEIGHTS.add(spec.name, spec)
    return spec


def get_weights(name: str) -> WeightSpec:
    """The registered spec called ``name``.

    Raises:
        robojudge.registry.UnknownNameError: (a ``KeyError``) for an unknown name; the message suggests
            close names.
    """
    return WEIGHTS.get(name)


def list_weights() -> list[WeightSpec]:
    """Every registered network, sorted by name."""
    return WEIGHTS.values()


def weights_root() -> Path | None:
    """``$ROBOJUDGE_WEIGHTS`` as a path, or None when unset."""
    return settings.get().weights


def _local_candidate(spec: WeightSpec) -> Path | None:
    root = weights_root()
    if root is None:
        return None
    folder = root / spec.name
    return folder / spec.filename if spec.filename else folder


def _exists(path: Path, spec: WeightSpec) -> bool:
    """Whether something is there to check (a file; a folder holding anything)."""
    return path.is_file() if spec.filename else (path.is_dir() and any(path.iterdir()))


#: A transformers repository's weights file: one of these (an index names its shards).
HF_WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin", "model.safetensors.index.json",
                   "pytorch_model.bin.index.json")


def required_files(spec: WeightSpec) -> list[tuple[str, ...]]:
    """The files a folder spec must hold, each as its alternatives (empty for a single-file spec)."""
    if spec.filename:
        return []
    if spec.requires:
        return [tuple(r.split("|")) for r in spec.requires]
    if spec.library == "transformers":
        return [("config.json",), HF_WEIGHT_FILES]
    return []


def pinned_hash(spec: WeightSpec) -> tuple[str, str] | None:
    """The SHA-256 (or prefix) pinned for ``spec``'s single file and what pins it, or None."""
    if not spec.filename:
        return None
    if spec.sha256:
        return spec.sha256, "its weights spec"
    m = re.search(r"-([0-9a-f]{8,64})\.[A-Za-z0-9]+$", Path(spec.filename).name)
    return (m.group(1), "its name") if m else None


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file, read in 1 MiB chunks."""
    import hashlib

    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def hash_problem(spec: WeightSpec, path: Path) -> str | None:
    """What is wrong with the pinned hash of ``spec``'s file at ``path`` (None: it matches, or none is
    pinned)."""
    pin = pinned_hash(spec)
    if pin is None or not path.is_file():
        return None
    want, by = pin
    got = file_sha256(path)
    if got.startswith(want):
        return None
    return f"its SHA-256 starts {got[:16]}, not {want[:16]} as {by} pins"


def weights_problem(spec: WeightSpec, path: Path, *, hashes: bool = False) -> tuple[str, str] | None:
    """``(state, problem)`` when the weights at ``path`` cannot be used as they are, else None.

    ``state`` is ``"incomplete"`` (a required file or a shard an index names is missing, the single
    file is empty) or
    ``"corrupt"`` (with ``hashes``, the pinned SHA-256 does not match).
    """
    if spec.filename:
        if path.stat().st_size == 0:
            return "incomplete", "the file is empty"
        bad = hash_problem(spec, path) if hashes else None
        return ("corrupt", bad) if bad else None
    for options in required_files(spec):
        hit = next((path / name for name in options if (path / name).is_file()), None)
        if hit is None:
            names = options[0] if len(options) == 1 else f"{', '.join(options[:-1])} or {options[-1]}"
            return "incomplete", f"no {names} in the folder"
        if hit.name.endswith(".index.json"):
            shards = _missing_shards(hit)
            if shards:
                missing = ", ".join(shards[:3])
                return "incomplete", f"{hit.name} names {len(shards)} missing shard(s): {missing}"
    return None


def _missing_shards(index: Path) -> list[str]:
    import json

    try:
        data = json.loads(index.read_text(encoding="utf-8"))
        names = sorted(set(data["weight_map"].values()))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return [f"(unreadable index {index.name})"]
    return [n for n in names if not (index.parent / n).is_file()]


def _hub_cache(spec: WeightSpec) -> tuple[list[Path], str]:
    """The weights' candidates in the hub cache (best first), and where that cache is (for messages)."""
    try:
        from huggingface_hub import constants, scan_cache_dir, try_to_load_from_cache
    except ImportError:
        return [], "the Hugging Face hub cache (huggingface_hub not installed)"
    cache = Path(constants.HF_HUB_CACHE)
    where = f"the Hugging Face hub cache {cache}"
    if spec.repo_id is None:
        what = spec.url or spec.filename
        return [], f"{what} is not on the hub, so only ${WEIGHTS_ENV} can hold it"
    if not cache.is_dir():
        return [], where
    if spec.filename:
        hits = []
        for wanted in ([spec.revision] if spec.revision else []) + ["main"]:
            hit = try_to_load_from_cache(spec.repo_id, spec.filename, revision=wanted)
            if isinstance(hit, str):
                hits.append(Path(hit))
        return hits, where
    try:
        info = scan_cache_dir(cache)
    except Exception:  # a corrupt cache is a missing cache here
        return [], where
    for repo in info.repos:
        if repo.repo_id != spec.repo_id:
            continue
        revs = sorted(repo.revisions, key=lambda r: r.last_modified, reverse=True)
        pinned = [r for r in revs if spec.revision and r.commit_hash.startswith(spec.revision)]
        return [Path(snapshot.snapshot_path) for snapshot in pinned or revs], where
    return [], where


@dataclass(frozen=True)
class FoundWeights:
    """Where a network's weights are and whether they can be used.

    ``state``: ``"present"``, ``"incomplete"``, ``"corrupt"`` or ``"missing"``; ``path``: the usable
    weights, else the first unusable ones found (None when missing); ``problem``: what is wrong;
    ``looked``: where it looked, for the missing-weights message.
    """

    state: str
    path: Path | None
    problem: str | None = None
    looked: tuple[str, ...] = ()


def find_weights(spec: WeightSpec, *, hashes: bool = False) -> FoundWeights:
    """``$ROBOJUDGE_WEIGHTS/<name>`` first, then the hub cache; the first usable copy wins (never
    downloads). ``hashes`` also checks a pinned SHA-256 (reads the whole file)."""
    looked: list[str] = []
    candidates: list[Path] = []
    local = _local_candidate(spec)
    if local is None:
        looked.append(f"${WEIGHTS_ENV} (unset)")
    else:
        looked.append(str(local))
        candidates.append(local)
        candidates += [local.parent / name for name in spec.also]
    hub, where = _hub_cache(spec)
    candidates += hub
    if not hub:
        looked.append(where)
    bad: FoundWeights | None = None
    for path in candidates:
        if not _exists(path, spec):
            continue
        problem = weights_problem(spec, path, hashes=hashes)
        if problem is None:
            return FoundWeights("present", path, None, tuple(looked))
        bad = bad or FoundWeights(problem[0], path, problem[1], tuple(looked))
    return bad or FoundWeights("missing", None, None, tuple(looked))


def weights_path(spec: WeightSpec) -> Path | None:
    """Where ``spec``'s usable weights are on this machine, or None (missing or incomplete)."""
    found = find_weights(spec)
    return found.path if found.state == "present" else None


def resolve_weights(name_or_spec: str | WeightSpec, *, metric: str | None = None) -> Path:
    """The local path of a network's weights (a folder, or the checkpoint file).

    Raises:
        MissingWeightsError: When neither the weights folder nor the hub cache has them; the message
            names ``metric``, the network and how to provide it.
        UnusableWeightsError: When the only copy found lacks a required file or is empty (names the
            weights, the file and how to replace it).
    """
    spec = get_weights(name_or_spec) if isinstance(name_or_spec, str) else name_or_spec
    found = find_weights(spec)
    if found.state == "present" and found.path is not None:
        return found.path
    if found.path is not None and found.problem is not None:
        raise UnusableWeightsError(spec, metric, found.path, found.state, found.problem)
    raise MissingWeightsError(spec, metric, list(found.looked))
