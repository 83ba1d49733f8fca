"""Text similarity of a video's caption to its instruction (RoboPhys-3D App. B.3.6, after EWMBench)."""

from __future__ import annotations


def bleu(hypothesis: str, reference: str, *, tokenize: str = "13a", lowercase: bool = False,
         smooth_method: str = "exp") -> float:
    """Sentence BLEU of ``hypothesis`` against one ``reference``, in [0, 1] (sacrebleu's score / 100).

    Papineni et al. (2002): the geometric mean of clipped n-gram precisions (n up to 4) times the
    brevity penalty, as ``sacrebleu.sentence_bleu`` computes it with effective order, so a short
    sentence is not zeroed by having no 4-grams. Its defaults: mteval-v13a tokens, exp smoothing.
    Both texts are composed first (Unicode NFC): sacrebleu compares code points, and ``è`` typed as one
    character or as ``e`` and an accent would be two words. The 13a tokens split at spaces and
    punctuation only, so a Chinese, Japanese or Thai sentence is one token: compare such texts with
    ``tokenize="char"``.

    >>> round(bleu("the cat sat on a mat", "the cat sat on the mat"), 6)  # (5/6 * 3/5 * 2/4 * 1/3) ** (1/4)
    0.537285
    >>> bleu("robot arm idle", "the cat sat on the mat")
    0.0
    >>> bleu("pick up the red cube", "pick up the red cube")  # sacrebleu says 100.00000000000004
    1.0
    >>> bleu("cre\u0300me bru\u0302le\u0301e", "cr\xe8me br\xfbl\xe9e")  # NFD against NFC
    1.0
    >>> bleu("把红色方块放到抽屉里", "把红色方块放进抽屉里")  # one 13a token each, and they differ
    0.0
    >>> # characters: (9/10 * 7/9 * 5/8 * 3/7) ** (1/4) = 0.1875 ** 0.25, one character of ten differs
    >>> round(bleu("把红色方块放到抽屉里", "把红色方块放进抽屉里", tokenize="char"), 6)
    0.658037
    """
    import unicodedata

    import sacrebleu

    hypothesis, reference = unicodedata.normalize("NFC", hypothesis), unicodedata.normalize("NFC", reference)
    score = sacrebleu.sentence_bleu(hypothesis, [reference], smooth_method=smooth_method, lowercase=lowercase,
                                    tokenize=tokenize, use_effective_order=True)
    # exp of a sum of logs: a perfect match comes out a rounding error above 100
    return min(1.0, float(score.score) / 100.0)
