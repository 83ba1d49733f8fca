"""Suite manifests: one item per generated rollout.

A manifest (JSONL, CSV, Parquet, or a JSON list) lists the rollouts to evaluate; see
``docs/manifest.md`` for the format. :func:`load_suite` reads and checks one,
:func:`validate_manifest` lists everything wrong with it (optionally decoding its videos),
:func:`suite_info` counts what it holds, and :func:`scan_folder` with :func:`write_manifest` writes
one for a folder of videos. :func:`tiling_warning` says when a video looks like several views tiled in
one frame (:func:`tiling_sampling` the frames it reads, :func:`tiling_in` the check on frames read
otherwise). Paths may be confined to a folder (``confine=`` or ``$ROBOJUDGE_CONFINE``).
"""

from robojudge.suite._info import UNSET, LabelCoverage, SuiteInfo, suite_info, unset_name
from robojudge.suite._load import (
    KEPT_WITHOUT_FILES,
    SameVideos,
    Suite,
    clip_source_conflicts,
    iter_suite,
    load_suite,
    main_view_name,
    same_file,
    same_videos_note,
    source_text,
    validate_manifest,
    video_view_name,
)
from robojudge.suite._media import MEDIA_MODES, npz_problem
from robojudge.suite._paths import CONFINE_ENV, RUN_MANIFESTS, run_manifest
from robojudge.suite._problems import (
    ManifestError,
    ManifestProblem,
    SkippedRowsWarning,
    skipped_rows,
    skipped_rows_line,
)
from robojudge.suite._read import SUFFIXES
from robojudge.suite._scan import (
    PATTERN_FIELDS,
    SCAN_SUFFIXES,
    ScanResult,
    check_jsonl_name,
    default_manifest_name,
    parse_grid,
    scan_folder,
    write_manifest,
)
from robojudge.suite._schema import (
    CHECKLIST_ITEMS,
    MAX_ITEM_ID_BYTES,
    META_PREFIX,
    Checklist,
    Embodiment,
    Item,
    Labels,
    item_id_problem,
    meta_key_problem,
    meta_text,
)
from robojudge.suite._tiling import tiling_in, tiling_known, tiling_sampling, tiling_warning
from robojudge.suite._views import views_out_of_step

__all__ = [
    "KEPT_WITHOUT_FILES",
    "CHECKLIST_ITEMS",
    "MAX_ITEM_ID_BYTES",
    "META_PREFIX",
    "CONFINE_ENV",
    "MEDIA_MODES",
    "PATTERN_FIELDS",
    "RUN_MANIFESTS",
    "SCAN_SUFFIXES",
    "check_jsonl_name",
    "default_manifest_name",
    "SUFFIXES",
    "ScanResult",
    "UNSET",
    "unset_name",
    "Checklist",
    "Embodiment",
    "Item",
    "LabelCoverage",
    "Labels",
    "ManifestError",
    "ManifestProblem",
    "SkippedRowsWarning",
    "SameVideos",
    "Suite",
    "SuiteInfo",
    "item_id_problem",
    "iter_suite",
    "load_suite",
    "main_view_name",
    "meta_key_problem",
    "meta_text",
    "same_file",
    "same_videos_note",
    "video_view_name",
    "npz_problem",
    "parse_grid",
    "run_manifest",
    "scan_folder",
    "skipped_rows",
    "skipped_rows_line",
    "suite_info",
    "tiling_in",
    "tiling_known",
    "tiling_sampling",
    "tiling_warning",
    "validate_manifest",
    "views_out_of_step",
    "write_manifest",
    "clip_source_conflicts",
    "source_text",
]
