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
            f"{where}). Provide them with `robojudge weights fetch {spec.name}` on a machine with network "
            f"access, or copy the files to ${WEIGHTS_ENV}/{spec.name}/"
            + (f"{spec.filename}" if spec.filename else "")
            + (f". {spec.how}" if spec.how else "")
        )

    def __str__(self) -> str:
        return str(self.args[0])


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
        library: What loads it (``transformers``, ``torchvision``, ``pyiqa``, ``torchscript``).
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

    def __post_init__(self) -> None:
        if self.repo_id is None and not (self.url and self.filename):
            raise ValueError(f"weights {self.name!r}: give a hub repo_id, or a url and the filename it saves")
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
            return str(self.url)
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


def _usable(path: Path, spec: WeightSpec) -> bool:
    return path.is_file() if spec.filename else (path.is_dir() and any(path.iterdir()))


def _hub_cache(spec: WeightSpec) -> tuple[Path | None, str]:
    """The weights in the hub cache, and where that cache is (for the error message)."""
    try:
        from huggingface_hub import constants, scan_cache_dir, try_to_load_from_cache
    except ImportError:
        return None, "the Hugging Face hub cache (huggingface_hub not installed)"
    cache = Path(constants.HF_HUB_CACHE)
    where = f"the Hugging Face hub cache {cache}"
    if spec.repo_id is None:
        return None, f"{spec.url} is not on the hub, so only ${WEIGHTS_ENV} can hold it"
    if not cache.is_dir():
        return None, where
    if spec.filename:
        for wanted in ([spec.revision] if spec.revision else []) + ["main"]:
            hit = try_to_load_from_cache(spec.repo_id, spec.filename, revision=wanted)
            if isinstance(hit, str):
                return Path(hit), where
        return None, where
    try:
        info = scan_cache_dir(cache)
    except Exception:  # a corrupt cache is a missing cache here
        return None, where
    for repo in info.repos:
        if repo.repo_id != spec.repo_id:
            continue
        revs = sorted(repo.revisions, key=lambda r: r.last_modified, reverse=True)
        pinned = [r for r in revs if spec.revision and r.commit_hash.startswith(spec.revision)]
        for snapshot in pinned or revs:
            return Path(snapshot.snapshot_path), where
    return None, where


def weights_path(spec: WeightSpec) -> Path | None:
    """Where ``spec``'s weights are on this machine, or None."""
    local = _local_candidate(spec)
    if local is not None and _usable(local, spec):
        return local
    return _hub_cache(spec)[0]


def resolve_weights(name_or_spec: str | WeightSpec, *, metric: str | None = None) -> Path:
    """The local path of a network's weights (a folder, or the checkpoint file).

    Raises:
        MissingWeightsError: When neither the weights folder nor the hub cache has them; the message
            names ``metric``, the network and how to provide it.
    """
    spec = get_weights(name_or_spec) if isinstance(name_or_spec, str) else name_or_spec
    looked: list[str] = []
    local = _local_candidate(spec)
    if local is not None:
        if _usable(local, spec):
            return local
        looked.append(str(local))
    else:
        looked.append(f"${WEIGHTS_ENV} (unset)")
    hit, where = _hub_cache(spec)
    if hit is not None:
        return hit
    looked.append(where)
    raise MissingWeightsError(spec, metric, looked)
