"""Data: the shortest prefix each model caches, and the pattern that reads a model name.

Sources (docs/prompt-cache.md, "Minimum prefix"): Anthropic's prompt-caching page [A] and the
team's notes [N] for Claude; OpenAI's prompt-caching guide [O] for OpenAI (1,024 tokens on
every model that caches). A model not matched here has no known minimum, and the adapters then
keep every breakpoint.
"""

from __future__ import annotations

import re

# "claude-sonnet-4-5-20250929", "claude-opus-4-1", "claude-haiku-4-5" (family first) and
# "claude-3-5-haiku-20241022" (version first): family, major, optional one- or two-digit minor.
# Cloud spellings are read too: Vertex "...@20250929", Bedrock "us.anthropic.claude-...-v1:0".
VERSION_DOT = re.compile(r"(?<=\d)\.(?=\d)")  # "claude-opus-4.1" is read as "claude-opus-4-1"
_TAIL = r"(?:-\d{8}|-latest)?(?:@\S*|-v\d+(?::\d+)?)?$"
CLAUDE_NEW = re.compile(r"(?:^|\.)claude-(opus|sonnet|haiku)-(\d+)(?:-(\d{1,2}))?" + _TAIL)
CLAUDE_OLD = re.compile(r"(?:^|\.)claude-(\d+)(?:-(\d))?-(opus|sonnet|haiku)" + _TAIL)

# (family, lowest version, highest version, minimum tokens); versions as (major, minor).
CLAUDE_MINIMUMS: tuple[tuple[str, tuple[int, int], tuple[int, int], int], ...] = (
    ("sonnet", (4, 0), (4, 5), 1024),  # Sonnet 4 and 4.5 [A][N]
    ("opus", (4, 0), (4, 1), 1024),  # Opus 4 and 4.1 [A][N]
    ("haiku", (3, 0), (3, 5), 2048),  # Haiku 3 and 3.5 [A][N]
    ("opus", (4, 5), (99, 99), 4096),  # Opus 4.5 and later [A][N]
    ("haiku", (4, 5), (4, 5), 4096),  # Haiku 4.5 [A][N]
)

# OpenAI caches from 1,024 tokens on every model that caches [O]; its names start so.
OPENAI_NAME = re.compile(r"(gpt-|o\d|chatgpt-|codex-)")
OPENAI_MINIMUM = 1024
