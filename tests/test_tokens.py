"""Tokenizer: words by script, languages by evidence, shared caches safe under threads."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eval.fuzz_tokens import adversarial
from yait_byheart._text import tokens as _tokens
from yait_byheart._text.lang import READERS
from yait_byheart._text.tokens import Tokenizer, term_counts, tokenize

TOKENS = Path(__file__).parent / "data" / "tokens.tsv"


def _token_cases() -> list[tuple[str, list[str]]]:
    cases = []
    for line in TOKENS.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            text, terms = line.split("\t")
            text = text.encode("ascii", "backslashreplace").decode("unicode_escape")
            cases.append((text, terms.split()))
    return cases


@pytest.mark.parametrize(("text", "terms"), _token_cases())
def test_golden_tokenization(text: str, terms: list[str]) -> None:
    assert tokenize(text) == terms


def test_counts_agree_with_tokens_in_every_script() -> None:
    for text, terms in _token_cases():
        assert term_counts(text) == {t: terms.count(t) for t in terms}


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("What did the Panthers score in the final?", "en"),
        ("Wie viele Punkte gab die Verteidigung der Panthers ab?", "de"),
        ("Combien de points la défense des Panthers a-t-elle concédés ?", "fr"),
        ("¿Cuántos puntos concedió la defensa de los Panthers?", "es"),
        ("Quanti punti ha concesso la difesa dei Panthers?", "it"),
        ("Quantos pontos a defesa dos Panthers cedeu?", "pt"),
        ("Hoeveel punten gaf de verdediging van de Panthers weg?", "nl"),
        ("Panthers savunması kaç puan verdi?", "und"),
        ("Apărarea celor de la Panthers a cedat doar câteva puncte în această finală.", "und"),
        ("Hàng phòng ngự của Panthers đã để thủng lưới bao nhiêu điểm?", "und"),
        ("See ya!", "en"),  # one Spanish stop word in a short ASCII text is chance
        ("Zoë moved to Zürich in May", "en"),  # foreign letters in names do not flip English
    ],
)
def test_latin_language_is_read_from_the_text(text: str, language: str) -> None:
    assert Tokenizer().language_of(text) == language


def test_a_conversation_may_change_language_midway() -> None:
    tok = Tokenizer()
    assert tok.tokenize("Die Häuser sind alt.") == ["haus", "alt"]
    assert tok.tokenize("The houses are old.") == ["hous", "old"]
    assert tok.tokenize("Les maisons sont vieilles.") == ["maison", "vieill"]


def test_an_ambiguous_question_keeps_the_unknown_language_reading() -> None:
    # "a", "de", "la" are French and Spanish stop words too; one word has a Romanian letter.
    question = "Câte puncte a cedat apărarea celor de la Panthers?"
    tok = Tokenizer()
    assert tok.language_of(question) != "und"
    paragraph = "Apărarea celor de la Panthers a cedat doar câteva puncte în această finală."
    assert tok.language_of(paragraph) == "und"
    # The reading the paragraph got is among the question's readings (Memory picks it).
    assert "apărar" in tok.tokenize(paragraph)
    assert any("apărar" in reading for reading in tok.readings(question))


def test_forcing_a_language_reads_its_script_in_it() -> None:
    assert Tokenizer("de").tokenize("Häuser") == ["haus"]
    assert Tokenizer().tokenize("Häuser") == ["häuser"]  # one word says too little: English
    # Forcing a Latin language leaves other scripts to their own readers.
    assert Tokenizer("de").tokenize("Häuser плиточника") == ["haus", "плиточник"]


def test_a_short_query_has_a_reading_in_each_plausible_language() -> None:
    readings = Tokenizer().readings("Wann startete Sky Digital?")
    assert readings[0] == Tokenizer("en").tokenize("Wann startete Sky Digital?")
    assert Tokenizer("de").tokenize("Wann startete Sky Digital?") in readings
    assert Tokenizer().readings("What did the Panthers score?") == [
        tokenize("What did the Panthers score?")
    ]
    # Text with no Latin-script word, or whose readings agree, has one reading.
    for text in ["我们上周在北京见面了", "Плиточника нет", "2023", "?"]:
        assert Tokenizer().readings(text) == [tokenize(text)]
    assert Tokenizer().language_of("他住在Berlin, in der Nähe des Doms") == "de"


@pytest.mark.parametrize("bad", ["german", "EN", "zh", ""])
def test_unknown_language_is_refused_with_the_accepted_codes(bad: str) -> None:
    with pytest.raises(ValueError, match=r"Tokenizer: language=.*use one of en, de, fr"):
        Tokenizer(bad)


def test_english_reads_as_it_always_did() -> None:
    # The ASCII fast path and the general path agree, and the stop list and Porter are as before.
    assert tokenize("Running late!") == tokenize("Running — late") == ["run", "late"]
    assert Tokenizer("en").tokenize("I've been running") == tokenize("I've been running")


def test_a_megabyte_of_adversarial_text_tokenizes_and_grows_linearly() -> None:
    text = adversarial(1_000_000, 1)
    terms = tokenize(text)
    assert all(terms) and len(terms) > 10_000
    # Half the text gives about half the terms (linear, not a blow-up on some piece).
    half = tokenize(text[:500_000])
    assert 0.4 < len(half) / len(terms) < 0.6


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=400), st.sampled_from([None, "de", "ru", "ar", "hi"]))
def test_any_text_tokenizes_to_nonempty_terms(text: str, language: str | None) -> None:
    tok = Tokenizer(language)
    terms = tok.tokenize(text)
    assert all(isinstance(t, str) and t for t in terms)
    assert tok.term_counts(text) == {t: terms.count(t) for t in set(terms)}
    assert sum(len(r) >= 0 for r in tok.readings(text)) >= 1


def test_a_full_cache_is_replaced_without_losing_a_read_in_progress(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # New words past a tiny bound: the cache starts over, words seen before included.
    monkeypatch.setattr(_tokens, "_CACHE_MAX", 50)
    tok = Tokenizer()
    words = [f"walk{chr(97 + i % 26)}{chr(97 + i // 26)}ing" for i in range(70)]
    assert tok.tokenize(" ".join(words[:40])) == [READERS["en"](w) for w in words[:40]]
    assert tok.tokenize(" ".join(words)) == [READERS["en"](w) for w in words]
    assert len(tok._caches["en"]) == 70


def test_each_setting_has_its_own_snapshot_id_and_signature() -> None:
    settings = [None, "en", "de", "fr", "es", "it", "pt", "nl", "ru", "ar", "hi"]
    tokenizers = [Tokenizer(code) for code in settings]
    assert len({t.snapshot_id for t in tokenizers}) == len(settings)
    assert len({t.signature for t in tokenizers}) == len(settings)
    assert all(t.snapshot_id // 100 == _tokens.TOKENIZER_VERSION for t in tokenizers)


_LETTERS = "abcdeéßiİı\u0301 кирилл العربية हिन्दी 北京大学 สวัสดี 한국어 ελληνικά"
_INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff\u00ad\u200e\u200f\u202a\u202c\ufe0f\u0640"


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=_LETTERS, max_size=60), st.data())
def test_invisible_characters_never_change_the_terms(text: str, data: st.DataObject) -> None:
    # Zero-width spaces and joiners, soft hyphens, marks of direction, variation selectors
    # and tatweel may fall anywhere in pasted text; they never split or change a word.
    spots = data.draw(st.lists(st.integers(0, len(text)), max_size=5))
    marked = text
    for spot in sorted(spots, reverse=True):
        marked = marked[:spot] + data.draw(st.sampled_from(_INVISIBLE)) + marked[spot:]
    assert tokenize(marked) == tokenize(text)
