"""Weight-backed networks: pinned sources, a local weights folder, clear offline errors, one cache.

The public API of the package; other packages import only from here. Inside it:

* :mod:`~robojudge.models._weights`: :class:`WeightSpec`, the weights registry, resolving files;
* :mod:`~robojudge.models._specs`: every built-in spec (the catalogue of ``robojudge weights list``);
* :mod:`~robojudge.models._load`: helpers every loader shares (device, local files, dtype, eval mode);
* :mod:`~robojudge.models._cache`: the one cache of loaded networks, bounded by count and bytes;
* the loaders (``_torch``, ``_hf``, ``_clipiqa``, ``_hpsv3``, ``_viclip``, ``_da3``, ``_vggt``) and
  :mod:`~robojudge.models._status` (presence on this machine, the one download path).

Nothing here imports torch or transformers at import time; loaders do, when called.
"""

from robojudge.models._cache import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_NETWORKS,
    NETWORKS,
    NetworkCache,
    NetworkKey,
    clear,
    network_nbytes,
    set_cache_limits,
)
from robojudge.models._clipiqa import clip_network, load_clipiqa
from robojudge.models._da3 import Da3Geometry, da3_geometry, load_da3
from robojudge.models._hf import (
    LoadedNetwork,
    clip_image_features,
    clip_text_features,
    load_clip,
    load_depth,
    load_vit,
    load_vjepa2,
    predict_depth,
    vit_cls_features,
    vjepa2_video_embedding,
)
from robojudge.models._hpsv3 import HPSv3Network, hpsv3_rewards, load_hpsv3
from robojudge.models._load import files_stamp, load_state_dict, torch_device
from robojudge.models._specs import (
    CLIP_B32,
    CLIP_L14,
    CLIP_MLP_AESTHETIC,
    CLIP_RN50_OPENAI,
    DA3_BASE,
    DEPTH_ANYTHING_V2_S,
    DINO_B16,
    DINOV2_B14,
    FRAME_INTERPOLATION,
    HPSV3,
    I3D_TORCHSCRIPT,
    INCEPTION_V3,
    LAION_AESTHETIC_LINEAR,
    MUSIQ_SPAQ,
    QWEN2_VL_7B_INSTRUCT,
    RAFT_THINGS,
    VGG16_IMAGENET,
    VGGT_1B,
    VICLIP_L14_INTERNVID,
    VJEPA2_G,
)
from robojudge.models._status import WeightsFetchError, WeightsStatus, fetch_weights, weights_status
from robojudge.models._torch import (
    load_frame_interpolation,
    load_i3d_torchscript,
    load_inception_v3,
    load_lpips_vgg,
    load_musiq_spaq,
    load_raft_things,
    load_vgg16_features,
)
from robojudge.models._vggt import VggtConfig, VggtGeometry, load_vggt, vggt_geometry
from robojudge.models._viclip import (
    cosine,
    frame_indices,
    load_viclip,
    viclip_text_embedding,
    viclip_video_embedding,
)
from robojudge.models._viclip_config import ViCLIPConfig
from robojudge.models._weights import (
    WEIGHTS,
    MissingWeightsError,
    UnusableWeightsError,
    WeightSpec,
    get_weights,
    how_to_provide,
    list_weights,
    register_weights,
    resolve_weights,
    weights_path,
    weights_root,
)
from robojudge.settings import WEIGHTS_ENV

__all__ = [
    "CLIP_B32",
    "CLIP_L14",
    "CLIP_MLP_AESTHETIC",
    "CLIP_RN50_OPENAI",
    "DA3_BASE",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_NETWORKS",
    "DEPTH_ANYTHING_V2_S",
    "DINOV2_B14",
    "DINO_B16",
    "FRAME_INTERPOLATION",
    "HPSV3",
    "I3D_TORCHSCRIPT",
    "INCEPTION_V3",
    "LAION_AESTHETIC_LINEAR",
    "MUSIQ_SPAQ",
    "NETWORKS",
    "QWEN2_VL_7B_INSTRUCT",
    "RAFT_THINGS",
    "VGG16_IMAGENET",
    "VGGT_1B",
    "VICLIP_L14_INTERNVID",
    "VJEPA2_G",
    "WEIGHTS",
    "WEIGHTS_ENV",
    "Da3Geometry",
    "HPSv3Network",
    "LoadedNetwork",
    "MissingWeightsError",
    "NetworkCache",
    "NetworkKey",
    "UnusableWeightsError",
    "VggtConfig",
    "VggtGeometry",
    "ViCLIPConfig",
    "WeightSpec",
    "WeightsFetchError",
    "WeightsStatus",
    "clear",
    "files_stamp",
    "clip_image_features",
    "clip_network",
    "clip_text_features",
    "cosine",
    "da3_geometry",
    "fetch_weights",
    "frame_indices",
    "get_weights",
    "how_to_provide",
    "hpsv3_rewards",
    "list_weights",
    "load_clip",
    "load_clipiqa",
    "load_da3",
    "load_depth",
    "load_frame_interpolation",
    "load_hpsv3",
    "load_i3d_torchscript",
    "load_inception_v3",
    "load_lpips_vgg",
    "load_musiq_spaq",
    "load_raft_things",
    "load_state_dict",
    "load_vgg16_features",
    "load_viclip",
    "load_vggt",
    "load_vit",
    "load_vjepa2",
    "network_nbytes",
    "predict_depth",
    "register_weights",
    "resolve_weights",
    "set_cache_limits",
    "torch_device",
    "viclip_text_embedding",
    "viclip_video_embedding",
    "vggt_geometry",
    "vit_cls_features",
    "vjepa2_video_embedding",
    "weights_path",
    "weights_root",
    "weights_status",
]
