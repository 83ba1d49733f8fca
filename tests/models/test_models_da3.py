"""Depth Anything 3 loading and inference on a randomly initialised DA3-Small saved to a tmp folder."""

import json
from pathlib import Path

import numpy as np
import pytest

from robojudge.models import WEIGHTS_ENV, MissingWeightsError, WeightSpec, clear
from robojudge.models._da3 import (
    build_da3,
    da3_geometry,
    load_da3,
    prepare_frames,
    preset_name,
    processing_size,
)


def _da3_importable() -> bool:
    try:
        import depth_anything_3.cfg  # noqa: F401
    except ImportError:
        return False
    return True


needs_da3 = pytest.mark.skipif(
    not _da3_importable(), reason="needs `pip install --no-deps depth-anything-3==0.1.1` with omegaconf"
)

SPEC = WeightSpec(name="da3_small_test", repo_id="depth-anything/DA3-SMALL", revision=None,
                  description="test DA3", library="depth_anything_3")


def test_processing_size_by_hand() -> None:
    # 40x50 at process_res 56: scale 56/50, 40 -> 44.8 -> 45 -> nearest multiple of 14 is 42; 50 -> 56.
    assert processing_size(40, 50, 56) == (42, 56)
    # 480x640 at 504: 640 -> 504, 480 -> 378 = 27 * 14 exactly
    assert processing_size(480, 640, 504) == (378, 504)
    # 100x100 at 504: 504 = 36 * 14 on both sides; cubic upscaling keeps the uint8 range
    out = prepare_frames(np.full((1, 100, 100, 3), 200, np.uint8), 504)
    assert out.shape == (1, 504, 504, 3) and np.all(out == 200)


@pytest.mark.slow
@needs_da3
def test_processing_matches_package_input_processor() -> None:
    from depth_anything_3.utils.io.input_processor import InputProcessor

    frames = np.random.default_rng(0).integers(0, 256, (2, 40, 50, 3), dtype=np.uint8)
    ref, _, _ = InputProcessor()(list(frames), None, None, 56, "upper_bound_resize")
    ours = prepare_frames(frames, 56).astype(np.float32).transpose(0, 3, 1, 2) / 255.0
    mean, std = np.array([0.485, 0.456, 0.406]), np.array([0.229, 0.224, 0.225])
    ours = (ours - mean[None, :, None, None]) / std[None, :, None, None]
    assert ref.shape == (2, 3, 42, 56)
    assert np.allclose(ours, ref.numpy(), atol=1e-5)


def test_preset_name_reads_config(tmp_path: Path) -> None:
    assert preset_name(tmp_path, "da3-base") == "da3-base"
    (tmp_path / "config.json").write_text(json.dumps({"model_name": "da3-small"}))
    assert preset_name(tmp_path, "da3-base") == "da3-small"
    # a config.json that is not an object is a broken download, not a missing preset: say so
    (tmp_path / "config.json").write_text("[]")
    with pytest.raises(ValueError, match=r"config\.json: expected a JSON object"):
        preset_name(tmp_path, "da3-base")


def test_missing_weights_name_the_metric(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(WEIGHTS_ENV, str(tmp_path))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    with pytest.raises(MissingWeightsError, match="rbg_reprojection_geometric"):
        load_da3(SPEC, metric="rbg_reprojection_geometric")


@pytest.mark.slow
@needs_da3
def test_random_da3_small_round_trip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import torch
    from safetensors.torch import save_file

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv(WEIGHTS_ENV, str(tmp_path))
    torch.manual_seed(0)
    net = build_da3("da3-small")
    folder = tmp_path / SPEC.name
    folder.mkdir()
    # The hub checkpoint wraps the network as `model.` (DepthAnything3.model); half precision keeps the
    # test file small, and the loader casts back to the network's float32.
    save_file({f"model.{k}": v.half().contiguous() for k, v in net.state_dict().items()},
              str(folder / "model.safetensors"))
    (folder / "config.json").write_text(json.dumps({"model_name": "da3-small"}))
    clear()
    loaded = load_da3(SPEC, metric="rbg_reprojection_geometric", device="cpu")
    for (k, a), b in zip(net.state_dict().items(), loaded.state_dict().values(), strict=True):
        assert torch.equal(a.half().float(), b), k
    frames = np.random.default_rng(1).integers(0, 256, (3, 40, 50, 3), dtype=np.uint8)
    geo = da3_geometry(loaded, frames, process_res=56)
    assert geo.frames.shape == (3, 42, 56, 3) and geo.depth.shape == (3, 42, 56)
    assert geo.intrinsics.shape == (3, 3, 3) and geo.cam2world.shape == (3, 4, 4)
    # DA3 puts the principal point at the image centre (pose_encoding_to_extri_intri: W/2, H/2)
    assert np.allclose(geo.intrinsics[:, 0, 2], 28.0) and np.allclose(geo.intrinsics[:, 1, 2], 21.0)
    # cam2world is the inverse of the network's own world-to-camera [R | t] on the same input
    x = torch.from_numpy(geo.frames).float().permute(0, 3, 1, 2) / 255.0
    x = (x - torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)) / torch.tensor([0.229, 0.224, 0.225]).view(
        1, 3, 1, 1)
    with torch.inference_mode():
        raw = loaded(x[None])
    w2c = raw["extrinsics"][0].double().numpy()
    assert np.allclose(np.linalg.inv(geo.cam2world)[:, :3], w2c, atol=1e-5)
    assert np.allclose(geo.depth, raw["depth"][0].double().numpy(), atol=1e-5)
    rot = geo.cam2world[:, :3, :3]
    assert np.allclose(rot @ rot.transpose(0, 2, 1), np.eye(3), atol=1e-4)
    assert np.all(geo.cam2world[:, 3] == [0, 0, 0, 1])
    clear()


@needs_da3
def test_wrong_checkpoint_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import torch
    from safetensors.torch import save_file

    monkeypatch.setenv(WEIGHTS_ENV, str(tmp_path))
    folder = tmp_path / SPEC.name
    folder.mkdir()
    save_file({"model.nonsense": torch.zeros(1)}, str(folder / "model.safetensors"))
    (folder / "config.json").write_text(json.dumps({"model_name": "da3-small"}))
    clear()
    with pytest.raises(ValueError, match="does not match the DA3 network"):
        load_da3(SPEC, device="cpu")
