"""PowerPoint with python-pptx (extra ``office``): one block per slide, starting
with a ``Slide N`` marker, holding its text frames, tables and speaker notes.

``page_starts`` marks where each slide starts, so chunks know their slide.
"""

from __future__ import annotations

import io
from typing import Any

from ragloom.errors import MissingDependencyError, ParseError
from ragloom.loaders.base import Parsed, ParseLimits


def _shape_texts(shape: Any) -> list[str]:
    texts: list[str] = []
    if getattr(shape, "shape_type", None) is not None and hasattr(shape, "shapes"):
        for inner in shape.shapes:  # a group
            texts.extend(_shape_texts(inner))
    if getattr(shape, "has_text_frame", False) and shape.text_frame.text.strip():
        texts.append(shape.text_frame.text.strip())
    if getattr(shape, "has_table", False):
        for row in shape.table.rows:
            cells = [cell.text.strip() for cell in row.cells]
            if any(cells):
                texts.append(" | ".join(cells))
    return texts


def parse(data: bytes, name: str, limits: ParseLimits) -> list[Parsed]:
    try:
        from pptx import Presentation
    except ImportError as exc:
        raise MissingDependencyError("python-pptx", "office", "reading PPTX files") from exc
    try:
        presentation = Presentation(io.BytesIO(data))
        slides = list(presentation.slides)
        if len(slides) > limits.max_pages:
            raise ParseError(name, f"refused: {len(slides)} slides, more than "
                                   f"max_pages={limits.max_pages}")
        blocks: list[str] = []
        title = (presentation.core_properties.title or "").strip()
        for number, slide in enumerate(slides, start=1):
            texts = [f"Slide {number}"]
            for shape in slide.shapes:
                texts.extend(_shape_texts(shape))
            if slide.has_notes_slide:
                notes = slide.notes_slide.notes_text_frame
                if notes is not None and notes.text.strip():
                    texts.append(f"Notes: {notes.text.strip()}")
            if not title and slide.shapes.title is not None:
                title = slide.shapes.title.text_frame.text.strip()
            blocks.append("\n".join(texts))
    except ParseError:
        raise
    except Exception as exc:  # python-pptx raises many kinds on damaged files
        raise ParseError(name, f"not a readable PPTX file: {type(exc).__name__}: {exc}") from exc
    starts, position = [], 0
    for block in blocks:
        starts.append(position)
        position += len(block) + 2
    metadata: dict[str, Any] = {"page_count": len(blocks), "slide_count": len(blocks),
                                "page_starts": starts}
    if title:
        metadata["title"] = title
    return [Parsed(text="\n\n".join(blocks), metadata=metadata)]
