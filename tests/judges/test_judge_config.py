import tomllib
from pathlib import Path

import pytest

from robojudge._chars import MAX_NAME_BYTES
from robojudge.judges import (
    BACKENDS,
    RUBRICS,
    JudgeConfigError,
    RubricError,
    UnknownNameError,
    get_rubric,
    load_judges_file,
    load_rubric_file,
    make_backend,
    make_judge,
)


def test_builtin_rubrics() -> None:
    assert {"pa", "ia"} <= set(RUBRICS.names())
    pa, ia = get_rubric("pa"), get_rubric("ia")
    assert (pa.score_min, pa.score_max, pa.score_key) == (1, 5, "physical_adherence")
    assert not pa.needs_instruction and ia.needs_instruction and ia.first_frame_label
    system, user = ia.render("stack the cups")
    assert '"stack the cups"' in user and "{instruction}" not in user
    assert "instruction_alignment" in user and user.index("reasoning") < user.index('"instruction_alignment"')
    _, pa_user = pa.render(None)
    assert "ITEM" not in pa_user and '{"reasoning"' in pa_user
    with pytest.raises(ValueError, match="needs the item's instruction"):
        ia.render(None)


def test_unknown_names_suggest() -> None:
    with pytest.raises(UnknownNameError, match="Did you mean 'pa'"):
        get_rubric("pb")
    with pytest.raises(UnknownNameError, match="Did you mean 'openai'"):
        BACKENDS.get("opnai")


RUBRIC = """
id = "mine"
version = "7"
[output]
score_key = "quality"
score_min = 0
score_max = 10
[prompt]
syntax = "format"
system = "Be fair."
user = "Task {instruction}. Reply {{\\"reasoning\\": \\"...\\", \\"quality\\": <0-10>}}"
"""


def test_user_rubric_file(tmp_path: Path) -> None:
    p = tmp_path / "mine.toml"
    p.write_text(RUBRIC)
    r = load_rubric_file(p)
    assert r.id == "mine" and r.version == "7" and r.needs_instruction and r.score_max == 10
    _, user = r.render("go")
    assert user == 'Task go. Reply {"reasoning": "...", "quality": <0-10>}'
    p.write_text(RUBRIC.replace("score_min = 0", "score_min = 11"))
    with pytest.raises(RubricError, match="score_min"):
        load_rubric_file(p)
    p.write_text(RUBRIC.replace("{{", "{"))
    with pytest.raises(RubricError, match="does not render"):
        load_rubric_file(p)
    with pytest.raises(RubricError, match="cannot read"):
        load_rubric_file(tmp_path / "missing.toml")


@pytest.mark.parametrize(
    ("placeholder", "field"),
    [
        ("{instruction:>6000000000}", "prompt.user"),  # a width: gigabytes of padding at load
        ("{instruction!r}", "prompt.user"),
        ("{instruction.__class__}", "prompt.user"),
        ("{instruction[0]}", "prompt.user"),
        ("{}", "prompt.user"),
        ("{instruction:{instruction}}", "prompt.system"),
    ],
)
def test_format_placeholders_are_bare_names(tmp_path: Path, placeholder: str, field: str) -> None:
    p = tmp_path / "mine.toml"
    text = RUBRIC.replace("Task {instruction}", f"Task {placeholder}") if field == "prompt.user" else (
        RUBRIC.replace('system = "Be fair."', f'system = "Be fair. {placeholder}"'))
    p.write_text(text)
    with pytest.raises(RubricError) as info:
        load_rubric_file(p)
    assert str(info.value).startswith(f"{p}: {field}: placeholder {placeholder!r} is not a bare {{name}}")


def test_instruction_in_the_system_prompt_is_replaced(tmp_path: Path) -> None:
    # under syntax "replace" the system prompt went out with "{instruction}" as written, and items
    # without an instruction were judged
    p = tmp_path / "mine.toml"
    p.write_text('id = "mine"\nversion = "1"\n[output]\nscore_key = "s"\nscore_min = 1\nscore_max = 5\n'
                 '[prompt]\nsystem = "You judge whether a video carries out: {instruction}."\n'
                 'user = "Rate 1-5, JSON {\\"s\\": n}."\n')
    r = load_rubric_file(p)
    assert r.syntax == "replace" and r.needs_instruction
    assert r.render(" put the red block in the bowl ") == (
        "You judge whether a video carries out: put the red block in the bowl.", 'Rate 1-5, JSON {"s": n}.')
    with pytest.raises(ValueError, match="needs the item's instruction"):
        r.render(None)
    # A review: the change kept the rubric's digest, so rows judged from the literal text stayed current
    # in an upgraded store. Such a rubric's digest is another now; one without it in the system prompt
    # (every built-in one) keeps its digest.
    import hashlib

    from robojudge.judges._rubric import parse_rubric

    data = tomllib.loads(p.read_text())
    before = hashlib.sha256(repr(sorted((k, repr(v)) for k, v in data.items())).encode()).hexdigest()[:12]
    assert r.digest != before
    data["prompt"]["system"] = "You judge videos."
    plain = parse_rubric(data, "plain")
    assert plain.digest == hashlib.sha256(
        repr(sorted((k, repr(v)) for k, v in data.items())).encode()).hexdigest()[:12]


def test_judges_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RJ_TEST_KEY", "sk-test")  # a backend is built only for a judge whose key is set
    p = tmp_path / "robojudge.toml"
    p.write_text(
        """
[judges.qwen]
backend = "openai"
model = "Qwen/Qwen2.5-VL-7B-Instruct"
base_url = "http://127.0.0.1:8000/v1"
api_key_env = "RJ_TEST_KEY"
concurrency = 3
[judges.qwen.sampling]
max_tokens = 256
[judges.qwen.extra_body]
top_k = 1
[judges.qwen.prices]
input_per_mtok = 1.0
"""
    )
    judges = load_judges_file(p)
    q = judges["qwen"]
    assert q.concurrency == 3 and q.sampling.max_tokens == 256 and q.sampling.temperature == 0
    assert q.extra_body == {"top_k": 1} and q.prices is not None
    assert "base_url" not in q.identity() and "api_key_env" not in q.identity()
    assert make_backend(q).name == "openai"
    monkeypatch.delenv("RJ_TEST_KEY")
    with pytest.raises(JudgeConfigError, match="judge 'qwen': api_key_env: RJ_TEST_KEY is not set"):
        make_backend(q)
    p.write_text("[judges.bad]\nconcurrency = 0\n")
    with pytest.raises(JudgeConfigError, match="concurrency"):
        load_judges_file(p)
    with pytest.raises(JudgeConfigError, match="no judges file"):
        load_judges_file(tmp_path / "none.toml")


def test_extra_body_cannot_override_what_robojudge_sends(tmp_path: Path) -> None:
    # seed, temperature and model in extra_body replaced the per-turn seeds and the stored model unseen
    p = tmp_path / "robojudge.toml"
    p.write_text('[judges.eb]\nmodel = "m"\nbase_url = "http://127.0.0.1:8000/v1"\n'
                 '[judges.eb.extra_body]\nseed = 7\ntemperature = 0.9\nmodel = "other"\ntop_k = 1\n')
    with pytest.raises(JudgeConfigError) as err:
        load_judges_file(p)
    assert str(err.value) == (
        f"{p}: judge 'eb': extra_body: seed, temperature, model are set by robojudge in every request and "
        "cannot be overridden here (seed: use sampling.seed; temperature: use sampling.temperature; "
        "model: use model)")
    with pytest.raises(JudgeConfigError, match="extra_body: logprobs is set by robojudge"):
        make_judge({"name": "j", "extra_body": {"logprobs": True}})
    assert make_judge({"name": "j", "extra_body": {"top_k": 1}}).extra_body == {"top_k": 1}


def test_api_key_env_must_be_a_name() -> None:
    with pytest.raises(JudgeConfigError, match="NAME of an environment variable"):
        make_judge({"name": "j", "api_key_env": "sk-abc123-secret"})


def test_backends_need_their_settings() -> None:
    with pytest.raises(ValueError, match="base_url"):
        make_backend(make_judge({"name": "j", "backend": "openai", "model": "m"}))
    with pytest.raises(ValueError, match="replies"):
        make_backend(make_judge({"name": "j", "backend": "mock"}))


def test_a_judges_or_rubric_file_that_is_not_text_is_named(tmp_path: Path) -> None:
    """A PNG (or a UTF-16 file) given as --judges or --rubric-file was a UnicodeDecodeError traceback."""
    png = tmp_path / "x.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\nrest")
    not_text = r"\(TOML text\): byte 0 is not UTF-8"
    with pytest.raises(JudgeConfigError, match=r"x\.png: not a judges file " + not_text):
        load_judges_file(png)
    with pytest.raises(RubricError, match=r"x\.png: not a rubric file " + not_text):
        load_rubric_file(png)


def test_judge_and_rubric_names_longer_than_the_limit_are_refused(tmp_path: Path) -> None:
    # Before: any length was accepted; judge:<judge>:<rubric> is a stored metric id, part of the key that
    # PostgreSQL's unique index holds (2,704 bytes an entry), while SQLite took any length.
    assert make_judge({"name": "j" * MAX_NAME_BYTES, "backend": "mock"}).name == "j" * MAX_NAME_BYTES
    with pytest.raises(JudgeConfigError) as err:
        make_judge({"name": "j" * (MAX_NAME_BYTES + 1), "backend": "mock"})
    assert "name: judge name is 256 bytes long in UTF-8; at most 255 are allowed" in str(err.value)
    judges = tmp_path / "judges.toml"
    judges.write_text(f'[judges.{"k" * 300}]\nbackend = "mock"\n')
    with pytest.raises(JudgeConfigError, match=f"^{judges}: judge 'k+': name: judge name is 300 bytes long"):
        load_judges_file(judges)
    body = '[output]\nscore_key = "s"\nscore_min = 1\nscore_max = 5\n[prompt]\nuser = "Rate 1-5, JSON."\n'
    for rid, version, problem in [("r" * 256, "1", "id is 256 bytes long"),
                                  ("r", "v" * 256, "rubric 'r': version is 256 bytes long")]:
        p = tmp_path / "rubric.toml"
        p.write_text(f'id = "{rid}"\nversion = "{version}"\n' + body)
        with pytest.raises(RubricError) as rerr:
            load_rubric_file(p)
        assert str(rerr.value) == f"{p}: {problem} in UTF-8; at most 255 are allowed"


@pytest.mark.parametrize("name", ["\u901a\u4e49", "Mod\u00e8le", "-lead"])
def test_judge_and_rubric_name_rules_say_ascii(tmp_path: Path, name: str) -> None:
    # The rule is ASCII, and the message said "letters": a judge '通义' was told it "may hold letters".
    with pytest.raises(JudgeConfigError) as err:
        make_judge({"name": name, "backend": "mock"})
    assert (f"judge name {name!r} may hold ASCII letters (A-Z, a-z), digits, '_', '.', '-' only, starting "
            "with a letter or a digit") in str(err.value)
    p = tmp_path / "rubric.toml"
    p.write_text('id = "r\u00e9ponse"\nversion = "1"\n[output]\nscore_key = "s"\nscore_min = 1\n'
                 'score_max = 5\n[prompt]\nuser = "Rate 1-5, JSON."\n', encoding="utf-8")
    with pytest.raises(RubricError, match=r"id 'r\u00e9ponse' must be lowercase ASCII letters \(a-z\), "):
        load_rubric_file(p)


def test_a_judge_name_ending_in_a_newline_is_refused() -> None:
    # "$" matched before a final newline, so 'gpt' and a newline was a judge name, printed as 'gpt'.
    with pytest.raises(JudgeConfigError, match=r"judge name 'gpt\\n' may hold ASCII letters"):
        make_judge({"name": "gpt\n", "backend": "mock"})


def test_a_rubric_id_ending_in_a_newline_is_refused(tmp_path: Path) -> None:
    # The same "$": this whole rubric file loaded, with the id 'pa_v1' and a newline.
    p = tmp_path / "rubric.toml"
    p.write_text('id = "pa_v1\\n"\nversion = "1"\n[output]\nscore_key = "s"\nscore_min = 1\n'
                 'score_max = 5\n[prompt]\nsystem = "You rate videos."\nuser = "Rate 1-5, JSON."\n',
                 encoding="utf-8")
    with pytest.raises(RubricError, match=r"id 'pa_v1\\n' must be lowercase ASCII letters"):
        load_rubric_file(p)
    p.write_text(p.read_text(encoding="utf-8").replace("pa_v1\\n", "pa_v1"), encoding="utf-8")
    assert load_rubric_file(p).id == "pa_v1"


def test_a_table_outside_judges_is_refused(tmp_path: Path) -> None:
    """Audit config F5: top-level tables other than [judges] were dropped without a word, so a
    [judge.m.sampling] typo ran the judge at temperature 0.0."""
    p = tmp_path / "robojudge.toml"
    p.write_text('[judges.m]\nbackend = "mock"\nmodel = "x"\n\n[judge.m.sampling]\ntemperature = 0.7\n')
    with pytest.raises(JudgeConfigError, match=r"robojudge.toml: unknown top-level table "
                       r"\[judge.m.sampling\] \(did you mean \[judges.m.sampling\]\?\)"):
        load_judges_file(p)
    p.write_text('[judge.m]\nbackend = "mock"\nmodel = "x"\n')  # only the misspelt table
    with pytest.raises(JudgeConfigError, match=r"table \[judge.m\] \(did you mean \[judges.m\]\?\)"):
        load_judges_file(p)
    p.write_text('[judges.m]\nbackend = "mock"\nmodel = "x"\n[sampling]\ntemperature = 0.9\n')
    with pytest.raises(JudgeConfigError, match=r"table \[sampling\] \(a judge's sampling goes in its own "
                       r"table: \[judges.NAME.sampling\]\)"):
        load_judges_file(p)
    p.write_text('note = "x"\n[judges.m]\nbackend = "mock"\nmodel = "x"\n')
    with pytest.raises(JudgeConfigError, match=r"unknown top-level key 'note' \(nothing reads it\)"):
        load_judges_file(p)
    p.write_text('[judges.m]\nbackend = "mock"\nmodel = "x"\n[judges.m.sampling]\ntemperature = 0.7\n')
    assert load_judges_file(p)["m"].sampling.temperature == 0.7
