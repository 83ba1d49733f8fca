"""Files the commands write are the old file or the whole new one: a write stopped half-way (a full
disk; here a file-size limit, which fails ``write()`` as a full disk does) leaves the old file as it was
and no hidden temporary file beside it. Before, these files were written in place and left cut short
under their final names, looking whole to whatever read them next.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from _limits import file_size_limit, snapshot
from robojudge.cli import build_app, main
from robojudge.metrics._doc import TABLE_END, TABLE_START
from robojudge.metrics._sets import SetRow, write_set_rows

runner = CliRunner()
OLD = "the old file\n"


def _set_rows(n: int) -> list[SetRow]:
    return [SetRow("fvd_proxy", f"group:generator=g{k}", None, "ok", 0.5 + k, n_items=3,
                   details={"note": "x" * 200}) for k in range(n)]


@pytest.mark.parametrize("name", ["sets.csv", "sets.jsonl"])
def test_set_rows_keep_the_old_file_when_the_write_fails(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text(OLD)
    with file_size_limit(2_000), pytest.raises(OSError):
        write_set_rows(_set_rows(40), path)  # about 12 kB
    assert snapshot(tmp_path) == {name: OLD.encode()}
    write_set_rows(_set_rows(2), path)  # and a write that fits replaces it
    assert path.read_text().count("fvd_proxy") == 2


def test_aggregate_out_keeps_the_old_file(tmp_path: Path) -> None:
    table = tmp_path / "long.csv"
    table.write_text("".join(["item_id,generator,metric,value\n"] +
                             [f"i{k},g{k},ol_average_recall,0.{k % 9}\n" for k in range(60)]))
    out = tmp_path / "scores.csv"
    out.write_text(OLD)
    before = snapshot(tmp_path)
    with file_size_limit(200):
        done = runner.invoke(build_app("aggregate"), ["aggregate", "scores", "--in", str(table), "--by",
                                                      "generator", "--out", str(out)])
    assert done.exit_code == 2, done.output
    assert str(out) in " ".join(done.output.split())
    assert snapshot(tmp_path) == before
    done = runner.invoke(build_app("aggregate"), ["aggregate", "scores", "--in", str(table), "--by",
                                                  "generator", "--out", str(out)])
    assert done.exit_code == 0, done.output
    assert out.read_text().count("\n") == 61


def test_metrics_list_update_keeps_the_old_page(tmp_path: Path) -> None:
    page = tmp_path / "metrics.md"
    text = f"# Metrics\n\n{TABLE_START}\n\nold table\n\n{TABLE_END}\n\nafter\n"
    page.write_text(text)
    with file_size_limit(len(text) + 100):
        done = runner.invoke(build_app("metrics"), ["metrics", "list", "--markdown", "--update", str(page)])
    assert done.exit_code == 2, done.output
    assert snapshot(tmp_path) == {"metrics.md": text.encode()}
    done = runner.invoke(build_app("metrics"), ["metrics", "list", "--markdown", "--update", str(page)])
    assert done.exit_code == 0, done.output
    new = page.read_text()
    assert "old table" not in new and "pixel_frame_consistency" in new and new.endswith("after\n")


def test_select_out_keeps_the_old_picks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from robojudge.store import ResultRow, ResultStore

    (tmp_path / "v.mp4").write_bytes(b"")  # the manifest only needs the files to exist
    lines, rows = [], []
    for k in range(2000):  # 1,000 clips of two rollouts: about 350 kB of picks (60 kB as CSV)
        lines.append(f'{{"item_id": "i{k}", "video": "v.mp4", "clip_id": "c{k // 2}", '
                     f'"generator": "wm-{k % 2}"}}\n')
        rows.append(ResultRow(f"i{k}", "judge:qwen:pa", "h", "1", "ok", float(k % 3)))
    (tmp_path / "suite.jsonl").write_text("".join(lines))
    with ResultStore(tmp_path / "r.sqlite") as store:
        store.add(rows)
        url = store.url
    for name in ("picks.json", "picks.csv"):
        out = tmp_path / name
        out.write_text(OLD)
        with file_size_limit(40_000), pytest.raises(SystemExit) as done:  # (SQLite needs 32 kB to open)
            main(["select", "best-of-n", str(tmp_path / "suite.jsonl"), "--db", url, "--by", "judge:qwen:pa",
                  "--bootstrap", "0", "--out", str(out)])
        assert done.value.code == 2
        assert capsys.readouterr().err == f"error: writing {out}: File too large\n"
        assert out.read_text() == OLD
        assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
