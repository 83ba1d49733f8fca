"""``--metrics all`` runs a metric only on the items that have the inputs it declares.

A suite of bare videos (no state, no reference, no instruction) used to get one error row per item
for every metric of ``all`` that needs one of those. ``all`` now leaves those pairs out and counts
them; a metric named explicitly still runs and stores an error row saying what the item lacks.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from robojudge.metrics import get_metric, inapplicable_summary, missing_inputs
from robojudge.run import score_suite
from robojudge.run._plan import plan_pending
from robojudge.store import ResultStore
from robojudge.suite import Item

N_ITEMS = 3


def _video_suite(folder: Path) -> Path:
    """Three short moving clips with nothing but a video and a generator."""
    from robojudge.video import write_video

    rng = np.random.default_rng(0)
    base = rng.integers(0, 256, (48, 64, 3), dtype=np.uint8)
    lines = []
    for i in range(N_ITEMS):
        frames = np.stack([np.roll(base, (i + 1) * t, axis=1) for t in range(12)])
        write_video(folder / f"v{i}.mp4", frames, fps=8)
        lines.append(json.dumps({"item_id": f"clip{i}", "video": f"v{i}.mp4", "generator": "g"}))
    manifest = folder / "suite.jsonl"
    manifest.write_text("\n".join(lines) + "\n")
    return manifest


def _needs_more_than_video() -> list[str]:
    bare = Item(item_id="x", video="x.mp4")
    from robojudge.metrics import expand_metric_ids

    return [m for m in expand_metric_ids(["all"]) if missing_inputs(get_metric(m), bare)]


def test_missing_inputs_names_what_the_item_lacks() -> None:
    bare = Item(item_id="x", video="x.mp4")
    assert missing_inputs(get_metric("ta_ndtw"), bare) == ["reference", "state"]
    assert missing_inputs(get_metric("sa_bleu"), bare) == ["instruction"]
    assert missing_inputs(get_metric("pixel_frame_consistency"), bare) == []
    full = bare.model_copy(update={"reference_video": "r.mp4", "state": "s.npz"})
    assert missing_inputs(get_metric("ta_ndtw"), full) == []


def test_plan_counts_pairs_that_do_not_apply_and_never_fingerprints_them(tmp_path: Path) -> None:
    items = [Item(item_id=f"i{k}", video="v.mp4", state="s.npz" if k == 0 else None) for k in range(3)]
    seen: list[tuple[str, str]] = []

    def fingerprint(item: Item, w: str):
        from robojudge.run._fingerprint import Fingerprint

        seen.append((item.item_id, w))
        return Fingerprint("f")

    with ResultStore(f"sqlite:///{tmp_path / 'r.sqlite'}") as store:
        plan = plan_pending(items, ["video_m", "state_m"], lambda w: (w, "c", "1"), store, fingerprint,
                            applies=lambda item, w: w == "video_m" or item.state is not None)
    assert plan.not_applicable == {"state_m": 2}
    assert [(it.item_id, units) for it, units, _ in plan.todo] == [
        ("i0", ("video_m", "state_m")), ("i1", ("video_m",)), ("i2", ("video_m",))]
    assert ("i1", "state_m") not in seen and ("i2", "state_m") not in seen


def test_all_on_a_video_only_suite_stores_no_row_for_metrics_whose_inputs_are_absent(tmp_path: Path) -> None:
    manifest = _video_suite(tmp_path)
    absent = _needs_more_than_video()
    assert {"ta_ndtw", "iq1_psnr", "sim_task_success", "sa_bleu"} <= set(absent)
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    run = score_suite(manifest, ["all"], db=db)
    with ResultStore(db, read_only=True) as store:
        stored = {r.metric for r in store.rows()}
    assert not stored & set(absent)
    assert "pixel_frame_consistency" in stored
    assert run.summary.not_applicable == {m: N_ITEMS for m in absent}
    assert run.summary.total == run.summary.ok + run.summary.failed  # left-out pairs are not work
    assert not any("which" in (r.error or "") and "needs" in (r.error or "") for r in run.summary.errors)
    # The same run again has nothing to do and still leaves them out.
    again = score_suite(manifest, ["all"], db=db)
    assert again.summary.computed == 0 and again.summary.not_applicable == run.summary.not_applicable


def test_a_metric_named_explicitly_still_stores_why_it_cannot_run(tmp_path: Path) -> None:
    manifest = _video_suite(tmp_path)
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    run = score_suite(manifest, ["iq1_psnr", "pixel_frame_consistency"], db=db)
    assert run.summary.not_applicable == {}
    errors = {r.item_id: r.error for r in run.summary.errors if r.metric == "iq1_psnr"}
    assert len(errors) == N_ITEMS
    assert all("no reference" in (e or "") for e in errors.values())


def test_all_next_to_an_explicit_id_runs_that_one_everywhere(tmp_path: Path) -> None:
    manifest = _video_suite(tmp_path)
    run = score_suite(manifest, ["all", "sa_bleu"], db=f"sqlite:///{tmp_path / 'r.sqlite'}")
    assert "sa_bleu" not in run.summary.not_applicable
    assert sum(r.metric == "sa_bleu" for r in run.summary.errors) == N_ITEMS
    assert run.summary.not_applicable.get("iq1_psnr") == N_ITEMS


def test_summary_line_names_each_metric_with_its_item_count() -> None:
    lines = inapplicable_summary({"ta_ndtw": 40, "sa_bleu": 1, "pixel_frame_consistency": 0})
    assert len(lines) == 1
    assert "2 metrics" in lines[0]
    assert "ta_ndtw (40 items; needs reference, state)" in lines[0]
    assert "sa_bleu (1 item; needs instruction, meta.caption)" in lines[0]
    assert "pixel_frame_consistency" not in lines[0]
    assert inapplicable_summary({}) == []
    # A metric that reads only the video is left out of grid items without a main_view: it lacks a video
    # of one view (it said "needs ?"), and the line says how to give it one.
    (grid,) = inapplicable_summary({"flow_warp_error": 2})
    assert ("flow_warp_error (2 items; needs single-view video (its video is a grid of views and it names "
            "no main_view: set main_view to the view whose cell single-view metrics read))") in grid


def test_cli_score_all_prints_the_metrics_left_out_and_their_item_counts(tmp_path: Path) -> None:
    from robojudge.cli import app

    manifest = _video_suite(tmp_path)
    result = CliRunner().invoke(app, ["score", str(manifest), "--metrics", "all", "--no-progress",
                                      "--db", f"sqlite:///{tmp_path / 'r.sqlite'}"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "not run on items without their inputs" in text
    for m in _needs_more_than_video():
        assert f"{m} ({N_ITEMS} items lack " in text
