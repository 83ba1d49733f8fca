"""The keypoint reader network (torch is imported when this module loads; reach it lazily).

Input: ``context`` consecutive RGB frames stacked on the channel axis (the frame read and its
neighbours), plus two coordinate channels, at ``size x size``. A small convolutional encoder goes down
to 1/8 of the size, comes back up to 1/4 with a skip connection (and, with ``stride=2``, on up to 1/2
with a second one), and ends in one heatmap per keypoint; a spatial soft-argmax turns each heatmap into
an image position (sub-pixel, differentiable). A second head reads, from the pooled coarse features,
whether each keypoint is visible.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import torch
from torch import nn
from torch.nn import functional as F


def _block(cin: int, cout: int, stride: int) -> nn.Sequential:
    # GroupNorm, not BatchNorm: the same computation in training and at inference, any batch size.
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False),
        nn.GroupNorm(8, cout),
        nn.ReLU(inplace=True),
    )


def local_window(prob: torch.Tensor, radius: int) -> torch.Tensor:
    """Heatmap probabilities ``(B, K, H, W)`` kept only within ``radius`` cells of each map's peak (a
    ``(2 * radius + 1)``-cell square, cut at the edges) and renormalised to sum to 1.

    A soft-argmax over the whole map averages in every far-off bump of probability, so a second,
    weaker response elsewhere in the frame pulls the read towards it; read within a window round the
    peak, the position is the peak's own sub-cell estimate. Not differentiable through the peak's
    choice: for reading, not for training.
    """
    if radius < 0:
        raise ValueError(f"radius must be >= 0, got {radius}")
    kept = prob * near_peak(prob, radius)
    return kept / kept.sum(dim=(2, 3), keepdim=True)


def near_peak(prob: torch.Tensor, radius: int) -> torch.Tensor:
    """``(B, K, H, W)`` bool: the cells within ``radius`` cells of each heatmap's peak."""
    _, _, hh, ww = prob.shape
    peak = prob.flatten(2).argmax(dim=-1)
    py, px = peak // ww, peak % ww
    ys = torch.arange(hh, device=prob.device).view(1, 1, hh, 1)
    xs = torch.arange(ww, device=prob.device).view(1, 1, 1, ww)
    return ((ys - py[..., None, None]).abs() <= radius) & ((xs - px[..., None, None]).abs() <= radius)


def peak_mass(prob: torch.Tensor, radius: int = 1) -> torch.Tensor:
    """``(B, K)``: each heatmap's probability mass within ``radius`` cells of its peak (a 3 x 3 block of
    cells at the default). A reader sure of where a keypoint is puts most of its heatmap there; on a picture
    that does not show its robot, the mass spreads (docs/kiva.md, "A robot the reader does not
    recognise")."""
    return (prob * near_peak(prob, radius)).sum(dim=(2, 3))


def cell_centres(cells: int, extent: int, like: torch.Tensor) -> torch.Tensor:
    """Centres of ``cells`` heatmap cells spanning ``extent`` input pixels, in input pixels (pixel centres at
    integer + 0.5), with ``like``'s dtype and device."""
    return (torch.arange(cells, dtype=like.dtype, device=like.device) + 0.5) * (extent / cells)


class KeypointReader(nn.Module):
    """Frames ``(B, 3 * context, S, S)`` in [0, 1] -> pixel positions ``(B, K, 2)``, visibility logits.

    ``local_radius`` (an attribute, ``None`` unless set after loading): read each heatmap only within
    that many cells of its peak (:func:`local_window`) instead of over the whole map.
    """

    local_radius: int | None = None

    def __init__(self, keypoints: int, context: int = 3, width: int = 32, stride: int = 4) -> None:
        super().__init__()
        if stride not in (2, 4):
            raise ValueError(f"heatmap stride must be 2 or 4, not {stride}")
        w = width
        self.keypoints = keypoints
        self.stride = stride
        self.enc1 = nn.Sequential(_block(3 * context + 2, w, 2), _block(w, w, 1))  # 1/2
        self.enc2 = nn.Sequential(_block(w, 2 * w, 2), _block(2 * w, 2 * w, 1))  # 1/4
        self.enc3 = nn.Sequential(_block(2 * w, 4 * w, 2), _block(4 * w, 4 * w, 1))  # 1/8
        self.fuse = nn.Sequential(_block(6 * w, 2 * w, 1), _block(2 * w, 2 * w, 1))
        # Stride 2: one more step up, to 1/2 of the size, with the first encoder stage as its skip, so a
        # heatmap cell is 2 x 2 input pixels instead of 4 x 4 (fingers sit a few pixels apart).
        self.fine = nn.Sequential(_block(3 * w, w, 1), _block(w, w, 1)) if stride == 2 else None
        self.heat = nn.Conv2d(w if stride == 2 else 2 * w, keypoints, 1)
        self.vis = nn.Linear(4 * w, keypoints)
        self.log_beta = nn.Parameter(torch.zeros(()))  # heatmap sharpness, learnt

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        pos, vis, _, _ = self._read(x, False)
        return pos, vis

    def read_confident(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """What :meth:`forward` returns, plus each heatmap's confidence ``(B, K)``: its probability mass
        within one cell of its peak (:func:`peak_mass`, on the whole map whatever ``local_radius``)."""
        pos, vis, _, peak = self._read(x, False, confidence=True)
        assert peak is not None
        return pos, vis, peak

    def read(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Positions ``(B, K, 2)``, visibility logits ``(B, K)`` and the heatmaps' log-probabilities
        ``(B, K, h / stride, w / stride)`` (before any ``local_radius``): what :meth:`forward` returns,
        plus the maps a heatmap loss trains (``TrainConfig.heatmap_loss``)."""
        pos, vis, logp, _ = self._read(x, True)
        assert logp is not None
        return pos, vis, logp

    def _read(self, x: torch.Tensor, log_maps: bool, confidence: bool = False
              ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None, torch.Tensor | None]:
        b, _, h, w = x.shape
        ys = torch.linspace(-1, 1, h, dtype=x.dtype, device=x.device).view(1, 1, h, 1).expand(b, 1, h, w)
        xs = torch.linspace(-1, 1, w, dtype=x.dtype, device=x.device).view(1, 1, 1, w).expand(b, 1, h, w)
        f1 = self.enc1(torch.cat([x, xs, ys], dim=1))
        f2 = self.enc2(f1)
        f3 = self.enc3(f2)
        up = F.interpolate(f3, size=f2.shape[-2:], mode="nearest")
        feat = self.fuse(torch.cat([f2, up], dim=1))  # (B, 2w, h/4, w/4)
        if self.fine is not None:
            up2 = F.interpolate(feat, size=f1.shape[-2:], mode="nearest")
            feat = self.fine(torch.cat([f1, up2], dim=1))  # (B, w, h/2, w/2)
        heat = self.heat(feat)  # (B, K, h/stride, w/stride)
        hh, ww = heat.shape[-2:]
        logits = heat.flatten(2) * self.log_beta.exp() * 10.0
        prob = torch.softmax(logits, dim=-1).view(b, -1, hh, ww)
        logp = torch.log_softmax(logits, dim=-1).view(b, -1, hh, ww) if log_maps else None  # not when reading
        peak = peak_mass(prob) if confidence else None  # (before any local window)
        if self.local_radius is not None:
            prob = local_window(prob, self.local_radius)
        cy, cx = cell_centres(hh, h, x), cell_centres(ww, w, x)
        px = (prob.sum(dim=2) * cx).sum(dim=-1)
        py = (prob.sum(dim=3) * cy).sum(dim=-1)
        vis = self.vis(f3.mean(dim=(2, 3)))
        return torch.stack([px, py], dim=-1), vis, logp, peak


class ReaderEnsemble(nn.Module):
    """Readers of the same keypoints (trained alike, other seeds) read as one: positions averaged over the
    members, visibility probabilities averaged and returned as the logit of the mean, so code that reads a
    :class:`KeypointReader` (sigmoid of the second output) reads an ensemble unchanged."""

    def __init__(self, members: Sequence[KeypointReader]) -> None:
        super().__init__()
        if not members:
            raise ValueError("an ensemble needs at least one reader")
        self.members = nn.ModuleList(members)
        self.keypoints = members[0].keypoints
        self.stride = members[0].stride

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return _mean_reads([m(x) for m in self.members])

    def read_confident(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """:meth:`forward` plus the members' mean heatmap confidence
        (:meth:`KeypointReader.read_confident`)."""
        reads = [cast(KeypointReader, m).read_confident(x) for m in self.members]
        pos, vis = _mean_reads([(p, v) for p, v, _ in reads])
        return pos, vis, torch.stack([c for _, _, c in reads]).mean(dim=0)


def _mean_reads(reads: Sequence[tuple[torch.Tensor, torch.Tensor]]) -> tuple[torch.Tensor, torch.Tensor]:
    """Members' ``(positions, visibility logits)`` as one read: positions averaged, and the logit of the
    mean visibility probability."""
    pos = torch.stack([p for p, _ in reads]).mean(dim=0)
    prob = torch.stack([torch.sigmoid(v) for _, v in reads]).mean(dim=0)
    return pos, torch.logit(prob, eps=1e-7)


def set_local_radius(net: KeypointReader | ReaderEnsemble, radius: int | None) -> None:
    """Read every heatmap of ``net`` (each member of an ensemble) within ``radius`` cells of its peak, or
    over the whole map with ``None`` (:class:`KeypointReader`)."""
    if radius is not None and radius < 0:
        raise ValueError(f"radius must be >= 0, got {radius}")
    for m in net.modules():
        if isinstance(m, KeypointReader):
            m.local_radius = radius


def build_reader(keypoints: int, context: int, width: int, stride: int, members: int = 1
                 ) -> KeypointReader | ReaderEnsemble:
    """A :class:`KeypointReader`, or a :class:`ReaderEnsemble` of ``members`` of them."""
    if members == 1:
        return KeypointReader(keypoints, context, width, stride)
    return ReaderEnsemble([KeypointReader(keypoints, context, width, stride) for _ in range(members)])
