"""Shared pytest fixtures."""

import csv
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from _postgres import icu_db_url, postgres_db_url, postgres_url  # noqa: F401  (fixtures, used by name)
from robojudge import settings

# Folders whose test files share session-scoped fixtures (tests/kiva: a simulator suite and a reader
# trained on it); under xdist all of such a folder's files go to one worker, so they are built once.
_SHARED_SESSION_FOLDERS = ("tests/kiva/",)

# Under xdist these files (or folders) start first, the longest first: a long file handed out last would
# leave the other worker idle at the end. Seconds each took under `make test` in 2026-12 on 2 cores that
# other jobs kept at a load of about 5. A stale list costs only balance, never a test.
_LONG_FIRST = (
    "tests/cli/test_core_install.py",  # 160-185 s: a fresh venv and a pip install of the checkout
    "tests/suite_sim/test_sim_kinematic.py",  # 110-125 s
    "tests/kiva/",  # 120-130 s
    "tests/cli/test_cli.py",  # 110-135 s
    "tests/run/test_ray.py",  # 70-80 s
    "tests/test_demo_kiva.py",  # 45-65 s
)


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile`` (``make test``): each file whole on one worker, each shared-fixture folder too.

    A module- or session-scoped fixture is built once per worker that uses it: a file split across
    workers would build its expensive module fixtures (simulator rollouts, tiny networks, a Ray head)
    twice. pytest-xdist's ``loadgroup`` cannot group them: it renames node ids, which pytest 9 ignores.
    Files are handed out in the workers' collection order (:data:`_LONG_FIRST` first, see
    :func:`pytest_collection_modifyitems`), not xdist's default of most tests first.
    """
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class _FileOrFolderScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = super()._split_scope(nodeid)
            return next((folder for folder in _SHARED_SESSION_FOLDERS if path.startswith(folder)), path)

    config.option.loadscopereorder = False
    return _FileOrFolderScheduling(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On xdist workers under ``--dist loadfile``: the files of :data:`_LONG_FIRST` first, in its order.

    Every worker sorts alike, so their collections stay identical; the order within a file is kept.
    """
    if not getattr(config, "workerinput", {}).get("rj_long_first"):
        return

    def rank(item: pytest.Item) -> int:
        return next(
            (i for i, prefix in enumerate(_LONG_FIRST) if item.nodeid.startswith(prefix)), len(_LONG_FIRST)
        )

    items.sort(key=rank)  # stable


# Terminal size variables. xdist's workers start with COLUMNS=80 in their environment; robojudge's
# module-level rich consoles (robojudge.cli._common) fix their width from COLUMNS when created, so a
# worker that imports them at collection prints 80-column tables even where a test sets COLUMNS.
_TERMINAL_VARS = ("COLUMNS", "LINES")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """On the xdist controller: each worker gets the controller's terminal size variables and dist mode."""
    node.workerinput["rj_terminal_env"] = {name: os.environ.get(name) for name in _TERMINAL_VARS}
    node.workerinput["rj_long_first"] = node.config.getvalue("dist") == "loadfile"


def pytest_configure(config: pytest.Config) -> None:
    """On an xdist worker: the controller's terminal size variables, as a single-process run sees them.

    Every test process loads torch's compiler (triton) before any test makes a GL context: loaded after
    one, it crashes the process (robojudge.suite.sim._render.load_compiler_before_gl), and a worker may
    render a MuJoCo scene in one test file and train a KIVA reader in the next.
    """
    from robojudge.suite.sim._render import load_compiler_before_gl

    load_compiler_before_gl()
    controller_env = getattr(config, "workerinput", {}).get("rj_terminal_env")
    if controller_env is None:
        return
    for name, value in controller_env.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(autouse=True, scope="session")
def _user_cache_apart(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """robojudge's user cache (file digests, judge replies, annotation media) in a folder of the session's,
    for the tests and the commands they start: the tests of folders without a cache fixture of their own
    wrote to the real ``~/.cache/robojudge`` of whoever ran them. A test that sets or removes the variable
    itself (monkeypatch) still does."""
    old = os.environ.get(settings.CACHE_DIR_ENV)
    os.environ[settings.CACHE_DIR_ENV] = str(tmp_path_factory.mktemp("user-cache"))
    settings.reload()
    yield
    if old is None:
        os.environ.pop(settings.CACHE_DIR_ENV, None)
    else:
        os.environ[settings.CACHE_DIR_ENV] = old
    settings.reload()


@pytest.fixture(autouse=True, scope="session")
def _settings_follow_monkeypatch() -> Iterator[None]:
    """Re-read robojudge's settings whenever a test's monkeypatch sets, removes or restores a variable.

    The settings are read once per process, which is right for a run but not for tests that change a
    variable in the middle of a session (``monkeypatch.setenv("ROBOJUDGE_WEIGHTS", ...)``, also on a
    ``pytest.MonkeyPatch.context()``); wrapping the three methods covers them all without each test
    having to remember :func:`robojudge.settings.reload`.
    """
    cls = pytest.MonkeyPatch
    originals = {name: getattr(cls, name) for name in ("setenv", "delenv", "undo")}

    def follow(method: Any) -> Any:
        def wrapped(self: pytest.MonkeyPatch, *args: Any, **kwargs: Any) -> Any:
            try:
                return method(self, *args, **kwargs)
            finally:
                settings.reload()

        return wrapped

    for name, method in originals.items():
        setattr(cls, name, follow(method))
    settings.reload()
    yield
    for name, method in originals.items():
        setattr(cls, name, method)


@pytest.fixture
def default_csv_limit() -> Iterator[None]:
    """Python's own limit on a CSV cell (131,072 characters), as a fresh process has it: robojudge's readers
    raise it for the whole process, so an earlier test may have. The limit in force is put back after."""
    old = csv.field_size_limit(131_072)
    yield
    csv.field_size_limit(old)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A URL for an empty result store: a new SQLite file, or a new PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'results.sqlite'}"
    return str(request.getfixturevalue("postgres_db_url"))


@pytest.fixture
def weights(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty ``$ROBOJUDGE_WEIGHTS`` folder and hub cache, offline; no loaded network kept before or after.

    Tests put tiny random networks into the folder; nothing can come from a hub.
    """
    import huggingface_hub.constants

    from robojudge.models import clear

    root = tmp_path / "weights"
    root.mkdir()
    monkeypatch.setenv("ROBOJUDGE_WEIGHTS", str(root))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    clear()
    yield root
    clear()
