"""Where a judge's frames are decoded (worker processes or a thread) never changes what is sent or cached."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from _decoder import load_in_decoder
from _judge_server import FakeServer, Reply

from robojudge.judges import ChatRequest, FrameLoader, FrameSpec, ResponseCache, get_rubric, make_judge
from robojudge.judges._backend import BackendError
from robojudge.judges._engine import JudgeEngine
from robojudge.judges._mock import MockBackend
from robojudge.run._judge import judge_items
from robojudge.store import ResultStore
from robojudge.video import DecoderPool

PA, IA = get_rubric("pa"), get_rubric("ia")


def _reply(body: dict[str, Any], n: int) -> Reply:
    return Reply('{"reasoning": "fine", "physical_adherence": 4, "instruction_alignment": 2}')


def _images(bodies: list[dict[str, Any]]) -> list[tuple[str, tuple[str, ...]]]:
    """(request text, image URLs) of every request, sorted (arrival order varies)."""
    out = []
    for body in bodies:
        parts = body["messages"][-1]["content"]
        text = " ".join(p["text"] for p in parts if p["type"] == "text")
        out.append((text, tuple(p["image_url"]["url"] for p in parts if p["type"] == "image_url")))
    return sorted(out)


def test_process_and_thread_decoding_send_the_same_requests_and_share_the_cache(
    make_items: Any, tmp_path: Path
) -> None:
    items = make_items(["a", "b", "c"], frames=12)
    sent: dict[int, list[dict[str, Any]]] = {}
    for workers in (0, 1):
        with FakeServer(_reply) as srv, ResponseCache(tmp_path / f"cache{workers}") as cache:
            cfg = make_judge({"name": "t", "backend": "openai", "model": "m", "base_url": srv.url})
            with ResultStore(tmp_path / f"s{workers}.sqlite") as store:
                s = judge_items(items, cfg, [PA, IA], store, cache=cache, decode_workers=workers)
                assert s.scored == 6 and s.stats.sent == 6
                values = {(r.item_id, r.metric): r.value for r in store.rows()}
            sent[workers] = list(srv.bodies)
        assert values == {(i, f"judge:t:{r}"): v for i in "abc" for r, v in (("pa", 4.0), ("ia", 2.0))}
    assert _images(sent[0]) == _images(sent[1])
    assert len(sent[1]) == 6
    assert all(len(urls) == 12 for _, urls in _images(sent[1]))  # 12 frames at 4 fps, sampled at 4 fps
    assert len({urls for _, urls in _images(sent[1])}) == 3  # one set of frames per video

    # a cache filled by thread decoding answers a run that decodes in processes: same keys
    with FakeServer(_reply) as srv, ResponseCache(tmp_path / "cache0") as cache:
        cfg = make_judge({"name": "t", "backend": "openai", "model": "m", "base_url": srv.url})
        with ResultStore(tmp_path / "again.sqlite") as store:
            s = judge_items(items, cfg, [PA, IA], store, cache=cache, decode_workers=1)
        assert s.scored == 6 and s.stats.sent == 0 and srv.count == 0


def test_encoded_only_frames(make_items: Any, tmp_path: Path) -> None:
    video = make_items(["x"])[0].video
    with ResponseCache(tmp_path / "c") as cache:
        got = load_in_decoder(video, cache, 85)
        assert not got.has_pixels  # only the JPEGs crossed the process boundary
        assert len(got.data_urls(85)) == len(got.hashes) == 8
        with pytest.raises(ValueError, match="JPEG quality 90 is missing"):
            got.data_urls(90)
        cfg = make_judge({"name": "h", "backend": "hf", "model": "some/model"})
        from robojudge.judges._hf import HFBackend

        backend = HFBackend(cfg)
        backend._load = lambda: None  # type: ignore[method-assign]  # no model: the check comes first
        backend._processor = backend._model = object()
        with pytest.raises(BackendError, match="needs decoded pixels"):
            asyncio.run(backend.complete(ChatRequest(system="s", user="u", frames=got)))


class _NeverReady(DecoderPool):
    started = 0

    def start(self) -> None:
        self.started += 1

    @property
    def ready(self) -> bool:
        return False


def test_videos_are_decoded_here_until_the_pool_is_up(make_items: Any, tmp_path: Path) -> None:
    video = make_items(["x"])[0].video
    pool = _NeverReady(1)
    with ResponseCache(tmp_path / "c") as cache:
        frames = FrameLoader(video, FrameSpec(), cache, decoder=pool, jpeg_quality=85)
        got = asyncio.run(frames.load())
    assert pool.started == 1
    assert got.frames.shape == (8, 32, 32, 3)
    assert got.has_jpeg(85)  # encoded while decoding, as the pool would have


def test_cache_key_is_the_sha256_of_the_whole_canonical_request() -> None:
    """Keys are built from cached pieces; they must equal the plain definition (old caches stay valid)."""
    cfg = make_judge({"name": "k", "backend": "mock", "model": "m", "replies": ["x"]})
    engine = JudgeEngine(cfg, MockBackend(cfg), ResponseCache(enabled=False))

    class _Frames:
        hashes = ["0a1b", "2c3d"]

        def hashes_json(self) -> str:
            return json.dumps(self.hashes, separators=(",", ":"))

    system, user = IA.render('pick the "red" cube\n(left)')
    history = (("assistant", "{bad"), ("user", "again"))
    for frames in (_Frames(), None):
        for hist in ((), history):
            for label in (None, "First frame:"):
                req = ChatRequest(
                    system=system, user=user, frames=None, first_frame_label=label, history=hist, seed=7
                )
                payload = {
                    "judge": cfg.identity(),
                    "rubric": [IA.id, IA.version, IA.digest],
                    "frames": frames.hashes if frames is not None else None,
                    "system": system,
                    "user": user,
                    "label": label,
                    "history": hist,
                    "sampling": req.sampling_key(),
                }
                canon = json.dumps(payload, sort_keys=True, separators=(",", ":"))
                want = hashlib.sha256(canon.encode()).hexdigest()
                assert engine._cache_key(req, frames, IA) == want  # type: ignore[arg-type]
                assert engine._cache_key(req, frames, IA) == want  # type: ignore[arg-type]  # memo hit


def test_openai_backend_reads_proxy_settings_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Users behind a proxy keep working (HTTP(S)_PROXY / NO_PROXY, as httpx read them)."""
    from robojudge.judges._openai import OpenAIBackend, env_proxy

    for var in ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY",
                "ALL_PROXY", "NO_PROXY", "REQUEST_METHOD"):
        monkeypatch.delenv(var, raising=False)
    assert env_proxy("https://api.example.com/v1/chat/completions") is None
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.corp:3128")
    monkeypatch.setenv("NO_PROXY", "localhost,127.0.0.1")
    assert env_proxy("https://api.example.com/v1/chat/completions") == "http://proxy.corp:3128"
    assert env_proxy("http://api.example.com/v1") is None  # only HTTPS_PROXY is set
    assert env_proxy("https://127.0.0.1:8000/v1") is None  # NO_PROXY

    cfg = make_judge({"name": "p", "backend": "openai", "model": "m", "base_url": "https://api.example.com/v1"})
    backend = OpenAIBackend(cfg)

    async def opened() -> str | None:
        backend.start()
        proxy = backend._proxy
        await backend.aclose()
        return proxy

    assert asyncio.run(opened()) == "http://proxy.corp:3128"


def test_no_worker_processes_means_thread_decoding(
    make_items: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Where processes cannot start (a locked-down sandbox), judging goes on with thread decoding."""
    import robojudge.video._pool as pool_module

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise OSError("semaphores are not available")

    monkeypatch.setattr(pool_module, "ProcessPoolExecutor", refuse)
    pool = DecoderPool(1)
    video = make_items(["x"])[0].video
    with ResponseCache(tmp_path / "c") as cache, caplog.at_level("WARNING"):
        frames = FrameLoader(video, FrameSpec(), cache, decoder=pool, jpeg_quality=85)
        got = asyncio.run(frames.load())
    assert got.has_pixels and len(got.hashes) == 8
    assert pool.unavailable == "OSError: semaphores are not available" and not pool.ready
    assert "decoding in threads instead" in caplog.text
