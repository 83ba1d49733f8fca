"""V-JEPA 2 representation metrics: paired similarity, manifold distance and JEPA-feature MMD.

RoboJudge App. B.3 defines the paired cosine similarity and the manifold (Mahalanobis) distance;
RoboPhys-3D App. B.1.3 the JEPA similarity from an MMD between feature sets. The two set-level ones
are registered with :func:`robojudge.metrics._sets.set_metric`.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from typing import Generic, Protocol, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from robojudge.metrics._content import Span, require_frames, require_same_span
from robojudge.metrics._errors import MetricInputError
from robojudge.metrics._registry import Family, Input, Provider, metric
from robojudge.metrics._score import Score
from robojudge.metrics._sets import ItemGroup, SetOutput, SetScores, set_metric
from robojudge.metrics.robophys.reference import require_paired_framing, size_text
from robojudge.suite._schema import Item
from robojudge.video import FileFingerprint, SampledFrames, sample_frames

ROBOJUDGE_B3 = "RoboJudge: Multimodal Language Models as Judges for Embodied Video Generation, App. B.3"
VJEPA = "vjepa2_vitg_ssv2"

class EmbedFn(Protocol):
    def __call__(self, path: str, frames: np.ndarray | None = None, /) -> np.ndarray: ...


class VJepaClip(BaseModel):
    """Clip fed to V-JEPA 2: RoboJudge App. B.3 (manifold): 16 uniformly sampled frames at 128x128.

    The paper states no clip for the paired similarity; robojudge uses the same one.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    num_frames: int = Field(default=16, ge=2, description="frames sampled uniformly, first and last included")
    size: int = Field(default=128, ge=16, description="frames resized to size x size")


class PairedClipConfig(VJepaClip):
    """V-JEPA paired similarity settings: the clip, and how much of each other the two videos must span."""

    min_coverage: float = Field(
        default=0.9, gt=0, le=1,
        description="each video must last at least this share of the other; otherwise the item is unscored",
    )


class ManifoldConfig(VJepaClip):
    """V-JEPA manifold distance settings."""

    ridge: float = Field(default=1e-3, gt=0, description="added to the covariance diagonal (App. B.3)")


class JepaMmdConfig(VJepaClip):
    """JEPA similarity settings: polynomial-kernel MMD (degree 3, gamma 1/D, coef 1)."""

    degree: int = Field(default=3, ge=1)


# ---------------------------------------------------------------- pure functions


def cosine_similarity(a: np.ndarray, b: np.ndarray) -> float:
    """``a.b / (|a| |b|)`` (RoboJudge App. B.3 ``S_pair``); 0 when either vector is zero."""
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    return 0.0 if na == 0 or nb == 0 else float(np.dot(a, b) / (na * nb))


def mahalanobis_distances(queries: np.ndarray, reference: np.ndarray, ridge: float = 1e-3) -> np.ndarray:
    """Distance of each query row to the reference rows' Gaussian: ``sqrt((z-mu)^T (S + ridge I)^-1 (z-mu))``.

    ``S`` is the sample covariance of ``reference`` (``np.cov``, ``N - 1`` denominator; zero for a
    single reference), as in RoboJudge App. B.3 with ``ridge = 1e-3``.
    """
    ref = np.asarray(reference, dtype=np.float64)
    q = np.atleast_2d(np.asarray(queries, dtype=np.float64))
    mu = ref.mean(axis=0)
    d = ref.shape[1]
    cov = np.cov(ref, rowvar=False).reshape(d, d) if len(ref) > 1 else np.zeros((d, d))
    cov = cov + ridge * np.eye(d)
    diff = q - mu
    sol = np.linalg.solve(cov, diff.T).T
    dist: np.ndarray = np.sqrt(np.maximum(0.0, np.einsum("nd,nd->n", diff, sol)))
    return dist


def polynomial_mmd2(x: np.ndarray, y: np.ndarray, degree: int = 3) -> float:
    """Unbiased squared MMD with the kernel ``k(a, b) = (a.b / D + 1)^degree`` (KID/JEDi form).

    ``mean_{i!=j} k(x_i, x_j) + mean_{i!=j} k(y_i, y_j) - 2 mean k(x_i, y_j)``; needs two rows in each set.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if len(x) < 2 or len(y) < 2:
        raise MetricInputError(f"MMD needs at least 2 videos on each side, got {len(x)} and {len(y)}")
    d = x.shape[1]

    def k(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        out: np.ndarray = (a @ b.T / d + 1.0) ** degree
        return out

    kxx, kyy = k(x, x), k(y, y)
    m, n = len(x), len(y)
    xx = (kxx.sum() - np.trace(kxx)) / (m * (m - 1))
    yy = (kyy.sum() - np.trace(kyy)) / (n * (n - 1))
    return float(xx + yy - 2.0 * k(x, y).mean())


def jepa_similarity(mmd2: float) -> float:
    """Map an MMD to (0, 1], 1 for identical distributions: ``1 / (1 + max(0, mmd2))``.

    RoboPhys-3D App. B.1.3 gives the range (0, 1] but not the mapping; this is robojudge's choice.
    """
    return 1.0 / (1.0 + max(0.0, mmd2))


# ---------------------------------------------------------------- embedding videos

#: A video as one clip setting samples it: the file's fingerprint (None when it cannot be read), the
#: number of frames and the side.
ClipKey = tuple[FileFingerprint | None, int, int]

V = TypeVar("V")

#: Most embeddings, and most spans, kept per process. An embedding is a few kB (1408 float64 for
#: ViT-g), so a full memo holds some tens of MB; past it the least recently used go first.
MEMO_ENTRIES = 4096


class _Memo(Generic[V]):
    """A thread-safe map that keeps at most ``MEMO_ENTRIES`` values, least recently used out first."""

    def __init__(self) -> None:
        self._values: OrderedDict[Hashable, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> V | None:
        with self._lock:
            value = self._values.get(key)
            if value is not None:
                self._values.move_to_end(key)
            return value

    def put(self, key: Hashable, value: V) -> None:
        with self._lock:
            self._values[key] = value
            self._values.move_to_end(key)
            while len(self._values) > MEMO_ENTRIES:
                self._values.popitem(last=False)

    def __len__(self) -> int:
        return len(self._values)

    def clear(self) -> None:
        with self._lock:
            self._values.clear()


_EMBEDDINGS: _Memo[np.ndarray] = _Memo()  # (clip, network folder and its files' stamp) -> embedding
_SPANS: _Memo[Span] = _Memo()


def clip_key(path: str, cfg: VJepaClip) -> ClipKey:
    """What a clip's frames depend on: the file as it is now, and the sampling.

    A file that cannot be stat'ed gets no fingerprint; the decoder then reports it, and nothing is kept.
    """
    try:
        fingerprint: FileFingerprint | None = FileFingerprint.of(path)
    except OSError:
        fingerprint = None
    return (fingerprint, cfg.num_frames, cfg.size)


def sampled_clip(path: str, cfg: VJepaClip) -> SampledFrames:
    """``cfg.num_frames`` frames spread uniformly over the video, resized to ``cfg.size`` squared."""
    return sample_frames(path, fps=None, max_frames=cfg.num_frames, size=(cfg.size, cfg.size))


def clip_frames(path: str, cfg: VJepaClip) -> np.ndarray:
    """The frames of :func:`sampled_clip`; a video of one frame is left unscored."""
    frames = sampled_clip(path, cfg).frames
    require_frames(frames, 2, path)
    return frames


def clip_span(path: str, cfg: VJepaClip) -> tuple[Span, SampledFrames | None]:
    """The clip's :class:`~robojudge.metrics._content.Span`, and its frames when they had to be decoded.

    Spans are kept per process like embeddings: a reference shared by many items is decoded for its
    first item only (its embedding is cached too), not again for every item's span check.
    """
    key = clip_key(path, cfg)
    known = key[0] is not None
    hit = _SPANS.get(key) if known else None
    if hit is not None:
        return hit, None
    sampled = sampled_clip(path, cfg)
    span = Span.of(sampled)
    if known:
        _SPANS.put(key, span)
    return span, sampled


#: A set-level V-JEPA metric warns when the median length of its generated videos and of its reference
#: videos differ by more than this share (the paired metric refuses a pair under 0.9 of each other).
SET_SPAN_RATIO = 0.9


def _seconds(path: str) -> float | None:
    """How long a video lasts by its probe (duration, else frames over rate); None when unknown."""
    from robojudge.video import VideoError, probe_video

    try:
        info = probe_video(path)
    except VideoError:
        return None  # the embedding reports what is wrong with it
    if info.duration:
        return info.duration
    return info.frames / info.fps if info.frames and info.fps else None


def span_warning(generated: Sequence[str], references: Sequence[str], cfg: VJepaClip) -> list[str]:
    """A warning when the generated videos and the references last very differently (median lengths
    under :data:`SET_SPAN_RATIO` of each other), else none.

    Each clip spreads its ``num_frames`` frames over its own video, so a 5-s generated clip is embedded
    with frames 0.33 s apart and a 10-s episode with frames 0.67 s apart: the embeddings then compare
    motion at another pace and a generated start with a whole episode, whatever the videos show.
    """
    gen = [t for t in map(_seconds, generated) if t is not None]
    ref = [t for t in map(_seconds, references) if t is not None]
    if not gen or not ref:
        return []
    g, r = float(np.median(gen)), float(np.median(ref))
    if min(g, r) >= SET_SPAN_RATIO * max(g, r):
        return []
    step = max(cfg.num_frames - 1, 1)
    return [f"the generated videos last {g:.2f} s (median) and the references {r:.2f} s: each clip spreads "
            f"its {cfg.num_frames} frames over its own video ({g / step:.2f} s apart against {r / step:.2f} "
            "s), so the embeddings compare different paces and stretches of the episode; give references "
            "cut to the generated clips' length"]


def vjepa_embedder(metric_id: str, cfg: VJepaClip) -> EmbedFn:
    """``(path, frames=None) -> V-JEPA 2 embedding``, loading the network once and caching each video's
    embedding per process (references are shared by many items). ``frames``, when the caller has
    already sampled the clip (:func:`sampled_clip`), saves decoding it again."""
    from robojudge.models import files_stamp, load_vjepa2, vjepa2_video_embedding

    net = load_vjepa2(VJEPA, metric=metric_id)
    network = f"{net.path}|{files_stamp(net.path)}"  # weights replaced in place are another network

    def embed(path: str, frames: np.ndarray | None = None) -> np.ndarray:
        clip = clip_key(path, cfg)
        key = (clip, network)
        hit = _EMBEDDINGS.get(key) if clip[0] is not None else None
        if hit is None:
            if frames is None:
                frames = clip_frames(path, cfg)
            else:
                require_frames(frames, 2, path)
            hit = vjepa2_video_embedding(net, frames)
            if clip[0] is not None:
                _EMBEDDINGS.put(key, hit)
        return hit

    return embed


def embed_all(embed: EmbedFn, paths: Sequence[str]) -> np.ndarray:
    return np.stack([embed(p) for p in paths])


# ---------------------------------------------------------------- registered metrics


@metric(
    "vjepa_paired_similarity",
    family=Family.features,
    inputs={Input.video, Input.reference},
    higher_is_better=True,
    native_range=(-1.0, 1.0),
    version="3",  # videos framed unlike their reference, or under 16 px, unscored (v2: squashed and scored)
    citation=f"{ROBOJUDGE_B3} (V-JEPA Paired Similarity)",
    description=(
        "Cosine similarity between the V-JEPA 2 embeddings (mean of encoder tokens; 16 uniform frames at "
        "128x128) of the generated video and its reference episode. Higher is closer."
    ),
    config=PairedClipConfig,
    provider=Provider.model,
    weights=(VJEPA,),
)
def vjepa_paired_similarity(item: Item, config: PairedClipConfig) -> Score:
    """RoboJudge App. B.3 ``S_pair``; details carry ``E_pair = |z_gen - z_gt|^2 / D`` as well.

    Each clip spreads its frames over its own video, so a video cut short would be embedded as if it
    were the whole rollout: both must span at least ``min_coverage`` of each other, checked before the
    network loads. Both clips are squashed to one square, so a video framed unlike its reference (a crop,
    padding, a wider view) is left unscored from the probes, as the frame-paired metrics leave it
    (:func:`~robojudge.metrics.robophys.reference.require_paired_framing`).
    """
    assert item.reference_video is not None  # the runner checks Input.reference
    sizes = dict(zip(("video_size", "reference_size"), map(size_text, require_paired_framing(item)),
                     strict=True))
    (g_span, gen), (r_span, ref) = clip_span(item.video, config), clip_span(item.reference_video, config)
    span = require_same_span(g_span, r_span, config.min_coverage)
    embed = vjepa_embedder("vjepa_paired_similarity", config)
    z_gen = embed(item.video, None if gen is None else gen.frames)
    z_gt = embed(item.reference_video, None if ref is None else ref.frames)
    return Score(value=cosine_similarity(z_gen, z_gt),
                 details={"mse": float(np.mean((z_gen - z_gt) ** 2)), "dim": int(z_gen.shape[0]), **span,
                          **sizes})


@set_metric(
    "vjepa_manifold_similarity",
    output=SetOutput.item,
    family=Family.features,
    inputs={Input.video},
    higher_is_better=False,
    native_range=(0.0, None),
    citation=f"{ROBOJUDGE_B3} (V-JEPA Manifold Similarity)",
    description=(
        "Mahalanobis distance of each generated video's V-JEPA 2 embedding to the Gaussian of all distinct "
        "reference videos in the manifest (each counted once; covariance + 1e-3 I; 16 frames at 128x128). "
        "A distance: lower is closer to the real-video manifold."
    ),
    config=ManifoldConfig,
    weights=(VJEPA,),
    references="all",  # the real-video set is every item's reference, not only the group's
)
def vjepa_manifold_similarity(group: ItemGroup, config: ManifoldConfig) -> SetScores:
    """RoboJudge App. B.3 manifold distance; the reference set is the whole manifest's references."""
    refs = group.references(scope="all")
    if not refs:
        raise MetricInputError("vjepa_manifold_similarity needs reference_video on at least one item of the "
                               "manifest (the real-video set)")
    embed = vjepa_embedder("vjepa_manifold_similarity", config)
    z_ref = embed_all(embed, refs)
    z_gen = embed_all(embed, [it.video for it in group.items])
    dist = mahalanobis_distances(z_gen, z_ref, config.ridge)
    return SetScores(items={it.item_id: Score(value=float(v), details={"references": len(refs)})
                            for it, v in zip(group.items, dist, strict=True)},
                     warnings=span_warning([it.video for it in group.items], refs, config))


@set_metric(
    "ds_jepa_similarity",
    output=SetOutput.group,
    family=Family.features,
    inputs={Input.video, Input.reference},
    description=(
        "1 / (1 + MMD^2) between the V-JEPA 2 embeddings of a group's generated videos and of its distinct "
        "reference videos (unbiased MMD, polynomial kernel (x.y/D + 1)^3 as in JEDi; 16 frames at 128x128)."
    ),
    config=JepaMmdConfig,
    note="MMD estimator and the (0, 1] mapping 1/(1+MMD^2) chosen by robojudge (the paper states neither)",
    weights=(VJEPA,),
    min_items=2,
)
def ds_jepa_similarity(group: ItemGroup, config: JepaMmdConfig) -> SetScores:
    """RoboPhys-3D App. B.1.3 JEPA similarity of one group against its own references."""
    refs = group.references()
    if len(refs) < 2:
        raise MetricInputError(f"ds_jepa_similarity needs at least 2 distinct reference videos in group "
                               f"{group.key!r}, found {len(refs)}")
    embed = vjepa_embedder("ds_jepa_similarity", config)
    mmd2 = polynomial_mmd2(embed_all(embed, [it.video for it in group.items]), embed_all(embed, refs),
                           config.degree)
    details = {"mmd2": mmd2, "references": len(refs)}
    warn = [] if mmd2 > 0 else [f"MMD estimate {mmd2:.3g} <= 0: at {len(group.items)} videos the sets are "
                                 "not distinguishable, the similarity saturates at 1"]
    warn += span_warning([it.video for it in group.items], refs, config)
    return SetScores(group=Score(value=jepa_similarity(mmd2), details=details), warnings=warn)
