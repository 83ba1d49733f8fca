"""Write the goldens that tie robojudge's VGGT port to the publisher's code (run by hand, not by tests).

Needs a checkout of facebookresearch/vggt on ``PYTHONPATH`` (the golden in the repository was made from
commit 44b3afbd1869d8bde4894dd8ea1e293112dd5eba) and torch, torchvision, huggingface_hub, einops, PIL:

    PYTHONPATH=/path/to/vggt .venv/bin/python scripts/vggt_reference_golden.py

It writes

* ``tests/data/vggt_tiny_reference.npz``: the reference network in a tiny configuration (its DINOv2
  factory swapped for a 2-block ViT, so the DINOv2 path with registers and a resized position table is
  covered; and once with ``patch_embed="conv"``), every weight derived from its key name
  (tests/models/_vggt_golden.py), run on seeded frames: pose code, depth and confidence, world points and
  confidence; plus VGGT's image loader on two small PNGs (crop and pad mode), subsampled;
* ``tests/data/vggt_1b_keys.json``: every key and shape of the full published ``VGGT()`` state dict, built
  on the ``meta`` device (no memory, no download).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from functools import partial
from pathlib import Path

import numpy as np
import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "models"))

import vggt.models.aggregator as ref_aggregator  # noqa: E402
from _vggt_golden import CONV_FRAMES, SEED, fill_by_name, frames  # noqa: E402
from vggt.heads.camera_head import CameraHead  # noqa: E402
from vggt.heads.dpt_head import DPTHead  # noqa: E402
from vggt.layers import MemEffAttention, NestedTensorBlock  # noqa: E402
from vggt.layers.vision_transformer import DinoVisionTransformer  # noqa: E402
from vggt.models.vggt import VGGT  # noqa: E402
from vggt.utils.load_fn import load_and_preprocess_images  # noqa: E402

OUT = ROOT / "tests" / "data"
STRIDE = 13  # subsampling of the preprocessed images kept in the golden


def tiny_vit(patch_size: int = 14, num_register_tokens: int = 0, **kw: object) -> nn.Module:
    return DinoVisionTransformer(patch_size=patch_size, embed_dim=32, depth=2, num_heads=2, mlp_ratio=4,
                                 block_fn=partial(NestedTensorBlock, attn_class=MemEffAttention),
                                 num_register_tokens=num_register_tokens, **kw)  # type: ignore[arg-type]


REF_VIT_LARGE = ref_aggregator.vit_large


def tiny_reference(patch_embed: str) -> nn.Module:
    ref_aggregator.vit_large = tiny_vit  # the factory the aggregator looks up for "dinov2_vitl14_reg"
    net = VGGT.__new__(VGGT)
    nn.Module.__init__(net)
    net.aggregator = ref_aggregator.Aggregator(img_size=28, patch_size=14, embed_dim=32, depth=4, num_heads=2,
                                               num_register_tokens=2, patch_embed=patch_embed)
    net.camera_head = CameraHead(dim_in=64, trunk_depth=1, num_heads=2)
    dpt = {"features": 16, "out_channels": [8, 16, 32, 32], "intermediate_layer_idx": [0, 1, 2, 3]}
    net.point_head = DPTHead(dim_in=64, output_dim=4, activation="inv_log", conf_activation="expp1", **dpt)
    net.depth_head = DPTHead(dim_in=64, output_dim=2, activation="exp", conf_activation="expp1", **dpt)
    net.track_head = None
    ref_aggregator.vit_large = REF_VIT_LARGE
    return net.eval()


def run(net: nn.Module, x: np.ndarray) -> dict[str, np.ndarray]:
    images = torch.from_numpy(x).float().permute(0, 3, 1, 2) / 255.0
    with torch.no_grad():
        out = net(images)
    keys = ("pose_enc", "depth", "depth_conf", "world_points", "world_points_conf")
    return {k: out[k][0].numpy().astype(np.float32) for k in keys}


def preprocessing(tmp: Path) -> dict[str, np.ndarray]:
    from PIL import Image

    rng = np.random.default_rng(SEED + 1)
    got: dict[str, np.ndarray] = {}
    for mode, shape in (("crop", (30, 40, 3)), ("pad", (50, 24, 3))):
        img = rng.integers(0, 256, shape, dtype=np.uint8)
        path = tmp / f"{mode}.png"
        Image.fromarray(img).save(path)
        ref = load_and_preprocess_images([str(path)], mode=mode)[0].numpy()
        got[f"prep_{mode}_input"] = img
        got[f"prep_{mode}_shape"] = np.array(ref.shape)
        got[f"prep_{mode}_sub"] = ref[:, ::STRIDE, ::STRIDE].astype(np.float32)
    return got


def main() -> None:
    torch.set_num_threads(1)
    torch.manual_seed(0)
    data: dict[str, np.ndarray] = {"seed": np.array(SEED)}
    x = frames()
    net = tiny_reference("dinov2_vitl14_reg")
    fill_by_name(net)
    data["frames"] = x
    data.update({f"dinov2_{k}": v for k, v in run(net, x).items()})
    conv = tiny_reference("conv")
    fill_by_name(conv)
    data.update({f"conv_{k}": v for k, v in run(conv, x[:CONV_FRAMES]).items()})
    with tempfile.TemporaryDirectory() as tmp:
        data.update(preprocessing(Path(tmp)))
    np.savez_compressed(OUT / "vggt_tiny_reference.npz", **data)

    # DINOv2's constructor reads its drop-path schedule with .item(), which a meta tensor cannot give:
    # that one schedule is made on the CPU.
    linspace = torch.linspace
    torch.linspace = partial(linspace, device="cpu")  # type: ignore[assignment]
    try:
        with torch.device("meta"):
            full = VGGT()
    finally:
        torch.linspace = linspace  # type: ignore[assignment]
    keys = {k: list(v.shape) for k, v in full.state_dict().items()}
    src = Path(sys.modules["vggt"].__file__ or "").resolve().parents[1]
    try:
        commit = subprocess.run(["git", "-C", str(src), "rev-parse", "HEAD"], capture_output=True, text=True,
                                check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "44b3afbd1869d8bde4894dd8ea1e293112dd5eba (archive; no git metadata)"
    doc = {"source": f"facebookresearch/vggt {commit}, VGGT() on the meta device", "keys": keys}
    (OUT / "vggt_1b_keys.json").write_text(json.dumps(doc, indent=0, sort_keys=False) + "\n")
    print(f"wrote {OUT / 'vggt_tiny_reference.npz'} and {OUT / 'vggt_1b_keys.json'} ({len(keys)} keys)")


if __name__ == "__main__":
    main()
