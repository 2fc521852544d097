"""No import circle among the modules of the agent or of the demo ERP, counting imports inside
functions: a circle means two modules share a piece that belongs in a third (issue Z). Imports
under ``TYPE_CHECKING`` do not run; a circle through them (a module annotating its caller's
class) is broken with a Protocol of what it uses, and only the metric computer's helpers keep
one. The planner's circles are its owner's work and are left out here; import-linter's own
contracts check layers, not circles between modules."""

from __future__ import annotations

import grimp

PLANNER = "erp_agent.planner"
METRICS = "erp_agent.metrics."  # compute.py and the helpers that annotate MetricComputer


def circles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected components of more than one module (iterative Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append(
                        (child, iter(sorted(graph.find_modules_directly_imported_by(child))))
                    )
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _outside_planner(components: list[list[str]]) -> list[list[str]]:
    return [c for c in components if not all(m.startswith(PLANNER) for m in c)]


def test_no_import_circle_outside_the_planner() -> None:
    graph = grimp.build_graph("erp_agent", "demo_erp", exclude_type_checking_imports=True)
    assert _outside_planner(circles(graph)) == []


def test_no_typing_only_circle_but_the_metric_computers() -> None:
    graph = grimp.build_graph("erp_agent", "demo_erp", exclude_type_checking_imports=False)
    found = _outside_planner(circles(graph))
    assert [c for c in found if not all(m.startswith(METRICS) for m in c)] == []


def test_a_circle_through_a_function_level_import_is_found() -> None:
    graph = grimp.ImportGraph()
    for module in ("a", "a.x", "a.y", "a.z", "erp_agent.planner.p", "erp_agent.planner.q"):
        graph.add_module(module)
    graph.add_import(importer="a.x", imported="a.y")
    graph.add_import(importer="a.y", imported="a.x")  # as if inside a function
    graph.add_import(importer="a.y", imported="a.z")
    graph.add_import(importer="erp_agent.planner.p", imported="erp_agent.planner.q")
    graph.add_import(importer="erp_agent.planner.q", imported="erp_agent.planner.p")
    assert _outside_planner(circles(graph)) == [["a.x", "a.y"]]
