"""Registered transformers metrics end to end on tiny random networks saved to a weights folder.

The networks are built from configs (hidden size 32, 2 layers, 32-pixel images) and saved with
``save_pretrained``; ``ROBOJUDGE_WEIGHTS`` points at them and the hub is offline.
"""

import json

import numpy as np
import pytest
from _learned_hf_nets import save_all

from robojudge.metrics import get_metric
from robojudge.metrics._sets import score_sets
from robojudge.metrics.learned.hf_consistency import FrameSampling, prev_first_consistency
from robojudge.metrics.learned.hf_vjepa import VJepaClip, clip_frames, mahalanobis_distances
from robojudge.models import (
    clear,
    clip_image_features,
    load_clip,
    load_vjepa2,
    vjepa2_video_embedding,
)
from robojudge.suite import Item
from robojudge.video import sample_frames, write_video

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def weights(tmp_path_factory):
    root = save_all(tmp_path_factory.mktemp("weights"))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ROBOJUDGE_WEIGHTS", str(root))
        mp.setenv("HF_HUB_OFFLINE", "1")
        clear()
        yield root
    clear()


@pytest.fixture(scope="module")
def videos(tmp_path_factory):
    d = tmp_path_factory.mktemp("videos")
    rng = np.random.default_rng(0)
    still = np.repeat(rng.integers(0, 255, (1, 48, 64, 3), dtype=np.uint8), 10, axis=0)
    moving = rng.integers(0, 255, (10, 48, 64, 3), dtype=np.uint8)
    other = np.repeat(rng.integers(0, 255, (1, 48, 64, 3), dtype=np.uint8), 10, axis=0)
    # a folder of PNG frames decodes losslessly, so identical frames stay identical
    return {name: str(write_video(d / name, arr, fps=8)) for name, arr in
            {"still": still, "moving": moving, "other": other}.items()}


CONSISTENCY = ["clip_frame_consistency", "dino_frame_consistency", "cc_background", "cc_subject"]


@pytest.mark.parametrize("mid", CONSISTENCY)
def test_a_still_video_is_unscored_not_perfectly_consistent(weights, videos, mid):
    # Identical frames have similarity 1 (test_learned_hf_formulas): a frozen video would rate best.
    score = get_metric(mid).compute(Item(item_id="s", video=videos["still"]))
    assert not score.scored and "is still" in score.details["unscored_reason"]


def test_clip_consistency_is_the_formula_on_clip_features(weights, videos):
    item = Item(item_id="m", video=videos["moving"])
    score = get_metric("clip_frame_consistency").compute(item)
    frames = sample_frames(videos["moving"], fps=8.0, max_frames=None).frames
    want = prev_first_consistency(clip_image_features(load_clip(), frames))[0]
    assert score.value == pytest.approx(want, abs=1e-9)
    assert 0.0 <= score.value < 1.0 and score.details["frames"] == 10
    assert load_clip() is load_clip()  # one network per process


def test_vjepa_paired_similarity(weights, videos):
    spec = get_metric("vjepa_paired_similarity")
    same = spec.compute(Item(item_id="p", video=videos["moving"], reference_video=videos["moving"]))
    assert same.value == pytest.approx(1.0, abs=1e-9) and same.details["mse"] == 0.0
    diff = spec.compute(Item(item_id="q", video=videos["moving"], reference_video=videos["still"]))
    assert diff.value < 1.0 - 1e-6 and diff.details["mse"] > 0


def test_vjepa_paired_similarity_decodes_a_shared_reference_once(weights, videos, tmp_path, monkeypatch):
    from robojudge.metrics.learned import hf_vjepa

    def copy(name):  # a fresh file: no embedding or span cached by another test is found for it
        frames = sample_frames(videos[name], fps=None, max_frames=None).frames
        return str(write_video(tmp_path / name, frames))

    ref, gens = copy("moving"), [copy("still"), copy("other")]
    decoded: list[str] = []
    real = hf_vjepa.sample_frames

    def counted(path, *args, **kwargs):
        decoded.append(str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(hf_vjepa, "sample_frames", counted)
    spec = get_metric("vjepa_paired_similarity")
    # Called without a frame cache, as a script would: every sampling is a decode.
    scores = [spec.compute(Item(item_id=f"i{k}", video=g, reference_video=ref)) for k, g in enumerate(gens)]
    assert decoded.count(ref) == 1  # the span check used to decode it per item, and embed once more
    assert [decoded.count(g) for g in gens] == [1, 1]  # span check and embedding share one decode
    net, cfg = load_vjepa2(), VJepaClip()
    want = [vjepa2_video_embedding(net, clip_frames(p, cfg)) for p in (*gens, ref)]
    for s, z in zip(scores, want[:2], strict=True):
        cos = float(z @ want[2] / (np.linalg.norm(z) * np.linalg.norm(want[2])))
        assert s.value == pytest.approx(cos, abs=1e-9)
        assert s.details["seconds"] == s.details["reference_seconds"]


def test_manifold_distance_over_distinct_references(weights, videos):
    its = [Item(item_id="a", video=videos["moving"], reference_video=videos["still"], generator="g"),
           Item(item_id="b", video=videos["still"], reference_video=videos["still"], generator="g"),
           Item(item_id="c", video=videos["other"], reference_video=videos["other"], generator="h")]
    rows = score_sets(its, ["vjepa_manifold_similarity"], by="generator")
    got = {r.item_id: r for r in rows}
    assert all(r.status == "ok" for r in rows) and got["a"].details["references"] == 2
    net, cfg = load_vjepa2(), VJepaClip()
    emb = {k: vjepa2_video_embedding(net, clip_frames(v, cfg)) for k, v in videos.items()}
    ref = np.stack([emb["still"], emb["other"]])  # "still" counted once although two items use it
    for iid, key in [("a", "moving"), ("b", "still"), ("c", "other")]:
        assert got[iid].value == pytest.approx(mahalanobis_distances(emb[key], ref)[0], rel=1e-9)


def test_jepa_similarity_is_one_when_generated_equal_references(weights, videos):
    its = [Item(item_id=k, video=v, reference_video=v, generator="g") for k, v in videos.items()]
    (row,) = score_sets(its, ["ds_jepa_similarity"], by="generator")
    assert row.status == "ok" and row.value == 1.0 and row.n_references == 3 and "saturates" in row.warning
    shifted = [it.model_copy(update={"video": videos["moving"]}) for it in its]
    (row2,) = score_sets(shifted, ["ds_jepa_similarity"], by="generator")
    assert row2.value < 1.0 and row2.warning is None and row2.details["mmd2"] > 0


def test_the_jepa_set_metrics_warn_when_clips_and_references_last_differently(weights, videos, tmp_path):
    # 5-frame clips of the 10-frame references: each embedded from 16 frames spread over its own length.
    clips = {k: str(write_video(tmp_path / k, sample_frames(v, fps=None, max_frames=None).frames[:5], fps=8))
             for k, v in videos.items()}
    its = [Item(item_id=k, video=clips[k], reference_video=v, generator="g") for k, v in videos.items()]
    for mid in ("ds_jepa_similarity", "vjepa_manifold_similarity"):
        rows = score_sets(its, [mid], by="generator")
        assert rows and all(r.status == "ok" and "the generated videos last 0.62 s (median) and the "
                            "references 1.25 s" in (r.warning or "") for r in rows), mid
    same = score_sets([it.model_copy(update={"video": it.reference_video}) for it in its],
                      ["vjepa_manifold_similarity"], by="generator")
    assert all("the generated videos last" not in (r.warning or "") for r in same)


def test_depth_accuracy(weights, videos):
    spec = get_metric("dc_depth_accuracy")
    same = spec.compute(Item(item_id="d", video=videos["moving"], reference_video=videos["moving"]))
    assert same.value == pytest.approx(0.0, abs=1e-9)
    diff = spec.compute(Item(item_id="e", video=videos["moving"], reference_video=videos["other"]))
    assert diff.value >= 0.0 and diff.details["frames"] >= 2


def test_all_includes_model_metrics_whose_weights_are_present(weights):
    from robojudge.metrics import expand_metric_ids, not_run_summary

    ids = expand_metric_ids(["all"])
    assert {*CONSISTENCY, "dc_depth_accuracy", "vjepa_paired_similarity"} <= set(ids)
    assert "vjepa_manifold_similarity" not in ids  # set-level
    assert not any("clip_vit_b32" in line or "clip_frame_consistency" in line for line in not_run_summary())


def test_config_changes_sampling(weights, videos):
    cfg = FrameSampling(fps=None, max_frames=3)
    score = get_metric("clip_frame_consistency").compute(Item(item_id="m", video=videos["moving"]), cfg)
    assert score.details["frames"] == 3
    assert json.loads(json.dumps(score.details))["frames"] == 3
