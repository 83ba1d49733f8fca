"""Helpers every loader shares: which device, where the files are, reading a checkpoint, eval mode.

This module imports no loader (the loaders import it), so the ``robojudge.models`` package has no
import circle. torch is imported inside the functions only.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from robojudge.models._cache import NETWORKS, NetworkKey
from robojudge.models._weights import (
    MissingWeightsError,
    UnusableWeightsError,
    WeightSpec,
    get_weights,
    hash_problem,
    resolve_weights,
)

if TYPE_CHECKING:
    import torch

T = TypeVar("T")


def torch_device(prefer: str | None = None) -> str:
    """``prefer`` if given, else ``cuda`` when a GPU is visible, else ``cpu`` (imports torch)."""
    if prefer:
        return prefer
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def as_spec(spec: WeightSpec | str) -> WeightSpec:
    """``spec`` itself, or the registered spec of that name."""
    return get_weights(spec) if isinstance(spec, str) else spec


def local_weights(spec: WeightSpec | str, metric: str | None) -> Path:
    """The resolved local file or folder of ``spec`` (never a download; see :func:`resolve_weights`).

    Raises:
        MissingWeightsError: When the weights are not on this machine (names ``metric``).
    """
    return resolve_weights(as_spec(spec), metric=metric)


def folder_config(folder: Path, name: str = "config.json") -> dict[str, Any] | None:
    """The JSON object in ``folder/name`` (a hub repository's ``config.json``), or None without that file.

    Raises:
        ValueError: When the file is not valid JSON or not a JSON object (names the file).
    """
    path = folder / name
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object, got {type(data).__name__}")
    return data


def torch_dtype(name: str) -> Any:
    """The ``torch.dtype`` called ``name`` (``"bfloat16"``, ``"float32"``).

    Raises:
        ValueError: When torch has no dtype of that name.
    """
    import torch

    dtype = getattr(torch, name, None)
    if not isinstance(dtype, torch.dtype):
        raise ValueError(f"{name!r} is not a torch dtype (e.g. 'float32', 'bfloat16', 'float16')")
    return dtype


def load_state_dict(path: Path) -> dict[str, torch.Tensor]:
    """A checkpoint's tensors, on CPU, without running pickled code (``weights_only``).

    Accepts a bare state dict or one nested under ``state_dict``/``params``/``model``, and strips a
    ``module.`` prefix left by ``DataParallel``.

    Raises:
        ValueError: When the file holds no state dict.
    """
    import torch

    obj: Any = torch.load(path, map_location="cpu", weights_only=True)
    for key in ("state_dict", "params", "model"):
        if isinstance(obj, dict) and isinstance(obj.get(key), dict):
            obj = obj[key]
    if not isinstance(obj, dict) or not all(isinstance(v, torch.Tensor) for v in obj.values()):
        raise ValueError(f"{path} does not hold a state dict of tensors")
    return {k.removeprefix("module."): v for k, v in obj.items()}


def ready(net: torch.nn.Module, device: str) -> torch.nn.Module:
    """``net`` in eval mode, its parameters frozen, on ``device``."""
    net.eval()
    for param in net.parameters():  # ScriptModules lack requires_grad_(); this works for both kinds
        param.requires_grad_(False)
    return net.to(device)


def load_cached(spec: WeightSpec | str, variant: str, build: Callable[[Path, str], T], *,
                metric: str | None = None, device: str | None = None) -> T:
    """The network ``build(path, device)`` makes from ``spec``'s local files, through the network cache.

    Keyed by (weights name, resolved path and :func:`files_stamp` of its files, device, ``variant``);
    ``variant`` names what ``build`` makes from the files (two loaders reading the same checkpoint differ
    in it). Weights replaced in place are loaded again: keyed by the path alone, a long-lived process
    kept computing with the old network while the results' fingerprint named the new files.

    Raises:
        MissingWeightsError: When the weights are not on this machine (names ``metric``).
        UnusableWeightsError: When they are incomplete, or ``build`` fails on them (names the weights,
            the file, the loader's error and how to replace them).
    """
    spec = as_spec(spec)
    path = local_weights(spec, metric)
    dev = torch_device(device)
    return NETWORKS.get(NetworkKey(spec.name, f"{path}|{files_stamp(path)}", dev, variant),
                        lambda: checked_load(spec, path, metric, lambda: build(path, dev)))


def files_stamp(path: Path) -> str:
    """A cheap identity of a weights file or folder as it is now: each file's name, size, modification
    and change times and inode (a stat per file, no reading). The change time and inode are what tell
    another file copied in with the same size and time (``cp -p``, ``rsync -t``, an archive) apart:
    no copy can set them."""
    import hashlib

    if path.is_file():
        files = [path]
    else:
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else []
    h = hashlib.sha256()
    for f in files:
        try:
            st = f.stat()
        except OSError:
            continue
        name = f.relative_to(path) if f != path else f.name
        h.update(f"{name}|{st.st_size}|{st.st_mtime_ns}|{st.st_ctime_ns}|{st.st_ino}\n".encode())
    return h.hexdigest()[:16]


def checked_load(spec: WeightSpec, path: Path, metric: str | None, build: Callable[[], T]) -> T:
    """``build()``, with a failure to read the weights at ``path`` turned into an
    :class:`UnusableWeightsError` naming the weights, the file and how to replace them.

    A missing library (``ImportError``), running out of memory and the weights errors themselves pass
    through unchanged.
    """
    try:
        return build()
    except (MissingWeightsError, ImportError, MemoryError):
        raise
    except Exception as exc:
        if "OutOfMemory" in type(exc).__name__:
            raise
        detail = (str(exc).strip().splitlines() or [""])[0]
        problem = f"loading failed ({type(exc).__name__}: {detail})".replace(": )", ")")
        bad_hash = hash_problem(spec, path)
        state = "corrupt" if bad_hash else "unreadable"
        if bad_hash:
            problem += f"; {bad_hash}"
        raise UnusableWeightsError(spec, metric, path, state, problem) from exc
