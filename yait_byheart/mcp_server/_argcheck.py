"""Check tool arguments against the small part of JSON Schema the MCP tools' schemas use.

Objects (``properties``, ``required``, ``additionalProperties: false``), strings (``minLength``,
``maxLength``, ``enum``) and integers (``minimum``, ``maximum``); the schema the tools publish is
the one that checks their input, so the two cannot drift apart.

>>> schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}},
...           "required": ["n"], "additionalProperties": False}
>>> problems(schema, {"n": "3", "x": 1})
["'n' must be an integer, got string", "unknown argument 'x'"]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_JSON_TYPES = {
    bool: "boolean", int: "integer", float: "number", str: "string", list: "array", dict: "object",
    type(None): "null",
}  # fmt: skip


def json_type(value: object) -> str:
    """The JSON name of a parsed JSON value's type."""
    return _JSON_TYPES.get(type(value), type(value).__name__)


def _scalar(schema: Mapping[str, Any], value: Any, name: str) -> list[str]:
    kind = schema.get("type")
    if kind == "integer":
        if isinstance(value, bool) or not (
            isinstance(value, int) or (isinstance(value, float) and value.is_integer())
        ):
            return [f"{name} must be an integer, got {json_type(value)}"]
        low, high = schema.get("minimum"), schema.get("maximum")
        if (low is not None and value < low) or (high is not None and value > high):
            return [f"{name} must be from {low} to {high}, got {value}"]
        return []
    if kind == "string":
        if not isinstance(value, str):
            return [f"{name} must be a string, got {json_type(value)}"]
        if "enum" in schema and value not in schema["enum"]:
            return [f"{name} must be one of {', '.join(map(repr, schema['enum']))}, got {value!r}"]
        if len(value) < schema.get("minLength", 0):
            return [f"{name} must not be empty"]
        if len(value) > schema.get("maxLength", len(value)):
            return [f"{name} is {len(value):,} characters; the limit is {schema['maxLength']:,}"]
    return []


def problems(schema: Mapping[str, Any], value: Any) -> list[str]:
    """What is wrong with the arguments `value` for the object `schema`; empty when nothing."""
    if not isinstance(value, dict):
        return [f"the arguments must be an object, got {json_type(value)}"]
    properties: Mapping[str, Any] = schema.get("properties", {})
    found = [f"missing argument {key!r}" for key in schema.get("required", ()) if key not in value]
    for key, item in value.items():
        if key in properties:
            found += _scalar(properties[key], item, repr(key))
        elif schema.get("additionalProperties") is False:
            found.append(f"unknown argument {key!r}")
    return found
