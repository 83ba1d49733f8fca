"""``robojudge metrics info METRIC``: one metric, its settings, and how to score it here.

The hint `--metrics all` prints for metrics that need a model you train pointed at this command before
it existed.
"""

from __future__ import annotations

import json

from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.metrics import get_metric, how_to_score, not_run_summary

runner = CliRunner()


def _info(*args: str) -> tuple[int, str]:
    done = runner.invoke(build_app("metrics"), ["metrics", "info", *args], env={"COLUMNS": "200"})
    return done.exit_code, done.output


def test_a_computed_metric_with_its_settings() -> None:
    code, out = _info("cc_photometric")
    assert code == 0, out
    assert out.startswith("cc_photometric (version ")
    assert "RoboPhys-3D place: level 1, CC" in out and "better: " in out and "reads: video" in out
    assert "how: `robojudge score SUITE -m cc_photometric`" in out
    spec = get_metric("cc_photometric")
    for name in spec.config_type.model_fields:  # every setting is listed with its default
        assert f"│ {name} " in out, name
    assert "dis_preset" in out and '"auto"' in out


def test_what_each_kind_of_metric_needs() -> None:
    assert "needs a model you train: `--set kiva.reader=PATH`" in " ".join(how_to_score(get_metric("kiva")))
    fvd = " ".join(how_to_score(get_metric("iq1_fvd")))
    assert "`robojudge metrics sets SUITE -m iq1_fvd --by generator`" in fvd and "i3d_torchscript" in fvd
    assert "robojudge judge SUITE" in how_to_score(get_metric("sa_vlm1"))[0]
    assert "robojudge results import FILE" in how_to_score(get_metric("rbg_fidelity"))[0]
    # The `all` summary's hint names this command, which now exists.
    assert any("`robojudge metrics info METRIC` says how" in line for line in not_run_summary())


def test_json_and_an_unknown_id() -> None:
    code, out = _info("kiva", "--json")
    assert code == 0, out
    data = json.loads(out)
    assert data["id"] == "kiva" and data["higher_is_better"] is False and "reader" in data["config"]
    assert data["how"] == how_to_score(get_metric("kiva"))
    code, out = _info("kivaa")
    assert code == 2 and "unknown metric 'kivaa'. Did you mean 'kiva'" in out


def test_unverified_weights_are_said_in_the_plain_text_too() -> None:
    # `metrics list` and --json said it; the plain text of `metrics info` did not
    code, out = _info("iq1_musiq")
    assert code == 0 and "unverified: robojudge reads the musiq_spaq checkpoint with its own code" in out
    code, out = _info("clip_frame_consistency")  # transformers' own loader: nothing to say
    assert code == 0 and "unverified" not in out
