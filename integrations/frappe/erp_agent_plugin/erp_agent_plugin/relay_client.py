"""The HTTP side of the plugin: POST to the erp-agent relay with the organisation key (stdlib
only, so nothing is added to the bench's environment)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any


class RelayError(Exception):
    """The relay refused a request; its message says why."""


class HttpRelay:
    def __init__(self, base_url: str, org_key: str, timeout: float = 120.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.org_key = org_key
        self.timeout = timeout

    def post(self, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
        request = urllib.request.Request(
            self.base_url + path,
            data=json.dumps(body, default=str).encode(),
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {self.org_key}"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return dict(json.loads(response.read()))
        except urllib.error.HTTPError as exc:
            try:
                detail = json.loads(exc.read()).get("detail")
            except ValueError:
                detail = None
            raise RelayError(str(detail or f"the relay answered HTTP {exc.code}")) from exc
