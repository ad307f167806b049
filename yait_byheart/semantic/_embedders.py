"""Ready-made `embed` callables for `Hybrid`, each importing its package only when built.

Each has a `name` (the model), which `Hybrid` uses in its cache keys.
"""

from __future__ import annotations

import json
import math
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from typing import Any

Vector = list[float]


class Embedder:
    """A named `embed(texts) -> vectors` callable.

    >>> e = Embedder("upper", lambda texts: [[float(len(t))] for t in texts]); e.name, e(["ab"])
    ('upper', [[2.0]])
    """

    def __init__(self, name: str, run: Callable[[list[str]], Sequence[Sequence[float]]]) -> None:
        self.name = name
        self._run = run

    def __call__(self, texts: list[str]) -> list[Vector]:
        return [[float(x) for x in v] for v in self._run(list(texts))]

    def __repr__(self) -> str:
        return f"Embedder({self.name!r})"


def _missing(helper: str, package: str, pip: str) -> ImportError:
    return ImportError(f"semantic.{helper} needs {package}: pip install {pip}")


def sentence_transformers(model: str, *, name: str | None = None, batch_size: int = 64) -> Embedder:
    """Embed with a sentence-transformers model, given by name or local path.

    Args:
        model: A model name (fetched by sentence-transformers) or a directory holding one.
        name: The name in cache keys (default `model`): give a stable one for a path.
        batch_size: Texts per forward pass (default 64).
    """
    try:
        from sentence_transformers import SentenceTransformer  # type: ignore[import-not-found,unused-ignore]
    except ImportError as err:
        raise _missing("sentence_transformers", "sentence-transformers",
                       "sentence-transformers") from err  # fmt: skip
    st = SentenceTransformer(model)

    def run(texts: list[str]) -> Any:
        return st.encode(texts, batch_size=batch_size, normalize_embeddings=True).tolist()

    return Embedder(name or model, run)


def fastembed(model: str, *, name: str | None = None) -> Embedder:
    """Embed with a fastembed model (ONNX, no torch), e.g. "BAAI/bge-small-en-v1.5".

    Args:
        model: The fastembed model name (fastembed fetches it on first use).
        name: The name in cache keys (default `model`).
    """
    try:
        from fastembed import TextEmbedding  # type: ignore[import-not-found,unused-ignore]
    except ImportError as err:
        raise _missing("fastembed", "fastembed", "fastembed") from err
    te = TextEmbedding(model_name=model)
    return Embedder(name or model, lambda texts: [list(v) for v in te.embed(texts)])


def openai_compatible(
    url: str, model: str, api_key: str | None = None, *, timeout: float = 60.0,
    name: str | None = None,
) -> Embedder:  # fmt: skip
    """Embed through an OpenAI-compatible `POST {url}/embeddings` endpoint (stdlib HTTP).

    Args:
        url: The API base, e.g. "https://api.openai.com/v1" or "http://localhost:11434/v1".
        model: The model the endpoint serves, e.g. "text-embedding-3-small".
        api_key: Sent as a Bearer token when given.
        timeout: Seconds to wait for each request (default 60).
        name: The name in cache keys (default `model`).
    """
    if not (timeout > 0 and math.isfinite(timeout)):
        raise ValueError(f"openai_compatible: timeout={timeout!r}; use a number of seconds > 0")
    endpoint = url.rstrip("/") + "/embeddings"
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"

    def run(texts: list[str]) -> list[Vector]:
        body = json.dumps({"model": model, "input": texts}).encode()
        request = urllib.request.Request(endpoint, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                reply = json.load(response)
        except urllib.error.HTTPError as err:
            detail = err.read(500).decode("utf-8", "replace")
            raise RuntimeError(
                f"openai_compatible: {endpoint} answered {err.code}: {detail}"
            ) from None
        return _vectors(reply, len(texts), endpoint)

    return Embedder(name or model, run)


def _vectors(reply: Any, count: int, endpoint: str) -> list[Vector]:
    """The embeddings of an OpenAI-format reply, in input order (by each item's `index`)."""
    try:
        items = sorted(reply["data"], key=lambda item: item["index"])
        vectors = [item["embedding"] for item in items]
    except (KeyError, TypeError) as err:
        raise ValueError(
            f"openai_compatible: {endpoint} did not answer in the OpenAI embeddings format "
            f'({{"data": [{{"index", "embedding"}}]}}): missing {err}'
        ) from None
    if len(vectors) != count:
        raise ValueError(f"openai_compatible: {endpoint} sent {len(vectors)} vectors for {count}")
    return vectors
