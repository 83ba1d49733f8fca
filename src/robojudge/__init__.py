"""robojudge: evaluate generated robot-manipulation videos and the judges that score them.

The top-level package stays light: importing it pulls in no video decoder, database driver or
deep-learning framework. Import the layer you need (``robojudge.video``, ``robojudge.suite``,
``robojudge.metrics``, ``robojudge.store``, ``robojudge.run``) or use the ``robojudge`` CLI.
"""

__version__ = "0.1.0"

#: The default seed of the bootstrap and of the metric-calibrated judge's folds in the report, the
#: leaderboards, Best-of-N, ``meta agreement`` and the demo, from the CLI and from Python alike: the folds
#: move that judge's numbers, so two defaults gave one store two sets of them.
DEFAULT_SEED = 20260926

__all__ = ["DEFAULT_SEED", "__version__"]
