"""Where manifest paths may lead: outside the manifest's folder warns, outside a confined one is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from robojudge.suite import CONFINE_ENV, ManifestError, load_suite, validate_manifest


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    """A manifest folder with a video inside, a secret next to it, and items reaching for both."""
    root = tmp_path / "suite"
    (root / "videos").mkdir(parents=True)
    (root / "videos" / "in.mp4").write_bytes(b"")
    secret = tmp_path / "private" / "secret.mp4"
    secret.parent.mkdir()
    secret.write_bytes(b"")
    (root / "videos" / "link.mp4").symlink_to(secret)
    rows = [
        {"item_id": "rel", "video": "videos/in.mp4"},
        {"item_id": "abs_in", "video": str(root / "videos" / "in.mp4")},
        {"item_id": "dotdot", "video": "videos/../../private/secret.mp4"},
        {"item_id": "abs_out", "video": str(secret)},
        {"item_id": "symlink", "video": "videos/link.mp4"},
        {"item_id": "view_out", "video": "videos/in.mp4",
         "views": {"front": "videos/in.mp4", "side": str(secret)}},
    ]
    manifest = root / "suite.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return manifest, secret


OUTSIDE = {"dotdot": "video", "abs_out": "video", "symlink": "video", "view_out": "views.side"}


def test_validate_warns_about_paths_outside_the_manifest_folder(layout: tuple[Path, Path]) -> None:
    manifest, secret = layout
    problems = validate_manifest(manifest)
    assert all(p.severity == "warning" for p in problems)
    assert {p.item_id: p.field for p in problems} == OUTSIDE
    for p in problems:
        assert p.message == f"{secret} is outside the manifest's folder {manifest.parent.resolve()}"
        assert str(p).startswith(f"{manifest}:{p.line}: item {p.item_id!r} field {p.field}: warning: ")
    # Warnings are not errors: every item still loads, absolute paths included.
    suite = load_suite(manifest)
    assert len(suite) == 6 and suite.problems == []
    assert sorted(w.item_id for w in suite.warnings if w.item_id) == sorted(OUTSIDE)


def test_confine_refuses_only_the_items_that_leave_the_folder(layout: tuple[Path, Path]) -> None:
    manifest, secret = layout
    confine = manifest.parent
    problems = validate_manifest(manifest, confine=confine)
    expected = {k: (v, "error") for k, v in OUTSIDE.items()}
    assert {p.item_id: (p.field, p.severity) for p in problems} == expected
    assert all(p.message == f"{secret} is outside the confined folder {confine.resolve()}" for p in problems)
    suite = load_suite(manifest, strict=False, confine=confine)
    assert [it.item_id for it in suite] == ["rel", "abs_in"]  # absolute paths inside still work
    assert len(suite.problems) == 4
    with pytest.raises(ManifestError):
        load_suite(manifest, confine=confine)


def test_confine_from_the_environment(layout: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    manifest, secret = layout
    monkeypatch.setenv(CONFINE_ENV, str(manifest.parent))
    assert [it.item_id for it in load_suite(manifest, strict=False)] == ["rel", "abs_in"]
    # A wider confinement admits the secret's folder; an explicit argument beats the variable.
    wide = load_suite(manifest, strict=False, confine=secret.parent.parent)
    assert len(wide) == 6 and wide.problems == []


def test_confine_must_be_an_existing_folder(layout: tuple[Path, Path], tmp_path: Path) -> None:
    manifest, _ = layout
    with pytest.raises(ValueError, match="confine folder .*nowhere.* does not exist"):
        load_suite(manifest, confine=tmp_path / "nowhere")


def test_the_manifest_resolver_resolves_as_path_resolve(tmp_path: Path) -> None:
    # A manifest read resolves each folder once (two thirds of the time of reading 9,060 items) and
    # must give Path.resolve()'s answer for every kind of path an item can name.
    from robojudge.suite._paths import Resolver

    data = tmp_path / "data"
    (data / "videos").mkdir(parents=True)
    (data / "videos" / "a.mp4").write_bytes(b"x")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "b.mp4").write_bytes(b"x")
    (data / "linked_folder").symlink_to(tmp_path / "elsewhere")  # a folder that is a link
    (data / "videos" / "link.mp4").symlink_to("../../elsewhere/b.mp4")  # a file that is a relative link
    (data / "videos" / "chain.mp4").symlink_to("link.mp4")  # a link to a link
    (data / "loop1").symlink_to("loop2")
    (data / "loop2").symlink_to("loop1")
    paths = ["videos/a.mp4", "linked_folder/b.mp4", "videos/link.mp4", "videos/chain.mp4",
             "videos/../videos/a.mp4", "videos/..", "videos/.", "missing/deeper/c.mp4", "videos/missing.mp4",
             str(tmp_path / "elsewhere/b.mp4"), "linked_folder/../videos/a.mp4", "loop1/x.mp4", "loop1"]
    resolve = Resolver()
    for _ in range(2):  # the second round answers from the remembered folders
        for p in paths:
            try:
                want: Path | str = (data / p).resolve()
            except (OSError, RuntimeError) as exc:  # a loop of links, where Python says so
                want = type(exc).__name__
            try:
                got: Path | str = resolve(data / p)
            except (OSError, RuntimeError) as exc:
                got = type(exc).__name__
            assert got == want, p
    # ``linked_folder/b.mp4`` really went through the link, and the chain of links to its end
    assert resolve(data / "videos/chain.mp4") == (tmp_path / "elsewhere/b.mp4").resolve()
    assert resolve.folder(data) == data.resolve()
    with pytest.raises(ValueError):
        resolve(data / "videos/a\0.mp4")
