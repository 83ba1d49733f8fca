"""Several readers trained alike (seeds seed, seed + 1, ...) and read as one (``TrainConfig.members``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

torch = pytest.importorskip("torch")

from _kiva_consts import TINY  # noqa: E402

from robojudge.kiva import TrainConfig, load_reader, read_frames, train_reader  # noqa: E402
from robojudge.kiva._infer import predict, predict_confident  # noqa: E402
from robojudge.kiva._net import KeypointReader, ReaderEnsemble, build_reader  # noqa: E402


def _members(n: int, seed: int = 0) -> list[KeypointReader]:
    torch.manual_seed(seed)
    return [KeypointReader(5, 3, 8).eval() for _ in range(n)]


def test_an_ensemble_averages_positions_and_visibility_probabilities():
    members = _members(3)
    ens = ReaderEnsemble(members).eval()
    assert ens.keypoints == 5 and ens.stride == 4
    x = torch.rand(4, 9, 32, 32)
    with torch.no_grad():
        reads = [m(x) for m in members]
        pos, logit = ens(x)
    expected_pos = (reads[0][0] + reads[1][0] + reads[2][0]) / 3
    expected_prob = sum(torch.sigmoid(v) for _, v in reads) / 3
    assert torch.allclose(pos, expected_pos, atol=1e-5)
    assert torch.allclose(torch.sigmoid(logit), expected_prob, atol=1e-5)
    # The members differ (else averaging would prove nothing here).
    assert not torch.allclose(reads[0][0], reads[1][0], atol=1e-3)
    # predict() with its five candidates reads an ensemble as the mean of what it reads with each member.
    frames = np.random.default_rng(0).integers(0, 255, (6, 32, 32, 3), dtype=np.uint8)
    p_ens, v_ens = predict(ens, frames, 3)
    each = [predict(m, frames, 3) for m in members]
    np.testing.assert_allclose(p_ens, np.mean([p for p, _ in each], axis=0), atol=1e-4)
    np.testing.assert_allclose(v_ens, np.mean([v for _, v in each], axis=0), atol=1e-5)
    # Its confidence is the members' mean too, with the same positions and visibility as predict().
    p_c, v_c, c_ens = predict_confident(ens, frames, 3)
    np.testing.assert_allclose(p_c, p_ens, atol=1e-6)
    np.testing.assert_allclose(v_c, v_ens, atol=1e-6)
    c_each = [predict_confident(m, frames, 3)[2] for m in members]
    np.testing.assert_allclose(c_ens, np.mean(c_each, axis=0), atol=1e-5)
    assert not np.allclose(c_each[0], c_each[1], atol=1e-3)
    with pytest.raises(ValueError, match="at least one"):
        ReaderEnsemble([])


def test_members_defaults_to_1_in_configs_stored_before_it_and_builds_the_network_it_names():
    stored = {k: v for k, v in TrainConfig(members=3).model_dump().items() if k != "members"}
    assert TrainConfig().members == 1 and TrainConfig.from_stored(stored).members == 1
    cfg = TrainConfig(members=3)
    assert cfg.model_dump()["members"] == 3 and TrainConfig.model_validate(cfg.model_dump()) == cfg
    for bad in (0, 17):
        with pytest.raises(ValueError):
            TrainConfig(members=bad)
    assert isinstance(build_reader(5, 3, 8, 4), KeypointReader)
    ens = build_reader(5, 3, 8, 2, members=2)
    assert isinstance(ens, ReaderEnsemble) and len(ens.members) == 2 and ens.stride == 2


@pytest.mark.slow
def test_training_two_members_keeps_the_plain_reader_as_the_first_and_reads_with_both(
        kiva_suite: Path, tmp_path: Path):
    from robojudge.video import sample_frames

    cfg = {**TINY, "epochs": 3}
    single = train_reader(kiva_suite, "fetch", tmp_path / "one", TrainConfig(**cfg, seed=4))
    both = train_reader(kiva_suite, "fetch", tmp_path / "two", TrainConfig(**cfg, seed=4, members=2))
    # Same held-out clips for every member; each member's own error is stored beside the ensemble's.
    assert both["episodes"] == single["episodes"]
    assert [m["seed"] for m in both["members"]] == [4, 5]
    assert both["members"][0]["held_out_error"] == single["held_out_error"]
    assert both["members"][0]["losses"] == single["losses"]
    assert both["config"]["members"] == 2 and "members" not in single
    assert len(both["losses"]) == 3
    one, two = load_reader(tmp_path / "one"), load_reader(tmp_path / "two")
    assert isinstance(two.net, ReaderEnsemble) and isinstance(one.net, KeypointReader)
    # Member 0 is the one-member reader bit for bit (same data, split and seed); member 1 is another.
    for name, value in one.net.state_dict().items():
        assert torch.equal(two.net.members[0].state_dict()[name], value), name
    assert not torch.equal(two.net.members[1].heat.weight, one.net.heat.weight)
    from robojudge.suite import load_suite

    item = next(it for it in load_suite(kiva_suite).items if it.embodiment in one.meta["embodiments"])
    clip = sample_frames(item.video, fps=None, max_frames=None)
    read = read_frames(two, clip.frames, clip.source_fps)
    first = read_frames(one, clip.frames, clip.source_fps)
    assert read.positions.shape == first.positions.shape
    assert not np.allclose(read.positions, first.positions)  # the second member moved the average
    assert ((read.probability >= 0) & (read.probability <= 1)).all()


@pytest.mark.slow
def test_the_cli_trains_members_and_prints_each(kiva_suite: Path, tmp_path: Path):
    from robojudge.cli import build_app

    result = CliRunner().invoke(build_app("kiva"), [
        "kiva", "train", "--episodes", str(kiva_suite), "--robot", "fetch", "--out", str(tmp_path / "r"),
        "--size", "32", "--epochs", "1", "--holdout", "0.25", "--members", "2", "--quiet"])
    assert result.exit_code == 0, result.output
    assert "member with seed 0" in result.output and "member with seed 1" in result.output
    assert "training: epoch" not in result.output  # --quiet: neither a bar nor lines
    meta = json.loads((tmp_path / "r" / "reader.json").read_text())
    assert meta["config"]["members"] == 2 and len(meta["members"]) == 2
    bad = CliRunner().invoke(build_app("kiva"), [
        "kiva", "train", "--episodes", str(kiva_suite), "--robot", "fetch", "--out", str(tmp_path / "x"),
        "--members", "0"])
    assert bad.exit_code != 0 and "members" in bad.output
