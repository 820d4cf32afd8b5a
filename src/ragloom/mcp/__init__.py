"""``ragloom mcp`` and the server's ``/mcp``: ragloom as a Model Context Protocol server.

- :mod:`ragloom.mcp.tools`: the tools as plain functions over a :class:`Backend`
  (no MCP import: they are ragloom's library API with argument checks);
- :mod:`ragloom.mcp.local`: the backend of ``ragloom mcp --db DIR``;
- :mod:`ragloom.mcp.server`: the official SDK's server (``mcp`` 2.x) over a backend;
- :mod:`ragloom.mcp.auth` and :mod:`ragloom.mcp.hosted`: ``/mcp`` inside
  ``ragloom serve``, behind its API keys, one tenant's knowledge bases per key.

Importing this package imports nothing of the SDK; the modules that need it say
``pip install 'ragloom[mcp]'`` when it is missing.
"""

from __future__ import annotations
