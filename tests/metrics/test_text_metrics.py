"""sa_bleu: BLEU values worked by hand, the caption input contract and its errors."""

import json
import math
from collections import Counter

import pytest
from _agree import agree

from robojudge.metrics import MetricInputError, get_metric
from robojudge.metrics.functional import bleu
from robojudge.metrics.robophys.text import BleuConfig, bleu_tokenizer, find_caption
from robojudge.run import MetricRequest, compute_metric
from robojudge.suite import Item

INSTRUCTION = "the cat sat on the mat"


def _item(caption=None, item_id="a", instruction=INSTRUCTION):
    meta = {} if caption is None else {"caption": caption}
    return Item(item_id=item_id, video="v.mp4", instruction=instruction, meta=meta)


def test_bleu_by_hand():
    assert bleu(INSTRUCTION, INSTRUCTION) == pytest.approx(1.0)
    # Same length (no brevity penalty). Clipped n-gram precisions of "the cat sat on a mat":
    # 1-grams 5/6 (all but "a"), 2-grams 3/5 (the cat, cat sat, sat on), 3-grams 2/4, 4-grams 1/3.
    # BLEU = (5/6 * 3/5 * 1/2 * 1/3) ** (1/4) = (1/12) ** 0.25 = 0.537285.
    assert bleu("the cat sat on a mat", INSTRUCTION) == pytest.approx((1 / 12) ** 0.25)
    # "the cat": effective order 2 (no 3- or 4-grams), precisions 2/2 and 1/1, so only the brevity
    # penalty exp(1 - 6/2) = exp(-2) = 0.135335 remains.
    assert bleu("the cat", INSTRUCTION) == pytest.approx(0.1353352832)
    # No shared word: every precision is 0.
    assert bleu("robot arm idle", INSTRUCTION) == 0.0


def test_lowercase_option():
    shouted = "THE CAT SAT ON THE MAT"
    assert bleu(shouted, INSTRUCTION) < 0.1
    assert bleu(shouted, INSTRUCTION, lowercase=True) == pytest.approx(1.0)
    lowered = get_metric("sa_bleu").compute(_item(shouted), BleuConfig(lowercase=True))
    assert lowered.value == pytest.approx(1.0)


def _papineni_bleu(hypothesis: str, reference: str) -> float:
    """BLEU written out (Papineni et al. 2002) for lowercase words without punctuation, where every
    order up to the hypothesis length has a match: brevity penalty times the geometric mean of the
    clipped n-gram precisions, n up to min(4, hypothesis length) (sacrebleu's effective order)."""
    hyp, ref = hypothesis.split(), reference.split()

    def grams(words, n):
        return Counter(tuple(words[i:i + n]) for i in range(len(words) - n + 1))

    order = min(4, len(hyp))
    logs = []
    for n in range(1, order + 1):
        h, r = grams(hyp, n), grams(ref, n)
        clipped = sum(min(c, r[g]) for g, c in h.items())
        assert clipped > 0, "the formula here has no smoothing: pick sentences with a match at every order"
        logs.append(math.log(clipped / sum(h.values())))
    penalty = 1.0 if len(hyp) > len(ref) else math.exp(1 - len(ref) / len(hyp))
    return penalty * math.exp(sum(logs) / order)


@pytest.mark.parametrize("caption", [
    "the robot picks up the red cube",  # shorter than the instruction: brevity penalty
    "the robot arm picks up the red cube and then puts it down on the table",  # longer, no penalty
    "picks up",  # two words: effective order 2
])
def test_metric_functional_and_papineni_formula_agree(caption):
    instruction = "the robot picks up the red cube and puts it on the table"
    score = agree("sa_bleu", _item(caption, instruction=instruction),
                  functional=lambda: bleu(caption, instruction),
                  reference=lambda: _papineni_bleu(caption, instruction))
    assert 0.0 < score.value < 1.0


def test_metric_reads_meta_caption():
    spec = get_metric("sa_bleu")
    score = spec.compute(_item("the cat sat on a mat"))
    assert score.value == pytest.approx((1 / 12) ** 0.25)
    assert score.details["caption_words"] == 6
    assert spec.higher_is_better and spec.native_range == (0.0, 1.0)


def test_captions_file_json_and_jsonl(tmp_path):
    as_json = tmp_path / "caps.json"
    as_json.write_text(json.dumps({"a": "the cat", "b": "the cat sat on the mat"}))
    as_jsonl = tmp_path / "caps.jsonl"
    as_jsonl.write_text('{"item_id": "a", "caption": "the cat"}\n\n{"item_id": "b", "caption": "x"}\n')
    for path in (as_json, as_jsonl):
        assert find_caption(_item(), str(path)) == "the cat"
        value = get_metric("sa_bleu").compute(_item(), BleuConfig(captions=str(path))).value
        assert value == pytest.approx(0.1353352832)
    # meta.caption wins over the file.
    assert find_caption(_item("the mat"), str(as_json)) == "the mat"
    # JSON Lines with a single row is also one valid JSON object: still read as a row
    one_row = tmp_path / "one.jsonl"
    one_row.write_text('{"item_id": "a", "caption": "the cat"}\n')
    assert find_caption(_item(), str(one_row)) == "the cat"


def test_missing_caption_is_a_clear_error(tmp_path):
    with pytest.raises(MetricInputError, match=r"item 'a' has no caption in meta.caption.*sa_bleu.captions"):
        get_metric("sa_bleu").compute(_item())
    caps = tmp_path / "caps.json"
    caps.write_text(json.dumps({"other": "text"}))
    with pytest.raises(MetricInputError, match=r"nor in captions file .*caps.json"):
        find_caption(_item(), str(caps))
    with pytest.raises(MetricInputError, match="does not exist"):
        find_caption(_item(), str(tmp_path / "missing.json"))
    with pytest.raises(MetricInputError, match="must be a string"):
        find_caption(_item(caption=["a", "list"]), None)
    with pytest.raises(MetricInputError, match="no caption"):
        find_caption(_item(caption="   "), None)


def test_bad_captions_file_names_the_line(tmp_path):
    bad = tmp_path / "caps.jsonl"
    bad.write_text('{"item_id": "a", "caption": "x"}\n{"item": "b"}\n')
    with pytest.raises(MetricInputError, match=r"caps.jsonl, line 2"):
        find_caption(_item(item_id="b"), str(bad))


def test_runner_records_the_error_per_item():
    req = MetricRequest.build("sa_bleu")
    row = compute_metric(_item(), req)
    assert row.status == "error" and "has no caption" in (row.error or "")
    row = compute_metric(_item(instruction=None, caption="x"), req)
    assert row.status == "error" and "instruction" in (row.error or "")
    ok = compute_metric(_item("the cat sat on the mat"), req)
    assert ok.status == "ok" and ok.value == pytest.approx(1.0)


def test_all_runs_sa_bleu_only_on_items_with_a_caption(tmp_path):
    """``--metrics all`` on videos with instructions but no captions stored an error row per item for
    sa_bleu; a caption is an input like the instruction, from meta.caption or the captions file."""
    import dataclasses

    from robojudge.metrics import missing_texts
    from robojudge.metrics._select import inapplicable_summary
    from robojudge.run import build_requests, score_items
    from robojudge.store import ResultStore

    (req,) = [r for r in build_requests(["all"]) if r.id == "sa_bleu"]
    assert req.applicable_only
    bare, captioned = _item(item_id="bare"), _item(INSTRUCTION, item_id="captioned")
    listed = _item(item_id="listed")
    assert missing_texts(req.config, bare) == ["meta.caption"] and missing_texts(req.config, captioned) == []
    with ResultStore(tmp_path / "r.sqlite") as store:
        summary = score_items([bare, captioned], [req], store)
        assert {r.item_id: r.value for r in store.rows()} == {"captioned": pytest.approx(1.0)}
    assert summary.not_applicable == {"sa_bleu": 1} and summary.failed == 0
    (line,) = inapplicable_summary(summary.not_applicable)
    assert "sa_bleu (1 item; needs instruction, meta.caption)" in line
    # A captions file that names the item gives its caption; one that does not leaves it out.
    (tmp_path / "caps.json").write_text(json.dumps({"listed": "the cat sat"}))
    with_file = dataclasses.replace(req, config=BleuConfig(captions=str(tmp_path / "caps.json")))
    assert missing_texts(with_file.config, listed) == []
    assert missing_texts(with_file.config, bare) == [f"meta.caption or an entry in {tmp_path / 'caps.json'}"]
    # Named explicitly, the metric still runs on every item and says how to give a caption.
    named = dataclasses.replace(req, applicable_only=False)
    with ResultStore(tmp_path / "n.sqlite") as store:
        score_items([bare], [named], store)
        (row,) = store.rows()
    assert row.status == "error" and "meta.caption" in (row.error or "")


# One character of ten differs (到 for 进): character n-gram precisions 9/10, 7/9, 5/8, 3/7 (the 1, 2,
# 3 and 4 n-grams that hold it are lost), same length: BLEU = (9/10 * 7/9 * 5/8 * 3/7) ** (1/4),
# which is 0.1875 ** 0.25.
ZH_CAPTION, ZH_INSTRUCTION = "把红色方块放到抽屉里", "把红色方块放进抽屉里"


def test_chinese_caption_is_compared_by_characters():
    # Before (version 2): 13a made each sentence one token, so a caption one character off scored 0.0,
    # and caption_words was 1.
    score = agree("sa_bleu", _item(ZH_CAPTION, instruction=ZH_INSTRUCTION),
                  functional=lambda: bleu(ZH_CAPTION, ZH_INSTRUCTION, tokenize="char"),
                  reference=lambda: 0.1875 ** 0.25)
    assert score.value == pytest.approx(0.658037, abs=1e-6)
    assert score.details == {"caption_words": 10, "tokenize": "char"}
    assert bleu(ZH_CAPTION, ZH_INSTRUCTION) == 0.0  # what 13a gives: one token each, and they differ


@pytest.mark.parametrize(("caption", "instruction", "words"), [
    ("赤いブロックを引き出しに入れる", "赤いブロックを引き出しに入れて", 15),  # Japanese: kanji and kana
    ("빨간 블록을 서랍에 넣어", "빨간 블록을 서랍 안에 넣어", 4),  # Korean: words between spaces
    ("วางบล็อกสีแดงลงในลิ้นชัก", "วางบล็อกสีแดงในลิ้นชัก", 1),  # Thai: no spaces, one phrase
])
def test_japanese_korean_and_thai_are_compared_by_characters(caption, instruction, words):
    score = get_metric("sa_bleu").compute(_item(caption, instruction=instruction))
    assert score.details == {"caption_words": words, "tokenize": "char"}
    assert score.value == pytest.approx(bleu(caption, instruction, tokenize="char"))
    assert 0.5 < score.value < 1.0  # near misses, not the 0 (or 0.28 for Korean) of whole words


def test_english_text_and_a_chosen_tokenizer_are_left_as_they_are():
    # English text is compared by 13a words, as in version 2; a tokenizer named in the config is used as
    # given, on any text.
    english = get_metric("sa_bleu").compute(_item("the robot picks up the red block",
                                                  instruction="pick up the red block"))
    assert english.details["tokenize"] == "13a"
    assert english.value == pytest.approx(bleu("the robot picks up the red block", "pick up the red block"))
    zh_item = _item(ZH_CAPTION, instruction=ZH_INSTRUCTION)
    zh = get_metric("sa_bleu").compute(zh_item, BleuConfig(tokenize="zh"))
    assert zh.details["tokenize"] == "zh"
    assert zh.value == pytest.approx(bleu(ZH_CAPTION, ZH_INSTRUCTION, tokenize="zh"))
    # A Chinese caption of an English instruction is compared by characters too: either text decides.
    assert get_metric("sa_bleu").compute(_item(ZH_CAPTION)).details["tokenize"] == "char"


CAPTION = "the robot picks up the red block"


@pytest.mark.parametrize("instruction", [
    "pick up the 红色方块", "pick up the 红色方块 now", "please pick up the 红色方块",
    "put the 红色方块 in the 抽屉", "put the 红 block in the drawer",
])
def test_one_cjk_word_in_an_english_suite_puts_every_item_on_one_scale(instruction):
    # Before: the tokenizer weighed CJK characters against English words, so "pick up the 红色方块" was
    # compared by characters and "pick up the 红色方块 now" by 13a words: one suite averaged two scales,
    # decided by how long each sentence was. Now any Han character, kana, Hangul or Thai in either text
    # means characters, whatever the length.
    auto = get_metric("sa_bleu").compute(_item(CAPTION, instruction=instruction))
    assert auto.details["tokenize"] == "char"
    assert auto.value == pytest.approx(bleu(CAPTION, instruction, tokenize="char"))
    # An explicit 13a keeps word BLEU (version 2's, the paper's) on such a suite.
    words = get_metric("sa_bleu").compute(_item(CAPTION, instruction=instruction), BleuConfig(tokenize="13a"))
    assert words.details["tokenize"] == "13a"
    assert words.value == pytest.approx(bleu(CAPTION, instruction))


def test_the_default_tokenizer_is_auto():
    assert BleuConfig().tokenize == "auto"
    assert bleu_tokenizer("the red block", "pick up the red block", "auto") == "13a"
    assert bleu_tokenizer("the red block", "pick up the 红 block", "auto") == "char"
    assert bleu_tokenizer("把红色方块放进抽屉里", "抽屉", "13a") == "13a"


def test_composed_and_decomposed_spellings_are_one_text():
    # Before: an instruction typed on macOS (e and a combining accent) against the same caption typed
    # elsewhere (è) scored 0.31: sacrebleu compares code points.
    nfc = "put the cr\u00e8me br\u00fbl\u00e9e on the plate"
    nfd = "put the cre\u0300me bru\u0302le\u0301e on the plate"
    assert get_metric("sa_bleu").compute(_item(nfc, instruction=nfd)).value == 1.0
    assert get_metric("sa_bleu").compute(_item(nfd, instruction=nfc)).value == 1.0
    assert bleu(nfd, nfc) == 1.0


def test_captions_file_with_unicode_line_separators_reads_back(tmp_path):
    # A caption pasted from a PDF holds U+2028; `robojudge judge texts` writes it as it is (UTF-8 JSON), and
    # the reader's str.splitlines() cut that line in two: every item failed with "line 1: ... Unterminated
    # string". Lines are numbered as an editor numbers them (at "\n" only).
    from robojudge.run import write_judge_texts

    texts = {"a": "the cat sat\u2028on the mat", "b": "the cat\u0085sat", "c": "a mat\u2029x", "d": "the cat"}
    path = write_judge_texts(texts, tmp_path / "captions.jsonl")
    assert path.read_bytes().count(b"\n") == 4
    for item_id, caption in texts.items():
        assert find_caption(_item(item_id=item_id), str(path)) == caption
    assert get_metric("sa_bleu").compute(_item(), BleuConfig(captions=str(path))).value == pytest.approx(1.0)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(path.read_text(encoding="utf-8") + '{"item": "e"}\n', encoding="utf-8")
    with pytest.raises(MetricInputError, match=r"bad.jsonl, line 5: expected a JSON object"):
        find_caption(_item(item_id="e"), str(bad))


def test_the_left_out_line_names_what_the_items_lack_not_every_input(tmp_path):
    """``score -m all`` said ``sa_bleu (4 items; needs instruction, meta.caption)`` of items that had their
    instruction: it listed what the metric declares, not what the items lack."""
    from robojudge.metrics._select import inapplicable_summary
    from robojudge.run import build_requests, score_items
    from robojudge.store import ResultStore

    (req,) = [r for r in build_requests(["all"]) if r.id == "sa_bleu"]
    items = [_item(item_id="a"), _item(item_id="b"), _item(item_id="c", instruction=None),
             _item(INSTRUCTION, item_id="captioned")]
    with ResultStore(tmp_path / "r.sqlite") as store:
        summary = score_items(items, [req], store)
    assert summary.not_applicable == {"sa_bleu": 3}
    assert summary.not_applicable_lacking == {"sa_bleu": {"meta.caption": 3, "instruction": 1}}
    (line,) = inapplicable_summary(summary.not_applicable, summary.not_applicable_lacking)
    assert line.endswith(": sa_bleu (3 items lack instruction (1), meta.caption or a captions file "
                         "(--set sa_bleu.captions=FILE))"), line
    (one,) = inapplicable_summary({"sa_bleu": 1}, {"sa_bleu": {"meta.caption": 1}})
    assert one.endswith("sa_bleu (1 item lacks meta.caption or a captions file "
                        "(--set sa_bleu.captions=FILE))")
    # A captions file given that lacks some items: the line names that file, not "give a captions file"
    # (review rev32 F4).
    captions = tmp_path / "caps.json"
    captions.write_text(json.dumps({"a": INSTRUCTION}), encoding="utf-8")
    configs = {"sa_bleu": {"captions": str(captions)}}
    (given,) = [r for r in build_requests(["all"], configs) if r.id == "sa_bleu"]
    with ResultStore(tmp_path / "r2.sqlite") as store:
        summary = score_items(items[:2], [given], store)
    assert summary.not_applicable_lacking == {"sa_bleu": {f"meta.caption or an entry in {captions}": 1}}
    (line,) = inapplicable_summary(summary.not_applicable, summary.not_applicable_lacking)
    assert line.endswith(f": sa_bleu (1 item lacks meta.caption or an entry in {captions})"), line
