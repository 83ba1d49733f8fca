"""VLM judges: backends, rubrics, parsing and scoring behind one interface.

* :class:`JudgeConfig` / :func:`load_judges_file` -- judges declared in TOML or inline.
* :data:`BACKENDS` -- ``openai`` (any OpenAI-compatible endpoint), ``hf`` (local transformers
  model), ``mock`` (scripted replies); :func:`make_backend` builds one, a :class:`FleetBackend`
  over several endpoints when the judge lists them.
* :data:`RUBRICS` / :func:`get_rubric` / :func:`load_rubric_file` -- versioned prompt templates
  (built-in ``pa`` and ``ia`` after RoboJudge Sec. 3.2 and App. B.1; the RoboPhys-3D VLM-grounded
  metrics of App. B.2-B.4 under their taxonomy ids; ``caption`` and ``key_steps`` texts; RoboWorM's
  per-segment ``roboworm_physics`` verdict).
* :func:`judge_metric_id` / :func:`judge_taxonomy_id` -- stored ids and the taxonomy metric they feed.
* :func:`parse_reply` -- JSON extraction and validation.
* :data:`SPECIALIZED` / :func:`adapt_native` -- VideoScore2, VideoPhy2, VideoCon, PhyJudge and
  WBench native scores mapped onto PA/IA (RoboJudge App. B.2).
* :class:`JudgeEngine` -- cache, concurrency, retries, repair and self-consistency for one judge.
* :class:`FrameSpec` / :func:`judged_input` -- which frames a judge is sent of an item (a grid item's
  main-view cell by default).

The runner that writes judgments to the result store is :func:`robojudge.run.judge_items`.
"""

from robojudge.judges._backend import (
    BACKENDS,
    Backend,
    BackendError,
    ChatRequest,
    Completion,
    TokenLogprob,
    TransientError,
    out_of_files,
    parse_retry_after,
)
from robojudge.judges._cache import (
    ResponseCache,
    ResponseCacheError,
    clear_response_cache,
    default_cache_dir,
    response_cache_state,
)
from robojudge.judges._config import (
    JudgeConfig,
    JudgeConfigError,
    Prices,
    Sampling,
    endpoint_urls,
    key_warnings,
    load_judges_file,
    make_judge,
    short_hash,
    shown_endpoint,
)
from robojudge.judges._engine import JudgeEngine, JudgeStats, RubricResult
from robojudge.judges._fleet import FleetBackend, make_backend
from robojudge.judges._frames import (
    GRID_VIEWS,
    FrameLoader,
    FrameSpec,
    GridCell,
    JudgedInput,
    decode_frames,
    judged_input,
)
from robojudge.judges._ids import (
    judge_metric_id,
    judge_taxonomy_id,
    split_judge_metric_id,
    taxonomy_rubrics,
)
from robojudge.judges._messages import (
    chat_messages,
    padded_video,
    shown_rate,
    temporal_patch,
    thinned,
    video_rate,
    with_first_frame,
)
from robojudge.judges._parse import ParseResult, find_json_object, parse_reply
from robojudge.judges._rubric import RUBRICS, Rubric, RubricError, get_rubric, load_rubric_file
from robojudge.judges._scoring import Scoring, Vote, answered_agreement, expected_score, majority_vote
from robojudge.judges._specialized import (
    SPECIALIZED,
    NativeScoreError,
    PaIa,
    SpecializedJudge,
    adapt_native,
    parse_videoscore2_reply,
    specialized_judge_config,
)
from robojudge.registry import UnknownNameError

__all__ = [
    "BACKENDS",
    "RUBRICS",
    "SPECIALIZED",
    "Backend",
    "BackendError",
    "ChatRequest",
    "Completion",
    "FleetBackend",
    "FrameLoader",
    "FrameSpec",
    "JudgeConfig",
    "JudgeConfigError",
    "JudgeEngine",
    "JudgeStats",
    "NativeScoreError",
    "PaIa",
    "ParseResult",
    "Prices",
    "ResponseCache",
    "ResponseCacheError",
    "Rubric",
    "RubricError",
    "RubricResult",
    "Sampling",
    "Scoring",
    "SpecializedJudge",
    "TokenLogprob",
    "adapt_native",
    "chat_messages",
    "TransientError",
    "UnknownNameError",
    "Vote",
    "decode_frames",
    "default_cache_dir",
    "clear_response_cache",
    "response_cache_state",
    "endpoint_urls",
    "GRID_VIEWS",
    "GridCell",
    "JudgedInput",
    "judged_input",
    "expected_score",
    "key_warnings",
    "find_json_object",
    "get_rubric",
    "judge_metric_id",
    "judge_taxonomy_id",
    "load_judges_file",
    "load_rubric_file",
    "majority_vote",
    "answered_agreement",
    "make_backend",
    "make_judge",
    "out_of_files",
    "parse_reply",
    "parse_videoscore2_reply",
    "padded_video",
    "parse_retry_after",
    "short_hash",
    "shown_endpoint",
    "shown_rate",
    "specialized_judge_config",
    "split_judge_metric_id",
    "taxonomy_rubrics",
    "temporal_patch",
    "thinned",
    "video_rate",
    "with_first_frame",
]
