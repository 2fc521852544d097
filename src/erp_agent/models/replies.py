"""What a model answered, made usable before the engine sees it.

- A tool call written as text (see ``_text_calls``) becomes a real tool call, so it goes
  through the gateway like any other; dotted and wire names are both accepted.
- A call that cannot be read, or an empty answer, is sent back to the model once with a short
  correction; a second failure is a clear ``ModelOutputInvalid``, never raw JSON as the answer.
- An answer longer than any answer can be (a model repeating itself) is refused, not shown.
- A provider that reports no usage gets an estimate, so budgets and rate gates still count.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Awaitable, Callable, Sequence
from functools import cache
from importlib import resources
from typing import Any

from erp_agent.errors import ModelOutputInvalid
from erp_agent.models._text_calls import extract
from erp_agent.models.base import Completion, Message, Usage
from erp_agent.models.limits import estimate_tokens

# Far beyond any answer or tool call the agent needs (a long table in words is ~20k chars).
MAX_REPLY_CHARS = 200_000

AskAgain = Callable[[list[Message]], Awaitable[Completion]]


@cache
def prompt_file(name: str) -> str:
    return (resources.files("erp_agent.models") / "prompts" / name).read_text("utf-8").strip()


def tool_names(tools: Sequence[dict[str, Any]]) -> list[str]:
    return [str((t.get("function") or {}).get("name", "")) for t in tools]


async def settle(
    completion: Completion,
    messages: Sequence[Message],
    tools: Sequence[dict[str, Any]],
    ask_again: AskAgain | None,
) -> Completion:
    """``completion`` with text tool calls made real, checked; asks the model once more when
    its answer cannot be used (``ask_again`` sends a request and returns the raw completion)."""
    completion = with_usage(completion, messages, tools)
    settled, problem = _settle_once(completion, tools)
    if problem is None:
        return settled
    if ask_again is None:
        raise ModelOutputInvalid(_unusable(problem), detail=problem)
    retry = [*messages, Message("assistant", completion.content or ""), Message("user", problem)]
    second = with_usage(await ask_again(retry), retry, tools)
    settled, still = _settle_once(second, tools)
    if still is not None:
        raise ModelOutputInvalid(_unusable(still), detail=still)
    return dataclasses.replace(settled, usage=completion.usage + settled.usage)


def _settle_once(
    completion: Completion, tools: Sequence[dict[str, Any]]
) -> tuple[Completion, str | None]:
    """(the usable completion, None), or (it, the correction to send the model)."""
    check_size(completion)
    if completion.tool_calls or not tools:
        return completion, None if completion.tool_calls or completion.content else _empty()
    found = extract(completion.content, tool_names(tools))
    if found.calls:
        settled = dataclasses.replace(
            completion,
            content=found.prose or None,
            tool_calls=found.calls,
            finish_reason="tool_calls",
        )
        return settled, None
    if found.malformed:
        return completion, prompt_file("unreadable_call.md").replace("{problem}", found.malformed)
    if not (completion.content or "").strip():
        return completion, _empty()
    return completion, None


def _empty() -> str:
    return prompt_file("empty_reply.md")


def _unusable(problem: str) -> str:
    if problem == _empty():
        what = "The AI model returned an empty answer twice."
    else:
        what = "The AI model wrote a tool call that could not be read, even when asked again."
    return (
        f"{what} Please try again or rephrase the question; if it keeps happening, the model "
        "may not handle tool calls well — tell an administrator (a model with tool-calling "
        "support, or the server's tool-call parser switched on, fixes this)."
    )


def check_size(completion: Completion) -> None:
    size = len(completion.content or "") + sum(len(c.arguments) for c in completion.tool_calls)
    if size > MAX_REPLY_CHARS:
        raise ModelOutputInvalid(
            f"The AI model's answer was {size:,} characters long, more than the "
            f"{MAX_REPLY_CHARS:,} an answer may have, so it was not shown. Please ask a narrower "
            "question; if it keeps happening, the model may be repeating itself — tell an "
            "administrator.",
            detail=f"reply of {size} characters",
        )


def with_usage(
    completion: Completion, messages: Sequence[Message], tools: Sequence[dict[str, Any]]
) -> Completion:
    """Servers that report no usage (no usage chunk, or none at all) get an estimate."""
    if completion.usage.prompt_tokens or completion.usage.completion_tokens:
        return completion
    answer = (completion.content or "") + "".join(
        c.name + c.arguments for c in completion.tool_calls
    )
    estimate = Usage(
        prompt_tokens=estimate_tokens(messages, tools), completion_tokens=math.ceil(len(answer) / 4)
    )
    return dataclasses.replace(completion, usage=estimate)
