"""semantic.openai_compatible against a local OpenAI-format embeddings server, and the lazy
helpers' ImportErrors."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest

from yait_byheart import semantic
from yait_byheart.semantic import Hybrid, openai_compatible


class Handler(BaseHTTPRequestHandler):
    seen: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Handler.seen.append({"path": self.path, "auth": self.headers.get("Authorization"),
                             "body": body})  # fmt: skip
        if body["model"] == "broken":
            self.send_response(500)
            self.end_headers()
            self.wfile.write(b"model crashed")
            return
        texts = body["input"]
        items = [{"object": "embedding", "index": i, "embedding": [float(len(t)), 1.0, i * 0.5]}
                 for i, t in enumerate(texts)]  # fmt: skip
        reply = {"object": "list", "data": items[::-1], "model": body["model"]}
        data = json.dumps(reply if body["model"] != "odd" else {"vectors": []}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    Handler.seen.clear()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1/"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_openai_compatible_posts_the_openai_format_and_keeps_input_order(server: str) -> None:
    embed = openai_compatible(server, "tiny-embed", api_key="sk-test", timeout=5)
    assert embed.name == "tiny-embed"
    assert embed(["a", "bbb"]) == [[1.0, 1.0, 0.0], [3.0, 1.0, 0.5]]
    (call,) = Handler.seen
    assert call["path"] == "/v1/embeddings"
    assert call["auth"] == "Bearer sk-test"
    assert call["body"] == {"model": "tiny-embed", "input": ["a", "bbb"]}


def test_hybrid_over_the_endpoint_embeds_in_batches(server: str) -> None:
    h = Hybrid(openai_compatible(server, "tiny-embed"), batch_size=2)
    h.fit(["oven deck", "tea", "rain garden", "tea"])
    assert [len(c["body"]["input"]) for c in Handler.seen] == [2, 1]
    assert Handler.seen[0]["auth"] is None
    assert h.rank("oven")[0] == 0


def test_endpoint_errors_are_named(server: str) -> None:
    with pytest.raises(RuntimeError, match="openai_compatible: .*answered 500: model crashed"):
        openai_compatible(server, "broken")(["a"])
    with pytest.raises(ValueError, match="openai_compatible: .*OpenAI embeddings format"):
        openai_compatible(server, "odd")(["a"])
    with pytest.raises(ValueError, match="openai_compatible: timeout=0"):
        openai_compatible(server, "m", timeout=0)


@pytest.mark.parametrize(
    ("helper", "module", "pip"),
    [
        (
            semantic.sentence_transformers,
            "sentence_transformers",
            "pip install sentence-transformers",
        ),
        (semantic.fastembed, "fastembed", "pip install fastembed"),
    ],
)
def test_missing_packages_name_the_pip_command(
    helper: Any, module: str, pip: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # import fails as if not installed
    with pytest.raises(ImportError, match=pip):
        helper("some-model")


def test_the_core_never_imports_the_semantic_package() -> None:
    import subprocess

    code = "import yait_byheart, sys; print('yait_byheart.semantic' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
