"""robojudge.metrics.functional: its doctests run, every public function has one, and the tester bites."""

import ast
import doctest
import importlib
import inspect
import pkgutil
from pathlib import Path

import numpy as np
import pytest
from _agree import agree

from robojudge.metrics import functional as F
from robojudge.metrics import get_metric
from robojudge.suite import Item
from robojudge.video import write_video

MODULES = ["robojudge.metrics.functional"] + [
    f"robojudge.metrics.functional.{m.name}" for m in pkgutil.iter_modules(F.__path__)
]


@pytest.mark.parametrize("name", MODULES)
def test_doctests_pass(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{name} has no doctest"
    assert result.failed == 0, f"{result.failed} of {result.attempted} doctests of {name} failed"


def test_every_public_function_has_an_example_and_lives_in_a_private_module():
    functions = {name: getattr(F, name) for name in F.__all__ if inspect.isfunction(getattr(F, name))}
    without_example = [name for name, fn in functions.items() if ">>>" not in (fn.__doc__ or "")]
    assert without_example == []
    assert all(fn.__module__.startswith("robojudge.metrics.functional._") for fn in functions.values())


def test_the_package_imports_nothing_of_robojudge_outside_itself():
    # Functions on arrays: no items, videos, caches or registry, so anyone can call them on their own data.
    # The error types are allowed: a clip with nothing to measure raises Unmeasurable (a ValueError).
    allowed = ("robojudge.metrics.functional", "robojudge.metrics._errors")
    for name in MODULES:
        module = importlib.import_module(name)
        tree = ast.parse(Path(module.__file__).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                targets = [node.module or ""]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                continue
            for target in targets:
                inside = not target.startswith("robojudge") or target.startswith(allowed)
                assert inside, f"{name} imports {target}"


def test_agree_fails_when_the_metric_its_functional_form_or_the_reference_differ(tmp_path):
    # Lossless frames whose left half steps by 40, 40, 40 beside a fixed grey and white (a flat frame
    # changing level only is still, and unscored): half the pixels change by 40 -> (255 - 20) / 255.
    frames = np.zeros((4, 32, 32, 3), np.uint8)
    frames[:, :16, 16:], frames[:, 16:, 16:] = 128, 255
    for t, v in enumerate((0, 40, 80, 40)):
        frames[t, :, :16] = v
    write_video(tmp_path / "v", frames, fps=8)
    item = Item(item_id="a", video=str(tmp_path / "v"))
    value = F.temporal_flickering(frames)
    score = agree("mq_temporal_flickering", item, functional=lambda: value,
                  reference=lambda: (255 - 20) / 255)
    assert score.value == pytest.approx((255 - 20) / 255)
    with pytest.raises(AssertionError, match="functional form"):
        agree("mq_temporal_flickering", item, functional=lambda: value + 1e-6, reference=lambda: value)
    with pytest.raises(AssertionError, match="the reference"):
        agree("mq_temporal_flickering", item, functional=lambda: value, reference=lambda: value + 1e-3)
    with pytest.raises(AssertionError, match="must say why"):
        agree("mq_temporal_flickering", item, functional=lambda: value, reference=" ")


# The functional form each computed metric must call: the maths has one implementation, the function.
CALLS = {
    "pixel_frame_consistency": "frame_consistency",
    # Flow metrics read their per-step values from one flow_steps per item (robojudge.metrics._flow_cache).
    "flow_warp_error": "flow_steps",
    "flow_motion_magnitude_farneback": "flow_steps",
    "mq_flow_score": "flow_steps",
    "mq_temporal_flickering": "flicker_score",
    "mq_dynamic_degree": "is_dynamic",
    "iq1_psnr": "psnr",
    "iq1_ssim": "ssim",
    "cs_collision_count": "collision_events",
    "sim_task_success": "task_success",
    "sa_bleu": "bleu",
    "uniform_random": "uniform_score",
}


@pytest.fixture(scope="module")
def scene_item(tmp_path_factory):
    from _scene import clean_frames

    folder = tmp_path_factory.mktemp("scene")
    frames = clean_frames()
    write_video(folder / "gen", frames, fps=8)
    write_video(folder / "ref", frames[:, :, ::-1], fps=8)
    np.savez(folder / "state.npz", unintended_collision=np.array([0, 1, 1, 0], bool),
             success=np.array([0, 0, 1, 1], bool))
    return Item(item_id="a", video=str(folder / "gen"), reference_video=str(folder / "ref"),
                state=str(folder / "state.npz"), instruction="move the red block right",
                meta={"caption": "the gripper moves the red block to the right"})


@pytest.mark.parametrize(("metric_id", "function"), sorted(CALLS.items()))
def test_the_registered_metric_calls_its_functional_form(monkeypatch, scene_item, metric_id, function):
    # The metric looks the function up in robojudge.metrics.functional when it runs, so a spy there sees
    # the call; a metric that kept a private copy of the maths would not call it.
    real = getattr(F, function)
    calls = []

    def spy(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(F, function, spy)
    score = get_metric(metric_id).compute(scene_item)
    assert calls, f"{metric_id} does not call robojudge.metrics.functional.{function}"
    assert score.scored, score.details
