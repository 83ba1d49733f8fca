"""An option that takes one value, given twice, is refused before anything runs.

Before, click kept the last value: ``judge SUITE --judge mk --judge mk2`` judged with mk2 only and
``meta agreement --pred a.csv --pred b.csv`` compared the judges of b.csv only, both without a word.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import typer.main
from typer.testing import CliRunner

from _meta_csvs import write_agreement_csvs
from robojudge.cli import COMMANDS, build_app
from robojudge.cli._once import OnceCommand, OnceGroup
from robojudge.video import write_video

REPLY = '{"reasoning": "r", "physical_adherence": 3, "instruction_alignment": 4}'
runner = CliRunner()


def _run(command: str, *args: str):
    return runner.invoke(build_app(command), [command, *args])


def test_a_second_judge_is_refused_and_nothing_is_judged(tmp_path: Path) -> None:
    write_video(tmp_path / "v.mp4", np.full((6, 32, 32, 3), 90, np.uint8), fps=4)
    suite = tmp_path / "suite.jsonl"
    suite.write_text(json.dumps({"item_id": "i0", "video": "v.mp4", "instruction": "push the block"}) + "\n")
    judges = tmp_path / "judges.toml"
    judges.write_text("".join(f"[judges.{n}]\nbackend = \"mock\"\nreplies = ['{REPLY}']\n"
                              for n in ("mk", "mk2")))
    db = tmp_path / "r.sqlite"
    done = _run("judge", str(suite), "--judges", str(judges), "--judge", "mk", "--judge", "mk2",
                "--rubric", "pa", "--db", str(db))
    assert done.exit_code == 2, done.output
    assert "error: --judge given 2 times: it takes one value" in done.stderr
    assert not db.exists()  # (it judged with mk2 alone)
    # the advice for a list option is one comma-separated list, not a run per value (which would send
    # every request twice: review s69_review2 2)
    rubrics = _run("judge", str(suite), "--judges", str(judges), "--judge", "mk", "--rubric", "pa",
                   "--rubric", "ia", "--db", str(db))
    assert rubrics.exit_code == 2 and "--rubric a,b" in " ".join(rubrics.stderr.split())
    once = _run("judge", str(suite), "--judges", str(judges), "--judge", "mk2", "--rubric", "pa",
                "--db", str(db))
    assert once.exit_code == 0 and "1 scored" in once.output, once.output


def test_a_second_prediction_file_is_refused(tmp_path: Path) -> None:
    pred, human = write_agreement_csvs(tmp_path)
    other = tmp_path / "other.csv"
    other.write_text(pred.read_text().replace("good,", "third,").replace("bad,", "fourth,"))
    done = _run("meta", "agreement", "--pred", str(pred), "--pred", str(other), "--human", str(human),
                "--bootstrap", "0", "--json")
    assert done.exit_code == 2 and done.stdout == "", done.output  # (it printed third and fourth only)
    assert "--pred given 2 times" in done.stderr


def test_repeats_of_a_store_or_an_equals_form_are_refused_and_flags_are_not(tmp_path: Path) -> None:
    done = _run("results", "export", "--db", "a.sqlite", "--db=b.sqlite", "--out", str(tmp_path / "x.csv"))
    assert done.exit_code == 2 and "--db given 2 times" in done.stderr, done.output
    # flags keep "the last one wins" (--progress then --no-progress); a missing store is the only error
    flags = _run("score", str(tmp_path / "none.jsonl"), "-m", "iq1_psnr", "--progress", "--no-progress")
    assert flags.exit_code == 2 and "given 2 times" not in flags.output, flags.output


def test_every_command_and_group_refuses_repeats() -> None:
    def walk(cmd):
        yield cmd
        for sub in getattr(cmd, "commands", {}).values():
            yield from walk(sub)

    every = list(walk(typer.main.get_command(build_app())))
    assert len(every) > len(COMMANDS)
    plain = [c.name for c in every if not isinstance(c, OnceCommand | OnceGroup)]
    assert plain == []
