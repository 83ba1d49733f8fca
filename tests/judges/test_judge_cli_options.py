"""``robojudge judge`` options checked before anything runs: which rubrics (``--rubric`` with
``--rubric-file``), and judge settings that cannot work (a misspelt backend, a URL without a scheme,
an API key variable that is not set, a misspelt field), each one ``error:`` line naming where."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _judge_cli import app
from _judge_server import FakeServer, Reply, user_text
from typer.testing import CliRunner

from robojudge.store import ResultStore


@app.command("noop")
def _noop() -> None:  # a second command keeps "judge" a subcommand
    pass


MINE = """
id = "{id}"
version = "1"
[output]
reasoning_key = "reasoning"
score_key = "physical_adherence"
score_min = 1
score_max = 5
[prompt]
system = "You rate videos."
user = "Rate the physics. MINE JSON: {{\\"reasoning\\": \\"...\\", \\"physical_adherence\\": 1-5}}"
"""


def _reply(body: dict[str, Any], n: int) -> Reply:
    key = "instruction_alignment" if "instruction_alignment" in user_text(body) else "physical_adherence"
    return Reply(f'{{"reasoning": "r", "{key}": 4}}')


def _setup(tmp_path: Path, make_items: Any, url: str, **judge: str) -> tuple[Path, list[str]]:
    items = make_items(["a"])
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps(it.model_dump(exclude_none=True)) + "\n" for it in items))
    fields = {"backend": "openai", "model": "m", "base_url": url, **judge}
    toml = "[judges.fk]\n" + "".join(f'{k} = "{v}"\n' for k, v in fields.items())
    (tmp_path / "judges.toml").write_text(toml)
    args = ["judge", str(manifest), "--judges", str(tmp_path / "judges.toml"), "--judge", "fk",
            "--db", str(tmp_path / "r.sqlite"), "--cache-dir", str(tmp_path / "c"), "--no-progress"]
    return manifest, args


def _metrics(tmp_path: Path) -> set[str]:
    with ResultStore(tmp_path / "r.sqlite") as st:
        return {r.metric for r in st.rows()}


def test_rubric_file_alone_judges_only_its_rubric(tmp_path: Path, make_items: Any) -> None:
    (tmp_path / "mine.toml").write_text(MINE.format(id="mine"))
    with FakeServer(_reply) as srv:
        _, args = _setup(tmp_path, make_items, srv.url)
        res = CliRunner().invoke(app, [*args, "--rubric-file", str(tmp_path / "mine.toml")])
        assert res.exit_code == 0, res.output
        assert srv.count == 1 and "1 judgments: 1 scored" in res.output
    assert _metrics(tmp_path) == {"judge:fk:mine"}


def test_rubric_names_a_rubric_files_id(tmp_path: Path, make_items: Any) -> None:
    mine = tmp_path / "mine.toml"
    mine.write_text(MINE.format(id="mine"))
    with FakeServer(_reply) as srv:
        _, args = _setup(tmp_path, make_items, srv.url)
        res = CliRunner().invoke(app, [*args, "--rubric", "mine,ia", "--rubric-file", str(mine)])
        assert res.exit_code == 0, res.output
        assert srv.count == 2
    assert _metrics(tmp_path) == {"judge:fk:mine", "judge:fk:ia"}


def test_a_rubric_file_clashing_with_a_builtin_names_both(tmp_path: Path, make_items: Any) -> None:
    mypa = tmp_path / "mypa.toml"
    mypa.write_text(MINE.format(id="pa"))
    _, args = _setup(tmp_path, make_items, "http://127.0.0.1:9/v1")
    res = CliRunner().invoke(app, [*args, "--rubric", "pa,ia", "--rubric-file", str(mypa)])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "'pa' is both the built-in rubric and the rubric in" in res.output and "mypa.toml" in res.output
    other = tmp_path / "other.toml"
    other.write_text(MINE.format(id="pa"))
    res = CliRunner().invoke(app, [*args, "--rubric-file", str(mypa), "--rubric-file", str(other)])
    assert res.exit_code == 2 and "declared twice" in res.output and "other.toml" in res.output


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("backend", "opena1", "judge 'fk': backend: unknown judge backend 'opena1'. Did you mean 'openai'?"),
        ("base_url", "127.0.0.1:18101/v1", "judge 'fk': base_url: '127.0.0.1:18101/v1' is not an http://"),
        ("api_key_env", "RJ_TEST_KEY_TYPO", "judge 'fk': api_key_env: RJ_TEST_KEY_TYPO is not set"),
        ("concurency", "3", "judge 'fk': concurency: Extra inputs are not permitted"),
    ],
)
def test_judge_settings_that_cannot_work_are_one_error_line(
    tmp_path: Path, make_items: Any, no_api_key: None, field: str, value: str, said: str
) -> None:
    _, args = _setup(tmp_path, make_items, "http://127.0.0.1:9/v1", **{field: value})
    res = CliRunner().invoke(app, [*args, "--rubric", "pa"])
    assert res.exit_code == 2 and isinstance(res.exception, SystemExit)  # no traceback
    assert f"error: {tmp_path / 'judges.toml'}: {said}" in res.output.replace("\n", ""), res.output


@pytest.mark.parametrize("key", ["gsk_9fQ2xLr7TzK1mN4pW8vB3cY6dH0jS5aE",
                                 "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
                                 "a3f9c2e17b4d8f60a3f9c2e17b4d8f60a3f9c2e1"])
def test_a_key_given_as_api_key_env_is_not_printed(tmp_path: Path, make_items: Any, key: str) -> None:
    # an identifier-shaped key passed the name check and was printed whole: "api_key_env: gsk_... is not set"
    manifest, _ = _setup(tmp_path, make_items, "http://127.0.0.1:9/v1")
    args = ["judge", str(manifest), "--backend", "openai", "--model", "m", "--base-url", "http://127.0.0.1:9/v1"]
    res = CliRunner().invoke(app, [*args, "--api-key-env", key, "--no-progress"])
    said = res.output.replace("\n", "")
    assert res.exit_code == 2 and isinstance(res.exception, SystemExit)
    assert f"api_key_env: {key[:4]!r}... ({len(key)} characters) is not set; it looks like an API key" in said
    assert key[:5] not in said


@pytest.mark.parametrize(("value", "says"), [
    ("sk-NLSECRET-abcdef123\n", "ends with a line break"),
    ("sk-NLSECRET-abc\tdef123", "holds a control character (U+0009)"),
])
def test_a_key_with_a_control_character_is_refused_before_any_request(
    tmp_path: Path, make_items: Any, monkeypatch: pytest.MonkeyPatch, value: str, says: str
) -> None:
    # aiohttp refused the header on every request ("header injection"), counted 5 as sent, and the
    # breaker blamed the server; nothing named the variable
    monkeypatch.setenv("RJ_TEST_NL_KEY", value)
    with FakeServer(_reply) as srv:
        _, args = _setup(tmp_path, make_items, srv.url, api_key_env="RJ_TEST_NL_KEY")
        res = CliRunner().invoke(app, [*args, "--rubric", "pa"])
        assert srv.count == 0
    assert res.exit_code == 2 and isinstance(res.exception, SystemExit)
    said = res.output.replace("\n", "")
    assert f"judge 'fk': api_key_env: the key in RJ_TEST_NL_KEY {says}, which no HTTP header" in said
    assert "NLSECRET" not in said and "requests sent" not in said and not (tmp_path / "r.sqlite").exists()


def test_inline_backend_typo_is_one_error_line(tmp_path: Path, make_items: Any) -> None:
    manifest, _ = _setup(tmp_path, make_items, "http://127.0.0.1:9/v1")
    res = CliRunner().invoke(app, ["judge", str(manifest), "--backend", "opena", "--model", "m",
                                   "--base-url", "http://127.0.0.1:9/v1", "--no-progress"])
    assert res.exit_code == 2 and isinstance(res.exception, SystemExit)
    said = "error: command line: judge 'm': backend: unknown judge backend 'opena'. Did you mean 'openai'?"
    assert said in res.output.replace("\n", "")


def test_the_run_report_counts_attempts_sent(tmp_path: Path, make_items: Any) -> None:
    with FakeServer(lambda body, n: Reply("down", status=500) if n == 1 else _reply(body, n)) as srv:
        _, args = _setup(tmp_path, make_items, srv.url)
        (tmp_path / "judges.toml").write_text(
            (tmp_path / "judges.toml").read_text() + "backoff_s = 0.01\n"
        )
        res = CliRunner().invoke(app, [*args, "--rubric", "pa"])
        assert res.exit_code == 0, res.output
    assert "judge fk: 2 requests sent (1 retries, 1 failed), 0 from cache" in res.output


def test_a_run_in_which_nothing_was_judged_exits_1(tmp_path: Path, make_items: Any) -> None:
    """Every request refused (a wrong key: 401) is a run that judged nothing: exit status 1, so a script
    notices; one reply is enough for 0 (the failures are listed and stored either way)."""
    with FakeServer(lambda body, n: Reply(status=401, raw={"error": {"message": "bad key"}})) as srv:
        _, args = _setup(tmp_path, make_items, srv.url)
        res = CliRunner().invoke(app, [*args, "--rubric", "pa"])
    assert res.exit_code == 1, res.output
    assert "nothing was judged" in res.output
    with FakeServer(_reply) as srv:
        _, args = _setup(tmp_path, make_items, srv.url)
        res = CliRunner().invoke(app, [*args, "--rubric", "pa,ia", "--retry-errors"])
    assert res.exit_code == 0, res.output
