"""VLM judges: backends, rubrics, parsing and scoring behind one interface.

* :class:`JudgeConfig` / :func:`load_judges_file` -- judges declared in TOML or inline.
* :data:`BACKENDS` -- ``openai`` (any OpenAI-compatible endpoint), ``hf`` (local transformers
  model), ``mock`` (scripted replies); :func:`make_backend` builds one.
* :data:`RUBRICS` / :func:`get_rubric` / :func:`load_rubric_file` -- versioned prompt templates
  (built-in ``pa`` and ``ia``, after RoboJudge Sec. 3.2 and App. B.1).
* :func:`parse_reply` -- JSON extraction and validation.
* :class:`JudgeEngine` -- cache, concurrency, retries, repair and self-consistency for one judge.

The runner that writes judgments to the result store is :func:`robojudge.run.judge_items`.
"""

from robojudge.judges._backend import (
    BACKENDS,
    Backend,
    BackendError,
    ChatRequest,
    Completion,
    Frames,
    TokenLogprob,
    TransientError,
    make_backend,
    parse_retry_after,
)
from robojudge.judges._cache import ResponseCache, default_cache_dir
from robojudge.judges._config import (
    JudgeConfig,
    JudgeConfigError,
    Prices,
    Sampling,
    load_judges_file,
    make_judge,
    short_hash,
)
from robojudge.judges._engine import JudgeEngine, JudgeStats, RubricResult
from robojudge.judges._frames import FrameSpec, ItemFrames, decode_frames
from robojudge.judges._parse import ParseResult, find_json_object, parse_reply
from robojudge.judges._registry import Registry, UnknownNameError
from robojudge.judges._rubric import RUBRICS, Rubric, RubricError, get_rubric, load_rubric_file
from robojudge.judges._scoring import Scoring, Vote, expected_score, majority_vote

__all__ = [
    "BACKENDS",
    "RUBRICS",
    "Backend",
    "BackendError",
    "ChatRequest",
    "Completion",
    "FrameSpec",
    "Frames",
    "ItemFrames",
    "JudgeConfig",
    "JudgeConfigError",
    "JudgeEngine",
    "JudgeStats",
    "ParseResult",
    "Prices",
    "Registry",
    "ResponseCache",
    "Rubric",
    "RubricError",
    "RubricResult",
    "Sampling",
    "Scoring",
    "TokenLogprob",
    "TransientError",
    "UnknownNameError",
    "Vote",
    "decode_frames",
    "default_cache_dir",
    "expected_score",
    "find_json_object",
    "get_rubric",
    "load_judges_file",
    "load_rubric_file",
    "majority_vote",
    "make_backend",
    "make_judge",
    "parse_reply",
    "parse_retry_after",
    "short_hash",
]
