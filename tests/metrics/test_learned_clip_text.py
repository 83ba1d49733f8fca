"""sa_clip: step splitting, the step-mean cosine by hand, input errors, and the metric on a tiny random CLIP.

The CLIP is built from a config (projection_dim 16, a 16-token text context) with a character-level
CLIP tokenizer over a tiny vocabulary, saved to a tmp folder; the hub is offline.
"""

import json

import numpy as np
import pytest
from _learned_hf_nets import save_tiny_clip, save_tiny_clip_tokenizer

from robojudge.metrics import MetricInputError, Provider, get_metric
from robojudge.metrics.learned.hf_text import clip_text_score, split_steps, text_direction
from robojudge.metrics.robophys.catalog import is_unavailable
from robojudge.models import MissingWeightsError, clear, clip_text_features, load_clip
from robojudge.suite import Item

R2 = np.sqrt(0.5)  # 0.70711, the unit diagonal's coordinates


def _item(**meta):
    return Item(item_id="a", video="v.mp4", instruction="put the cup on the plate", meta=meta)


def test_registered_as_a_model_metric_not_a_stub():
    spec = get_metric("sa_clip")
    assert spec.provider is Provider.model and spec.weights == ("clip_vit_b32",)
    assert not is_unavailable(spec.fn)
    assert spec.native_range == (0.0, 1.0) and spec.higher_is_better


def test_split_steps_strips_markers_and_splits_lines_and_semicolons():
    text = "1. grasp the cup\n2) lift it ; - place it\n\n(3) open box\nStep 4: close it\n* done ;; \n3.\n"
    assert split_steps(text) == ["grasp the cup", "lift it", "place it", "open box", "close it", "done"]
    # a number that is part of the step (no space after the dot) stays
    assert split_steps("1.5 cm up\n2 cups") == ["1.5 cm up", "2 cups"]
    assert split_steps(" ; \n - \n") == []


def test_score_by_hand():
    # generated (3, 4) -> unit (0.6, 0.8); reference steps (1, 0) and (0, 2) -> units (1, 0), (0, 1),
    # mean (0.5, 0.5), renormalised (r, r) with r = sqrt(1/2): cos = 0.6 r + 0.8 r = 1.4 r = 0.98995.
    got = clip_text_score(np.array([[3.0, 4.0]]), np.array([[1.0, 0.0], [0.0, 2.0]]))
    assert got.cosine == pytest.approx(1.4 * R2) and got.value == pytest.approx(0.98995, abs=1e-5)


def test_steps_are_normalised_before_the_mean():
    # reference (10, 0) and (0, 1): unit mean direction (r, r), so cos with (1, 0) is r = 0.7071. A mean of
    # the raw rows, (5, 0.5), would give 10 / sqrt(101) = 0.995; a mean of per-step cosines 0.5.
    got = clip_text_score(np.array([[1.0, 0.0]]), np.array([[10.0, 0.0], [0.0, 1.0]]))
    assert got.value == pytest.approx(R2)
    np.testing.assert_allclose(text_direction(np.array([[10.0, 0.0], [0.0, 1.0]])), [R2, R2])


def test_opposite_texts_clip_to_zero_and_identical_ones_give_one():
    got = clip_text_score(np.array([[1.0, 0.0]]), np.array([[-2.0, 0.0]]))
    assert got.value == 0.0 and got.cosine == pytest.approx(-1.0)
    e = np.random.default_rng(0).normal(size=(3, 16))
    assert clip_text_score(e, e[::-1] * 3.0).value == pytest.approx(1.0, abs=1e-12)  # order and scale free


def test_degenerate_embeddings_are_input_errors():
    with pytest.raises(MetricInputError, match="cancel out"):
        clip_text_score(np.array([[1.0, 0.0], [-1.0, 0.0]]), np.array([[1.0, 0.0]]))
    with pytest.raises(MetricInputError, match="at least 1 step"):
        clip_text_score(np.zeros((0, 2)), np.array([[1.0, 0.0]]))
    with pytest.raises(MetricInputError, match="generated 3, reference 2"):
        clip_text_score(np.ones((1, 3)), np.ones((1, 2)))


def test_missing_references_fail_and_say_how_even_with_an_instruction():
    want = r"item 'a' has no reference steps in meta\.reference_steps"
    with pytest.raises(MetricInputError, match=want) as exc:
        get_metric("sa_clip").compute(_item(key_steps="grasp the cup ; lift it"))
    assert "--set sa_clip.references=" in str(exc.value) and "instruction is not used" in str(exc.value)


def test_missing_key_steps_name_the_judge_export(tmp_path):
    steps = tmp_path / "steps.json"
    steps.write_text(json.dumps({"other": "lift it"}))
    spec = get_metric("sa_clip")
    want = f"no key steps in meta.key_steps nor in steps file {steps}"
    with pytest.raises(MetricInputError, match=want) as exc:
        spec.compute(_item(reference_steps="lift it"), spec.make_config({"steps": str(steps)}))
    message = str(exc.value)
    assert "--rubric key_steps --field key_steps" in message and "--set sa_clip.steps=" in message


def test_bad_jsonl_line_names_file_and_line(tmp_path):
    refs = tmp_path / "refs.jsonl"
    refs.write_text('{"item_id": "a", "reference_steps": "lift it"}\n\n{"item_id": "b", "steps": "x"}\n')
    spec = get_metric("sa_clip")
    config = spec.make_config({"references": str(refs)})
    want = r"reference_steps file .*refs\.jsonl, line 3: expected .*'item_id' and 'reference_steps'"
    with pytest.raises(MetricInputError, match=want):
        spec.compute(_item(key_steps="lift it"), config)
    with pytest.raises(MetricInputError, match="references file .*nope.json .* does not exist"):
        spec.compute(_item(key_steps="lift it"),
                     spec.make_config({"references": str(tmp_path / "nope.json")}))


def test_bad_manifest_values(tmp_path):
    with pytest.raises(MetricInputError, match="meta.key_steps must be a string or a list of strings, got"):
        get_metric("sa_clip").compute(_item(key_steps=5, reference_steps="x"))
    with pytest.raises(MetricInputError, match="reference_steps from meta.reference_steps holds no step"):
        get_metric("sa_clip").compute(_item(key_steps="lift it", reference_steps="1.\n - ;"))
    refs = tmp_path / "refs.json"
    refs.write_text(json.dumps({"a": {"text": "x"}}))
    spec = get_metric("sa_clip")
    with pytest.raises(MetricInputError, match="text of item 'a' is not a string or a list of strings"):
        spec.compute(_item(key_steps="lift it"), spec.make_config({"references": str(refs)}))


# --- the registered metric on a tiny random CLIP (transformers) -------------------------------------------


@pytest.fixture(scope="module")
def weights(tmp_path_factory):
    root = tmp_path_factory.mktemp("w")
    save_tiny_clip(root / "clip_vit_b32")
    save_tiny_clip_tokenizer(root / "clip_vit_b32")
    return root


@pytest.fixture
def offline(monkeypatch, weights):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("ROBOJUDGE_WEIGHTS", str(weights))
    clear()
    yield monkeypatch
    clear()


def _one_by_one(net, texts):
    """Each text through the tokenizer and text encoder alone (no padding), straight from transformers."""
    import torch
    from transformers import CLIPTokenizer

    tok = CLIPTokenizer.from_pretrained(net.path, local_files_only=True)
    rows = []
    with torch.inference_mode():
        for t in texts:
            ids = tok([t], return_tensors="pt")
            rows.append(net.model.get_text_features(**ids).pooler_output[0].double().numpy())
    return np.stack(rows)


@pytest.mark.slow  # transformers import and CLIP forward passes
def test_identical_texts_score_one(offline):
    text = "1. grasp the cup\n2. lift it\n3. put it on the plate"
    score = get_metric("sa_clip").compute(_item(key_steps=text, reference_steps=text))
    assert score.value == pytest.approx(1.0, abs=1e-6)
    assert score.details["generated_steps"] == 3 and score.details["reference_steps"] == 3


@pytest.mark.slow  # transformers import and CLIP forward passes
def test_metric_is_the_formula_on_per_step_text_features(tmp_path, offline):
    gen = ["grasp the cup", "lift it", "move left"]
    ref = ["open the box", "put the cup in"]
    refs = tmp_path / "refs.jsonl"
    # one JSONL row (also a valid JSON object: it must be read as a row), its text a list of steps
    refs.write_text(json.dumps({"item_id": "a", "reference_steps": ref}) + "\n")
    spec = get_metric("sa_clip")
    # batch 2 pads the steps in each batch to a common length: padding must not change an embedding
    score = spec.compute(_item(key_steps=" ; ".join(gen)),
                         spec.make_config({"references": str(refs), "batch_size": 2}))
    net = load_clip("clip_vit_b32")
    batched = clip_text_features(net, gen + ref, batch=2)
    alone = _one_by_one(net, gen + ref)
    assert batched.shape == (5, 16)
    np.testing.assert_allclose(batched, alone, atol=1e-5)
    unit = alone / np.linalg.norm(alone, axis=1, keepdims=True)
    g, r = unit[:3].mean(0), unit[3:].mean(0)
    cos = g @ r / (np.linalg.norm(g) * np.linalg.norm(r))
    assert score.details["cosine"] == pytest.approx(cos, abs=1e-5)
    assert score.value == pytest.approx(min(max(cos, 0.0), 1.0), abs=1e-5)
    assert score.details == {"generated_steps": 3, "reference_steps": 2, "cosine": score.details["cosine"]}
    assert abs(cos) < 0.999  # the texts differ, so the value is not the identity case


@pytest.mark.slow  # transformers import and CLIP forward passes
def test_steps_are_truncated_at_the_text_context(offline):
    # The tiny encoder's context is 16 tokens: start, 14 character tokens, end. These steps share their
    # first 14 letters (a..n) and differ only after, so they embed identically; shorter ones do not.
    long_a, long_b = "abcdefghijklmnopq", "abcdefghijklmnxyz"
    score = get_metric("sa_clip").compute(_item(key_steps=long_a, reference_steps=long_b))
    assert score.value == pytest.approx(1.0, abs=1e-6)
    short = get_metric("sa_clip").compute(_item(key_steps="abcdefq", reference_steps="abcdefz"))
    assert short.details["cosine"] < 1.0 - 1e-4


@pytest.mark.slow  # transformers import
def test_missing_weights_and_tokenizer(tmp_path, offline):
    item = _item(key_steps="lift it", reference_steps="lift it")
    offline.setenv("ROBOJUDGE_WEIGHTS", str(tmp_path / "empty"))
    with pytest.raises(MissingWeightsError, match="sa_clip.*clip_vit_b32"):
        get_metric("sa_clip").compute(item)
    save_tiny_clip(tmp_path / "bare" / "clip_vit_b32")  # model files, no tokenizer
    offline.setenv("ROBOJUDGE_WEIGHTS", str(tmp_path / "bare"))
    with pytest.raises(FileNotFoundError, match="clip_vit_b32 has no tokenizer"):
        get_metric("sa_clip").compute(item)
