"""eval/wordnet_expansion.py's reader of WordNet's database format (wndb(5WN)), on a tiny
hand-written database: the dropped experiment's conclusion rests on this parser."""

from pathlib import Path

from eval.wordnet_expansion import Nouns

DATA_NOUN = """\
  1 This software and database is being provided to you, the LICENSEE, by
00000001 03 n 01 activity 0 002 ~ 00000002 n 0000 ~ 00000003 n 0000 | any specific behavior
00000002 04 n 02 sport 0 athletics 0 002 @ 00000001 n 0000 ~ 00000004 n 0000 | a diversion
00000003 04 n 01 martial_art 0 002 @ 00000001 n 0000 ~i 00000005 n 0000 | a fighting art
00000004 04 n 01 swimming 0 001 @ 00000002 n 0000 | the act of swimming
00000005 04 n 01 karate 0 001 @i 00000003 n 0000 | a martial art
00000006 04 n 01 swimming 0 000 | a sense outside this tree
"""
INDEX_NOUN = """\
  1 This software and database is being provided to you, the LICENSEE, by
activity n 1 1 ~ 1 0 00000001
art n 1 0 1 0 00000008
athletics n 1 1 @ 1 0 00000002
karate n 1 1 @ 1 0 00000005
martial_art n 1 1 @ 1 0 00000003
sport n 1 2 @ ~ 1 0 00000002
swimming n 3 1 @ 3 0 00000006 00000007 00000004
"""


def _nouns(tmp_path: Path) -> Nouns:
    (tmp_path / "data.noun").write_text(DATA_NOUN)
    (tmp_path / "index.noun").write_text(INDEX_NOUN)
    (tmp_path / "noun.exc").write_text("children child\n")
    return Nouns(tmp_path)


def test_hyponyms_follow_hypernym_links_down(tmp_path: Path) -> None:
    nouns = _nouns(tmp_path)
    # Two-word lemmas are left out; karate comes in through an instance-hypernym link.
    assert nouns.hyponyms("martial_art") == {"karate"}
    # "swimming" lists 00000004 as its third sense: below activity, but not a frequent
    # sense of the word, so it does not count (SENSES = 2).
    assert nouns.hyponyms("activity") == {"sport", "athletics", "karate"}
    assert nouns.hyponyms("karate") == frozenset()
    assert nouns.hyponyms("unknown") == frozenset()


def test_bases_and_question_nouns(tmp_path: Path) -> None:
    nouns = _nouns(tmp_path)
    assert nouns.bases("Activities") == ["activity"]
    assert nouns.bases("children") == ["child"]
    assert nouns.bases("banana") == []
    # The answer-type noun after "what", two-word lemmas first; names and stop words skipped.
    assert nouns.question_nouns("What martial arts has John done?", True) == [
        "martial_art",
        "art",
    ]
    assert nouns.question_nouns("What activities does Melanie do?", True) == ["activity"]
    assert nouns.question_nouns("Did Melanie do sport or karate?", False) == ["sport", "karate"]
    assert nouns.question_nouns("Did Melanie do sport?", True) == []
