"""A judge whose model is a local folder, moved or spelt another way: its judgments are taken over."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from robojudge.judges import ResponseCache, get_rubric, load_judges_file, make_judge
from robojudge.judges._mock import MockBackend
from robojudge.run._judge import judge_items
from robojudge.run._moved import TAKEN_OVER
from robojudge.store import ResultStore
from robojudge.suite import Item
from robojudge.video import write_video

REPLY = '{"reasoning": "fine", "instruction_alignment": 4}'


def _items(folder: Path) -> list[Item]:
    out = []
    for n, level in enumerate((40, 120)):
        write_video(folder / f"v{n}.mp4", np.full((6, 16, 16, 3), level, np.uint8), fps=4)
        out.append(Item(item_id=f"i{n}", video=str(folder / f"v{n}.mp4"), instruction="push the cube"))
    return out


def _model(folder: Path, content: bytes = b"weights") -> Path:
    folder.mkdir(parents=True)
    (folder / "model.safetensors").write_bytes(content)
    (folder / "config.json").write_text("{}")
    return folder


def test_a_local_judge_model_moved_elsewhere_takes_over_its_judgments(tmp_path: Path) -> None:
    # The judge's config named its folder by path: the same files in another folder (a project copied to
    # a cluster, or the folder spelt relatively) judged every video again and split one judge in several.
    items = _items(tmp_path)
    replies = MockBackend(make_judge({"name": "r", "backend": "mock", "model": "m", "replies": [REPLY]}))
    laptop = _model(tmp_path / "laptop" / "tiny")

    def judge(model: Path | str, store: ResultStore):  # type: ignore[no-untyped-def]
        config = make_judge({"name": "tiny", "backend": "hf", "model": str(model)})
        with ResponseCache(tmp_path / "cache") as cache:
            return judge_items(items, config, [get_rubric("ia")], store, cache=cache, decode_workers=0,
                               backend=replies)

    with ResultStore(tmp_path / "r.sqlite") as store:
        assert judge(laptop, store).scored == 2
        (first,) = {r.config_hash for r in store.rows()}
        cluster = tmp_path / "cluster" / "tiny"
        cluster.parent.mkdir()
        shutil.move(laptop, cluster)
        moved = judge(cluster, store)
        assert (moved.taken_over, moved.scored, moved.skipped) == (2, 0, 2)
        current = store.rows()
        assert len({r.config_hash for r in current}) == 1 and current[0].config_hash != first
        assert {(r.details or {}).get(TAKEN_OVER) for r in current} == {first}
        assert current[0].config is not None and current[0].config["model"] == str(cluster)
        # Other files under the same name are another judge: judged again, nothing taken over.
        (cluster / "model.safetensors").write_bytes(b"trained again")
        other = judge(cluster, store)
        assert (other.taken_over, other.scored) == (0, 2)


def test_a_relative_model_in_a_judges_file_is_read_against_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # It was read against the working folder: from elsewhere it became a hub id, and the load error named
    # only huggingface.co.
    _model(tmp_path / "proj" / "models" / "tiny")
    (tmp_path / "proj" / "judges.toml").write_text(
        '[judges.tiny]\nbackend = "hf"\nmodel = "models/tiny"\n[judges.hub]\nbackend = "hf"\n'
        'model = "Qwen/Qwen2-VL-2B-Instruct"\n[judges.served]\nbackend = "openai"\nmodel = "models/tiny"\n'
        'base_url = "http://127.0.0.1:9/v1"\n')
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    judges = load_judges_file(tmp_path / "proj" / "judges.toml")
    assert judges["tiny"].model == str((tmp_path / "proj" / "models" / "tiny").resolve())
    assert judges["hub"].model == "Qwen/Qwen2-VL-2B-Instruct"  # a hub id stays one
    # A server's model is the name it serves (vllm serve models/tiny), never a path, folder beside or not.
    assert judges["served"].model == "models/tiny"


def test_the_same_model_folder_spelt_another_way_takes_over_its_judgments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # models/tiny and its absolute path (what a judges file now gives) are one folder: the second
    # spelling judged every video again, as its old spelling still named a folder here.
    items = _items(tmp_path)
    replies = MockBackend(make_judge({"name": "r", "backend": "mock", "model": "m", "replies": [REPLY]}))
    _model(tmp_path / "models" / "tiny")
    monkeypatch.chdir(tmp_path)
    with ResultStore(tmp_path / "r.sqlite") as store, ResponseCache(tmp_path / "cache") as cache:
        done = [judge_items(items, make_judge({"name": "tiny", "backend": "hf", "model": model}),
                            [get_rubric("ia")], store, cache=cache, decode_workers=0, backend=replies)
                for model in ("models/tiny", str(tmp_path / "models" / "tiny"))]
        assert (done[1].taken_over, done[1].scored) == (2, 0)
        assert len({r.config_hash for r in store.rows()}) == 1
