import csv
import re

import numpy as np
import pytest
from _report_data import GENS, build_items, build_rows, higher_is_better, write_run
from scipy import stats

from robojudge.report import HtmlReport, render_page, resolve_source, write_html_report
from robojudge.report._robophys import robophys_section
from robojudge.report._sections import ReportInput, Section, overview_section

# Anything that would make the page fetch from elsewhere.
_REMOTE = re.compile(r"""(?:src|href)\s*=\s*["']?(?!data:)[a-z]*:?//|<script|@import|url\(\s*["']?http""",
                     re.I)


def _csv(path):
    with path.open() as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def full_report(tmp_path_factory) -> HtmlReport:
    folder = tmp_path_factory.mktemp("run")
    url, manifest = write_run(folder)
    return write_html_report(url, folder / "report", manifest=manifest, higher_is_better=higher_is_better,
                             bootstrap=200, seed=1)


@pytest.mark.slow
def test_full_report_sections_tables_and_numbers(full_report):
    sections = {s.key: s for s in full_report.sections}
    assert [s.key for s in full_report.sections] == [
        "overview", "configurations", "video_warnings", "judges", "metrics", "generators", "robophys",
        "sensitivity", "correlations", "motion", "kiva", "sizes", "libraries", "networks", "acceleration"]
    # The data stores no stillness-rewarding metric, so the motion section says why it is empty
    # (tests/report/test_report_motion.py covers it); no KIVA value, frame size or library versions either.
    assert "rewards stillness" in (sections["motion"].skipped or "")
    assert "no kiva value" in (sections["kiva"].skipped or "")
    assert all(s.skipped is None for k, s in sections.items()
               if k not in ("motion", "kiva", "sizes", "libraries", "networks", "acceleration")), {
        k: s.skipped for k, s in sections.items()}
    page = full_report.index.read_text()
    assert not _REMOTE.search(page)  # self-contained: nothing to fetch
    assert _REMOTE.search('<img src="https://cdn.example/x.png">') and _REMOTE.search("<script>")
    n_plots = sum(len(s.plots) for s in sections.values())
    assert page.count('<svg class="plot"') == n_plots >= 8
    assert {"landscape-overall", "bias", "judge-scatter", "confusion", "generator-plane", "radar",
            "metric-heatmap"} <= set(re.findall(r'data-plot="([^"]+)"', page))
    tables = full_report.index.parent / "tables"
    # Judge vlm: PA equals the labels; IA is one point high, capped at 5 (labels 5, 4, 2 -> 5, 5, 3).
    judges = {r["judge"]: r for r in _csv(tables / "judges.csv")}
    items = build_items()
    ia = np.array([GENS[it.generator][1] for it in items], float)
    pred = np.minimum(5, ia + 1)
    assert float(judges["vlm"]["IA r"]) == pytest.approx(stats.pearsonr(pred, ia).statistic)
    assert float(judges["vlm"]["IA MSE"]) == pytest.approx(2 / 3)  # (0 + 1 + 1) / 3 per clip
    assert float(judges["vlm"]["PA r"]) == pytest.approx(1.0) and judges["vlm"]["PA r_best"] == "True"
    assert "metric-calibrated" in judges
    detail = {(r["judge"], r["target"]): r for r in _csv(tables / "judge_statistics.csv")}
    vlm_ia = detail["vlm", "IA"]
    assert float(vlm_ia["kendall"]) == pytest.approx(stats.kendalltau(pred, ia).statistic)
    # Every clip has one item per generator with the same labels, so each replicate keeps the
    # relation exactly: every resample gives the point, and no (zero-width) interval is shown.
    assert vlm_ia["kendall_low"] == vlm_ia["kendall_high"] == ""
    board = _csv(tables / "leaderboard.csv")
    assert [r["generator"] for r in board] == ["good", "mid", "bad"]
    assert float(board[1]["Overall"]) == pytest.approx(3.5)  # (3 + 4) / 2
    # IQ-1 = mean of its normalized metrics: SSIM as is, PSNR as min(x / 50, 1) (Table 13).
    rows = build_rows(items)
    good = {it.item_id for it in items if it.generator == "good"}
    ssim = np.mean([r.value for r in rows if r.metric == "iq1_ssim" and r.item_id in good])
    psnr = np.mean([min(r.value / 50, 1) for r in rows if r.metric == "iq1_psnr" and r.item_id in good])
    rp = {r["generator"]: r for r in _csv(tables / "robophys.csv")}
    assert float(rp["good"]["IQ-1"]) == pytest.approx((ssim + psnr) / 2)
    # Collision count is constant (0 collisions): degenerate pool, so Table 13 maps it to 1 - 0/K = 1.
    assert float(rp["good"]["CS"]) == pytest.approx(1.0)
    sens = _csv(tables / "threshold_sensitivity.csv")
    assert [float(r["threshold"]) for r in sens] == [0.5, 0.6, 0.7, 0.8, 0.9]
    for ext in ("csv", "md", "tex"):
        assert (tables / f"metric_agreement.{ext}").stat().st_size > 0
    assert r"\toprule" in (tables / "judges.tex").read_text()


@pytest.mark.slow
def test_the_confusion_matrices_are_also_a_table(full_report):
    # Every other figure's numbers were in a table on the page; the confusion counts were only drawn.
    rows = _csv(full_report.index.parent / "tables" / "judge_confusion.csv")
    vlm = {(r["axis"], r["human"]): r for r in rows if r["judge"] == "vlm"}
    assert set(vlm) == {(a, h) for a in ("PA", "IA") for h in "12345"}
    # PA is scored as labelled; IA one point high: 12 clips per generator.
    assert [vlm["PA", "5"][f"judge {v}"] for v in "12345"] == ["0", "0", "0", "0", "12"]
    assert [vlm["IA", "4"][f"judge {v}"] for v in "12345"] == ["0", "0", "0", "0", "12"]
    assert [vlm["IA", "2"][f"judge {v}"] for v in "12345"] == ["0", "0", "12", "0", "0"]
    assert sum(int(r[f"judge {v}"]) for r in vlm.values() for v in "12345") == 2 * 36
    assert 'id="table-judge_confusion"' in full_report.index.read_text()


@pytest.mark.slow
def test_the_page_repeats_no_id_and_holds_no_rdf(full_report):
    # The HTML checker found 37 errors, all in the figures: RDF metadata and a repeated image id.
    page = full_report.index.read_text()
    ids = re.findall(r'\bid="([^"]+)"', page)
    assert len(ids) > 100 and len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})
    assert "rdf:" not in page and "<metadata" not in page
    assert page.count('<th scope="row">') > 50


def test_store_only_report_says_why_sections_are_missing(tmp_path):
    url, _ = write_run(tmp_path, judge=False)
    report = write_html_report(url, tmp_path / "out", higher_is_better=higher_is_better, bootstrap=0)
    by_key = {s.key: s for s in report.sections}
    assert by_key["judges"].skipped is not None and "no suite manifest" in by_key["judges"].skipped
    assert "no generator" in (by_key["generators"].skipped or "")
    assert by_key["correlations"].skipped is None
    page = report.index.read_text()
    # KIVA, the acceleration audit and library versions (these rows were written without them) too
    assert by_key["libraries"].skipped is not None and "no stored row records" in by_key["libraries"].skipped
    # ... and the networks (no lookup given, and the test metrics compute with none)
    assert by_key["networks"].skipped is not None
    assert page.count('class="skipped"') == 11 and "Not shown: no suite manifest was given" in page


def test_overview_without_rows_and_page_escaping():
    sec = overview_section(ReportInput([], [], higher_is_better))
    assert sec.skipped is not None and "no rows" in sec.skipped
    page = render_page([Section("a", "<b>&", intro="x < y")], title="t<1>", source="s")
    assert "<title>t&lt;1&gt;</title>" in page and "&lt;b&gt;&amp;" in page


def test_resolve_source_run_folder_url_and_file(tmp_path):
    url, manifest = write_run(tmp_path / "run")
    got_url, got_manifest = resolve_source(tmp_path / "run")
    assert got_url.endswith("/run/results.sqlite")
    assert got_manifest == tmp_path / "run" / "suite" / "suite.jsonl"
    other = tmp_path / "m.jsonl"
    assert resolve_source(tmp_path / "run", manifest=other) == (got_url, other)
    assert resolve_source("postgresql://u@h/db") == ("postgresql://u@h/db", None)
    assert resolve_source(tmp_path / "run" / "results.sqlite")[0].startswith("sqlite:///")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="no results.sqlite"):
        resolve_source(tmp_path / "empty")
    with pytest.raises(FileNotFoundError, match="no such run folder"):
        resolve_source(tmp_path / "missing")


def test_robophys_section_without_enough_subdimensions_says_why():
    items = build_items()
    rows = [r for r in build_rows(items) if r.metric not in ("cs_collision_count", "mq_flow_score")]
    sec = robophys_section(ReportInput(rows, items, higher_is_better))
    assert sec.skipped is None and sec.plots == []
    assert "needs at least three covered sub-dimensions; this run covers 1" in sec.intro
    (table,) = sec.tables
    assert table.columns[:3] == ["generator", "AFS (/1)", "level 1"]
    none = robophys_section(ReportInput([r for r in rows if r.metric == "jitter"], items, higher_is_better))
    assert none.skipped is not None and "no RoboPhys-3D taxonomy metric" in none.skipped
