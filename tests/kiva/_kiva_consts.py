"""Settings of the kiva tests' tiny suite and reader, imported by conftest.py and the tests.

A module of its own: ``from conftest import ...`` finds whichever test folder's conftest.py was
imported first when the whole suite runs (tests/suite has one too).
"""

SIZE = 64  # video pixels
EPISODES = 5  # Fetch pick-and-place x2, push, slide; one ADROIT episode (not the reader's robot)
JITTER = "jitter_only"

#: The reader the tests train: 32 px frames, 8 channels, 12 epochs (seconds on one core).
TINY = {"size": 32, "width": 8, "epochs": 12, "batch_size": 32, "lr": 5e-3, "holdout": 0.25}
