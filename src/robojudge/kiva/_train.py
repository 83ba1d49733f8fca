"""Training the keypoint reader on forward-kinematics targets (torch is imported when this module loads).

Loss: Huber on the visible keypoints' positions (in units of the image side, so the same settings
suit every size) plus a small binary cross-entropy on visibility. Augmentation: every sample is shifted
by up to 2 px in x and y (edges repeated, targets moved with it) and its brightness scaled by up to
+-10%, the range the test-time candidates stay in; with ``warp``, every sample is also warped by a smooth
random displacement field (keypoints moved with it). Determinism: one seed drives torch's initialisation,
the shuffling and the augmentation; data is prepared in the main process; while training runs,
``torch.use_deterministic_algorithms(True)`` and a fixed thread count are set (and restored after), so
the same data, settings and seed give the same weights bit for bit on the same machine.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import torch
from torch.nn import functional as F

from robojudge.kiva._config import TrainConfig
from robojudge.kiva._data import EpisodeData
from robojudge.kiva._infer import predict, stack_context, to_tensor
from robojudge.kiva._net import KeypointReader, ReaderEnsemble, cell_centres

Progress = Callable[[int, int, float], None]
"""Called after each epoch with (epochs done, epochs in all, mean training loss)."""


@contextmanager
def deterministic(threads: int, kernels: bool = True) -> Iterator[None]:
    """A fixed thread count and, with ``kernels``, deterministic kernels, restored afterwards.

    Reading needs no kernel switch (CPU inference kernels are deterministic at a fixed thread count), and
    leaving it out keeps torch's compiler package unimported while scoring: in a process where MuJoCo
    has rendered through EGL, that import crashes.
    """
    was_det = torch.are_deterministic_algorithms_enabled()
    was_threads = torch.get_num_threads()
    if kernels:
        _deterministic_kernels(True)
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        if kernels:
            _deterministic_kernels(was_det)
        torch.set_num_threads(was_threads)


@contextmanager
def seeded(seed: int, device: torch.device) -> Iterator[None]:
    """torch's random draws seeded with ``seed`` inside the block, on the CPU and on ``device``; the
    caller's generators are as they were afterwards (training does not reseed a notebook's stream)."""
    if device.type == "cpu":
        with torch.random.fork_rng(devices=[]):
            torch.default_generator.manual_seed(seed)  # (torch.manual_seed would seed CUDA too)
            yield
        return
    devices = list(range(getattr(torch, device.type).device_count()))
    with torch.random.fork_rng(devices=devices, device_type=device.type):
        torch.manual_seed(seed)
        yield


def _deterministic_kernels(mode: bool) -> None:
    """Switch torch's deterministic kernels. ``torch.use_deterministic_algorithms`` also imports its
    compiler package to set the compiler's own flag, and that import (triton's LLVM) crashes a process
    where MuJoCo has rendered through EGL (Mesa's LLVM): training after rendering in one process
    segfaulted. Nothing here is compiled, so only the kernel switch itself is made."""
    switch = getattr(torch._C, "_set_deterministic_algorithms", None)
    if switch is None:  # a torch without the switch: the public call
        torch.use_deterministic_algorithms(mode)
    else:
        switch(mode, warn_only=False)


def split_groups(groups: Sequence[str], holdout: float, seed: int) -> tuple[set[str], set[str]]:
    """Clips for training and for held-out evaluation, drawn with ``seed`` (at least one of each when
    there are two or more clips and ``holdout > 0``)."""
    names = sorted(set(groups))
    if holdout <= 0 or len(names) < 2:
        return set(names), set()
    order = np.random.default_rng([seed, 1]).permutation(len(names))
    n_out = min(len(names) - 1, max(1, round(holdout * len(names))))
    held = {names[i] for i in order[:n_out]}
    return set(names) - held, held


def _augment(
    x: torch.Tensor, kp: torch.Tensor, vis: torch.Tensor, rng: np.random.Generator, shift: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    size = x.shape[-1]
    padded = F.pad(x, (shift, shift, shift, shift), mode="replicate")
    out = torch.empty_like(x)
    kp = kp.clone()
    d = rng.integers(-shift, shift + 1, size=(len(x), 2))
    gain = rng.uniform(0.9, 1.1, size=len(x))
    for i in range(len(x)):
        dx, dy = int(d[i, 0]), int(d[i, 1])
        out[i] = padded[i, :, shift - dy : shift - dy + size, shift - dx : shift - dx + size] * float(gain[i])
        kp[i, :, 0] += dx
        kp[i, :, 1] += dy
    inside = ((kp >= 0) & (kp < size)).all(dim=-1)
    return out.clamp_(0.0, 1.0), kp, vis & inside


#: Control points per side of the random warp's displacement field: a field smooth over about a quarter
#: of the image, so neighbouring keypoints (the two ends of a link) move by different amounts.
WARP_GRID = 5


def _warp(
    x: torch.Tensor, kp: torch.Tensor, vis: torch.Tensor, rng: np.random.Generator, sigma: float
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Each sample warped by its own smooth random displacement field, keypoints moved with the content.

    The field ``D`` (pixels) is drawn on a coarse grid with standard deviation ``sigma`` x the image side
    and interpolated bicubically; the warped frame at ``p`` shows the input at ``p + D(p)`` (edges
    repeated), the same warp for every context frame of a sample. A keypoint at ``q`` moves to the ``p``
    with ``p + D(p) = q``, found by eight fixed-point steps (the field is smooth and small, so they
    converge). Link lengths then vary in training, which is what a stretched link looks like.
    """
    n, _, size, _ = x.shape
    coarse = rng.normal(0.0, sigma * size, size=(n, 2, WARP_GRID, WARP_GRID)).astype(np.float32)
    field = F.interpolate(torch.from_numpy(coarse), size=(size, size), mode="bicubic", align_corners=True)
    ys, xs = torch.meshgrid(torch.arange(size, dtype=torch.float32), torch.arange(size, dtype=torch.float32),
                            indexing="ij")
    src_x = xs + field[:, 0]
    src_y = ys + field[:, 1]

    def unit(p: torch.Tensor) -> torch.Tensor:  # pixels -> grid_sample's -1..1 (align_corners)
        return p * (2.0 / (size - 1)) - 1.0

    out = F.grid_sample(x, unit(torch.stack([src_x, src_y], dim=-1)), mode="bilinear", padding_mode="border",
                        align_corners=True)

    def field_at(p: torch.Tensor) -> torch.Tensor:  # (n, k, 2) pixels -> the field there, (n, k, 2)
        at = F.grid_sample(field, unit(p).unsqueeze(1), mode="bilinear", padding_mode="border",
                           align_corners=True)
        return at[:, :, 0].transpose(1, 2)

    q = kp.float()
    p = q.clone()
    for _ in range(8):
        p = q - field_at(p)
    inside = ((p >= 0) & (p < size)).all(dim=-1)
    return out, p.to(kp.dtype), vis & inside


def _loss(net: KeypointReader, x: torch.Tensor, kp: torch.Tensor, vis: torch.Tensor,
          cfg: TrainConfig, size: int) -> torch.Tensor:
    if cfg.heatmap_loss > 0:
        pos, logit, logp = net.read(x)
    else:  # the loss of readers trained before the option, computed as it was
        pos, logit = net(x)
    bce = F.binary_cross_entropy_with_logits(logit, vis.float())
    if vis.any():
        huber = F.huber_loss(pos[vis] / size, kp[vis] / size, delta=cfg.huber_delta)
    else:
        huber = pos.sum() * 0.0
    loss = huber + cfg.visibility_weight * bce
    if cfg.heatmap_loss > 0 and vis.any():
        loss = loss + cfg.heatmap_loss * heatmap_cross_entropy(logp, kp, vis, size)
    return loss


def heatmap_target(kp: torch.Tensor, shape: tuple[int, int], size: int) -> torch.Tensor:
    """``(N, hh, ww)`` probabilities: for each position ``kp`` ``(N, 2)`` (input pixels of a ``size x size``
    frame), a Gaussian over the heatmap's cell centres with a standard deviation of one cell, summing to 1.
    """
    hh, ww = shape
    cell_y, cell_x = size / hh, size / ww
    cy, cx = cell_centres(hh, size, kp), cell_centres(ww, size, kp)
    dy = (cy[None, :] - kp[:, 1:2]) / cell_y  # (N, hh), in cells
    dx = (cx[None, :] - kp[:, 0:1]) / cell_x  # (N, ww)
    logit = -0.5 * (dy[:, :, None] ** 2 + dx[:, None, :] ** 2)
    return torch.softmax(logit.flatten(1), dim=-1).view(-1, hh, ww)


def heatmap_cross_entropy(logp: torch.Tensor, kp: torch.Tensor, vis: torch.Tensor, size: int) -> torch.Tensor:
    """Mean over the visible keypoints of the cross-entropy between the heatmap (log-probabilities ``(B, K,
    hh, ww)``) and :func:`heatmap_target` at the keypoint's position: it teaches each map a peak where its
    keypoint is seen, where the Huber loss on the soft-argmax alone accepts any map whose mean is right."""
    target = heatmap_target(kp[vis], (logp.shape[-2], logp.shape[-1]), size)
    return -(target * logp[vis]).sum(dim=(-2, -1)).mean()


def training_index(data: Sequence[EpisodeData], failure_repeat: int = 1) -> np.ndarray:
    """``(n, 2)`` rows of (episode, frame) drawn once an epoch each: every frame once, then, with
    ``failure_repeat`` above 1, each frame inside a planted failure's span ``failure_repeat - 1`` times
    more (a frame inside two spans counts once). With 1 the index is every frame in order, as before the
    option existed."""
    rows = [(e, t) for e, d in enumerate(data) for t in range(len(d.frames))]
    if failure_repeat > 1:
        extra: list[tuple[int, int]] = []
        for e, d in enumerate(data):
            inside = np.zeros(len(d.frames), dtype=bool)
            for start, stop in d.episode.failure_spans:
                inside[max(start, 0) : max(stop, 0)] = True
            extra.extend((e, int(t)) for t in np.flatnonzero(inside))
        rows.extend(extra * (failure_repeat - 1))
    return np.array(rows, dtype=np.int64).reshape(-1, 2)


def train_net(
    data: Sequence[EpisodeData], keypoints: int, cfg: TrainConfig, progress: Progress | None = None,
    seed: int | None = None,
) -> tuple[KeypointReader, list[float]]:
    """Train a reader on ``data``; returns it (on the CPU) and the mean loss of every epoch.

    ``seed`` (default ``cfg.seed``) drives initialisation, shuffling and augmentation: the members of an
    ensemble train with ``cfg.seed + k``.
    """
    seed = cfg.seed if seed is None else seed
    index = training_index(data, cfg.failure_repeat)
    if not len(index):
        raise ValueError("no frames to train on")
    device = torch.device(cfg.resolved_device())
    losses: list[float] = []
    with deterministic(cfg.threads), seeded(seed, device):
        net = KeypointReader(keypoints, cfg.context, cfg.width, cfg.heatmap_stride).to(device)
        opt = torch.optim.AdamW(net.parameters(), lr=cfg.lr, weight_decay=1e-4)
        steps = cfg.epochs * math.ceil(len(index) / cfg.batch_size)
        sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=cfg.lr, total_steps=steps, pct_start=0.15)
        rng = np.random.default_rng([seed, 2])
        for epoch in range(cfg.epochs):
            net.train()
            order = rng.permutation(len(index))
            total, count = 0.0, 0
            for lo in range(0, len(order), cfg.batch_size):
                batch = index[order[lo : lo + cfg.batch_size]]
                x, kp, vis = _batch(data, batch, cfg.context)
                x, kp, vis = _augment(x, kp, vis, rng, cfg.shift)
                if cfg.warp > 0:  # drawn after the shift, so readers without it keep their draws
                    x, kp, vis = _warp(x, kp, vis, rng, cfg.warp)
                loss = _loss(net, x.to(device), kp.to(device), vis.to(device), cfg, cfg.size)
                opt.zero_grad(set_to_none=True)
                loss.backward()  # type: ignore[no-untyped-call]
                opt.step()
                sched.step()
                total += float(loss.detach()) * len(batch)
                count += len(batch)
            losses.append(total / count)
            if progress is not None:
                progress(epoch + 1, cfg.epochs, losses[-1])
            if not math.isfinite(losses[-1]):  # diverged: every later step and read would be NaN too
                raise ValueError(
                    f"training diverged: the mean loss of epoch {epoch + 1} is {losses[-1]} (learning rate "
                    f"{cfg.lr:g}); no reader was saved. Train again with other settings (a smaller "
                    "TrainConfig.lr or --heatmap-loss) or another --seed")
    return net.cpu().eval(), losses


def _batch(data: Sequence[EpisodeData], batch: np.ndarray, context: int
           ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    xs, kps, viss = [], [], []
    for e, t in batch:
        d = data[int(e)]
        xs.append(stack_context(d.frames, np.array([t]), context))
        kps.append(d.keypoints[t])
        viss.append(d.visible[t])
    return to_tensor(np.concatenate(xs)), torch.from_numpy(np.stack(kps)), torch.from_numpy(np.stack(viss))


def keypoint_error(net: KeypointReader | ReaderEnsemble, data: Sequence[EpisodeData], cfg: TrainConfig
                   ) -> dict[str, Any]:
    """Error of the test-time-averaged positions on the visible keypoints of ``data``.

    Pixels are those of the reader's ``size x size`` frames; ``fraction_of_diagonal`` divides by that
    frame's diagonal, so it reads the same at any video size.
    """
    errs = []
    with deterministic(cfg.threads, kernels=False):
        for d in data:
            pos, _ = predict(net, d.frames, cfg.context)
            errs.append(np.linalg.norm(pos - d.keypoints, axis=-1)[d.visible])
    err = np.concatenate(errs) if errs else np.zeros(0)
    if not len(err):
        return {"keypoints": 0, "episodes": len(data), "mean_px": None, "median_px": None, "p90_px": None,
                "fraction_of_diagonal": None}
    diag = cfg.size * math.sqrt(2)
    return {
        "keypoints": int(len(err)),
        "episodes": len(data),
        "mean_px": round(float(err.mean()), 4),
        "median_px": round(float(np.median(err)), 4),
        "p90_px": round(float(np.percentile(err, 90)), 4),
        "fraction_of_diagonal": round(float(err.mean()) / diag, 6),
    }
