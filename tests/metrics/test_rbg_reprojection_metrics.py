"""rbg_reprojection_geometric / _photometric end to end with a stand-in estimator of true geometry."""

import importlib
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from _agree import agree

from robojudge.metrics import functional as RF
from robojudge.metrics import get_metric
from robojudge.suite import Item
from robojudge.video import write_video

IDS = ("rbg_reprojection_geometric", "rbg_reprojection_photometric")
MODULE = "robojudge.metrics.robophys.rbg_reprojection"


rr = importlib.import_module(MODULE)  # a built-in metric module, registered ahead of the catalog

from robojudge.metrics.robophys.catalog import is_unavailable  # noqa: E402  (loads the built-ins)

H, W, F, Z, STEP = 48, 64, 100.0, 2.0, 0.1
K = np.array([[F, 0.0, W / 2], [0.0, F, H / 2], [0.0, 0.0, 1.0]])
SHIFT = int(F * STEP / Z)  # a camera step of 0.1 m moves a plane at 2 m by f t / Z = 5 px
N = 5


@dataclass(frozen=True)
class Geometry:
    frames: np.ndarray
    depth: np.ndarray
    intrinsics: np.ndarray
    cam2world: np.ndarray


def true_plane_geometry(frames: np.ndarray, *, process_res: int, metric: str) -> Geometry:
    """The scene's true geometry: a fronto-parallel plane at 2 m, camera moving 0.1 m along x per frame."""
    poses = np.stack([np.eye(4)] * len(frames))
    poses[:, 0, 3] = STEP * np.arange(len(frames))
    return Geometry(frames, np.full(frames.shape[:3], Z), K, poses)


def render(kind: str) -> np.ndarray:
    """Frames of the plane seen by the moving camera; ``kind`` plants one failure in frame 2."""
    tex = np.random.default_rng(0).integers(0, 256, (H, W + SHIFT * N + 16, 3), dtype=np.uint8)
    frames = np.stack([tex[:, SHIFT * t: SHIFT * t + W] for t in range(N)])
    if kind == "flicker":  # texture brightness jumps in one frame
        frames[2] = np.clip(frames[2].astype(int) + 60, 0, 255).astype(np.uint8)
    elif kind == "teleport":  # the content of one frame jumps 12 px further than the camera moved
        frames[2] = tex[:, SHIFT * 2 + 12: SHIFT * 2 + 12 + W]
    return frames


@pytest.fixture()
def items(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Item]:
    monkeypatch.setattr(rr, "ESTIMATOR", true_plane_geometry)
    rr.clear_geometry_cache()
    out = {}
    for kind in ("faithful", "flicker", "teleport"):
        path = write_video(tmp_path / kind, render(kind), fps=4)  # PNG frames: lossless
        out[kind] = Item(item_id=kind, video=str(path))
    return out


def _compute(metric_id: str, item: Item) -> float:
    fn = getattr(rr, metric_id)
    return float(fn(item, rr.ReprojectionConfig(fps=None)).value)


def test_registered_as_real_metrics() -> None:
    specs = [get_metric(mid) for mid in IDS]
    assert not any(is_unavailable(s.fn) for s in specs)
    for spec in specs:
        assert spec.fn.__module__ == MODULE and spec.weights == ("da3_base",)
        assert spec.config_type is rr.ReprojectionConfig


def test_true_geometry_is_consistent_and_planted_failures_lower_psnr(items: dict[str, Item]) -> None:
    geo = {k: _compute("rbg_reprojection_geometric", it) for k, it in items.items()}
    psnr = {k: _compute("rbg_reprojection_photometric", it) for k, it in items.items()}
    # true depth and poses close every round trip: e = 0, score exp(0) = 1
    assert geo["faithful"] == pytest.approx(1.0, abs=1e-9)
    # warping frame i by the true 5 px reproduces frame i + 1 exactly: every pair at the 100 dB cap
    assert psnr["faithful"] == 100.0
    # The geometry is the same for all three (it comes from the camera, not the pixels), so only the
    # photometric metric sees the planted flicker and teleport: pairs (1, 2) and (2, 3) drop from
    # the cap to a few dB-to-tens of dB, pulling the 4-pair mean well below it.
    assert geo["flicker"] == pytest.approx(1.0, abs=1e-9) and geo["teleport"] == pytest.approx(1.0, abs=1e-9)
    assert psnr["flicker"] < 70.0 and psnr["teleport"] < 70.0


def test_flicker_pair_psnr_is_that_of_a_60_level_offset(items: dict[str, Item]) -> None:
    cfg = rr.ReprojectionConfig(fps=None)
    res = rr.reprojection_result(items["flicker"], cfg, "rbg_reprojection_photometric")
    frames = render("flicker")
    # Pair (1, 2): frame 2 = frame 1's content + 60 (clipped at 255) on the 59 overlapping columns, so
    # its PSNR is skimage's PSNR of those two crops.
    from skimage.metrics import peak_signal_noise_ratio

    expected = peak_signal_noise_ratio(frames[2][:, :59], render("faithful")[2][:, :59], data_range=255)
    assert res.psnr[1] == pytest.approx(expected, rel=1e-9)
    # Pair (2, 3): bright frame 2 warped onto frame 3 covers texture columns 15..73, which are columns
    # 5..63 of frame 2.
    expected_23 = peak_signal_noise_ratio(frames[2][:, 5:], render("faithful")[2][:, 5:], data_range=255)
    assert res.psnr[2] == pytest.approx(expected_23, rel=1e-9)
    assert res.psnr[0] == 100.0 and res.psnr[3] == 100.0
    assert res.pairs == [(0, 1), (1, 2), (2, 3), (3, 4)]


@pytest.mark.parametrize("kind", ["faithful", "flicker", "teleport"])
def test_both_agree_with_the_functional_form_and_skimage(items: dict[str, Item], kind: str) -> None:
    frames = render(kind)
    geo = true_plane_geometry(frames, process_res=504, metric="test")
    res = RF.reprojection_consistency(geo.frames, geo.depth, geo.intrinsics, geo.cam2world)

    def photometric_by_skimage() -> float:
        # The true camera moves the plane SHIFT px left per frame: frame i warped into i + 1 is frame i's
        # columns SHIFT.. on frame i + 1's columns ..W - SHIFT; identical content is capped at 100 dB.
        from skimage.metrics import peak_signal_noise_ratio

        with np.errstate(divide="ignore"):
            pairs = [min(100.0, peak_signal_noise_ratio(frames[i + 1][:, :W - SHIFT], frames[i][:, SHIFT:],
                                                        data_range=255)) for i in range(N - 1)]
        return float(np.mean(pairs))

    # True depth and poses close every round trip, whatever the pixels: the geometric score is exp(0).
    agree("rbg_reprojection_geometric", items[kind], config={"fps": None},
          functional=lambda: res.geometric, reference=lambda: 1.0, reference_atol=1e-9)
    agree("rbg_reprojection_photometric", items[kind], config={"fps": None},
          functional=lambda: res.photometric, reference=photometric_by_skimage)


def test_details_and_shared_estimate(items: dict[str, Item], monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    passes: list[int] = []
    real_pass = rr.reprojection_consistency

    def counting_pass(*args: object, **kwargs: object) -> object:
        passes.append(1)
        return real_pass(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(rr, "reprojection_consistency", counting_pass)

    def counting(frames: np.ndarray, *, process_res: int, metric: str) -> Geometry:
        calls.append(len(frames))
        return true_plane_geometry(frames, process_res=process_res, metric=metric)

    rr.ESTIMATOR = counting  # the fixture's monkeypatch restores the original afterwards
    rr.clear_geometry_cache()
    cfg = rr.ReprojectionConfig(fps=None)
    g = rr.rbg_reprojection_geometric(items["faithful"], cfg)
    p = rr.rbg_reprojection_photometric(items["faithful"], cfg)
    assert calls == [N]  # one reconstruction serves both metrics
    assert passes == [1]  # and so does one reprojection pass
    rr.rbg_reprojection_geometric(items["faithful"], cfg.model_copy(update={"tau": 0.05}))
    assert calls == [N] and passes == [1, 1]  # another tau reuses the geometry, not the result
    assert g.details["pairs"] == N - 1 and g.details["min_valid_fraction"] == pytest.approx(59 / 64)
    assert p.details == {"pairs": N - 1, "scored_pairs": N - 1, "min_pair_psnr": 100.0, "capped_pairs": N - 1}


def test_default_estimator_says_what_is_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from robojudge.metrics import MetricInputError
    from robojudge.models import MissingWeightsError

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("ROBOJUDGE_WEIGHTS", str(tmp_path / "weights"))
    rr.clear_geometry_cache()
    video = write_video(tmp_path / "clip", render("faithful"), fps=4)
    item = Item(item_id="x", video=str(video))
    cfg = rr.ReprojectionConfig(fps=None)
    with pytest.raises(MissingWeightsError, match="rbg_reprojection_geometric.*da3_base"):
        rr.rbg_reprojection_geometric(item, cfg)
    # weights present, network code absent (None in sys.modules makes the import fail)
    folder = tmp_path / "weights" / "da3_base"
    folder.mkdir(parents=True)
    (folder / "model.safetensors").write_bytes(b"")
    monkeypatch.setitem(sys.modules, "depth_anything_3", None)
    monkeypatch.setitem(sys.modules, "depth_anything_3.cfg", None)
    with pytest.raises(MetricInputError, match="pip install --no-deps depth-anything-3"):
        rr.rbg_reprojection_photometric(item, cfg)


def test_a_frame_rewritten_in_place_is_not_served_from_the_cache(items: dict[str, Item]) -> None:
    # Both metrics share one estimate per video through a small cache. Rewriting one frame of a frame
    # folder leaves the folder's own size and modification time alone; the cache is keyed by the
    # folder's file list too, so the second call sees the new frame.
    from robojudge.video import write_video as write

    cfg = rr.ReprojectionConfig(fps=None)
    item = items["faithful"]
    assert rr.rbg_reprojection_photometric(item, cfg).value == 100.0
    folder = Path(item.video)
    before = (folder.stat().st_mtime_ns, folder.stat().st_size)
    staging = write(folder.parent / "staging", render("flicker"), fps=4)
    (folder / "frame_00002.png").write_bytes((Path(staging) / "frame_00002.png").read_bytes())
    assert (folder.stat().st_mtime_ns, folder.stat().st_size) == before
    assert rr.rbg_reprojection_photometric(item, cfg).value < 70.0
