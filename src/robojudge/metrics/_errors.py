"""Errors a metric raises for inputs it cannot score."""


class MetricInputError(ValueError):
    """The item is valid but this metric cannot score it (too few frames, no reference, ...).

    The runner records it as a failed result with this message, like a decoding error.
    """
