"""The annotation tables (prefix ``ann_``), beside the result store's tables in the same database.

Ids that reach a browser (items, media, assignments) are random tokens in ``public_id`` columns; the
manifest's item id and the file paths stay in the database. Label versions are only ever inserted:
``ann_assignments.version`` is the optimistic lock a save must name, and ``(assignment_id, version)``
is unique, so two writers racing on one assignment cannot both win.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    Double,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    text,
)

from robojudge.store import UTCDateTime

ANN_SCHEMA_VERSION = 1

ROLES = ("annotator", "reviewer", "adjudicator", "admin")
KINDS = ("label", "practice", "review", "adjudicate")
STATUSES = ("open", "draft", "submitted")
NAME_LENGTH = 200
"""The most characters a project or round name holds (PostgreSQL enforces the column's length, SQLite not)."""

metadata = MetaData()
_ID = BigInteger().with_variant(Integer(), "sqlite")

meta = Table(
    "ann_meta",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("value", Text, nullable=False),
)

projects = Table(
    "ann_projects",
    metadata,
    Column("id", _ID, primary_key=True, autoincrement=True),
    Column("name", String(NAME_LENGTH), nullable=False, unique=True),
    Column("suite_path", Text, nullable=False),
    Column("seed", BigInteger, nullable=False),
    Column("segment_s", Double, nullable=True),
    Column("pass_threshold", Double, nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
)

items = Table(
    "ann_items",
    metadata,
    Column("id", _ID, primary_key=True, autoincrement=True),
    Column("project_id", _ID, ForeignKey("ann_projects.id"), nullable=False),
    Column("public_id", String(64), nullable=False, unique=True),
    Column("item_id", Text, nullable=False),
    Column("instruction", Text, nullable=True),
    Column("fps", Double, nullable=True),
    Column("duration_s", Double, nullable=True),
    Column("n_segments", Integer, nullable=False, default=0),
    Column("model_draft", JSON(none_as_null=True), nullable=True),
    UniqueConstraint("project_id", "item_id", name="uq_ann_items_item"),
)

media = Table(
    "ann_media",
    metadata,
    Column("id", _ID, primary_key=True, autoincrement=True),
    Column("public_id", String(64), nullable=False, unique=True),
    Column("item_id", _ID, ForeignKey("ann_items.id"), nullable=False),
    Column("role", String(16), nullable=False),  # "video" or "initial_frame"
    Column("kind", String(16), nullable=False),  # "video" or "image"
    Column("view", Text, nullable=True),
    Column("position", Integer, nullable=False),
    Column("path", Text, nullable=False),
    Index("ix_ann_media_item", "item_id"),
)

annotators = Table(
    "ann_annotators",
    metadata,
    Column("id", _ID, primary_key=True, autoincrement=True),
    Column("username", String(100), nullable=False, unique=True),
    Column("role", String(16), nullable=False),
    Column("password_hash", Text, nullable=True),
    Column("invite_hash", String(64), nullable=True, unique=True),  # sha256 of the invite token
    Column("active", Boolean, nullable=False, default=True),
    Column("created_at", UTCDateTime(), nullable=False),
    CheckConstraint(f"role IN {ROLES!r}", name="ck_ann_annotators_role"),
)

rounds = Table(
    "ann_rounds",
    metadata,
    Column("id", _ID, primary_key=True, autoincrement=True),
    Column("project_id", _ID, ForeignKey("ann_projects.id"), nullable=False),
    Column("name", String(NAME_LENGTH), nullable=False),
    Column("threshold", Double, nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("closed_at", UTCDateTime(), nullable=True),
    Column("result", JSON(none_as_null=True), nullable=True),
    UniqueConstraint("project_id", "name", name="uq_ann_rounds_name"),
)

qualified = Table(
    "ann_qualified",
    metadata,
    Column("project_id", _ID, ForeignKey("ann_projects.id"), primary_key=True),
    Column("annotator_id", _ID, ForeignKey("ann_annotators.id"), primary_key=True),
    Column("round_id", _ID, ForeignKey("ann_rounds.id"), nullable=True),
    Column("at", UTCDateTime(), nullable=False),
)

assignments = Table(
    "ann_assignments",
    metadata,
    Column("id", _ID, primary_key=True, autoincrement=True),
    Column("public_id", String(64), nullable=False, unique=True),
    Column("project_id", _ID, ForeignKey("ann_projects.id"), nullable=False),
    Column("item_id", _ID, ForeignKey("ann_items.id"), nullable=False),
    Column("annotator_id", _ID, ForeignKey("ann_annotators.id"), nullable=False),
    Column("kind", String(16), nullable=False),
    Column("round_id", _ID, ForeignKey("ann_rounds.id"), nullable=True),
    Column("position", Integer, nullable=False),
    Column("stage", String(8), nullable=False, default="pa"),
    Column("status", String(16), nullable=False, default="open"),
    Column("version", Integer, nullable=False, default=0),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("submitted_at", UTCDateTime(), nullable=True),
    CheckConstraint(f"kind IN {KINDS!r}", name="ck_ann_assignments_kind"),
    CheckConstraint(f"status IN {STATUSES!r}", name="ck_ann_assignments_status"),
    CheckConstraint("stage IN ('pa', 'ia')", name="ck_ann_assignments_stage"),
    Index("ix_ann_assignments_annotator", "annotator_id", "position"),
    Index("ix_ann_assignments_item", "item_id", "kind"),
    UniqueConstraint("item_id", "annotator_id", "kind", "round_id", name="uq_ann_assignments_task"),
)

# One primary label, one cross-review and one adjudication per item; practice items go to everyone.
one_per_item = Index(
    "uq_ann_assignments_one_per_item",
    assignments.c.item_id,
    assignments.c.kind,
    unique=True,
    sqlite_where=text("kind != 'practice'"),
    postgresql_where=text("kind != 'practice'"),
)

labels = Table(
    "ann_labels",
    metadata,
    Column("id", _ID, primary_key=True, autoincrement=True),
    Column("assignment_id", _ID, ForeignKey("ann_assignments.id"), nullable=False),
    Column("version", Integer, nullable=False),
    Column("status", String(16), nullable=False),
    Column("label_values", JSON, nullable=False),
    Column("changed", JSON, nullable=False),
    Column("from_draft", JSON(none_as_null=True), nullable=True),
    Column("author_id", _ID, ForeignKey("ann_annotators.id"), nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("source", String(32), nullable=False, default="app"),  # "app" or "labelstudio"
    UniqueConstraint("assignment_id", "version", name="uq_ann_labels_version"),
    CheckConstraint("status IN ('draft', 'submitted')", name="ck_ann_labels_status"),
)

# Reference examples pinned beside every task of a project (RoboWorM Fig. D1, RoboJudge App. A.3): an item
# with the score it deserves on one axis and why. Their media are readable by anyone working on the project.
examples = Table(
    "ann_examples",
    metadata,
    Column("id", _ID, primary_key=True, autoincrement=True),
    Column("project_id", _ID, ForeignKey("ann_projects.id"), nullable=False),
    Column("item_id", _ID, ForeignKey("ann_items.id"), nullable=False),
    Column("axis", String(8), nullable=False),
    Column("score", Integer, nullable=False),
    Column("text", Text, nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
    UniqueConstraint("item_id", "axis", name="uq_ann_examples_item_axis"),
    CheckConstraint("axis IN ('pa', 'ia')", name="ck_ann_examples_axis"),
)

audit = Table(
    "ann_audit",
    metadata,
    Column("id", _ID, primary_key=True, autoincrement=True),
    Column("at", UTCDateTime(), nullable=False),
    Column("actor_id", _ID, nullable=True),
    Column("action", String(64), nullable=False),
    Column("detail", JSON(none_as_null=True), nullable=True),
    Column("remote", String(200), nullable=True),
    Index("ix_ann_audit_at", "at"),
)
