"""Model-backed metrics: networks loaded through robojudge.models, imported lazily."""

# Registers sa_clip (the registry's built-in loader imports this package through learned.hf); the
# module imports torch and transformers only inside its functions.
from robojudge.metrics.learned import hf_text  # noqa: F401

__all__ = ["hf_text"]
