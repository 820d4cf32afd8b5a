"""Getting documents in: files, folders, URLs and text, parsed by format.

``load_path`` and ``load_url`` yield :class:`LoadResult` items, each a document or
a skip with a reason, so one bad file never stops a batch. ``parse_bytes`` is the
pure parsing step (bytes and a name in, text and metadata out) that a caller may run
in a separate process.

Document metadata: ``source``, ``mime_type``, ``file_name``, ``size``, ``created``
and ``modified`` (ISO 8601 UTC, files only), ``content_hash`` (SHA-256 of the raw
bytes), ``format``, plus what the format offers (``title``, ``author``,
``page_count``, ``page_starts``, ``slide_count``, ``sheet_names``, ``columns``...).
"""

from ragloom.loaders.base import LoadResult, Parsed, ParseFunction, ParseLimits
from ragloom.loaders.detect import MIME_TYPES, detect_format
from ragloom.loaders.files import default_parser, load_file, load_path
from ragloom.loaders.parsers import FORMATS, parse_bytes
from ragloom.loaders.text import load_text
from ragloom.loaders.url import DEFAULT_MAX_BYTES, FetchedResource, fetch_url, load_url
from ragloom.loaders.zipcheck import check_zip

__all__ = [
    "DEFAULT_MAX_BYTES",
    "FORMATS",
    "MIME_TYPES",
    "FetchedResource",
    "LoadResult",
    "ParseFunction",
    "ParseLimits",
    "Parsed",
    "check_zip",
    "default_parser",
    "detect_format",
    "fetch_url",
    "load_file",
    "load_path",
    "load_text",
    "load_url",
    "parse_bytes",
]
