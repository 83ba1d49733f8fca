"""What the CLI prints is what it means: help texts and user text are never read as Rich markup, and
tables sent to a file are not cut.

Rich reads ``[word...]`` as a style tag: it dropped ``[default: ...]`` from 47 help texts and
``robojudge[ray]`` from an install hint, and a path such as ``take[/1]`` in an error message made the
command die with a ``MarkupError`` traceback instead of printing the error.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import typer
from rich.markup import RE_TAGS
from rich.text import Text
from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.cli._suite import app as suite_app
from robojudge.video import write_video

runner = CliRunner()


def _help_texts() -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []

    def walk(cmd: object, path: str) -> None:
        out.append((path, getattr(cmd, "help", None) or ""))
        for p in getattr(cmd, "params", []):
            out.append((f"{path} {p.name}", getattr(p, "help", None) or ""))
        for name, sub in getattr(cmd, "commands", {}).items():
            walk(sub, f"{path} {name}")

    walk(typer.main.get_command(build_app()), "robojudge")
    return out


def test_every_help_text_shows_whole() -> None:
    texts = _help_texts()
    assert len(texts) > 300  # every command and option was walked
    lost = []
    for where, text in texts:
        shown = Text.from_markup(text).plain
        if shown != text.replace("\\[", "["):
            lost.append((where, text, shown))
    assert not lost, lost[:5]
    # The check can fail: the texts still hold what Rich would have read as a tag, escaped.
    escaped = [t for _, t in texts if "\\[default" in t]
    assert len(escaped) > 40
    assert any(RE_TAGS.search(t.replace("\\[", "[")) for t in escaped)


def test_help_shows_defaults_and_the_install_hint() -> None:
    res = runner.invoke(build_app("score"), ["score", "--help"], env={"COLUMNS": "300"})
    assert res.exit_code == 0, res.output
    assert "[default: the run folder holding the manifest, else runs/<manifest name>]" in res.output
    assert "pip install '.[ray]' in a robojudge checkout" in res.output


def test_an_error_naming_a_bracketed_path_is_printed_not_raised(tmp_path: Path) -> None:
    missing = tmp_path / "take[/1]" / "suite[a].jsonl"
    res = runner.invoke(suite_app, ["validate", str(missing)])
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    assert res.exit_code == 1
    assert f"{missing}: manifest file not found" in res.output
    res = runner.invoke(build_app("score"), ["score", str(missing), "-m", "mq_flow_score"])
    assert res.exit_code == 2 and isinstance(res.exception, SystemExit)
    assert "take[/1]" in res.output and "suite[a].jsonl" in res.output


def test_bracketed_generator_names_are_printed_whole(tmp_path: Path) -> None:
    frames = (np.arange(4 * 16 * 16 * 3) % 251).astype(np.uint8).reshape(4, 16, 16, 3)
    video = tmp_path / "v" / "model[a]" / "ep[" / "1].mp4"  # item id model[a]/ep[/1]
    video.parent.mkdir(parents=True)
    write_video(video, frames, fps=4)
    out = tmp_path / "m.jsonl"
    res = runner.invoke(suite_app, ["scan", str(tmp_path / "v"), "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "generators: model[a] 1" in res.output
    assert "model[a]/ep[/1]" in res.output  # the item without an instruction, named in a note
    info = runner.invoke(suite_app, ["info", str(out)], env={"COLUMNS": "200"})
    assert info.exit_code == 0, info.output
    assert "model[a]" in info.output  # a table cell


def test_ids_with_emoji_codes_are_printed_whole(tmp_path: Path) -> None:
    # "wan:a:ep1" printed as "wan\U0001f170ep1" (Rich's emoji codes): an item id the file does not hold.
    manifest = tmp_path / "emo.jsonl"
    manifest.write_text('{"item_id": "wan:a:ep1", "video": "nope.mp4", "generator": "droid:100:x"}\n')
    res = runner.invoke(suite_app, ["validate", str(manifest)])
    assert "item 'wan:a:ep1'" in res.output and "\U0001f170" not in res.output
    (tmp_path / "nope.mp4").write_bytes(b"")
    info = runner.invoke(suite_app, ["info", str(manifest)], env={"COLUMNS": "200"})
    assert info.exit_code == 0, info.output
    assert "droid:100:x" in info.output and "\U0001f4af" not in info.output


def test_every_styled_line_asks_for_markup() -> None:
    """With markup off by default, a line written with tags must say markup=True, or it prints them."""
    import ast

    cli = Path(__file__).resolve().parents[2] / "src" / "robojudge" / "cli"
    styled, missing = 0, []
    for path in sorted(cli.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "print" and node.args):
                continue
            literal = " ".join(c.value for c in ast.walk(node.args[0])
                               if isinstance(c, ast.Constant) and isinstance(c.value, str))
            if not RE_TAGS.search(literal.replace("\\[", "")) or "[/" not in literal:
                continue
            styled += 1
            markup = next((k.value for k in node.keywords if k.arg == "markup"), None)
            if not (isinstance(markup, ast.Constant) and markup.value is True):
                missing.append(f"{path.name}:{node.lineno}")
    assert styled > 25  # the walk found the styled lines
    assert not missing, missing


def test_a_table_sent_to_a_file_keeps_whole_ids(tmp_path: Path) -> None:
    """Piped to a log, Rich drew tables 80 columns wide and cut ids ("rbg_reprojection_p…")."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    with open(tmp_path / "out.txt", "w") as out:
        subprocess.run([sys.executable, "-m", "robojudge", "metrics", "list"], stdout=out, env=env,
                       check=True, timeout=120)
    text = (tmp_path / "out.txt").read_text()
    assert "\u2026" not in text  # no cell is cut
    assert "rbg_reprojection_photometric" in text
    env["COLUMNS"] = "100"  # narrower than the table: it is printed wider rather than cut
    narrow = subprocess.run([sys.executable, "-m", "robojudge", "metrics", "list"], capture_output=True,
                            text=True, env=env, check=True, timeout=120).stdout
    assert "\u2026" not in narrow and "rbg_reprojection_photometric" in narrow


def test_db_help_gives_the_run_folder_default_store() -> None:
    # Review rev6 F4: the --db help of leaderboard *, select, report and audit still said the default
    # store was runs/<manifest name>/results.sqlite, though a manifest inside a run folder whose store
    # notes it reads that folder's store.
    texts = dict(_help_texts())
    new = "the store of the run folder the manifest lies in, else runs/<manifest name>/results.sqlite"
    for where in ("robojudge leaderboard generators db", "robojudge leaderboard judges db",
                  "robojudge leaderboard fps-ablation db", "robojudge select best-of-n db",
                  "robojudge report db", "robojudge report target", "robojudge audit acceleration store"):
        assert new in texts[where], where
    old = [w for w, t in texts.items() if "default: runs/<manifest" in t or "store is runs/<manifest" in t]
    assert not old, old
    res = runner.invoke(build_app("leaderboard"), ["leaderboard", "judges", "--help"], env={"COLUMNS": "300"})
    assert res.exit_code == 0 and f"[default: {new}]" in res.output, res.output
