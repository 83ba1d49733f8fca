"""``robojudge weights list|status|fetch`` and ``robojudge metrics sets`` (in-process)."""

import json
import re
from pathlib import Path

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
    (offline / "dino_vit_b16" / "model.safetensors").write_bytes(b"x")
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
    assert [(c["repo_id"], c["revision"]) for c in calls] == [("facebook/dino-vitb16", None)]
    assert (offline / "dino_vit_b16").is_dir()  # filled from a temporary folder beside it
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
    # every group failed: exit status 1, as `score` (it was 0 with "2 computed")
    assert res.exit_code == 1, res.output
    assert "2 of 2 rows are errors" in res.output and "nothing was measured" in res.output
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


def test_weights_fetch_offline_is_one_error_line_and_leaves_nothing(offline, monkeypatch):
    import urllib.error
    import urllib.request

    def down(url, timeout):
        raise urllib.error.URLError(OSError(-2, "Name or service not known"))

    monkeypatch.setattr(urllib.request, "urlopen", down)
    res = invoke("weights", "fetch", "raft_things")
    assert res.exit_code == 2 and "Traceback" not in res.output
    (line,) = [x for x in res.output.splitlines() if x.strip()]
    assert line.startswith("error: cannot reach download.pytorch.org")
    assert "copy the folder it fills, $ROBOJUDGE_WEIGHTS/raft_things" in line
    assert list(offline.iterdir()) == []
    refused = invoke("weights", "fetch", "frame_interpolation")
    assert refused.exit_code == 2 and "export a TorchScript file to $ROBOJUDGE_WEIGHTS/frame_interpolation/" \
        "frame_interpolation.pt" in refused.output


def test_weights_fetch_dest_and_the_unset_message(offline, monkeypatch, tmp_path):
    import huggingface_hub

    def fake(**kw):
        (Path(kw["local_dir"]) / "config.json").write_text("{}")
        return kw["local_dir"]

    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake)
    res = invoke("weights", "fetch", "dino_vit_b16", "--dest", str(tmp_path / "carry" / "dino"))
    assert res.exit_code == 0, res.output
    assert (tmp_path / "carry" / "dino" / "config.json").is_file()
    monkeypatch.delenv("ROBOJUDGE_WEIGHTS")
    unset = invoke("weights", "fetch", "dino_vit_b16")
    assert unset.exit_code == 2 and "--dest FOLDER" in unset.output
    assert "pass a destination" not in unset.output


def test_weights_status_table_names_incomplete_and_corrupt_files(offline):
    (offline / "clip_vit_b32").mkdir()
    (offline / "clip_vit_b32" / "config.json").write_text("{}")
    (offline / "raft_things").mkdir()
    (offline / "raft_things" / "raft_large_C_T_V1-22a6c225.pth").write_bytes(b"junk")
    rows = {r["name"]: r for r in json.loads(invoke("weights", "status", "--json").output)}
    assert rows["clip_vit_b32"]["state"] == "incomplete" and rows["clip_vit_b32"]["present"] is False
    assert "no model.safetensors" in rows["clip_vit_b32"]["problem"]
    assert rows["raft_things"]["state"] == "corrupt" and "22a6c225" in rows["raft_things"]["problem"]
    table = invoke("weights", "status").output
    clip = next(x for x in table.splitlines() if x.startswith("│ clip_vit_b32"))
    assert "incomplete" in clip and "present" not in clip
    assert "corrupt" in next(x for x in table.splitlines() if x.startswith("│ raft_things"))


def test_metrics_sets_all_says_what_it_left_out_and_fails_with_nothing_to_run(offline, tmp_path):
    (tmp_path / "v.mp4").write_bytes(b"x")
    m = tmp_path / "m.jsonl"
    m.write_text(json.dumps({"item_id": "a", "video": "v.mp4", "generator": "g"}) + "\n")
    res = invoke("metrics", "sets", str(m), "--metrics", "all", "--run-dir", str(tmp_path / "run"))
    # before: an empty table and "0 groups: 0 computed", exit status 0, and no word of why
    assert res.exit_code == 2, res.output
    assert re.search(r"all: \d+ set-level metrics not run: \d+ need weights missing here", res.stderr)
    assert "iq1_fvd" in res.stderr and "i3d_torchscript" in res.stderr
    assert "--metrics all: no set-level metric can run here" in res.stderr
    assert res.stdout == "" and not (tmp_path / "run").exists()
