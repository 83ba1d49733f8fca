"""Weight-backed networks: pinned sources, a local weights folder, clear offline errors.

Nothing here imports torch or transformers at import time; loaders do, when called.
"""

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
    "MissingWeightsError",
    "WeightSpec",
    "get_weights",
    "list_weights",
    "register_weights",
    "resolve_weights",
    "torch_device",
    "weights_path",
    "weights_root",
]
