"""The commands and Python examples in the README and docs/ still match the code.

Documentation rots silently when an option or a function is renamed: every ``robojudge ...`` command in
a code block or in backticks must name existing sub-commands and options (checked against the CLI's
click tree, without running anything), and every Python example must parse, import names that exist,
and call imported functions with keywords they accept.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import shlex
import textwrap
from pathlib import Path
from typing import Any

import pytest
from typer.main import get_command

from robojudge.cli import build_app

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _commands(text: str) -> list[str]:
    """``robojudge ...`` command lines: in backticks, and in shell code blocks (continuations joined)."""
    text = text.replace("\\\n", " ")
    found = re.findall(r"`(robojudge [^`]+)`", text)
    for block in re.findall(r"```(?:bash|sh|console|shell|)\n(.*?)```", text, re.S):
        for line in block.splitlines():
            m = re.search(r"(?:^|&&\s*|\|\s*|\$\s*)(robojudge\s.*)$", line.strip())
            if m:
                found.append(m.group(1))
    return found


def _resolve(root: Any, tokens: list[str]) -> tuple[Any, list[str], list[str]]:
    """The click command ``tokens`` name, the sub-command path, and the tokens after it."""
    cmd, path = root, []
    rest = tokens
    while rest and hasattr(cmd, "commands"):
        sub = cmd.commands.get(rest[0])
        if sub is None:
            default = cmd.commands.get("suite")  # `robojudge judge SUITE ...`: the group's hidden default
            if default is not None and getattr(default, "hidden", False) and not rest[0].startswith("-"):
                return default, path, rest
            break
        cmd, path, rest = sub, [*path, rest[0]], rest[1:]
    return cmd, path, rest


def _source_text(path: Path) -> str:
    """The string literals of a Python file, one per line, each whole (implicitly joined parts joined;
    an f-string's replacement fields become ``X``), for :func:`_commands` to search."""
    texts = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parts = {id(v) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for v in node.values}
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            texts.append("".join(str(v.value) if isinstance(v, ast.Constant) else "X" for v in node.values))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in parts:
            texts.append(node.value)
    return "\n".join(t.replace("\n", " ") for t in texts)


def _command_problems(path: Path, root: Any, checked: list[str] | None = None) -> list[str]:
    """What is wrong with the commands of ``path``; each command checked is appended to ``checked``."""
    problems = []
    text = _source_text(path) if path.suffix == ".py" else path.read_text()
    for line in _commands(text):
        line = re.sub(r"\[[^\]]*\]", "", line.split(" #")[0]).strip()  # [optional parts], comments
        try:
            tokens = shlex.split(line)[1:]
        except ValueError:
            tokens = line.split()[1:]
        if not tokens or tokens[0] not in root.commands:
            # `robojudge reads it ...` in prose is no command; a lowercase word followed by an option is
            if len(tokens) > 1 and re.fullmatch(r"[a-z][a-z-]*", tokens[0]) and tokens[1].startswith("--"):
                problems.append(f"{path.name}: {line!r}: no command {tokens[0]!r}")
            continue
        cmd, sub_path, rest = _resolve(root, tokens)
        where = " ".join(["robojudge", *sub_path])
        if checked is not None:
            checked.append(line)
        if hasattr(cmd, "commands"):
            # a group: what follows must be a sub-command (shorthand such as `list|status` is prose)
            if rest and not rest[0].startswith("-") and not re.search(r"[|/.]|^[A-Z]", rest[0]):
                problems.append(f"{path.name}: {line!r}: {where} has no sub-command {rest[0]!r}")
            continue
        options = {"--help"}
        for p in cmd.params:
            options.update(p.opts)
            options.update(getattr(p, "secondary_opts", []))
        for t in rest:
            name = t.split("=", 1)[0]
            if name.startswith("--") and "/" not in name and name not in options:
                problems.append(f"{path.name}: {line!r}: {where} has no option {name}")
    return problems


def test_every_documented_command_and_option_exists() -> None:
    root = get_command(build_app())
    checked: list[str] = []
    problems = [p for doc in DOCS for p in _command_problems(doc, root, checked)]
    assert not problems, "\n".join(problems)
    assert len(checked) > 200  # the docs hold about 240: the search for them still finds them


def test_every_command_the_code_tells_users_to_run_exists() -> None:
    # Error messages and hints name commands too ("`robojudge weights fetch NAME`"): they must exist.
    root = get_command(build_app())
    checked: list[str] = []
    problems = [p for path in sorted((ROOT / "src" / "robojudge").rglob("*.py"))
                for p in _command_problems(path, root, checked)]
    assert not problems, "\n".join(problems)
    assert len(checked) > 150  # about 190 in the sources


def _python_blocks(path: Path) -> list[tuple[int, str]]:
    text = path.read_text()
    return [(text[:m.start()].count("\n") + 2, textwrap.dedent(m.group(1)))
            for m in re.finditer(r"```python\n(.*?)```", text, re.S)]


def _python_problems(path: Path, checked: list[str] | None = None) -> list[str]:
    problems = []
    for line, source in _python_blocks(path):
        if checked is not None:
            checked.append(f"{path.name}:{line}")
        where = f"{path.name}:{line}"
        try:
            tree = ast.parse(source)
        except SyntaxError as exc:
            problems.append(f"{where}: not valid Python: {exc}")
            continue
        # Names the example itself defines (an example of adding one) are not looked up.
        defined = {t.id for node in ast.walk(tree) if isinstance(node, ast.Assign)
                   for t in node.targets if isinstance(t, ast.Name)}
        imported: dict[str, Any] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("robojudge"):
                        importlib.import_module(alias.name)
            if not (isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("robojudge")):
                continue
            module = importlib.import_module(node.module)
            for alias in node.names:
                if alias.name in defined:
                    continue
                if hasattr(module, alias.name):
                    imported[alias.asname or alias.name] = getattr(module, alias.name)
                    continue
                try:
                    importlib.import_module(f"{node.module}.{alias.name}")
                except ImportError:
                    problems.append(f"{where}: {node.module} has no {alias.name}")
        for node in ast.walk(tree):
            called = isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            if not (called and node.func.id in imported):
                continue
            fn = imported[node.func.id]
            try:
                params = inspect.signature(fn).parameters
            except (TypeError, ValueError):
                continue
            if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
                continue
            problems += [f"{where}: {node.func.id}() takes no keyword {kw.arg!r}"
                         for kw in node.keywords if kw.arg is not None and kw.arg not in params]
    return problems


def test_every_python_example_imports_and_calls_what_exists() -> None:
    checked: list[str] = []
    problems = [p for doc in DOCS for p in _python_problems(doc, checked)]
    assert not problems, "\n".join(problems)
    assert len(checked) > 30  # the docs hold about 37 Python examples


@pytest.mark.parametrize(("text", "expected"), [
    ("`robojudge score s.jsonl --metrics all`", []),
    ("`robojudge score s.jsonl --no-such-option 3`", ["has no option --no-such-option"]),
    ("```bash\nrobojudge results export --db x \\\n    --format csv\n```", []),
    ("```bash\nrobojudge results exprot --db x\n```", ["has no sub-command 'exprot'"]),
    ("`robojudge judge SUITE --judge qwen --bogus`", ["has no option --bogus"]),
])
def test_the_command_check_can_fail(tmp_path: Path, text: str, expected: list[str]) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text(text + "\n")
    got = _command_problems(doc, get_command(build_app()))
    assert len(got) == len(expected) and all(e in g for e, g in zip(expected, got, strict=True)), got


def test_the_python_check_can_fail(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text("```python\nfrom robojudge.report import write_html_report, no_such_thing\n"
                   "write_html_report('db', 'out', manifest=None, bogus=1)\n```\n")
    got = _python_problems(doc)
    assert any("has no no_such_thing" in g for g in got) and any("no keyword 'bogus'" in g for g in got)


def test_the_check_reads_commands_split_over_source_lines(tmp_path: Path) -> None:
    source = tmp_path / "hint.py"
    source.write_text('def hint(m):\n    return (f"run `robojudge metrics "\n'
                      '            f"infoo {m}` to see how")\n')
    got = _command_problems(source, get_command(build_app()))
    assert len(got) == 1 and "robojudge metrics has no sub-command 'infoo'" in got[0], got
