"""robojudge._chars: which text holds Chinese, Japanese, Korean or Thai, and how its words count."""

import pytest

from robojudge._chars import count_words, holds_cjk_thai, is_cjk_thai


@pytest.mark.parametrize(("ch", "expected"), [
    ("把", True), ("々", True), ("い", True), ("ブ", True), ("ｶ", True), ("블", True), ("ㄱ", True),
    ("ว", True), ("\U00020000", True),  # CJK Extension B
    ("a", False), ("é", False), ("Ж", False), ("ع", False), ("。", False), ("１", False), ("🤖", False),
])
def test_cjk_thai_characters(ch, expected):
    assert is_cjk_thai(ch) is expected


@pytest.mark.parametrize(("text", "expected"), [
    ("把红色方块放进抽屉里", True),
    ("赤いブロックを引き出しに入れて", True),
    ("빨간 블록을 서랍에 넣어", True),
    ("วางบล็อกสีแดงในลิ้นชัก", True),
    ("put the 红色 block in the drawer", True),  # one Han character is enough, however long the rest
    ("please pick up the 红色方块 now", True),
    ("put the red block in the drawer", False),
    ("Ставь кубик. ضع المكعب", False),  # other scripts with spaces between words
    ("", False),
])
def test_holds_cjk_thai(text, expected):
    assert holds_cjk_thai(text) is expected


@pytest.mark.parametrize(("text", "words"), [
    ("put the red block in the drawer", 7),
    ("don't - stop", 3),  # as str.split() counts: a dash alone is a word
    ("把红色方块放进抽屉里", 10),  # a Han character is a word
    ("赤いブロックを引き出しに入れて。", 15),  # so is a kana; the full stop is not
    ("把red block放进抽屉", 7),  # 把, red, block, 放, 进, 抽, 屉
    ("빨간 블록을 서랍에 넣어", 4),  # Korean: by its spaces
    ("วางบล็อกสีแดง ในลิ้นชัก", 2),  # Thai: a phrase is one word
])
def test_count_words(text, words):
    assert count_words(text) == words


def test_count_words_is_str_split_without_han_or_kana():
    text = "Open the drawer,\tthen put\u00a0the red — block inside.\n"
    assert count_words(text) == len(text.split()) == 10
