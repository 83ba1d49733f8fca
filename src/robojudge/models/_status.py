"""What the weights catalogue looks like on this machine, and the one place that downloads."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import shutil
import socket
import tempfile
import urllib.error
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from robojudge.models._weights import (
    WeightSpec,
    file_sha256,
    find_weights,
    get_weights,
    how_to_provide,
    list_weights,
    weights_root,
)
from robojudge.settings import WEIGHTS_ENV


class WeightsFetchError(ValueError):
    """``robojudge weights fetch`` could not download a network; nothing it started is left behind."""


#: Why a hub download cannot start on an install without the torch extra (which brings huggingface_hub).
NO_HUB = "needs huggingface_hub, which is not installed: pip install '.[torch]' in a robojudge checkout"


@dataclass(frozen=True)
class WeightsStatus:
    """One network: its spec, whether it is usable here, and where.

    ``state`` is ``present``, ``missing``, ``incomplete`` (a file it needs is missing or empty) or
    ``corrupt`` (a pinned SHA-256 does not match); ``path`` is where it was found (also when unusable);
    ``problem`` says what is wrong.
    """

    spec: WeightSpec
    path: Path | None
    state: str = "present"
    problem: str | None = None

    @property
    def present(self) -> bool:
        return self.path is not None and self.state == "present"

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
            "state": self.state if self.path is not None else "missing",
            "problem": self.problem,
            "path": None if self.path is None else str(self.path),
            "sha256": s.sha256,
            "remedy": None if self.present else how_to_provide(s),
            "manual": s.manual or None,
        }


def weights_status(names: list[str] | None = None, *, hashes: bool = True) -> list[WeightsStatus]:
    """Presence of every registered network (or of ``names``), never downloading anything.

    Each copy found is checked: the files a folder needs are there and not empty and, with ``hashes``,
    a single file's pinned SHA-256 matches (this reads the whole file).

    Raises:
        KeyError: A name that is not registered (the message lists the known ones).
    """
    specs = list_weights() if names is None else [get_weights(n) for n in names]
    out = []
    for spec in specs:
        found = find_weights(spec, hashes=hashes)
        out.append(WeightsStatus(spec=spec, path=found.path, state=found.state, problem=found.problem))
    return out


def fetch_weights(
    name: str,
    *,
    dest: str | Path | None = None,
    download: Callable[..., str] | None = None,
) -> Path:
    """Download one network into ``$ROBOJUDGE_WEIGHTS/<name>/`` (or ``dest``): the only download path.

    Uses ``huggingface_hub.snapshot_download`` at the spec's revision (``hf_hub_download`` for a
    single-file spec). ``download`` replaces that function (tests pass a fake one). The files are
    downloaded into a temporary folder beside the destination and moved into it only when the download
    (and its hash check) succeeded; a failed fetch leaves nothing behind.

    Raises:
        KeyError: Unknown name. ValueError: neither ``dest`` nor ``$ROBOJUDGE_WEIGHTS`` is set, or a
        downloaded file does not match its pinned hash. WeightsFetchError: (a ``ValueError``) weights
        nobody publishes (the message says how to make them), or the download failed (the host could
        not be reached, it refused): the message is one line, saying what to do instead.
    """
    spec = get_weights(name)
    if spec.manual:
        raise WeightsFetchError(how_to_provide(spec))
    if spec.repo_id is not None and download is None and importlib.util.find_spec("huggingface_hub") is None:
        raise WeightsFetchError(f"fetching {spec.name} from the Hugging Face hub {NO_HUB}")
    if dest is None:
        root = weights_root()
        if root is None:
            raise ValueError(f"set ${WEIGHTS_ENV} to the folder that should hold the weights before "
                             "fetching, or name the folder to download into (`robojudge weights fetch "
                             f"{spec.name} --dest FOLDER`)")
        target = root / spec.name
    else:
        target = Path(dest)
    created = [p for p in (target, *target.parents) if not p.exists()]
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{spec.name}.fetching-", dir=target.parent))
    done = False
    try:
        got = _download(spec, staging, download)
        result = _move_into_place(staging, target, got)
        done = True
        return result
    except (KeyError, ValueError):
        raise
    except Exception as exc:
        raise _fetch_error(spec, exc, target) from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if not done:
            for folder in created:  # deepest first; only the empty folders this fetch made
                with contextlib.suppress(OSError):
                    folder.rmdir()


def _download(spec: WeightSpec, staging: Path, download: Callable[..., str] | None) -> str:
    """Download ``spec`` into ``staging``; the path the download function returned."""
    if spec.repo_id is None:
        fetch_url: Callable[..., str] = download or _download_url
        return fetch_url(url=spec.url, filename=spec.filename, local_dir=str(staging), sha256=spec.sha256)
    if spec.filename:
        fetch_file: Callable[..., str] = download or _hub("hf_hub_download")
        got = fetch_file(repo_id=spec.repo_id, filename=spec.filename, revision=spec.revision,
                         local_dir=str(staging))
        _check_name_hash(Path(got), spec.filename)
        return got
    fetch_repo: Callable[..., str] = download or _hub("snapshot_download")
    fetch_repo(repo_id=spec.repo_id, revision=spec.revision, local_dir=str(staging))
    return str(staging)


def _move_into_place(staging: Path, target: Path, got: str) -> Path:
    """Move what ``staging`` holds into ``target`` (replacing files of the same name), and map ``got``
    (a path the download returned) to its new place."""
    target.mkdir(parents=True, exist_ok=True)
    _merge(staging, target)
    try:
        rel = Path(got).resolve().relative_to(staging.resolve())
    except ValueError:  # a path outside the staging folder (a fake download in tests)
        return Path(got)
    return target / rel if rel.parts else target


def _merge(src: Path, dst: Path) -> None:
    for child in src.iterdir():
        to = dst / child.name
        if child.is_dir() and not child.is_symlink():
            if to.is_dir() and not to.is_symlink():
                _merge(child, to)
                continue
            if to.exists() or to.is_symlink():
                to.unlink()
        elif to.is_dir() and not to.is_symlink():
            shutil.rmtree(to)
        os.replace(child, to)


def _fetch_error(spec: WeightSpec, exc: Exception, target: Path) -> WeightsFetchError:
    """One line for a failed download: the host that could not be reached and what to do instead."""
    host = _host(spec)
    kind = type(exc).__name__
    first = (str(exc).strip().splitlines() or [kind])[0]
    copy = (f"run `robojudge weights fetch {spec.name}` on a connected machine and copy the folder it "
            f"fills, ${WEIGHTS_ENV}/{spec.name}, to {target} here (nothing was kept)")
    if kind in ("LocalEntryNotFoundError", "OfflineModeIsEnabled"):
        why = "HF_HUB_OFFLINE is set" if _hub_offline() else "no connection"
        return WeightsFetchError(f"cannot reach {host} ({why}): {copy}")
    if isinstance(exc, urllib.error.HTTPError):
        return WeightsFetchError(f"{spec.url}: the server answered HTTP {exc.code} {exc.reason}; nothing was "
                                 "kept")
    if isinstance(exc, ImportError):  # a library missing here, not the server's answer
        if (exc.name or "").partition(".")[0] == "huggingface_hub":
            return WeightsFetchError(f"fetching {spec.name} from the Hugging Face hub {NO_HUB}")
        return WeightsFetchError(f"fetching {spec.name} needs a library that cannot be imported here "
                                 f"({kind}: {first}); nothing was kept")
    if kind.endswith(("NotFoundError", "GatedRepoError", "HfHubHTTPError", "DisabledRepoError")):
        return WeightsFetchError(f"{host} refused {spec.source()} ({kind}: {first}); nothing was kept")
    if isinstance(exc, urllib.error.URLError):
        return WeightsFetchError(f"cannot reach {host} ({exc.reason}): {copy}")
    unreachable = isinstance(exc, (ConnectionError, TimeoutError, socket.gaierror))
    if unreachable or "Connect" in kind or "Timeout" in kind:
        return WeightsFetchError(f"cannot reach {host} ({kind}: {first}): {copy}")
    return WeightsFetchError(f"fetching {spec.name} from {host} failed ({kind}: {first}); nothing was kept")


def _host(spec: WeightSpec) -> str:
    if spec.url:
        return urllib.parse.urlparse(spec.url).hostname or spec.url
    try:
        from huggingface_hub import constants

        endpoint = str(constants.ENDPOINT)
    except ImportError:
        endpoint = "https://huggingface.co"
    return urllib.parse.urlparse(endpoint).hostname or endpoint


def _hub_offline() -> bool:
    try:
        from huggingface_hub import constants
    except ImportError:
        return False
    return bool(constants.HF_HUB_OFFLINE)


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
    got = file_sha256(path)
    if not got.startswith(want):
        path.unlink(missing_ok=True)
        raise ValueError(f"{filename}: downloaded file's SHA-256 {got[:16]}... does not start "
                         f"with {want}, the hash its name pins; nothing was saved")


def _download_url(*, url: str, filename: str, local_dir: str, sha256: str | None = None) -> str:
    """Fetch ``url`` to ``local_dir/filename`` through a temporary file (no half-written checkpoint).

    The download is checked against ``sha256`` (the spec's full hash) when given, else against the
    SHA-256 prefix a torchvision-style file name carries, so that hash is the pin of the file's content.

    Raises:
        ValueError: The downloaded bytes do not match the pinned hash (nothing is kept).
    """
    import hashlib
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
