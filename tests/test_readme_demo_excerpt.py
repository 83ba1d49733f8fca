"""The README's excerpt of ``make demo``'s output has the lines the demo prints: its counts for the
demo's metric list, the tables' titles and headers the CLI writes, metrics the demo scores, and intervals
written as the CLI writes them (none where the bootstrap's replicates are all one value). The numbers
themselves come from a full demo run (15-35 minutes), which no test repeats."""

from __future__ import annotations

import re
from pathlib import Path

from robojudge.cli import _demo
from robojudge.demo import KIVA_METRICS, demo_metrics

ROOT = Path(__file__).resolve().parents[1]
SOURCE = Path(_demo.__file__).read_text(encoding="utf-8")
NUMBER = r"-?\d+\.\d\d"
ESTIMATE = rf"(?:n/a|{NUMBER}(?: \[{NUMBER}, {NUMBER}\])?)"


def _excerpt() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"excerpt of the terminal output\):\n\n```\n(.*?)```", text, re.S)
    assert block is not None, "the README's demo excerpt is gone"
    return block.group(1).splitlines()


def _cells(line: str) -> list[str]:
    return re.split(r"\s{2,}", line.strip())


def test_the_excerpt_counts_what_the_demo_scores() -> None:
    lines = _excerpt()
    n = 60 * len(demo_metrics("sim"))  # the simulator suite's 60 rollouts
    assert re.fullmatch(rf"{n} tasks: (\d+) scored, (\d+) unscored \(nothing to measure\), 0 failed, "
                        r"0 already stored \(\d+\.\d s\)", lines[0]), lines[0]
    scored, unscored = map(int, re.findall(r"(\d+) (?:un)?scored", lines[0]))
    assert scored + unscored == n
    assert lines[1].startswith("unscored: ")


def test_the_excerpt_s_tables_are_the_demo_s() -> None:
    lines = _excerpt()
    for title in ("metrics against the planted labels (positive = agrees)",
                  "generators by their planted labels (95% cluster-bootstrap CI)"):
        assert title in lines and f'"{title}"' in SOURCE
    agreement = lines.index("metrics against the planted labels (positive = agrees)")
    header = ["metric", "axis", "n", "Pearson r [95% CI]", "Spearman rho [95% CI]"]
    assert _cells(lines[agreement + 1]) == header
    scored = set(demo_metrics("sim")) | set(KIVA_METRICS)
    for line in lines[agreement + 2:]:
        if line == "...":
            break
        metric, axis, n, r, rho = _cells(line)
        assert metric.split(" [")[0] in scored and axis in ("pa", "ia") and n.isdigit(), line
        assert re.fullmatch(ESTIMATE, r) and re.fullmatch(ESTIMATE, rho), line
    board = lines.index("generators by their planted labels (95% cluster-bootstrap CI)")
    assert _cells(lines[board + 1]) == ["rank", "generator", "PA", "IA", "Overall", "P(rank)"]
    rows = [line for line in lines[board + 2:] if re.match(r"\d+\s", line)]
    assert rows
    for line in rows:
        rank, generator, pa, ia, overall, prob = _cells(line)
        assert all(re.fullmatch(ESTIMATE, x) for x in (pa, ia, overall)) and re.fullmatch(r"\d\.\d\d", prob)
        # A zero-width interval (every replicate one value) is withheld: the mean alone.
        for low, high in re.findall(rf"\[({NUMBER}), ({NUMBER})\]", line):
            assert low != high, line
    (judge,) = [line for line in lines if line.startswith("judge ")]
    assert re.fullmatch(rf"judge metric-calibrated: Pearson r  PA {ESTIMATE}  IA {ESTIMATE}  "
                        rf"Overall {ESTIMATE}", judge), judge
    assert 'f"judge {row.judge}: Pearson r  PA ' in SOURCE
