"""The Ray executor (``--executor ray``): the scoring loop's tasks on a Ray cluster.

It implements the same :class:`~robojudge.run._executor.Executor` interface as the local
executors, so planning (what is stored is skipped), scheduling, storing and progress stay in the
driver, unchanged: workers only compute rows and send them back; the driver stores them with the
store's idempotent insert on the result key. A task Ray runs twice (a retry after its worker died,
a duplicate after a lost reply) therefore never adds a second row.

CPU-only tasks are Ray tasks; a task with a model-backed metric goes to an actor that stays up
between tasks, so its networks are loaded once per actor (as many actors as leave one task's CPU
free, see :meth:`RayExecutor._room_for_actor`). Both reserve what the task's metrics declare
(:mod:`robojudge.run._ray_place`). A worker that dies mid-task is replaced and its task
retried (``max_retries``); a task of several parts (metrics, items) that still cannot finish is run
again part by part (``split``), and a part that cannot finish alone becomes error rows, never a
crashed run.
At most ``workers * prefetch`` tasks are in flight (``workers`` where the cluster has more CPUs than
that), so the driver's memory does not grow with the suite. Ray is imported here only when a run starts.
"""

from __future__ import annotations

import contextlib
import logging
import re
import signal
import socket
import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

from robojudge import settings
from robojudge._machine import usable_cpus
from robojudge.run._ray_place import Placement, check_fits, task_placement
from robojudge.run._timelimit import allow_hard_limit

T = TypeVar("T")
R = TypeVar("R")

RAY_MISSING = "--executor ray needs Ray, which is not installed: pip install '.[ray]' in a robojudge checkout"
LOCAL = "local"
AUTO = "auto"
CLIENT = "ray://"
ADDRESS_FORMS = "local, auto, ray://HOST:PORT (Ray Client) or HOST:PORT (a cluster's GCS address)"

CONNECT_TIMEOUT_S = 10.0
"""Seconds a cluster's address (``HOST:PORT``, ``ray://HOST:PORT``) has to accept a TCP connection before
the run stops with :class:`RayUnavailableError`: given an address where nothing answers, Ray's own
connection loop retries for many minutes without raising."""


RAY_DEATH_NOTES = ("A worker died or was killed while executing a task", "so the task will be retried")
"""Words of the notes Ray's raylet sends the driver when a worker dies and when a task is retried; a run
robojudge drives leaves them out of its output (:class:`_QuietRay`): its own crash warning and error rows
say how the task ended."""


class RayUnavailableError(RuntimeError):
    """Ray is not installed, or the cluster cannot be reached; the message says what to do."""


def split_address(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of a ``HOST:PORT`` or ``ray://HOST:PORT`` address (an IPv6 host in brackets);
    ``None`` for ``local`` and ``auto``.

    Raises:
        ValueError: Any other text, naming ``--address`` and the forms it takes.
    """
    if address in (LOCAL, AUTO):
        return None
    rest = address[len(CLIENT):] if address.startswith(CLIENT) else address
    if rest.startswith("["):  # [IPv6]:PORT
        host, sep, port = rest[1:].partition("]:")
    else:
        host, sep, port = rest.rpartition(":")
        if ":" in host:  # a bare IPv6 address: which colon starts the port is a guess
            sep = ""
    if not sep or not host or not (port.isascii() and port.isdigit()) or not 0 < int(port) < 65536:
        raise ValueError(f"--address {address!r} is not a Ray address; give {ADDRESS_FORMS}")
    return host, int(port)


def check_reachable(address: str, shown: str, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """Stop unless something at ``address`` (``HOST:PORT`` or ``ray://HOST:PORT``; other forms pass)
    accepts a TCP connection within ``timeout`` seconds. ``shown``: how the message names the address.

    Raises:
        ValueError: ``address`` is not a Ray address (:func:`split_address`).
        RayUnavailableError: Nothing answers there (refused, unreachable, unknown host, or no answer in time).
    """
    where = split_address(address)
    if where is None:
        return
    try:
        with socket.create_connection(where, timeout=timeout):
            pass
    except TimeoutError:
        raise RayUnavailableError(_unreachable(shown, f"no answer within {timeout:g} s")) from None
    except OSError as exc:
        raise RayUnavailableError(_unreachable(shown, exc.strerror or str(exc))) from None


def _unreachable(shown: str, why: str) -> str:
    return (f"cannot reach a Ray cluster at {shown} ({why}); start a head with "
            "`ray start --head --node-ip-address 127.0.0.1`, or use --address local")


def _refused(shown: str, exc: BaseException) -> str:
    """Why ``ray.init`` failed, from its exception and the ones it chains: a head that wants Ray's auth
    token (Ray 2.60 turns token authentication on for new clusters) answered, and was refused."""
    chain: list[str] = []
    seen: BaseException | None = exc
    while seen is not None and len(chain) < 5:
        chain.append(f"{type(seen).__name__}: {seen}")
        seen = seen.__cause__ or seen.__context__
    text = " | ".join(chain)
    # Ray's words, not a host name that holds "auth" (ray-auth-01)
    if re.search(r"AuthenticationError|Unauthenticated|InvalidAuthToken|auth token|RAY_AUTH", text):
        return (f"the Ray cluster at {shown} refused this driver: it needs the cluster's auth token. Set "
                "RAY_AUTH_MODE=token (the token is read from ~/.ray/auth_token, or set RAY_AUTH_TOKEN) and "
                f"run again (Ray said: {' | '.join(c.splitlines()[0] for c in chain)[:400]})")
    return _unreachable(shown, str(exc))


def import_ray() -> Any:
    """The ``ray`` module, or :class:`RayUnavailableError` naming the extra to install."""
    try:
        import ray
    except ImportError:
        raise RayUnavailableError(RAY_MISSING) from None
    return ray


def _share_cpus() -> None:
    """Run OpenCV on the CPUs Ray gave this task, not on every CPU of the node (each worker process
    would otherwise start a thread per CPU: :func:`robojudge.run._executor.cv_threads_per_worker`), and
    hold decoded frames to the same share of the node's memory budget (as many tasks as the node has
    CPUs may read videos at once: :func:`robojudge.video.set_frame_memory_share`)."""
    import cv2

    from robojudge.video import set_frame_memory_share

    context = import_ray().get_runtime_context()
    cpus = context.get_assigned_resources().get("CPU", 1.0)
    cv2.setNumThreads(max(1, int(cpus)))
    node = _node_cpus(context.get_node_id())
    set_frame_memory_share(min(1.0, max(cpus, 1.0 / node) / node))


_node_cpu_count: dict[str, float] = {}


def _node_cpus(node_id: str) -> float:
    """The CPUs Ray schedules on this worker's node (``ray start --num-cpus``), which is how many
    one-CPU tasks may read videos there at once; the CPUs this process may use where Ray does not
    say. Asked once per worker process (a worker stays on its node)."""
    if node_id not in _node_cpu_count:
        declared = next((node.get("Resources", {}).get("CPU") for node in import_ray().nodes()
                         if node.get("NodeID") == node_id), None)
        _node_cpu_count[node_id] = float(declared) if declared else float(usable_cpus())
    return _node_cpu_count[node_id]


class _QuietRay:
    """While robojudge's own Ray connection is up, keeps Ray's notes on dead workers and retried tasks
    (:data:`RAY_DEATH_NOTES`) out of the run's output, and Ray's colour codes out of output that is not a
    terminal (``RAY_COLOR_PREFIX=0``, unless set). Ray prints its raylet's notes to the driver's stdout
    whatever ``log_to_driver`` says; they are dropped where Ray's driver prints them
    (``ray._private.worker.print_to_stdstream``, looked up when a note comes), other notes are kept."""

    def __init__(self) -> None:
        self._worker: Any = None
        self._print: Any = None
        self._colour_set = False

    def start(self) -> None:
        if not sys.stdout.isatty():
            self._colour_set = settings.library_default("RAY_COLOR_PREFIX", "0")
        try:
            import ray._private.worker as worker
        except ImportError:  # another Ray: its notes are shown as it prints them
            return
        shown = getattr(worker, "print_to_stdstream", None)
        if shown is None:
            return

        def print_to_stdstream(data: dict[str, Any], ignore_prefix: bool) -> None:
            if data.get("pid") == "raylet":
                lines = [line for line in data.get("lines", [])
                         if not any(note in str(line) for note in RAY_DEATH_NOTES)]
                if not lines:
                    return
                data = {**data, "lines": lines}
            shown(data, ignore_prefix)

        self._worker, self._print = worker, shown
        worker.print_to_stdstream = print_to_stdstream

    def stop(self) -> None:
        if self._worker is not None:
            self._worker.print_to_stdstream = self._print
            self._worker = self._print = None
        if self._colour_set:
            settings.library_default_undone("RAY_COLOR_PREFIX")
            self._colour_set = False


def _call(fn: Callable[[Any], Any], task: Any) -> Any:
    _share_cpus()
    allow_hard_limit()
    return fn(task)


class _Scorer:
    """A long-lived worker: networks a metric loads stay in its process between tasks."""

    def run(self, fn: Callable[[Any], Any], task: Any) -> Any:
        _share_cpus()
        allow_hard_limit()
        return fn(task)


def _worker_died(exc: BaseException) -> bool:
    """Whether ``exc`` says the task's worker died (crashed, or killed for memory), not that the task
    failed in a living worker: a task made of several parts is then worth running again part by part."""
    ray = import_ray()
    return isinstance(exc, ray.exceptions.WorkerCrashedError | ray.exceptions.ActorDiedError
                      | ray.exceptions.OutOfMemoryError)


def _reason(exc: BaseException, retries: int, doing: str = "scoring") -> str:
    ray = import_ray()
    if isinstance(exc, ray.exceptions.WorkerCrashedError | ray.exceptions.ActorDiedError):
        n = retries + 1
        return f"the Ray worker died while {doing} this item ({n} attempt{'s' if n > 1 else ''})"
    if isinstance(exc, ray.exceptions.OutOfMemoryError):
        return f"the Ray worker ran out of memory while {doing} this item"
    first = str(exc).strip().splitlines()
    said = f"Ray could not run this task: {type(exc).__name__}: {first[-1] if first else ''}".rstrip(": ")
    if "RaySystemError" in f"{type(exc).__name__} {exc}":  # the workers' environment, not the item
        said += ("; the workers cannot run robojudge's task (a module, extra or plugin the driver has and "
                 "they lack): fix their environment, then run again with --retry-errors")
    return said


class RayExecutor:
    """Runs tasks on a Ray cluster (see the module doc).

    Args:
        address: ``local`` starts a private Ray instance on this machine, its node address 127.0.0.1
            (Ray still listens on every interface), with ``workers`` CPUs (default: one per core);
            ``auto`` joins the cluster this machine belongs to (``ray start`` or ``$RAY_ADDRESS``);
            ``ray://HOST:PORT`` connects through Ray Client;
            ``HOST:PORT`` is a cluster's GCS address. When Ray is already initialised in this process,
            that connection is used whatever the address. An address (``HOST:PORT``, ``ray://``, or
            ``$RAY_ADDRESS`` for ``auto``) where nothing accepts a connection within
            :data:`CONNECT_TIMEOUT_S` is a :class:`RayUnavailableError`; any other text a ``ValueError``.
        workers: Tasks running at once; default: the cluster's CPUs. Where the cluster has more CPUs,
            no more than ``workers`` tasks are sent at once (no ``prefetch``).
        max_retries: Times Ray runs a task again after its worker died (and restarts an actor).
        prefetch: Tasks queued per running task, so no worker waits for the driver.
        placement: A task's resources (default :func:`~robojudge.run._ray_place.task_placement`).
    """

    in_process = False

    def __init__(
        self,
        address: str = "auto",
        *,
        workers: int | None = None,
        max_retries: int = 3,
        prefetch: int = 2,
        placement: Callable[[Any, float], Placement] = task_placement,
    ) -> None:
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be at least 0, got {max_retries}")
        self._ray = import_ray()
        split_address(address)  # a malformed address fails here, naming the forms, not in Ray
        self._address = address
        self._asked = workers
        self._retries = max_retries
        self._prefetch = max(1, prefetch)
        self._placement = placement
        self._owns = False
        self._quiet = _QuietRay()
        self._cluster: dict[str, float] = {}
        self._pools: dict[Placement, list[Any]] = {}
        self._load: dict[int, int] = {}  # actor (by id of its handle) -> calls in flight
        self.workers = workers or 1
        self.actors_started = 0  # actors this executor created (tests, diagnostics)
        self._connect()

    def _connect(self) -> None:
        ray = self._ray
        if not ray.is_initialized():
            term_before = signal.getsignal(signal.SIGTERM)
            if self._address == LOCAL:
                # A private instance whose node address is 127.0.0.1 (its ports still listen on every
                # interface with Ray 2.60; its auth token guards them: docs/ray.md). Ray's INFO and WARNING
                # lines about starting it ("Started a local Ray instance", the token's) are not shown.
                self._quiet.start()
                try:
                    ray.init(address="local", num_cpus=self._asked, include_dashboard=False,
                             _node_ip_address="127.0.0.1", log_to_driver=False, logging_level=logging.ERROR)
                except BaseException:
                    self._quiet.stop()
                    raise
            else:
                # Ray would retry an address where nothing answers for many minutes: look first.
                env = settings.get().ray_address or ""
                if self._address == AUTO and env not in ("", AUTO):  # where `auto` goes
                    with contextlib.suppress(ValueError):  # not an address: Ray's own message says so
                        check_reachable(env, f"$RAY_ADDRESS {env!r} (--address auto)")
                else:
                    check_reachable(self._address, repr(self._address))
                self._quiet.start()
                try:
                    ray.init(address=self._address, log_to_driver=False, logging_level=logging.WARNING)
                except ConnectionError as exc:
                    self._quiet.stop()
                    raise RayUnavailableError(_refused(repr(self._address), exc)) from None
                except BaseException:
                    self._quiet.stop()
                    raise
            self._owns = True
            # ray.init puts its own SIGTERM handler in place of robojudge's (a kill as a Ctrl-C): a
            # `kill PID` then ended the driver with a C++ stack dump and exit status 1, not 130.
            if callable(term_before) and signal.getsignal(signal.SIGTERM) is not term_before:
                with contextlib.suppress(ValueError):  # not the main thread: nothing to restore
                    signal.signal(signal.SIGTERM, term_before)
        # Made once: each new remote function or actor class is exported to the cluster again.
        self._call = ray.remote(_call)
        self._scorer = ray.remote(_Scorer)
        self._cluster = {k: float(v) for k, v in ray.cluster_resources().items()}
        cpus = max(1, int(self._cluster.get("CPU", 1)))
        self.workers = min(self._asked, cpus) if self._asked else cpus

    # -- submitting ----------------------------------------------------------------------------

    def _room_for_actor(self, placement: Placement) -> bool:
        """Whether one more actor of ``placement`` fits beside those running.

        Actors hold what they reserve until the run ends. One task's CPU is always left to plain
        tasks, or a metric without a network could wait for ever behind idle actors; GPUs are
        counted the same way so that no plain GPU task waits for a GPU an actor holds.
        """
        held = [(p, len(pool)) for p, pool in self._pools.items()]
        cpus = sum(p.cpus * n for p, n in held) + placement.cpus
        gpus = sum(p.gpus * n for p, n in held) + placement.gpus
        cpu_budget = min(float(self.workers), self._cluster.get("CPU", 1.0)) - 1.0
        return cpus <= cpu_budget and gpus <= self._cluster.get("GPU", 0.0)

    def _actor(self, placement: Placement) -> Any | None:
        """An actor for a task of ``placement``: an idle one, else a new one while there is room,
        else (a GPU placement) the least busy one; ``None``: run the task as a plain task, whose
        worker process keeps the networks it loads too, for as long as Ray keeps it."""
        pool = self._pools.setdefault(placement, [])
        idle = [a for a in pool if self._load[id(a)] == 0]
        if idle:
            return idle[0]
        if self._room_for_actor(placement):
            cls = self._scorer.options(
                **placement.options(), max_restarts=self._retries, max_task_retries=self._retries
            )
            actor = cls.remote()
            self.actors_started += 1
            pool.append(actor)
            self._load[id(actor)] = 0
            return actor
        if pool and placement.gpus:
            return min(pool, key=lambda a: self._load[id(a)])
        return None

    def _submit(self, fn: Callable[[T], R], task: T, *, retry: bool = True) -> tuple[Any, Any]:
        """Send ``task``; ``retry=False``: once, whatever the executor's retries (a part of a task whose
        worker died on every attempt: those ruled out a passing fault)."""
        placement = self._placement(task, self._cluster.get("GPU", 0.0))
        check_fits(placement, self._cluster, "this task")
        actor = self._actor(placement) if placement.actor else None
        if actor is not None:
            self._load[id(actor)] += 1
            run = actor.run if retry else actor.run.options(max_task_retries=0)
            return run.remote(fn, task), actor
        remote = self._call.options(
            **placement.options(), max_retries=self._retries if retry else 0, retry_exceptions=False
        )
        return remote.remote(fn, task), None

    def map_unordered(
        self,
        fn: Callable[[T], R],
        tasks: Iterable[T],
        on_crash: Callable[[T, str], R],
        *,
        split: Callable[[T], Sequence[T]] | None = None,
        doing: str = "scoring",
    ) -> Iterator[tuple[T, R]]:
        """As :meth:`Executor.map_unordered <robojudge.run._executor.Executor.map_unordered>`.

        ``split``: the parts of a task (its metrics, a chunk's items), each a task of its own. A task
        whose worker died on every attempt (or was killed for memory) and that has more than one part
        is not a crash yet: its parts are run again, each alone and once (the task's attempts ruled out
        a passing fault; with retries, a fault every part meets, a video that crashes the decoder, cost
        every part all of them), and are yielded one by one; only a part that dies alone comes back
        through ``on_crash``, so the part that kills its worker does not cost the others. ``doing``: what
        a crash reason says the worker was doing to the item ("scoring", "judging").
        """
        ray = self._ray
        it = iter(tasks)
        limit = self._in_flight_limit()
        in_flight: dict[Any, tuple[T, Any, bool]] = {}  # task, actor, a part sent once
        parts: deque[T] = deque()  # of tasks that died, sent before any new task
        exhausted = finished = False
        try:
            while True:
                while len(in_flight) < limit and (parts or not exhausted):
                    part = bool(parts)
                    if parts:
                        task = parts.popleft()
                    else:
                        try:
                            task = next(it)
                        except StopIteration:
                            exhausted = True
                            break
                    ref, actor = self._submit(fn, task, retry=not part)
                    in_flight[ref] = (task, actor, part)
                if not in_flight:
                    break
                done, _ = ray.wait(list(in_flight), num_returns=1)
                for ref in done:
                    task, actor, part = in_flight.pop(ref)
                    if actor is not None:
                        self._load[id(actor)] -= 1
                    try:
                        result = ray.get(ref)
                    except ray.exceptions.RayError as exc:
                        if isinstance(exc, ray.exceptions.ActorDiedError) and actor is not None:
                            self._drop(actor)
                        alone = (list(split(task)) if split is not None and _worker_died(exc) and not part
                                 else [])
                        if len(alone) > 1:
                            parts.extend(alone)
                            continue
                        result = on_crash(task, _reason(exc, self._retries, doing))
                    yield task, result
            finished = True
        finally:
            if not finished:
                # Stopped early (Ctrl-C, an exception): what is in flight is abandoned, to be
                # computed again by the next run.
                for ref, (_, actor, _) in in_flight.items():
                    # Already finished or its worker gone: nothing to stop.
                    with contextlib.suppress(Exception):
                        ray.cancel(ref, force=actor is None)

    def _in_flight_limit(self) -> int:
        """Tasks sent at once: ``workers * prefetch``, so that no worker waits for the driver, where Ray
        runs no more than ``workers`` of them at a time (the cluster has no more CPUs); ``workers`` where
        it has more CPUs than the ``workers`` asked for, since Ray would run every task sent whose CPU is
        free, and ``workers`` caps the tasks running at once (a judge server's requests in flight)."""
        if self._asked is not None and self._asked < self._cluster.get("CPU", 1.0):
            return self.workers
        return self.workers * self._prefetch

    def _drop(self, actor: Any) -> None:
        for pool in self._pools.values():
            if actor in pool:
                pool.remove(actor)
        self._load.pop(id(actor), None)

    def shutdown(self) -> None:
        for pool in self._pools.values():
            for actor in pool:
                with contextlib.suppress(Exception):  # dead already
                    self._ray.kill(actor)
        self._pools.clear()
        self._load.clear()
        if self._owns:
            self._ray.shutdown()
            self._owns = False
        self._quiet.stop()
