"""Every environment variable robojudge reads, read in one place.

:func:`get` returns one frozen :class:`Settings`, read from the environment the first time it is
asked for and kept for the life of the process: a run sees one set of values from start to end,
whichever module asks. The worker processes of a run (``--workers``, the judges' decoders) are given
the parent's settings as they start (:func:`install`), so they use the values the parent planned and
fingerprinted with even when an embedding program changed ``os.environ`` since, without
:func:`reload`. :func:`reload` reads the environment again (tests that change a variable use it;
``tests/conftest.py`` calls it whenever a test's ``monkeypatch`` sets or restores one).

A value that needs checking (a number) is kept as written and checked when it is used, so a bad
value of one variable does not break commands that never use it; a command checks the ones it uses
before any work (:meth:`Settings.check`), leaving out those a command-line option replaces
(``--decode-workers``, ``--confine``).

Variables read by other libraries (``HF_HUB_CACHE``, ``HF_HOME``, ``HF_HUB_OFFLINE``) are not read
here; they are listed in :data:`VARIABLES` so the documentation table has every variable in one
place. Judge API keys are read by :func:`secret` at the moment a request needs one and never kept.

This module is the bottom layer, beside :mod:`robojudge.registry`: it imports only the standard
library.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import platform
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CACHE_DIR_ENV",
    "CONFINE_ENV",
    "DECODE_WORKERS_ENV",
    "FRAME_MEMORY_GIB_ENV",
    "MAX_NETWORKS_ENV",
    "MUJOCO_GL_ENV",
    "NETWORK_CACHE_GIB_ENV",
    "PLUGINS_ENV",
    "VARIABLES",
    "WEIGHTS_ENV",
    "XDG_CACHE_ENV",
    "InForce",
    "Settings",
    "Variable",
    "get",
    "in_force",
    "install",
    "mujoco_gl_default",
    "unknown_variables",
    "reload",
    "secret",
]

CACHE_DIR_ENV = "ROBOJUDGE_CACHE_DIR"
XDG_CACHE_ENV = "XDG_CACHE_HOME"
PLUGINS_ENV = "ROBOJUDGE_PLUGINS"
CONFINE_ENV = "ROBOJUDGE_CONFINE"
WEIGHTS_ENV = "ROBOJUDGE_WEIGHTS"
DECODE_WORKERS_ENV = "ROBOJUDGE_DECODE_WORKERS"
MUJOCO_GL_ENV = "MUJOCO_GL"
MAX_NETWORKS_ENV = "ROBOJUDGE_MAX_NETWORKS"
NETWORK_CACHE_GIB_ENV = "ROBOJUDGE_NETWORK_CACHE_GIB"
FRAME_MEMORY_GIB_ENV = "ROBOJUDGE_FRAME_MEMORY_GIB"
COLUMNS_ENV = "COLUMNS"
RAY_ADDRESS_ENV = "RAY_ADDRESS"



def mujoco_gl_default() -> str:
    """The offscreen OpenGL backend the simulated suite renders with when ``MUJOCO_GL`` is unset: the one
    MuJoCo takes on this system (it refuses the others when it is imported). ``egl`` on Linux (it renders
    without a display or a GPU), ``cgl`` on macOS, ``glfw`` elsewhere (Windows: MuJoCo renders ``wgl``
    through GLFW too). The system is read as MuJoCo reads it, with :func:`platform.system`."""
    return {"Linux": "egl", "Darwin": "cgl"}.get(platform.system(), "glfw")


MUJOCO_GL_DEFAULT = mujoco_gl_default()
""":func:`mujoco_gl_default` on the system this process started on."""


@dataclass(frozen=True)
class Variable:
    """One environment variable, for the documentation table."""

    name: str
    meaning: str
    default: str
    read_by: str = "robojudge"


VARIABLES: tuple[Variable, ...] = (
    Variable(
        CACHE_DIR_ENV,
        "Folder of the judge response cache and the file-hash cache (`robojudge cache info`, `clear`).",
        f"`${XDG_CACHE_ENV}/robojudge`, else `~/.cache/robojudge`",
    ),
    Variable(XDG_CACHE_ENV, f"The user cache folder, used when `{CACHE_DIR_ENV}` is unset.", "`~/.cache`"),
    Variable(
        PLUGINS_ENV,
        "Comma-separated modules to import for third-party metrics, judge backends and specialized judges "
        "(reaches `--workers` processes).",
        "none",
    ),
    Variable(
        CONFINE_ENV,
        "Folder every manifest path must stay in (like `--confine DIR`); a path outside is an error.",
        "unset: paths outside the manifest's folder only warn",
    ),
    Variable(WEIGHTS_ENV, "Folder of local network weights, `<folder>/<name>/`, looked in first.", "unset"),
    Variable(
        DECODE_WORKERS_ENV,
        "Decoder processes for judges (`0`: decode in threads); `--decode-workers` overrides it.",
        "one per core but one, 1 to 4",
    ),
    Variable(
        MAX_NETWORKS_ENV,
        "Most networks kept loaded per process; a run using more reloads some for every item.",
        "4",
    ),
    Variable(
        NETWORK_CACHE_GIB_ENV,
        "Most GiB of network tensors kept loaded per process (a bigger network is kept alone).",
        "8",
    ),
    Variable(
        FRAME_MEMORY_GIB_ENV,
        "Most GiB of decoded frames a video read at once may hold (`0`: no limit); a larger one is an error "
        "row saying how to shrink it (`--max-side`, `--max-frames`).",
        "50% of the memory available when the video is read (shared among `--workers` processes); on "
        "macOS 50% of the physical memory; on Windows no limit",
    ),
    Variable(
        MUJOCO_GL_ENV,
        "OpenGL backend of the simulated suite (Linux: `egl`, `osmesa`, `glx`; macOS: `cgl`, `glfw`; "
        "Windows: `glfw`, `wgl`); set for MuJoCo when unset.",
        "`egl` on Linux, `cgl` on macOS, `glfw` on Windows",
    ),
    Variable(
        COLUMNS_ENV,
        "Width of the command line's printed tables.",
        "the terminal's width; 240 when output goes to a file or a pipe",
        read_by="robojudge, rich",
    ),
    Variable(
        RAY_ADDRESS_ENV,
        "The Ray cluster `--executor ray --address auto` joins; robojudge checks that it answers first.",
        "unset: `auto` finds a head started on this machine",
        read_by="robojudge, ray",
    ),
    Variable(
        "HF_HUB_CACHE / HF_HOME",
        "The Hugging Face hub cache, looked in after `ROBOJUDGE_WEIGHTS`.",
        "`~/.cache/huggingface/hub`",
        read_by="huggingface_hub",
    ),
    Variable(
        "HF_HUB_OFFLINE", "`1`: never reach the hub (the tests set it).", "unset", read_by="huggingface_hub"
    ),
    Variable(
        "the judge config's `api_key_env`",
        "The API key of a judge server, read when a request is sent and never stored.",
        "none",
    ),
)
"""Every variable that changes what robojudge does, for the table in README.md."""


PREFIX = "ROBOJUDGE_"
"""The prefix of robojudge's own variables: one not in :data:`VARIABLES` is most likely a misspelling."""

PROJECT_VARIABLES: tuple[str, ...] = ("ROBOJUDGE_TEST_POSTGRES_URL", "ROBOJUDGE_VBENCH_PYTHON")
"""``ROBOJUDGE_*`` variables that only the repository's own tests and benchmarks read (the PostgreSQL
server of the store tests, the Python of a VBench install): never warned of, never suggested."""


SECRET_ENDINGS: tuple[str, ...] = ("KEY", "TOKEN", "SECRET", "PASSWORD")
"""How the name of a variable holding a secret ends: a judges file's ``api_key_env`` names a variable of
the user's choosing (``ROBOJUDGE_JUDGE_KEY``), which the judge does read, so it is never called unknown."""


def unknown_variables() -> list[tuple[str, str | None]]:
    """The ``ROBOJUDGE_*`` variables set in the environment (the prefix in any case) that robojudge does
    not read, each with the closest variable it does read (None when none is close), sorted by name.
    Names ending as a secret's do (:data:`SECRET_ENDINGS`) are left out: a judge's ``api_key_env`` may
    name one.

    Nothing reads them, so a misspelt ``ROBOJUDGE_CONFIN`` would silently leave the guard it was meant
    to set off; the command line warns of each (:func:`robojudge.cli.main`).
    """
    known = [v.name for v in VARIABLES if v.name.startswith(PREFIX)]
    out: list[tuple[str, str | None]] = []
    for name in sorted(os.environ):
        if not name.upper().startswith(PREFIX) or name in known or name in PROJECT_VARIABLES:
            continue
        if name.upper().endswith(SECRET_ENDINGS):  # a judge's api_key_env may name it: read, not by us
            continue
        # (compared without the prefix, which every name shares and which would make any two look close)
        tails = {k[len(PREFIX):]: k for k in known}
        close = difflib.get_close_matches(name[len(PREFIX):].upper(), tails, n=1, cutoff=0.6)
        out.append((name, tails[close[0]] if close else None))
    return out


def _text(name: str) -> str | None:
    """The variable's value with spaces stripped; None when unset or blank."""
    value = os.environ.get(name, "").strip()
    return value or None


def _whole_number(name: str, raw: str | None, minimum: int) -> int | None:
    """``raw`` (the value of variable ``name``) as a whole number >= ``minimum``; None when unset."""
    if raw is None:
        return None
    try:
        n = int(raw)
    except ValueError:
        n = minimum - 1
    if n < minimum:
        raise ValueError(f"{name}={raw!r}: expected a whole number >= {minimum}")
    return n


def _width(raw: str | None) -> int | None:
    """``raw`` as a whole number of columns >= 1, else None."""
    try:
        width = int(raw or "")
    except ValueError:
        return None
    return width if width > 0 else None


def _gib(name: str, raw: str | None) -> int | None:
    """``raw`` (the value of variable ``name``), a number of GiB >= 0, in bytes; None when unset."""
    if raw is None:
        return None
    try:
        gib = float(raw)
    except ValueError:
        gib = -1.0
    if not gib >= 0 or gib == float("inf"):
        raise ValueError(f"{name}={raw!r}: expected a number of GiB >= 0")
    return int(gib * 1024**3)


CHECKED: tuple[str, ...] = ("frame_memory_bytes", "max_networks", "network_cache_bytes", "decode_workers")
"""The :class:`Settings` properties that check their variable when read (:meth:`Settings.check`)."""


@dataclass(frozen=True)
class Settings:
    """The environment as robojudge reads it (see :data:`VARIABLES`)."""

    cache_dir: Path
    """``$ROBOJUDGE_CACHE_DIR``, else ``$XDG_CACHE_HOME/robojudge``, else ``~/.cache/robojudge``."""
    plugins: tuple[str, ...]
    """Module names from ``$ROBOJUDGE_PLUGINS`` (comma-separated, blanks dropped)."""
    confine: Path | None
    """``$ROBOJUDGE_CONFINE`` as written (``~`` expanded; not checked or resolved here)."""
    weights: Path | None
    """``$ROBOJUDGE_WEIGHTS`` (``~`` expanded), or None when unset."""
    decode_workers_text: str | None
    """``$ROBOJUDGE_DECODE_WORKERS`` as written; :attr:`decode_workers` checks it."""
    mujoco_gl: str
    """``$MUJOCO_GL``, else :func:`mujoco_gl_default` (this system's)."""
    max_networks_text: str | None = None
    """``$ROBOJUDGE_MAX_NETWORKS`` as written; :attr:`max_networks` checks it."""
    network_cache_gib_text: str | None = None
    """``$ROBOJUDGE_NETWORK_CACHE_GIB`` as written; :attr:`network_cache_bytes` checks it."""
    columns_text: str | None = None
    """``$COLUMNS`` as written (Rich reads it too); :attr:`columns` is the width it gives."""
    frame_memory_gib_text: str | None = None
    """``$ROBOJUDGE_FRAME_MEMORY_GIB`` as written; :attr:`frame_memory_bytes` checks it."""
    ray_address: str | None = None
    """``$RAY_ADDRESS`` as written (Ray reads it too): where ``--address auto`` goes."""
    cache_dir_from: str | None = None
    """The variable :attr:`cache_dir` was read from (``ROBOJUDGE_CACHE_DIR`` or ``XDG_CACHE_HOME``), None
    for the default: what an error about the folder names, so that it does not advise setting the
    variable that is already set to the failing value."""

    @property
    def columns(self) -> int | None:
        """``$COLUMNS`` as a width: None when unset or not a whole number >= 1 (``0``, ``-3``, ``abc``
        are treated as unset; rich read ``0`` as a width of 0 and printed nothing, errors included)."""
        return _width(self.columns_text)

    @property
    def frame_memory_bytes(self) -> int | None:
        """``$ROBOJUDGE_FRAME_MEMORY_GIB`` in bytes (0: no limit), or None when unset.

        Raises:
            ValueError: The variable is set but is not a number >= 0 (the message names it).
        """
        return _gib(FRAME_MEMORY_GIB_ENV, self.frame_memory_gib_text)

    @property
    def max_networks(self) -> int | None:
        """``$ROBOJUDGE_MAX_NETWORKS`` as a number, or None when unset.

        Raises:
            ValueError: The variable is set but is not a whole number >= 1 (the message names it).
        """
        return _whole_number(MAX_NETWORKS_ENV, self.max_networks_text, minimum=1)

    @property
    def network_cache_bytes(self) -> int | None:
        """``$ROBOJUDGE_NETWORK_CACHE_GIB`` in bytes, or None when unset.

        Raises:
            ValueError: The variable is set but is not a number >= 0 (the message names it).
        """
        return _gib(NETWORK_CACHE_GIB_ENV, self.network_cache_gib_text)

    @property
    def decode_workers(self) -> int | None:
        """``$ROBOJUDGE_DECODE_WORKERS`` as a number, or None when unset.

        Raises:
            ValueError: The variable is set but is not a whole number >= 0 (the message names it).
        """
        return _whole_number(DECODE_WORKERS_ENV, self.decode_workers_text, minimum=0)

    def check(self, skip: tuple[str, ...] = ()) -> None:
        """Read every variable that is checked on use, so a bad one is told before any work starts.

        Args:
            skip: Names of the properties not to check (:data:`CHECKED`): those a command does not use,
                or whose variable a command-line option replaces (``decode_workers`` under
                ``--decode-workers``).

        Raises:
            ValueError: The first variable set to something it cannot be (the message names it).
        """
        for name in CHECKED:
            if name not in skip:
                getattr(self, name)

    @classmethod
    def from_environment(cls) -> Settings:
        """Read every variable now (most callers want the process-wide :func:`get`)."""
        cache = _text(CACHE_DIR_ENV)
        cache_from: str | None = CACHE_DIR_ENV
        if cache is not None:
            cache_dir = Path(cache).expanduser()
        else:
            xdg = _text(XDG_CACHE_ENV)
            cache_from = XDG_CACHE_ENV if xdg else None
            cache_dir = (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "robojudge"
        confine = _text(CONFINE_ENV)
        weights = _text(WEIGHTS_ENV)
        return cls(
            cache_dir=cache_dir,
            plugins=tuple(m.strip() for m in (_text(PLUGINS_ENV) or "").split(",") if m.strip()),
            confine=Path(confine).expanduser() if confine else None,
            weights=Path(weights).expanduser() if weights else None,
            decode_workers_text=_text(DECODE_WORKERS_ENV),
            mujoco_gl=_text(MUJOCO_GL_ENV) or mujoco_gl_default(),
            max_networks_text=_text(MAX_NETWORKS_ENV),
            network_cache_gib_text=_text(NETWORK_CACHE_GIB_ENV),
            columns_text=_text(COLUMNS_ENV),
            frame_memory_gib_text=_text(FRAME_MEMORY_GIB_ENV),
            ray_address=_text(RAY_ADDRESS_ENV),
            cache_dir_from=cache_from,
        )


@dataclass(frozen=True)
class InForce:
    """One variable as a process uses it (:func:`in_force`)."""

    name: str
    value: str | None
    """The value in force: the variable's (as written), or, unset, the folder or backend it defaults to
    where that is known here (the cache folder, ``MUJOCO_GL``); None when the default applies."""
    source: str
    """``environment`` (set), ``default`` (unset or blank; ``default (...)`` when set to something
    treated as unset, or read by another library); the cache folder says the variable it came from."""
    default: str
    """The default, as README's table says it."""
    problem: str | None = None
    """Why the value set cannot be used (a command that reads it refuses it), else None."""


def in_force(values: Settings | None = None) -> list[InForce]:
    """Every variable robojudge reads, with the value in force in this process (``values``: these
    settings instead of :func:`get`'s) and where it comes from; what ``robojudge settings`` prints.
    A judge's ``api_key_env`` is not among them: it names a variable of the judge's choosing."""
    s = get() if values is None else values
    default = {v.name: v.default.replace("`", "") for v in VARIABLES}
    default.update({"HF_HUB_CACHE": default["HF_HUB_CACHE / HF_HOME"], "HF_HOME": "~/.cache/huggingface"})

    def plain(name: str, value: object | None, source: str = "environment") -> InForce:
        if value is None or value == ():
            return InForce(name, None, "default", default[name])
        return InForce(name, str(value), source, default[name])

    def checked(name: str, text: str | None, read: Callable[[], object]) -> InForce:
        try:
            read()
        except ValueError as exc:
            return InForce(name, text, "environment", default[name], str(exc))
        return plain(name, text)

    cache_from = {CACHE_DIR_ENV: "environment", XDG_CACHE_ENV: f"environment ({XDG_CACHE_ENV})"}
    columns = plain(COLUMNS_ENV, s.columns_text if s.columns is not None else None)
    if s.columns_text is not None and s.columns is None:
        unusable = f"default ({COLUMNS_ENV}={s.columns_text!r} is not a width)"
        columns = dataclasses.replace(columns, source=unusable)
    return [
        InForce(CACHE_DIR_ENV, str(s.cache_dir), cache_from.get(s.cache_dir_from or "", "default"),
                default[CACHE_DIR_ENV]),
        plain(XDG_CACHE_ENV, _text(XDG_CACHE_ENV)),
        plain(PLUGINS_ENV, ",".join(s.plugins) or None),
        plain(CONFINE_ENV, s.confine),
        plain(WEIGHTS_ENV, s.weights),
        checked(DECODE_WORKERS_ENV, s.decode_workers_text, lambda: s.decode_workers),
        checked(MAX_NETWORKS_ENV, s.max_networks_text, lambda: s.max_networks),
        checked(NETWORK_CACHE_GIB_ENV, s.network_cache_gib_text, lambda: s.network_cache_bytes),
        checked(FRAME_MEMORY_GIB_ENV, s.frame_memory_gib_text, lambda: s.frame_memory_bytes),
        InForce(MUJOCO_GL_ENV, s.mujoco_gl, "environment" if _text(MUJOCO_GL_ENV) else "default",
                default[MUJOCO_GL_ENV]),
        columns,
        plain(RAY_ADDRESS_ENV, s.ray_address),
        hub_cache(default["HF_HUB_CACHE"]),
        *(plain(name, _text(name)) for name in ("HF_HOME", "HF_HUB_OFFLINE")),
    ]


def hub_cache(default: str) -> InForce:
    """The Hugging Face hub cache as ``huggingface_hub`` resolves it, without importing it (the core
    install lacks it): ``HF_HUB_CACHE``, else ``$HF_HOME/hub``, else ``$XDG_CACHE_HOME/huggingface/hub``
    (the source names the variable it came from), else the default."""
    if (hub := _text("HF_HUB_CACHE")) is not None:
        return InForce("HF_HUB_CACHE", hub, "environment", default)
    if (home := _text("HF_HOME")) is not None:
        return InForce("HF_HUB_CACHE", str(Path(home).expanduser() / "hub"), "environment (HF_HOME)", default)
    if (xdg := _text(XDG_CACHE_ENV)) is not None:
        return InForce("HF_HUB_CACHE", str(Path(xdg).expanduser() / "huggingface" / "hub"),
                       f"environment ({XDG_CACHE_ENV})", default)
    return InForce("HF_HUB_CACHE", None, "default", default)


_current: Settings | None = None
_lock = threading.Lock()


def get() -> Settings:
    """The process's settings, read from the environment on the first call."""
    global _current
    current = _current
    if current is None:
        with _lock:
            if _current is None:
                _current = Settings.from_environment()
            current = _current
    return current


def reload() -> Settings:
    """Read the environment again (after a test or an embedding program changed it)."""
    global _current
    with _lock:
        _current = Settings.from_environment()
        return _current


def install(values: Settings) -> None:
    """Make ``values`` this process's settings: what a worker process does first with its parent's, so
    that one run sees one set of values in all its processes (a worker that read its own environment
    took another weights folder than the one the parent fingerprinted with)."""
    global _current
    with _lock:
        _current = values


def forget_unusable_columns() -> None:
    """Unset ``$COLUMNS`` in this process when it is set but is not a width (see
    :attr:`Settings.columns`), so that rich and typer, which read it themselves (the help, a usage
    error), use the terminal's width too. The command line calls it before it prints anything."""
    text = os.environ.get(COLUMNS_ENV)
    if text is not None and _width(text) is None:
        del os.environ[COLUMNS_ENV]
        reload()


def secret(name: str) -> str | None:
    """The environment variable ``name`` (a judge's API key), read now and never kept; None if unset."""
    return os.environ.get(name)


def library_default(name: str, value: str) -> bool:
    """Set another library's environment variable ``name`` to ``value`` in this process unless it is set
    (Ray's ``RAY_COLOR_PREFIX`` while robojudge runs Ray); True if it was set here, for
    :func:`library_default_undone`."""
    if name in os.environ:
        return False
    os.environ[name] = value
    return True


def library_default_undone(name: str) -> None:
    """Remove a variable :func:`library_default` set."""
    os.environ.pop(name, None)
