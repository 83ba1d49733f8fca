"""Where a judge comes from and where its key goes, said before any request.

A ``robojudge.toml`` is read from the current folder when ``--judges`` is not given, so one that came
with a downloaded suite could declare ``gpt4o`` with its own server and ``api_key_env = "HF_TOKEN"``:
``robojudge judge`` sent the user's Hugging Face token and the frames there without a word.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer
from _judge_cli import app
from _judge_server import FakeServer, Reply
from typer.testing import CliRunner

from robojudge.cli._leaderboard import fps_ablation
from robojudge.cli._suite import prompts_cmd
from robojudge.judges import key_warnings, make_judge


@app.command("noop")
def _noop() -> None:  # a second command keeps "judge" a subcommand
    pass


def _judge(**values: Any) -> Any:
    return make_judge({"name": "j", "model": "m", **values})


def test_judge_from_the_current_folder_is_named_with_its_host_and_key_variable(
    tmp_path: Path, make_items: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    items = make_items(["a"])
    suite = tmp_path / "downloaded"
    suite.mkdir()
    (suite / "suite.jsonl").write_text("".join(json.dumps(it.model_dump(exclude_none=True)) + "\n"
                                               for it in items))
    monkeypatch.setenv("HF_TOKEN", "hf_user_secret_token")
    monkeypatch.chdir(suite)
    with FakeServer(lambda body, n: Reply('{"reasoning": "r", "physical_adherence": 3}')) as srv:
        (suite / "robojudge.toml").write_text(
            f'[judges.gpt4o]\nbackend = "openai"\nmodel = "gpt-4o"\nbase_url = "{srv.url}"\n'
            'api_key_env = "HF_TOKEN"\n'
        )
        res = CliRunner().invoke(app, ["judge", "suite.jsonl", "--judge", "gpt4o", "--rubric", "pa", "--db",
                                       str(tmp_path / "r.sqlite"), "--cache-dir", str(tmp_path / "c"),
                                       "--no-progress"])
    assert res.exit_code == 0, res.output
    host = srv.url.removesuffix("/v1")
    said = res.stderr.splitlines()
    assert said[0] == (f"judge 'gpt4o' from robojudge.toml in the current folder ({suite}; the default of "
                       f"--judges): sends to {host}, key read from HF_TOKEN")
    # 127.0.0.1 is this machine: neither plain http:// nor HF_TOKEN sent there is warned of (a secret
    # sent elsewhere is: test_every_command_that_sends_judge_requests_says_it, test_key_warnings)
    assert "warning" not in res.stderr
    assert srv.count == 1


def test_a_judges_file_given_by_its_default_name_is_not_called_the_default(
    tmp_path: Path, make_items: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `--judges robojudge.toml` given was said to be "the default of --judges": the path was compared
    items = make_items(["a"])
    (tmp_path / "suite.jsonl").write_text(json.dumps(items[0].model_dump(exclude_none=True)) + "\n")
    (tmp_path / "robojudge.toml").write_text('[judges.mk]\nbackend = "mock"\n'
                                             'replies = [\'{"reasoning": "r", "physical_adherence": 2}\']\n')
    monkeypatch.chdir(tmp_path)
    common = ["suite.jsonl", "--judge", "mk", "--rubric", "pa", "--db", str(tmp_path / "r.sqlite"),
              "--no-cache", "--no-progress"]
    given = CliRunner().invoke(app, ["judge", *common, "--judges", "robojudge.toml"])
    assert given.exit_code == 0, given.output
    said = given.stderr.splitlines()[0]
    assert said == "judge 'mk' from robojudge.toml: mock backend, runs in this process"
    by_default = CliRunner().invoke(app, ["judge", *common])
    assert by_default.exit_code == 0, by_default.output
    assert by_default.stderr.splitlines()[0] == (
        f"judge 'mk' from robojudge.toml in the current folder ({tmp_path}; the default of --judges): mock "
        "backend, runs in this process")


def test_a_judges_file_given_and_an_inline_judge(tmp_path: Path, make_items: Any) -> None:
    items = make_items(["a"])
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text(json.dumps(items[0].model_dump(exclude_none=True)) + "\n")
    judges = tmp_path / "judges.toml"
    judges.write_text('[judges.mk]\nbackend = "mock"\n'
                      'replies = [\'{"reasoning": "r", "physical_adherence": 2}\']\n')
    common = ["--rubric", "pa", "--db", str(tmp_path / "r.sqlite"), "--no-cache", "--no-progress"]
    res = CliRunner().invoke(app, ["judge", str(manifest), "--judge", "mk", "--judges", str(judges), *common])
    assert res.exit_code == 0, res.output
    assert res.stderr.splitlines()[0] == f"judge 'mk' from {judges}: mock backend, runs in this process"
    # inline: the command line says where it sends; only a warning would be printed
    with FakeServer(lambda body, n: Reply('{"reasoning": "r", "physical_adherence": 3}')) as srv:
        res = CliRunner().invoke(app, ["judge", str(manifest), "--backend", "openai", "--model", "m",
                                       "--base-url", srv.url, *common])
    assert res.exit_code == 0, res.output
    assert res.stderr == ""


@pytest.mark.parametrize("command", ["prompts", "fps-ablation"])
def test_every_command_that_sends_judge_requests_says_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_user_secret")
    (tmp_path / "robojudge.toml").write_text(
        '[judges.lm]\nbackend = "openai"\nmodel = "m"\nbase_url = "http://10.1.2.3:8000/v1"\n'
        'api_key_env = "GITHUB_TOKEN"\n'
    )
    cli = typer.Typer()
    cli.command("prompts")(prompts_cmd)
    cli.command("fps-ablation")(fps_ablation)
    args = ["missing.jsonl", "--judge", "lm"] + (["--out", "p.jsonl"] if command == "prompts" else [])
    res = CliRunner().invoke(cli, [command, *args])
    assert res.exit_code != 0  # the manifest is missing: said after the judge
    said = res.stderr.splitlines()
    assert said[0].startswith("judge 'lm' from robojudge.toml in the current folder")
    assert said[0].endswith("sends to http://10.1.2.3:8000, key read from GITHUB_TOKEN")
    assert said[1] == ("warning: judge 'lm' sends the key in GITHUB_TOKEN over plain http:// to "
                       "http://10.1.2.3:8000, which is not this machine: anyone on the way can read it "
                       "(use https://)")
    assert said[2].startswith("warning: judge 'lm' sends GITHUB_TOKEN, a GitHub secret, as its API key")


HF, LAN = "HUGGING_FACE_HUB_TOKEN", "http://10.0.0.1:8000/v1"


@pytest.mark.parametrize(
    ("base_url", "variable", "warned"),
    [
        # plain http:// away from this machine, with a key or credentials in the URL
        (LAN, "VLLM_API_KEY", ["the key in VLLM_API_KEY"]),
        ("http://u:pw@judge.lan/v1", None, ["the credentials in its URL"]),
        ("http://127.0.0.1:8000/v1", "VLLM_API_KEY", []),
        ("http://127.0.0.2/v1", "VLLM_API_KEY", []),
        ("http://localhost:8000/v1", "VLLM_API_KEY", []),
        ("http://[::1]/v1", "VLLM_API_KEY", []),
        ("http://0.0.0.0:8000/v1", "VLLM_API_KEY", []),  # this machine, as a client connects to it
        ("http://[::]:8000/v1", "VLLM_API_KEY", []),
        (LAN, None, []),  # no key, nothing to read on the way
        ("https://api.openai.com/v1", "OPENAI_API_KEY", []),
        # another service's secret, for a host that is not that service
        ("https://evil.example/v1", "HF_TOKEN", ["HF_TOKEN"]),
        ("https://router.huggingface.co/v1", "HF_TOKEN", []),
        ("https://huggingface.co.evil.example/v1", HF, [HF]),
        ("https://models.github.ai/inference", "GH_TOKEN", []),
        ("https://x.example/v1", "GITHUB_TOKEN", ["GITHUB_TOKEN"]),
        ("https://x.example/v1", "AWS_SECRET_ACCESS_KEY", ["AWS_SECRET_ACCESS_KEY"]),
        ("https://bedrock-runtime.us-east-1.amazonaws.com/v1", "AWS_SESSION_TOKEN", []),
        ("https://me.openai.azure.com/openai", "AZURE_OPENAI_API_KEY", []),
        ("https://x.example/v1", "AZURE_OPENAI_API_KEY", ["AZURE_OPENAI_API_KEY"]),
        ("https://x.example/v1", "GCP_KEY", ["GCP_KEY"]),
        ("https://x.example/v1", "GOOGLE_APPLICATION_CREDENTIALS", ["GOOGLE_APPLICATION_CREDENTIALS"]),
        ("https://x.example/v1", "SSH_AUTH_SOCK", ["SSH_AUTH_SOCK"]),
        # on this machine a secret is not warned of: a local TGI with HF_TOKEN, a local proxy
        ("http://127.0.0.1:8080", "HF_TOKEN", []),
        ("http://localhost:8000/v1", "OPENAI_API_KEY", []),
        ("http://0.0.0.0:8000/v1", "GITHUB_TOKEN", []),
        ("https://127.0.0.1/v1", "SSH_AUTH_SOCK", []),
        # a judge provider's own key, sent to a host that is not that provider's
        ("https://evil.example/v1", "OPENAI_API_KEY", ["OPENAI_API_KEY"]),
        ("https://api.openai.com.evil.example/v1", "OPENAI_API_KEY", ["OPENAI_API_KEY"]),
        ("http://10.0.0.1:8000/v1", "OPENAI_API_KEY", ["the key in OPENAI_API_KEY", "OPENAI_API_KEY"]),
        ("https://evil.example/v1", "ANTHROPIC_API_KEY", ["ANTHROPIC_API_KEY"]),
        ("https://api.anthropic.com/v1", "ANTHROPIC_API_KEY", []),
        ("https://evil.example/v1", "GEMINI_API_KEY", ["GEMINI_API_KEY"]),
        ("https://evil.example/v1", "GOOGLE_API_KEY", ["GOOGLE_API_KEY"]),
        ("https://generativelanguage.googleapis.com/v1beta/openai", "GEMINI_API_KEY", []),
        ("https://evil.example/v1", "MISTRAL_API_KEY", ["MISTRAL_API_KEY"]),
        ("https://api.mistral.ai/v1", "MISTRAL_API_KEY", []),
    ],
)
def test_key_warnings(base_url: str, variable: str | None, warned: list[str]) -> None:
    got = key_warnings(_judge(base_url=base_url, api_key_env=variable))
    assert [w.split(" sends ", 1)[1].split(",")[0].split(" over ")[0] for w in got] == warned


def test_key_warnings_of_a_fleet_and_of_a_judge_in_this_process() -> None:
    fleet = [{"base_url": "https://a.hf.space/v1"}, {"base_url": "http://10.0.0.9/v1"}]
    got = key_warnings(_judge(endpoints=fleet, api_key_env="HF_TOKEN"))
    assert len(got) == 2 and "http://10.0.0.9" in got[0]  # each endpoint on its own
    assert got[1].endswith("to http://10.0.0.9, which is not Hugging Face: check the judges file, and give "
                           "the judge a variable of its own")
    assert key_warnings(_judge(backend="mock", api_key_env="HF_TOKEN")) == []  # sends nothing anywhere
