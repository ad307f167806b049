"""Answer each question from the composed messages, judge it CORRECT/WRONG, score F1 and BLEU-1.

Every answer and verdict is appended, one JSON line per question, to ``<results>/<run>.jsonl``
as soon as it exists; a restarted run reads that file and skips what is already there, so a
crash costs at most the question in flight. Composition is offline and cheap, so it is always
redone in order (the sticky regime depends on the order questions are asked in).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from eval.locomo.data import ANSWERABLE, Conversation, Question
from eval.locomo.llm import ChatClient
from eval.locomo.metrics import bleu1, mean, token_f1
from eval.locomo.offline import Spec, run_conversation, score
from eval.locomo.systems import Composed

ANSWER_SYSTEM = (
    "You answer questions about a long conversation between {a} and {b}, using only the "
    "conversation excerpts you are given. A date in square brackets right after a phrase is the "
    "calendar date that phrase refers to; a bracketed date at the start of a line is when that "
    "part of the conversation took place. Reply with a short phrase (a few words), no "
    "explanation. If the excerpts do not settle the question, give your best guess from them."
)

JUDGE_SYSTEM = (
    "You check answers to questions about a long chat between two people. You get the question, "
    "a reference answer and a candidate answer, and decide whether the candidate is CORRECT or "
    "WRONG.\n"
    "Be lenient about form and strict about substance:\n"
    "- The candidate may be longer, phrased differently, or add detail. It is CORRECT when its "
    "core agrees with what the reference says about the thing asked.\n"
    "- It is WRONG when it names a different thing, person, place, number or event, contradicts "
    "the reference, says it does not know, or misses the point of the reference.\n"
    "- Dates and times: it is CORRECT when it points to the same day, month, year or period as "
    "the reference, in whatever format (for example '7 May 2023', 'May 7th' and 'the day before "
    "8 May 2023' can be the same date); a different date or period is WRONG.\n"
    'Reply with one JSON object and nothing else: {"reason": "<one short sentence>", '
    '"label": "CORRECT" or "WRONG"}'
)


def transcript(composed: Composed) -> str:
    """The composed context as text: every message but the last, which is the question itself."""
    return "\n".join(composed.texts[:-1])


def answer_messages(conv: Conversation, question: str, composed: Composed) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": ANSWER_SYSTEM.format(a=conv.speaker_a, b=conv.speaker_b)},
        {
            "role": "user",
            "content": f"Conversation excerpts:\n\n{transcript(composed)}\n\n"
            f"Question: {question}\nShort answer:",
        },
    ]


def judge_messages(question: str, gold: str, candidate: str) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": JUDGE_SYSTEM},
        {
            "role": "user",
            "content": f"Question: {question}\nReference answer: {gold}\n"
            f"Candidate answer: {candidate}",
        },
    ]


_LABEL = re.compile(r"\b(CORRECT|WRONG)\b")


def parse_verdict(text: str) -> str | None:
    """'CORRECT', 'WRONG', or None when the judge's reply names neither.

    >>> parse_verdict('{"reason": "same date", "label": "CORRECT"}')
    'CORRECT'
    >>> parse_verdict("Label: wrong") is None
    True
    """
    match = re.search(r"\{.*\}", text, re.DOTALL)
    if match:
        try:
            label = json.loads(match.group(0)).get("label")
        except (json.JSONDecodeError, AttributeError):
            label = None
        if label in ("CORRECT", "WRONG"):
            return str(label)
    found = _LABEL.findall(text)
    return str(found[-1]) if found else None


def record_key(sample_id: str, q: Question, spec: Spec) -> str:
    return f"{sample_id}#{q.number}|{spec.system}|{spec.regime}|{spec.budget}"


def load_done(path: Path) -> dict[str, dict[str, Any]]:
    """Records already in the results file; a torn last line (crash mid-write) is ignored."""
    done: dict[str, dict[str, Any]] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(rec, dict) and "key" in rec:
                done[str(rec["key"])] = rec
    return done


def run(
    specs: Sequence[Spec],
    conversations: Sequence[Conversation],
    client: ChatClient,
    *,
    answer_model: str,
    judge_model: str,
    results: Path,
    progress: bool = True,
) -> list[dict[str, Any]]:
    """Answer and judge categories 1-4; returns this run's records (old and new)."""
    results.parent.mkdir(parents=True, exist_ok=True)
    done = load_done(results)
    torn = results.exists() and not results.read_bytes().endswith(b"\n") and results.stat().st_size
    mine: list[dict[str, Any]] = []
    new = 0
    with results.open("a", encoding="utf-8") as out:
        if torn:  # a crash mid-line: start the next record on a line of its own
            out.write("\n")
        for spec in specs:
            for conv in conversations:
                for q, composed in run_conversation(spec, conv):
                    if q.category not in ANSWERABLE:
                        continue
                    key = record_key(conv.sample_id, q, spec)
                    if key in done:
                        mine.append(done[key])
                        continue
                    rec = _answer_one(client, answer_model, judge_model, conv, q, composed, spec)
                    rec["key"] = key
                    out.write(json.dumps(rec, ensure_ascii=False) + "\n")
                    out.flush()
                    mine.append(rec)
                    new += 1
                    if progress and new % 25 == 0:
                        print(
                            f"  answered {new} new ({len(mine)} in run)",
                            file=sys.stderr,
                            flush=True,
                        )
    if progress:
        print(f"  answers: {new} new, {len(mine) - new} resumed from {results}", file=sys.stderr)
    return mine


def _answer_one(
    client: ChatClient,
    answer_model: str,
    judge_model: str,
    conv: Conversation,
    q: Question,
    composed: Composed,
    spec: Spec,
) -> dict[str, Any]:
    reply = client.complete(answer_model, answer_messages(conv, q.question, composed))
    answer = reply.text.strip()
    judged = client.complete(judge_model, judge_messages(q.question, q.answer, answer))
    verdict = parse_verdict(judged.text)
    ev, ans = score(conv, q, composed)
    return {
        "sample_id": conv.sample_id,
        "question_number": q.number,
        "system": spec.system,
        "regime": spec.regime,
        "budget": spec.budget,
        "category": q.category,
        "question": q.question,
        "gold": q.answer,
        "answer": answer,
        "verdict": verdict,  # None: the judge named neither label; counted as WRONG
        "judge_reply": judged.text,
        "f1": token_f1(answer, q.answer),
        "bleu1": bleu1(answer, q.answer),
        "evidence_recall": ev,
        "answer_token_recall": ans,
        "chars": composed.chars,
        "answer_model": answer_model,
        "judge_model": judge_model,
        "answer_usage": reply.usage,
        "judge_usage": judged.usage,
    }


def summarise(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (system, regime, budget, category), "all" = categories 1-4."""
    groups: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
    for r in records:
        groups.setdefault((r["system"], r["regime"], int(r["budget"])), []).append(r)
    out: list[dict[str, Any]] = []
    for (system, regime, budget), group in groups.items():
        for cat in (*ANSWERABLE, "all"):
            members = [r for r in group if cat == "all" or r["category"] == cat]
            if not members:
                continue
            out.append(
                {
                    "system": system,
                    "regime": regime,
                    "budget": budget,
                    "category": cat,
                    "questions": len(members),
                    "judge_accuracy": mean([float(r["verdict"] == "CORRECT") for r in members]),
                    "unparsed_verdicts": sum(r["verdict"] is None for r in members),
                    "f1": mean([float(r["f1"]) for r in members]),
                    "bleu1": mean([float(r["bleu1"]) for r in members]),
                }
            )
    return out
