"""A set-level metric that raises: its error rows keep the exception's type, message and notes, and where it
was raised (audit logging F3)."""

from robojudge.metrics._registry import NoConfig
from robojudge.metrics._sets import ItemGroup, SetMetricSpec, SetOutput, score_group
from robojudge.suite import Item


def _fit_group(group: ItemGroup, config: object) -> object:
    try:
        raise ValueError("2 readers failed")
    except ValueError as exc:
        exc.add_note(f"while fitting group {group.key}")
        raise


def test_a_set_metric_that_raises_keeps_type_message_notes_and_traceback() -> None:
    items = tuple(Item(item_id=n, video=f"/nonexistent/{n}.mp4") for n in ("a", "b"))
    group = ItemGroup(key="all", by=None, items=items, all_items=items)
    sm = SetMetricSpec(id="test_set_raise", output=SetOutput.group, fn=_fit_group, min_items=1)  # type: ignore[arg-type]
    (row,) = score_group(sm, group, NoConfig())
    # Before: "metric raised while fitting group all" (the note alone), and no traceback anywhere.
    assert row.error == "metric raised ValueError: 2 readers failed (while fitting group all)"
    tb = row.details["traceback"]
    assert "test_sets_raised.py" in tb and "in _fit_group" in tb
