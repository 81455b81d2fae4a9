#!/usr/bin/env python3
"""Fails when the runner's modules import each other in a cycle.

Builds the import graph of runner/ascend_finetune from the source (standard library `ast`, nothing
is imported), counting every import: at module level, inside functions (the lazy imports that once
held a train <-> distributed <-> preflight cycle together) and under `if TYPE_CHECKING:`. An edge
goes to the module named, or to the package when the name is not a module of its own. Prints each
set of modules that import each other, with one cycle through them (`a -> b -> a`), and exits 1; otherwise prints the module and edge counts and exits 0.

Usage: scripts/check-python-imports.py [PACKAGE_DIR]   (default: runner/ascend_finetune)
"""
from __future__ import annotations

import ast
import os
import sys


def module_names(pkg_dir: str) -> dict[str, str]:
    """Dotted module name -> file, for every .py under the package (a package is its __init__)."""
    root = os.path.basename(os.path.normpath(pkg_dir))
    out = {}
    for dirpath, dirnames, files in os.walk(pkg_dir):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        rel = os.path.relpath(dirpath, pkg_dir)
        parts = [root] + ([] if rel == "." else rel.split(os.sep))
        for f in sorted(files):
            if f.endswith(".py"):
                name = parts if f == "__init__.py" else parts + [f[:-3]]
                out[".".join(name)] = os.path.join(dirpath, f)
    return out


def imports_of(name: str, path: str, modules: dict[str, str]) -> set[str]:
    """The package's modules that `name` imports anywhere in its file."""
    is_pkg = os.path.basename(path) == "__init__.py"
    package = name if is_pkg else name.rpartition(".")[0]
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    found: set[str] = set()

    def add(target: str) -> None:
        # The longest prefix that is one of the package's modules (`a.b.func` -> `a.b`).
        while target and target not in modules:
            target = target.rpartition(".")[0]
        if target and target != name:
            found.add(target)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")
                base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for alias in node.names:
                full = f"{base}.{alias.name}"
                add(full if full in modules else base)  # `from . import x` names module x
    return found


def cycles(graph: dict[str, set[str]]) -> list[tuple[list[str], list[str]]]:
    """Per strongly connected component of more than one module (or a self-import): its modules,
    and one cycle through them."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[tuple[list[str], list[str]]] = []
    counter = [0]

    def visit(v: str) -> None:  # Tarjan's algorithm; the graph is small, recursion is fine
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph[v]:
                out.append((sorted(comp), one_cycle(graph, set(comp))))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def one_cycle(graph: dict[str, set[str]], comp: set[str]) -> list[str]:
    """A concrete path a -> ... -> a inside one strongly connected component (breadth first)."""
    start = min(comp)
    prev: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & comp):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(prev[path[-1]])
                    return [start] + path[::-1][1:] + [start] if len(path) > 1 else [start, v, start]
                if w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    return [start, start]


def main(argv: list[str]) -> int:
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    pkg_dir = argv[0] if argv else os.path.join(here, "runner", "ascend_finetune")
    modules = module_names(pkg_dir)
    graph = {name: imports_of(name, path, modules) for name, path in modules.items()}
    found = cycles(graph)
    for comp, c in found:
        print(f"import cycle among {len(comp)} modules ({', '.join(comp)}), e.g. " + " -> ".join(c))
    edges = sum(len(v) for v in graph.values())
    if found:
        print(f"check-python-imports: {len(found)} cycle(s) among {len(modules)} modules")
        return 1
    print(f"check-python-imports: no import cycle ({len(modules)} modules, {edges} imports between them)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
