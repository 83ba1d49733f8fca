"""Input files saved by Windows tools read as the same files saved plainly.

PowerShell 5's ``Set-Content -Encoding utf8`` and older Notepad write UTF-8 with a byte-order mark and
CRLF line ends. Manifests, ratings and imports took such files already; the readers below refused them
("invalid TOML: Invalid statement (at line 1, column 1)", "Unexpected UTF-8 BOM", a column named
``\\ufeffj1``, ``fps.txt does not hold a number: '\\ufeff10'``), while the file looked right in any
editor. Each is written once plainly and once with BOM and CRLF, and both must read alike.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from robojudge.judges import load_judges_file, load_rubric_file
from robojudge.metrics._texts import load_item_texts
from robojudge.robots import load_calibration, load_joint_states, read_robot_spec
from robojudge.video._folder import folder_rate

RUBRIC = (resources.files("robojudge") / "data" / "rubrics" / "caption.toml").read_text(encoding="utf-8")
JUDGES = '[judges.qwen]\nbackend = "openai"\nmodel = "m"\nbase_url = "http://127.0.0.1:8000/v1"\n'
SPEC = ('name = "arm"\nmodel = "arm.xml"\nkeypoints = ["base", "hand"]\nlinks = [["base", "hand"]]\n'
        'joints = ["j1"]\n')
CALIBRATION = json.dumps({"front": {"K": [[615.0, 0, 320.0], [0, 615.0, 240.0], [0, 0, 1]],
                                    "R": [[0, -1, 0], [0, 0, -1], [1, 0, 0]], "t": [0.0, 0.35, 1.2],
                                    "size": [640, 480]}}, indent=1)

CASES: dict[str, tuple[str, str, Callable[[Path], Any]]] = {
    # what: (file name, content, read it)
    "rubric": ("rubric.toml", RUBRIC, load_rubric_file),
    "judges": ("judges.toml", JUDGES, load_judges_file),
    "robot spec": ("arm.toml", SPEC, read_robot_spec),
    "calibration": ("calibration.json", CALIBRATION, load_calibration),
    "joint states": ("states.csv", "j1,j2\n0.1,0.2\n0.3,0.4\n", lambda p: load_joint_states(p, ["j1", "j2"])),
    "captions json": ("texts.json", json.dumps({"ep1": "pick up the cup"}, indent=1),
                      lambda p: load_item_texts(p, "caption")),
    "captions jsonl": ("texts.jsonl", '{"item_id": "ep1", "caption": "pick up the cup"}\n',
                       lambda p: load_item_texts(p, "caption")),
    "fps.txt": ("fps.txt", "10\n", lambda p: folder_rate(p.parent)),
}


@pytest.mark.parametrize("what", list(CASES))
def test_a_byte_order_mark_and_crlf_read_as_the_plain_file(tmp_path: Path, what: str) -> None:
    name, text, read = CASES[what]
    said = []
    windows = b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode()
    for kind, data in (("plain", text.encode()), ("windows", windows)):
        folder = tmp_path / kind
        folder.mkdir()
        (folder / "arm.xml").write_text("<mujoco/>\n", encoding="utf-8")  # (the spec's model, never loaded)
        (folder / name).write_bytes(data)
        said.append(repr(read(folder / name)).replace(str(folder), "FOLDER"))
    assert said[0] == said[1]
