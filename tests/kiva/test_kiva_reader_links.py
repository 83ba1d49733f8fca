"""A reader folder that came with links in it: saving a reader writes only inside the folder.

``reader.json`` linked to a file of the user's had it overwritten with the reader's summary, and a
``reader.pt.tmp`` link had the checkpoint written where it pointed (audit untrusted 1).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import torch

from robojudge.kiva._reader import _write


def test_saving_a_reader_replaces_links_leading_out_of_its_folder(tmp_path: Path) -> None:
    mine = tmp_path / "home" / "notes.txt"
    mine.parent.mkdir()
    mine.write_text("my notes\n")
    folder = tmp_path / "shared_reader"
    folder.mkdir()
    (folder / "reader.json").symlink_to("../home/notes.txt")
    (folder / "reader.pt.tmp").symlink_to("../home/notes.txt")
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        _write(folder, {"w": torch.zeros(2)}, {"robot": "panda"})
    assert mine.read_text() == "my notes\n"
    assert not (folder / "reader.json").is_symlink()
    assert json.loads((folder / "reader.json").read_text()) == {"robot": "panda"}
    assert torch.load(folder / "reader.pt", weights_only=True)["meta_json"] == '{"robot": "panda"}'
    assert [w.category.__name__ for w in said] == ["LinkReplacedWarning"]  # reader.json's
