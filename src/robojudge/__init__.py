"""robojudge: evaluate generated robot-manipulation videos and the judges that score them.

The top-level package stays light: importing it pulls in no video decoder, database driver or
deep-learning framework. Import the layer you need (``robojudge.video``, ``robojudge.suite``,
``robojudge.metrics``, ``robojudge.store``, ``robojudge.run``) or use the ``robojudge`` CLI.
"""

__version__ = "0.1.0"

#: The default seed of the bootstrap and of the metric-calibrated judge's folds in the report, the
#: leaderboards, Best-of-N, ``meta agreement`` and the demo, from the CLI and from Python alike: the folds
#: move that judge's numbers, so two defaults gave one store two sets of them.
#: It is RoboJudge App. E.1's seed, and the Python bootstrap functions (``robojudge.meta``) default to it
#: too; ``seed=None`` there draws afresh.
DEFAULT_SEED = 20260926

#: Bootstrap replicates of RoboJudge App. E.1, the default of ``meta agreement``, ``agreement_table``,
#: ``kendall_interval`` and ``ClusterBootstrap``. The report, the leaderboards, ``select`` and ``meta
#: segments`` draw 2,000 by default (their output says so): at 320 items and two judges 10,000 took
#: ``robojudge report`` from 15 s to 29 s on the 2-core machine (docs/report.md, "Intervals and small n").
PAPER_REPLICATES = 10_000

__all__ = ["DEFAULT_SEED", "PAPER_REPLICATES", "__version__"]
