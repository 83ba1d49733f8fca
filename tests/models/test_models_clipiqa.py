"""OpenAI's CLIP RN50 weights spec, its SHA-256 check, the pkg_resources stand-in and the CLIP-IQA loader."""

import hashlib
import importlib.util
import re
import subprocess
import sys
import types
import urllib.request
from pathlib import Path

import pytest

from robojudge.models import (
    CLIP_RN50_OPENAI,
    MissingWeightsError,
    WeightSpec,
    _status,
    clear,
    fetch_weights,
    get_weights,
    list_weights,
)
from robojudge.models import _clipiqa as cq

RN50_SHA = "afeb0e10f9e5a86da6080e35cf09123aca3b358a0c3e3b6c78a7b63bc04b6762"
# CLIP's image normalisation (OpenAI's clip/clip.py `_transform`), typed in by hand.
CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
CLIP_STD = (0.26862954, 0.26130258, 0.27577711)
# pyiqa 0.1.16's five prompt pairs (positive first), typed in by hand from clipiqa_arch.py.
PAIRS = (("Good image", "bad image"), ("Sharp image", "blurry image"), ("sharp edges", "blurry edges"),
         ("High resolution image", "low resolution image"), ("Noise-free image", "noisy image"))


class _Resp:
    """A urlopen response serving fixed bytes."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def read(self, n: int) -> bytes:
        out, self.data = self.data[:n], self.data[n:]
        return out

    def __enter__(self) -> "_Resp":
        return self

    def __exit__(self, *exc: object) -> None:
        return None


# --- the weights spec and its SHA-256 --------------------------------------------------------------


def test_spec_is_openai_rn50_with_the_sha256_its_url_carries():
    # Read openai-clip's download table from its source (importing clip needs pkg_resources).
    source = Path(importlib.util.find_spec("clip").origin).parent / "clip.py"
    table = dict(re.findall(r'"([\w/@-]+)": "(https://[^"]+)"', source.read_text()))
    spec = get_weights("clip_rn50_openai")
    assert spec is CLIP_RN50_OPENAI and spec in list_weights()
    assert spec.url == table["RN50"] and spec.repo_id is None and spec.filename == "RN50.pt"
    assert spec.sha256 == RN50_SHA == spec.url.split("/")[-2]
    assert spec.metrics == ("aq_clip_iqa",) and spec.source() == spec.url


def test_sha256_must_be_64_lowercase_hex():
    with pytest.raises(ValueError, match="'x': sha256 must be 64 lowercase hex digits, got 'ABC'"):
        WeightSpec(name="x", repo_id=None, revision=None, description="d", library="pyiqa",
                   filename="f.pt", url="https://example.invalid/f.pt", sha256="ABC")


def test_full_sha256_accepts_the_right_bytes_and_rejects_others(tmp_path, monkeypatch):
    payload = b"clip weights"
    digest = hashlib.sha256(payload).hexdigest()
    monkeypatch.setattr(urllib.request, "urlopen", lambda url, timeout: _Resp(payload))
    got = _status._download_url(url="https://example.invalid/RN50.pt", filename="RN50.pt",
                                local_dir=str(tmp_path / "a"), sha256=digest)
    assert Path(got).read_bytes() == payload
    # Same first 8 hex digits is not enough for a full pin: flip the last one.
    wrong = digest[:-1] + ("0" if digest[-1] != "0" else "1")
    with pytest.raises(ValueError, match="the hash its weights spec pins; nothing was saved"):
        _status._download_url(url="https://example.invalid/RN50.pt", filename="RN50.pt",
                              local_dir=str(tmp_path / "b"), sha256=wrong)
    assert not any((tmp_path / "b").iterdir())


def test_fetch_rn50_checks_openai_sha256_and_keeps_nothing_wrong(weights, monkeypatch):
    calls = []

    def fake_urlopen(url, timeout):
        calls.append(url)
        return _Resp(b"not the RN50 checkpoint")

    monkeypatch.setattr(urllib.request, "urlopen", fake_urlopen)
    with pytest.raises(ValueError, match=f"does not start with {RN50_SHA}, the hash its weights spec pins"):
        fetch_weights("clip_rn50_openai")
    assert calls == [CLIP_RN50_OPENAI.url]  # OpenAI's address only, once
    assert not (weights / "clip_rn50_openai").exists()  # a failed fetch leaves no folder behind
    seen = {}
    got = fetch_weights("clip_rn50_openai", download=lambda **kw: seen.update(kw) or "x")
    assert got == Path("x") and seen["sha256"] == RN50_SHA and seen["url"] == CLIP_RN50_OPENAI.url


# --- the pkg_resources stand-in --------------------------------------------------------------------


def test_stand_in_exists_only_inside_the_block(monkeypatch):
    if importlib.util.find_spec("pkg_resources") is not None:
        pytest.skip("a real pkg_resources is installed here")
    import packaging.version

    monkeypatch.delitem(sys.modules, "pkg_resources", raising=False)
    with cq.packaging_as_pkg_resources() as installed:
        from pkg_resources import packaging as got  # what openai-clip's clip.py runs

        assert installed and got is packaging and got.version.parse("1.7.1") < got.version.parse("2.0")
        assert [a for a in vars(sys.modules["pkg_resources"]) if not a.startswith("__")] == ["packaging"]
    assert "pkg_resources" not in sys.modules
    with pytest.raises(RuntimeError, match="boom"), cq.packaging_as_pkg_resources():
        raise RuntimeError("boom")
    assert "pkg_resources" not in sys.modules  # also removed when the import fails


def test_a_real_pkg_resources_is_left_alone(monkeypatch):
    real = types.ModuleType("pkg_resources")
    monkeypatch.setitem(sys.modules, "pkg_resources", real)
    with cq.packaging_as_pkg_resources() as installed:
        assert not installed and sys.modules["pkg_resources"] is real
    assert sys.modules["pkg_resources"] is real


@pytest.mark.slow  # a fresh interpreter importing pyiqa (about 8 s)
def test_importing_clipiqa_leaves_no_pkg_resources_behind():
    code = (
        "import sys\n"
        "from robojudge.models._clipiqa import clipiqa_arch\n"
        "arch = clipiqa_arch()\n"
        "assert hasattr(arch, 'CLIPIQA') and 'clip' in sys.modules, 'clip not imported'\n"
        "assert 'pkg_resources' not in sys.modules, 'stand-in left behind'\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


# --- the loader ------------------------------------------------------------------------------------


def test_missing_file_names_metric_and_file(weights):
    with pytest.raises(MissingWeightsError) as err:
        cq.load_clipiqa(metric="aq_clip_iqa")
    msg = str(err.value)
    assert "metric 'aq_clip_iqa' needs" in msg and "'clip_rn50_openai'" in msg
    assert str(weights / "clip_rn50_openai" / "RN50.pt") in msg and CLIP_RN50_OPENAI.url in msg
    assert "robojudge weights fetch clip_rn50_openai" in msg


@pytest.mark.slow  # imports pyiqa and traces a tiny CLIP
def test_loader_builds_clipiqa_from_the_file_only(weights, monkeypatch):
    import torch
    import torch.nn.functional as F  # noqa: N812
    from _clipiqa_nets import forbid_downloads, save_tiny_rn50

    _, model = save_tiny_rn50(weights)
    forbid_downloads(monkeypatch)
    net = cq.load_clipiqa(metric="aq_clip_iqa", device="cpu")
    assert net.model_type == "clipiqa" and net.pos_embedding is False
    assert cq.load_clipiqa(device="cpu") is net  # cached per (file, device)
    clear()
    assert cq.load_clipiqa(device="cpu") is not net
    clip = cq.clip_network(net)
    assert not clip.training and not any(p.requires_grad for p in clip.parameters())
    # The weights are the file's (pyiqa's build_model rounds conv/linear/projection weights to half
    # precision, as OpenAI's release stores them, then goes back to float on CPU).
    mine = model.state_dict()
    assert set(clip.state_dict()) == set(mine)
    for key, value in clip.state_dict().items():
        assert torch.equal(value, mine[key]) or torch.equal(value, mine[key].half().float()), key

    # CLIP-IQA by hand: p = mean over pairs of softmax(s+, s-)[0], s = exp(logit_scale) * cos(image, text),
    # images normalised with CLIP's mean/std, no positional embedding in the attention pool.
    from robojudge.models._clipiqa import clipiqa_arch

    clipiqa_arch()
    import clip as openai_clip

    x = torch.rand(3, 3, 40, 56, generator=torch.Generator().manual_seed(1))
    with torch.inference_mode():
        got = net(x)
        mean, std = torch.tensor(CLIP_MEAN).view(1, 3, 1, 1), torch.tensor(CLIP_STD).view(1, 3, 1, 1)
        img = F.normalize(clip.encode_image((x - mean) / std, pos_embedding=False), dim=-1)
        txt = F.normalize(clip.encode_text(openai_clip.tokenize([p for pair in PAIRS for p in pair])), dim=-1)
        s = clip.logit_scale.exp() * img @ txt.T
        by_hand = torch.sigmoid(s[:, 0::2] - s[:, 1::2]).mean(dim=1)  # 2-way softmax = sigmoid of the gap
    assert got.shape == (3, 1) and torch.allclose(got[:, 0], by_hand, atol=1e-6)
    assert ((got > 0) & (got < 1)).all()


@pytest.mark.slow  # imports pyiqa
def test_a_state_dict_file_is_refused_by_name(weights, monkeypatch):
    import torch
    from _clipiqa_nets import forbid_downloads, tiny_clip

    path = weights / "clip_rn50_openai" / "RN50.pt"
    path.parent.mkdir()
    torch.save(tiny_clip().state_dict(), path)
    forbid_downloads(monkeypatch)
    with pytest.raises(ValueError, match=f"{re.escape(str(path))} is not a TorchScript CLIP archive"):
        cq.load_clipiqa(device="cpu")
