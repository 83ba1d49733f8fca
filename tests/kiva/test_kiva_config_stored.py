"""A reader's stored training config: every field is dumped, and configs stored before an option existed
read back as the reader they trained, even where today's default differs."""

from __future__ import annotations

import json

from robojudge.kiva import TrainConfig
from robojudge.kiva._config import BEFORE_OPTION

# A config as robojudge stored it before the options of BEFORE_OPTION existed (or while they were at the
# values it left out of a dump): the fields of that time, nothing else.
OLD_STORED = {
    "size": 64, "context": 3, "width": 16, "epochs": 12, "batch_size": 16, "lr": 0.003, "huber_delta": 0.02,
    "visibility_weight": 0.1, "shift": 2, "holdout": 0.2, "rollouts": True, "views": "main", "seed": 3,
    "threads": 1, "device": "cpu",
}


def test_a_dump_holds_every_field_and_reads_back_as_the_same_config():
    every = TrainConfig(size=48, heatmap_stride=4, heatmap_loss=0.0, members=2, warp=0.01, failures=True,
                        failure_repeat=2)
    for cfg in (TrainConfig(), every):
        dumped = cfg.model_dump()
        assert set(dumped) == set(TrainConfig.model_fields)
        assert TrainConfig.model_validate(dumped) == cfg
        assert TrainConfig.model_validate_json(cfg.model_dump_json()) == cfg
        assert TrainConfig.from_stored(json.loads(cfg.model_dump_json())) == cfg


def test_a_config_stored_before_the_options_reads_back_with_their_old_values_not_todays_defaults():
    old = TrainConfig.from_stored(OLD_STORED)
    assert (old.heatmap_stride, old.heatmap_loss, old.members) == (4, 0.0, 1)
    assert (old.failures, old.warp, old.failure_repeat) == (False, 0.0, 1)
    assert old.size == 64 and old.seed == 3
    # Today's defaults differ for two of them: reading the old config as a new one would change the network.
    new = TrainConfig.model_validate(OLD_STORED)
    assert (new.heatmap_stride, new.heatmap_loss) == (2, 0.01)
    # Each option named, and with a value the field accepts.
    assert set(BEFORE_OPTION) <= set(TrainConfig.model_fields)
    assert TrainConfig(**BEFORE_OPTION).model_dump(include=set(BEFORE_OPTION)) == BEFORE_OPTION

