"""State files the state metrics and the trackers cannot read, and state flags that are not booleans.

``sim_task_success`` and ``cs_collision_count`` cast their flags with ``astype(bool)``, so NaN
("unknown"), a probability of 0.1 or the string 'no' read as true: success 1.0. An empty or text file
named ``.npz`` escaped as ``EOFError: No data left in file`` or numpy's advice to load it as a pickle.
"""

import zipfile

import numpy as np
import pytest
from _scene import state_arrays

from robojudge.metrics import MetricInputError, get_metric
from robojudge.metrics.tracking import SimState
from robojudge.metrics.tracking._sim import StateFileError
from robojudge.suite import Item

FLAG_METRICS = {"success": "sim_task_success", "unintended_collision": "cs_collision_count"}


def _item(path, **arrays):
    if arrays:
        np.savez(path, **arrays)
    return Item(item_id="a", video="v.mp4", reference_video="r.mp4", state=str(path))


@pytest.mark.parametrize(("values", "said"), [
    (np.full(8, np.nan), "got dtype float64"),
    (np.r_[np.zeros(7), 0.1], "got dtype float64"),
    (np.array(["no"] * 8), "got dtype <U2"),
    (np.array([0, 0, 1, 2, 1, 0, 0, 1]), "integers other than 0 and 1 (1 values, first 2 at frame 3)"),
])
@pytest.mark.parametrize("key", list(FLAG_METRICS))
def test_flags_that_are_not_booleans_are_an_error_naming_file_and_array(tmp_path, key, values, said):
    path = tmp_path / "state.npz"
    item = _item(path, **{key: values})
    with pytest.raises(MetricInputError) as err:
        get_metric(FLAG_METRICS[key]).compute(item)
    assert str(err.value).startswith(f"state file {path}: array {key!r}")
    assert said in str(err.value)


def test_integer_flags_of_zero_and_one_read_as_booleans(tmp_path):
    flags = np.array([0, 1, 1, 0, 1, 0, 0, 1], np.uint8)
    item = _item(tmp_path / "state.npz", success=flags, unintended_collision=flags.astype(np.int64))
    assert get_metric("sim_task_success").compute(item).value == 1.0
    collisions = get_metric("cs_collision_count").compute(item)
    assert collisions.value == 3.0 and collisions.details["frames_in_collision"] == 4
    lost = _item(tmp_path / "lost.npz", success=np.array([0, 1, 1, 0], np.int8))
    assert get_metric("sim_task_success").compute(lost).value == 0.0


def _unreadable(tmp_path):
    """Files named .npz that are not state files, each with the reason its error must give."""
    (tmp_path / "empty.npz").write_bytes(b"")
    (tmp_path / "text.npz").write_text("hello")
    np.save(tmp_path / "array.npy", np.zeros(3, bool))
    (tmp_path / "array.npy").rename(tmp_path / "array.npz")
    whole = tmp_path / "whole.npz"
    np.savez(whole, **state_arrays())
    data = whole.read_bytes()
    (tmp_path / "cut.npz").write_bytes(data[: len(data) // 2])
    arrays = state_arrays()
    arrays["success"] = arrays["unintended_collision"] = np.array([{"frame": 0}] * 16, dtype=object)
    arrays["ee_pos"] = np.array([None] * 16, dtype=object)
    np.savez(tmp_path / "pickled.npz", **arrays)
    return {
        "empty.npz": "the file is empty (0 bytes)",
        "text.npz": "not an npz archive (a zip of .npy arrays, see docs/sim_suite.md)",
        "array.npz": "it is a single .npy array, not an npz archive of named arrays",
        "cut.npz": "damaged or truncated npz archive (File is not a zip file)",
        "pickled.npz": "stored as pickled Python objects, which are not loaded",
    }


def test_unreadable_state_files_say_why_on_every_reading_path(tmp_path):
    for name, why in _unreadable(tmp_path).items():
        path = tmp_path / name
        item = _item(path)
        for metric in ("sim_task_success", "cs_collision_count", "ta_hsd", "ol_average_precision"):
            with pytest.raises(MetricInputError) as err:
                get_metric(metric).compute(item)
            msg = str(err.value)
            assert msg.startswith(f"cannot read state file {path}: "), (metric, msg)
            assert why in msg, (metric, msg)
            assert "allow_pickle" not in msg and "No data left" not in msg
        with pytest.raises(StateFileError, match=f"cannot read state file {path}: "):
            SimState.load(path)


def test_a_pickled_array_is_named(tmp_path):
    path = tmp_path / "pickled.npz"
    arrays = state_arrays()
    arrays["success"] = np.array([{"frame": 0}] * 16, dtype=object)
    np.savez(path, **arrays)
    with pytest.raises(MetricInputError, match=r"array 'success': stored as pickled Python objects"):
        get_metric("sim_task_success").compute(_item(path))
    assert get_metric("cs_collision_count").compute(_item(path)).value == 0.0  # its own array is fine
    SimState.load(path)  # the tracker reads neither


def test_a_damaged_array_inside_the_archive_is_named(tmp_path):
    path = tmp_path / "state.npz"
    np.savez_compressed(path, **state_arrays())
    with zipfile.ZipFile(path) as z:
        info = z.getinfo("success.npy")
    data = bytearray(path.read_bytes())
    head = info.header_offset  # the local header: name and extra-field lengths at bytes 26 and 28
    start = head + 30 + int.from_bytes(data[head + 26 : head + 28], "little") + int.from_bytes(
        data[head + 28 : head + 30], "little")
    data[start : start + info.compress_size] = b"\xff" * info.compress_size  # 'success', compressed
    path.write_bytes(bytes(data))
    with pytest.raises(MetricInputError, match=rf"cannot read state file {path}: array 'success': damaged"):
        get_metric("sim_task_success").compute(_item(path))
