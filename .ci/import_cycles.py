#!/usr/bin/env python3
"""Finds import circles between the modules of each crate of the workspace.

Each source file is one module. A file depends on another when it names an item of it through a
`crate::`, `super::` or `self::` path, or a path that starts with one of its child modules (in a
`use` line or inline). A name that a module only re-exports (`pub use other::Name`) is followed to
the module that defines it, so a parent that re-exports its children does not depend on them.

Three rules, all checked:
- Between the crates of the workspace, counting dev-dependencies (a benchmark or test of a lower
  crate that needs a higher one belongs to the higher one), the arrows go one way.
- Between rooms (the modules right below the crate root, a folder counting as one room), the
  arrows go one way.
- Inside a room, the files' arrows go one way too, except that a file may use what its folder's
  `mod.rs` (or any module above it) defines: that is how Rust shares a folder's private items.

Test modules (`#[cfg(test)] mod ... { }`) may use anything and are left out. Any strongly
connected group of more than one module or room is an import circle; the script lists each and
exits with status 1.
"""

import os
import re
import sys
import tomllib

CRATE_SOURCE_FOLDERS = [
    "core/src",
    "io-std/src",
    "io-uring/src",
    "sim/src",
    "tests/src",
    "tests/bench/src",
    "cli/src",
    "python/src",
]


def module_path_of(source_folder, file_path):
    relative = os.path.relpath(file_path, source_folder)[: -len(".rs")]
    parts = relative.split(os.sep)
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return tuple(parts)


def strip_comments_and_strings(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r'r#*"(?:.|\n)*?"#*', '""', text)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    text = re.sub(r"'(?:\\.|[^'\\])'", "' '", text)
    return re.sub(r"//[^\n]*", " ", text)


def expand_use_tree(tree):
    """Turns `a::{b, c::{d, e}}` into the list of full paths."""
    tree = re.sub(r"\s+", "", tree)
    brace = tree.find("{")
    if brace < 0:
        return [tree.split(" as ")[0]]
    prefix = tree[:brace]
    inner = tree[brace + 1 : tree.rfind("}")]
    pieces, depth, current = [], 0, ""
    for character in inner:
        if character == "," and depth == 0:
            pieces.append(current)
            current = ""
            continue
        depth += character == "{"
        depth -= character == "}"
        current += character
    pieces.append(current)
    paths = []
    for piece in pieces:
        if piece:
            for tail in expand_use_tree(piece):
                paths.append(prefix + tail)
    return paths


def absolute_path(path, current_module, modules):
    """Turns a path into segments from the crate root: `crate::`, `super::` and `self::` paths,
    and paths that start with a child module of the current one (`use child::Item`). Paths of
    other crates give None."""
    segments = [segment for segment in path.split("::") if segment]
    base = list(current_module)
    if not segments:
        return None
    if segments[0] == "crate":
        base = []
        segments = segments[1:]
    elif segments[0] in ("super", "self"):
        while segments and segments[0] in ("super", "self"):
            if segments[0] == "super":
                if not base:
                    return None
                base.pop()
            segments = segments[1:]
    elif tuple(base + segments[:1]) not in modules:
        return None
    return tuple(base + segments)


def scan_file(text, file_module, modules):
    """Yields (module path of the code, absolute path named, is_public_reexport)."""
    code = strip_comments_and_strings(text)
    inline_stack = []  # (module path, brace depth at which it closes, whether it is a test module)
    depth = 0
    position = 0
    token = re.compile(
        r"(?P<mod>(?P<test>#\[cfg\(test\)\]\s*)?\bmod\s+(?P<name>\w+)\s*\{)"
        r"|(?P<use>(?P<visibility>\bpub(?:\([^)]*\))?\s+)?\buse\s+(?P<tree>[^;]+);)"
        r"|(?P<path>(?<![\w:])\w+(?:::\w+)+)"
        r"|(?P<open>\{)|(?P<close>\})"
    )
    for match in token.finditer(code):
        current = inline_stack[-1][0] if inline_stack else file_module
        in_test = any(entry[2] for entry in inline_stack)
        if match.group("mod"):
            depth += 1
            inline_stack.append((current + (match.group("name"),), depth, bool(match.group("test"))))
            modules.add(current + (match.group("name"),))
        elif in_test and (match.group("use") or match.group("path")):
            continue
        elif match.group("use"):
            public = bool(match.group("visibility"))
            for path in expand_use_tree(match.group("tree")):
                absolute = absolute_path(path, current, modules)
                if absolute is not None:
                    yield current, absolute, public
        elif match.group("path"):
            absolute = absolute_path(match.group("path"), current, modules)
            if absolute is not None:
                yield current, absolute, False
        elif match.group("open"):
            depth += 1
        elif match.group("close"):
            if inline_stack and inline_stack[-1][1] == depth:
                inline_stack.pop()
            depth -= 1
        position = match.end()


def analyse_crate(source_folder):
    files = {}
    modules = set()
    for folder, _, names in os.walk(source_folder):
        for name in names:
            if name.endswith(".rs"):
                path = os.path.join(folder, name)
                files[module_path_of(source_folder, path)] = path
    modules.update(files)
    references = {}
    reexports = {}  # (module, name) -> absolute path it stands for
    for module, path in files.items():
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        found = list(scan_file(text, module, modules))
        references[module] = [absolute for _, absolute, _ in found]
        for code_module, absolute, public in found:
            if public and code_module == module and absolute[-1] not in ("*", "self"):
                reexports[(module, absolute[-1])] = absolute

    def defining_module(absolute, seen=()):
        """The file module that defines what `absolute` names."""
        for length in range(len(absolute), -1, -1):
            prefix = absolute[:length]
            if prefix in files:
                rest = absolute[length:]
                if rest and (prefix, rest[0]) in reexports and absolute not in seen:
                    target = reexports[(prefix, rest[0])] + rest[1:]
                    return defining_module(target, seen + (absolute,))
                return prefix
        return None

    edges = {module: set() for module in files}
    for module, found in references.items():
        for absolute in found:
            target = defining_module(absolute)
            # A module may use what the modules above it define.
            if target is not None and target != module and module[: len(target)] != target:
                edges[module].add(target)
    return files, edges


def room_edges(edges):
    """The arrows between rooms: each module stands for the room it belongs to."""
    rooms = {module: module[:1] for module in edges}
    between = {room: set() for room in rooms.values()}
    for module, targets in edges.items():
        for target in targets:
            if rooms[target] != rooms[module] and rooms[target] != ():
                between[rooms[module]].add(rooms[target])
    return between


def strongly_connected(edges):
    index, low, on_stack, stack, groups = {}, {}, set(), [], []
    counter = [0]

    def visit(node):
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for neighbour in sorted(edges[node]):
            if neighbour not in index:
                visit(neighbour)
                low[node] = min(low[node], low[neighbour])
            elif neighbour in on_stack:
                low[node] = min(low[node], index[neighbour])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            groups.append(group)

    sys.setrecursionlimit(10000)
    for node in sorted(edges):
        if node not in index:
            visit(node)
    return [group for group in groups if len(group) > 1]


def dependency_names(manifest):
    """Every dependency a manifest names, in any table: normal, dev, build, per target."""
    names = set()
    for key, value in manifest.items():
        if key in ("dependencies", "dev-dependencies", "build-dependencies") and isinstance(value, dict):
            names.update(value)
        elif key == "target" and isinstance(value, dict):
            for table in value.values():
                names.update(dependency_names(table))
    return names


def crate_edges(root):
    """The arrows between the workspace's crates, by package name."""
    manifests = {}
    for folder in CRATE_SOURCE_FOLDERS:
        path = os.path.join(root, os.path.dirname(folder), "Cargo.toml")
        if os.path.isfile(path):
            with open(path, "rb") as handle:
                manifest = tomllib.load(handle)
            manifests[manifest["package"]["name"]] = manifest
    return {
        name: {other for other in dependency_names(manifest) if other in manifests and other != name}
        for name, manifest in manifests.items()
    }


def name_of(module):
    return "::".join(module) if module else "crate"


def detects_a_known_circle():
    """Runs the analysis on a tiny crate with one circle, one re-export and one inline test
    module, so that a checker that stopped seeing circles cannot pass in silence."""
    import tempfile

    sources = {
        "lib.rs": "mod a;\nmod b;\nmod c;\npub use a::Thing;\n",
        "a.rs": "use crate::b::other;\npub struct Thing;\n",
        "b.rs": "pub fn other() { let _ = super::a::Thing; }\n",
        "c.rs": "use crate::Thing;\n#[cfg(test)]\nmod tests {\n    use crate::b::other;\n}\n",
    }
    with tempfile.TemporaryDirectory() as folder:
        for name, text in sources.items():
            with open(os.path.join(folder, name), "w", encoding="utf-8") as handle:
                handle.write(text)
        _, edges = analyse_crate(folder)
    groups = [sorted(group) for group in strongly_connected(edges)]
    return groups == [[("a",), ("b",)]] and edges[("c",)] == {("a",)}


def main():
    if not detects_a_known_circle():
        print("import_cycles.py: the checker no longer finds a known circle; fix the checker")
        return 2
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    circles = 0
    crates = crate_edges(root)
    for group in strongly_connected(crates):
        circles += 1
        print(f"workspace: dependency circle between crates {', '.join(sorted(group))}")
        for crate in sorted(group):
            print(f"    {crate} -> {', '.join(sorted(set(group) & crates[crate]))}")
    for folder in CRATE_SOURCE_FOLDERS:
        source_folder = os.path.join(root, folder)
        if not os.path.isdir(source_folder):
            continue
        _, edges = analyse_crate(source_folder)
        for kind, graph in (("rooms", room_edges(edges)), ("modules", edges)):
            for group in strongly_connected(graph):
                circles += 1
                members = set(group)
                names = ", ".join(sorted(name_of(member) for member in group))
                print(f"{folder}: import circle between {kind} {names}")
                for member in sorted(group):
                    inside = sorted(name_of(target) for target in graph[member] if target in members)
                    print(f"    {name_of(member)} -> {', '.join(inside)}")
    if circles:
        print(f"{circles} import circle(s) found")
        return 1
    print("no import circles")
    return 0


if __name__ == "__main__":
    sys.exit(main())
