"""The one network cache: least recently used out first, bounded by count and by tensor bytes; clear().

Networks are tiny and random, built from sizes or configs here and, for the loaders, saved into the
``weights`` fixture's folder; nothing comes from a hub.
"""

import gc
import weakref

import pytest

torch = pytest.importorskip("torch")

from robojudge import models  # noqa: E402
from robojudge.models import (  # noqa: E402
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_NETWORKS,
    NETWORKS,
    NetworkCache,
    NetworkKey,
    clear,
    network_nbytes,
    set_cache_limits,
)


def linear(n_in: int, n_out: int, seed: int = 0) -> torch.nn.Module:
    torch.manual_seed(seed)
    return torch.nn.Linear(n_in, n_out)


def key(name: str) -> NetworkKey:
    return NetworkKey(name, f"/weights/{name}", "cpu")


def test_size_counts_parameters_and_buffers_once():
    net = torch.nn.Sequential(torch.nn.Linear(10, 20), torch.nn.BatchNorm1d(20))
    # weight 10*20 + bias 20, batch norm: weight and bias 20 each, running mean and var 20 each, float32;
    # and the batch counter, one int64.
    assert network_nbytes(net) == (200 + 20 + 4 * 20) * 4 + 8
    # A bundle holding the same module twice (a model and a head that share it) counts it once.
    assert network_nbytes({"model": net, "same": net, "processor": "not a tensor"}) == network_nbytes(net)
    assert network_nbytes("no tensors") == 0


def test_wrapped_network_outside_parameters_is_counted():
    class Wrapper(torch.nn.Module):  # as pyiqa's CLIP-IQA keeps CLIP: in a list, not a submodule
        def __init__(self) -> None:
            super().__init__()
            self.inner = [torch.nn.Linear(4, 4)]

    assert list(Wrapper().parameters()) == []
    assert network_nbytes(Wrapper()) == (16 + 4) * 4


def test_evicts_least_recently_used_by_count():
    cache = NetworkCache(max_networks=2, max_bytes=1 << 30)
    built: list[str] = []

    def build(name: str, seed: int):
        def make() -> torch.nn.Module:
            built.append(name)
            return linear(4, 4, seed)
        return make

    a = cache.get(key("a"), build("a", 0))
    cache.get(key("b"), build("b", 1))
    assert cache.get(key("a"), build("a", 9)) is a  # a hit, and now the most recently used
    cache.get(key("c"), build("c", 2))
    assert cache.keys() == [key("a"), key("c")]  # b was the least recently used
    assert built == ["a", "b", "c"]
    cache.get(key("b"), build("b", 1))
    assert built == ["a", "b", "c", "b"] and cache.keys() == [key("c"), key("b")]


def test_evicts_by_bytes_and_keeps_an_oversized_network_alone():
    size = network_nbytes(linear(100, 100))  # (10000 + 100) * 4
    assert size == 40_400
    cache = NetworkCache(max_networks=10, max_bytes=2 * size + 10)
    for name in "abc":
        cache.get(key(name), lambda: linear(100, 100))
    assert cache.keys() == [key("b"), key("c")] and cache.nbytes == 2 * size
    big = cache.get(key("big"), lambda: linear(300, 300))
    assert cache.keys() == [key("big")]  # bigger than the budget: kept (it is in use), alone
    assert cache.get(key("big"), lambda: linear(1, 1)) is big
    cache.set_limits(max_bytes=0)
    assert cache.keys() == [key("big")]


def test_lower_limits_evict_at_once_and_bad_limits_are_refused():
    cache = NetworkCache(max_networks=3)
    for name in "abc":
        cache.get(key(name), lambda: linear(2, 2))
    cache.set_limits(max_networks=1)
    assert cache.keys() == [key("c")]
    with pytest.raises(ValueError, match="max_networks"):
        cache.set_limits(max_networks=0)
    with pytest.raises(ValueError, match="max_bytes"):
        cache.set_limits(max_bytes=-1)


def test_eviction_and_clear_drop_the_cache_reference():
    cache = NetworkCache(max_networks=1)
    first = weakref.ref(cache.get(key("a"), lambda: linear(8, 8)))
    cache.get(key("b"), lambda: linear(8, 8))
    gc.collect()
    assert first() is None
    second = weakref.ref(cache.get(key("c"), lambda: linear(8, 8)))
    cache.clear()
    gc.collect()
    assert second() is None and len(cache) == 0


def test_defaults_and_module_level_limits():
    assert (DEFAULT_MAX_NETWORKS, DEFAULT_MAX_BYTES) == (4, 8 * 1024**3)
    try:
        set_cache_limits(max_networks=2, max_bytes=123)
        assert (NETWORKS.max_networks, NETWORKS.max_bytes) == (2, 123)
    finally:
        set_cache_limits(DEFAULT_MAX_NETWORKS, DEFAULT_MAX_BYTES)


def test_clear_returns_gpu_memory_when_cuda_is_visible(monkeypatch):
    calls: list[str] = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: calls.append("empty"))
    clear()
    assert calls == ["empty"]
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    clear()
    assert calls == ["empty"]


class _Midpoint(torch.nn.Module):
    def forward(self, frame0: torch.Tensor, frame1: torch.Tensor) -> torch.Tensor:
        return (frame0 + frame1) / 2


def _save_midpoint(weights):
    """The frame-interpolation weights: a scripted midpoint network saved where the loader looks."""
    spec = models.FRAME_INTERPOLATION
    path = weights / spec.name / spec.filename
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.jit.script(_Midpoint()).save(str(path))
    return spec, path


def test_torch_loaders_share_the_cache_and_clear_frees_them(weights):
    spec, path = _save_midpoint(weights)
    net = models.load_frame_interpolation(device="cpu")
    assert models.load_frame_interpolation(device="cpu") is net
    assert NetworkKey(spec.name, f"{path}|{models.files_stamp(path)}", "cpu", "torchscript") in NETWORKS
    ref = weakref.ref(net)
    del net
    clear()
    gc.collect()
    assert ref() is None and len(NETWORKS) == 0
    assert models.load_frame_interpolation(device="cpu") is not None


class _Scaled(torch.nn.Module):
    def __init__(self, scale: float) -> None:
        super().__init__()
        self.scale = torch.nn.Parameter(torch.tensor([scale]))

    def forward(self, frame0: torch.Tensor, frame1: torch.Tensor) -> torch.Tensor:
        return (frame0 + frame1) / 2 * self.scale


def test_weights_copied_in_with_the_same_size_and_time_are_loaded_anew(weights, tmp_path):
    import os
    import shutil
    import time

    spec = models.FRAME_INTERPOLATION
    path = weights / spec.name / spec.filename
    other = tmp_path / "other" / spec.filename  # (the same file name: the archive holds it)
    for scale, where in ((1.0, path), (0.5, other)):
        where.parent.mkdir(parents=True)
        torch.jit.script(_Scaled(scale)).save(str(where))
        os.utime(where, ns=(1_700_000_000_000_000_000,) * 2)  # an archive's normalised time
    assert path.stat().st_size == other.stat().st_size
    one = torch.ones(1)
    assert models.load_frame_interpolation(device="cpu")(one, one).item() == 1.0
    time.sleep(0.05)  # past the kernel's coarse clock tick, so the copy's change time differs
    shutil.copy2(other, path)  # cp -p: another network, in place, with the same size and time
    # Before: the cache key (name, size, mtime) was unchanged, and the first network was handed out again.
    assert models.load_frame_interpolation(device="cpu")(one, one).item() == 0.5


def _save_tiny_vit(folder) -> None:
    from transformers import ViTConfig, ViTModel

    torch.manual_seed(0)
    cfg = ViTConfig(hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=20,
                    image_size=16, patch_size=8)
    ViTModel(cfg, add_pooling_layer=False).save_pretrained(folder)


@pytest.mark.slow  # importing transformers takes several seconds
def test_transformers_loaders_go_through_the_same_cache(weights):
    _save_tiny_vit(weights / "dino_vit_b16")
    loaded = models.load_vit(device="cpu")
    assert models.load_vit(device="cpu") is loaded
    (cached,) = NETWORKS.keys()
    folder = weights / "dino_vit_b16"
    assert cached == NetworkKey("dino_vit_b16", f"{folder}|{models.files_stamp(folder)}", "cpu", "vit")
    assert NETWORKS.nbytes == network_nbytes(loaded.model) > 0
    ref = weakref.ref(loaded.model)
    del loaded
    clear()
    gc.collect()
    assert ref() is None


@pytest.mark.slow  # importing transformers takes several seconds
def test_a_process_loading_many_networks_keeps_only_the_default_number(weights):
    # Only the public loaders and the default limits: before the one cache, every transformers network
    # loaded stayed resident for the life of the process.
    specs = [models.WeightSpec(name=f"toy_vit_{i}", repo_id=f"me/toy-vit-{i}", revision=None,
                               description="tiny ViT", library="transformers") for i in range(6)]
    refs = []
    for spec in specs:
        _save_tiny_vit(weights / spec.name)
        refs.append(weakref.ref(models.load_vit(spec, device="cpu").model))
    gc.collect()
    alive = [ref() is not None for ref in refs]
    assert alive == [False, False, True, True, True, True]


def test_limits_come_from_the_environment_unless_set(monkeypatch):
    cache = NetworkCache()
    assert (cache.max_networks, cache.max_bytes) == (DEFAULT_MAX_NETWORKS, DEFAULT_MAX_BYTES)
    monkeypatch.setenv("ROBOJUDGE_MAX_NETWORKS", "2")
    monkeypatch.setenv("ROBOJUDGE_NETWORK_CACHE_GIB", "0.5")
    assert (cache.max_networks, cache.max_bytes) == (2, 512 * 1024**2)
    for name in "abc":
        cache.get(key(name), lambda: linear(8, 8))
    kept = cache.keys()  # least recently used first
    assert [k.weights for k in kept] == ["b", "c"]
    cache.set_limits(max_networks=3)
    assert cache.max_networks == 3  # set here wins over the environment
    monkeypatch.setenv("ROBOJUDGE_MAX_NETWORKS", "0")
    with pytest.raises(ValueError, match="ROBOJUDGE_MAX_NETWORKS='0'"):
        NetworkCache().get(key("d"), lambda: linear(8, 8))
    monkeypatch.setenv("ROBOJUDGE_NETWORK_CACHE_GIB", "lots")
    with pytest.raises(ValueError, match="ROBOJUDGE_NETWORK_CACHE_GIB='lots'"):
        _ = NetworkCache(max_networks=1).max_bytes


def test_weights_replaced_in_place_are_loaded_again(weights):
    # keyed by the path alone, a long-lived process kept the old network while the results'
    # fingerprint named the new files
    import os

    _, path = _save_midpoint(weights)
    first = models.load_frame_interpolation(device="cpu")
    assert models.load_frame_interpolation(device="cpu") is first
    _save_midpoint(weights)  # new files, same path
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert models.load_frame_interpolation(device="cpu") is not first
