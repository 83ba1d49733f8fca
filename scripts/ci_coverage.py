"""How often robojudge's 95% cluster-bootstrap intervals hold the true value, by simulation.

Each sample draws ``--clips`` source clips with ``--per-clip`` rated videos each, rates them on a 1-5
scale by a human and by a judge whose errors are shared within a clip (so clustering matters), and asks
``robojudge.meta.agreement_table`` for the judge's intervals. The true value of each statistic is the
same statistic on ``--truth-items`` videos drawn the same way. Coverage is the share of samples whose
interval holds it; a withheld interval (``Estimate.why``) is counted apart, not as a hit or a miss.

The numbers in docs/meta.md ("How far to trust an interval") come from a fuller version of this
simulation (two judges, paired differences, 300-400 samples of 1,000 replicates). With the small
defaults this runs in seconds and reproduces them within its Monte Carlo error (about +-0.03 at
100 samples)::

    PYTHONPATH=src .venv/bin/python scripts/ci_coverage.py --clips 15
    PYTHONPATH=src .venv/bin/python scripts/ci_coverage.py --clips 80 --per-clip 4 --samples 200
    PYTHONPATH=src .venv/bin/python scripts/ci_coverage.py --clips 15 --shift 0.9   # heavy ceiling

``--best-of-n`` measures instead the intervals of ``robojudge select best-of-n``'s summary
(docs/selection.md): ``--clips`` clips with ``--per-clip`` prompts each (groups ``clip_id,prompt``),
4 candidates per group sharing their clip's quality, 1-5 labels and a noisy score; the truth is the
summary over 60,000 independent groups. It runs the summary twice on each sample: drawing clips with
all of their groups (what it does) and drawing groups one by one (what it did, too narrow)::

    PYTHONPATH=src .venv/bin/python scripts/ci_coverage.py --best-of-n --clips 30 --samples 200
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from robojudge.meta import agreement_table
from robojudge.select import STATISTICS, GroupPick, pick_group, summarize

#: Cut points of the latent quality onto the 1-5 scale: about 3/5/13/41/39% of human ratings per level.
CUTS = np.array([-1.75, -1.3, -0.75, 0.25])
STATS = ("pearson", "exact", "within_one", "mse", "bias")


def draw(n_clips: int, per_clip: int, rng: np.random.Generator, shift: float) -> dict[str, np.ndarray]:
    """Human and judge ratings of ``n_clips * per_clip`` videos, and the clip of each."""
    n = n_clips * per_clip
    clip = np.repeat(np.arange(n_clips), per_clip)
    generator = np.array([0.3, 0.1, -0.1, -0.35])[np.arange(n) % 4]
    quality = rng.normal(0, 0.55, n_clips)[clip] + generator + rng.normal(0, 0.5, n) + shift
    judge_error = rng.normal(0, 0.45, n_clips)[clip]  # the judge misreads a whole clip alike

    def rate(x: np.ndarray) -> np.ndarray:
        return (np.searchsorted(CUTS, x) + 1).astype(float)

    return {"clip": clip, "human": rate(quality + rng.normal(0, 0.45, n)),
            "judge": rate(quality + judge_error + rng.normal(0, 0.55, n))}


def statistics(judge: np.ndarray, human: np.ndarray) -> dict[str, float]:
    d = judge - human
    return {"pearson": float(np.corrcoef(judge, human)[0, 1]), "exact": float(np.mean(d == 0)),
            "within_one": float(np.mean(np.abs(d) <= 1)), "mse": float(np.mean(d ** 2)),
            "bias": float(np.mean(d))}


def draw_groups(n_clips: int, prompts: int, rng: np.random.Generator, candidates: int = 4) -> list[GroupPick]:
    """Best-of-N groups: ``prompts`` per clip, candidates sharing the clip's quality, scored with noise."""
    picks = []
    clip_quality = rng.normal(0, 0.8, n_clips)
    for c in range(n_clips):
        for j in range(prompts):
            q = clip_quality[c] + rng.normal(0, 0.3) + rng.normal(0, 0.7, candidates)
            labels = np.clip(np.floor(3.5 + q + rng.normal(0, 0.4, candidates)), 1, 5)
            picks.append(pick_group((f"c{c}", f"p{j}"), [f"c{c}-p{j}-{i}" for i in range(candidates)],
                                    q + rng.normal(0, 0.8, candidates), labels))
    return picks


def best_of_n_coverage(args: argparse.Namespace) -> None:
    rng = np.random.default_rng(args.seed)
    big = summarize(draw_groups(60_000, 1, rng), bootstrap=0)
    truth = {name: big.stats[name].value for name, _ in STATISTICS}
    held = {how: dict.fromkeys(truth, 0) for how in ("clips", "groups")}
    shown = {how: dict.fromkeys(truth, 0) for how in ("clips", "groups")}
    for r in range(args.samples):
        picks = draw_groups(args.clips, args.per_clip, rng)
        for how, clips in (("clips", [p.group[0] for p in picks]), ("groups", None)):
            s = summarize(picks, clips=clips, bootstrap=args.bootstrap, seed=r)
            for name, e in s.stats.items():
                if not math.isnan(e.low):
                    shown[how][name] += 1
                    held[how][name] += int(e.low <= truth[name] <= e.high)
    print(f"best-of-N: {args.clips} clips x {args.per_clip} prompts x 4 candidates, {args.samples} samples, "
          f"{args.bootstrap} replicates: nominal 95% intervals, drawing clips / drawing groups")
    print(f"{'statistic':14s} {'truth':>8s} {'clips':>7s} {'groups':>7s}")
    for name in truth:
        cover = [held[h][name] / shown[h][name] if shown[h][name] else math.nan for h in ("clips", "groups")]
        print(f"{name:14s} {truth[name]:8.3f} {cover[0]:7.3f} {cover[1]:7.3f}")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--clips", type=int, default=15, help="Source clips per sample (bootstrap clusters).")
    p.add_argument("--per-clip", type=int, default=3, help="Rated videos per clip.")
    p.add_argument("--samples", type=int, default=100, help="Simulated samples.")
    p.add_argument("--bootstrap", type=int, default=500, help="Bootstrap replicates per sample.")
    p.add_argument("--truth-items", type=int, default=200_000, help="Videos the true values are taken on.")
    p.add_argument("--shift", type=float, default=0.0,
                   help="Raise every rating's latent (0.9: heavy ceiling).")
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--best-of-n", action="store_true",
                   help="Measure select best-of-n's summary instead (--per-clip: prompts per clip).")
    args = p.parse_args(argv)
    if args.best_of_n:
        best_of_n_coverage(args)
        return
    rng = np.random.default_rng(args.seed)
    big = draw(args.truth_items // args.per_clip, args.per_clip, rng, args.shift)
    truth = statistics(big["judge"], big["human"])
    held = {s: 0 for s in STATS}
    shown = {s: 0 for s in STATS}
    for r in range(args.samples):
        d = draw(args.clips, args.per_clip, rng, args.shift)
        rep = agreement_table({"judge": {"pa": d["judge"]}}, {"pa": d["human"]}, d["clip"],
                              bootstrap=args.bootstrap, seed=r, rank_stats=False)
        for s in STATS:
            e = rep.cells["judge"]["pa"].stats[s]
            if not math.isnan(e.low):
                shown[s] += 1
                held[s] += int(e.low <= truth[s] <= e.high)
    print(f"{args.clips} clips x {args.per_clip} videos, {args.samples} samples, {args.bootstrap} "
          f"replicates, shift {args.shift:g}: nominal 95% intervals")
    print(f"{'statistic':12s} {'truth':>8s} {'coverage':>9s} {'withheld':>9s}")
    for s in STATS:
        cover = held[s] / shown[s] if shown[s] else math.nan
        print(f"{s:12s} {truth[s]:8.3f} {cover:9.3f} {args.samples - shown[s]:9d}")


if __name__ == "__main__":
    main()
