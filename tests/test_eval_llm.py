"""Answer/judge client and the resumable answer run, against a fake OpenAI-compatible server."""

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from eval.__main__ import main
from eval.locomo import answer
from eval.locomo.data import load
from eval.locomo.llm import ChatClient, LLMError
from eval.locomo.offline import Spec
from eval.locomo.systems import RecentHistory

TINY = Path(__file__).parent / "data" / "tiny_locomo.json"

# Canned answers of the fake model, by question.
ANSWERS = {
    "What breed is Ada's dog?": "beagle",
    "When did Ben run the marathon?": "18 March 2023",
    "What did Ada's dog chew, and what is his name?": "a violin",
    "Which city's marathon was Ben training for?": "Lisbon",
    "How often does Ada's quartet play?": "Fridays",
}


class FakeAPI:
    """Chat Completions on 127.0.0.1; ``script`` maps the request number to an HTTP status."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.script: dict[int, int] = {}
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                api.requests.append(body)
                api.headers.append(dict(self.headers))
                status = api.script.get(len(api.requests), 200)
                if self.path != "/v1/chat/completions":
                    status = 404
                payload = api.reply(body) if status == 200 else {"error": {"message": "boom"}}
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        ).start()

    def reply(self, body: dict[str, Any]) -> dict[str, Any]:
        system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
        if system.startswith("You answer questions"):
            question = user.split("Question: ")[1].split("\n")[0]
            text = ANSWERS.get(question, "no idea")
        else:  # judge: CORRECT when the candidate is part of the reference
            ref = user.split("Reference answer: ")[1].split("\n")[0].lower()
            cand = user.split("Candidate answer: ")[1].lower()
            label = "CORRECT" if cand in ref else "WRONG"
            text = json.dumps({"reason": "fake", "label": label})
        return {
            "choices": [{"message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2},
        }


@pytest.fixture
def api() -> Iterator[FakeAPI]:
    fake = FakeAPI()
    yield fake
    fake.server.shutdown()
    fake.server.server_close()


def client(api: FakeAPI, sleeps: list[float] | None = None) -> ChatClient:
    record: Callable[[float], None] = sleeps.append if sleeps is not None else lambda s: None
    return ChatClient(
        base_url=api.url, api_key="k", timeout=5, retries=3, backoff=0.5, sleep=record
    )


def test_retries_a_500_then_succeeds(api: FakeAPI) -> None:
    api.script = {1: 500}
    sleeps: list[float] = []
    msgs = [
        {"role": "system", "content": "You answer questions"},
        {"role": "user", "content": "Question: What breed is Ada's dog?\nShort answer:"},
    ]
    reply = client(api, sleeps).complete("m", msgs)
    assert reply.text == "beagle"
    assert reply.usage == {"prompt_tokens": 10, "completion_tokens": 2}
    assert len(api.requests) == 2
    assert sleeps == [0.5]
    assert api.headers[0]["Authorization"] == "Bearer k"
    assert api.requests[0]["model"] == "m" and api.requests[0]["temperature"] == 0.0


def test_backoff_doubles_and_gives_up(api: FakeAPI) -> None:
    api.script = {1: 429, 2: 503, 3: 502, 4: 500}
    sleeps: list[float] = []
    with pytest.raises(LLMError, match="gave up after 4 attempts"):
        client(api, sleeps).complete("m", [{"role": "user", "content": "x"}])
    assert sleeps == [0.5, 1.0, 2.0]


def test_client_errors_are_not_retried(api: FakeAPI) -> None:
    api.script = {1: 400}
    with pytest.raises(LLMError, match="HTTP 400"):
        client(api).complete("m", [{"role": "user", "content": "x"}])
    assert len(api.requests) == 1


def test_connection_refused_is_retried() -> None:
    sleeps: list[float] = []
    dead = ChatClient(
        base_url="http://127.0.0.1:9/v1", retries=2, backoff=0.1, sleep=sleeps.append, timeout=2
    )
    with pytest.raises(LLMError, match="gave up"):
        dead.complete("m", [{"role": "user", "content": "x"}])
    assert sleeps == [0.1, 0.2]


def test_env_configuration() -> None:
    c = ChatClient.from_env(
        {"OPENAI_BASE_URL": "http://o", "OPENAI_API_KEY": "ok", "BYHEART_EVAL_BASE_URL": "http://b"}
    )
    assert (c.base_url, c.api_key) == ("http://b", "ok")


def test_answer_run_is_resumable_and_scored(api: FakeAPI, tmp_path: Path) -> None:
    conv = load(TINY)[:1]
    spec = Spec("recent", "fresh", 2000, lambda: RecentHistory(2000))
    results = tmp_path / "run.jsonl"
    # Request 3 (the second question's answer) is refused: the run stops after one record.
    api.script = {3: 400}
    with pytest.raises(LLMError):
        answer.run(
            [spec],
            conv,
            client(api),
            answer_model="a",
            judge_model="j",
            results=results,
            progress=False,
        )
    assert len(results.read_text().splitlines()) == 1
    # A torn line from a crash mid-write is ignored and does not swallow the next record.
    with results.open("a") as fh:
        fh.write('{"key": "tiny-1#1|rec')
    api.requests.clear()
    api.script = {}
    records = answer.run(
        [spec],
        conv,
        client(api),
        answer_model="a",
        judge_model="j",
        results=results,
        progress=False,
    )
    # 5 answerable questions, 1 already done: 4 answers + 4 verdicts; category 5 is not asked
    assert len(api.requests) == 8
    assert [r["question_number"] for r in records] == [0, 1, 2, 3, 4]
    assert len(answer.load_done(results)) == 5
    # The answer prompt carries the composed context and the question.
    prompt = api.requests[0]["messages"][1]["content"]
    assert "Ben: I ran the marathon last Saturday" in prompt
    assert prompt.endswith("Question: When did Ben run the marathon?\nShort answer:")
    summary = {r["category"]: r for r in answer.summarise(records)}
    overall = summary["all"]
    assert overall["questions"] == 5
    # fake judge: CORRECT for beagle, 18 March 2023, Lisbon, Fridays; WRONG for "a violin"
    assert overall["judge_accuracy"] == pytest.approx(0.8)
    # F1: 1, 1, 0.4, 1, 0.5; BLEU-1: 1, 1, exp(-3), 1, exp(-2)
    assert overall["f1"] == pytest.approx(0.78)
    assert overall["bleu1"] == pytest.approx((3 + 0.0497871 + 0.1353353) / 5)
    assert summary[1]["judge_accuracy"] == 0.0
    # Nothing new to do on a third run.
    api.requests.clear()
    answer.run(
        [spec],
        conv,
        client(api),
        answer_model="a",
        judge_model="j",
        results=results,
        progress=False,
    )
    assert api.requests == []


def test_parse_verdict_variants() -> None:
    assert answer.parse_verdict('{"label": "WRONG"}') == "WRONG"
    assert answer.parse_verdict("The answer is CORRECT.") == "CORRECT"
    assert answer.parse_verdict('```json\n{"reason": "x", "label": "CORRECT"}\n```') == "CORRECT"
    assert answer.parse_verdict("unsure") is None


def test_cli_answers_through_the_endpoint(
    api: FakeAPI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BYHEART_EVAL_BASE_URL", api.url)
    monkeypatch.setenv("BYHEART_EVAL_API_KEY", "secret")
    argv = ["locomo", "--data", str(TINY), "--conversations", "1", "--budgets", "2000",
            "--no-live", "--no-external", "--jobs", "1", "--quiet",
            "--out", str(tmp_path / "out"), "--results", str(tmp_path / "res"),
            "--answer-model", "a-model", "--judge-model", "j/model",
            "--answer-systems", "recent:fresh,byheart:sticky"]  # fmt: skip
    assert main(argv) == 0
    trace = (tmp_path / "res" / "locomo-a-model-j_model.jsonl").read_text().splitlines()
    assert len(trace) == 2 * 5  # two systems, five answerable questions
    assert api.headers[0]["Authorization"] == "Bearer secret"
    result = json.loads((tmp_path / "out" / "locomo.json").read_text())
    rows = {(r["system"], r["regime"], r["category"]): r for r in result["answers"]}
    # the fake model ignores the context, so both systems score what the canned answers earn
    assert rows["recent", "fresh", "all"]["judge_accuracy"] == pytest.approx(0.8)
    assert rows["byheart", "sticky", "all"]["f1"] == pytest.approx(0.78)
    assert "## Answers and judge" in (tmp_path / "out" / "locomo.md").read_text()
