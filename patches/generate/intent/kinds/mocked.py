"""``cuda-mocked``: the enclosing function (or class) replaces CUDA's own API with a stand-in
(``monkeypatch.setattr(torch.cuda, "is_available", lambda: True)``,
``@mock.patch("torch.cuda.device_count", return_value=2)``). It simulates CUDA on a machine
without it, so the CUDA devices it builds and expects (``torch.device("cuda", 3)`` must be
refused where the stand-in counts 2) are the simulated ones: made neutral, they name whatever
accelerator the test machine has, or raise on one with none (ultralytics' ``test_select_device``,
round 25).

A test that sets a CUDA device on an object (``model.device = th.device("cuda")``, "pretend to
be on the GPU") stands in for CUDA too: it builds no tensor there and checks what the code does
with a CUDA device, on the CPU machine it runs on (stable-baselines3's ``test_ppo_warnings``).
Made neutral, the object's device is the CPU there, and the check it makes fails.

So does a test that hands a CUDA device string on as data and asserts the same string back
(``EvaluatorConfig.from_cli(Namespace(device="cuda:1"))`` then ``assert cfg.device ==
"cuda:1"``: lm_eval's CLI test): what it checks is that the text passes through unchanged.
Made neutral, the text names another device (or, with none, the rewrite raises) and the
assert, which keeps the literal, fails.

And a library's call of CUDA's API that a test module of the tree replaces while it tests that
library module (sahi's tests set ``torch.cuda.is_available`` to steer its backend pick): made
neutral, the call no longer reads the stand-in, and the project's own tests fail (round 32); so
does a test that puts a fake ``torch`` with only ``cuda`` in ``sys.modules`` (funasr's CLI tests),
for every CUDA call of the modules it imports. A patch a class starts in ``setUp`` stands in for
each of its tests (round 33), and one a fixture makes stands in for every test that takes that
fixture (of its module or a ``conftest.py`` above it) and, for an ``autouse`` fixture, for every
test it runs for (liger-kernel's host-side configuration tests, round 35). A stand-in for the
accelerator's own API simulates a device as well: a test that sets ``current_accelerator``'s
``type`` to ``"cuda"`` keeps that text (llmcompressor's device-map test, round 37)."""

from __future__ import annotations

import ast
import doctest
import functools

from patches.generate.intent.nodes import called, last_name
from patches.generate.intent.paths import is_test_file
from patches.generate.intent.probe import Evidence, Probe

KIND = "cuda-mocked"
SUMMARY = (
    "the enclosing test stands in for CUDA (a mock of torch.cuda, a CUDA device it sets or asserts "
    "back), or the project's tests replace this CUDA call while they test its module"
)
_PATCHERS = ("setattr", "patch", "patch.object", "setitem")
_SET_UP = frozenset({"setUp", "setUpClass", "asyncSetUp", "setup_method", "setup_class"})
TORCH = "torch"  # the whole module: every CUDA call reads the stand-in
# the APIs whose stand-in simulates a device: CUDA's, and the accelerator's (a test that sets
# ``current_accelerator().type = "cuda"`` simulates CUDA through it)
_MODULES = ("torch.cuda", "torch.accelerator")
_REPLACED = tuple(f"{m}." for m in _MODULES)


def _replaces_torch(func: str, args: list[ast.expr]) -> bool:
    """``patch.dict(sys.modules, {"torch": fake})`` / ``monkeypatch.setitem(sys.modules,
    "torch", fake)``."""
    if len(args) < 2 or ast.unparse(args[0]) != "sys.modules":
        return False
    if func.endswith("patch.dict") and isinstance(args[1], ast.Dict):
        return any(isinstance(k, ast.Constant) and k.value == TORCH for k in args[1].keys)
    return func.endswith("setitem") and isinstance(args[1], ast.Constant) and args[1].value == TORCH


def detect(p: Probe) -> list[Evidence]:
    stand_in = _stand_in(p) or _replaced_by_tests(p)
    if stand_in:
        return [Evidence(KIND, p.stmt.lineno, stand_in)]
    echoed = _asserted_back(p)
    if echoed is not None:
        what = f"{p.outermost_function.name} asserts {p.node.value!r} back"
        return [Evidence(KIND, echoed.lineno, what)]
    for d in p.defs:  # a class by its decorators and set-up only: one test's mock is no other's
        nodes = [*d.decorator_list, *(_set_up(d) if isinstance(d, ast.ClassDef) else d.body)]
        for call in (c for n in nodes for c in ast.walk(n) if isinstance(c, ast.Call)):
            target = _patched(call)
            if target:
                return [Evidence(KIND, call.lineno, f"{d.name} replaces {target}")]
    return _fixture_mock(p)


def _fixture_mock(p: Probe) -> list[Evidence]:
    """The test holding the site takes a fixture (a parameter named after a ``@pytest.fixture``
    function of its module or of a ``conftest.py`` above it, or one that fixture takes), or its
    module or a ``conftest.py`` above it has an ``autouse`` fixture, that replaces CUDA's API."""
    test = p.outermost_function
    if test is None or not is_test_file(p.ctx.path):
        return []
    fixtures, autouse = _fixtures(p.ctx)
    todo, seen = [a.arg for a in test.args.args] + list(autouse), set()
    while todo:
        name = todo.pop()
        if name not in fixtures or name in seen:
            continue
        seen.add(name)
        takes, target, line = fixtures[name]
        if target:
            what = f"{test.name} takes the fixture {name}, which replaces {target}"
            return [Evidence(KIND, line, what)]
        todo += takes
    return []


@functools.lru_cache(maxsize=8)
def _fixtures(ctx) -> tuple[dict[str, tuple[list[str], str, int]], tuple[str, ...]]:
    """Once per file: the fixtures its tests can take (its own, then each ``conftest.py`` above
    it; the nearest definition of a name wins), name -> (the fixtures it takes, the CUDA API it
    replaces or "", that call's line), and the names of the ``autouse`` ones."""
    found: dict = {}
    for body in reversed(_fixture_sources(ctx)):
        found.update(
            (f.name, f)
            for f in body
            if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and _is_fixture(f)
        )
    out = {}
    for name, f in found.items():
        calls = (c for c in ast.walk(f) if isinstance(c, ast.Call))
        target, line = next(((t, c.lineno) for c in calls if (t := _patched(c))), ("", 0))
        out[name] = ([a.arg for a in f.args.args], target, line)
    return out, tuple(n for n, f in found.items() if _autouse(f))


def _fixture_sources(ctx) -> list[list[ast.stmt]]:
    """The module's statements, then those of each ``conftest.py`` above it, nearest first (the
    tree's; none without a tree)."""
    out = [ctx.tree.body]
    index = getattr(ctx, "tree_index", None)
    parts = ctx.path.split("/")[:-1]
    for i in range(len(parts), -1, -1) if index is not None else ():
        rel = "/".join([*parts[:i], "conftest.py"])
        tree = index.tree(rel) if rel != ctx.path and rel in index.files() else None
        if tree is not None:
            out.append(tree.body)
    return out


def _autouse(f: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(
        isinstance(d, ast.Call)
        and any(
            k.arg == "autouse" and isinstance(k.value, ast.Constant) and k.value.value is True
            for k in d.keywords
        )
        for d in f.decorator_list
    )


def _is_fixture(f: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    for d in f.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        if last_name(target) == "fixture":
            return True
    return False


def _replaced_by_tests(p: Probe) -> str:
    """``"<test file> replaces <name>"`` where the site calls CUDA's ``name`` in a module that
    is not a test, and a test module of the tree imports that module and replaces ``name``, or a
    doctest of the module does."""
    index, node = getattr(p.ctx, "tree_index", None), p.node
    if is_test_file(p.ctx.path):
        return ""
    name = called(p.ctx, node) or ""
    if not name.startswith("torch.cuda."):
        return ""
    if name in _doctest_mocks(p.ctx):
        return f"a doctest of this module replaces {name}"
    if index is None:
        return ""
    mocks = _mocks(index)
    for key in (name, TORCH):
        for test in mocks.get(key, ()):
            if index.imports(test, p.ctx.path):
                return f"{test} replaces {key} while it tests this module"
    return ""


@functools.lru_cache(maxsize=8)
def _doctest_mocks(ctx) -> frozenset[str]:
    """Once per file: what the doctests in the module's docstrings replace (rfdetr's ``>>> with
    patch("torch.cuda.device_count", return_value=4):`` over ``_cuda_training_device_indices``:
    its pytest runs them, ``--doctest-plus``, round 42)."""
    found = set()
    docs = [
        ast.get_docstring(n, clean=True) or ""
        for n in ctx.nodes
        if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    ]
    for doc in (d for d in docs if ">>>" in d and "torch.cuda" in d):
        try:  # a docstring doctest cannot read (an option on no example, odd indents)
            examples = doctest.DocTestParser().get_examples(doc)
            tree = ast.parse("\n".join(e.source for e in examples))
        except (ValueError, SyntaxError):
            continue
        found.update(t for c in ast.walk(tree) if isinstance(c, ast.Call) and (t := _patched(c)))
    return frozenset(found)


def _mocks(index) -> dict[str, list[str]]:
    """CUDA API name -> the test modules of the tree that replace it (once per tree)."""
    if "cuda-mocks" not in index.memo:
        found: dict[str, list[str]] = {}
        for rel in {*index.holding(b"torch.cuda"), *index.holding(b"sys.modules", b"torch")}:
            tree = index.tree(rel) if is_test_file(rel) else None
            for call in (
                c for c in ast.walk(tree or ast.Module([], [])) if isinstance(c, ast.Call)
            ):
                target = _patched(call)
                if target and rel not in found.setdefault(target, []):
                    found[target].append(rel)
        index.memo["cuda-mocks"] = found
    return index.memo["cuda-mocks"]


def _set_up(cls: ast.ClassDef) -> list[ast.stmt]:
    """The bodies of the methods that run before each of the class's tests (a patch started
    in ``setUp`` stands in for every test of the class: funasr's submodel-device tests)."""
    return [
        stmt
        for f in cls.body
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.name in _SET_UP
        for stmt in f.body
    ]


def _patched(call: ast.Call) -> str:
    """What a patching call replaces when it is CUDA's or the accelerator's API (``TORCH``
    where it replaces the ``torch`` module itself in ``sys.modules``: funasr's CLI tests hand a
    fake with only ``cuda``), else ``""``."""
    func = ast.unparse(call.func)
    if _replaces_torch(func, call.args):
        return TORCH
    if not call.args or not any(func.endswith(s) for s in _PATCHERS):
        return ""
    first = call.args[0]
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        return first.value if first.value.startswith(_REPLACED) else ""
    text = ast.unparse(first)
    module = next((m for m in _MODULES if text == m or text.endswith(f".{m}")), None)
    if module is None:
        return ""
    attr = call.args[1] if len(call.args) > 1 else None
    name = attr.value if isinstance(attr, ast.Constant) else "..."
    return f"{module}.{name}"


def _stand_in(p: Probe) -> str:
    """The site is the value a test function assigns to another object's attribute (not its
    own: ``self.device = "cuda"`` is where the test's tensors go)."""
    stmt, test = p.stmt, _test(p)
    if not isinstance(stmt, ast.Assign) or test is None or p.node is None:
        return ""
    if not all(_others(t) for t in stmt.targets):
        return ""
    if p.top is not stmt.value or _builds_on(p):
        return ""
    return f"{test.name} sets {ast.unparse(stmt.targets[0])[:40]} to a CUDA device"


def _builds_on(p: Probe) -> bool:
    """Between the site and its statement, a call other than ``torch.device``: a tensor built on
    the device (work there: ``observer.min_vals = torch.tensor(..., device="cuda")``), not the
    device itself standing in."""
    return any(
        isinstance(parent, ast.Call) and last_name(parent.func) != "device"
        for _, parent in p.climb()
    )


def _test(p: Probe) -> ast.AST | None:
    """The test function holding the site (its outermost function, named ``test...``)."""
    test = p.outermost_function
    return test if test is not None and test.name.startswith("test") else None


def _others(target) -> bool:
    owner = target.value if isinstance(target, ast.Attribute) else None
    return isinstance(owner, ast.Name) and owner.id not in ("self", "cls")


def _asserted_back(p: Probe) -> ast.AST | None:
    """The ``assert x == "cuda:1"`` (or ``assertEqual(x, "cuda:1")``) of the test function
    holding the site, a string, that compares with the site's own text."""
    node, test = p.node, _test(p)
    if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
        return None
    if test is None or _checking(p):
        return None
    for n in ast.walk(test):
        if isinstance(n, ast.Assert) and isinstance(n.test, ast.Compare):
            sides = [n.test.left, *n.test.comparators]
            if any(isinstance(o, ast.Eq) for o in n.test.ops) and _echoes(sides, node):
                return n
        elif isinstance(n, ast.Call) and last_name(n.func) == "assertEqual":
            if _echoes(n.args[:2], node):
                return n
    return None


def _checking(p: Probe) -> bool:
    """The site is itself in a check (``assert``, ``self.assertEqual(x.device.type, "cuda")``):
    the expectation, not the data handed on (gpytorch's device-type tests, round 23)."""
    if isinstance(p.stmt, ast.Assert):
        return True
    return any(
        isinstance(n, ast.Call) and last_name(n.func).startswith("assert") for _, n in p.climb()
    )


def _echoes(sides, node: ast.Constant) -> bool:
    """One side is the site's text and no side reads a device type (``x.device.type ==
    "cuda"`` checks where a value went, a device check the run makes neutral itself)."""
    if any(isinstance(s, ast.Attribute) and s.attr == "type" for s in sides):
        return False
    return any(
        s is not node and isinstance(s, ast.Constant) and s.value == node.value for s in sides
    )
