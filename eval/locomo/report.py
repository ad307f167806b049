"""Markdown tables from the locomo.json result."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from eval.locomo.data import CATEGORY_NAMES


def _num(value: Any, digits: int = 3) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.{digits}f}"


def _pct(value: Any) -> str:
    return "n/a" if value is None else f"{100 * value:.1f} %"


def _table(head: Sequence[str], body: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in body]
    return lines


def _pivot(rows: Sequence[dict[str, Any]], metric: str, budgets: Sequence[int]) -> list[str]:
    """(system, regime) lines, one column per budget, category "all"."""
    keys = list(dict.fromkeys((r["system"], r["regime"]) for r in rows))
    cell = {(r["system"], r["regime"], r["budget"]): r for r in rows if r["category"] == "all"}
    body = []
    for system, regime in keys:
        values = [cell.get((system, regime, b), {}).get(metric) for b in budgets]
        digits = 0 if metric == "mean_chars" else 3
        body.append([system, regime, *(_num(v, digits) for v in values)])
    return _table(["system", "regime", *(f"{b:,}" for b in budgets)], body)


def _per_category(rows: Sequence[dict[str, Any]], metric: str) -> list[str]:
    cats: list[int | str] = [1, 2, 3, 4, "all", 5]
    names = [f"{CATEGORY_NAMES[c]} ({c})" if isinstance(c, int) else "all (1-4)" for c in cats]
    keys = list(dict.fromkeys((r["system"], r["regime"], r["budget"]) for r in rows))
    cell = {(r["system"], r["regime"], r["budget"], r["category"]): r for r in rows}
    body = []
    for system, regime, budget in keys:
        values = [cell.get((system, regime, budget, c), {}).get(metric) for c in cats]
        body.append([system, regime, f"{budget:,}", *(_num(v) for v in values)])
    return _table(["system", "regime", "budget", *names], body)


def live_table(live: Sequence[dict[str, Any]]) -> list[str]:
    body = [
        [
            r["regime"],
            f"{r['budget']:,}",
            r["calls_counted"],
            _num(r["calls"]),
            _pct(r["hit_rate"]),
            _num(r["billed_ratio"]),
            _num(r["billed_per_call"], 0),
            _num(r["longest_prefix_per_call"], 0),
            _num(r["mean_chars"], 0),
            _num(r["max_chars"]),
            _num(r["rebuilds"]),
            _num(r["misses_off_rebuild"]),
        ]
        for r in live
    ]
    head = [
        "regime",
        "budget",
        "calls counted",
        "calls",
        "hit rate",
        "billed / uncached",
        "billed chars per call",
        "longest-prefix chars per call",
        "mean chars",
        "max chars",
        "rebuilds",
        "misses not on a rebuild",
    ]
    return _table(head, body)


def external_table(external: Sequence[dict[str, Any]]) -> list[str]:
    body = [
        [
            f"{r['budget']:,}",
            _pct(r["junk_rejected"]),
            f"{r['junk_offered'] - r['junk_admitted']:,} / {r['junk_offered']:,}",
            _pct(r["needed_admitted_share"]),
            f"{r['needed_admitted']:,} / {r['needed_offered']:,}",
            _pct(r["needed_any_admitted"]),
            _num(r["needed_questions"]),
        ]
        for r in external
    ]
    head = [
        "budget",
        "junk rejected",
        "junk turns rejected / offered",
        "needed admitted",
        "needed turns admitted / offered",
        "questions with any needed turn admitted",
        "questions",
    ]
    return _table(head, body)


def answers_table(answers: Sequence[dict[str, Any]]) -> list[str]:
    body = [
        [
            r["system"],
            r["regime"],
            f"{r['budget']:,}",
            str(r["category"]),
            _num(r["questions"]),
            _num(r["judge_accuracy"]),
            _num(r["f1"]),
            _num(r["bleu1"]),
            _num(r["unparsed_verdicts"]),
        ]
        for r in answers
    ]
    head = [
        "system",
        "regime",
        "budget",
        "category",
        "questions",
        "judge accuracy",
        "F1",
        "BLEU-1",
        "unparsed verdicts",
    ]
    return _table(head, body)


def markdown(result: dict[str, Any]) -> str:
    meta = result.get("meta", {})
    rows = result["rows"]
    budgets = sorted({int(r["budget"]) for r in rows})
    out = [
        "# LoCoMo",
        "",
        f"Command: `{meta.get('command', '')}`  ",
        f"Commit: `{meta.get('commit', '')}`  ",
        f"Data: {meta.get('conversations', '?')} conversations, "
        f"{meta.get('questions', '?')} questions ({meta.get('answerable', '?')} in categories 1-4)",
        "",
        "## Evidence recall, categories 1-4",
        "",
        *_pivot(rows, "evidence_recall", budgets),
        "",
        "## Answer-token recall, categories 1-4",
        "",
        *_pivot(rows, "answer_token_recall", budgets),
        "",
        "## Mean characters sent per question",
        "",
        *_pivot(rows, "mean_chars", budgets),
        "",
        "## Evidence recall per category",
        "",
        *_per_category(rows, "evidence_recall"),
        "",
        "## Answer-token recall per category",
        "",
        *_per_category(rows, "answer_token_recall"),
        "",
    ]
    if result.get("live"):
        out += ["## Live replay", "", *live_table(result["live"]), ""]
    if result.get("external"):
        out += ["## Outside knowledge", "", *external_table(result["external"]), ""]
    if result.get("answers"):
        out += ["## Answers and judge", "", *answers_table(result["answers"]), ""]
    return "\n".join(out)
