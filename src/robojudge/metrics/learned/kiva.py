"""KIVA (RoboWorM, Fig. 3a): the share of a video's 16-frame segments where the robot's kinematics break.

A keypoint reader trained on forward-kinematics targets (``robojudge kiva train``) reads every frame
(five test-time candidates averaged); each segment's link rigidity and keypoint jerk are compared with
thresholds calibrated on reference videos (``robojudge kiva calibrate``). ``kiva`` is the percentage of
measured segments that break either; ``kiva_rigidity`` and ``kiva_jerk`` count one part each. The
measures are 2D (image positions, normalised by the video's diagonal): see docs/kiva.md.

The reader is a folder the user trains, not published weights, so the metrics declare none and
``--metrics all`` leaves them out; name them and set ``reader`` in their config.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from robojudge.kiva import (
    CONFIDENCE_RATIO,
    MEASURE_VERSION,
    SEGMENT,
    KivaResult,
    Thresholds,
    Tracks,
    judge_tracks,
    load_reader,
    read_frames,
    reader_checkpoint,
    worst_part,
)
from robojudge.kiva.multiview import MAX_ERROR, MIN_LINK_M
from robojudge.metrics._content import require_motion
from robojudge.metrics._errors import MetricInputError, Unmeasurable
from robojudge.metrics._registry import Family, Input, Provider, metric
from robojudge.metrics._score import Score
from robojudge.suite._schema import Item
from robojudge.video import FileFingerprint, sample_frames

CITATION = (
    "RoboWorM: Evaluating Movement Realism, Consistency and Acceleration Affects in Embodied Video World "
    "Models (Le Thien et al., 2026), Fig. 3a (KIVA); Table D4 and Fig. D3 (16-frame segments)"
)


class MissingReaderError(MetricInputError):
    """A KIVA metric with no trained reader configured."""


class KivaConfig(BaseModel):
    """Which reader, and how a video is cut into segments."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    reader: Path | None = Field(
        default=None,
        description="trained reader: the folder `robojudge kiva train` wrote, or its reader.pt (a folder "
        "holding reader.pt is taken as that file, so a retrained or recalibrated reader rescores stored "
        "results either way)",
    )
    segment: int = Field(default=SEGMENT, ge=4, description="frames per segment")
    min_segment: int = Field(default=8, ge=4, description="a shorter trailing segment is not judged")
    min_link: float = Field(default=0.03, ge=0, lt=1, description="shortest link judged, of the diagonal")
    measure: Literal["auto", "2d"] = Field(
        default="auto",
        description="auto: rigidity in 3D (links in metres, keypoints triangulated from every calibrated "
        "view) where the item has two or more calibrated views and the reader a 3D threshold, else 2D; "
        "2d: always the main view's 2D rigidity",
    )
    max_reprojection: float = Field(
        default=MAX_ERROR, gt=0, lt=1,
        description="3D: a triangulated keypoint whose reprojection error exceeds this share of the image "
        "diagonal (after dropping the worst of three or more views) is not used",
    )
    min_link_3d: float = Field(default=MIN_LINK_M, ge=0, description="3D: shortest link judged, metres")
    finger_check: bool = Field(
        default=True,
        description="judge finger pairs crossing each other, or coming closer together than the references' "
        "low percentile, too (robojudge's addition to the paper's rigidity and jerk); has an effect only "
        "where the reader's robot declares finger pairs",
    )

    @model_validator(mode="after")
    def _tail_within_segment(self) -> KivaConfig:
        if self.min_segment > self.segment:
            raise ValueError(f"min_segment ({self.min_segment}) must be at most segment ({self.segment}): it "
                             "is the shortest trailing segment judged")
        return self

    @field_validator("reader")
    @classmethod
    def _checkpoint_file(cls, value: Path | None) -> Path | None:
        # The run fingerprints a file a config names, not a folder of weights: name the checkpoint itself.
        return None if value is None else reader_checkpoint(value)

    def check_before_run(self, metric_id: str) -> None:
        """Raise, once before a run, what every item would raise about the reader (``robojudge.run`` calls
        it while planning): one error, not an error row per item. Without a reader each item still says
        so, as a video too short for a segment is unscored first.

        Raises:
            MetricInputError: The reader is missing, not calibrated for ``segment``, or lacks its training
                videos' shapes (trained before robojudge stored them: `robojudge kiva upgrade`).
        """
        if self.reader is not None:
            _usable_reader(self.reader, self, metric_id)


_LOCK = threading.Lock()
_READERS: OrderedDict[tuple[str, int, int, int], Any] = OrderedDict()
_TRACKS: OrderedDict[tuple[Any, ...], Tracks] = OrderedDict()
# Per item and reader: each segment's 3D rigidity, or why the item stays in 2D (views out of step, or
# framed otherwise than calibrated).
_VALUES_3D: OrderedDict[tuple[Any, ...], list[tuple[float, int]] | str] = OrderedDict()
_KEEP = 4  # the three parts of one video read it once; a few readers and videos are enough


def _remember(cache: OrderedDict[Any, Any], key: Any, value: Any) -> None:
    cache[key] = value
    cache.move_to_end(key)
    while len(cache) > _KEEP:
        cache.popitem(last=False)


def _reader(path: Path, metric_id: str) -> tuple[Any, tuple[str, int, int, int]]:
    ckpt = reader_checkpoint(path)
    try:
        st = ckpt.stat()
    except OSError:
        raise MissingReaderError(
            f"metric {metric_id!r}: no KIVA reader at {ckpt}; train one with `robojudge kiva train` and set "
            "the metric's `reader` to its folder"
        ) from None
    key = (str(ckpt.resolve()), st.st_mtime_ns, st.st_ctime_ns, st.st_size)
    with _LOCK:
        if key in _READERS:
            return _READERS[key], key
    try:
        reader = load_reader(ckpt)
    except ValueError as exc:
        raise MetricInputError(f"metric {metric_id!r}: {exc}") from None
    with _LOCK:
        _remember(_READERS, key, reader)
    return reader, key


#: How far a video's width over height may be from the nearest of the reader's training videos' (3%: a
#: 1280x704 generator beside 1280x720 references passes). Measured on the tests' 32 px reader, black bars
#: adding 3%, 6%, 9% and 22% to the height took the mean KIVA of four faithful Fetch rollouts from 8% to
#: 33%, 42%, 58% and 75%, and a stretch to 64x72 or 64x96 to 33% and 100% (docs/kiva.md): framing matters
#: below any useful tolerance, so this catches videos of another shape; framing is the user's to match.
ASPECT_TOLERANCE = 0.03


def _check_aspect(item: Item, hw: tuple[int, ...], reader: Any, where: str, metric_id: str,
                  what: str = "video") -> None:
    """The reader squashes every frame to a square, as it did in training: a video of another shape
    (16:9 against square training clips, letterbox bars) shows it a robot squashed another way (black
    bars above and below took a faithful clip from 0% to 100%)."""
    _require_aspects(reader, where, metric_id)
    aspects = reader.aspects
    h, w = int(hw[0]), int(hw[1])
    near = min(aspects, key=lambda a: abs(math.log(w / h / a)))
    if abs(math.log(w / h / near)) > math.log1p(ASPECT_TOLERANCE):
        shown = ", ".join(f"{a:.3f}" for a in aspects)
        raise MetricInputError(
            f"metric {metric_id!r}: item {item.item_id!r}'s {what} is {w}x{h} (width/height {w / h:.3f}) and "
            f"reader {where} was trained on videos of width/height {shown}: it squashes every frame to a "
            "square, so it would read a robot squashed another way. Crop or pad the video to the training "
            "shape, or train a reader on videos of this shape")


def _require_aspects(reader: Any, where: str, metric_id: str) -> None:
    """A reader trained before its training videos' shapes were stored cannot tell a letterboxed or
    stretched video from one framed as it learned: it is refused, not trusted (such a reader gave a
    faithful clip with black bars 0%, the best value, where the clip itself scored 33%)."""
    if reader.aspects:
        return
    folder = Path(where).parent
    raise MetricInputError(
        f"metric {metric_id!r}: reader {folder} was trained before robojudge stored its training videos' "
        "shapes (its reader.json has no frame_aspects), so it cannot check that a video is framed as they "
        "were, and a video of another shape can get any value, the best included. Record them with "
        f"`robojudge kiva upgrade --reader {folder}` (it needs the training videos unchanged), or train the "
        "reader again with `robojudge kiva train`")


def _calibration_facts(reader: Any, where: str) -> dict[str, Any]:
    """Which measure the reader's thresholds were drawn for and, for an older one, the older rules its
    values follow, with a ``notice`` the run prints once per reader."""
    version, older = reader.calibration_version, reader.older_rules
    facts: dict[str, Any] = {"calibration_version": version, "older_rules": older}
    if older:
        folder = Path(where).parent
        manifest = (reader.meta.get("calibration") or {}).get("manifest") or "MANIFEST_OF_REFERENCES"
        facts["notice"] = (
            f"KIVA reader {folder} was calibrated for measure version {version} (current {MEASURE_VERSION}) "
            f"and judges by older rules ({', '.join(older)}); `robojudge kiva calibrate --reader {folder} "
            f"--episodes {manifest}` brings it to today's rules")
    return facts


def _check_robot(item: Item, reader: Any, where: str, metric_id: str) -> None:
    """An item that names its robot spec must name the reader's robot: the same keypoints of a model
    of the same name. Another robot's video read as this one's is not a measurement (a Fetch reader
    gave an ADROIT clip 0%, the best value). An item without a spec is judged (by embodiment only)."""
    if not item.robot:
        return
    from robojudge.robots import RobotSpecError, read_robot_spec

    try:
        spec = read_robot_spec(item.robot)
    except RobotSpecError as exc:
        raise MetricInputError(str(exc)) from None
    mine, theirs = list(spec.keypoints), list(reader.meta["keypoints"])
    if spec.name != reader.meta["robot"] or mine != theirs:
        raise MetricInputError(
            f"metric {metric_id!r}: item {item.item_id!r} is robot {spec.name!r} ({item.robot}; keypoints "
            f"{mine}) and reader {where} reads robot {reader.meta['robot']!r} (keypoints {theirs}); score "
            "each robot's items with its own reader")


def _frames(item: Item, config: KivaConfig) -> Any:
    """The video's frames; a video shorter than a segment is unscored, with the reason."""
    sampled = sample_frames(item.video, fps=None, max_frames=None)
    n = len(sampled)
    if n < config.segment:
        why = (f"the video has {n} frame{'s' if n != 1 else ''}; KIVA judges segments of {config.segment} "
               "frames")
        raise Unmeasurable(why, frames=n)
    return sampled


def _usable_reader(path: Path, config: KivaConfig, metric_id: str
                   ) -> tuple[Any, tuple[str, int, int, int], Thresholds]:
    """The reader at ``path`` with its thresholds, refused for what would refuse every video alike: not
    there or not a reader, not calibrated, calibrated on other segments, or trained before its training
    videos' shapes were stored. Checked once before a run too (:meth:`KivaConfig.check_before_run`)."""
    reader, rkey = _reader(path, metric_id)
    cuts: Thresholds | None = reader.thresholds
    if cuts is None:
        raise MetricInputError(
            f"metric {metric_id!r}: reader {rkey[0]} has no thresholds yet; run `robojudge kiva calibrate`"
        )
    if config.segment != reader.segment:
        raise MetricInputError(
            f"metric {metric_id!r}: reader {rkey[0]}'s thresholds were calibrated on {reader.segment}-frame "
            f"segments, and segment is {config.segment}: a segment's maxima grow with its length, so they "
            f"would judge it by another rule. Set segment to {reader.segment}, or calibrate the reader for "
            f"it (`robojudge kiva calibrate --segment {config.segment}`)")
    _require_aspects(reader, rkey[0], metric_id)
    return reader, rkey, cuts


def _score(item: Item, config: KivaConfig, metric_id: str, part: str) -> Score:
    if config.reader is None:
        _frames(item, config)  # too short is unscored, reader or not
        raise MissingReaderError(
            f"metric {metric_id!r} needs a trained keypoint reader: set its config `reader` to the folder "
            "written by `robojudge kiva train` (and calibrated by `robojudge kiva calibrate`)"
        )
    reader, rkey, cuts = _usable_reader(config.reader, config, metric_id)
    _check_robot(item, reader, rkey[0], metric_id)
    sampled = _frames(item, config)  # decoded once the reader is known to judge it
    n = len(sampled)
    _check_aspect(item, sampled.frames.shape[1:3], reader, rkey[0], metric_id)
    trained_on = reader.meta.get("embodiments") or []
    if item.embodiment is not None and trained_on and item.embodiment.value not in trained_on:
        raise MetricInputError(
            f"metric {metric_id!r}: reader {rkey[0]} reads robot {reader.meta['robot']!r}, trained on "
            f"{', '.join(trained_on)} episodes; item {item.item_id!r} is {item.embodiment.value} (score each "
            "robot's items with its own reader)"
        )
    tkey = (FileFingerprint.of(item.video), rkey)
    with _LOCK:
        tracks = _TRACKS.get(tkey)
    if tracks is None:
        # A clip in which nothing moves (the project's still-clip rule, as every motion metric has it) is
        # unscored before the reader reads it: frozen links and keypoints would be a perfect 0%. Checked
        # once per read: a still clip raises here and is never cached, so the metrics that reuse its reads
        # (kiva, kiva_rigidity, kiva_jerk) do not check the frames again.
        require_motion(sampled.frames, what="the video (a frozen picture)")
        tracks = read_frames(reader, sampled.frames, float(sampled.source_fps))
        with _LOCK:
            _remember(_TRACKS, tkey, tracks)
    scales = reader.scales
    floor, recognition = reader.recognition
    result = judge_tracks(tracks, reader.links, cuts, length=config.segment, min_length=config.min_segment,
                          min_link=config.min_link, fingers=reader.fingers if config.finger_check else (),
                          scales=scales, relative=reader.relative_lengths, window=reader.jerk_windows,
                          min_confidence=floor)
    measures: list[str] = ["2d"] * len(result.verdicts)
    why_2d = "measure is set to 2d"
    if config.measure == "auto" and result.verdicts:
        measures, why_2d = _rigidity_3d(item, reader, rkey, tracks, result, config, metric_id)
        if "3d" in measures and any(v.measured for v in result.verdicts):
            result.reason = None
    facts: dict[str, Any] = {"frames": n, "keypoints_visible": round(result.visible, 4)}
    if not math.isnan(result.motion):
        facts["robot_motion"] = round(result.motion, 6)
    calibration = _calibration_facts(reader, rkey[0])
    facts.update(result.confidence_facts(), recognition=recognition, **calibration)
    if result.reason is not None:
        raise Unmeasurable(result.reason, **facts)
    value, measured = result.value(part)
    if part == "rigidity" and "3d" in measures:
        pass  # judged in 3D, whatever the 2D threshold
    elif part != "kiva" and math.isnan(getattr(cuts, part)):
        # Calibration found no reference segment measuring this part (no rigid link long enough in view).
        why = f"the reader has no {part} threshold: none of its reference videos measured {part}"
        raise Unmeasurable(why, **facts)
    if math.isnan(value):
        raise Unmeasurable(f"no segment gives a {part} value", **result.details(), **calibration)
    details = result.details()
    names = reader.meta["keypoints"]
    for seg, how, verdict in zip(details["segments"], measures, result.verdicts, strict=True):
        seg["rigidity_measure"] = how if seg.get("rigidity") is not None else None
        if scales is not None:
            # Which link and which keypoint are furthest beyond their reference spread in this segment.
            link = worst_part(verdict.values.link_cv, scales.links)
            kp = worst_part(verdict.values.keypoint_jerk, scales.keypoints)
            # (a segment judged in 3D has no 2D link ratio behind its rigidity: no worst link is named)
            seg["worst_link"] = (None if link is None or how == "3d"
                                 else "-".join(names[i] for i in reader.links[link]))
            seg["worst_keypoint"] = None if kp is None else names[kp]
    details["thresholds"]["rigidity_3d"] = None if math.isnan(reader.rigidity_3d) else reader.rigidity_3d
    used = {seg["rigidity_measure"] for seg in details["segments"] if seg["rigidity_measure"] is not None}
    return Score(
        value=value,
        details={
            **details,
            "measured_segments": measured,
            "invalid_segments": round(value * measured / 100),
            "measure": "+".join(sorted(used, reverse=True)) or "2d",
            # Version 4 judges each link and keypoint against its own reference spread; a reader calibrated
            # before the scales were stored is judged as in version 3 until it is calibrated again.
            "part_scales": scales is not None,
            # Version 6 measures rigidity on relative link lengths; a reader calibrated before, on pixels.
            "link_lengths": "relative" if reader.relative_lengths else "pixel",
            # Version 7 gives a segment its own jerk windows and the one reaching back a frame ("lead");
            # a reader calibrated before is judged with the windows of its thresholds ("centre").
            "jerk_windows": reader.jerk_windows,
            **({"measure_2d_reason": why_2d} if "2d" in used or not used else {}),
            "candidates": 5,
            "recognition": recognition,
            # Measure version the thresholds were drawn for; an older one names the older rules applied.
            **calibration,
            **_unchecked_floor(reader, result, floor),
            "reader": rkey[0],
            "reader_data_sha256": reader.meta["data"]["sha256"],
            "robot": reader.meta["robot"],
        },
    )


def _unchecked_floor(reader: Any, result: KivaResult, floor: float) -> dict[str, float]:
    """``{"below_unchecked_floor": floor}`` when the reader's recognition is not checked (a small reader
    as sure of robot-free clips as of its robot: every video is judged) and this video was read with less
    confidence than the floor a checked reader would apply: such a value may be of a video without the
    robot, and a filter on this key finds them."""
    value = (reader.meta.get("calibration") or {}).get("confidence")
    if not math.isnan(floor) or value is None or math.isnan(result.confidence):
        return {}
    would = CONFIDENCE_RATIO * float(value)
    return {"below_unchecked_floor": round(would, 4)} if result.confidence < would else {}


def _rigidity_3d(item: Item, reader: Any, rkey: tuple[str, int, int, int], tracks: Tracks, result: KivaResult,
                 config: KivaConfig, metric_id: str = "kiva") -> tuple[list[str], str]:
    """Replace each segment's 2D rigidity verdict by the 3D one where it can be measured (in place), and
    say per segment which it is; the second value says why a segment, or the item, stays in 2D."""
    from robojudge.kiva.multiview import (
        ViewOffCalibration,
        ViewsOutOfStep,
        apply_3d,
        calibrated_views,
        read_views,
        segment_values_3d,
    )
    from robojudge.suite import main_view_name, same_file

    plain = ["2d"] * len(result.verdicts)
    if math.isnan(reader.rigidity_3d):
        return plain, "the reader has no 3D rigidity threshold (calibrated on no multi-view real video)"
    cams, why = calibrated_views(item)
    if why is not None:
        return plain, why
    main = main_view_name(item)
    # The 2D tracks are of `video`: reused as the main view's reading only where that view is `video`
    # (a loaded manifest makes it so; an item built in Python may not).
    main_file = (item.views or {}).get(main) if main else None
    reuse = (main, tracks) if main and main_file and same_file(main_file, item.video) else None
    files = tuple(FileFingerprint.of(p) for p in sorted({*(item.views or {}).values(), item.video}))
    calib = FileFingerprint.of(str(item.calibration))
    key = (files, calib, rkey, config.max_reprojection, config.min_link_3d)
    with _LOCK:
        values = _VALUES_3D.get(key)
    if values is None:
        def read(frames: Any, fps: float) -> Tracks:
            # Every view is squashed to a square as the main view is: each is held to the training shape.
            _check_aspect(item, frames.shape[1:3], reader, rkey[0], metric_id, "view read in 3D")
            return read_frames(reader, frames, fps)

        try:
            readings = read_views(read, item, cams, reuse)
        except (ViewsOutOfStep, ViewOffCalibration) as exc:
            # Frame t of one view is another instant in the other, or a cropped view's pixels are not on
            # the calibrated rays: either would triangulate points that are not the robot's. Remembered,
            # so the item's other parts do not read the views again.
            values = f"{exc}: rigidity is measured in 2D"
        else:
            spans = [(v.values.start, v.values.stop) for v in result.verdicts]
            values = segment_values_3d(readings, reader.links, spans, max_error=config.max_reprojection,
                                       min_link=config.min_link_3d)
        with _LOCK:
            _remember(_VALUES_3D, key, values)
    if isinstance(values, str):
        return plain, values
    result.verdicts, measures = apply_3d(result.verdicts, values, result.thresholds, reader.rigidity_3d)
    return measures, "no rigid link triangulated on enough frames of a segment (seen by fewer than two views)"


_COMMON: dict[str, Any] = {
    "family": Family.kinematics,
    "inputs": {Input.video},
    # Read when the item has them: the reader refuses another embodiment or robot spec, and measures
    # rigidity in 3D on calibrated views; a changed one is a changed result.
    "also_reads": {"views", "embodiment", "robot"},
    "higher_is_better": False,
    "native_range": (0.0, 100.0),
    "citation": CITATION,
    "config": KivaConfig,
    "provider": Provider.model,
    # 5: the finger part also judges the fingers' gap (readers calibrated since; docs/kiva.md).
    # 6: rigidity on relative link lengths, links gated by their typical length (readers calibrated since).
    # 7: a segment's jerk windows are its own and the one reaching back a frame (readers calibrated since).
    # 8: a frozen segment gives no value, and a frozen video or a robot that does not move is unscored
    # (before: valid segments, a perfect 0). Calibration unchanged (kiva.MEASURE_VERSION stays 7).
    # 9: a segment frozen in any calibrated view of a multi-view item is measured in 2D, not triangulated.
    # 10: a video in which the reader does not recognise its robot (confidence below half its references')
    # is unscored (before: judged, nearly always 100%); readers calibrated since (kiva.MEASURE_VERSION 8).
    # 11: a frame that a lossy codec re-draws with noise is held (kiva.held_frames), so a frozen stretch of an
    # mp4 is frozen as the same frames in PNG are (docs/kiva.md, "Frozen and still videos").
    # 12: refused (before: judged) a segment length other than the reader's calibration, an item naming
    # another robot's spec, and a video or view more than 3% off the training videos' shape; values stored
    # before may rest on one of those, so they are computed again. Verdicts of accepted videos unchanged.
    # 13: calibrated views of different frame counts or frame rates, or a view of another aspect ratio than
    # its calibration's size, are measured in 2D with the reason naming the view (before: frame t of each
    # triangulated together, one view's instant against another's; a cropped view's K scaled per axis).
    # 14: a frozen video whose brightness or contrast drifts is unscored as still (before: judged).
    "version": "14",
}


@metric(
    "kiva",
    description=(
        "Percentage of 16-frame segments in which a keypoint reader trained on forward kinematics finds a "
        "rigid link changing length or keypoints jerking beyond thresholds calibrated on reference videos "
        "(2D, five test-time candidates averaged). Needs a trained reader (config `reader`). Lower is better."
    ),
    **_COMMON,
)
def kiva(item: Item, config: KivaConfig) -> Score:
    """KIVA: invalid segments (rigidity or jerk above threshold), percent of measured segments."""
    return _score(item, config, "kiva", "kiva")


@metric(
    "kiva_rigidity",
    description=(
        "KIVA's rigidity part: percentage of segments in which a rigid link's 2D length varies (coefficient "
        "of variation) beyond its reference threshold. Needs a trained reader. Lower is better."
    ),
    **_COMMON,
)
def kiva_rigidity(item: Item, config: KivaConfig) -> Score:
    """Segments whose link rigidity is above its threshold, percent of segments with a rigidity value."""
    return _score(item, config, "kiva_rigidity", "rigidity")


@metric(
    "kiva_jerk",
    description=(
        "KIVA's jerk part: percentage of segments whose keypoint jerk (third difference x fps^3 over the "
        "diagonal) exceeds its reference threshold. Needs a trained reader. Lower is better."
    ),
    **_COMMON,
)
def kiva_jerk(item: Item, config: KivaConfig) -> Score:
    """Segments whose jerk is above its threshold, percent of segments with a jerk value."""
    return _score(item, config, "kiva_jerk", "jerk")
