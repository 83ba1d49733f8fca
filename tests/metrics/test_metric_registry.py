import math
import subprocess
import sys

import pytest
from pydantic import BaseModel, ConfigDict

from robojudge._chars import MAX_NAME_BYTES
from robojudge.metrics import (
    METRICS,
    Family,
    Input,
    NoConfig,
    Score,
    TaxonomyPlace,
    UnknownMetricError,
    get_metric,
    list_metrics,
    metric,
)


@pytest.fixture
def clean_registry():
    # Test registrations are undone afterwards, so they never leak into other tests.
    with METRICS.scratch():
        yield


def _register(mid="toy_metric", **over):
    kw = dict(
        family="pixel",
        inputs={"video"},
        higher_is_better=True,
        native_range=(0.0, 1.0),
        version="1",
        citation="test",
        description="toy",
    )
    kw.update(over)

    @metric(mid, **kw)
    def toy(item, config):
        return Score(value=0.5)

    return toy


def test_builtin_pixel_metric_metadata():
    spec = get_metric("pixel_frame_consistency")
    assert spec.family is Family.pixel
    assert spec.inputs == frozenset({Input.video})
    assert spec.higher_is_better is False
    assert spec.native_range == (0.0, 255.0)
    assert "App. B.3" in spec.citation
    assert "pixel_frame_consistency" in [s.id for s in list_metrics()]


def test_unknown_metric_suggests_close_names():
    with pytest.raises(UnknownMetricError) as exc:
        get_metric("pixel_frame_consistancy")
    assert "Did you mean 'pixel_frame_consistency'" in str(exc.value)
    with pytest.raises(UnknownMetricError) as exc2:
        get_metric("zzzz")
    assert "Did you mean" not in str(exc2.value)


@pytest.mark.usefixtures("clean_registry")
def test_registration_checks_metadata():
    with pytest.raises(ValueError, match="family"):
        _register(family="colour")
    with pytest.raises(ValueError, match="input"):
        _register("toy_b", inputs={"audio"})
    with pytest.raises(ValueError, match="lower bound"):
        _register("toy_c", native_range=(1.0, 0.0))
    with pytest.raises(ValueError, match="lowercase"):
        _register("Toy-D")
    with pytest.raises(ValueError, match="lowercase"):  # "$" matched before a final newline: it was taken
        _register("toy_d\n")
    with pytest.raises(ValueError, match="version"):
        _register("toy_e", version="")
    _register("toy_f")
    with pytest.raises(ValueError, match="already registered"):
        _register("toy_f")
    assert get_metric("toy_f").compute(None).value == 0.5  # type: ignore[arg-type]


@pytest.mark.usefixtures("clean_registry")
def test_a_module_registers_its_metric_again_with_replace_and_lookups_follow():
    from robojudge.metric_info import direction, registry_range

    assert registry_range("toy_nb") is None  # asked before the metric exists (a report over its rows)
    _register("toy_nb", native_range=(0.0, 1.0))
    # Before: None stayed cached for good; a notebook cell run again raised "already registered", and after
    # METRICS.remove() and a new registration direction and registry_range answered for the old definition.
    assert direction("toy_nb") is True and registry_range("toy_nb") == (0.0, 1.0)
    with pytest.raises(ValueError, match="pass replace=True"):
        _register("toy_nb")
    _register("toy_nb", higher_is_better=False, native_range=(0.0, 100.0), replace=True)
    assert direction("toy_nb") is False and registry_range("toy_nb") == (0.0, 100.0)
    METRICS.remove("toy_nb")
    _register("toy_nb", native_range=(0.0, 5.0))
    assert direction("toy_nb") is True and registry_range("toy_nb") == (0.0, 5.0)
    with pytest.raises(ValueError, match=r"by robojudge\.metrics\.pixel\); replace=True replaces only"):
        _register("pixel_frame_consistency", replace=True)  # another module's metric stays
    assert get_metric("pixel_frame_consistency").fn.__module__ == "robojudge.metrics.pixel"


def test_config_hash_is_stable_and_sensitive():
    spec = get_metric("pixel_frame_consistency")
    default = spec.make_config()
    assert spec.config_hash(default) == spec.config_hash(spec.make_config({"fps": 8.0, "width": 256}))
    assert spec.config_hash(default) != spec.config_hash(spec.make_config({"fps": 4}))
    with pytest.raises(ValueError, match="pixel_frame_consistency"):
        spec.make_config({"fsp": 4})
    with pytest.raises(ValueError):
        spec.make_config({"fps": -1})


def test_describe_is_json_ready():
    d = get_metric("pixel_frame_consistency").describe()
    assert d["inputs"] == ["video"] and d["higher_is_better"] is False
    assert set(d["config"]) == {"fps", "width", "height"}


def test_no_config_forbids_values():
    class Cfg(BaseModel):
        model_config = ConfigDict(extra="forbid")

    assert NoConfig().model_dump() == {} == Cfg().model_dump()
    with pytest.raises(ValueError):
        NoConfig.model_validate({"x": 1})


def test_score_nan_means_unscored():
    assert not Score(value=math.nan).scored
    assert Score(value=0.0).scored


def test_unknown_metric_error_is_the_registry_error():
    from robojudge.registry import UnknownNameError

    with pytest.raises(UnknownNameError) as exc:
        get_metric("pixel_frame_consistancy")
    assert isinstance(exc.value, UnknownMetricError) and exc.value.metric_id == "pixel_frame_consistancy"
    assert str(exc.value).endswith("Run `robojudge metrics list` to see all.")


def test_a_lazy_entry_must_be_a_spec_under_its_own_id(tmp_path, monkeypatch):
    # What an entry point "name = package.module:SPEC" adds: imported on first lookup, then checked.
    (tmp_path / "rj_lazy_metric.py").write_text(
        "from robojudge.metrics import get_metric\n"
        "BASE = get_metric('pixel_frame_consistency')\n"
        "SPEC = BASE.model_copy(update={'id': 'rj_lazy_ok'})\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with METRICS.scratch():
        METRICS.add("rj_lazy_ok", "rj_lazy_metric:SPEC")
        METRICS.add("rj_lazy_bad", "rj_lazy_metric:BASE")
        assert "rj_lazy_ok" in METRICS.names() and "rj_lazy_metric" not in sys.modules  # listed, not imported
        assert get_metric("rj_lazy_ok").fn is get_metric("pixel_frame_consistency").fn
        with pytest.raises(TypeError, match="must be a MetricSpec with id 'rj_lazy_bad'"):
            get_metric("rj_lazy_bad")
    assert "rj_lazy_ok" not in METRICS
    monkeypatch.delitem(sys.modules, "rj_lazy_metric")


def test_a_bad_setting_is_one_line_with_the_field_and_a_suggestion() -> None:
    from robojudge.metrics import get_metric

    spec = get_metric("pixel_frame_consistency")
    field = next(iter(spec.config_type.model_fields))
    with pytest.raises(ValueError) as got:
        spec.make_config({field + "x": 1})
    said = str(got.value)
    assert said == (f"invalid config for metric 'pixel_frame_consistency': {field}x: unknown setting "
                    f"(did you mean {field!r}?)")
    assert "\n" not in said and "pydantic" not in said
    with pytest.raises(ValueError, match=r"^invalid config for metric 'pixel_frame_consistency': zzz: "
                                         r"unknown setting \(its settings: "):
        spec.make_config({"zzz": 1})


def test_metric_ids_and_versions_longer_than_the_limit_are_refused() -> None:
    # Before: any length was registered, and a long id or version failed the store's key index on PostgreSQL.
    def fn(item: object, config: object) -> Score:
        return Score(value=1.0)

    meta = {"family": "features", "inputs": {"video"}, "higher_is_better": True, "native_range": (0.0, 1.0),
            "citation": "toy", "description": "toy"}
    with METRICS.scratch():
        metric("m" * MAX_NAME_BYTES, version="v" * MAX_NAME_BYTES, **meta)(fn)  # at the limits: fine
        with pytest.raises(ValueError, match="metric id is 256 bytes long in UTF-8; at most 255 are allowed"):
            metric("m" * (MAX_NAME_BYTES + 1), version="1", **meta)(fn)
        with pytest.raises(ValueError, match="version is 256 bytes long in UTF-8; at most 255 are allowed"):
            metric("toy_long_version", version="v" * (MAX_NAME_BYTES + 1), **meta)(fn)
        assert "toy_long_version" not in METRICS


_SCRIPT_UNDER_A_BUILTIN_ID = """
from robojudge.metrics import Score, get_metric, metric
try:
    @metric("iq1_psnr", version="99", family="pixel", inputs={"video"}, higher_is_better=False,
            native_range=(0.0, 1.0), citation="me", description="a script's metric under a built-in's id")
    def mine(item, config):
        return Score(value=0.1)
except ValueError as exc:
    print("refused:", exc)
print(get_metric("iq1_psnr").fn.__module__, get_metric("iq1_ssim").id)
"""


def test_a_scripts_metric_under_a_builtin_id_is_refused_when_decorated(tmp_path):
    # A fresh process, as a script is: nothing has loaded the built-ins before the decorator runs.
    script = tmp_path / "my_script.py"
    script.write_text(_SCRIPT_UNDER_A_BUILTIN_ID)
    res = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    # Before: registered without a word, then every lookup (of iq1_ssim too) failed with "metric 'iq1_psnr'
    # is already registered (by __main__)", raised from inside the built-in module's import.
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines() == [
        "refused: metric 'iq1_psnr' is already registered (by robojudge.metrics.robophys.reference)",
        "robojudge.metrics.robophys.reference iq1_ssim",
    ]


def test_a_taxonomy_place_that_is_not_the_taxonomys_own_is_refused(clean_registry):
    own = get_metric("iq1_psnr").taxonomy
    assert own is not None
    custom = TaxonomyPlace(name="Custom IQ", subdim=own.subdim, subdim_name=own.subdim_name, level=own.level,
                           level_name=own.level_name, grounding="Reference-Free", normalization="identity")
    # Before: accepted and shown in `metrics list` as "L1 IQ-1", then ignored by aggregate and the report.
    with pytest.raises(ValueError, match=(
            rf"^metric 'my_iq_custom': taxonomy={own.subdim} L{own.level} given, but only the 50 RoboPhys-3D "
            r"ids have a place in the taxonomy, and 'my_iq_custom' is not one; leave taxonomy= out")):
        _register("my_iq_custom", taxonomy=custom)
    assert not METRICS.is_registered("my_iq_custom")
    _register("my_iq_custom")  # without a place it registers
    moved = own.model_copy(update={"subdim": "IQ-2"})
    with pytest.raises(ValueError, match=(
            rf"^metric 'iq1_psnr': its taxonomy place differs from the taxonomy's own in subdim 'IQ-2' "
            rf"\(the taxonomy's: '{own.subdim}'\)")):
        _register("iq1_psnr", taxonomy=moved, replace=True)
    # What an entry point's lazy spec brings is checked the same way.
    spec = get_metric("pixel_frame_consistency").model_copy(update={"id": "rj_placed", "taxonomy": own})
    with pytest.raises(ValueError, match="metric 'rj_placed': taxonomy=.* is not one"):
        METRICS.add("rj_placed", spec)
