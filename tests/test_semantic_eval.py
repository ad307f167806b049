"""The eval side of semantic retrieval: the registered retriever name, and the live loop's
count of embedded texts (each stretch and each distinct query once)."""

from __future__ import annotations

import pytest

from eval.locomo.systems import load_retriever
from eval.semantic import TrigramEmbed, live
from yait_byheart.semantic import Hybrid


def test_hybrid_minilm_is_a_registered_retriever_name() -> None:
    factory, short = load_retriever("hybrid-minilm")
    assert short == "hybrid-minilm"
    assert issubclass(factory, Hybrid)  # type: ignore[arg-type]


def test_the_live_loop_embeds_each_stretch_and_query_once() -> None:
    embed = TrigramEmbed()
    base, hybrid = live(400, 10, [None, Hybrid(embed)], 4_000)
    assert hybrid["stretches"] == base["stretches"] > 0
    assert embed.texts == hybrid["stretches"] + hybrid["queries"]


def test_a_registered_retriever_takes_a_weight_after_an_at_sign() -> None:
    factory, short = load_retriever("hybrid-minilm@1")
    assert short == "hybrid-minilm@1"
    assert factory.keywords == {"weight": 1.0}  # type: ignore[attr-defined]


def test_a_weight_that_is_no_number_names_the_option() -> None:
    for spec in ("hybrid-minilm@x", "hybrid-minilm@-1", "hybrid-minilm@inf"):
        with pytest.raises(ValueError, match=r"--retriever .*: the weight after @ must be"):
            load_retriever(spec)
