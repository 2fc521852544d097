"""The command line's model options (``--model``, ``--base-url``, ``--model-setting``). What they
choose is decided by ``server/assembly.py``, the one place every process decides its model: a
model named on the command line goes into the settings before the runtime is built, so it gets
what a configured model gets (its timeout, retries, the rate gate and the usage ledger)."""

from __future__ import annotations

from typing import Annotated

import typer

ModelOption = Annotated[
    str | None,
    typer.Option(
        "--model",
        help="offline, or PRESET:NAME — openai:, anthropic:, azure:, ollama:, vllm:, llamacpp:, "
        "lmstudio:, openai-compatible: (with --base-url); default: the configured model.",
    ),
]
BaseUrlOption = Annotated[
    str | None,
    typer.Option(
        "--base-url",
        help="The model server's address, e.g. http://localhost:11434/v1 (wins over a preset's).",
    ),
]


ModelSettingOption = Annotated[
    list[str] | None,
    typer.Option(
        "--model-setting",
        help="A setting of the model --model names, NAME=VALUE (repeatable): context_window, "
        "timeout, max_retries, compact_tools, max_output_tokens, strict_tools, … (see "
        "docs/configuration.md, Model providers).",
    ),
]
