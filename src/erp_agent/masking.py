"""Masking of text that looks like a password, an API key or another secret, before it is
written anywhere that outlives the request (the turn store, the interaction log, titles).

Users paste credentials into chat ("my password is …", an API key, a bearer token); the model
may need the words of the message, the logs never do. Masking keeps the shape of the text so a
log still reads naturally: ``password: [masked]``.
"""

from __future__ import annotations

import re
from typing import Any

MASK = "[masked]"

# A secret named in words: "password: x", "api_key=x", "my password is x". Words that are
# also ordinary English (secret, token, pin, key) count only with "is", ":" or "=" after them.
_VALUE = r"(?P<value>[\"']?[^\s\"',;]{4,}[\"']?)"
_STRONG = re.compile(
    r"(?P<name>\b(?:pass(?:word|wd|phrase)|pwd|api[ _-]?(?:key|secret|token)|client[ _-]?secret"
    r"|private[ _-]?key|access[ _-]?(?:key|token)|auth[ _-]?token"
    r"|(?:aws[ _-]?)?secret[ _-]?access[ _-]?key|(?:aws[ _-]?)?session[ _-]?token)\b"
    r"(?P<sep>\s+(?:is|was)\s+|\s*[:=]\s*|\s+))" + _VALUE,
    re.IGNORECASE,
)
_WEAK = re.compile(
    r"(?P<name>\b(?:secret|token|pin|key)\b(?:\s+(?:is|was)\s+|\s*[:=]\s*))" + _VALUE,
    re.IGNORECASE,
)
# Secrets recognisable by their own shape, wherever they appear.
_SHAPED = re.compile(
    r"\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}"  # OpenAI / Anthropic keys
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"  # AWS access key id (long-term, temporary)
    r"|gh[pousr]_[A-Za-z0-9]{30,}"  # GitHub tokens
    r"|xox[abprs]-[A-Za-z0-9-]{10,}"  # Slack tokens
    r"|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"  # JWTs
    r"|[0-9a-f]{15}:[0-9a-f]{15})\b"  # a Frappe api_key:api_secret pair
    r"|(?<=\bBearer )[A-Za-z0-9._~+/=-]{16,}"
    r"|(?<=\btoken )[A-Za-z0-9]{10,}:[A-Za-z0-9]{10,}"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----"
    # An AWS secret access key: 40 characters of base64's alphabet, mixing upper and lower case
    # and digits (a hex digest or a document number never does), standing on its own.
    r"|(?<![A-Za-z0-9/+=])(?=[A-Za-z0-9/+]*[A-Z])(?=[A-Za-z0-9/+]*[a-z])(?=[A-Za-z0-9/+]*[0-9])"
    r"[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])",
)


def mask_secrets(text: str) -> str:
    """``text`` with every password-, key- or token-looking value replaced by ``[masked]``."""
    if not text:
        return text
    masked = _SHAPED.sub(MASK, text)
    masked = _STRONG.sub(_strong, masked)
    return _WEAK.sub(lambda m: m.group("name") + MASK, masked)


def _strong(match: re.Match[str]) -> str:
    # "password hunter2!" is a secret; "password reset" is not: without "is", ":" or "=", only
    # a value with a digit or a symbol is taken for one.
    value = match.group("value")
    if match.group("sep").strip() or not value.isalpha():
        return match.group("name") + MASK
    return match.group(0)


def mask_all(value: Any) -> Any:
    """A copy of a JSON-like value with every string masked (keys kept as they are)."""
    if isinstance(value, str):
        return mask_secrets(value)
    if isinstance(value, dict):
        return {k: mask_all(v) for k, v in value.items()}
    if isinstance(value, list):
        return [mask_all(v) for v in value]
    return value
