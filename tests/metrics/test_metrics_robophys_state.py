"""cs_collision_count and sim_task_success read the sim suite's state npz (docs/sim_suite.md)."""

import numpy as np
import pytest
from _agree import agree
from scipy import ndimage

from robojudge.metrics import MetricInputError, get_metric
from robojudge.metrics.functional import collision_events, task_success
from robojudge.run._score import MetricRequest, compute_metric
from robojudge.suite import Item


def _item(tmp_path, **arrays):
    path = tmp_path / "state.npz"
    # The documented layout stores strings and floats too; the metrics must read only their key.
    np.savez(path, fps=np.float32(10), view_names=np.array(["cam0"]), **arrays)
    return Item(item_id="a", video="v.mp4", state=str(path))


@pytest.mark.parametrize(
    ("flags", "events"),
    [
        ([0, 1, 1, 0, 1, 0, 0, 1], 3),  # runs [1, 1], [1], [1]
        ([1, 1, 0], 1),  # a run that starts at frame 0 counts
        ([0, 0, 0], 0),
        ([1, 1, 1, 1], 1),
    ],
)
def test_count_events_by_hand(flags, events):
    assert collision_events(np.array(flags, bool)) == events
    assert ndimage.label(np.array(flags, bool))[1] == events  # SciPy's connected runs say the same


def test_flags_must_be_one_per_frame():
    with pytest.raises(ValueError, match="one flag per frame"):
        collision_events(np.zeros((2, 2), bool))
    with pytest.raises(ValueError, match="one flag per frame"):
        task_success(np.array([], bool))


def test_collision_count_events_and_frames(tmp_path):
    flags = np.array([0, 1, 1, 0, 1, 0, 0, 1], bool)
    item = _item(tmp_path, unintended_collision=flags)
    spec = get_metric("cs_collision_count")
    # SciPy's connected-component labelling of the 1-D flags counts the same runs.
    score = agree("cs_collision_count", item, functional=lambda: collision_events(flags),
                  reference=lambda: ndimage.label(flags)[1])
    assert score.value == 3.0 and score.details == {"events": 3, "frames_in_collision": 4, "frames": 8}
    assert spec.compute(item, spec.make_config({"count": "frames"})).value == 4.0


def test_task_success_reads_the_last_frame(tmp_path):
    spec = get_metric("sim_task_success")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    solved = np.array([0, 0, 1, 1], bool)
    agree("sim_task_success", _item(tmp_path / "a", success=solved), functional=lambda: task_success(solved),
          reference="the last flag of the state file: no library to compare with; checked by hand here")
    assert spec.compute(_item(tmp_path / "a", success=solved)).value == 1.0
    # Reached the goal and then lost it: not a success.
    lost = spec.compute(_item(tmp_path / "b", success=np.array([0, 1, 1, 0], bool)))
    assert lost.value == 0.0 and lost.details["frames_successful"] == 2


def test_a_one_frame_state_is_unscored(tmp_path):
    # One frame records no rollout: it scored 0 collisions (the best) and success from the start scene.
    item = _item(tmp_path, success=np.array([1], bool), unintended_collision=np.array([0], bool))
    for metric in ("sim_task_success", "cs_collision_count"):
        score = get_metric(metric).compute(item)
        assert not score.scored and score.details["frames"] == 1
        assert "records 1 frame: no rollout to score" in score.details["unscored_reason"]


def test_bad_state_files_give_clear_errors(tmp_path):
    item = _item(tmp_path, success=np.array([1], bool))
    with pytest.raises(MetricInputError, match="no 'unintended_collision' array"):
        get_metric("cs_collision_count").compute(item)
    (tmp_path / "c").mkdir()
    with pytest.raises(MetricInputError, match="one value per frame"):
        get_metric("sim_task_success").compute(_item(tmp_path / "c", success=np.zeros((2, 2), bool)))
    (tmp_path / "junk.npz").write_text("not a zip")
    junk = Item(item_id="j", video="v.mp4", state=str(tmp_path / "junk.npz"))
    with pytest.raises(MetricInputError, match="cannot read state file"):
        get_metric("sim_task_success").compute(junk)
    missing = Item(item_id="m", video="v.mp4", state=str(tmp_path / "nope.npz"))
    with pytest.raises(MetricInputError, match="cannot read state file"):
        get_metric("cs_collision_count").compute(missing)


def test_items_without_state_get_an_error_row():
    row = compute_metric(Item(item_id="a", video="v.mp4"), MetricRequest.build("cs_collision_count"))
    assert row.status == "error" and "no state" in (row.error or "")
