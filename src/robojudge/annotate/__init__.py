"""Human annotation: the RoboJudge and RoboWorM labelling protocols over the robojudge database.

Projects come from a suite; annotators label items under opaque ids in a seeded random order, a second
annotator cross-reviews, an adjudicator sets the final label; training rounds measure agreement before
production work; labels go out as a manifest, as score tables for ``robojudge meta agreement`` and as
Label Studio JSON. :class:`AnnotationService` is what the web app (``annotate.web``) calls; the functions
are what the ``robojudge annotate`` commands call. See ``docs/annotation.md``.
"""

from robojudge.annotate._admin import (
    DEFAULT_PASS_THRESHOLD,
    MovedTask,
    add_annotator,
    add_items,
    assign,
    create_round,
    init_project,
    nothing_dealt,
    reassign,
    reopen_adjudication,
    segment_count,
    update_annotator,
)
from robojudge.annotate._errors import (
    AnnotateError,
    Conflict,
    Forbidden,
    InvalidLabel,
    NotFound,
    StorageError,
    UnreadableClipWarning,
)
from robojudge.annotate._export import (
    ScoreFiles,
    SubmittedLabel,
    disputed_items,
    export_manifest,
    export_scores,
    final_labels,
    submitted_labels,
)
from robojudge.annotate._items import add_example, import_drafts
from robojudge.annotate._labelstudio import export_labelstudio, import_labelstudio, labelstudio_config
from robojudge.annotate._place import Relocation, relocate_project
from robojudge.annotate._protocol import (
    AXES,
    DISAGREEMENT,
    RUBRIC,
    SEGMENT_SECONDS,
    VERDICTS,
    AxisText,
    ChecklistText,
    LabelValues,
    Rubric,
)
from robojudge.annotate._reads import REQUEST_REMOTE
from robojudge.annotate._rounds import (
    Disagreement,
    RoundAgreement,
    RoundFeedback,
    close_round,
    round_agreement,
)
from robojudge.annotate._service import AnnotationService
from robojudge.annotate._status import ProjectStatus, project_status
from robojudge.annotate._types import (
    Annotator,
    AuditEvent,
    Invite,
    LabelVersion,
    MediaRef,
    ProjectInfo,
    QueueEntry,
    ReferenceExample,
    RoundInfo,
    SegmentSpan,
    TaskPage,
)

__all__ = [
    "AXES",
    "DEFAULT_PASS_THRESHOLD",
    "DISAGREEMENT",
    "REQUEST_REMOTE",
    "RUBRIC",
    "SEGMENT_SECONDS",
    "VERDICTS",
    "AnnotateError",
    "AnnotationService",
    "Annotator",
    "AuditEvent",
    "AxisText",
    "ChecklistText",
    "Conflict",
    "Disagreement",
    "Forbidden",
    "InvalidLabel",
    "Invite",
    "LabelValues",
    "LabelVersion",
    "MediaRef",
    "MovedTask",
    "NotFound",
    "ProjectInfo",
    "ProjectStatus",
    "QueueEntry",
    "ReferenceExample",
    "Relocation",
    "RoundAgreement",
    "RoundFeedback",
    "RoundInfo",
    "Rubric",
    "ScoreFiles",
    "SegmentSpan",
    "StorageError",
    "SubmittedLabel",
    "TaskPage",
    "UnreadableClipWarning",
    "add_annotator",
    "add_example",
    "add_items",
    "assign",
    "close_round",
    "create_round",
    "disputed_items",
    "export_labelstudio",
    "export_manifest",
    "export_scores",
    "final_labels",
    "import_drafts",
    "import_labelstudio",
    "init_project",
    "labelstudio_config",
    "nothing_dealt",
    "project_status",
    "reassign",
    "relocate_project",
    "reopen_adjudication",
    "round_agreement",
    "segment_count",
    "submitted_labels",
    "update_annotator",
]
