"""How a search query is read, how a match is judged exact, and the snippet shown for a hit.

Shared by the index (``search_query``), the linear scan (``search_scan``) and the CLI, and kept
free of pydantic-ai so that ``deep-tui search`` against an up-to-date index starts fast.
No Textual here.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from tui.base.redaction import redact
from tui.text.terminal_text import CONTROL_CHARACTERS, encodable

HIGHLIGHT_START = "\x02"
HIGHLIGHT_END = "\x03"
SNIPPET_CHARS = 160

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f]+")
"""Kana, CJK ideographs and Hangul: scripts whose words are often one or two characters long."""
_WORD = re.compile(r"\w")


def clean(text: str) -> str:
    """Text as indexed and shown: control characters (the ones :mod:`tui.text.terminal_text` keeps off the
    terminal — terminal escapes among them — and our highlight marks) become spaces, so they neither join
    words in the index nor show as pictures in snippets; lone surrogates are replaced; known secrets are
    redacted (the index must not find a key a provider echoed)."""
    return encodable(CONTROL_CHARACTERS.sub(" ", redact(text)))


def fold(text: str) -> str:
    """Case-insensitive, accent-sensitive comparison form: what SQLite's trigram tokenizer folds too."""
    return unicodedata.normalize("NFC", text).lower()


@dataclass(frozen=True)
class Query:
    """A query as typed: its terms (each must occur) and the whole text (an exact occurrence ranks first)."""

    terms: tuple[str, ...]
    text: str
    """The terms joined by single spaces: a pasted line of code or a phrase, as typed."""


def parse_query(query: str) -> Query:
    """Words separated by white space, each taken literally — backslashes and quotes inside a word are
    part of it (``C:\\Users\\x.log``, ``debug("%s``). A ``"`` that starts a word opens a phrase, closed by
    a ``"`` that ends a word (``"retry budget"``); without one, the quote is just a character."""
    words = query.split()
    terms: list[str] = []
    position = 0
    while position < len(words):
        word = words[position]
        if word.startswith('"'):
            closing = next((end for end in range(position, len(words))
                            if words[end].endswith('"') and (end > position or len(words[end]) > 1)), None)
            if closing is not None:
                phrase = " ".join(words[position:closing + 1])[1:-1].strip()
                if phrase:
                    terms.append(" ".join(phrase.split()))
                position = closing + 1
                continue
        terms.append(word)
        position += 1
    return Query(tuple(terms), " ".join(terms))


def query_terms(query: str) -> list[str]:
    """The terms of ``query`` (see :func:`parse_query`); every term must occur (AND)."""
    return list(parse_query(query).terms)


def is_cjk_word(term: str) -> bool:
    """A one- or two-character word written in CJK characters (looked up in the index's CJK table)."""
    return 0 < len(term) <= 2 and _CJK.fullmatch(term) is not None


def cjk_grams(text_folded: str) -> set[str]:
    """Every CJK character and pair of adjacent CJK characters in ``text_folded``."""
    grams: set[str] = set()
    if text_folded.isascii():
        return grams
    for run in _CJK.findall(text_folded):
        grams.update(run)
        grams.update(run[index:index + 2] for index in range(len(run) - 1))
    return grams


def matches(text_folded: str, terms_folded: list[str]) -> bool:
    return all(term in text_folded for term in terms_folded)


def _whole(text_folded: str, term_folded: str) -> bool:
    """``term_folded`` occurs in ``text_folded`` not glued to a longer identifier on either side."""
    start = text_folded.find(term_folded)
    word_start = bool(_WORD.match(term_folded[:1]))
    word_end = bool(_WORD.match(term_folded[-1:]))
    while start >= 0:
        stop = start + len(term_folded)
        before_ok = not word_start or start == 0 or not _WORD.match(text_folded[start - 1])
        after_ok = not word_end or stop == len(text_folded) or not _WORD.match(text_folded[stop])
        if before_ok and after_ok:
            return True
        start = text_folded.find(term_folded, start + 1)
    return False


def exactness(text_folded: str, query: Query) -> int:
    """0: the whole query occurs as typed, as whole words; 1: every term does, as a whole word or
    identifier; 2: the terms occur only inside longer words (``parse_config`` in ``reparse_config_cache``)."""
    folded_terms = [fold(term) for term in query.terms]
    if not all(_whole(text_folded, term) for term in folded_terms):
        return 2
    if len(folded_terms) > 1 and not _whole(text_folded, fold(query.text)):
        return 1
    return 0


def make_snippet(text: str, terms: list[str], width: int = SNIPPET_CHARS) -> str:
    """About ``width`` characters of ``text`` on one line around the first term found, every term
    occurrence in it wrapped in :data:`HIGHLIGHT_START` … :data:`HIGHLIGHT_END`."""
    folded = fold(text)
    folded_terms = [fold(term) for term in terms if term]
    positions = [folded.find(term) for term in folded_terms]
    found = [position for position in positions if position >= 0]
    if len(folded) != len(text):  # folding changed lengths (rare): positions are approximate
        found = [min(position, len(text)) for position in found]
    first = min(found) if found else 0
    start = max(0, first - width // 3)
    stop = min(len(text), start + width)
    window = " ".join(text[start:stop].split())
    prefix = "…" if start > 0 else ""
    suffix = "…" if stop < len(text) else ""
    return prefix + highlight(window, folded_terms) + suffix


def make_excerpt(text: str, terms: list[str], *, context_lines: int = 5, max_chars: int = 1_500) -> str:
    """The first line holding a term (one holding all of them, if any) with ``context_lines`` lines each
    side, verbatim (no marks: values stay copyable), capped at ``max_chars``."""
    lines = text.splitlines() or [text]
    folded_terms = [fold(term) for term in terms if term]
    folded_lines = [fold(line) for line in lines]
    number = next((n for n, line in enumerate(folded_lines) if all(term in line for term in folded_terms)), None)
    if number is None:
        number = next((n for n, line in enumerate(folded_lines) if any(term in line for term in folded_terms)), 0)
    start, stop = max(0, number - context_lines), min(len(lines), number + context_lines + 1)
    excerpt = "\n".join(lines[start:stop])
    if len(excerpt) > max_chars:
        focus = excerpt.find(lines[number][:80]) if lines[number] else 0
        begin = max(0, min(focus - max_chars // 3, len(excerpt) - max_chars))
        excerpt = ("…" if begin else "") + excerpt[begin:begin + max_chars] + "…"
    return excerpt


def highlight(text: str, folded_terms: list[str]) -> str:
    """Wrap each occurrence of a term in the highlight marks (longest terms first, no overlaps)."""
    folded = fold(text)
    if len(folded) != len(text) or not folded_terms:
        return text
    marks = [False] * len(text)
    for term in sorted(set(folded_terms), key=len, reverse=True):
        start = folded.find(term)
        while start >= 0 and term:
            for position in range(start, start + len(term)):
                marks[position] = True
            start = folded.find(term, start + len(term))
    out: list[str] = []
    inside = False
    for character, marked in zip(text, marks, strict=True):
        if marked and not inside:
            out.append(HIGHLIGHT_START)
            inside = True
        elif not marked and inside:
            out.append(HIGHLIGHT_END)
            inside = False
        out.append(character)
    if inside:
        out.append(HIGHLIGHT_END)
    return "".join(out)


def plain_snippet(snippet: str, start: str = "«", end: str = "»") -> str:
    """A snippet with its highlight marks as visible characters (for the agent and the CLI)."""
    return snippet.replace(HIGHLIGHT_START, start).replace(HIGHLIGHT_END, end)
