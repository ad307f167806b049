"""A minimal OpenAI-compatible Chat Completions client on stdlib urllib.

Endpoint and key come from BYHEART_EVAL_BASE_URL / BYHEART_EVAL_API_KEY, falling back to
OPENAI_BASE_URL / OPENAI_API_KEY. 429, 5xx, timeouts and connection errors are retried with
exponential backoff (honouring a numeric Retry-After); other HTTP errors fail at once.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class LLMError(RuntimeError):
    """The endpoint refused the request, or kept failing after every retry."""


@dataclass(frozen=True)
class Reply:
    text: str
    usage: dict[str, Any]


@dataclass
class ChatClient:
    base_url: str = DEFAULT_BASE_URL
    api_key: str = ""
    timeout: float = 60.0  # seconds per request
    retries: int = (
        6  # 1 + 6 attempts span ~1+2+4+8+16+30 s of backoff: outlasts a typical 429 burst
    )
    backoff: float = 1.0
    max_backoff: float = 30.0
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **kwargs: Any) -> ChatClient:
        e = os.environ if env is None else env
        base = e.get("BYHEART_EVAL_BASE_URL") or e.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        key = e.get("BYHEART_EVAL_API_KEY") or e.get("OPENAI_API_KEY") or ""
        return cls(base_url=base, api_key=key, **kwargs)

    def _request(self, payload: dict[str, Any]) -> dict[str, Any]:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        req = urllib.request.Request(
            self.base_url.rstrip("/") + "/chat/completions",
            data=json.dumps(payload).encode("utf-8"),
            headers=headers,
            method="POST",
        )
        with urllib.request.urlopen(req, timeout=self.timeout) as resp:
            body: dict[str, Any] = json.loads(resp.read().decode("utf-8"))
            return body

    def _wait(self, attempt: int, retry_after: str | None) -> None:
        delay = min(self.backoff * 2**attempt, self.max_backoff)
        if retry_after and retry_after.strip().isdigit():
            delay = max(delay, min(float(retry_after), self.max_backoff))
        self.sleep(delay)

    def complete(
        self,
        model: str,
        messages: list[dict[str, str]],
        *,
        max_tokens: int = 200,
        temperature: float = 0.0,
    ) -> Reply:
        payload = {
            "model": model,
            "messages": messages,
            "max_tokens": max_tokens,
            "temperature": temperature,
        }
        last = ""
        for attempt in range(self.retries + 1):
            retry_after: str | None = None
            try:
                body = self._request(payload)
            except urllib.error.HTTPError as err:
                detail = err.read().decode("utf-8", "replace")[:300]
                if err.code != 429 and err.code < 500:
                    raise LLMError(
                        f"{self.base_url}: HTTP {err.code} for model {model!r}: {detail}"
                    ) from err
                last = f"HTTP {err.code}: {detail}"
                retry_after = err.headers.get("Retry-After") if err.headers else None
            except (urllib.error.URLError, TimeoutError, ConnectionError) as err:
                last = f"{type(err).__name__}: {err}"
            else:
                return _parse(body, model)
            if attempt < self.retries:
                self._wait(attempt, retry_after)
        raise LLMError(f"{self.base_url}: gave up after {self.retries + 1} attempts: {last}")


def _parse(body: dict[str, Any], model: str) -> Reply:
    try:
        content = body["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError) as err:
        raise LLMError(f"model {model!r}: unexpected response shape: {str(body)[:300]}") from err
    if isinstance(content, list):  # some servers return content parts
        content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    usage = body.get("usage")
    return Reply(str(content or ""), usage if isinstance(usage, dict) else {})
