"""CLIP-IQA (Wang, Chan and Loy, AAAI 2023) as pyiqa builds it, on OpenAI's CLIP RN50 from a local file.

pyiqa's ``CLIPIQA(model_type="clipiqa")`` scores an image by the softmax of its CLIP similarity to
five antonym prompt pairs ("Good image" / "bad image", "Sharp image" / "blurry image", ...), averaged
over the pairs, with the RN50 attention pool run without its positional embedding. Its only weights
are OpenAI's CLIP RN50 (:data:`robojudge.models.CLIP_RN50_OPENAI`); the learned prompts of
``clipiqa+`` are not used, so nothing else is loaded.

The backbone is handed to pyiqa as the resolved file's path: pyiqa's ``clip_model.load`` downloads
only when given a model *name* ("RN50"), never for a path, so nothing is fetched here. torch, pyiqa
and openai-clip are imported inside the functions only.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import types
import warnings
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from robojudge.models._load import load_cached, ready
from robojudge.models._specs import CLIP_RN50_OPENAI

if TYPE_CHECKING:
    import torch

_SHIM = "pkg_resources"
_SHIM_LOCK = threading.Lock()


@contextlib.contextmanager
def packaging_as_pkg_resources() -> Iterator[bool]:
    """While the block runs, a stand-in ``pkg_resources`` module whose only attribute is ``packaging``.

    Why: openai-clip's ``clip/clip.py`` runs ``from pkg_resources import packaging`` at import time,
    and recent setuptools (84 in this project's environment) no longer ship ``pkg_resources``, so
    importing pyiqa's CLIP-IQA fails there. clip needs only ``packaging.version`` from it, which the
    real ``packaging`` library provides.
    The stand-in is put in ``sys.modules`` only when ``pkg_resources`` cannot be imported, and taken
    out again when the block ends (also on error), so code imported later never mistakes it for
    setuptools' module. The block should import ``clip`` and nothing unrelated.

    Yields:
        Whether the stand-in was installed (False when a real ``pkg_resources`` is importable).
    """
    with _SHIM_LOCK:
        try:
            import pkg_resources  # noqa: F401  (the real one, on older setuptools)
        except ImportError:
            pass
        else:
            yield False
            return
        import packaging.version  # noqa: F401  (clip calls packaging.version.parse at import time)

        shim = types.ModuleType(_SHIM, "robojudge's stand-in exposing only `packaging`, for openai-clip")
        shim.packaging = sys.modules["packaging"]  # type: ignore[attr-defined]
        sys.modules[_SHIM] = shim
        try:
            yield True
        finally:
            if sys.modules.get(_SHIM) is shim:
                del sys.modules[_SHIM]


def clipiqa_arch() -> Any:
    """pyiqa's ``pyiqa.archs.clipiqa_arch`` module, imported with :func:`packaging_as_pkg_resources`."""
    loaded = sys.modules.get("pyiqa.archs.clipiqa_arch")
    if loaded is not None:
        return loaded
    # pyiqa, torch and torchvision come in first, so that only openai-clip's own modules are imported
    # while the stand-in exists; clipiqa_arch then finds clip already imported.
    import pyiqa.archs  # noqa: F401
    import torchvision.transforms  # noqa: F401

    with packaging_as_pkg_resources():
        import clip  # noqa: F401
    from pyiqa.archs import clipiqa_arch

    return clipiqa_arch


def _is_torchscript(path: Path) -> bool:
    """Whether ``path`` is a TorchScript archive (a zip with a ``code/`` folder), as OpenAI's RN50.pt."""
    if not zipfile.is_zipfile(path):
        return False
    with zipfile.ZipFile(path) as archive:
        return any("/code/" in name for name in archive.namelist())


def clip_network(net: torch.nn.Module) -> torch.nn.Module:
    """The CLIP model inside a pyiqa ``CLIPIQA`` (pyiqa keeps it in a list, outside ``parameters()``)."""
    holder: Any = net.clip_model
    clip_model: torch.nn.Module = holder[0]
    return clip_model


def _clipiqa(path: Path, device: str) -> torch.nn.Module:
    arch = clipiqa_arch()
    try:
        with warnings.catch_warnings():
            # OpenAI publishes CLIP as TorchScript; torch's deprecation notice for jit.load is not ours.
            warnings.filterwarnings(
                "ignore", message=r".*torch\.jit\.load.*deprecated", category=FutureWarning
            )
            # pretrained=False: the learned-prompt checkpoints exist only for clipiqa+, not used here.
            net: torch.nn.Module = arch.CLIPIQA(
                model_type="clipiqa", backbone=str(path), pretrained=False, pos_embedding=False
            )
    except Exception as exc:
        if _is_torchscript(path):
            raise
        # pyiqa's loader tries torch.jit.load first and then reads a state dict from where that left
        # the file, which fails: only the TorchScript file OpenAI publishes loads.
        raise ValueError(
            f"{path} is not a TorchScript CLIP archive; CLIP-IQA needs OpenAI's RN50.pt as published at "
            f"{CLIP_RN50_OPENAI.url} ({type(exc).__name__}: {exc})"
        ) from exc
    # The CLIP model is not a registered submodule, so it is readied (eval, frozen, device) itself.
    ready(clip_network(net), device)
    net.eval()
    return net


def load_clipiqa(metric: str | None = None, device: str | None = None) -> torch.nn.Module:
    """pyiqa's CLIP-IQA on OpenAI's CLIP RN50: input ``(N, 3, H, W)`` RGB in [0, 1], output ``(N, 1)``.

    The network normalises with CLIP's mean and standard deviation itself and takes any image size
    (no positional embedding). Inputs must be on the device of :func:`clip_network`; pyiqa moves the
    CLIP model to its input's device on every call. Cached (see :mod:`robojudge.models._cache`).

    Raises:
        MissingWeightsError: When ``RN50.pt`` is not on this machine (names ``metric`` and the file).
        ValueError: When the file is not a TorchScript archive.
    """
    return load_cached(CLIP_RN50_OPENAI, "clipiqa", _clipiqa, metric=metric, device=device)
