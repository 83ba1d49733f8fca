"""The reasons a run's results found nothing to measure, grouped by kind for the end-of-run summary.

A reason carries the numbers of its clip (frames read, the largest change): one frozen clip's six
results gave three texts that differ only in those numbers, and counted apart ("3 x ...; 2 x ...;
1 x ...") they read as six still videos. Reasons that differ only in their numbers are one kind here,
counted in results and in items, the numbers that differ shown as their range.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# A number standing alone, with its sign and exponent: digits inside a word or a path (fetch00, block1,
# state/ep03.npz) are text, or two items' file names read as one range ("fetch00 to 11-oracle").
_NUMBER = re.compile(r"(?<![\w/.-])-?\d+(?:\.\d+)?(?:e[+-]?\d+)?(?![\w/])")


@dataclass
class UnscoredKind:
    """Results whose unscored reasons differ only in their numbers.

    ``parts`` is the text around the numbers (one more than the numbers), ``low`` and ``high`` each
    number's smallest and largest text seen (compared as numbers), ``results`` how many results gave
    the kind and ``items`` the items they belong to.
    """

    parts: list[str]
    low: list[str]
    high: list[str]
    results: int = 0
    items: set[str] = field(default_factory=set)

    def add(self, numbers: list[str], item_id: str) -> None:
        self.results += 1
        self.items.add(item_id)
        for i, text in enumerate(numbers):
            if float(text) < float(self.low[i]):
                self.low[i] = text
            if float(text) > float(self.high[i]):
                self.high[i] = text

    @property
    def text(self) -> str:
        """The reason, each number that differs between the results given as ``low to high``.

        >>> kind = UnscoredKind(["its ", " frames (largest ", ")"], ["60", "2.0"], ["60", "2.0"])
        >>> kind.add(["16", "1.0"], "a"); kind.add(["60", "4.0"], "a")
        >>> kind.text, kind.results, len(kind.items)
        ('its 16 to 60 frames (largest 1.0 to 4.0)', 2, 1)
        """
        out = [self.parts[0]]
        for low, high, part in zip(self.low, self.high, self.parts[1:], strict=True):
            out.append(low if low == high else f"{low} to {high}")
            out.append(part)
        return "".join(out)


def add_unscored(kinds: dict[str, UnscoredKind], reason: str, item_id: str) -> None:
    """Count one unscored result of ``item_id`` under its reason's kind in ``kinds`` (keyed by the
    reason with its numbers taken out)."""
    numbers = _NUMBER.findall(reason)
    key = _NUMBER.sub("#", reason)
    kind = kinds.get(key)
    if kind is None:
        kind = kinds[key] = UnscoredKind(_NUMBER.split(reason), list(numbers), list(numbers))
    kind.add(numbers, item_id)


def unscored_lines(kinds: dict[str, UnscoredKind], shown: int = 3) -> list[str]:
    """The ``shown`` most frequent kinds as "N results (M items): reason", then how many others.

    >>> kinds: dict[str, UnscoredKind] = {}
    >>> for n, item in ((60, "a"), (16, "a"), (60, "a")):
    ...     add_unscored(kinds, f"the video is still: none of its {n} frames moves", item)
    >>> add_unscored(kinds, "the video gave 1 frame", "b")
    >>> for line in unscored_lines(kinds):
    ...     print(line)
    3 results (1 item): the video is still: none of its 16 to 60 frames moves
    1 result (1 item): the video gave 1 frame
    """
    ordered = sorted(kinds.values(), key=lambda k: (-k.results, -len(k.items), k.text))
    lines = [f"{k.results} result{'s' if k.results != 1 else ''} ({len(k.items)} item"
             f"{'s' if len(k.items) != 1 else ''}): {k.text}" for k in ordered[:shown]]
    if len(ordered) > shown:
        lines.append(f"{len(ordered) - shown} other kinds of reason")
    return lines
