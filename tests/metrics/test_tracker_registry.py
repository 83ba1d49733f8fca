"""The tracker registry: the lazy built-in, did-you-mean, registering a tracker, entry points."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from robojudge.metrics.tracking import TRACKERS, get_tracker, list_trackers, register_tracker
from robojudge.registry import UnknownNameError


def test_tracker_registry() -> None:
    with TRACKERS.scratch():  # the test's tracker does not outlive it
        assert "lk_flow" in list_trackers()
        with pytest.raises(KeyError, match="Did you mean 'lk_flow'"):
            get_tracker("lk_flwo")

        class Still:
            def track(self, frames, seed):  # type: ignore[no-untyped-def]
                raise NotImplementedError

        register_tracker("still_for_test")(Still)
        assert isinstance(get_tracker("still_for_test"), Still)
        with pytest.raises(ValueError, match="already registered"):
            register_tracker("still_for_test")(Still)
        with pytest.raises(ValueError, match="extra"):  # options are validated by the tracker's config
            get_tracker("lk_flow", no_such_option=1)
    assert "still_for_test" not in list_trackers()


def test_the_builtin_is_imported_on_first_use_and_refused_when_not_a_tracker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "rj_not_a_tracker.py").write_text("class Thing:\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with TRACKERS.scratch():
        TRACKERS.add("not_a_tracker", "rj_not_a_tracker:Thing")
        assert "rj_not_a_tracker" not in sys.modules  # listed without importing it
        assert "not_a_tracker" in list_trackers()
        with pytest.raises(TypeError, match="track"):
            get_tracker("not_a_tracker")
    with pytest.raises(UnknownNameError, match="unknown tracker 'not_a_tracker'"):
        get_tracker("not_a_tracker")
