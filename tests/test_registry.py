"""The shared registry: registration, lazy entries, loading the listed modules, did-you-mean."""

from __future__ import annotations

import sys
import textwrap
import threading
from pathlib import Path

import pytest

from robojudge import registry as reg
from robojudge.registry import Registry, UnknownNameError, load_object


def test_add_get_list_and_duplicates() -> None:
    r: Registry[int] = Registry("number")
    r.add("two", 2)
    r.register("one")(1)
    assert r.get("one") == 1 and r.names() == ["one", "two"] and len(r) == 2
    assert "two" in r and "three" not in r
    with pytest.raises(ValueError, match="already registered"):
        r.add("one", 11)
    r.add("one", 11, replace=True)
    assert r.get("one") == 11
    with pytest.raises(ValueError, match="non-empty"):
        r.add("", 0)


def test_unknown_name_suggests_close_names() -> None:
    r: Registry[int] = Registry("widget", hint=" Run `x list`.")
    r.add("iq1_psnr", 1)
    r.add("iq1_ssim", 2)
    with pytest.raises(UnknownNameError) as err:
        r.get("iq1_pnsr")
    msg = str(err.value)
    assert "unknown widget 'iq1_pnsr'" in msg and "Did you mean 'iq1_psnr'" in msg
    assert msg.endswith("Run `x list`.")
    assert isinstance(err.value, KeyError)


def test_lazy_entry_imported_on_first_get_and_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "rj_lazy_mod.py").write_text("VALUE = 41\nloaded = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    seen: list[str] = []

    def check(name: str, obj: int) -> int:
        seen.append(name)
        return obj + 1

    r: Registry[int] = Registry("lazy thing", check=check)
    r.add("v", "rj_lazy_mod:VALUE")
    assert "rj_lazy_mod" not in sys.modules  # listing does not import
    assert r.names() == ["v"] and "rj_lazy_mod" not in sys.modules
    assert r.get("v") == 42 and seen == ["v"]
    assert r.get("v") == 42 and seen == ["v"]  # resolved once
    r.add("broken", "rj_lazy_mod:MISSING")
    with pytest.raises(ImportError, match="lazy thing 'broken'.*MISSING"):
        r.get("broken")


def test_load_imports_listed_modules_once_and_retries_after_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    r: Registry[int] = Registry("gadget", extra_modules=lambda: ["rj_gadgets"])
    (tmp_path / "rj_gadgets.py").write_text(
        textwrap.dedent(
            """
            import rj_test_registry_holder as h
            h.R.add("a", 1)
            assert h.R.is_registered("a")
            h.COUNT += 1
            """
        )
    )
    holder = tmp_path / "rj_test_registry_holder.py"
    holder.write_text("R = None\nCOUNT = 0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import rj_test_registry_holder as h

    h.R = r
    monkeypatch.setitem(reg.BUILTIN_MODULES, "gadget", ("rj_missing_gadget_module",))
    with pytest.raises(ImportError, match="cannot import gadget module 'rj_missing_gadget_module'"):
        r.names()
    monkeypatch.setitem(reg.BUILTIN_MODULES, "gadget", ())
    assert r.names() == ["a"] and r.get("a") == 1  # the failed load was retried
    assert r.names() == ["a"] and h.COUNT == 1
    monkeypatch.delitem(sys.modules, "rj_gadgets")
    monkeypatch.delitem(sys.modules, "rj_test_registry_holder")


def test_load_object_errors() -> None:
    assert load_object("robojudge.registry:Registry.get") is Registry.get
    with pytest.raises(ImportError, match="not of the form"):
        load_object("robojudge.registry")
    with pytest.raises(ImportError, match="cannot load"):
        load_object("robojudge.no_such_module:x")


def test_loader_adds_entries_after_the_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []

    def loader() -> None:
        calls.append(len(r.names()))  # a lookup while loading sees what is there so far
        r.add("from_file", 7)

    r: Registry[int] = Registry("rj loaded thing", loader=loader)
    monkeypatch.setitem(reg.BUILTIN_MODULES, "rj loaded thing", ())
    r.add("early", 1)
    assert r.names() == ["early", "from_file"] and r.get("from_file") == 7
    assert r.names() == ["early", "from_file"] and calls == [1]  # called once


def test_loaded_by_loads_the_other_registry_first() -> None:
    calls: list[str] = []

    def main_loader() -> None:  # the main registry's modules register set entries too
        calls.append("main")
        sets.add("s", 1)

    main: Registry[int] = Registry("rj main thing", loader=main_loader)
    sets: Registry[int] = Registry("rj set thing", loaded_by=main)
    assert sets.names() == ["s"] and sets.get("s") == 1 and calls == ["main"]
    assert main.names() == [] and calls == ["main"]


def test_scratch_undoes_additions_and_keeps_the_builtins() -> None:
    def loader() -> None:
        r.add("builtin", 1)

    r: Registry[int] = Registry("rj scratch thing", loader=loader)
    with r.scratch():
        r.add("temp", 2)
        r.add("builtin", 3, replace=True)
        assert r.names() == ["builtin", "temp"]
    assert r.names() == ["builtin"] and r.get("builtin") == 1


def test_another_thread_waits_until_every_module_is_in() -> None:
    started, release = threading.Event(), threading.Event()

    def loader() -> None:
        r.add("first", 1)
        started.set()
        assert release.wait(10)
        r.add("second", 2)

    r: Registry[int] = Registry("rj slow thing", loader=loader)
    loading = threading.Thread(target=r.load)
    loading.start()
    assert started.wait(10)
    seen: list[list[str]] = []
    looker = threading.Thread(target=lambda: seen.append(r.names()))
    looker.start()
    looker.join(0.3)
    assert looker.is_alive() and not seen  # it waits instead of seeing half the entries
    release.set()
    loading.join(10)
    looker.join(10)
    assert seen == [["first", "second"]]


def test_entry_points_import_modules_and_add_lazy_objects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dist = tmp_path / "rj_fake_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: rj-fake-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "[rj.test.things]\nby_module = rj_ep_registers\nlazy = rj_ep_lazy:VALUE\n"
    )
    (tmp_path / "rj_ep_registers.py").write_text("import rj_ep_holder as h\nh.R.add('from_module', 5)\n")
    (tmp_path / "rj_ep_lazy.py").write_text("VALUE = 6\n")
    (tmp_path / "rj_ep_holder.py").write_text("R = None\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import rj_ep_holder

    r: Registry[int] = Registry("rj ep thing", entry_point_group="rj.test.things")
    rj_ep_holder.R = r
    assert r.names() == ["from_module", "lazy"] and "rj_ep_lazy" not in sys.modules
    assert r.get("lazy") == 6 and r.get("from_module") == 5
    for mod in ("rj_ep_registers", "rj_ep_lazy", "rj_ep_holder"):
        monkeypatch.delitem(sys.modules, mod)


def _dist(site: Path, name: str, entry_points: str) -> None:
    """An installed distribution ``name`` 0.1 whose entry points are ``entry_points`` (INI text)."""
    info = site / f"{name.replace('-', '_')}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(entry_points)


def test_a_plugin_module_that_fails_is_one_error_naming_it_and_where_it_was_declared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "rj_broken_plugin.py").write_text("import os\nimport rj_dependency_not_installed\n")
    (tmp_path / "rj_broken_by_ep.py").write_text("x = 1 / 0\n")
    _dist(tmp_path, "rj-broken-dist", "[rj.test.broken]\nby_module = rj_broken_by_ep\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(reg.BUILTIN_MODULES, "gizmo", ())
    # Before: the bare ImportError of the missing dependency, with no word of ROBOJUDGE_PLUGINS.
    r: Registry[int] = Registry("gizmo", extra_modules=lambda: ["rj_broken_plugin"])
    with pytest.raises(reg.PluginError) as err:
        r.names()
    assert str(err.value) == (
        "cannot load gizmo plugin module 'rj_broken_plugin' (named in ROBOJUDGE_PLUGINS): "
        "ModuleNotFoundError: No module named 'rj_dependency_not_installed' "
        f"(at {tmp_path / 'rj_broken_plugin.py'}:2); fix it or remove it from ROBOJUDGE_PLUGINS")
    # Before: the ZeroDivisionError itself, naming neither the plugin nor the package that declared it.
    r2: Registry[int] = Registry("gizmo", entry_point_group="rj.test.broken")
    with pytest.raises(reg.PluginError, match=(
            r"^cannot load gizmo plugin module 'rj_broken_by_ep' \(entry point 'by_module' of the installed "
            r"distribution rj-broken-dist 0\.1 \(group rj\.test\.broken\)\): ZeroDivisionError: division by "
            r"zero \(at .*rj_broken_by_ep\.py:1\); fix or uninstall rj-broken-dist$")):
        r2.names()


def test_a_broken_plugin_is_left_out_with_a_warning_inside_skipping_broken_plugins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "rj_skip_broken.py").write_text("import rj_dependency_not_installed\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(reg.BUILTIN_MODULES, "gizmo", ())
    r: Registry[int] = Registry("gizmo", extra_modules=lambda: ["rj_skip_broken"],
                                loader=lambda: r.add("kept", 1))
    with reg.skipping_broken_plugins(), pytest.warns(reg.PluginSkippedWarning) as seen:
        assert r.names() == ["kept"]
    assert len(seen) == 1
    assert str(seen[0].message).startswith("cannot load gizmo plugin module 'rj_skip_broken' (named in ")
    assert str(seen[0].message).endswith("; left out")
    assert r.get("kept") == 1 and not reg._skip_broken  # the block ends, strict again


def test_a_lazy_entry_point_under_a_taken_name_is_refused_naming_both(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "rj_builtin_gizmos.py").write_text(
        "import rj_gizmo_holder as h\ndef make():\n    return 1\nh.R.add('taken', make)\n")
    (tmp_path / "rj_gizmo_holder.py").write_text("R = None\n")
    (tmp_path / "rj_lazy_gizmos.py").write_text("TAKEN = 99\nOTHER = 7\n")
    _dist(tmp_path, "rj-lazy-dist",
          "[rj.test.lazy]\ntaken = rj_lazy_gizmos:TAKEN\nother = rj_lazy_gizmos:OTHER\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(reg.BUILTIN_MODULES, "gizmo", ("rj_builtin_gizmos",))
    import rj_gizmo_holder as h

    h.R = r = Registry("gizmo", entry_point_group="rj.test.lazy")
    # Before: setdefault kept the built-in and dropped the plugin's entry without a word.
    with pytest.raises(reg.PluginError) as err:
        r.names()
    assert str(err.value) == (
        "gizmo 'taken' of entry point 'taken' of the installed distribution rj-lazy-dist 0.1 (group "
        "rj.test.lazy) (rj_lazy_gizmos:TAKEN) is already registered (by rj_builtin_gizmos); fix or "
        "uninstall rj-lazy-dist")
    h.R = r = Registry("gizmo", entry_point_group="rj.test.lazy")
    monkeypatch.delitem(sys.modules, "rj_builtin_gizmos")
    with reg.skipping_broken_plugins(), pytest.warns(reg.PluginSkippedWarning, match="'taken'"):
        assert r.names() == ["other", "taken"]
    assert r.get("taken")() == 1 and r.get("other") == 7  # the built-in kept, the plugin's other entry in
    for mod in ("rj_builtin_gizmos", "rj_gizmo_holder", "rj_lazy_gizmos"):
        monkeypatch.delitem(sys.modules, mod, raising=False)


def test_two_distributions_declaring_one_lazy_name_are_refused_naming_both(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "rj_dup_a.py").write_text("V = 1\n")
    (tmp_path / "rj_dup_b.py").write_text("V = 2\n")
    _dist(tmp_path, "rj-dup-a", "[rj.test.dup]\nsame = rj_dup_a:V\n")
    _dist(tmp_path, "rj-dup-b", "[rj.test.dup]\nsame = rj_dup_b:V\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(reg.BUILTIN_MODULES, "gizmo", ())
    # Before: the second overwrote the first in silence (which one won hung on the order of sys.path).
    with pytest.raises(reg.PluginError) as err:
        Registry("gizmo", entry_point_group="rj.test.dup").names()
    message = str(err.value)
    assert message.startswith("gizmo 'same' is declared twice: ")
    assert "rj_dup_a:V by entry point 'same' of the installed distribution rj-dup-a 0.1" in message
    assert "rj_dup_b:V by entry point 'same' of the installed distribution rj-dup-b 0.1" in message
    assert message.endswith("; keep one (uninstall or fix the other)")
