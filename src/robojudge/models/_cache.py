"""The one cache of loaded networks: least recently used first out, bounded by count and by bytes.

Every loader in :mod:`robojudge.models` goes through :data:`NETWORKS`, so a worker scoring many items
loads each network once, while a run that uses more networks than fit (``--metrics all`` on one
GPU) keeps only the most recently used ones resident instead of all of them. The size of an entry is
the bytes of its tensors: parameters and buffers of every torch module it holds (a loaded network
is often a small bundle: model, processor, head). A network bigger than the byte budget on its own is
still kept (it is in use), alone.

:func:`clear` empties the cache and, when torch is loaded and a GPU is visible, hands the freed
memory back to the driver. torch is never imported here: an entry can only hold torch modules once
something else imported torch.
"""

from __future__ import annotations

import dataclasses
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from typing import Any, NamedTuple, TypeVar

from robojudge import settings

T = TypeVar("T")

#: Defaults: a few networks and at most 8 GiB of tensors resident per process. A run whose metrics
#: use more than this reloads some networks for every item (it scores an item with all its metrics
#: before the next); ``ROBOJUDGE_MAX_NETWORKS`` and ``ROBOJUDGE_NETWORK_CACHE_GIB`` raise the bounds
#: on a machine with room for more.
DEFAULT_MAX_NETWORKS = 4
DEFAULT_MAX_BYTES = 8 * 1024**3


class NetworkKey(NamedTuple):
    """What makes two loads the same network: the weights, their files, the device and the variant.

    ``variant`` separates networks built differently from the same files (the class that wraps
    them, a dtype).
    """

    weights: str
    files: str
    device: str
    variant: str = ""


def _tensors(obj: Any, seen: set[int]) -> Iterable[Any]:
    """Every tensor held by ``obj``: module parameters and buffers, through dataclasses, lists and dicts."""
    torch = sys.modules.get("torch")
    if torch is None or id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, torch.Tensor):
        yield obj
    elif isinstance(obj, torch.nn.Module):
        yield from obj.parameters()
        yield from obj.buffers()
        # Some wrappers (pyiqa's CLIP-IQA) keep a network in a list attribute, outside parameters().
        for value in vars(obj).values():
            if isinstance(value, list | tuple):
                for part in value:
                    yield from _tensors(part, seen)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            yield from _tensors(getattr(obj, f.name), seen)
    elif isinstance(obj, list | tuple):
        for part in obj:
            yield from _tensors(part, seen)
    elif isinstance(obj, dict):
        for part in obj.values():
            yield from _tensors(part, seen)


def network_nbytes(obj: Any) -> int:
    """Bytes of the tensors ``obj`` holds (each storage counted once); 0 when it holds none."""
    storages: dict[tuple[str, int], int] = {}
    for t in _tensors(obj, set()):
        storage = t.untyped_storage()
        storages[(str(t.device), storage.data_ptr())] = storage.nbytes()
    return sum(storages.values())


def release_gpu_memory() -> None:
    """Return cached CUDA blocks to the driver, when torch is already imported and a GPU is visible."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        torch.cuda.empty_cache()


class NetworkCache:
    """Loaded networks by key, least recently used evicted first.

    Args:
        max_networks: Most entries kept; None: ``$ROBOJUDGE_MAX_NETWORKS``, else
            :data:`DEFAULT_MAX_NETWORKS`, read from :mod:`robojudge.settings` when used.
        max_bytes: Most tensor bytes kept (see :func:`network_nbytes`); the newest entry is kept even
            when it alone is bigger. None: ``$ROBOJUDGE_NETWORK_CACHE_GIB``, else
            :data:`DEFAULT_MAX_BYTES`.
    """

    def __init__(self, max_networks: int | None = None, max_bytes: int | None = None) -> None:
        self._entries: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        # Re-entrant: a loader may build a part through the cache while building its network.
        self._lock = threading.RLock()
        self._max_networks: int | None = None
        self._max_bytes: int | None = None
        self.set_limits(max_networks, max_bytes)

    @property
    def max_networks(self) -> int:
        """The count bound in force (set here, else the settings, else the default)."""
        if self._max_networks is not None:
            return self._max_networks
        from_env = settings.get().max_networks
        return DEFAULT_MAX_NETWORKS if from_env is None else from_env

    @property
    def max_bytes(self) -> int:
        """The byte bound in force (set here, else the settings, else the default)."""
        if self._max_bytes is not None:
            return self._max_bytes
        from_env = settings.get().network_cache_bytes
        return DEFAULT_MAX_BYTES if from_env is None else from_env

    def set_limits(self, max_networks: int | None = None, max_bytes: int | None = None) -> None:
        """Change the bounds (``None`` keeps one) and evict what no longer fits.

        Raises:
            ValueError: ``max_networks`` below 1 or ``max_bytes`` below 0.
        """
        if max_networks is not None and max_networks < 1:
            raise ValueError(f"max_networks must be at least 1, got {max_networks}")
        if max_bytes is not None and max_bytes < 0:
            raise ValueError(f"max_bytes must be at least 0, got {max_bytes}")
        with self._lock:
            if max_networks is not None:
                self._max_networks = max_networks
            if max_bytes is not None:
                self._max_bytes = max_bytes
            self._evict()

    def get(self, key: Hashable, build: Callable[[], T]) -> T:
        """The network cached under ``key``, built by ``build()`` (and cached) when absent."""
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                hit: T = self._entries[key][0]
                return hit
            net = build()
            self._entries[key] = (net, network_nbytes(net))
            self._evict()
            return net

    def _evict(self) -> None:
        evicted = False
        if not self._entries:  # nothing to evict: the limits (and the settings behind them) are not read
            return
        max_networks, max_bytes = self.max_networks, self.max_bytes
        while len(self._entries) > 1 and (len(self._entries) > max_networks or self.nbytes > max_bytes):
            self._entries.popitem(last=False)
            evicted = True
        if evicted:
            release_gpu_memory()

    @property
    def nbytes(self) -> int:
        """Tensor bytes of the cached networks (as measured when each was added)."""
        return sum(size for _, size in self._entries.values())

    def keys(self) -> list[Hashable]:
        """Cached keys, least recently used first."""
        with self._lock:
            return list(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def clear(self) -> None:
        """Drop every cached network and free the GPU memory they held."""
        with self._lock:
            self._entries.clear()
        release_gpu_memory()


#: The process's cache of loaded networks.
NETWORKS = NetworkCache()


def clear() -> None:
    """Forget every loaded network and return the GPU memory they held (tests swapping weight files)."""
    NETWORKS.clear()


def set_cache_limits(max_networks: int | None = None, max_bytes: int | None = None) -> None:
    """Bound the network cache: at most ``max_networks`` networks and ``max_bytes`` bytes of tensors.

    A bound set here wins over the environment (``None`` leaves that bound as it is).
    """
    NETWORKS.set_limits(max_networks, max_bytes)
