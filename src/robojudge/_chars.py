"""Characters a name may not hold: control characters and the Unicode bidirectional controls.

A control character (category Cc) breaks printed lines and CSV rows, and an escape sequence rewrites the
terminal that prints it. A bidirectional embedding, override or isolate (U+202A-U+202E, U+2066-U+2069)
reorders what follows it on screen: a generator named ``model\\u202e`` shows the next cells of its row
reversed, and two names that read alike may differ. Other format characters (the zero-width joiner and
non-joiner that some scripts need, the left-to-right and right-to-left marks) are allowed.

A name is also bounded in length (:data:`MAX_NAME_BYTES`): a metric id, a judge or a rubric name and
their versions are parts of a stored key (a judge's metric id is ``judge:<judge>:<rubric>``), and the
whole key must fit an entry of PostgreSQL's unique index (at most 2,704 bytes). No name is used as a file
name as it is: where one names a file (the acceleration audit's tables), it is cut and given a short hash
there.

Two names may also differ in characters no table shows: ``é`` as one character or as ``e`` and an accent
(NFC against NFD, as macOS writes file names), a zero-width space, a byte-order mark, a no-break space.
:func:`look_alike_key` is what such names share, so that the manifest check and the grouping of items
can say that two of them print alike (:func:`look_alike_reason`).

Chinese, Japanese and Thai are written without spaces between words, and a Korean word is a run of
syllable blocks: a count of words by spaces, or a tokenizer that splits at spaces, sees a sentence as
one word. :func:`holds_cjk_thai` says when a text holds any of those scripts; :func:`count_words`
counts its words as word processors count East Asian text.
"""

from __future__ import annotations

import bisect
import unicodedata
from collections.abc import Iterable

BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")

MAX_NAME_BYTES = 255
"""The longest name, in bytes of UTF-8 (255 ASCII characters, fewer accented or CJK ones; as long as a
folder's name may be on common file systems): a generator, task, regime, prompt variant, split, view or
rater of a manifest, a metric id, a judge name, a rubric id, a metric's or rubric's version. A manifest's
``clip_id`` and ``source`` name paths and may be as long as an item id
(:data:`robojudge.suite.MAX_ITEM_ID_BYTES`). Two names and a prefix (``judge:<judge>:<rubric>``), an item
id, a configuration hash and a version stay below PostgreSQL's index limit together."""


def unsafe_at(value: str) -> int | None:
    """The position of the first control or bidirectional control character of ``value``, or ``None``."""
    return next(
        (i for i, ch in enumerate(value) if ch in BIDI_CONTROLS or unicodedata.category(ch) == "Cc"), None
    )


def escape_controls(text: str) -> str:
    """``text`` with each control character (C0, DEL, C1) and bidirectional control written out as its
    escape, as ``repr`` writes it (``\\x1b``, ``\\u202e``): text from outside, such as a server's error
    body, printed or stored without rewriting the terminal that shows it (an ``ESC[2J`` clears the
    screen). Everything else is kept as it is.

    >>> escape_controls("\\x1b[2Jall scored\\x07 \\u202eok")
    '\\\\x1b[2Jall scored\\\\x07 \\\\u202eok'
    """
    if unsafe_at(text) is None:
        return text
    return "".join(
        (f"\\x{ord(ch):02x}" if ord(ch) <= 0xFF else f"\\u{ord(ch):04x}")
        if ch in BIDI_CONTROLS or unicodedata.category(ch) == "Cc" else ch
        for ch in text
    )


def unsafe_kind(ch: str) -> str:
    """What the character at :func:`unsafe_at` is, for an error message."""
    return "a bidirectional control character" if ch in BIDI_CONTROLS else "a control character"


def too_long(field: str, value: str, limit: int = MAX_NAME_BYTES) -> str | None:
    """Why ``value`` is too long for ``field`` (more than ``limit`` bytes in UTF-8), or ``None``.

    A lone surrogate (no UTF-8 encoding: an undecodable byte of a file name) counts as three bytes, so
    the check itself never fails."""
    size = len(value.encode("utf-8", "surrogatepass"))
    if size <= limit:
        return None
    return f"{field} is {size:,} bytes long in UTF-8; at most {limit:,} are allowed"


def short_enough(field: str, value: str, limit: int = MAX_NAME_BYTES) -> str:
    """``value``, or a ValueError saying why it is too long for ``field`` (:func:`too_long`): the check of
    a pydantic validator."""
    problem = too_long(field, value, limit)
    if problem is not None:
        raise ValueError(problem)
    return value


# Format characters (category Cf) that print as nothing in any script: the zero-width space, the word
# joiner, a byte-order mark, the soft hyphen (shown only where a line breaks at it), the direction marks
# and the bidirectional controls, the Mongolian vowel separator, the invisible math operators, the
# deprecated format characters and the tag characters. Not every Cf is invisible: the zero-width
# non-joiner and joiner change how the letters around them join (Persian mi-khaham with and without its
# ZWNJ, an emoji sequence), and the Arabic number signs (U+0600-0605, U+06DD, U+0890-0891, U+08E2), the
# Syriac abbreviation mark (U+070F) and the Kaithi and Egyptian format characters are drawn.
_INVISIBLE = frozenset(
    "\u00ad\u061c\u180e\u200b\u200e\u200f\u2060\u2061\u2062\u2063\u2064\ufeff"
    + "".join(map(chr, range(0x206A, 0x2070)))
) | BIDI_CONTROLS | frozenset(map(chr, range(0xE0000, 0xE0080)))


def look_alike_key(value: str) -> str:
    """What ``value`` shows in a table: composed (NFC), without the format characters that print as
    nothing (the zero-width space, the word joiner, a byte-order mark, a soft hyphen, the direction marks;
    not the zero-width joiner and non-joiner, which change how letters join, nor the Arabic number signs,
    which are drawn), each run of white space (a no-break space, a line break, CR LF) one space, and no
    space at either end.

    Two names with one key look alike wherever they are printed; they are two names all the same.

    >>> look_alike_key("cre\\u0300me\\u00a0bru\\u0302le\\u0301e\\ufeff")  # NFD, a no-break space, a BOM
    'cr\xe8me br\xfbl\xe9e'
    """
    composed = unicodedata.normalize("NFC", value)
    shown = "".join(ch for ch in composed if ch not in _INVISIBLE)
    return " ".join(shown.split())


def look_alike_reason(value: str, other: str, whose: str = "its") -> str:
    """How two different spellings with one :func:`look_alike_key` differ, for a message: in how
    ``whose`` characters are composed, or in characters that print as nothing or as a space."""
    if unicodedata.normalize("NFC", value) == unicodedata.normalize("NFC", other):
        return f"in how {whose} characters are composed (NFC/NFD; macOS writes file names decomposed)"
    return ("in characters that print as nothing or as a plain space (a zero-width space, a byte-order "
            "mark, a no-break space, a line break, spaces at either end)")


def look_alike_pairs(values: Iterable[str]) -> list[tuple[str, str]]:
    """``(first, later)`` for each spelling among ``values`` whose :func:`look_alike_key` an earlier,
    different spelling has: the names that would print alike, each later spelling once.

    >>> look_alike_pairs(["wan", "cosmos", "wan\\u200b", "wan", "wan\\u200b"])
    [('wan', 'wan\\u200b')]
    """
    first: dict[str, str] = {}
    met: set[str] = set()
    pairs = []
    for value in values:
        if value in met:
            continue
        met.add(value)
        seen = first.setdefault(look_alike_key(value), value)
        if seen != value:
            pairs.append((seen, value))
    return pairs


# Scripts written without spaces between words (Han, kana, Thai) or in syllable blocks (Hangul): first
# and last code point of each block, in order, and whether a character of it counts as a word (Han and
# kana: Chinese and Japanese put no space between words, and word processors count each character).
_CJK_THAI_BLOCKS = (
    (0x0E00, 0x0E7F, False),  # Thai
    (0x1100, 0x11FF, False),  # Hangul Jamo
    (0x2E80, 0x2FDF, True),  # CJK and Kangxi radicals
    (0x3005, 0x3007, True),  # ideographic iteration and closing marks, ideographic zero
    (0x3021, 0x3029, True),  # Hangzhou numerals
    (0x3031, 0x3035, True),  # kana repeat marks
    (0x303B, 0x303C, True),  # vertical ideographic iteration mark, masu mark
    (0x3040, 0x30FF, True),  # Hiragana, Katakana
    (0x3130, 0x318F, False),  # Hangul Compatibility Jamo
    (0x31F0, 0x31FF, True),  # Katakana Phonetic Extensions
    (0x3400, 0x4DBF, True),  # CJK Unified Ideographs Extension A
    (0x4E00, 0x9FFF, True),  # CJK Unified Ideographs
    (0xA960, 0xA97F, False),  # Hangul Jamo Extended-A
    (0xAC00, 0xD7FF, False),  # Hangul Syllables, Hangul Jamo Extended-B
    (0xF900, 0xFAFF, True),  # CJK Compatibility Ideographs
    (0xFF66, 0xFF9F, True),  # half-width Katakana
    (0xFFA0, 0xFFDC, False),  # half-width Hangul
    (0x1AFF0, 0x1B16F, True),  # Kana Extended-B, Kana Supplement, Extended-A, Small Kana Extension
    (0x20000, 0x323AF, True),  # CJK Unified Ideographs Extensions B-H, Compatibility Supplement
)
_BLOCK_STARTS = tuple(block[0] for block in _CJK_THAI_BLOCKS)


def _block(ch: str) -> tuple[int, int, bool] | None:
    k = bisect.bisect_right(_BLOCK_STARTS, ord(ch)) - 1
    return _CJK_THAI_BLOCKS[k] if k >= 0 and ord(ch) <= _CJK_THAI_BLOCKS[k][1] else None


def is_cjk_thai(ch: str) -> bool:
    """Whether ``ch`` is a Han character, kana, Hangul or Thai."""
    return _block(ch) is not None


def _wordlike(ch: str) -> bool:
    """A letter, a mark or a digit (not a space, punctuation or a symbol)."""
    return unicodedata.category(ch)[0] in "LMN"


def holds_cjk_thai(text: str) -> bool:
    """Whether ``text`` holds any Han character, kana, Hangul or Thai (:func:`is_cjk_thai`).

    >>> holds_cjk_thai("put the 红色 block in the drawer"), holds_cjk_thai("put the red block away")
    (True, False)
    """
    return any(is_cjk_thai(ch) for ch in text)


def count_words(text: str) -> int:
    """The words of ``text`` as word processors count them: its parts between white space, except that
    each Han character and each kana is a word of its own, and so is each run of other letters or
    digits between them (``把red block`` is three words). Korean, which puts spaces between words, is
    counted by them; Thai, which puts spaces only between phrases, counts a phrase as one word. A text
    without Han or kana counts as ``len(text.split())``.

    >>> count_words("put the red block in the drawer"), count_words("把红色方块放进抽屉里")
    (7, 10)
    """
    words = 0
    for part in text.split():
        units = 0
        in_run = False
        for ch in part:
            block = _block(ch)
            if block is not None and block[2]:
                units += _wordlike(ch)
                in_run = False
            elif _wordlike(ch):
                units += not in_run
                in_run = True
        words += units or 1  # a part of punctuation alone ("-") counts, as str.split() counts it
    return words
