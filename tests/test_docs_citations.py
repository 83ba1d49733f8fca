"""Citations of the papers' sections, checked against where the passage sits in the paper.

A paper-fidelity audit found three kinds of slip: a section number that holds a neighbouring result
(RoboJudge's DINO and MUSIQ correlations cited to Sec. 5.1, the setup, instead of Sec. 5.3, the results),
a section with another subject (Best-of-N cited to Sec. 6, the conclusion, instead of Sec. 5.6), and an
appendix that does not exist (RoboWorM "App. C2": C2 is only a table and a figure, neither on RIGIS; the
ban reads only citations of RoboWorM, as RoboPhys-3D does have an App. C.2).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TEXTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
         *sorted((ROOT / "src" / "robojudge").rglob("*.py"))]

# (a citing phrase with the section as its group, the section of RoboJudge, paper 000, that holds it)
_SECTIONS = [
    (r"RoboJudge \(Sec\. ([\d.]+)\) names Best-of-N", "5.6"),  # "Downstream Application", line 206
    (r"r = 0\.392 with human PA \(Sec\. ([\d.]+)", "5.3"),  # "Results and Analysis", line 159
    (r"Pearson r with PA is 0\.078 \(Sec\. ([\d.]+)", "5.3"),  # the same sentence
]


def _text(path: Path) -> str:
    return " ".join(path.read_text(encoding="utf-8").split())  # a phrase may be wrapped over lines


@pytest.mark.parametrize(("phrase", "section"), _SECTIONS, ids=[s[0][:24] for s in _SECTIONS])
def test_a_result_is_cited_to_the_section_that_holds_it(phrase: str, section: str) -> None:
    found = [(p.relative_to(ROOT).as_posix(), m.group(1))
             for p in TEXTS for m in re.finditer(phrase, _text(p))]
    assert found, f"no text cites {phrase!r} any more: update this test with the new wording"
    wrong = [(where, sec) for where, sec in found if sec != section]
    assert wrong == [], f"cited to another section than Sec. {section}: {wrong}"


#: An App. C2 cited to RoboWorM (paper 001): "RoboWorM (paper 001, Fig. 3b, App. C2)", "RoboWorM (Fig. 3b,
#: App. C2)". Only these: RoboPhys-3D (paper 002) has an App. C.2 (Effect of Prompt Specificity), which a
#: ban of every "App. C.2" kept any text from citing.
_ROBOWORM_C2 = re.compile(r"(?:RoboWorM|paper 001)[^;]{0,40}?\bApp\. ?C\.?2\b")


@pytest.mark.parametrize(("text", "wrong"), [
    ("RoboWorM (paper 001, Fig. 3b, App. C2) reconstructs each frame set", True),
    ("citation=\"RoboWorM (paper 001), Fig. 3b, App. C2; VGGT (Wang et al.)\"", True),
    ("RoboWorM (Fig. 3b, App. C.2) names VGGT for RIGIS", True),
    ("RoboPhys-3D (paper 002) App. C.2 (Effect of Prompt Specificity) varies the prompt", False),
    ("RoboWorM (Fig. 3b) names VGGT; RoboPhys-3D App. C.2 studies prompt specificity", False),
])
def test_the_ban_reads_only_roboworm_s_c2(text: str, wrong: bool) -> None:
    assert bool(_ROBOWORM_C2.search(text)) is wrong


def test_no_text_cites_roboworm_s_nonexistent_appendix_c2() -> None:
    cited = [p.relative_to(ROOT).as_posix() for p in TEXTS if _ROBOWORM_C2.search(_text(p))]
    assert cited == [], f"RoboWorM has no App. C2 (its C2s are Table C2 and Fig. C2): {cited}"
