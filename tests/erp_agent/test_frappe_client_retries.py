"""Reads are retried on timeouts and 5xx; writes never are; refusals keep the ERP's words."""

from __future__ import annotations

import json
import ssl

import httpx
import pytest

from erp_agent.connectors.credentials import Credential
from erp_agent.connectors.frappe.client import FrappeClient, _tls_for
from erp_agent.connectors.frappe.errors import refusal_from_response
from erp_agent.errors import ErpRefusal, ErpUnavailable

pytestmark = pytest.mark.anyio
CRED = Credential.token("u@x", "k", "s")


def flaky(failures: list[int | str]) -> tuple[httpx.MockTransport, list[str]]:
    """A transport that fails as listed (an HTTP status, or 'timeout'), then answers 200."""
    calls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request.method)
        if failures:
            failure = failures.pop(0)
            if failure == "timeout":
                raise httpx.ReadTimeout("slow", request=request)
            return httpx.Response(int(failure), json={"exc_type": "Exception"})
        return httpx.Response(200, json={"message": "pong"})

    return httpx.MockTransport(handler), calls


async def test_reads_retry_on_5xx_and_timeouts() -> None:
    transport, calls = flaky([503, "timeout", 502])
    client = FrappeClient("http://erp.test", transport=transport, backoff=0.001)
    assert await client.method(CRED, "ping") == "pong"
    assert calls == ["GET"] * 4
    await client.aclose()


async def test_reads_give_up_with_a_clear_error() -> None:
    transport, calls = flaky(["timeout"] * 10)
    client = FrappeClient("http://erp.test", transport=transport, read_retries=2, backoff=0.001)
    with pytest.raises(ErpUnavailable, match="did not answer"):
        await client.method(CRED, "ping")
    assert len(calls) == 3
    await client.aclose()


async def test_writes_are_never_retried() -> None:
    transport, calls = flaky(["timeout"])
    client = FrappeClient("http://erp.test", transport=transport, backoff=0.001)
    with pytest.raises(ErpUnavailable, match="not retried"):
        await client.insert(CRED, "Lead", {"lead_name": "x"})
    assert calls == ["POST"]
    transport, calls = flaky([503])
    client = FrappeClient("http://erp.test", transport=transport, backoff=0.001)
    with pytest.raises(ErpRefusal):
        await client.insert(CRED, "Lead", {"lead_name": "x"})
    assert calls == ["POST"]
    await client.aclose()


def test_refusal_keeps_every_message_verbatim_without_tags() -> None:
    body = {
        "exc_type": "NegativeStockError",
        "_server_messages": json.dumps(
            [
                json.dumps(
                    {
                        "message": '5.0 units of <a href="/app/item/X">Item X: Widget</a> needed in '
                        "<strong>Stores - ST</strong> to complete this transaction.",
                        "title": "Insufficient Stock",
                        "indicator": "red",
                        "raise_exception": 1,
                    }
                )
            ]
        ),
    }
    refusal = refusal_from_response(417, body)
    assert (
        refusal.message
        == "5.0 units of Item X: Widget needed in Stores - ST to complete this transaction."
    )
    assert (refusal.exc_type, refusal.status, refusal.title) == (
        "NegativeStockError",
        417,
        "Insufficient Stock",
    )
    login = refusal_from_response(
        401, {"message": "Invalid login credentials", "exc_type": "AuthenticationError"}
    )
    assert login.message == "Invalid login credentials"
    bare = refusal_from_response(404, {"exc_type": "DoesNotExistError"})
    assert bare.message == "The ERP answered HTTP 404"


def test_a_plain_http_erp_loads_no_ca_bundle_and_an_https_one_checks_certificates() -> None:
    assert _tls_for("https://erp.example.com") is True  # httpx's checks with its CA bundle
    plain = _tls_for("http://erp.internal")
    assert isinstance(plain, ssl.SSLContext)
    # Trusts nothing: a TLS connection through it would fail, never go unchecked.
    assert plain.verify_mode is ssl.CERT_REQUIRED
    assert plain.check_hostname
    assert plain.get_ca_certs() == []
