"""``robojudge weights list|status|fetch`` and ``robojudge metrics sets`` (in-process)."""

import json

import pytest
from typer.testing import CliRunner

from robojudge.cli import build_app


@pytest.fixture
def offline(tmp_path, monkeypatch):
    from huggingface_hub import constants

    root = tmp_path / "weights"
    root.mkdir()
    monkeypatch.setenv("ROBOJUDGE_WEIGHTS", str(root))
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    return root


def invoke(*args):
    res = CliRunner().invoke(build_app(args[0]), list(args))
    return res


def test_weights_list_json_names_metrics(offline):
    res = invoke("weights", "list", "--json")
    assert res.exit_code == 0, res.output
    rows = {r["name"]: r for r in json.loads(res.output)}
    clip = rows["clip_vit_b32"]
    assert clip["repo_id"] == "openai/clip-vit-base-patch32" and clip["library"] == "transformers"
    assert {"clip_frame_consistency", "cc_background", "cc_subject"} <= set(clip["metrics"])
    vjepa = {"vjepa_paired_similarity", "vjepa_manifold_similarity", "ds_jepa_similarity"}
    assert set(rows["vjepa2_vitg_ssv2"]["metrics"]) >= vjepa
    table = invoke("weights", "list")
    assert table.exit_code == 0 and "dino_vit_b16" in table.output
    assert "dino_frame_consistency" in table.output


def test_weights_status_json_and_table(offline):
    (offline / "dino_vit_b16").mkdir()
    (offline / "dino_vit_b16" / "config.json").write_text("{}")
    res = invoke("weights", "status", "--json")
    assert res.exit_code == 0, res.output
    rows = {r["name"]: r for r in json.loads(res.output)}
    assert rows["dino_vit_b16"]["present"] and rows["dino_vit_b16"]["path"] == str(offline / "dino_vit_b16")
    assert rows["clip_vit_b32"]["present"] is False and rows["clip_vit_b32"]["path"] is None
    table = invoke("weights", "status")
    assert "present" in table.output and "missing" in table.output
    assert "robojudge weights fetch clip_vit_b32" in table.output


def test_weights_fetch_calls_the_hub_client(offline, monkeypatch):
    import huggingface_hub

    calls = []
    fake = lambda **kw: calls.append(kw) or kw["local_dir"]  # noqa: E731
    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake)
    res = invoke("weights", "fetch", "dino_vit_b16")
    assert res.exit_code == 0, res.output
    assert calls == [{"repo_id": "facebook/dino-vitb16", "revision": None,
                      "local_dir": str(offline / "dino_vit_b16")}]
    bad = invoke("weights", "fetch", "dino")
    assert bad.exit_code == 2 and "unknown weights 'dino'" in bad.output


def test_metrics_sets_reports_missing_weights_per_group(offline, tmp_path):
    rows = [{"item_id": f"i{k}", "video": "v.mp4", "reference_video": f"r{k}.mp4", "generator": g}
            for k, g in enumerate(["a", "a", "b"])]
    (tmp_path / "v.mp4").write_bytes(b"x")  # never decoded: the weights are missing first
    for k in range(3):
        (tmp_path / f"r{k}.mp4").write_bytes(b"x")
    m = tmp_path / "m.jsonl"
    m.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "sets.csv"
    res = invoke("metrics", "sets", str(m), "--metrics", "ds_jepa_similarity", "--by", "generator",
                 "--out", str(out), "--run-dir", str(tmp_path / "run"))
    assert res.exit_code == 0, res.output
    lines = out.read_text().splitlines()
    assert lines[0].startswith("metric,group,item_id,status,value,error")
    assert len(lines) == 3  # groups a and b
    assert "needs at least 2 items per group, group 'b' has 1" in lines[2]
    assert "robojudge weights fetch vjepa2_vitg_ssv2" in lines[1]
    bad = invoke("metrics", "sets", str(m), "--metrics", "pixel_frame_consistency")
    assert bad.exit_code == 2 and "per-item metric" in bad.output


def test_weights_and_metrics_lists_say_what_is_pinned_and_unverified(offline):
    rows = {r["name"]: r for r in json.loads(invoke("weights", "list", "--json").output)}
    # Ports and key mappings of robojudge's own, never run on the published file (issue 12, item 15).
    for name in ("hpsv3", "viclip_l14_internvid", "da3_base", "clip_rn50_openai"):
        assert rows[name]["unverified"] is True, name
    assert rows["clip_vit_b32"]["unverified"] is False  # transformers' own loader of the repository
    assert rows["clip_rn50_openai"]["pinning"] == "sha256" and rows["clip_rn50_openai"]["pinned"]
    assert rows["raft_things"]["pinning"] == "hash prefix in file name"
    assert rows["clip_vit_b32"]["pinning"] == "not pinned" and rows["clip_vit_b32"]["pinned"] is False
    table = invoke("weights", "list").output
    assert "unverified" in table and "not pinned" in table and "sha256" in table

    metrics = {m["id"]: m for m in json.loads(invoke("metrics", "list", "--json").output)}
    assert "hpsv3" in metrics["aq_hpsv3"]["weights_unverified"]
    assert metrics["cc_semantics"]["weights_unverified"] == ["viclip_l14_internvid"]
    assert metrics["clip_frame_consistency"]["weights_unverified"] == []
    assert metrics["pixel_frame_consistency"]["weights_unverified"] == []
    listing = invoke("metrics", "list").output
    line = next(x for x in listing.splitlines() if "aq_hpsv3" in x)
    assert "unverified" in line
    assert "unverified" not in next(x for x in listing.splitlines() if "clip_frame_consistency" in x)
