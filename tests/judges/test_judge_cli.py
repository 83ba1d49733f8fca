"""``robojudge judge`` through typer, against the local fake server (the real judge group, on a test app)."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from _judge_cli import app
from _judge_server import FakeServer, Reply, user_text
from typer.testing import CliRunner

from robojudge.cli._judge import ENDPOINT_HELP, print_judge_summary
from robojudge.judges import JudgeConfig, ResponseCache
from robojudge.run import JudgeRunSummary, _score, judge_suite
from robojudge.store import ResultStore, export_results


@app.command("noop")
def _noop() -> None:  # a second command keeps "judge" a subcommand
    pass


def _reply(body: dict[str, Any], n: int) -> Reply:
    text = user_text(body)
    if "Still" in text or "could not be used" in text:
        return Reply("nope")
    if "ITEM:garbage" in text:
        return Reply("no idea")
    if "ITEM" in text:
        return Reply('{"reasoning": "done", "instruction_alignment": 5}')
    return Reply('```json\n{"reasoning": "stable", "physical_adherence": 4}\n```')


def _manifest(tmp_path: Path, make_items: Any) -> Path:
    items = make_items(["a", "b", "garbage"])
    path = tmp_path / "suite.jsonl"
    path.write_text(
        "".join(json.dumps(it.model_dump(exclude_none=True, exclude_defaults=True)) + "\n" for it in items)
    )
    return path


def test_cli_judges_file_resume_and_export(tmp_path: Path, make_items: Any) -> None:
    manifest = _manifest(tmp_path, make_items)
    db = tmp_path / "r.sqlite"
    runner = CliRunner()
    with FakeServer(_reply) as srv:
        (tmp_path / "judges.toml").write_text(
            f'[judges.fake]\nbackend = "openai"\nmodel = "fake-vl"\nbase_url = "{srv.url}"\nconcurrency = 2\n'
        )
        args = [
            "judge",
            str(manifest),
            "--judge",
            "fake",
            "--judges",
            str(tmp_path / "judges.toml"),
            "--rubric",
            "pa,ia",
            "--db",
            str(db),
            "--cache-dir",
            str(tmp_path / "c"),
            "--no-progress",
        ]
        res = runner.invoke(app, args)
        assert res.exit_code == 0, res.output
        assert "6 judgments: 5 scored, 1 unparsable, 0 failed" in res.output
        assert "parse-failure rate 16.7%" in res.output and "garbage / judge:fake:ia: unscored" in res.output
        sent = srv.count
        res = runner.invoke(app, args)
        assert res.exit_code == 0 and "6 already stored" in res.output and srv.count == sent
    with ResultStore(db) as st:
        n = export_results(st, tmp_path / "out.csv")
        assert [p for p, _ in st.manifests()] == [manifest.resolve()]  # `robojudge report` reads it
    rows = list(csv.DictReader((tmp_path / "out.csv").open()))
    assert n == 6 and {r["metric"] for r in rows} == {"judge:fake:pa", "judge:fake:ia"}
    bad = next(r for r in rows if r["item_id"] == "garbage" and r["metric"] == "judge:fake:ia")
    assert bad["value"] == "" and bad["status"] == "ok" and "unscored" in bad["error"]
    assert json.loads(bad["details"])["parse_status"] == "failed"


def test_cli_inline_judge(tmp_path: Path, make_items: Any) -> None:
    manifest = _manifest(tmp_path, make_items)
    with FakeServer(_reply) as srv:
        res = CliRunner().invoke(
            app,
            [
                "judge",
                str(manifest),
                "--backend",
                "openai",
                "--model",
                "org/Fake-VL-2B",
                "--base-url",
                srv.url,
                "--rubric",
                "pa",
                "--db",
                str(tmp_path / "r.sqlite"),
                "--cache-dir",
                str(tmp_path / "c"),
                "--concurrency",
                "3",
                "--max-frames",
                "4",
                "--no-progress",
            ],
        )
    assert res.exit_code == 0, res.output
    with ResultStore(tmp_path / "r.sqlite") as st:
        rows = st.rows()
    assert {r.metric for r in rows} == {"judge:Fake-VL-2B:pa"} and {r.value for r in rows} == {4.0}


def test_cli_judge_into_a_run_folder_says_how_to_report_it(tmp_path: Path, make_items: Any) -> None:
    manifest = _manifest(tmp_path, make_items)
    run = tmp_path / "my run"
    with FakeServer(_reply) as srv:
        res = CliRunner().invoke(app, ["judge", str(manifest), "--backend", "openai", "--model", "m",
                                       "--base-url", srv.url, "--rubric", "pa", "--run-dir", str(run),
                                       "--no-cache", "--no-progress"])
    assert res.exit_code == 0, res.output
    assert f"report: robojudge report '{run}'" in res.output
    with ResultStore(run / "results.sqlite", read_only=True) as st:
        assert [p for p, _ in st.manifests()] == [manifest.resolve()]


def test_cli_several_base_urls_make_a_fleet(tmp_path: Path, make_items: Any) -> None:
    """Repeated --base-url: one judge over both servers, --concurrency per server, the same result ids."""
    manifest = _manifest(tmp_path, make_items)
    with FakeServer(_reply) as a, FakeServer(_reply) as b:
        res = CliRunner().invoke(app, [
            "judge", str(manifest), "--backend", "openai", "--model", "org/Fake-VL-2B",
            "--base-url", a.url, "--base-url", b.url, "--concurrency", "1", "--rubric", "pa,ia",
            "--db", str(tmp_path / "r.sqlite"), "--cache-dir", str(tmp_path / "c"), "--max-frames", "4",
            "--no-progress"])
        assert res.exit_code == 0, res.output
        assert a.count > 0 and b.count > 0 and a.max_in_flight <= 1 and b.max_in_flight <= 1
        for srv in (a, b):  # each server's share is reported at the end of the run
            assert f"endpoint {srv.url}: {srv.count} sent, {srv.count} answered, 0 failed" in res.output
    with ResultStore(tmp_path / "r.sqlite") as st:
        assert {r.metric for r in st.rows()} == {"judge:Fake-VL-2B:pa", "judge:Fake-VL-2B:ia"}
    res = CliRunner().invoke(app, ["judge", str(manifest), "--backend", "openai", "--model", "m",
                                   "--base-url", "http://127.0.0.1:9/v1", "--base-url", "http://127.0.0.1:9/v1"])
    assert res.exit_code == 2 and "named twice" in res.output


def test_cli_token_limit_field_names_the_field_the_limit_goes_out_in(tmp_path: Path, make_items: Any) -> None:
    """--token-limit-field with --max-tokens: inline, and over a declared judge's own field."""
    manifest = _manifest(tmp_path, make_items)
    (tmp_path / "j.toml").write_text('[judges.o]\nmodel = "m"\nbase_url = "http://127.0.0.1:9/v1"\n'
                                     '[judges.o.sampling]\ntoken_limit_field = "max_completion_tokens"\n')
    with FakeServer(_reply) as srv:
        for n, how in enumerate((["--backend", "openai", "--model", "m", "--token-limit-field",
                                  "max_completion_tokens"],
                                 ["--judge", "o", "--judges", str(tmp_path / "j.toml"), "--token-limit-field",
                                  "max_tokens"])):
            res = CliRunner().invoke(app, ["judge", str(manifest), *how, "--base-url", srv.url,
                                           "--max-tokens", "333", "--rubric", "pa", "--db",
                                           str(tmp_path / f"r{n}.sqlite"), "--no-cache", "--no-progress"])
            assert res.exit_code == 0, res.output
        bodies = srv.bodies
    first, second = len([b for b in bodies if "max_completion_tokens" in b]), len(bodies)
    assert 0 < first < second
    for body in bodies[:first]:
        assert body["max_completion_tokens"] == 333 and "max_tokens" not in body
    for body in bodies[first:]:
        assert body["max_tokens"] == 333 and "max_completion_tokens" not in body
    res = CliRunner().invoke(app, ["judge", str(manifest), "--backend", "openai", "--model", "m",
                                   "--token-limit-field", "max_output"])
    assert res.exit_code == 2 and "--token-limit-field" in res.output


def test_cli_errors_are_one_line(tmp_path: Path, make_items: Any) -> None:
    manifest = _manifest(tmp_path, make_items)
    runner = CliRunner()
    res = runner.invoke(
        app, ["judge", str(manifest), "--judge", "x", "--judges", str(tmp_path / "none.toml")]
    )
    assert res.exit_code == 2 and "no judges file" in res.output
    (tmp_path / "blank.toml").write_text("# nothing yet\n")  # (it said "unknown judge 'x'. (declared in")
    res = runner.invoke(app, ["judge", str(manifest), "--judge", "x", "--judges",
                              str(tmp_path / "blank.toml")])
    assert res.exit_code == 2, res.output
    said = " ".join(res.output.split())
    assert "blank.toml declares no judges: declare judge 'x' as a [judges.x] table" in said
    res = runner.invoke(app, ["judge", str(manifest), "--backend", "mock", "--model", "m", "--rubric", "pz"])
    assert res.exit_code == 2 and "Did you mean 'pa'" in res.output
    assert "vllm serve" in ENDPOINT_HELP


def test_cli_limits_flags_and_breaker_said_once(tmp_path: Path, make_items: Any) -> None:
    items = make_items([f"item{i}" for i in range(12)])
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps(it.model_dump(exclude_none=True)) + "\n" for it in items))
    base = ["judge", str(manifest), "--backend", "openai", "--model", "m", "--rubric", "pa"]
    base += ["--cache-dir", str(tmp_path / "c"), "--no-progress", "--concurrency", "2"]
    with FakeServer(lambda body, n: Reply("down", status=503)) as srv:
        res = CliRunner().invoke(
            app,
            [*base, "--base-url", srv.url, "--db", str(tmp_path / "a.sqlite"), "--circuit-breaker", "3",
             "--timeout", "2", "--deadline", "5"],
        )
        sent = srv.count
    assert res.exit_code == 1, res.output  # nothing was judged
    assert sent <= 3 + 2 and "12 failed" in res.output
    assert res.output.count("circuit breaker open") == 1  # one line, not one per item
    assert "judgments stopped by the circuit breaker" in res.output
    big = {"choices": [{"message": {"content": "x" * 10_000}}]}
    with FakeServer(lambda body, n: Reply(raw=big)) as srv:
        args = [*base, "--base-url", srv.url, "--db", str(tmp_path / "b.sqlite"), "--max-reply-bytes", "4096"]
        res = CliRunner().invoke(app, args)
    assert res.exit_code == 1, res.output  # every reply refused: nothing was judged
    assert "reply larger than 4 KiB" in res.output and "12 failed" in res.output


def test_the_judge_summary_keeps_the_first_failures_and_counts_them_all(
    tmp_path: Path, make_items: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A judge run kept every unscored, failed and breaker-stopped row in its summary (about 1.6 KB each,
    to print 20 of them); it keeps the first KEPT_ERRORS now, and the CLI still counts them all."""
    monkeypatch.setattr(_score, "KEPT_ERRORS", 3)
    items = make_items([f"item{i}" for i in range(7)])
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps(it.model_dump(exclude_none=True)) + "\n" for it in items))

    def run(reply: Reply, name: str, **config: Any) -> JudgeRunSummary:
        with FakeServer(lambda body, n: reply) as srv:
            judge = JudgeConfig(name="m", backend="openai", model="m", base_url=srv.url, **config)
            return judge_suite(manifest, judge, "pa", db=str(tmp_path / f"{name}.sqlite"),
                               cache=ResponseCache(tmp_path / name)).summary

    summary = run(Reply("no score in this reply"), "a")
    assert (summary.unscored, len(summary.errors)) == (7, 3)
    print_judge_summary("m", summary, max_errors=2)
    assert "... and 5 more (see `robojudge results export`)" in capsys.readouterr().out
    # Rows the breaker stopped are counted, not kept: they all carry its one message.
    summary = run(Reply("down", status=503), "b", circuit_breaker=2, timeout_s=2, concurrency=1)
    assert summary.failed == 7 and summary.breaker_stopped >= 4
    assert len(summary.errors) == summary.failed - summary.breaker_stopped <= 3
    assert not any(r.error and r.error.endswith(str(summary.stats.stopped)) for r in summary.errors)
    print_judge_summary("m", summary)
    out = capsys.readouterr().out
    assert f"{summary.breaker_stopped} judgments stopped by the circuit breaker" in out
    assert "more (see" not in out


def test_judge_group_runs_a_suite_or_a_sub_command(
    tmp_path: Path, make_items: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``judge SUITE`` judges with options before or after the SUITE, ``judge rubrics`` lists, and an
    argument spelled like the hidden default command's name is still read as the SUITE."""
    runner = CliRunner()
    res = runner.invoke(app, ["judge", "rubrics"])
    assert res.exit_code == 0 and "Physical Adherence" in res.output
    manifest = _manifest(tmp_path, make_items)
    with FakeServer(_reply) as srv:
        inline = ["--backend", "openai", "--model", "m", "--base-url", srv.url, "--rubric", "pa",
                  "--db", str(tmp_path / "r.sqlite"), "--no-cache", "--no-progress"]
        res = runner.invoke(app, ["judge", *inline, str(manifest)])
        assert res.exit_code == 0, res.output
        assert "3 judgments: 3 scored" in res.output
        res = runner.invoke(app, ["judge", str(manifest), *inline])
        assert res.exit_code == 0 and "3 already stored" in res.output, res.output
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["judge", "suite", *inline])
    assert res.exit_code == 2 and "Missing argument" not in res.output
    assert "suite" in res.output  # the manifest error names the file it could not read
    help_text = runner.invoke(app, ["judge", "--help"]).output
    assert "SUITE" in help_text and "--rubric" in help_text and "judge rubrics" in help_text
    usage = runner.invoke(app, ["judge"])
    assert usage.exit_code == 2 and "Missing argument" in usage.output
    assert "judge [OPTIONS]" in usage.output and "judge suite" not in usage.output  # the hidden name


def test_cli_samples_frames_as_frame_spec_s_defaults(tmp_path: Path, make_items: Any) -> None:
    """RoboJudge App. B.1 (4 fps, at most 32 frames) is FrameSpec's default; `judge` has its own --fps and
    --max-frames defaults, which must build the same spec (the stored config says what was sent)."""
    from robojudge.judges import FrameSpec

    manifest = _manifest(tmp_path, make_items)
    reply = '{"reasoning": "r", "physical_adherence": 4, "instruction_alignment": 4}'
    toml = tmp_path / "judges.toml"
    toml.write_text(f'[judges.mk]\nbackend = "mock"\nmodel = "m"\nreplies = [{reply!r}]\n')
    res = CliRunner().invoke(app, ["judge", str(manifest), "--judges", str(toml), "--judge", "mk",
                                   "--db", str(tmp_path / "r.sqlite"), "--no-cache", "--no-progress"])
    assert res.exit_code == 0, res.output
    with ResultStore(tmp_path / "r.sqlite", read_only=True) as store:
        frames = [r.config["frames"] for r in store.rows()]
    assert frames and all(f == FrameSpec().as_dict() for f in frames), frames
    assert (FrameSpec().fps, FrameSpec().max_frames) == (4.0, 32)
