"""Weights catalogue, presence, fetching (fake download) and missing-weights errors through a run."""

import json
from pathlib import Path

import numpy as np
import pytest

from robojudge.models import (
    WEIGHTS,
    MissingWeightsError,
    WeightSpec,
    fetch_weights,
    get_weights,
    list_weights,
    resolve_weights,
    weights_status,
)
from robojudge.run import score_suite
from robojudge.store import ResultStore
from robojudge.video import write_video

PINNED = {"clip_vit_b32": "openai/clip-vit-base-patch32", "dino_vit_b16": "facebook/dino-vitb16",
          "vjepa2_vitg_ssv2": "facebook/vjepa2-vitg-fpc64-384-ssv2",
          "depth_anything_v2_small": "depth-anything/Depth-Anything-V2-Small-hf",
          "dinov2_vit_b14": "facebook/dinov2-base"}


@pytest.fixture
def offline(tmp_path, monkeypatch):
    """An empty weights folder and an empty hub cache, so nothing on this machine is found."""
    from huggingface_hub import constants

    root = tmp_path / "weights"
    root.mkdir()
    monkeypatch.setenv("ROBOJUDGE_WEIGHTS", str(root))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    return root


def test_catalogue_has_the_pinned_repositories():
    names = {s.name: s for s in list_weights()}
    for name, repo in PINNED.items():
        assert names[name].repo_id == repo and names[name].library == "transformers"
    with pytest.raises(KeyError, match="unknown weights 'clip'.*clip_vit_b32"):
        get_weights("clip")


def test_status_reports_missing_then_present(offline):
    st = {s.spec.name: s for s in weights_status()}
    assert not st["clip_vit_b32"].present and st["clip_vit_b32"].describe()["path"] is None
    (offline / "clip_vit_b32").mkdir()
    assert not weights_status(["clip_vit_b32"])[0].present  # an empty folder is not weights
    (offline / "clip_vit_b32" / "config.json").write_text("{}")
    assert weights_status(["clip_vit_b32"])[0].state == "incomplete"  # a config without its weights
    (offline / "clip_vit_b32" / "model.safetensors").write_bytes(b"x")
    (s,) = weights_status(["clip_vit_b32"])
    assert s.present and s.describe()["path"] == str(offline / "clip_vit_b32")
    assert json.loads(json.dumps(s.describe()))["pinned"] is False


def test_missing_error_names_metric_file_and_remedy(offline):
    with pytest.raises(MissingWeightsError) as err:
        resolve_weights("dino_vit_b16", metric="dino_frame_consistency")
    msg = str(err.value)
    assert "metric 'dino_frame_consistency' needs" in msg and "facebook/dino-vitb16" in msg
    assert str(offline / "dino_vit_b16") in msg and "robojudge weights fetch dino_vit_b16" in msg


def test_fetch_uses_the_hub_client_with_the_spec(offline):
    calls = []

    def fake_download(**kw):
        calls.append(kw)
        (Path(kw["local_dir"]) / "config.json").write_text("{}")
        return kw["local_dir"]

    path = fetch_weights("clip_vit_b32", download=fake_download)
    assert path == offline / "clip_vit_b32" and (path / "config.json").is_file()
    (call,) = calls
    assert call["repo_id"] == "openai/clip-vit-base-patch32" and call["revision"] is None
    # downloaded beside the destination, then moved into it; the temporary folder is gone
    assert Path(call["local_dir"]).parent == offline and not Path(call["local_dir"]).exists()
    assert sorted(p.name for p in offline.iterdir()) == ["clip_vit_b32"]


def test_fetch_single_file_and_errors(offline, monkeypatch, tmp_path, toy_weights):
    spec = WeightSpec(name="toy_head", repo_id="me/head", revision="abc", description="d", library="torch",
                      filename="head.pth")
    toy_weights(spec)
    got = fetch_weights("toy_head", dest=tmp_path / "x",
                        download=lambda **kw: f"{kw['local_dir']}/{kw['filename']}@{kw['revision']}")
    assert str(got).endswith("x/head.pth@abc")
    monkeypatch.delenv("ROBOJUDGE_WEIGHTS")
    with pytest.raises(ValueError, match="ROBOJUDGE_WEIGHTS"):
        fetch_weights("toy_head", download=lambda **kw: "")


@pytest.mark.slow
def test_missing_weights_become_error_rows_in_a_run(offline, tmp_path):
    frames = np.random.default_rng(0).integers(0, 255, (4, 24, 32, 3), dtype=np.uint8)
    write_video(tmp_path / "v.mp4", frames, fps=8)
    row = {"item_id": "i0", "video": "v.mp4", "reference_video": "v.mp4"}
    (tmp_path / "m.jsonl").write_text(json.dumps(row))
    run = score_suite(tmp_path / "m.jsonl", ["clip_frame_consistency", "vjepa_paired_similarity",
                                             "vjepa_manifold_similarity", "pixel_frame_consistency"],
                      db=f"sqlite:///{tmp_path / 'r.sqlite'}", progress=None)
    with ResultStore(run.db_url) as store:
        rows = {r.metric: r for r in store.rows()}
    assert rows["pixel_frame_consistency"].status == "ok"
    clip = rows["clip_frame_consistency"]
    assert clip.status == "error" and "metric 'clip_frame_consistency' needs" in clip.error
    assert "robojudge weights fetch clip_vit_b32" in clip.error
    assert "robojudge weights fetch vjepa2_vitg_ssv2" in rows["vjepa_paired_similarity"].error
    assert "set-level metric" in rows["vjepa_manifold_similarity"].error


def test_all_skips_model_metrics_without_weights(offline):
    from robojudge.metrics import expand_metric_ids, not_run_summary

    ids = expand_metric_ids(["all"])
    assert "clip_frame_consistency" not in ids and "pixel_frame_consistency" in ids
    lines = not_run_summary()
    metrics = next(line for line in lines if line.startswith("  need weights: "))
    assert {"clip_frame_consistency", "cc_subject"} <= set(metrics.split(": ", 1)[1].split(", "))
    networks = next(line for line in lines if line.startswith("  missing weights ("))
    assert {"clip_vit_b32", "dinov2_vit_b14"} <= set(networks.split("): ", 1)[1].split(", "))
    assert len(lines) < 10  # a line per metric kind, not per metric


def test_url_only_weights_are_fetched_from_their_address_and_hash_checked(offline, monkeypatch, tmp_path):
    import hashlib

    from robojudge.models import WeightSpec, _status

    payload = b"checkpoint bytes"
    prefix = hashlib.sha256(payload).hexdigest()[:8]
    good = WeightSpec(name="tv_demo", repo_id=None, revision=None, description="demo", library="torchvision",
                      filename=f"net-{prefix}.pth", url=f"https://example.invalid/net-{prefix}.pth")
    assert good.source() == good.url
    assert _status.expected_sha256_prefix(good.filename) == prefix

    class Resp:
        def __init__(self, data: bytes) -> None:
            self.data = data

        def read(self, n: int) -> bytes:
            out, self.data = self.data[:n], self.data[n:]
            return out

        def __enter__(self) -> "Resp":
            return self

        def __exit__(self, *exc: object) -> None:
            return None

    import urllib.request

    monkeypatch.setattr(urllib.request, "urlopen", lambda url, timeout: Resp(payload))
    got = _status._download_url(url=good.url, filename=good.filename, local_dir=str(tmp_path / "a"))
    assert Path(got).read_bytes() == payload
    # a file whose bytes do not match the hash in its name is refused and not kept
    monkeypatch.setattr(urllib.request, "urlopen", lambda url, timeout: Resp(b"tampered"))
    with pytest.raises(ValueError, match="does not start with"):
        _status._download_url(url=good.url, filename=good.filename, local_dir=str(tmp_path / "b"))
    assert not any((tmp_path / "b").iterdir())
    with pytest.raises(ValueError, match="repo_id, or a url"):
        WeightSpec(name="x", repo_id=None, revision=None, description="d", library="torchvision")


def test_fetch_checks_the_hash_a_hub_file_name_carries(offline, monkeypatch, tmp_path, toy_weights):
    import hashlib

    payload = b"not the published checkpoint"
    good = hashlib.sha256(payload).hexdigest()[:8]
    for prefix, ok in ((good, True), ("0badf00d", False)):
        name = f"net-{prefix}.pth"
        spec = WeightSpec(name="toy", repo_id="me/nets", revision=None, description="d", library="torch",
                          filename=name)
        assert spec.pinning() == "hash prefix in file name"
        toy_weights(spec)

        def fake(**kw):
            path = Path(kw["local_dir"]) / kw["filename"]
            path.write_bytes(payload)
            return str(path)

        dest = tmp_path / prefix
        if ok:
            assert fetch_weights("toy", dest=dest, download=fake).read_bytes() == payload
        else:
            with pytest.raises(ValueError, match="does not start with 0badf00d"):
                fetch_weights("toy", dest=dest, download=fake)
            assert not (dest / name).exists()  # nothing unchecked is left behind


def test_registry_files_a_spec_only_under_its_own_name():
    spec = WeightSpec(name="toy_named", repo_id="me/x", revision=None, description="d", library="torch")
    with pytest.raises(ValueError, match="named 'toy_named'"):
        WEIGHTS.add("other_name", spec)
    assert "other_name" not in WEIGHTS.names()
    # A lazy entry (as a plugin's entry point gives) is checked when it is first looked up.
    WEIGHTS.add("not_a_spec", "robojudge.models:WEIGHTS_ENV")
    try:
        with pytest.raises(TypeError, match="expected a WeightSpec, got str"):
            get_weights("not_a_spec")
    finally:
        WEIGHTS.remove("not_a_spec")
