"""The API key never leaves the Authorization header: not in rows, exports, the cache, logs or output."""

from __future__ import annotations

import base64
import json
import logging
import re
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
import typer
from _judge_server import FakeServer, Reply, user_text
from typer.testing import CliRunner

from robojudge.cli._judge import judge
from robojudge.judges import Completion, TokenLogprob
from robojudge.judges._secrets import Redactor
from robojudge.store import ResultStore, export_results

# '/', '+' and '=' make the URL-encoded form differ from the key itself.
SECRET = "sk-live/Ab+Cd=Ef_0123456789xyz"
FORMS = [SECRET, urllib.parse.quote(SECRET, safe=""), urllib.parse.quote_plus(SECRET)]

app = typer.Typer()
app.command("judge")(judge)


@app.command("noop")
def _noop() -> None:  # a second command keeps "judge" a subcommand
    pass


def _echo(body: dict[str, Any], n: int) -> Reply:
    """Every kind of reply a careless or hostile server could put the key into."""
    text = user_text(body)
    item = re.search(r"ITEM:(\w+)", text)
    kind = item.group(1) if item else ""
    if kind == "unauth":
        return Reply("invalid API key in header Authorization: {authorization}", status=401, echo=True)
    if kind == "boom":
        return Reply(
            "internal error; headers were {'authorization': '{authorization}'}, "
            "url-encoded {authorization_urlencoded}",
            status=500,
            echo=True,
        )
    if kind == "malformed":
        return Reply(raw={"oops": "you sent {authorization}"}, echo=True)
    if kind == "chatty":  # a 200 whose reply text quotes the key back
        return Reply(
            '{"reasoning": "the request carried {authorization} and {authorization_urlencoded}", '
            '"instruction_alignment": 3}',
            echo=True,
        )
    if kind == "chattybad":  # unparsable, so the raw reply is kept in the row
        return Reply("I cannot judge this; your header was {authorization}", echo=True)
    return Reply('{"reasoning": "fine", "instruction_alignment": 4}')


def _files_with(folder: Path, needle: bytes) -> list[Path]:
    return [f for f in folder.rglob("*") if f.is_file() and needle in f.read_bytes()]


def test_echoing_server_never_gets_the_key_stored_or_printed(
    tmp_path: Path, make_items: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("RJ_TEST_KEY", SECRET)
    items = make_items(["ok", "unauth", "boom", "malformed", "chatty", "chattybad"])
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps(it.model_dump(exclude_none=True)) + "\n" for it in items))
    db, cache_dir = tmp_path / "store" / "r.sqlite", tmp_path / "cache"
    caplog.set_level(logging.DEBUG)
    with FakeServer(_echo) as srv:
        (tmp_path / "judges.toml").write_text(
            f'[judges.echo]\nbackend = "openai"\nmodel = "m"\nbase_url = "{srv.url}"\n'
            'api_key_env = "RJ_TEST_KEY"\nmax_retries = 1\nbackoff_s = 0.01\nconcurrency = 1\n'
            "circuit_breaker = 0\n"
        )
        args = ["judge", str(manifest), "--judge", "echo", "--judges", str(tmp_path / "judges.toml")]
        args += ["--rubric", "ia", "--db", str(db), "--cache-dir", str(cache_dir), "--no-progress"]
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 0, res.output
        assert all(h["Authorization"] == f"Bearer {SECRET}" for h in srv.headers)  # it was sent
    with ResultStore(db) as st:
        rows = {r.item_id: r for r in st.rows()}
        export_results(st, tmp_path / "out.csv")
    # The failures are still explained, with the key masked.
    assert rows["unauth"].status == "error" and "HTTP 401" in (rows["unauth"].error or "")
    assert "Authorization: Bearer ***" in (rows["unauth"].error or "")
    assert rows["boom"].status == "error" and "HTTP 500" in (rows["boom"].error or "")
    assert rows["malformed"].status == "error" and "malformed response" in (rows["malformed"].error or "")
    assert rows["chatty"].value == 3 and "***" in str(rows["chatty"].details)
    assert rows["ok"].value == 4
    assert "HTTP 401" in res.output  # the summary lists the failures
    seen = res.output + "\n".join(r.getMessage() for r in caplog.records)
    seen += "\n".join(repr(r) for r in rows.values()) + (tmp_path / "out.csv").read_text()
    for form in FORMS:
        assert form not in seen, form
        for folder in (db.parent, cache_dir):
            assert not _files_with(folder, form.encode()), (form, folder)


def test_redactor_masks_known_and_header_shaped_secrets() -> None:
    r = Redactor([SECRET])
    assert r.text(f"key {SECRET} and {FORMS[1]} and {FORMS[2]}") == "key *** and *** and ***"
    assert r.text(json.dumps({"k": SECRET})) == '{"k": "***"}'
    # secrets it was not told about, in header form
    assert r.text("Authorization: Bearer abc.DEF-123") == "Authorization: Bearer ***"
    assert r.text('{"authorization": "Basic dXNlcjpwYXNz"}') == '{"authorization": "Basic ***"}'
    assert r.text("headers: {'Authorization': 'tok123'}") == "headers: {'Authorization': '***'}"
    assert r.text("sent Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig") == "sent Bearer ***"
    assert r.text("x-api-key: abcdef123456, next") == "x-api-key: ***, next"
    url = "GET https://u:pw123@host/v1?key=abc&x=1 failed"
    assert r.text(url) == "GET https://u:***@host/v1?key=***&x=1 failed"
    assert r.text("see http://h/v1?api-version=2&token=t0k") == "see http://h/v1?api-version=2&token=***"
    # ordinary prose is left alone
    prose = "The gripper is the bearer of the cup; authorization was not needed. Basic physics holds."
    assert r.text(prose) == prose
    assert Redactor([]).text("nothing to do") == "nothing to do"


def test_redactor_ignores_keys_too_short_to_be_secret() -> None:
    # A placeholder key such as "1" must not wipe every "1" out of a reply.
    r = Redactor(["1", "", "abc"])
    assert r.text('{"instruction_alignment": 1}') == '{"instruction_alignment": 1}'


def test_redactor_masks_a_completion_and_drops_token_pieces_of_a_secret() -> None:
    lp = (TokenLogprob("sk-live", -0.1), TokenLogprob("/Ab", -0.1))
    c = Completion(text=f"said {SECRET}", logprobs=lp, meta={"id": f"x-{SECRET}", "images": 2})
    out = Redactor([SECRET]).completion(c)
    assert out.text == "said ***" and out.meta == {"id": "x-***", "images": 2} and out.logprobs is None
    clean = Completion(text="fine", logprobs=lp, meta={"id": "a"})
    assert Redactor([SECRET]).completion(clean) is clean  # nothing to mask: the same object back


URL_PASSWORD, URL_KEY = "hunter2pass", "sk-urlsecret999"
URL_SECRETS = [URL_PASSWORD, URL_KEY, base64.b64encode(f"user:{URL_PASSWORD}".encode()).decode()]


@pytest.mark.parametrize("with_key", [False, True], ids=["url-credentials", "url-credentials-and-key"])
def test_breaker_message_masks_credentials_of_the_base_url(
    tmp_path: Path,
    make_items: Any,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    with_key: bool,
) -> None:
    # A server that always fails and quotes the request's path (query included) and headers back,
    # so the breaker opens with the URL's password and key parameter in reach of every message.
    def down(body: dict[str, Any], n: int) -> Reply:
        text = "upstream down at {path}; headers {'Authorization': '{authorization}'}"
        return Reply(text, status=503, echo=True)

    monkeypatch.setenv("RJ_TEST_KEY", SECRET)
    items = make_items([f"item{i}" for i in range(8)])
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps(it.model_dump(exclude_none=True)) + "\n" for it in items))
    db, cache_dir = tmp_path / "store" / "r.sqlite", tmp_path / "cache"
    caplog.set_level(logging.DEBUG)
    with FakeServer(down) as srv:
        url = srv.url.replace("://", f"://user:{URL_PASSWORD}@") + f"?key={URL_KEY}"
        key_line = 'api_key_env = "RJ_TEST_KEY"\n' if with_key else ""
        (tmp_path / "judges.toml").write_text(
            f'[judges.down]\nbackend = "openai"\nmodel = "m"\nbase_url = "{url}"\n{key_line}'
            "max_retries = 1\nbackoff_s = 0.01\nconcurrency = 1\ncircuit_breaker = 3\n"
        )
        args = ["judge", str(manifest), "--judge", "down", "--judges", str(tmp_path / "judges.toml")]
        args += ["--rubric", "ia", "--db", str(db), "--cache-dir", str(cache_dir), "--no-progress"]
        res = CliRunner().invoke(app, args)
        sent, paths = srv.count, srv.paths
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    assert sent <= 3  # the breaker opened
    # the query stays after the path; with a key too, aiohttp refuses two sets of credentials
    assert paths == ([] if with_key else [f"/v1/chat/completions?key={URL_KEY}"] * sent)
    with ResultStore(db) as st:
        rows = list(st.rows())
        export_results(st, tmp_path / "out.csv")
    assert len(rows) == 8 and all(r.status == "error" for r in rows)
    assert sum("circuit breaker open" in (r.error or "") for r in rows) >= 5, rows[0].error
    assert "circuit breaker open" in res.output
    if with_key:
        assert "cannot send to http://user:***@" in res.output and "credentials" in res.output
    seen = res.output + "\n".join(r.getMessage() for r in caplog.records)
    seen += "\n".join(repr(r) for r in rows) + (tmp_path / "out.csv").read_text()
    for secret in [*URL_SECRETS, *FORMS]:
        assert secret not in seen, secret
        for folder in (db.parent, cache_dir):
            assert not _files_with(folder, secret.encode()), (secret, folder)


def test_redactor_for_judge_masks_the_credentials_of_its_base_url() -> None:
    from robojudge.judges import make_judge

    basic = base64.b64encode(b"user:p@ss-w0rd").decode()
    cfg = make_judge(
        {"name": "t", "base_url": "https://user:p%40ss-w0rd@h.example/v1?api-version=2024-06&code=fn-secret-1"}
    )
    r = Redactor.for_judge(cfg)
    # quoted without '://' (a path echoed back), decoded, and as the Basic header aiohttp sends
    path = "POST /v1/chat/completions?code="
    assert r.text(f"{path}fn-secret-1 failed") == f"{path}*** failed"
    assert r.text("password p@ss-w0rd, encoded p%40ss-w0rd") == "password ***, encoded ***"
    assert r.text(f"got {basic}") == "got ***"
    assert r.text("api-version 2024-06 is fine") == "api-version 2024-06 is fine"  # not a credential
    token_user = make_judge({"name": "t", "base_url": "https://tok-abcdef123@h.example/v1"})
    assert Redactor.for_judge(token_user).text("token tok-abcdef123 rejected") == "token *** rejected"


def test_redactor_masks_key_like_url_parameters_it_was_not_told_about() -> None:
    r = Redactor([])
    for name in ("api_key", "apikey", "subscription-key", "access_token", "client_secret", "X-Amz-Signature"):
        out = r.text(f"GET https://h/x?a=1&{name}=s3cr3t&b=2")
        assert "s3cr3t" not in out and out.startswith(f"GET https://h/x?a=1&{name}=***"), out
    assert r.text("GET https://h/x?api-version=2024-06&page=2") == "GET https://h/x?api-version=2024-06&page=2"


ANSI = "\x1b]0;OWNED TITLE\x07\x1b[2J\x1b[31mfake: all 500 items scored OK\x1b[0m\x9b\x7f\u202e"


def test_escape_sequences_in_a_server_error_reach_neither_the_terminal_nor_the_store(
    tmp_path: Path, make_items: Any
) -> None:
    # Before: the body's ESC sequences were printed (clearing the screen, colouring fake text) and
    # stored, and `results export -o -` printed them again.
    from robojudge.cli import app as cli_app

    items = make_items(["a"])
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps(it.model_dump(exclude_none=True)) + "\n" for it in items))
    db = tmp_path / "r.sqlite"
    with FakeServer(lambda body, n: Reply(status=400, body=ANSI.encode())) as srv:
        args = ["judge", str(manifest), "--backend", "openai", "--model", "m", "--base-url", srv.url,
                "--rubric", "ia", "--db", str(db), "--cache-dir", str(tmp_path / "cache"), "--no-progress"]
        res = CliRunner().invoke(app, args)
    assert res.exit_code == 1, res.output  # nothing was judged
    with ResultStore(db) as st:
        (row,) = st.rows()
    shown = "\\x1b]0;OWNED TITLE\\x07\\x1b[2J\\x1b[31mfake: all 500 items scored OK\\x1b[0m\\x9b\\x7f\\u202e"
    assert row.status == "error" and row.error is not None
    assert row.error.endswith(f"HTTP 400 from {srv.url}/chat/completions: {shown}")
    assert shown in res.output
    exported = CliRunner().invoke(cli_app, ["results", "export", "--db", str(db), "-o", "-"])
    assert exported.exit_code == 0, exported.output
    assert "HTTP 400" in exported.output
    for out in (res.output, exported.output, row.error):
        assert not any(ch in out for ch in "\x1b\x07\x9b\x7f\u202e"), out
