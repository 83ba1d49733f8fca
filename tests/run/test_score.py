import collections

import _toy_metrics  # registers the test metrics (tests/run is on sys.path); toy_items
import pytest

from robojudge.run import (
    LocalProcessExecutor,
    MetricRequest,
    SerialExecutor,
    build_requests,
    score_items,
)
from robojudge.suite import Item

_items = _toy_metrics.toy_items


def _keys(store):
    return collections.Counter((r.item_id, r.metric, r.config_hash, r.version) for r in store.rows())


@pytest.mark.parametrize(
    "executor", [SerialExecutor, lambda: LocalProcessExecutor(2)], ids=["serial", "pool"]
)
def test_each_result_once_and_rerun_is_noop(store, executor):
    items = _items([f"it{i}" for i in range(7)] + ["boom1"])
    reqs = build_requests(["test_slow", "test_boom"], {"test_slow": {"seconds": 0.0}})
    s1 = score_items(items, reqs, store, executor=executor())
    assert (s1.total, s1.ok, s1.failed, s1.skipped) == (16, 15, 1, 0)
    (err,) = s1.errors
    assert err.item_id == "boom1" and "ZeroDivisionError" in err.error
    s2 = score_items(items, reqs, store, executor=executor())
    assert (s2.total, s2.skipped, s2.computed) == (16, 16, 0)
    counts = _keys(store)
    assert len(counts) == 16 and set(counts.values()) == {1}
    ok = {r.item_id: r.value for r in store.rows(metric="test_slow")}
    assert ok["it3"] == 3.0 and ok["boom1"] == 5.0  # value = len(item_id)


def test_new_config_makes_new_rows_and_old_ones_stay(store):
    items = _items(["a", "bb"])
    score_items(items, build_requests(["test_slow"], {"test_slow": {"seconds": 0.0}}), store)
    score_items(items, build_requests(["test_slow"], {"test_slow": {"seconds": 0.001}}), store)
    rows = store.rows(metric="test_slow")
    assert len(rows) == 4
    assert len({r.config_hash for r in rows}) == 2
    assert {tuple(sorted(r.config.items())) for r in rows} == {(("seconds", 0.0),), (("seconds", 0.001),)}


def test_retry_errors_recomputes_only_failures(store, monkeypatch):
    items = _items(["ok1", "boom"])
    req = build_requests(["test_boom"])
    score_items(items, req, store)
    first_ok = store.rows(status="ok")[0]
    s = score_items(items, req, store, retry_errors=True)
    assert (s.skipped, s.failed) == (1, 1)
    assert store.count() == 2
    assert store.rows(status="ok")[0].created_at == first_ok.created_at


def test_missing_input_is_a_failure_row(store):
    items = [Item(item_id="x", video="/v.mp4")]
    s = score_items(items, build_requests(["test_needs_reference"]), store)
    assert s.failed == 1
    assert "item has no reference" in s.errors[0].error


def test_broken_video_costs_only_itself(store, tmp_path):
    import numpy as np

    from robojudge.video import write_video

    ramp = np.stack([np.full((32, 32, 3), 20 * i, np.uint8) for i in range(6)])  # a still video is unscored
    write_video(tmp_path / "good.mp4", ramp, fps=8)
    (tmp_path / "text.mp4").write_text("not a video")
    (tmp_path / "empty.mp4").write_bytes(b"")
    write_video(tmp_path / "one.mp4", np.zeros((1, 32, 32, 3), np.uint8), fps=8)
    names = ("good", "text", "empty", "missing", "one")
    items = [Item(item_id=n, video=str(tmp_path / f"{n}.mp4")) for n in names]
    s = score_items(items, build_requests(["pixel_frame_consistency"]), store)
    assert (s.ok, s.failed) == (2, 3)  # one frame: an ok row left unscored (NaN) with the reason
    one = next(r for r in store.rows(status="ok") if r.item_id == "one")
    assert not one.scored and "gave 1 frame" in one.details["unscored_reason"]
    errors = {r.item_id: r.error for r in s.errors}
    assert all(e.startswith("video error:") for e in errors.values())
    assert all(str(tmp_path) in e for e in errors.values())  # the message names the file
    assert "empty file" in errors["empty"] and "not found" in errors["missing"]


def test_worker_crash_is_isolated_to_its_item(store):
    items = _items([f"n{i}" for i in range(5)] + ["crash"] + [f"m{i}" for i in range(4)])
    s = score_items(items, build_requests(["test_crash"]), store, executor=LocalProcessExecutor(2))
    assert (s.ok, s.failed) == (9, 1)
    assert s.errors[0].item_id == "crash" and "worker process died" in s.errors[0].error
    assert store.count() == 10


def test_pool_broken_while_the_caller_holds_a_result(tmp_path):
    # The worker dies while the caller is busy with an earlier result, so the next submit meets a
    # broken pool: that task has not run and must go to a fresh pool, not end the run.
    import time

    from _toy_metrics import exit_after_marker

    marker = tmp_path / "died"
    tasks = [(1, str(marker)), (-1, str(marker))] + [(v, str(marker)) for v in range(2, 8)]
    ex = LocalProcessExecutor(2, prefetch=1)
    got = {}
    for task, result in ex.map_unordered(exit_after_marker, tasks, lambda t, r: "crashed"):
        got[task[0]] = result
        if task[0] == 1:
            deadline = time.monotonic() + 60
            while not marker.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(1.0)  # let the pool notice its dead worker
    assert got == {1: 1, -1: "crashed", **{v: v for v in range(2, 8)}}


def test_bounded_in_flight():
    seen = []

    def tasks():
        for i in range(100):
            seen.append(i)
            yield i

    ex = LocalProcessExecutor(2, prefetch=2)
    it = ex.map_unordered(abs, tasks(), lambda t, r: -1)
    _, first = next(it)
    # When the first result arrives, at most workers * prefetch = 4 tasks were pulled (+1 look-ahead).
    assert len(seen) <= 5
    rest = [r for _, r in it]
    assert sorted([first, *rest]) == list(range(100))


def test_request_validation():
    with pytest.raises(ValueError, match="not requested"):
        build_requests(["test_slow"], {"test_boom": {}})
    reqs = build_requests(["test_slow", "test_slow"])
    assert len(reqs) == 1 and isinstance(reqs[0], MetricRequest)


def test_metrics_of_an_item_share_one_decode(store, tmp_path, monkeypatch):
    import numpy as np

    from robojudge.video import _sample, write_video

    calls = []
    real = _sample.sample_file
    monkeypatch.setattr(_sample, "sample_file", lambda *a, **k: calls.append(a) or real(*a, **k))
    items = []
    for i in range(3):
        write_video(tmp_path / f"v{i}.mp4", np.full((8, 16, 16, 3), 40 * i, np.uint8), fps=8)
        items.append(Item(item_id=f"v{i}", video=str(tmp_path / f"v{i}.mp4")))
    s = score_items(items, build_requests(["test_frames_a", "test_frames_b"]), store)
    assert (s.ok, s.failed) == (6, 0)
    assert len(calls) == 3  # one decode per item, not per (item, metric)
    assert {r.value for r in store.rows(metric="test_frames_a")} == {4.0}  # 1 s at 4 fps
