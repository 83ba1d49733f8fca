"""robojudge: evaluate generated robot-manipulation videos and the judges that score them.

The top-level package stays light: importing it pulls in no video decoder, database driver or
deep-learning framework. Import the layer you need (``robojudge.video``, ``robojudge.suite``,
``robojudge.metrics``, ``robojudge.store``, ``robojudge.run``) or use the ``robojudge`` CLI.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
