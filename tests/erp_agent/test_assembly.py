"""One assembly: every process that answers turns (serve, its worker processes, every demo, the
queue worker) builds its model switch, knowledge upload and app through ``erp_agent.assembly``,
and a model named to a parent process reaches the processes it starts."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from erp_agent import assembly
from erp_agent.config import Settings
from erp_agent.runtime import Runtime

pytestmark = pytest.mark.anyio
SRC = Path(assembly.__file__).parent
# What only the assembly builds (server/app.py's create_app builds its own state).
BUILT_HERE = {"IndexedKnowledge", "ModelSwitch", "create_app", "build_state"}


def _calls(path: Path) -> set[str]:
    tree = ast.parse(path.read_text("utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            names.add(func.id if isinstance(func, ast.Name) else getattr(func, "attr", ""))
    return names


def test_only_the_assembly_builds_a_served_process() -> None:
    builders = {
        str(p.relative_to(SRC)): sorted(_calls(p) & BUILT_HERE)
        for p in SRC.rglob("*.py")
        if _calls(p) & BUILT_HERE
    }
    assert builders == {"assembly.py": sorted(BUILT_HERE), "server/app.py": ["build_state"]}


def test_no_module_imports_another_channels_private_modules() -> None:
    for path in SRC.rglob("*.py"):
        home = path.relative_to(SRC).parts[0]
        tree = ast.parse(path.read_text("utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or not node.module:
                continue
            parts = node.module.split(".")
            names = [*parts[2:], *(a.name for a in node.names)]
            if parts[0] == "erp_agent" and len(parts) > 1 and parts[1] in ("cli", "server",
                    "channels", "queue", "relay") and parts[1] != home.removesuffix(".py"):  # fmt: skip
                private = [n for n in names if n.startswith("_") and n != "__version__"]
                assert not private, (path, node.module, private)


def test_a_model_named_to_a_parent_process_reaches_its_children(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(assembly.MODEL_VARIABLE, raising=False)
    monkeypatch.delenv(assembly.BASE_URL_VARIABLE, raising=False)
    assert assembly.handed_over() == (None, None)
    assembly.hand_over("openai-compatible:tiny", "http://127.0.0.1:9/v1")
    assert assembly.handed_over() == ("openai-compatible:tiny", "http://127.0.0.1:9/v1")


async def test_an_assembled_process_has_the_sites_knowledge_and_the_offline_model(
    tmp_path: Path,
) -> None:
    site = tmp_path / "site"
    (site / "knowledge").mkdir(parents=True)
    (site / "catalog").mkdir()
    settings = Settings(erp_url="http://127.0.0.1:9", data_dir=str(tmp_path), site_dir=str(site))
    runtime = await Runtime.create(settings)
    built = await assembly.assemble(settings, assembly.OFFLINE, runtime=runtime)
    try:
        assert built.knowledge.site_knowledge == site / "knowledge"
        assert built.switch.describe()["model"] == "offline-planner"
        assert built.app().state is not None
    finally:
        await built.aclose()
