"""Prompt variants (RoboJudge App. D) with the mock backend: ten per clip, checked, cached."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _loops import in_a_running_loop
from robojudge.judges import ChatRequest, ResponseCache, make_judge
from robojudge.judges._mock import MockBackend
from robojudge.suite import Item
from robojudge.train._prompts import PREFIXES, REWRITE_INSTRUCTIONS, check_rewrite, prompt_variants

LONG = " ".join(["slowly"] * 120)


def _items() -> list[Item]:
    return [
        Item(item_id="r1", video="a.mp4", instruction="Put the red cup on the shelf.", clip_id="c1",
             embodiment="gripper", meta={"object": "red cup"}),
        Item(item_id="r1b", video="b.mp4", instruction="another rollout of c1", clip_id="c1",
             embodiment="gripper"),
        Item(item_id="h0", video="e.mp4", clip_id="c2", embodiment="human_hand"),  # its next item has one
        Item(item_id="h1", video="c.mp4", instruction="wipe the table with the sponge", clip_id="c2",
             embodiment="human_hand", meta={"object": "sponge"}),
        Item(item_id="x", video="d.mp4", clip_id="c3"),
    ]


def _script(request: ChatRequest) -> str:
    """Rewrite by template: the 2nd forgets the object until told, the 5th always runs too long."""
    kind = "human" if "hand" in request.system.split(".")[0] else "robot"
    k = next(i for i, t in enumerate(REWRITE_INSTRUCTIONS[kind]) if request.system.startswith(t))
    obj = request.user.split("keep it word for word): ")[-1]
    if k == 1 and not request.history:
        return "The arm reaches, grasps and finishes the task."
    if k == 4:
        return LONG
    return f'Prompt: "The {kind} moves the {obj} until the task is done ({k})."'


def test_ten_prompts_per_clip(tmp_path: Path) -> None:
    judge = make_judge({"name": "lm", "backend": "mock", "replies": ["unused"]})
    backend = MockBackend(judge, script=_script)
    with ResponseCache(tmp_path / "cache") as cache:
        summary = prompt_variants(_items(), judge, tmp_path / "prompts.jsonl", backend=backend, cache=cache)
    rows = [json.loads(line) for line in (tmp_path / "prompts.jsonl").read_text().splitlines()]
    assert len(rows) == 20 and {r["clip_id"] for r in rows} == {"c1", "c2"}
    # c2's first item has no instruction but its second has: c2 has its prompts, and is not listed
    assert summary.skipped == ["item 'x', field instruction: empty, so clip 'c3' has no prompts (none of its "
                               "items has an instruction)"]
    for clip, kind, instruction, obj in (("c1", "robot", "Put the red cup on the shelf.", "red cup"),
                                         ("c2", "human", "wipe the table with the sponge", "sponge")):
        mine = [r for r in rows if r["clip_id"] == clip]
        assert [r["prompt_variant"] for r in mine] == [f"rewrite-{k}" for k in range(1, 6)] + [
            f"prefix-{k}" for k in range(1, 6)]
        assert all(r["type"] == kind and r["instruction"] == instruction for r in mine)
        prefixes = [r for r in mine if r["kind"] == "prefix"]
        assert [r["prompt"] for r in prefixes] == [f"{p} {instruction}" for p in PREFIXES[kind]]
        rewrites = [r for r in mine if r["kind"] == "rewrite"]
        assert [r["valid"] for r in rewrites] == [True, True, True, True, False]
        assert all(obj in r["prompt"] and not r["prompt"].startswith(("Prompt", '"')) for r in rewrites[:4])
        assert rewrites[4]["problem"] == "120 words, more than 100"
    # per clip the 2nd and 5th templates were asked once more (retries=1), quoting the problem
    retried = [r.history[1][1] for r in backend.requests if r.history]
    assert len(retried) == 4 and all("is missing" in note or "words, more" in note for note in retried)
    sent = len(backend.requests)
    assert sent == 2 * (5 + 2)

    again = MockBackend(judge, script=_script)
    with ResponseCache(tmp_path / "cache") as cache:
        prompt_variants(_items(), judge, tmp_path / "again.jsonl", backend=again, cache=cache)
    assert again.requests == []
    assert (tmp_path / "again.jsonl").read_text() == (tmp_path / "prompts.jsonl").read_text()


def test_prompts_from_a_running_loop(tmp_path: Path) -> None:
    # Before: in a notebook asyncio.run refused, and the backend's close then hid that under a second error.
    reply = "The arm moves the red cup, the sponge."
    judge = make_judge({"name": "lm", "backend": "mock", "replies": [reply]})
    out = tmp_path / "p.jsonl"
    with ResponseCache(tmp_path / "cache") as cache:  # the backend is prompt_variants' own, closed by it
        summary = in_a_running_loop(lambda: prompt_variants(_items(), judge, out, cache=cache))
    assert len(summary.rows) == 20 and summary.invalid == 0
    assert len(out.read_text().splitlines()) == 20


def test_check_rewrite() -> None:
    assert check_rewrite("the Red Cup rises", "red cup") is None
    assert check_rewrite("the mug rises", "red cup") == "the object name 'red cup' is missing"
    assert check_rewrite("  ", None) == "empty reply"
    assert check_rewrite(" ".join(["w"] * 100), None) is None
    assert check_rewrite(" ".join(["w"] * 101), None) == "101 words, more than 100"


def test_check_rewrite_counts_chinese_and_japanese_characters() -> None:
    # Counted by spaces, a 595-character Chinese rewrite was one word and passed a 100-word limit. Each
    # Han character or kana now counts as a word, as word processors count them.
    zh = "机械臂缓慢地伸向桌面上的红色方块，" * 35  # 16 Han characters and a comma, 35 times: 560 words
    assert check_rewrite(zh, None) == (
        "560 words (each Chinese or Japanese character counts as one), more than 100")
    assert check_rewrite("机械臂抓起红色方块", None) is None  # 9 words
    assert check_rewrite("机" * 100, None) is None and check_rewrite("机" * 101, None) is not None
    ja = "ロボットアームが赤いブロックをつかむ。" * 6  # 18 kana and kanji a sentence (the 。 is not a word)
    assert check_rewrite(ja, None) == (
        "108 words (each Chinese or Japanese character counts as one), more than 100")
    # Korean is written with spaces between words, and counted by them
    assert check_rewrite(" ".join(["블록을"] * 100), None) is None


def test_suite_prompts_command(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from robojudge.cli import app

    (tmp_path / "v.mp4").write_bytes(b"")
    rows = [{"item_id": "a", "video": "v.mp4", "instruction": "open the drawer", "clip_id": "c",
             "meta": {"object": "drawer"}}]
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows))
    judges = tmp_path / "judges.toml"
    judges.write_text('[judges.lm]\nbackend = "mock"\nreplies = ["The gripper pulls the drawer open."]\n')
    out = tmp_path / "prompts.jsonl"
    res = CliRunner().invoke(app, ["suite", "prompts", str(manifest), "--out", str(out), "--judge", "lm",
                                   "--judges", str(judges), "--cache", str(tmp_path / "cache")])
    assert res.exit_code == 0, res.output
    assert "10 prompts for 1 clip" in res.output
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert written[0]["prompt"] == "The gripper pulls the drawer open." and written[-1]["kind"] == "prefix"
    res = CliRunner().invoke(app, ["suite", "prompts", str(manifest), "--out", str(out), "--judge", "nope",
                                   "--judges", str(judges), "--force"])
    assert res.exit_code == 2 and "nope" in res.output


def test_suite_prompts_does_not_replace_a_file_or_its_own_manifest(tmp_path: Path) -> None:
    # Before, `-o` was written unconditionally: `-o suite.jsonl` replaced the labelled suite with prompts.
    from typer.testing import CliRunner

    from robojudge.cli import app

    (tmp_path / "v.mp4").write_bytes(b"")
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text(json.dumps({"item_id": "a", "video": "v.mp4", "instruction": "open the drawer",
                                    "clip_id": "c", "labels": {"pa": 4}}) + "\n")
    judges = tmp_path / "judges.toml"
    judges.write_text('[judges.lm]\nbackend = "mock"\nreplies = ["The gripper pulls the drawer open."]\n')
    base = ["suite", "prompts", str(manifest), "--judge", "lm", "--judges", str(judges),
            "--cache", str(tmp_path / "cache")]
    before = manifest.read_text()
    for extra in ([], ["--force"]):
        res = CliRunner().invoke(app, [*base, "--out", str(tmp_path / "." / "suite.jsonl"), *extra])
        assert res.exit_code == 2 and "is the input manifest" in res.output, res.output
        assert manifest.read_text() == before
    other = tmp_path / "other.jsonl"
    other.write_text("keep me\n")
    res = CliRunner().invoke(app, [*base, "--out", str(other)])
    said = " ".join(res.output.split())
    assert res.exit_code == 2 and f"{other} exists; pass --force to replace it" in said
    assert other.read_text() == "keep me\n"
    res = CliRunner().invoke(app, [*base, "--out", str(other), "--force"])
    assert res.exit_code == 0, res.output
    assert "10 prompts for 1 clip" in res.output and other.read_text() != "keep me\n"


@pytest.mark.parametrize("embodiment", ["dexterous_hand", "humanoid", None])
def test_everything_but_a_human_hand_is_a_robot(embodiment: str | None) -> None:
    from robojudge.train._prompts import prompt_type

    assert prompt_type(Item(item_id="i", video="v", embodiment=embodiment)) == "robot"
