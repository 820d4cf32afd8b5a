"""Entity merging: one entity per thing, whatever its case, alias or spelling.

Names are compared by a key (:func:`name_key`: case folded, punctuation and a leading
article dropped, a plural ``s`` dropped from the last word). Within a document,
:func:`merge_document` also joins an acronym with the name it abbreviates ("HTA" and
"Harbor Transit Authority"), a lone first word with the one longer name it starts
("Priya" and "Priya Shah"), and names within a small edit distance ("Elena Varga",
"Elena Vargas"; :func:`similar`, by RapidFuzz when installed). The store applies the
same rules across documents.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ragloom.graph.model import (
    DocumentGraph,
    Mention,
    MergedEntity,
    MergedRelation,
)

_ARTICLE = re.compile(r"^(the|a|an)\s+")
_NON_WORD = re.compile(r"[^\w\s\-]+|(?<!\w)-|-(?!\w)")
_SPACES = re.compile(r"\s+")
#: Fuzzy matches need at least this RapidFuzz ratio (0-100) and names this long.
FUZZY_RATIO = 92.0
FUZZY_MIN_CHARS = 6
#: Type names ranked by how specific they are; the most specific one of a merge wins.
_GENERIC_TYPES = ("concept", "phrase", "other", "")


def name_key(name: str) -> str:
    """The comparison key of a name: ``"The Harbor Bridges"`` -> ``"harbor bridge"``."""
    text = unicodedata.normalize("NFKC", name).casefold()
    text = _SPACES.sub(" ", _NON_WORD.sub(" ", text)).strip()
    text = _ARTICLE.sub("", text)
    words = text.split(" ")
    last = words[-1]
    if len(last) > 4 and last.endswith("ies"):
        words[-1] = last[:-3] + "y"
    elif len(last) > 3 and last.endswith("s") and not last.endswith(("ss", "us", "is")):
        words[-1] = last[:-1]
    return " ".join(words)


def name_prefix(key: str) -> str:
    """A short prefix of a key: fuzzy candidates are looked up among names sharing it."""
    return key[:3]


def similar(left: str, right: str) -> bool:
    """Whether two keys name the same thing despite a small spelling difference."""
    if left == right:
        return True
    if min(len(left), len(right)) < FUZZY_MIN_CHARS or name_prefix(left) != name_prefix(right):
        return False
    # Digits carry meaning (model numbers, years): "X2" and "X3" are different things.
    if re.sub(r"\D", "", left) != re.sub(r"\D", "", right):
        return False
    return _ratio(left, right) >= FUZZY_RATIO


def _ratio(left: str, right: str) -> float:
    try:
        from rapidfuzz import fuzz
    except ImportError:  # the stdlib's ratio is slower but gives comparable numbers
        from difflib import SequenceMatcher

        return 100.0 * SequenceMatcher(None, left, right).ratio()
    return float(fuzz.ratio(left, right))


def initials(key: str) -> str:
    words = [w for w in key.split(" ") if w not in ("of", "and", "for", "the", "de")]
    return "".join(w[0] for w in words) if len(words) > 1 else ""


def better_type(current: str, other: str) -> str:
    """The more specific of two entity types."""
    if current in _GENERIC_TYPES and other not in _GENERIC_TYPES:
        return other
    return current


@dataclass
class _Group:
    name: str
    type: str
    keys: set[str] = field(default_factory=set)
    aliases: list[str] = field(default_factory=list)
    mentions: dict[str, tuple[str, float]] = field(default_factory=dict)

    def add_alias(self, alias: str) -> None:
        if alias != self.name and alias not in self.aliases:
            self.aliases.append(alias)
        self.keys.add(name_key(alias))


class EntityIndex:
    """Groups of names that denote one entity, found by key, alias or fuzzy spelling."""

    def __init__(self) -> None:
        self.groups: list[_Group] = []
        self._by_key: dict[str, _Group] = {}

    def find(self, names: Iterable[str]) -> _Group | None:
        keys = [name_key(n) for n in names]
        for key in keys:
            if key in self._by_key:
                return self._by_key[key]
        for key in keys:
            for known, group in self._by_key.items():
                if similar(key, known):
                    return group
        return None

    def add(self, name: str, type_: str, aliases: Sequence[str]) -> _Group:
        group = self.find([name, *aliases])
        if group is None:
            group = _Group(name=name, type=type_)
            self.groups.append(group)
        else:
            group.type = better_type(group.type, type_)
            group.add_alias(name)
        group.keys.add(name_key(name))
        for alias in aliases:
            group.add_alias(alias)
        for key in group.keys:
            self._by_key.setdefault(key, group)
        return group

    def join(self, keep: _Group, gone: _Group) -> None:
        """Fold ``gone`` into ``keep`` (an alias found after both were made)."""
        if keep is gone:
            return
        keep.add_alias(gone.name)
        for alias in gone.aliases:
            keep.add_alias(alias)
        keep.type = better_type(keep.type, gone.type)
        for chunk_id, (evidence, weight) in gone.mentions.items():
            old = keep.mentions.get(chunk_id)
            keep.mentions[chunk_id] = (old[0], old[1] + weight) if old else (evidence, weight)
        keep.keys |= gone.keys
        self.groups.remove(gone)
        for key in keep.keys:
            self._by_key[key] = keep

    def canonical(self, name: str) -> str | None:
        group = self._by_key.get(name_key(name))
        return group.name if group is not None else None


def _join_short_forms(index: EntityIndex) -> None:
    """Acronyms, lone first words and leading parts join the one longer name they
    stand for."""
    multi = [g for g in index.groups if " " in name_key(g.name)]
    for group in list(index.groups):
        key = name_key(group.name)
        if " " in key or group not in index.groups:
            continue
        by_initials = [g for g in multi if initials(name_key(g.name)) == key and g is not group]
        by_first = [g for g in multi if name_key(g.name).split(" ")[0] == key and g is not group
                    and group.type not in _GENERIC_TYPES and g.type not in _GENERIC_TYPES]
        for candidates in (by_initials, by_first):
            if len(candidates) == 1:
                index.join(candidates[0], group)
                break
    # A name that opens exactly one longer name is its short form ("Lantern & Loom").
    for group in sorted(index.groups, key=lambda g: len(g.name)):
        key = name_key(group.name)
        if " " not in key or group.type in _GENERIC_TYPES or group not in index.groups:
            continue
        longer = [g for g in index.groups if g is not group and g.type not in _GENERIC_TYPES
                  and name_key(g.name).startswith(key + " ")]
        if len(longer) == 1:
            index.join(longer[0], group)


def merge_document(graph: DocumentGraph) -> tuple[list[MergedEntity], list[MergedRelation]]:
    """Entities merged across a document's chunks, and relations between them."""
    index = EntityIndex()
    for chunk in graph.chunks:
        for entity in chunk.entities:
            if not entity.name.strip() or not entity.evidence.strip():
                continue  # an entity without evidence is not kept
            group = index.add(entity.name.strip(), entity.type, entity.aliases)
            old = group.mentions.get(chunk.chunk_id)
            group.mentions[chunk.chunk_id] = ((old[0], old[1] + entity.weight) if old
                                              else (entity.evidence, entity.weight))
    _join_short_forms(index)
    entities = [MergedEntity(name=g.name, type=g.type, aliases=tuple(g.aliases),
                             mentions=tuple(Mention(chunk_id=c, evidence=e, weight=w)
                                            for c, (e, w) in g.mentions.items()))
                for g in index.groups if g.mentions]
    relations: list[MergedRelation] = []
    for chunk in graph.chunks:
        for relation in chunk.relations:
            source = index.canonical(relation.source)
            target = index.canonical(relation.target)
            if source is None or target is None or source == target:
                continue
            if not relation.evidence.strip():
                continue
            relations.append(MergedRelation(
                source=source, relation=relation.relation, target=target,
                chunk_id=chunk.chunk_id, evidence=relation.evidence, weight=relation.weight))
    return entities, relations
