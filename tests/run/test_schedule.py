"""Task granularity, per-metric time and the time estimate of a scoring run."""

import _toy_metrics  # noqa: F401  (registers the test metrics; tests/run is on sys.path)
import numpy as np
import pytest

from robojudge.run import LocalProcessExecutor, SerialExecutor, Task, build_requests, score_items
from robojudge.run._cost import SETTLED_ROWS, CostModel, Outstanding, item_size, sampling_groups
from robojudge.run._score import schedule, split_task
from robojudge.store import ResultStore
from robojudge.suite import Item
from robojudge.video import write_video

RATES = ["test_rate_a", "test_rate_c", "test_rate_e", "test_rate_b", "test_rate_d", "test_rate_f"]


def _clip(path, frames, level, size=(32, 24)):
    rng = np.random.default_rng(level)
    w, h = size
    write_video(path, rng.integers(0, 255, (frames, h, w, 3), dtype=np.uint8), fps=16)
    return path


@pytest.fixture
def suite(tmp_path):
    """One long clip (48 frames at 16 fps) and six short ones (4 frames)."""
    items = [Item(item_id="long", video=str(_clip(tmp_path / "long.mp4", 48, 1)), instruction="x")]
    for k in range(6):
        items.append(Item(item_id=f"short{k}", video=str(_clip(tmp_path / f"s{k}.mp4", 4, k + 2)),
                          instruction="x"))
    return items


def _store(tmp_path, name):
    return ResultStore(f"sqlite:///{tmp_path / name}")


def _comparable(store):
    return {r.key: (r.status, r.value, r.fingerprint, r.config) for r in store.rows()}


def test_split_keeps_metrics_of_one_sampling_together():
    reqs = build_requests(RATES)
    task = Task(Item(item_id="i", video="/v.mp4"), tuple(reqs), tuple(f"fp{i}" for i in range(6)))
    parts = split_task(task)
    assert [[r.id for r in p.requests] for p in parts] == [
        ["test_rate_a", "test_rate_b"], ["test_rate_c", "test_rate_d"], ["test_rate_e", "test_rate_f"]]
    # each request keeps its own planned fingerprint
    assert [p.fingerprints for p in parts] == [("fp0", "fp3"), ("fp1", "fp4"), ("fp2", "fp5")]
    assert sampling_groups([r.config for r in build_requests(["test_slow", "test_boom"])]) == [(0, 1)]


def test_schedule_splits_large_items_only_with_several_workers(suite):
    reqs = tuple(build_requests(RATES))
    tasks = [Task(it, reqs) for it in suite]
    long_size = item_size(suite[0])
    assert long_size == pytest.approx(48 * 32 * 24 / 1e6)
    assert [len(t.requests) for t in schedule(tasks, 1, split_above=0.01)] == [6] * 7  # one worker: as before
    two = schedule(tasks, 2, split_above=0.01)
    assert len(two) == 3 + 6  # the long clip in three parts, first; the short ones whole
    assert [t.item.item_id for t in two[:3]] == ["long"] * 3 and two[0].size == pytest.approx(long_size)
    assert sorted(r.id for t in two[:3] for r in t.requests) == sorted(RATES)
    assert [len(t.requests) for t in two[3:]] == [6] * 6
    # fewer items than workers: split whatever their size
    assert len(schedule(tasks[1:2], 2, split_above=1e9)) == 3


def test_long_item_spreads_over_workers_and_rows_equal_a_serial_run(suite, tmp_path):
    cfg = {m: {"seconds_per_frame": 0.04} for m in RATES}  # the long clip: about 1 s per sampling
    reqs = build_requests(RATES, cfg)
    with _store(tmp_path, "pool.sqlite") as pool:
        s = score_items(suite, reqs, pool, executor=LocalProcessExecutor(2), split_above=0.02)
        assert (s.ok, s.failed) == (42, 0)
        pids = {r.details["pid"] for r in pool.rows() if r.item_id == "long"}
        assert len(pids) == 2, "the long clip's samplings ran on one worker only"
        # metrics sharing a sampling ran in one task, so in one process
        by_metric = {r.metric: r.details["pid"] for r in pool.rows() if r.item_id == "long"}
        assert by_metric["test_rate_a"] == by_metric["test_rate_b"]
        assert by_metric["test_rate_e"] == by_metric["test_rate_f"]
        again = score_items(suite, reqs, pool, executor=LocalProcessExecutor(2), split_above=0.02)
        assert (again.total, again.skipped, again.computed) == (42, 42, 0)
        split_rows = _comparable(pool)
    with _store(tmp_path, "serial.sqlite") as serial:
        score_items(suite, build_requests(RATES, cfg), serial, executor=SerialExecutor())
        assert _comparable(serial) == split_rows


def test_summary_times_metrics_and_estimates_the_rest(tmp_path):
    items = [Item(item_id=f"it{k}", video="/nonexistent.mp4", instruction="x") for k in range(6)]
    reqs = build_requests(["test_slow", "test_boom"], {"test_slow": {"seconds": 0.05}})
    seen, settled = [], []

    def progress(row, summary):
        seen.append(summary.estimate_s)
        settled.append(summary.estimate_settled)

    with _store(tmp_path, "r.sqlite") as store:
        s = score_items(items, reqs, store, executor=SerialExecutor(), progress=progress)
        rows = store.rows()
    total = {m: sum(r.duration_s for r in rows if r.metric == m) for m in ("test_slow", "test_boom")}
    assert s.metric_seconds == pytest.approx(total)
    assert [m for m, _ in s.top_metrics()] == ["test_slow", "test_boom"]
    assert s.top_metrics(1) == [("test_slow", pytest.approx(total["test_slow"]))]
    # after the first item: its own time, times the five items left (the run's time around the metrics,
    # RunPace, counts only after a few results: the first task's holds the start-up)
    first = sum(r.duration_s for r in rows if r.item_id == "it0")
    assert seen[0] == pytest.approx(5 * first)
    assert seen[-1] == 0.0
    # shown only once both metrics were measured on SETTLED_ROWS items (two rows an item)
    assert settled == [False] * 2 * (SETTLED_ROWS - 1) + [True] * 2 * (6 - SETTLED_ROWS + 1)


def test_estimate_settles_when_each_metric_left_was_measured_on_a_few_items():
    costs, left = CostModel(), Outstanding()
    for size in (0.5, 0.6, 0.7, 1.0, 2.0):
        left.add("flow", size)
    for size in (0.5, 3.0):
        left.add("rare", size)

    def measure(metric, size):  # as the run does: measured, and no longer outstanding
        costs.add(metric, size, 0.1)
        left.remove(metric, size)

    assert not costs.settled(left)
    measure("flow", 0.5)  # a small, quick item first: one row says little
    measure("rare", 0.5)
    assert not costs.settled(left)
    measure("flow", 0.6)
    measure("flow", 0.7)
    assert not costs.settled(left)  # "rare" has two results in all: both are needed
    measure("rare", 3.0)
    assert costs.settled(left)
    assert costs.unmeasured(left) == []
    left.add("late", 1.0)  # a metric nothing measured yet does not hold the estimate back: it is named
    assert costs.settled(left) and costs.unmeasured(left) == ["late"]
    left.add("flow", 4.0)
    costs.add("other", 1.0, 0.1)
    left.add("other", 2.0)  # measured once, one more to come: 2 of its 2 rows are needed
    assert not costs.settled(left)
    assert costs.settled(left, rows=1)
    assert costs.settled(Outstanding())  # nothing left


def test_cost_model_by_size_and_per_row():
    costs, left = CostModel(), Outstanding()
    assert costs.remaining(left, 1) == 0.0
    left.add("flow", 10.0)
    left.add("flow", 30.0)
    left.add("text", None)
    assert costs.remaining(left, 1) is None  # nothing measured yet
    costs.add("flow", 20.0, 4.0)  # 0.2 s per million frame-pixels
    costs.add("text", None, 0.5)
    assert costs.seconds("flow", 5.0) == pytest.approx(1.0)
    assert costs.remaining(left, 1) == pytest.approx(0.2 * 40 + 0.5)
    assert costs.remaining(left, 2) == pytest.approx((0.2 * 40 + 0.5) / 2)
    left.add("new", 10.0)  # not measured: the mean rate of the measured metrics
    assert costs.remaining(left, 1) == pytest.approx(0.2 * 40 + 0.5 + 0.2 * 10)
    left.remove("flow", 30.0)
    left.remove("flow", 10.0)
    assert "flow" not in left.by_metric


def test_real_flow_metrics_that_share_a_flow_stay_in_one_task():
    ids = ["cc_photometric", "ctg_camera_control", "flow_motion_magnitude_farneback", "flow_warp_error",
           "mq_dynamic_degree", "mq_flow_score", "mq_temporal_flickering", "pixel_frame_consistency",
           "rbg_stability"]
    reqs = build_requests(ids)
    groups = [{reqs[i].id for i in g} for g in sampling_groups([r.config for r in reqs])]
    assert len(groups) > 1

    def together(*names):
        return any(set(names) <= g for g in groups)

    # same frames and the same flow settings: one flow for all of them, in one task
    assert together("cc_photometric", "mq_dynamic_degree", "mq_flow_score")
    assert together("flow_warp_error", "flow_motion_magnitude_farneback")
    # the expensive flow group does not carry the metrics without flow
    assert not together("cc_photometric", "rbg_stability")


def test_cost_model_fits_a_line_per_metric_so_capped_metrics_do_not_scale_with_length():
    # A metric that reads a capped number of frames costs the same on short and long clips: the
    # first, short items must not be scaled up to the long ones (the proportional estimate said
    # 154 s for these two items, 40 times too much).
    costs, left = CostModel(), Outstanding()
    for size in (5.0, 10.0, 20.0):
        costs.add("capped", size, 2.0)
    left.add("capped", 300.0)
    left.add("capped", 600.0)
    assert costs.seconds("capped", 600.0) == pytest.approx(2.0)
    assert costs.remaining(left, 1) == pytest.approx(4.0)

    # fixed part plus a slope: the least-squares line (numpy's polyfit agrees)
    sizes, secs = [10.0, 20.0, 30.0, 45.0], [3.1, 4.9, 7.0, 10.1]
    for x, y in zip(sizes, secs, strict=True):
        costs.add("affine", x, y)
    slope, fixed = np.polyfit(sizes, secs, 1)
    assert costs.seconds("affine", 100.0) == pytest.approx(fixed + slope * 100.0)

    # a line through the data would have a negative fixed part: the cost is proportional instead,
    # the least-squares line through the origin (sum xy / sum xx = 90 / 500)
    costs.add("steep", 10.0, 1.0)
    costs.add("steep", 20.0, 4.0)
    assert costs.seconds("steep", 50.0) == pytest.approx(50.0 * 90.0 / 500.0)

    # longer items that were cheaper: size does not matter here, the mean
    costs.add("shrinking", 10.0, 3.0)
    costs.add("shrinking", 20.0, 2.0)
    assert costs.seconds("shrinking", 1000.0) == pytest.approx(2.5)

    # an unmeasured metric costs the mean line of the measured ones
    lines = [(2.0, 0.0), (fixed, slope), (0.0, 0.18), (2.5, 0.0)]
    expect = np.mean([a for a, _ in lines]) + np.mean([b for _, b in lines]) * 40.0
    assert costs.seconds("new", 40.0) == pytest.approx(expect)


def test_cost_model_takes_proportion_when_frozen_clips_bend_the_line():
    # cc_photometric on real clips (seconds against millions of frame-pixels): proportional, but
    # the frozen copies are large and nearly free. The least-squares line through these has a
    # negative slope (the mean, 1.98 s a row, whatever the size); the median rate fits the rest.
    sizes = [23.04, 15.97, 14.75, 14.75, 12.29, 11.37, 10.08, 9.03]
    secs = [0.73, 3.14, 2.90, 2.96, 2.39, 0.01, 1.95, 1.79]
    costs = CostModel()
    for x, y in zip(sizes, secs, strict=True):
        costs.add("cc_photometric", x, y)
    rate = float(np.median(np.array(secs) / np.array(sizes)))
    assert costs.seconds("cc_photometric", 2.0) == pytest.approx(2.0 * rate)
    assert costs.seconds("cc_photometric", 2.0) < 0.5  # the mean would say 1.98 s
    # two sizes only: the line rule alone decides (here: the mean, as the slope is negative)
    two = CostModel()
    two.add("m", 23.04, 0.73)
    two.add("m", 15.97, 3.14)
    assert two.seconds("m", 2.0) == pytest.approx((0.73 + 3.14) / 2)


def test_a_metric_set_to_the_fast_profile_alone_gets_its_own_task():
    # --set METRIC.profile=fast changes what that metric decodes and how it computes flow: it must not
    # share a task's frames and flow with the native-size metrics.
    native = build_requests(["cc_photometric", "mq_flow_score"])
    fast = build_requests(["cc_photometric", "mq_flow_score"], {"mq_flow_score": {"profile": "fast"}})
    assert len(sampling_groups([r.config for r in native])) == 1
    assert len(sampling_groups([r.config for r in fast])) == 2


def test_a_split_item_stays_noted_until_its_last_part_is_back(suite, tmp_path):
    """A killed pool run had handed the long clip out (its note left behind): this run splits the clip,
    and its own note of it stays until every part is back; before (review rev19 F1), the first part back
    cleared the clip's notes, the others still with the workers."""
    from _in_flight import note_from_ended_process

    cfg = {m: {"seconds_per_frame": 0.02} for m in RATES}
    db = tmp_path / "notes.sqlite"
    note_from_ended_process(f"sqlite:///{db}", {"long": list(RATES)}, queued=True)
    seen: list[tuple[str, bool]] = []
    with ResultStore(f"sqlite:///{db}") as store:
        def look(row, summary):
            if row.item_id == "long":
                with ResultStore(f"sqlite:///{db}") as other:
                    seen.append((row.metric, "long" in other.in_flight()))

        s = score_items(suite[:1], build_requests(RATES, cfg), store, executor=LocalProcessExecutor(2),
                        split_above=0.02, progress=look)
        assert (s.ok, s.isolated) == (6, []) and store.in_flight() == {}
    assert len(seen) == 6
    assert all(noted for _, noted in seen[:4]), seen  # 3 parts of 2 metrics: 4 rows come before the last part
