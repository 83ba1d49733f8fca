"""Agreement statistics and confidence intervals (numpy and scipy only)."""

from robojudge.meta._ci import MeanCI, mean_confidence_interval

__all__ = ["MeanCI", "mean_confidence_interval"]
