"""Draft labels from several judges (RoboJudge App. A.2): averaging, store reading, the CLI."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from _limits import file_size_limit
from robojudge.cli import main
from robojudge.judges import get_rubric, make_judge
from robojudge.judges._draft import JudgeOpinion, draft_labels, draft_score
from robojudge.run._judge import draft_from_rows, draft_from_store, judge_items, judge_texts, texts_from_rows
from robojudge.store import ResultRow, ResultStore


def test_mean_rounded_half_up_with_spread() -> None:
    d = draft_score({"a": JudgeOpinion(4, "ok"), "b": JudgeOpinion(5), "c": JudgeOpinion(2, "melts")})
    # mean (4 + 5 + 2) / 3 = 3.667 -> 4; spread 5 - 2 = 3
    assert d.label == 4 and d.mean == pytest.approx(11 / 3) and d.spread == 3 and d.n_judges == 3
    assert d.judges["c"] == {"score": 2.0, "reasoning": "melts"}
    # (3 + 4) / 2 = 3.5 -> 4 (halves up)
    assert draft_score({"a": JudgeOpinion(3), "b": JudgeOpinion(4)}).label == 4


def test_unscored_judges_are_left_out() -> None:
    d = draft_score({"a": JudgeOpinion(math.nan, "garbage"), "b": JudgeOpinion(2), "c": JudgeOpinion(None)})
    assert (d.label, d.mean, d.n_judges) == (2, 2.0, 1)
    assert d.judges["a"]["score"] is None and d.judges["a"]["reasoning"] == "garbage"
    short = draft_score({"a": JudgeOpinion(2), "b": JudgeOpinion(math.nan)}, min_judges=2)
    assert short.label is None and short.mean == 2 and "only 1 of the required 2" in (short.note or "")
    none = draft_score({})
    assert none.label is None and none.note == "no judge gave a score"


def test_label_clipped_to_range() -> None:
    # 0-3 scale: mean of 3 and 3 is 3 -> stays 3; mean 0.4 -> 0
    assert draft_score({"a": JudgeOpinion(3), "b": JudgeOpinion(3)}, (0, 3)).label == 3
    assert draft_score({"a": JudgeOpinion(0.4)}, (0, 3)).label == 0


def test_draft_labels_missing_rubric() -> None:
    out = draft_labels({"x": {"pa": {"a": JudgeOpinion(5)}}}, ["pa", "ia"])
    assert out["x"]["pa"].label == 5 and out["x"]["ia"].label is None


def _run_three_judges(items: Any, store: ResultStore, cache: Any) -> None:
    # per judge: (PA reply, IA reply); judge c writes garbage for IA twice -> unscored
    replies = {
        "a": [
            '{"reasoning": "a-pa", "physical_adherence": 4}',
            '{"reasoning": "a-ia", "instruction_alignment": 2}',
        ],
        "b": [
            '{"reasoning": "b-pa", "physical_adherence": 5}',
            '{"reasoning": "b-ia", "instruction_alignment": 3}',
        ],
        "c": ['{"reasoning": "c-pa", "physical_adherence": 2}', "no idea"],
    }
    for name, (pa, ia) in replies.items():
        for rubric, reply in (("pa", pa), ("ia", ia)):
            j = make_judge({"name": name, "backend": "mock", "model": f"m-{name}", "replies": [reply]})
            judge_items(items, j, [get_rubric(rubric)], store, cache=cache)


def test_draft_from_store_and_cli(make_items: Any, store: ResultStore, cache: Any, tmp_path: Path) -> None:
    _run_three_judges(make_items(["v1", "v2"]), store, cache)
    drafts = draft_from_store(store, ["a", "b", "c"])
    assert set(drafts) == {"v1", "v2"}
    pa, ia = drafts["v1"]["pa"], drafts["v1"]["ia"]
    assert pa.label == 4 and pa.mean == pytest.approx(11 / 3)  # (4 + 5 + 2) / 3
    assert ia.label == 3 and ia.mean == 2.5 and ia.n_judges == 2  # (2 + 3) / 2 = 2.5 -> 3; c unscored
    assert ia.judges["c"]["score"] is None and pa.judges["c"]["reasoning"] == "c-pa"
    with pytest.raises(ValueError, match="judge 'zz' has no stored rows"):
        draft_from_store(store, ["a", "zz"])

    out = tmp_path / "drafts.jsonl"
    with pytest.raises(SystemExit) as exc:
        main(
            ["judge", "draft", "--judges", "a,b,c", "--db", store.url, "--out", str(out), "--min-judges", "3"]
        )
    assert exc.value.code == 0
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["item_id"] for r in lines] == ["v1", "v2"]
    assert lines[0]["pa"]["label"] == 4 and lines[0]["ia"]["label"] is None  # only 2 of 3 judges for IA
    assert lines[0]["pa"]["judges"]["b"] == {"score": 5.0, "reasoning": "b-pa"}

    with pytest.raises(SystemExit) as exc:
        main(["judge", "draft", "--judges", "nobody", "--db", store.url, "--out", str(out)])
    assert exc.value.code == 2


def test_texts_cli(make_items: Any, store: ResultStore, cache: Any, tmp_path: Path) -> None:
    j = make_judge(
        {"name": "cap", "backend": "mock", "model": "m", "replies": ['{"caption": "stack the cups"}']}
    )
    judge_items(make_items(["v1"]), j, [get_rubric("caption")], store, cache=cache)
    out = tmp_path / "captions.jsonl"
    with pytest.raises(SystemExit) as exc:
        main(["judge", "texts", "--judge", "cap", "--db", store.url, "--out", str(out)])
    assert exc.value.code == 0
    assert json.loads(out.read_text()) == {"item_id": "v1", "caption": "stack the cups"}


def test_rubrics_cli(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["judge", "rubrics"])
    assert exc.value.code == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines() if line.strip()}
    assert "checks 0-1 -> eaa_event_editing" in lines["eaa_event_editing"]
    assert "needs the instruction" in lines["eaa_event_editing"]
    assert "label 1-3" in lines["roboworm_physics"] and "needs" not in lines["pa"]


def test_root_options_before_judge_subcommands(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import logging

    levels: list[int] = []
    monkeypatch.setattr(logging, "basicConfig", lambda **kw: levels.append(kw["level"]))
    with pytest.raises(SystemExit) as exc:
        main(["-v", "judge", "rubrics"])
    assert exc.value.code == 0 and levels == [logging.DEBUG]  # -v was applied, not dropped
    assert "eaa_event_editing" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        main(["--version", "judge", "rubrics"])  # eager, as on any other command: prints and exits 0
    assert exc.value.code == 0
    assert capsys.readouterr().out.startswith("robojudge ")
    with pytest.raises(SystemExit) as exc:
        main(["--bogus", "judge", "rubrics"])  # unknown root option: the full parser rejects it
    assert exc.value.code == 2


def test_texts_past_the_size_limit_keep_the_old_file(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    with ResultStore(tmp_path / "results.sqlite") as store:
        store.add([ResultRow(f"v{k:03d}", "judge:cap:caption", "h", "1", "ok", math.nan,
                             details={"text": f"caption {k} " + "x" * 500}) for k in range(100)])
        url = store.url
    out = tmp_path / "captions.jsonl"
    out.write_text('{"item_id": "v000", "caption": "old"}\n')
    with file_size_limit(40_000), pytest.raises(SystemExit) as exc:  # 100 lines of 530 bytes
        main(["judge", "texts", "--judge", "cap", "--db", url, "--out", str(out)])
    # Before: a traceback, and a captions.jsonl of 75 whole lines and a cut one, which sa_bleu failed on.
    assert exc.value.code == 2
    assert f"cannot write {out}: File too large" in capsys.readouterr().err
    assert out.read_text() == '{"item_id": "v000", "caption": "old"}\n'
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_the_rows_written_last_win_whatever_the_hosts_clocks_said(store_url: str) -> None:
    url = store_url
    ahead, right = datetime.now(UTC) + timedelta(hours=1), datetime.now(UTC)
    with ResultStore(url) as store:
        for config, when, text, pa in (("old", ahead, "OLD text", 2.0), ("new", right, "NEW text", 5.0)):
            store.add([ResultRow(f"v{k}", metric, config, "1", "ok", value, details=details, created_at=when)
                       for k in range(2)
                       for metric, value, details in (("judge:cap:caption", math.nan, {"text": text}),
                                                      ("judge:cap:pa", pa, {"reasoning": text}))])
        # Two configurations are never mixed item by item: the store readers refuse them (CLI audit F5)...
        with pytest.raises(ValueError, match=r"judge:cap:caption is stored under 2 configurations"):
            judge_texts(store, "judge:cap:caption")
        with pytest.raises(ValueError, match=r"judge:cap:pa is stored under 2 configurations"):
            draft_from_store(store, ["cap"], rubrics=("pa",))
        # ... and of rows given, the row written last counts. Before: the rows with the greater created_at
        # won: those of the host whose clock ran an hour ahead, though they were written first.
        texts = [r for r in store.rows(metric="judge:cap:caption")]
        pas = [r for r in store.rows(metric="judge:cap:pa")]
    assert texts_from_rows(texts) == {"v0": "NEW text", "v1": "NEW text"}
    drafts = draft_from_rows({"cap": pas}, rubrics=("pa",))
    assert {item: d["pa"].label for item, d in drafts.items()} == {"v0": 5, "v1": 5}


@pytest.mark.postgres
def test_no_stored_texts_names_the_store_without_its_password(
    postgres_db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from sqlalchemy.engine import make_url

    url = make_url(postgres_db_url).set(password="s3cretpw").update_query_dict({"sslpassword": "k3ypw"})
    given = url.render_as_string(hide_password=False)  # (trust auth ignores the password)
    ResultStore(given).close()
    with pytest.raises(SystemExit) as exc:
        main(["judge", "texts", "--judge", "cap", "--db", given])
    assert exc.value.code == 2
    err = " ".join(capsys.readouterr().err.split())
    # Before, the message quoted --db as typed, password and all.
    assert "no stored texts for judge:cap:caption in postgresql+psycopg://postgres:***@" in err
    assert "s3cretpw" not in err and "k3ypw" not in err
