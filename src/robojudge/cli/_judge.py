"""``robojudge judge``: score a suite with a VLM judge (PA/IA rubrics) into the result store."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from robojudge import settings
from robojudge.cli._cache import file_size
from robojudge.cli._common import (
    CACHE_DIR_HELP,
    check_settings,
    console,
    err_console,
    fail,
    first_names,
    live_progress,
    print_kept_failures,
    print_manifest_problems,
    print_report_hint,
    print_run_interrupted,
    print_skipped_rows,
    progress_every_option,
    progress_option,
    store_failed,
)
from robojudge.cli._score import print_input_changes, print_video_warnings
from robojudge.judges import (
    RUBRICS,
    FrameSpec,
    JudgeConfig,
    JudgeConfigError,
    ResponseCache,
    ResponseCacheError,
    Rubric,
    RubricError,
    Scoring,
    UnknownNameError,
    endpoint_urls,
    get_rubric,
    key_warnings,
    load_judges_file,
    load_rubric_file,
    make_judge,
    response_cache_state,
    shown_endpoint,
)
from robojudge.run import (
    JudgeProgress,
    JudgeRunSummary,
    JudgeSuiteRun,
    OpenFilesError,
    RunInterrupted,
    RunStoppedError,
    judge_suite,
    judging_line,
)
from robojudge.run._ray import RayUnavailableError
from robojudge.store import ResultRow, StoreError
from robojudge.suite import ManifestError


class GridView(StrEnum):
    """``--grid-view``: what an item whose video is a grid of views is judged on (FrameSpec.grid_view)."""

    main = "main"
    whole = "whole"


class TokenLimitField(StrEnum):
    """``--token-limit-field``: the request field the token limit goes out in
    (``JudgeSampling.token_limit_field``)."""

    max_tokens = "max_tokens"
    max_completion_tokens = "max_completion_tokens"
    none = "none"


ENDPOINT_HELP = """\
No judge endpoint is configured. To judge videos with a vision-language model, serve one behind an
OpenAI-compatible API, for example with vLLM:

    vllm serve Qwen/Qwen2.5-VL-7B-Instruct --port 8000 --limit-mm-per-prompt '{"image": 32}'

then declare it in robojudge.toml:

    [judges.qwen]
    backend = "openai"
    model = "Qwen/Qwen2.5-VL-7B-Instruct"
    base_url = "http://127.0.0.1:8000/v1"

and run:  robojudge judge SUITE --judge qwen --rubric pa,ia
(or inline: robojudge judge SUITE --backend openai --model M --base-url URL). See docs/judges.md."""
"""What to tell a user who has no judge endpoint (``robojudge demo`` prints this)."""


def cache_open_error(exc: ResponseCacheError, flag: str, no_cache: str | None = "--no-cache") -> str:
    """What to say when the response cache cannot be opened: where, why and how to move it (``flag``,
    the command's cache folder option), or run without it (``no_cache``)."""
    source = settings.get().cache_dir_from if exc.default else None
    # (a folder the variable gives: "set ROBOJUDGE_CACHE_DIR" alone read as if it were not set)
    given = f", the folder ${source} gives" if source is not None else ""
    if exc.default:
        move = f"set ROBOJUDGE_CACHE_DIR or pass {flag} DIR to put it in a writable folder with free space"
    else:
        move = f"give {flag} a writable folder with free space"
    alone = (f", or pass {no_cache} to run without it (a rerun then sends every request again)"
             if no_cache else "")
    said = f"cannot open the judge response cache in {exc.folder}{given} ({exc.reason}): {move}{alone}"
    state = response_cache_state(exc.folder)
    if not state.exists:
        return said
    # (a full disk: how big the cache is, and that it may be removed)
    folder = "" if exc.default else f" --cache-dir {shlex.quote(str(exc.folder))}"
    clear = "robojudge cache clear --judge" + folder
    return (f"{said}; or remove it ({file_size(state.size)}): `{clear}` (no stored result changes; a rerun "
            "sends its requests again)")


def _inline_name(model: str) -> str:
    tail = model.rstrip("/").split("/")[-1] or "judge"
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", tail).strip("-.") or "judge"


def resolve_judge(
    name: str | None, judges_file: Path | None, backend: str | None, overrides: dict[str, Any]
) -> JudgeConfig:
    """The judge a command line asks for: inline (``--backend``) or by name from the judges file
    (``judges_file``, the ``--judges`` given; None: :data:`DEFAULT_JUDGES_FILE`, its default).

    Errors name where the judge comes from (the file, or the command line), the judge and the field.
    An ``api_key_env`` naming a variable that is not set is an error here, not 401s later.
    """
    extra = {k: v for k, v in overrides.items() if v is not None}
    sampling = {k: extra.pop(k) for k in ("temperature", "seed", "max_tokens", "token_limit_field")
                if k in extra}
    if backend is not None:
        model = extra.get("model") or ""
        values: dict[str, Any] = {"name": name or _inline_name(model), "backend": backend, **extra}
        if sampling:
            values["sampling"] = sampling
        cfg = _checked(values, "command line")
        print_judge_source(cfg, None)
        return cfg
    if name is None:
        raise JudgeConfigError("give --judge NAME (from the judges file) or an inline --backend and --model")
    by_default = judges_file is None
    judges_file = DEFAULT_JUDGES_FILE if judges_file is None else judges_file
    judges = load_judges_file(judges_file)
    if not judges:
        raise JudgeConfigError(f"{judges_file} declares no judges: declare judge {name!r} as a "
                               f"[judges.{name}] table (backend, model ...), or pass --backend and --model")
    if name not in judges:
        raise UnknownNameError("judge", name, sorted(judges), f" (declared in {judges_file})")
    base = judges[name]
    if not extra and not sampling:
        cfg = _checked(base, str(judges_file))
        print_judge_source(cfg, judges_file, by_default=by_default)
        return cfg
    values = base.model_dump()
    if "base_url" in extra:  # one server given on the command line replaces a declared fleet
        values["endpoints"] = ()
    if "endpoints" in extra:  # and several replace a declared server or fleet
        values["base_url"] = None
        values.pop("concurrency", None)  # the endpoints' total
    values.update(extra)
    values["sampling"] = {**values["sampling"], **sampling}
    cfg = _checked(values, f"{judges_file} with the command-line options")
    print_judge_source(cfg, judges_file, by_default=by_default)
    return cfg


DEFAULT_JUDGES_FILE = Path("robojudge.toml")
"""``--judges`` when not given: a file in the current folder."""


def judge_source_line(cfg: JudgeConfig, judges_file: Path, *, by_default: bool = False) -> str:
    """Where a judge declared in ``judges_file`` comes from and where it sends: the file (said to be in
    the current folder when it was read ``by_default``, --judges not given), each endpoint's
    ``scheme://host`` and the variable its key is read from."""
    where = str(judges_file)
    if by_default:
        where += f" in the current folder ({Path.cwd()}; the default of --judges)"
    urls = endpoint_urls(cfg)
    if urls:
        sends = "sends to " + ", ".join(shown_endpoint(u) for u in urls)
        key = f"key read from {cfg.api_key_env}" if cfg.api_key_env else "no API key"
        return f"judge {cfg.name!r} from {where}: {sends}, {key}"
    if cfg.backend in ("hf", "mock"):
        return f"judge {cfg.name!r} from {where}: {cfg.backend} backend, runs in this process"
    return f"judge {cfg.name!r} from {where}: {cfg.backend} backend, no base_url"


def print_judge_source(cfg: JudgeConfig, judges_file: Path | None, *, by_default: bool = False) -> None:
    """Say on stderr, before any request, where a judge from a judges file comes from and where its
    requests and key go (:func:`judge_source_line`), and warn of a key sent where it should not be
    (:func:`robojudge.judges.key_warnings`), for an inline judge too.

    A judges file is read from the current folder by default, so one that came with a downloaded suite
    could name a common judge, its own server and ``api_key_env = "HF_TOKEN"``: that judge then sent the
    user's secret and frames there without a word.
    """
    if judges_file is not None:
        err_console.print(judge_source_line(cfg, judges_file, by_default=by_default), highlight=False,
                          markup=False)
    for warning in key_warnings(cfg):
        err_console.print(f"[yellow]warning:[/] {escape(warning)}", markup=True, highlight=False)


def _checked(values: dict[str, Any] | JudgeConfig, where: str) -> JudgeConfig:
    """``values`` as a judge whose API key variable is set; errors start with ``where``."""
    try:
        cfg = values if isinstance(values, JudgeConfig) else make_judge(values)
    except JudgeConfigError as exc:
        raise JudgeConfigError(f"{where}: {exc}") from None
    problem = cfg.api_key_problem()
    if problem is not None:
        raise JudgeConfigError(f"{where}: judge {cfg.name!r}: {problem}")
    return cfg


def fleet_endpoints(urls: list[str], concurrency: int | None) -> list[dict[str, Any]] | None:
    """Several ``--base-url`` as a fleet's endpoints (``--concurrency`` per server); ``None`` for 0 or 1."""
    if len(urls) < 2:
        return None
    if len(set(urls)) < len(urls):
        raise typer.BadParameter("a server is named twice", param_hint="--base-url")
    per = {} if concurrency is None else {"concurrency": concurrency}
    return [{"base_url": u, **per} for u in urls]


def resolve_rubrics(names: str | None, files: list[Path]) -> list[Rubric]:
    """The rubrics a command line asks for.

    The rubrics of ``--rubric-file`` files are always judged. ``--rubric`` names more: built-in ids,
    or ids of those files' rubrics (named there, a file's rubric is still judged once). Without
    ``--rubric``: only the files' rubrics, or ``pa,ia`` when no file is given either.
    """
    from_files: dict[str, tuple[Rubric, Path]] = {}
    for path in files:
        rub = load_rubric_file(path)
        if rub.id in from_files:
            first = from_files[rub.id][1]
            raise RubricError(f"rubric id {rub.id!r} is declared twice: in {first} and in {path}")
        from_files[rub.id] = (rub, path)
    given = names if names is not None else ("" if files else "pa,ia")
    wanted = [n.strip() for n in given.split(",") if n.strip()]
    if len(set(wanted)) < len(wanted):
        twice = next(n for n in wanted if wanted.count(n) > 1)
        raise RubricError(f"--rubric names {twice!r} twice")
    rubrics: list[Rubric] = []
    for name in wanted:
        if name not in from_files:
            rubrics.append(get_rubric(name))
        elif name in RUBRICS:
            raise RubricError(
                f"--rubric {name}: {name!r} is both the built-in rubric and the rubric in "
                f"{from_files[name][1]}; leave {name} out of --rubric to judge with the file's rubric "
                "only, or give that one another id"
            )
    rubrics += [rub for rub, _ in from_files.values()]
    if not rubrics:
        raise RubricError("no rubric given (--rubric pa,ia or --rubric-file FILE)")
    return rubrics


@contextmanager
def _judging_bar() -> Iterator[JudgeProgress]:
    progress = Progress(
        TextColumn("[bold]judging"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[flight]} in flight"),
        TextColumn("{task.fields[retries]} retries"),
        TextColumn("[yellow]{task.fields[unparsed]} unparsed"),
        TextColumn("[red]{task.fields[errors]} errors"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=err_console,
    )
    state: dict[str, Any] = {"task": None}

    def on_event(row: ResultRow | None, summary: JudgeRunSummary) -> None:
        if state["task"] is None:
            state["task"] = progress.add_task(
                "judge", total=summary.total - summary.skipped, flight=0, retries=0, unparsed=0, errors=0
            )
        progress.update(
            state["task"],
            total=summary.total - summary.skipped,  # fps-ablation: each rate is a run of its own
            completed=summary.computed,
            flight=summary.stats.in_flight,
            retries=summary.stats.retries,
            unparsed=summary.unscored,
            errors=summary.failed,
        )

    with progress:
        yield on_event


def judging_progress(enabled: bool = True,
                     every: float = 30.0) -> AbstractContextManager[JudgeProgress | None]:
    """A judge run's progress (:func:`live_progress`): a bar with requests in flight, retries, parse
    failures and errors, or :func:`robojudge.run.judging_line` every ``every`` seconds."""
    return live_progress(enabled, every, _judging_bar, judging_line)


def consistency_lines(s: JudgeRunSummary) -> list[str]:
    """One line per rubric judged with several turns in this run (RoboWorM App. D, Table D3): the share of
    items whose turns agreed, the mean standard deviation of their scores on that rubric's scale, and the
    request seconds per video second. Never pooled over rubrics: a 1-5 rubric and a 1-3 verdict have no
    common agreement rate or spread."""
    out = []
    for rubric, c in sorted(s.consistency.items()):
        latency = c.latency_per_video_second
        timed = "" if latency is None else f", {latency:.3f} s latency per video second"
        out.append(f"self-consistency of {rubric} over the {c.voted} items judged with several turns in this "
                   f"run: {100 * c.agreement_rate:.1f}% agree across turns, mean score std "
                   f"{c.mean_score_std:.3f}{timed}")
    if out:
        out.append("(per rubric over every stored run: `robojudge report`, table judge_self_consistency)")
    return out


def print_judge_summary(name: str, s: JudgeRunSummary, *, max_errors: int = 20) -> None:
    """The end-of-run report of a judge run."""
    st = s.stats
    console.print(
        f"{s.total} judgments: [green]{s.scored} scored[/], [yellow]{s.unscored} unparsable[/], "
        f"[red]{s.failed} failed[/], {s.skipped} already stored ({s.seconds:.1f} s)",
        markup=True,
        highlight=False,
    )
    print_kept_failures(s.skipped, s.skipped_errors, "asks")
    if s.truncated:
        console.print(
            f"[yellow]{s.truncated} judgment{'s' if s.truncated != 1 else ''} had a reply cut off at the "
            "token limit[/] (details.truncated); a thinking model needs a larger sampling.max_tokens",
            markup=True, highlight=False,
        )
    if s.taken_over:
        console.print(f"{s.taken_over} stored judgments of the same model files in another folder (a moved "
                      "project) were taken over under this configuration, not judged again", highlight=False,
                      markup=False)
    if s.changed_inputs:
        names = first_names(s.changed_items)
        console.print(f"{s.changed_inputs} judgments not stored: the video changed while it was judged "
                      f"({names}); rerun to judge them", highlight=False, markup=False)
    if s.duplicates:
        console.print(f"{s.duplicates} judged by another run meanwhile, not stored", highlight=False,
                      markup=False)
    if s.by_other_run:
        console.print(f"{s.by_other_run} of those already stored were stored by another run while this one "
                      "went on: left to it, not sent again", highlight=False, markup=False)
    shared = f" ({st.shared} shared with an identical request in flight)" if st.shared else ""
    line = (
        f"judge {name}: {st.sent} requests sent ({st.retries} retries, {st.failed_attempts} failed), "
        f"{st.cache_hits} from cache{shared}, {st.repairs} repair prompts; "
        f"parse-failure rate {100 * s.parse_failure_rate:.1f}%"
    )
    if st.prompt_tokens or st.completion_tokens:
        line += f"; tokens {st.prompt_tokens} in / {st.completion_tokens} out"
    if st.cost_usd:
        line += f"; cost ${st.cost_usd:.4f}"
    if s.latency_per_video_second is not None:
        line += f"; {s.latency_per_video_second:.3f} s latency per video second"
    console.print(line, highlight=False, markup=False)
    for line in consistency_lines(s):
        console.print(line, highlight=False, markup=False)
    for ep in s.endpoints:
        state = "; taken out" if ep["out"] else ""
        console.print(f"  endpoint {ep['endpoint']}: {ep['sent']} sent, {ep['ok']} answered, {ep['failed']} "
                      f"failed, {ep['probes']} probes{state}", highlight=False, markup=False)
    if st.stopped:
        console.print(f"judge {name}: {st.stopped}", style="red", highlight=False, markup=False)
    # Rows the breaker stopped all carry its message, printed once just above; the summary counts them.
    if s.breaker_stopped:
        console.print(f"{s.breaker_stopped} judgments stopped by the circuit breaker", highlight=False)
    if s.errors:
        console.print("[bold red]unscored or failed:[/]", markup=True)
        for row in s.errors[:max_errors]:
            console.print(f"  {row.item_id} / {row.metric}: {row.error}", highlight=False)
        # (the summary keeps the first 1,000 of these rows and counts them all)
        total = s.failed + s.unscored - s.breaker_stopped
        if total > max_errors:
            console.print(f"  ... and {total - max_errors} more (see `robojudge results export`)")
    if s.isolated:
        n = len(s.isolated)
        names = first_names(s.isolated)
        console.print(
            f"[yellow]{n} item{'s' if n != 1 else ''} an earlier run was working on when it ended (a crash, "
            f"a kill or a store that stopped) had {'their videos' if n != 1 else 'its video'} decoded in a "
            f"decoder process:[/] {escape(names)}; a crash there costs that item only (a video error row)",
            markup=True, highlight=False,
        )
    if s.cache_error:
        lost = (f"; {s.cache_unsaved} replies of this run are not in it, and a rerun sends those requests "
                "again" if s.cache_unsaved else "")
        console.print(f"[yellow]warning:[/] {escape(s.cache_error)}{lost}", markup=True, highlight=False)
    if s.interrupted:
        print_run_interrupted()


def trained_judge_checks(suite: Path, cfg: JudgeConfig, spec: FrameSpec,
                         split_of: str | None) -> set[str] | None:
    """The items ``--split-of`` restricts a judge run to (None: all), and warnings on stderr, before
    anything is sent, when ``cfg``'s model is a checkpoint ``robojudge train`` wrote (its
    ``robojudge-train.json``) and the run would judge items it was trained on, or send it frames
    sampled otherwise than its training data.

    Raises:
        typer.Exit: (2) ``--split-of`` names no export split, or the manifest cannot be read.
    """
    local = bool(cfg.model) and Path(str(cfg.model)).is_dir()
    if split_of is None and not local:
        return None  # (robojudge.train not imported: a hub id has no training record)
    from robojudge.train import (
        ExportError,
        parse_split_of,
        serving_differences,
        split_items,
        trained_from,
        trained_on,
    )

    only: set[str] | None = None
    try:
        if split_of is not None:
            only = set(split_items(*parse_split_of(split_of)))
        if not local or not trained_from(str(cfg.model)):
            return only
        from robojudge.suite import load_suite

        ids = [it.item_id for it in load_suite(suite, strict=False, files="optional").items]
    except (ExportError, ManifestError, OSError) as exc:
        raise fail(str(exc)) from None
    judged = [i for i in ids if only is None or i in only]
    seen = trained_on(cfg.name, cfg.model, judged)
    if seen is not None:
        err_console.print(f"[yellow]warning:[/] {escape(seen.message())}", markup=True, highlight=False)
    for line in serving_differences(cfg.model, spec, cfg.max_images):
        err_console.print(f"[yellow]warning:[/] judge {escape(cfg.name)!r}: {escape(line)}", markup=True,
                          highlight=False)
    return only


def judge(
    suite: Path = typer.Argument(..., help="Suite manifest (.jsonl, .csv or .parquet)."),
    judge_name: str | None = typer.Option(None, "--judge", "-j", help="Judge name from the judges file."),
    judges_file: Path | None = typer.Option(None, "--judges", help="TOML file declaring judges \\[default: "
                                            "robojudge.toml in the current folder]."),
    rubric: str | None = typer.Option(
        None, "--rubric", "-r", help="Comma-separated rubric ids: built-in ones, or those of --rubric-file "
        "files \\[default: pa,ia; with --rubric-file, only the files' rubrics].",
    ),
    rubric_files: list[Path] = typer.Option(
        [], "--rubric-file", help="A rubric template file (repeatable); its rubric is judged."
    ),
    samples: int = typer.Option(
        1, "--samples", min=1, help="Turns per judgment; >1 votes (self-consistency)."
    ),
    scoring: Scoring = typer.Option(Scoring.argmax, "--scoring", help="argmax or expected (needs logprobs)."),
    fps: float = typer.Option(4.0, "--fps", min=0.01, help="Frame sampling rate."),
    max_frames: int = typer.Option(32, "--max-frames", min=1, help="Most frames per video."),
    size: int | None = typer.Option(None, "--size", min=16, help="Resize frames: longer side in pixels."),
    grid_view: GridView = typer.Option(
        GridView.main, "--grid-view", help="What an item whose video is a grid of views is judged on: main, "
        "its main view's cell; whole, the stitched frame (another configuration) (docs/judges.md)."
    ),
    db: str | None = typer.Option(
        None, "--db", help="Result store URL, SQLite path or run folder \\[default: RUN_DIR/results.sqlite]."
    ),
    run_dir: Path | None = typer.Option(None, "--run-dir", help="Run folder for the default store."),
    backend: str | None = typer.Option(None, "--backend", help="Inline judge: openai, hf or mock."),
    model: str | None = typer.Option(None, "--model", help="Model name (inline or override)."),
    base_url: list[str] | None = typer.Option(
        None, "--base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1. Repeat it for "
        "a fleet of servers of one model (requests balanced, failing ones taken out; --concurrency is then "
        "per server).",
    ),
    api_key_env: str | None = typer.Option(
        None, "--api-key-env", help="NAME of the variable holding the API key."
    ),
    concurrency: int | None = typer.Option(None, "--concurrency", min=1, help="Requests in flight."),
    max_images: int | None = typer.Option(None, "--max-images", min=1, help="Most images per request."),
    temperature: float | None = typer.Option(None, "--temperature", min=0.0, help="Sampling temperature."),
    seed: int | None = typer.Option(None, "--seed", help="Sampling seed."),
    max_tokens: int | None = typer.Option(None, "--max-tokens", min=1, help="Most tokens per reply."),
    token_limit_field: TokenLimitField | None = typer.Option(
        None, "--token-limit-field", help="The request field --max-tokens is sent in: max_tokens, "
        "max_completion_tokens (OpenAI o-series, GPT-5) or none \\[default: the judge's, else max_tokens]."
    ),
    timeout: float | None = typer.Option(
        None, "--timeout", min=0.001, help="Seconds one attempt may take (connect to reply) \\[default: 120]."
    ),
    deadline: float | None = typer.Option(
        None, "--deadline", min=0.001, help="Seconds one request may take, retries included \\[default: 300]."
    ),
    max_reply_bytes: int | None = typer.Option(
        None, "--max-reply-bytes", min=1024, help="Largest reply read; bigger ones fail \\[default: 1 MiB]."
    ),
    circuit_breaker: int | None = typer.Option(
        None,
        "--circuit-breaker",
        min=0,
        help="Failed attempts in a row after which nothing more is sent (0: never) \\[default: 5].",
    ),
    cache_dir: Path | None = typer.Option(
        None, "--cache-dir", help=CACHE_DIR_HELP
    ),
    no_cache: bool = typer.Option(False, "--no-cache", help="Neither read nor write the response cache."),
    retry_errors: bool = typer.Option(
        False,
        "--retry-errors",
        help="Judge stored failures and unscored (unparsable) judgments again, the latter past the cache.",
    ),
    rescore_unknown: bool = typer.Option(
        False, "--rescore-unknown", help="Judge again stored judgments that have no inputs fingerprint "
        "(stored by robojudge before result schema 2); by default they are kept."
    ),
    progress: bool = progress_option(),
    progress_every: float = progress_every_option(),
    confine: Path | None = typer.Option(
        None, "--confine", help="Refuse items with files outside this folder \\[default: $ROBOJUDGE_CONFINE]."
    ),
    decode_workers: int | None = typer.Option(
        None,
        "--decode-workers",
        min=0,
        help="Processes decoding videos (default: $ROBOJUDGE_DECODE_WORKERS, else cores - 1, at most 4); "
        "0 decodes in threads.",
    ),
    executor: str = typer.Option(
        "local", "--executor", help="'local' (this process) or 'ray': chunks of items judged on Ray "
        "workers, each with --concurrency requests in flight and its own response cache (docs/ray.md)."
    ),
    address: str | None = typer.Option(
        None, "--address",
        help="With --executor ray: auto, local, ray://HOST:PORT or HOST:PORT \\[default: auto].",
    ),
    split_of: str | None = typer.Option(
        None, "--split-of", help="EXPORT_DIR:SPLIT: judge only the items of one split of a `robojudge train "
        "export` (e.g. runs/judge-data:test, a trained judge's held-out items; docs/training.md)."
    ),
    workers: int | None = typer.Option(
        None, "--workers", "-w", min=1, help="With --executor ray: chunks judged at once, each with "
        "--concurrency requests in flight \\[default: the cluster's CPUs]; --address local starts Ray "
        "with this many CPUs.",
    ),
) -> None:
    """Judge every item of SUITE with a VLM judge; rerun to resume. Metric ids: judge:NAME:RUBRIC.

    Sub-commands: `robojudge judge draft` (several judges' PA/IA averaged into draft labels),
    `robojudge judge texts` (a caption rubric's texts as a JSONL file) and `robojudge judge rubrics`
    (the built-in rubrics); see their --help.
    """
    # (--decode-workers replaces ROBOJUDGE_DECODE_WORKERS: a bad value of it is then not read)
    check_settings(skip=("decode_workers",) if decode_workers is not None else ())
    if workers is not None and executor != "ray":
        # Judged here, the requests in flight are --concurrency and videos decode in --decode-workers
        # processes: there are no workers whose number this could set.
        raise fail(f"--workers {workers} is for --executor ray (chunks of items judged on Ray workers); a "
                   "local run sends --concurrency requests at once and decodes in --decode-workers processes")
    fleet = fleet_endpoints(base_url or [], concurrency)
    overrides = {
        "model": model,
        "base_url": base_url[0] if base_url and fleet is None else None,
        "endpoints": fleet,
        "api_key_env": api_key_env,
        "concurrency": concurrency if fleet is None else None,
        "max_images": max_images,
        "temperature": temperature,
        "seed": seed,
        "max_tokens": max_tokens,
        "token_limit_field": None if token_limit_field is None else token_limit_field.value,
        "timeout_s": timeout,
        "deadline_s": deadline,
        "max_reply_bytes": max_reply_bytes,
        "circuit_breaker": circuit_breaker,
    }
    try:
        cfg = resolve_judge(judge_name, judges_file, backend, overrides)
        rubrics = resolve_rubrics(rubric, rubric_files)
        cache = ResponseCache(cache_dir, enabled=not no_cache)
    except ResponseCacheError as exc:
        raise fail(cache_open_error(exc, "--cache-dir")) from None
    except (JudgeConfigError, RubricError, UnknownNameError, OSError) as exc:
        raise fail(str(exc)) from None
    spec = FrameSpec(fps=fps, max_frames=max_frames, size=size, grid_view=grid_view.value)
    only = trained_judge_checks(suite, cfg, spec, split_of)
    try:
        with cache, judging_progress(progress, progress_every) as on_event:
            run = judge_suite(
                suite,
                cfg,
                rubrics,
                db=db,
                run_dir=run_dir,
                frames=spec,
                scoring=scoring,
                samples=samples,
                cache=cache,
                retry_errors=retry_errors,
                rescore_unknown=rescore_unknown,
                progress=on_event,
                decode_workers=decode_workers,
                confine=confine,
                executor=None if executor == "local" and address is None else executor,
                address=address,
                only_items=only,
                workers=workers,
            )
    except RunInterrupted as exc:  # what was judged is stored: said below as for a whole run, then 130
        if not isinstance(exc.run, JudgeSuiteRun):
            raise
        run = exc.run
    except RunStoppedError as exc:  # after work started: what was done, then why it stopped
        if isinstance(exc.summary, JudgeRunSummary):
            print_judge_summary(cfg.name, exc.summary)
        raise store_failed(str(exc), f"{exc.summary.stored} judgments", exc.url, exc.in_flight,
                           apart="decodes the video of {} in a decoder process") from None
    except OpenFilesError as exc:  # refused before starting, or stopped during the run (finished rows kept)
        if isinstance(exc.summary, JudgeRunSummary):
            print_judge_summary(cfg.name, exc.summary)
        raise fail(str(exc)) from None
    except (
        ManifestError, StoreError, ValueError, FileNotFoundError, RayUnavailableError, UnknownNameError
    ) as exc:
        raise fail(str(exc)) from None
    print_manifest_problems(run.manifest_problems)
    if cfg.backend == "mock":
        console.print("[yellow]note: the mock backend replays scripted replies; these are not judgments.[/]",
                      markup=True)
    print_judge_summary(cfg.name, run.summary)
    print_skipped_rows(run.manifest_problems)
    print_input_changes(run.summary, rescore_unknown)
    print_video_warnings(run.summary)
    console.print(f"results: {run.db_url}", highlight=False)
    print_report_hint(suite, run_dir, db)
    if run.summary.interrupted:
        raise typer.Exit(130)
    if run.summary.judged_nothing:
        console.print("[bold red]nothing was judged:[/] every request of this run failed (exit status 1)",
                      markup=True, highlight=False)
        raise typer.Exit(1)
