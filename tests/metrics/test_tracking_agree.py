"""ta_hsd, ta_ndtw, ta_dyn, ol_average_precision, ol_average_recall: the registered metric, its functional
form and a reference written out here (textbook DTW, brute-force Hausdorff, sorted-sample Wasserstein,
COCO AP by hand) agree on the same tracks."""

import math

import numpy as np
import pytest
from _agree import agree
from _scene import FPS, clean_frames, state_arrays
from scipy.spatial.distance import cdist

from robojudge.metrics import functional as F
from robojudge.metrics import get_metric
from robojudge.metrics.robophys.tracking import item_tracks
from robojudge.suite import Item
from robojudge.video import write_video


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("agree")
    clean = clean_frames()
    # Halfway and back: the tracks turn round where the reference's go on (low scores); shifted 3 px:
    # boxes partly off. (Played backwards, frame 0 would show the object where the state has none: no
    # object to track, its seed mask covers background; tests/metrics/test_tracking_seed_checks.py.)
    there_and_back = np.concatenate([clean[:8], clean[7::-1]])
    for name, frames in (("full", clean), ("back", there_and_back), ("shift", np.roll(clean, 3, axis=2))):
        write_video(root / f"{name}.mp4", frames, fps=FPS)
    np.savez(root / "state.npz", **state_arrays())
    return root


def _item(root, video):
    return Item(item_id=video, video=str(root / f"{video}.mp4"), reference_video=str(root / "full.mp4"),
                state=str(root / "state.npz"))


def _selected(item, metric):
    """The generated and reference tracks (gaps filled) of the reference target with the largest extent."""
    spec = get_metric(metric)
    gen, ref, *_ = item_tracks(item, spec.make_config(None))
    filled = {n: (F.fill_gaps(gen.normalized(n))[0], F.fill_gaps(ref.normalized(n))[0])
              for n in ("ee", "object")}
    extent = {n: cdist(r, r).max() for n, (_, r) in filled.items()}
    return filled[max(extent, key=lambda n: extent[n])]


def _textbook_dtw(a, b):
    """Cost and length of the cheapest monotone alignment, by the O(nm) recursion; each cell keeps the
    length of the path it extends (predecessors tried diagonal first, so ties take the shortest)."""
    n, m = len(a), len(b)
    cost = [[math.inf] * (m + 1) for _ in range(n + 1)]
    length = [[0] * (m + 1) for _ in range(n + 1)]
    cost[0][0] = 0.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            prev = min((cost[i - 1][j - 1], length[i - 1][j - 1]), (cost[i - 1][j], length[i - 1][j]),
                       (cost[i][j - 1], length[i][j - 1]), key=lambda c: c[0])
            cost[i][j] = math.dist(a[i - 1], b[j - 1]) + prev[0]
            length[i][j] = prev[1] + 1
    return cost[n][m], length[n][m]


def test_textbook_dtw_on_a_hand_worked_case():
    a, b = [(0.0, 0.0), (1.0, 0.0), (2.0, 0.0)], [(0.0, 0.0), (2.0, 0.0)]
    assert _textbook_dtw(a, b) == (1.0, 3)  # path (1,1)-(2,1)-(3,2), costs 0 + 1 + 0


@pytest.mark.parametrize("video", ["back", "shift"])
def test_ndtw_agrees_with_a_textbook_dtw(folder, video):
    item = _item(folder, video)
    g, r = _selected(item, "ta_ndtw")

    def reference():
        total, steps = _textbook_dtw(g.tolist(), r.tolist())
        return 1.0 if total == 0 else min(1.0, 1.0 / (50.202 * total / steps))

    agree("ta_ndtw", item, functional=lambda: F.ndtw_score(g, r).score, reference=reference)


@pytest.mark.parametrize("video", ["back", "shift"])
def test_hsd_agrees_with_a_brute_force_hausdorff(folder, video):
    item = _item(folder, video)
    g, r = _selected(item, "ta_hsd")

    def reference():
        d = cdist(g, r)
        h = max(d.min(axis=1).max(), d.min(axis=0).max())
        return 1.0 if h == 0 else min(1.0, 1.0 / (24.979 * h))

    agree("ta_hsd", item, functional=lambda: F.hsd_score(g, r).score, reference=reference,
          reference_rtol=1e-12)


@pytest.mark.parametrize("video", ["back", "shift"])
def test_dyn_agrees_with_sorted_sample_wasserstein(folder, video):
    item = _item(folder, video)
    g, r = _selected(item, "ta_dyn")
    assert len(g) == len(r)  # equal samples: W1 is the mean gap between the sorted values

    def reference():
        vg, vr = np.hypot(*np.diff(g, axis=0).T), np.hypot(*np.diff(r, axis=0).T)
        ag, ar = np.diff(vg), np.diff(vr)
        w_v, w_a = np.abs(np.sort(vg) - np.sort(vr)).mean(), np.abs(np.sort(ag) - np.sort(ar)).mean()

        def ratio(x, y):
            rx, ry = x.max() - x.min(), y.max() - y.min()
            return (min(rx, ry) + 1e-8) / (max(rx, ry) + 1e-8)

        return min(1.0, (0.007 * ratio(vg, vr) / w_v + 0.003 * ratio(ag, ar) / w_a) / 22.519)

    score = agree("ta_dyn", item, functional=lambda: F.dyn_score(g, r)[0], reference=reference,
                  reference_rtol=1e-9)
    assert 0 < score.value < 1


def _iou(a, b):
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    inter = max(w, 0.0) * max(h, 0.0)
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def _coco_by_hand(truth, boxes, confidence):
    """COCO AP (101-point interpolated precision) and AR of one box per frame, averaged over IoU
    0.50:0.05:0.95; a frame without a finite box has no truth / no detection."""
    n_gt = sum(bool(np.isfinite(t).all()) for t in truth)
    found = [t for t in range(min(len(truth), len(boxes)))
             if np.isfinite(boxes[t]).all() and confidence[t] > 0]
    ranked = sorted(found, key=lambda t: -confidence[t])  # stable: ties keep frame order
    aps, ars = [], []
    for k in range(10):
        thr = 0.5 + 0.05 * k
        hits = [bool(np.isfinite(truth[t]).all()) and _iou(boxes[t], truth[t]) >= thr for t in ranked]
        recall = [sum(hits[:i + 1]) / n_gt for i in range(len(hits))]
        precision = [sum(hits[:i + 1]) / (i + 1) for i in range(len(hits))]
        points = np.linspace(0, 1, 101)
        aps.append(np.mean([max([p for p, rc in zip(precision, recall, strict=True) if rc >= x], default=0.0)
                            for x in points]))
        ars.append(recall[-1] if recall else 0.0)
    return float(np.mean(aps)), float(np.mean(ars))


@pytest.mark.parametrize("video", ["back", "shift"])
def test_average_precision_and_recall_agree_with_coco_by_hand(folder, video):
    item = _item(folder, video)
    gen, ref, *_ = item_tracks(item, get_metric("ol_average_precision").make_config(None))
    n = len(ref.points)
    scale = np.array([ref.size[0] / gen.size[0], ref.size[1] / gen.size[1]] * 2)
    truth = ref.boxes[:, ref.index("object")]
    boxes = gen.boxes[:n, gen.index("object")] * scale
    confidence = gen.confidence[:n, gen.index("object")]
    loc = F.track_localization(truth, boxes, confidence)
    ap, ar = _coco_by_hand(truth, boxes, confidence)
    agree("ol_average_precision", item, functional=lambda: loc.ap, reference=lambda: ap)
    score = agree("ol_average_recall", item, functional=lambda: loc.ar, reference=lambda: ar)
    assert 0 < score.value < 1


def test_tracks_are_recomputed_when_a_file_is_rewritten_in_place(folder, tmp_path):
    # The five metrics of an item share one tracking run through a small cache. A reference rewritten
    # with its old modification time kept (a copy that preserves times) is a different file: its size
    # says so, and the cache must not serve the tracks of the file that was there before.
    import os
    import shutil

    for name in ("full", "back"):
        shutil.copy(folder / f"{name}.mp4", tmp_path / f"{name}.mp4")
    shutil.copy(folder / "state.npz", tmp_path / "state.npz")
    item = Item(item_id="x", video=str(tmp_path / "full.mp4"), reference_video=str(tmp_path / "ref.mp4"),
                state=str(tmp_path / "state.npz"))
    shutil.copy(tmp_path / "full.mp4", tmp_path / "ref.mp4")
    assert get_metric("ta_hsd").compute(item).value == 1.0  # the video is its own reference
    st = os.stat(tmp_path / "ref.mp4")
    shutil.copyfile(tmp_path / "back.mp4", tmp_path / "ref.mp4")
    os.utime(tmp_path / "ref.mp4", ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(tmp_path / "ref.mp4").st_size != st.st_size
    assert get_metric("ta_hsd").compute(item).value < 0.2  # against the halfway-and-back clip now
