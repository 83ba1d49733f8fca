"""Simulated annotators for the load test and benchmark: asyncio + httpx against a served app.

Each simulated annotator logs in, reads its queue and labels its tasks one after another as the browser
would: open the page, autosave the PA part, show the instruction (following the redirect to the page),
submit the whole label. Every ``double_every``-th submit is sent twice at once, as a double click
would; exactly one of the pair may be stored (the other is answered as a repeat of it, 303, or refused,
409, when both reached the database at once). The run stops by itself at ``deadline_s``.
:func:`verify` then reads the database and counts lost, duplicated and altered labels.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from robojudge.suite._schema import CHECKLIST_ITEMS

_TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')
_META = re.compile(r'<meta name="csrf-token" content="([^"]+)">')
_VERSION = re.compile(r'name="base_version" value="(\d+)"')
_TASK = re.compile(r'href="/task/([^"]+)"')


def label_for(annotator: int, k: int) -> dict[str, str]:
    """The label annotator ``annotator`` gives its ``k``-th task: varied, and known to the verifier."""
    out = {"pa": str(1 + (annotator + k) % 5), "ia": str(1 + (annotator * 3 + k) % 5),
           "evidence": f"a{annotator} k{k} <i>ok</i>"}
    out.update({f"checklist.{c}": str((annotator + k + j) % 3) for j, c in enumerate(CHECKLIST_ITEMS)})
    return out


PA_KEYS = ("pa", *(f"checklist.{c}" for c in CHECKLIST_ITEMS[:3]))


@dataclass
class LoadResult:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    sent: dict[str, dict[str, str]] = field(default_factory=dict)  # assignment -> submitted values (303)
    statuses: Counter[str] = field(default_factory=Counter)
    unexpected: list[str] = field(default_factory=list)
    double_pairs: int = 0
    timed_out: bool = False
    wall_s: float = 0.0

    def percentile(self, kind: str, q: float) -> float:
        values = sorted(self.latencies[kind])
        if not values:
            return float("nan")
        return values[min(len(values) - 1, max(0, round(q / 100 * len(values) + 0.5) - 1))]

    def all_latencies(self) -> list[float]:
        return [v for vs in self.latencies.values() for v in vs]


async def _annotator(base: str, username: str, password: str, index: int, limit: int, double_every: int,
                     result: LoadResult, deadline: float) -> None:
    import httpx

    # Idle connections are dropped after 10 s, well before the server's keep-alive (30 s with
    # `annotate serve`) ends: reusing one the server is closing at that moment fails as "disconnected".
    limits = httpx.Limits(keepalive_expiry=10.0)
    async with httpx.AsyncClient(base_url=base, timeout=120, follow_redirects=False, limits=limits) as c:

        async def timed(kind: str, method: str, url: str, **kw: object) -> httpx.Response:
            t0 = time.perf_counter()
            r = await c.request(method, url, **kw)  # type: ignore[arg-type]
            result.latencies[kind].append(time.perf_counter() - t0)
            result.statuses[f"{kind} {r.status_code}"] += 1
            return r

        def expect(r: httpx.Response, status: int, what: str) -> bool:
            if r.status_code != status:
                result.unexpected.append(f"{username} {what}: {r.status_code} {r.text[:200]}")
                return False
            return True

        r = await timed("login page", "GET", "/login")
        token = _TOKEN.search(r.text).group(1)  # type: ignore[union-attr]
        r = await timed("login", "POST", "/login", data={"username": username, "password": password,
                                                         "csrf_token": token})
        if not expect(r, 303, "login"):
            return
        r = await timed("queue", "GET", "/")
        csrf = _META.search(r.text).group(1)  # type: ignore[union-attr]
        tasks = _TASK.findall(r.text)[:limit]
        for k, aid in enumerate(tasks):
            if time.monotonic() > deadline:
                result.timed_out = True
                return
            values = label_for(index, k)
            r = await timed("page", "GET", f"/task/{aid}")
            if not expect(r, 200, f"page {aid}"):
                continue
            base_version = int(_VERSION.search(r.text).group(1))  # type: ignore[union-attr]
            draft = {"base_version": base_version, "values": {key: values[key] for key in PA_KEYS}}
            r = await timed("draft", "POST", f"/api/task/{aid}/draft", json=draft,
                            headers={"X-CSRF-Token": csrf})
            if not expect(r, 200, f"draft {aid}"):
                continue
            version = str(r.json()["version"])
            form = {**{key: values[key] for key in PA_KEYS}, "csrf_token": csrf, "base_version": version}
            r = await timed("reveal", "POST", f"/task/{aid}/reveal", data=form)
            if not expect(r, 303, f"reveal {aid}"):
                continue
            r = await timed("page", "GET", f"/task/{aid}")
            if not expect(r, 200, f"page {aid}"):
                continue
            version = _VERSION.search(r.text).group(1)  # type: ignore[union-attr]
            form = {**values, "csrf_token": csrf, "base_version": version}
            if double_every and k % double_every == double_every - 1:
                pair = await asyncio.gather(timed("submit", "POST", f"/task/{aid}/submit", data=form),
                                            timed("submit", "POST", f"/task/{aid}/submit", data=form))
                result.double_pairs += 1
                codes = sorted(p.status_code for p in pair)
                if codes not in ([303, 303], [303, 409]):
                    result.unexpected.append(f"{username} double submit {aid}: {codes}")
                if 303 in codes:
                    result.sent[aid] = values
            else:
                r = await timed("submit", "POST", f"/task/{aid}/submit", data=form)
                if expect(r, 303, f"submit {aid}"):
                    result.sent[aid] = values


async def run_load(base: str, usernames: list[str], password: str, *, per_annotator: int,
                   double_every: int = 10, deadline_s: float = 600.0) -> LoadResult:
    """All annotators at once; returns what was sent and how long each request took."""
    result = LoadResult()
    deadline = time.monotonic() + deadline_s
    t0 = time.perf_counter()

    async def guarded(i: int, username: str) -> None:
        import httpx

        try:
            await _annotator(base, username, password, i, per_annotator, double_every, result, deadline)
        except httpx.HTTPError as exc:  # one client's failure is a finding, not the end of the run
            result.unexpected.append(f"{username} stopped: {type(exc).__name__}: {exc}")

    await asyncio.gather(*(guarded(i, u) for i, u in enumerate(usernames)))
    result.wall_s = time.perf_counter() - t0
    return result


@dataclass(frozen=True)
class Verdict:
    stored: int
    lost: list[str]
    duplicated: list[str]
    altered: list[str]
    extra: list[str]


def verify(db: str, project: str, admin: str, password: str, result: LoadResult) -> Verdict:
    """Compare the database with what the clients were told was stored."""
    from robojudge.annotate import AnnotationService, LabelValues

    lost, duplicated, altered = [], [], []
    with AnnotationService(db) as svc:
        root = svc.authenticate(admin, password)
        assert root is not None
        for aid, values in result.sent.items():
            submitted = [v for v in svc.history(root, aid) if v.status == "submitted"]
            if not submitted:
                lost.append(aid)
            elif len(submitted) > 1:
                duplicated.append(aid)
            elif submitted[0].values != LabelValues.from_form(values):
                altered.append(aid)
    from robojudge.annotate import submitted_labels

    stored = submitted_labels(db, project)
    per_pair = Counter((s.item_id, s.rater, s.kind) for s in stored)
    duplicated += [f"{k}" for k, n in per_pair.items() if n > 1]
    n_stored, n_sent = len(stored), len(result.sent)
    extra = [] if n_stored == n_sent else [f"{n_stored} stored, {n_sent} acknowledged"]
    return Verdict(len(stored), lost, duplicated, altered, extra)


def setup_load_project(root: object, db: str, n_annotators: int, n_items: int,
                       password: str) -> tuple[str, list[str]]:
    """A project of ``n_items`` items sharing one small clip, and a practice round giving every one of
    ``n_annotators`` annotators every item (``n_annotators * n_items`` tasks); plus an admin ``root``."""
    import json
    from pathlib import Path

    from _web_data import _frames

    from robojudge.annotate import add_annotator, create_round, init_project
    from robojudge.video import write_video

    root = Path(str(root))
    root.mkdir(parents=True, exist_ok=True)
    write_video(root / "clip.webm", _frames(0)[:10], fps=10)
    rows = [{"item_id": f"it{i:04d}", "video": "clip.webm", "instruction": f"task {i}"}
            for i in range(n_items)]
    (root / "suite.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    init_project(root / "suite.jsonl", db, "load", seed=1)
    users = [f"ann{i:03d}" for i in range(n_annotators)]
    for u in users:
        add_annotator(db, u, "annotator", password=password)
    add_annotator(db, "root", "admin", password=password)
    create_round(db, "load", "r1", users, [r["item_id"] for r in rows])
    return str(root / "suite.jsonl"), users
