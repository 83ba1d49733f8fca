"""A failed fetch leaves nothing behind and says what to do; status and loaders check the files they find.

Nothing here reaches a network: every download function is a fake that writes files or raises what the
real one raises offline.
"""

import hashlib
import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from robojudge.models import (
    FRAME_INTERPOLATION,
    WEIGHTS,
    MissingWeightsError,
    UnusableWeightsError,
    WeightsFetchError,
    WeightSpec,
    fetch_weights,
    load_raft_things,
    resolve_weights,
    weights_path,
    weights_status,
)


def _offline_urlopen(url, timeout):
    raise urllib.error.URLError(OSError(-2, "Name or service not known"))


def test_failed_url_fetch_names_the_host_and_leaves_no_folder(weights, monkeypatch):
    monkeypatch.setattr(urllib.request, "urlopen", _offline_urlopen)
    with pytest.raises(WeightsFetchError) as err:
        fetch_weights("raft_things")
    msg = str(err.value)
    assert msg.startswith("cannot reach download.pytorch.org (") and "\n" not in msg
    assert "on a connected machine" in msg and "$ROBOJUDGE_WEIGHTS/raft_things" in msg
    assert str(weights / "raft_things") in msg
    assert list(weights.iterdir()) == []  # no empty raft_things/, no temporary folder


def test_failed_hub_fetch_names_the_host_and_leaves_no_folder(weights, monkeypatch):
    from huggingface_hub.errors import LocalEntryNotFoundError

    from robojudge.models import _status

    # huggingface_hub reads HF_HUB_OFFLINE once, when it is first imported: set what it read here
    monkeypatch.setattr(_status, "_hub_offline", lambda: True)

    def offline(**kw):
        cache = Path(kw["local_dir"]) / ".cache" / "huggingface" / "download"
        cache.mkdir(parents=True)
        (cache / "x.lock").write_text("")  # what the real client leaves before it fails
        raise LocalEntryNotFoundError("Cannot find an appropriate cached snapshot folder")

    with pytest.raises(WeightsFetchError, match=r"^cannot reach huggingface\.co \(HF_HUB_OFFLINE is set\): "
                       r"run `robojudge weights fetch clip_vit_b32` on a connected machine"):
        fetch_weights("clip_vit_b32", download=offline)
    assert list(weights.iterdir()) == []
    monkeypatch.setattr(_status, "_hub_offline", lambda: False)
    with pytest.raises(WeightsFetchError, match=r"^cannot reach huggingface\.co \(no connection\): "):
        fetch_weights("clip_vit_b32", download=offline)


def test_failed_fetch_keeps_what_was_there_and_removes_only_folders_it_made(weights, tmp_path):
    old = weights / "clip_vit_b32"
    old.mkdir()
    (old / "config.json").write_text("{}")

    def broken(**kw):
        (Path(kw["local_dir"]) / "model.safetensors").write_bytes(b"half")
        raise ConnectionError("reset by peer")

    with pytest.raises(WeightsFetchError, match="cannot reach huggingface.co"):
        fetch_weights("clip_vit_b32", download=broken)
    assert sorted(p.name for p in old.iterdir()) == ["config.json"]
    deep = tmp_path / "new" / "deeper" / "clip"
    with pytest.raises(WeightsFetchError):
        fetch_weights("clip_vit_b32", dest=deep, download=broken)
    assert not (tmp_path / "new").exists()


def test_fetch_merges_the_download_into_an_existing_folder(weights):
    old = weights / "clip_vit_b32"
    old.mkdir()
    (old / "config.json").write_text("old")
    (old / "notes.txt").write_text("mine")

    def fake(**kw):
        folder = Path(kw["local_dir"])
        (folder / "config.json").write_text("new")
        (folder / "model.safetensors").write_bytes(b"w")
        return str(folder)

    assert fetch_weights("clip_vit_b32", download=fake) == old
    assert (old / "config.json").read_text() == "new" and (old / "notes.txt").read_text() == "mine"
    assert weights_path(WEIGHTS.get("clip_vit_b32")) == old
    assert sorted(p.name for p in weights.iterdir()) == ["clip_vit_b32"]


def test_fetch_of_a_single_file_returns_its_final_place(weights, toy_weights):
    toy_weights(WeightSpec(name="toy_head", repo_id="me/head", revision="abc", description="d",
                           library="torch", filename="sub/head.pth"))

    def fake(**kw):
        path = Path(kw["local_dir"]) / kw["filename"]
        path.parent.mkdir(parents=True)
        path.write_bytes(b"w")
        return str(path)

    got = fetch_weights("toy_head", download=fake)
    assert got == weights / "toy_head" / "sub" / "head.pth" and got.read_bytes() == b"w"


def test_frame_interpolation_cannot_be_fetched_and_every_message_says_how_to_make_it(weights):
    calls = []
    with pytest.raises(WeightsFetchError) as err:
        fetch_weights("frame_interpolation", download=lambda **kw: calls.append(kw) or "")
    want = "export a TorchScript file to $ROBOJUDGE_WEIGHTS/frame_interpolation/frame_interpolation.pt"
    assert want in str(err.value) and "cannot download 'frame_interpolation'" in str(err.value)
    assert calls == [] and list(weights.iterdir()) == []  # never tried the hub, made no folder
    assert FRAME_INTERPOLATION.repo_id is None and "lalala125/AMT/frame_interpolation.pt" not in (
        FRAME_INTERPOLATION.source())
    with pytest.raises(MissingWeightsError) as missing:
        resolve_weights("frame_interpolation", metric="mq_motion_smoothness")
    assert want in str(missing.value)
    assert "robojudge weights fetch frame_interpolation" not in str(missing.value)
    (row,) = [s.describe() for s in weights_status(["frame_interpolation"])]
    assert row["state"] == "missing" and want in row["remedy"] and want in row["manual"]


def test_status_says_incomplete_with_the_missing_file(weights):
    folder = weights / "clip_vit_b32"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    (st,) = weights_status(["clip_vit_b32"])
    assert st.state == "incomplete" and not st.present and st.path == folder
    assert "no model.safetensors" in (st.problem or "")
    assert weights_path(st.spec) is None  # `--metrics all` leaves its metrics out
    with pytest.raises(UnusableWeightsError) as err:
        resolve_weights("clip_vit_b32", metric="clip_frame_consistency")
    msg = str(err.value)
    assert "'clip_vit_b32'" in msg and str(folder) in msg and "no model.safetensors" in msg
    assert "robojudge weights fetch clip_vit_b32" in msg and "metric 'clip_frame_consistency'" in msg
    # a sharded checkpoint whose index names a shard that is not there
    (folder / "model.safetensors.index.json").write_text(json.dumps(
        {"weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}}))
    (folder / "model-00001-of-00002.safetensors").write_bytes(b"x")
    (st,) = weights_status(["clip_vit_b32"])
    assert st.state == "incomplete" and "model-00002-of-00002.safetensors" in (st.problem or "")
    (folder / "model-00002-of-00002.safetensors").write_bytes(b"x")
    assert weights_status(["clip_vit_b32"])[0].state == "present"


def test_status_says_corrupt_when_a_pinned_hash_does_not_match(weights):
    folder = weights / "raft_things"
    folder.mkdir()
    path = folder / "raft_large_C_T_V1-22a6c225.pth"
    path.write_bytes(b"")
    assert weights_status(["raft_things"])[0].state == "incomplete"  # an empty file
    path.write_bytes(b"not RAFT")
    (st,) = weights_status(["raft_things"])
    assert st.state == "corrupt" and "22a6c225" in (st.problem or "")
    assert hashlib.sha256(b"not RAFT").hexdigest()[:16] in (st.problem or "")
    assert weights_status(["raft_things"], hashes=False)[0].present  # the hash is read only when asked


def test_a_checkpoint_the_loader_cannot_read_names_weights_file_and_remedy(weights):
    pytest.importorskip("torchvision")
    folder = weights / "raft_things"
    folder.mkdir()
    path = folder / "raft_large_C_T_V1-22a6c225.pth"
    path.write_bytes(b"\x80\x02junk that is not a checkpoint")
    with pytest.raises(UnusableWeightsError) as err:
        load_raft_things(metric="flow_motion_magnitude_raft", device="cpu")
    msg = str(err.value)
    assert "'raft_things'" in msg and str(path) in msg and "loading failed (" in msg
    assert "not 22a6c225 as its name pins" in msg and "robojudge weights fetch raft_things" in msg
    assert isinstance(err.value, ValueError)  # what callers caught for a bad checkpoint before


def test_a_checkpoint_under_its_other_name_counts_as_present(weights):
    # VGGT's loader reads model.safetensors as well as model.pt: a folder holding only the former
    # was reported missing, and `-m all` left the RIGIS metrics out.
    folder = weights / "vggt_1b"
    folder.mkdir()
    assert weights_path(WEIGHTS.get("vggt_1b")) is None
    (folder / "model.safetensors").write_bytes(b"\0" * 16)
    assert weights_path(WEIGHTS.get("vggt_1b")) == folder / "model.safetensors"
    assert resolve_weights("vggt_1b") == folder / "model.safetensors"
    (folder / "model.pt").write_bytes(b"\0" * 16)
    assert weights_path(WEIGHTS.get("vggt_1b")) == folder / "model.pt"  # the spec's own name first
