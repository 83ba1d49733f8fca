"""What the weights catalogue looks like on this machine, and the one place that downloads."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from robojudge.models._weights import (
    WeightSpec,
    get_weights,
    list_weights,
    weights_path,
    weights_root,
)
from robojudge.settings import WEIGHTS_ENV


@dataclass(frozen=True)
class WeightsStatus:
    """One network: its spec, whether it is present here, and where."""

    spec: WeightSpec
    path: Path | None

    @property
    def present(self) -> bool:
        return self.path is not None

    def describe(self) -> dict[str, Any]:
        """Plain JSON-able values (``robojudge weights status --json``)."""
        s = self.spec
        return {
            "name": s.name,
            "repo_id": s.repo_id,
            "revision": s.revision,
            "pinned": s.pinned,
            "pinning": s.pinning(),
            "unverified": s.unverified,
            "filename": s.filename,
            "source": s.source(),
            "library": s.library,
            "description": s.description,
            "present": self.present,
            "path": None if self.path is None else str(self.path),
            "sha256": s.sha256,
        }


def weights_status(names: list[str] | None = None) -> list[WeightsStatus]:
    """Presence of every registered network (or of ``names``), never downloading anything.

    Raises:
        KeyError: A name that is not registered (the message lists the known ones).
    """
    specs = list_weights() if names is None else [get_weights(n) for n in names]
    return [WeightsStatus(spec=s, path=weights_path(s)) for s in specs]


def fetch_weights(
    name: str,
    *,
    dest: str | Path | None = None,
    download: Callable[..., str] | None = None,
) -> Path:
    """Download one network into ``$ROBOJUDGE_WEIGHTS/<name>/`` (or ``dest``): the only download path.

    Uses ``huggingface_hub.snapshot_download`` at the spec's revision (``hf_hub_download`` for a
    single-file spec). ``download`` replaces that function (tests pass a fake one).

    Raises:
        KeyError: Unknown name. ValueError: neither ``dest`` nor ``$ROBOJUDGE_WEIGHTS`` is set.
    """
    spec = get_weights(name)
    if dest is None:
        root = weights_root()
        if root is None:
            raise ValueError(f"set ${WEIGHTS_ENV} to the folder that should hold the weights (or pass a "
                             "destination) before fetching")
        target = root / spec.name
    else:
        target = Path(dest)
    target.mkdir(parents=True, exist_ok=True)
    if spec.repo_id is None:
        fetch_url: Callable[..., str] = download or _download_url
        got_url = fetch_url(url=spec.url, filename=spec.filename, local_dir=str(target), sha256=spec.sha256)
        return Path(got_url)
    if spec.filename:
        fetch_file: Callable[..., str] = download or _hub("hf_hub_download")
        got = fetch_file(repo_id=spec.repo_id, filename=spec.filename, revision=spec.revision,
                         local_dir=str(target))
        _check_name_hash(Path(got), spec.filename)
        return Path(got)
    fetch_repo: Callable[..., str] = download or _hub("snapshot_download")
    fetch_repo(repo_id=spec.repo_id, revision=spec.revision, local_dir=str(target))
    return target


def expected_sha256_prefix(filename: str) -> str | None:
    """The SHA-256 prefix torchvision-style names carry (``raft_large_C_T_V1-22a6c225.pth``), or None."""
    m = re.search(r"-([0-9a-f]{8,64})\.[A-Za-z0-9]+$", Path(filename).name)
    return m.group(1) if m else None


def _check_name_hash(path: Path, filename: str) -> None:
    """A hub file whose name carries a SHA-256 prefix must match it (the pin of an unrevisioned spec).

    Raises:
        ValueError: It does not; the file is deleted.
    """
    want = expected_sha256_prefix(filename)
    if want is None:
        return
    import hashlib

    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    if not digest.hexdigest().startswith(want):
        path.unlink(missing_ok=True)
        raise ValueError(f"{filename}: downloaded file's SHA-256 {digest.hexdigest()[:16]}... does not start "
                         f"with {want}, the hash its name pins; nothing was saved")


def _download_url(*, url: str, filename: str, local_dir: str, sha256: str | None = None) -> str:
    """Fetch ``url`` to ``local_dir/filename`` through a temporary file (no half-written checkpoint).

    The download is checked against ``sha256`` (the spec's full hash) when given, else against the
    SHA-256 prefix a torchvision-style file name carries, so that hash is the pin of the file's content.

    Raises:
        ValueError: The downloaded bytes do not match the pinned hash (nothing is kept).
    """
    import hashlib
    import shutil
    import tempfile
    import urllib.request

    dest = Path(local_dir) / filename
    dest.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    with urllib.request.urlopen(url, timeout=60) as resp, tempfile.NamedTemporaryFile(
        dir=dest.parent, delete=False
    ) as tmp:
        while chunk := resp.read(1 << 20):
            digest.update(chunk)
            tmp.write(chunk)
    want, pin = (sha256, "its weights spec") if sha256 else (expected_sha256_prefix(filename), "its name")
    if want is not None and not digest.hexdigest().startswith(want):
        Path(tmp.name).unlink(missing_ok=True)
        raise ValueError(f"{url}: downloaded file's SHA-256 {digest.hexdigest()[:16]}... does not start with "
                         f"{want}, the hash {pin} pins; nothing was saved")
    shutil.move(tmp.name, dest)
    return str(dest)


def _hub(name: str) -> Callable[..., str]:
    """``huggingface_hub.<name>``, looked up at call time (so tests can patch the module)."""
    import huggingface_hub

    fn: Callable[..., str] = getattr(huggingface_hub, name)
    return fn
