"""The project carries its own documentation and refers to nothing outside itself.

* Every generated block of README.md and docs/*.md equals a fresh regeneration from the code
  (``python tools/env_docs.py``), and each page holds the blocks it is built around.
* Every relative link of every Markdown file resolves to a file inside the repository, and a
  ``#anchor`` exists in the target file (GitHub's heading slugs).
* No tracked text file refers to documents outside the repository (the maintainers' shared
  folder and its rule, design and style notes).
* Citations in code and docs point to what exists. The convention: a rule clause is cited as
  ``docs/rules.md R6.1`` or a plain ``R6.1`` (every clause number is a heading of docs/rules.md);
  any other section as ``docs/api.md#observation`` (a heading anchor); a numbered section as
  ``docs/<page>.md §N`` (a heading numbered ``N``). Rule test names cite clauses too
  (``test_r7_1_...`` is R7.1).
* Each generated table lives on exactly one page, and the documentation site's pages are in its
  navigation (mkdocs.yml); every benchmark card of docs/cards/ is linked from the results page.
  (The ```python examples and ```bash commands of README.md and docs/*.md run in
  tests/test_readme.py, each with the claims of the text around it.)
"""

from __future__ import annotations

import ast
import inspect
import re
import subprocess
import tempfile
from functools import cache
from pathlib import Path

import pytest

from tools import env_docs as docs

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
THIS = Path(__file__).resolve().relative_to(ROOT).as_posix()

#: The blocks each documentation page is built around (README's: tests/test_readme.py).
PAGE_BLOCKS = {
    "rules.md": {"options", "presets"},
    "api.md": {"cards", "phases", "view_fields", "state_keys", "events", "state"},
    "environment.md": {"env_summary", "env_arguments", "observation", "actions", "env_versions"},
    "ladder.md": {"shipped_ladder", "shipped_ladder_commands"},
}


@cache
def tracked_files() -> tuple[str, ...]:
    """Repository files: tracked by git, plus the Markdown pages of docs/ and of the root (new
    pages before their first commit)."""
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
    files = {f for f in out.stdout.decode().split("\0") if f and (ROOT / f).is_file()}
    files |= {p.relative_to(ROOT).as_posix() for p in (*DOCS.rglob("*.md"), *ROOT.glob("*.md"))}
    return tuple(sorted(files))


def markdown_files() -> list[str]:
    return [f for f in tracked_files() if f.endswith(".md")]


def doc_pages() -> list[Path]:
    return sorted(DOCS.glob("*.md"))


def read(rel: str) -> str | None:
    """A tracked file's text, ``None`` for a binary file."""
    data = (ROOT / rel).read_bytes()
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


# ------------------------------------------------------------------------- Markdown helpers
_FENCE = re.compile(r"^(```|~~~)")


def prose_lines(text: str) -> list[str]:
    """The lines of a Markdown text outside fenced code blocks, inline code spans blanked."""
    lines, fenced = [], False
    for line in text.splitlines():
        if _FENCE.match(line.lstrip()):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(re.sub(r"`[^`]*`", "``", line))
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: links and tags reduced to their text, lower case, every
    character but letters, digits, spaces, ``-`` and ``_`` dropped, spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def headings(text: str) -> list[str]:
    """The heading texts of a Markdown text, in order (fenced code excluded)."""
    found, fenced = [], False
    for line in text.splitlines():
        if _FENCE.match(line.lstrip()):
            fenced = not fenced
        elif not fenced and (m := re.match(r"#{1,6} +(.+?) *#* *$", line)):
            found.append(m.group(1))
    return found


@cache
def anchors(rel: str) -> frozenset[str]:
    """Every anchor of a Markdown file: heading slugs (repeats get ``-1``, ``-2``, ... as on
    GitHub) and explicit ``<a id=...>`` / ``<a name=...>``."""
    text = (ROOT / rel).read_text(encoding="utf-8")
    seen: dict[str, int] = {}
    out = set()
    for heading in headings(text):
        base = slug(heading)
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    out |= set(re.findall(r"<a\s+(?:id|name)=\"([^\"]+)\"", text))
    return frozenset(out)


_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_REF_LINK = re.compile(r"^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")


def links(text: str) -> list[str]:
    """The link and image targets of a Markdown text (inline and reference definitions)."""
    found = []
    for line in prose_lines(text):
        found += _LINK.findall(line)
        if m := _REF_LINK.match(line):
            found.append(m.group(1))
    return found


def check_target(source: str, target: str) -> str | None:
    """Why a link target of ``source`` (a repository path) is broken, or ``None``."""
    if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I):  # https:, mailto:, ...
        return None
    path, _, anchor = target.partition("#")
    if path.startswith("/"):
        return "an absolute path is not portable"
    where = (ROOT / source).parent / path if path else ROOT / source
    resolved = where.resolve()
    if not resolved.is_relative_to(ROOT):
        return "points outside the repository"
    if not resolved.exists():
        return "no such file"
    rel = resolved.relative_to(ROOT).as_posix()
    if rel not in tracked_files() and not resolved.is_dir():
        return "not a file of the repository (untracked)"
    if anchor and rel.endswith(".md") and anchor not in anchors(rel):
        return f"no heading with anchor #{anchor} in {rel}"
    return None


# ------------------------------------------------------------------------ generated blocks
def test_every_page_has_its_blocks_and_every_generator_is_used() -> None:
    assert {p.name for p in doc_pages()} >= set(PAGE_BLOCKS)
    used = set(docs.block_names((ROOT / "README.md").read_text(encoding="utf-8")))
    for name, blocks in PAGE_BLOCKS.items():
        present = docs.block_names((DOCS / name).read_text(encoding="utf-8"))
        assert blocks <= set(present), (name, blocks - set(present))
        used |= set(present)
    assert used == set(docs.GENERATORS), set(docs.GENERATORS) - used


@pytest.mark.parametrize("page", ["README.md", *(p.name for p in doc_pages())])
def test_generated_blocks_are_current(page: str) -> None:
    path = ROOT / page if page == "README.md" else DOCS / page
    text = path.read_text(encoding="utf-8")
    assert docs.render(text) == text, f"{page} is stale: run python tools/env_docs.py"
    for name in docs.block_names(text):  # a block is never left empty
        body = text.split(f"<!-- BEGIN generated:{name} -->\n", 1)[1].split("<!-- END", 1)[0]
        assert body.strip(), (page, name)


def test_generated_values_come_from_the_code() -> None:
    from uno_mk_env import actions, uno_mario_kart_v0
    from uno_mk_env.engine import observation
    from uno_mk_env.envs.aec import UnoMarioKartEnv

    summary = dict(re.findall(r"^\| ([^|]+?) \| (.+?) \|$", docs.env_summary(), re.M))
    # PettingZoo's pages: the shape of one action (a Discrete sample is a scalar), its range
    space = uno_mario_kart_v0.env().action_space("player_0")
    assert summary["Action Shape"] == str(space.shape) == "()"
    assert summary["Action Values"].startswith(f"[0, {space.n - 1}] ")
    assert f"Discrete({actions.NUM_ACTIONS})" in summary["Action Values"]
    assert summary["Observation Shape"] == f"({observation.OBS_SIZE},)"
    assert summary["State Shape"] == f"({observation.STATE_SIZE},)"
    assert summary["Num Agents"] == "2–10"
    assert summary["Parallel API"] == "No"
    assert UnoMarioKartEnv.metadata["name"] in summary["Import"]
    arguments = docs.env_arguments()
    assert "| `max_steps` | `2000` |" in arguments and "| `reward` | `\"win\"` |" in arguments
    assert "| `illegal_reward` | `-1.0` |" in arguments


def test_the_generated_signature_is_the_env_call_with_its_defaults() -> None:
    """The signature on docs/environment.md is a valid call of ``env()`` naming every argument
    with its real default, in lines that fit the page's code column (no horizontal scroll)."""
    from uno_mk_env.envs.aec import UnoMarioKartEnv  # the env extra, as the page's other blocks

    block = docs.env_signature()
    code = block.removeprefix("```py\n").removesuffix("\n```")
    assert all(len(line) <= docs.SIGNATURE_WIDTH for line in code.splitlines())
    call = ast.parse(code, mode="eval").body
    assert isinstance(call, ast.Call) and ast.unparse(call.func) == "uno_mario_kart_v0.env"
    given = {k.arg: ast.literal_eval(k.value) for k in call.keywords if k.arg is not None}
    params = inspect.signature(UnoMarioKartEnv.__init__).parameters
    expected = {n: p.default for n, p in params.items() if p.default is not p.empty}
    expected["illegal_reward"] = -1.0
    assert given == expected
    assert [k.arg for k in call.keywords][-1] is None  # **rule_options last
    assert block in docs.env_arguments()


def test_render_rewrites_any_block_and_names_an_unknown_one() -> None:
    text = "intro\n<!-- BEGIN generated:presets -->\nold\n<!-- END generated:presets -->\nend\n"
    out = docs.render(text)
    assert out.startswith("intro\n<!-- BEGIN generated:presets -->\n| preset |")
    assert out.endswith("<!-- END generated:presets -->\nend\n") and "old" not in out
    assert docs.render(out) == out
    with pytest.raises(KeyError, match="'nope'"):
        docs.render("<!-- BEGIN generated:nope -->\n<!-- END generated:nope -->")


def test_main_regenerates_the_files_it_is_given_and_check_reports_stale_ones() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "page.md"
        page.write_text("<!-- BEGIN generated:phases -->\n<!-- END generated:phases -->\n")
        assert docs.main([str(page), "--check"]) == 1
        assert docs.main([str(page)]) == 0
        assert "| `challenge` |" in page.read_text()
        assert docs.main([str(page), "--check"]) == 0


# ---------------------------------------------------------------------------------- links
@pytest.mark.parametrize("source", markdown_files())
def test_relative_links_resolve_inside_the_repository(source: str) -> None:
    text = (ROOT / source).read_text(encoding="utf-8")
    broken = [(t, why) for t in links(text) if (why := check_target(source, t))]
    assert not broken, f"{source}: {broken}"


def test_link_checker_catches_what_it_should() -> None:
    assert slug("R6.1 When a W4 is legal") == "r61-when-a-w4-is-legal"
    assert slug("Sampling hidden cards: from_view and `determinize`") == (
        "sampling-hidden-cards-from_view-and-determinize")
    assert slug("[Usage](#usage) · Rules") == "usage--rules"
    assert links("[a](x.md) `[b](y.md)` ![c](img.png)\n```\n[d](z.md)\n```\n[e]: f.md") == [
        "x.md", "img.png", "f.md"]
    assert check_target("docs/rules.md", "api.md#card-kinds") is None
    assert check_target("docs/rules.md", "#r33-start-card") is None
    assert check_target("README.md", "docs/rules.md#no-such-heading")
    assert check_target("README.md", "../outside.md") == "points outside the repository"
    assert check_target("README.md", "missing.md") == "no such file"
    assert check_target("docs/api.md", "https://example.org/x") is None


# ------------------------------------------------------------------- outside references
#: Names of documents that live outside the repository (the maintainers' shared folder).
OUTSIDE = re.compile(r"\.\./shared|/work/shared|\b(?:RULES|DESIGN|STYLE)\.md|\bDESIGN[ ]§")
#: Files with outside references whose owners have not swept them yet (see the report of the
#: docs change); each one passes as soon as it is swept.
PENDING_SWEEP: set[str] = set()
TEXT_FILES = [f for f in tracked_files() if f != THIS and read(f) is not None]


@pytest.mark.parametrize("rel", [
    pytest.param(f, marks=pytest.mark.xfail(
        strict=False, reason="sweep of files owned by others pending")) if f in PENDING_SWEEP
    else f for f in TEXT_FILES
])
def test_no_reference_outside_the_repository(rel: str) -> None:
    hits = [f"{rel}:{i}: {line.strip()}" for i, line in enumerate(read(rel).splitlines(), 1)
            if OUTSIDE.search(line)]
    assert not hits, "\n".join(hits)


def test_the_outside_reference_check_sees_every_kind_of_file() -> None:
    kinds = {Path(f).suffix or Path(f).name for f in TEXT_FILES}
    assert {".py", ".md", ".toml", ".ipynb", "Makefile", "run"} <= kinds, kinds
    # The samples are put together here so that this file itself names no outside document.
    rules, design, style = (f"{name}.md" for name in ("RULES", "DESIGN", "STYLE"))
    assert all(OUTSIDE.search(s) for s in (
        f"see ../{'shared'}/{rules}", f"({design} §3)", style, f"{design[:-3]} §7", f"{rules} R6"))
    assert not OUTSIDE.search("docs/rules.md R6.1, docs/api.md#observation")


# ----------------------------------------------------------------------------- citations
def clause_headings() -> set[str]:
    """The clause numbers (``R6``, ``R6.1``) that are headings of docs/rules.md."""
    text = (DOCS / "rules.md").read_text(encoding="utf-8")
    return {m.group(1) for h in headings(text) if (m := re.match(r"(R\d+(?:\.\d+)?)\b", h))}


_DOC_CITE = re.compile(
    r"\bdocs/(?P<page>[\w-]+\.md)(?:#(?P<anchor>[\w-]+)|(?P<sep>,? +)(?:§ ?(?P<section>\d+)"
    r"|(?P<clause>R\d+(?:\.\d+)?)\b))?"
)
_SUBCLAUSE = re.compile(r"\bR\d+\.\d+\b")
_TEST_NAME = re.compile(r"^def (test_(?:r\d+(?:_\d(?=_))?_)+)", re.M)


def citations(text: str) -> list[tuple[str, str | None, str | None, str | None]]:
    """``(page, anchor, section, clause)`` of every ``docs/<page>.md`` citation of a text."""
    return [(m["page"], m["anchor"], m["section"], m["clause"]) for m in _DOC_CITE.finditer(text)]


def check_citation(page: str, anchor: str | None, section: str | None,
                   clause: str | None) -> str | None:
    """Why a ``docs/<page>.md`` citation does not point to anything, or ``None``."""
    path = DOCS / page
    if not path.is_file():
        return "no such page"
    if anchor and anchor not in anchors(f"docs/{page}"):
        return f"no heading with anchor #{anchor}"
    if section and not any(re.match(rf"(§ ?)?{section}[. ]", h)
                           for h in headings(path.read_text(encoding="utf-8"))):
        return f"no section numbered {section}"
    if clause and (page != "rules.md" or clause not in clause_headings()):
        return f"no clause {clause} in docs/rules.md"
    return None


CODE_AND_DOCS = [f for f in TEXT_FILES if f.endswith((".py", ".md", ".ipynb"))]


@pytest.mark.parametrize("rel", CODE_AND_DOCS)
def test_doc_citations_point_to_existing_sections(rel: str) -> None:
    text = read(rel)
    bad = [(c, why) for c in citations(text) if (why := check_citation(*c))]
    bad += [(c, "no such clause in docs/rules.md") for c in set(_SUBCLAUSE.findall(text))
            if c not in clause_headings()]
    if rel.startswith("tests/test_rules_"):
        for name in _TEST_NAME.findall(text):
            for major, minor in re.findall(r"r(\d+)(?:_(\d)(?=_))?", name[5:]):
                clause = f"R{major}.{minor}" if minor else f"R{major}"
                if clause not in clause_headings():
                    bad.append((name, f"cites {clause}, not a clause of docs/rules.md"))
    assert not bad, f"{rel}: {bad}"


def test_citation_checker_catches_what_it_should() -> None:
    assert {f"R{n}" for n in range(1, 11)} <= clause_headings()
    assert {"R3.3", "R4.2", "R6.1", "R7.4", "R10.3"} <= clause_headings()
    assert citations("(docs/rules.md R6.1; docs/api.md#observation, docs/api.md)") == [
        ("rules.md", None, None, "R6.1"), ("api.md", "observation", None, None),
        ("api.md", None, None, None)]
    assert check_citation("rules.md", None, None, "R6.1") is None
    assert check_citation("api.md", "observation", None, None) is None
    assert check_citation("rules.md", None, None, "R6.9")
    assert check_citation("api.md", "no-such-section", None, None)
    assert check_citation("api.md", None, "3", None) == "no section numbered 3"
    assert check_citation("design.md", None, None, None) == "no such page"
    assert _SUBCLAUSE.findall("R6.1 and R10.3, not R7 or GS") == ["R6.1", "R10.3"]
    names = _TEST_NAME.findall("def test_r9_r10_3_stalemate():\ndef test_r5_skip():\n")
    assert names == ["test_r9_r10_3_", "test_r5_"]


# ------------------------------------------------------------------------ one page per table
def markdown_pages() -> dict[str, str]:
    """README.md and every Markdown page under docs/, by repository path."""
    pages = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
    return {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8") for p in pages}


@pytest.mark.parametrize("name", list(docs.GENERATORS))
def test_each_generated_table_is_generated_into_exactly_one_page(name: str) -> None:
    pages = [rel for rel, text in markdown_pages().items() if name in docs.block_names(text)]
    assert len(pages) == 1, (name, pages)


def site_nav() -> list[str]:
    """The pages of mkdocs.yml's nav (its ``- Title: page.md`` lines), in order."""
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    return re.findall(r"^\s*- [^:\n]+: (\S+\.md)$", text, re.M)


def test_every_site_page_is_in_the_nav_and_every_card_is_linked() -> None:
    """Every page of docs/ but the benchmark cards is in the site's navigation (each once), and
    every card is linked from docs/results.md, so no page is out of reach."""
    nav = site_nav()
    assert len(nav) == len(set(nav))
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    cards = {p for p in pages if p.startswith("cards/")}
    assert set(nav) == pages - cards
    linked = set(links((DOCS / "results.md").read_text(encoding="utf-8")))
    assert cards and cards <= linked, sorted(cards - linked)
