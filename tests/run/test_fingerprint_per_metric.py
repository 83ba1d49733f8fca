"""A pass of fingerprints (planning a block, checking stored rows) does a metric's own work once.

``Fingerprints.metric`` looked the metric's network weights up again for every item (where they are
not on the machine, a scan of the hub cache each time) and worked out again which config fields name
files or per-item texts: about 40% of checking a row's inputs (audit bigscale, finding 3). Now each
network is looked up once per pass, and a config model's fields once; the fingerprints are the same.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from robojudge.metrics import get_metric
from robojudge.run import _fingerprint as fpm
from robojudge.run._fingerprint import Fingerprints, metric_inputs
from robojudge.suite import Item

METRICS = ("aq_clip_ap", "kiva", "flow_motion_magnitude_raft")  # two networks, a file field, one network


def test_each_network_is_looked_up_once_a_pass_and_the_prints_are_the_same(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    items = []
    for k in range(8):
        (tmp_path / f"v{k}.mp4").write_bytes(bytes([k]) * 100)
        items.append(Item(item_id=f"i{k}", video=str(tmp_path / f"v{k}.mp4")))
    requests = [(get_metric(m), get_metric(m).make_config({})) for m in METRICS]
    looked: list[str] = []
    monkeypatch.setattr(fpm, "_weights_path", lambda name: looked.append(name))  # (none on this machine)
    monkeypatch.setattr(fpm, "_weights_memo", {})
    fields: list[object] = []
    real_fields = fpm.file_fields
    monkeypatch.setattr(fpm, "file_fields", lambda t: fields.append(t) or real_fields(t))
    prints = Fingerprints()
    got = [prints.metric(it, spec, config) for it in items for spec, config in requests]
    assert sorted(looked) == ["clip_mlp_aesthetic_l14", "clip_vit_l14", "raft_things"]  # once each
    assert len(fields) <= len(METRICS)  # once per config model (none where cached by an earlier pass)
    # The same as each worked out on its own, item by item (every look made again).
    alone = [metric_inputs(it, spec, config) for it in items for spec, config in requests]
    assert got == alone
    assert len(looked) == 3 + 3 * len(items) and all(fp.unavailable for fp in got if fp.weights)
