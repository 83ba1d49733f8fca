"""A small suite and project for the web-app tests, with names that must never reach a browser.

The generator names, folder and file names below are "secrets": every test that reads a page, a JSON
reply or a header checks that none of them appears.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from robojudge.annotate import add_annotator, add_example, assign, init_project
from robojudge.video import write_video

SECRET = "test-secret-" + "x" * 24
PASSWORD = "correct horse battery"
GENERATORS = ("ZephyrGenAlpha", "QuokkaVidBeta")
SECRET_DIR = "gen_outputs_confidential"
INJECTED = "<script>window.__pwned = 1</script><img src=x onerror=\"window.__pwned=2\">"
FPS = 10
N_FRAMES = 40  # 4 s at 10 fps: two 3-second segments when segments are on


def leaks(text: str) -> list[str]:
    """The secret names (generators, folders, file names, item ids of the manifest) found in ``text``."""
    words = [*GENERATORS, SECRET_DIR, "zephyr", "quokka", ".webm", "suite.jsonl"]
    words += ["item-0", "item-1", "item-2", "item-mv"]
    low = text.lower()
    return [w for w in words if w.lower() in low]


def _frames(seed: int) -> np.ndarray:
    """Frames whose index is readable from the pixels: frame i has its top-left block at brightness 6*i."""
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 60, size=(48, 64, 3), dtype=np.uint8)
    frames = np.repeat(base[None], N_FRAMES, axis=0)
    for i in range(N_FRAMES):
        frames[i, :16, :16] = 6 * i
    return frames


def make_suite(root: Path, *, multiview: bool = False) -> Path:
    """Three single-view items (one with ``<script>`` in its instruction), plus a two-view item if asked."""
    folder = root / SECRET_DIR
    folder.mkdir(parents=True)
    rows = []
    for i in range(3):
        gen = GENERATORS[i % 2]
        name = f"{gen.lower()}_take{i}.webm"
        write_video(folder / name, _frames(i), fps=FPS)
        instruction = INJECTED if i == 0 else f"put the block {i} in the bowl"
        rows.append({"item_id": f"item-{i}", "video": f"{SECRET_DIR}/{name}", "instruction": instruction,
                     "generator": gen})
    if multiview:
        views = {}
        for v in ("front", "wrist"):
            name = f"{GENERATORS[0].lower()}_mv_{v}.webm"
            write_video(folder / name, _frames(10 + len(v)), fps=FPS)
            views[v] = f"{SECRET_DIR}/{name}"
        rows.append({"item_id": "item-mv", "video": views["front"], "views": views, "main_view": "front",
                     "instruction": "stack the cups", "generator": GENERATORS[0]})
    manifest = root / "suite.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return manifest


@dataclass(frozen=True)
class Project:
    db: str
    suite: Path
    name: str


EXAMPLE_TEXT = "the cup <b>melts</b> into the table at 1 s"


def make_project(tmp: Path, db: str | None = None, *, multiview: bool = False, segment_s: float | None = None,
                 reviewers: bool = True, example: bool = False) -> Project:
    """alice labels every item, bob cross-reviews, carol adjudicates; eve is an annotator with no work.

    With ``example``, item-2 is pinned as a PA reference example (score 2) instead of being dealt.
    """
    suite = make_suite(tmp / "suite", multiview=multiview)
    db = db or f"sqlite:///{tmp / 'ann.sqlite'}"
    init_project(suite, db, "p1", seed=3, segment_s=segment_s)
    if example:
        add_example(db, "p1", "item-2", "pa", 2, EXAMPLE_TEXT)
    people = (("alice", "annotator"), ("bob", "reviewer"), ("carol", "adjudicator"), ("eve", "annotator"),
              ("root", "admin"))
    for user, role in people:
        add_annotator(db, user, role, password=PASSWORD)
    assign(db, "p1", ["alice"], kind="label")
    if reviewers:
        assign(db, "p1", ["bob"], kind="review")
        assign(db, "p1", ["carol"], kind="adjudicate")
    return Project(db, suite, "p1")


def copy_project(template: Project, dest: Path) -> Project:
    """A private copy of a SQLite project (the suite's files are shared, read-only)."""
    import shutil

    src = Path(template.db.removeprefix("sqlite:///"))
    dest.mkdir(parents=True, exist_ok=True)
    for suffix in ("", "-wal", "-shm"):
        if Path(f"{src}{suffix}").exists():
            shutil.copyfile(f"{src}{suffix}", dest / f"ann.sqlite{suffix}")
    return Project(f"sqlite:///{dest / 'ann.sqlite'}", template.suite, template.name)


@contextmanager
def cheap_passwords() -> Iterator[None]:
    """argon2id with the smallest cost, so that the tests' many logins take milliseconds.

    The hashes stay argon2id (the stored string names its parameters); only time and memory drop.
    """
    from argon2 import PasswordHasher

    from robojudge.annotate import _passwords

    cheap = PasswordHasher(time_cost=1, memory_cost=64, parallelism=1)
    original = _passwords._hasher
    _passwords._hasher = lambda: cheap  # type: ignore[assignment]
    try:
        yield
    finally:
        _passwords._hasher = original


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def running(app: object) -> Iterator[str]:
    """Serve ``app`` with uvicorn on 127.0.0.1 in a thread; yields its base URL."""
    import uvicorn

    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", server_header=False,
                            lifespan="off", timeout_keep_alive=30)  # as `annotate serve`
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)


def hold_first_post() -> tuple[list, object]:
    """``(held, handler)``: a Playwright route handler that keeps the first POST it sees in ``held``, not
    sent until the test calls ``held[0].continue_()`` (a save on its way), and lets every other request
    through."""
    held: list = []

    def handler(route) -> None:  # type: ignore[no-untyped-def]
        if route.request.method == "POST" and not held:
            held.append(route)
        else:
            route.continue_()

    return held, handler
