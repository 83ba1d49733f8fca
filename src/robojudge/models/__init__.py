"""Weight-backed networks: pinned sources, a local weights folder, clear offline errors.

Nothing here imports torch or transformers at import time; loaders do, when called. Importing the
package registers the catalogue of networks (``robojudge weights list``).
"""

from robojudge.models import _specs  # noqa: F401  (registers the catalogue)
from robojudge.models._hf import (
    LoadedNetwork,
    clear_network_cache,
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
from robojudge.models._status import WeightsStatus, fetch_weights, weights_status
from robojudge.models._torch import (
    clear_loaded,
    load_frame_interpolation,
    load_i3d_torchscript,
    load_inception_v3,
    load_lpips_vgg,
    load_musiq_spaq,
    load_raft_things,
    load_state_dict,
    load_vgg16_features,
    load_viclip,
)
from robojudge.models._viclip import ViCLIPConfig, viclip_text_embedding, viclip_video_embedding
from robojudge.models._weights import (
    WEIGHTS_ENV,
    MissingWeightsError,
    WeightSpec,
    get_weights,
    list_weights,
    register_weights,
    resolve_weights,
    torch_device,
    weights_path,
    weights_root,
)

__all__ = [
    "WEIGHTS_ENV",
    "LoadedNetwork",
    "ViCLIPConfig",
    "MissingWeightsError",
    "WeightSpec",
    "WeightsStatus",
    "clear_loaded",
    "clear_network_cache",
    "clip_image_features",
    "clip_text_features",
    "fetch_weights",
    "get_weights",
    "list_weights",
    "load_clip",
    "load_depth",
    "load_frame_interpolation",
    "load_i3d_torchscript",
    "load_inception_v3",
    "load_lpips_vgg",
    "load_musiq_spaq",
    "load_raft_things",
    "load_state_dict",
    "load_vgg16_features",
    "load_viclip",
    "load_vit",
    "load_vjepa2",
    "predict_depth",
    "register_weights",
    "resolve_weights",
    "torch_device",
    "viclip_text_embedding",
    "viclip_video_embedding",
    "vit_cls_features",
    "vjepa2_video_embedding",
    "weights_path",
    "weights_root",
    "weights_status",
]
