"""The ragloom HTTP server: a native API under ``/api`` and an OpenAI-compatible one
under ``/v1``, over the same knowledge bases, jobs and tenants.

Needs the ``server`` extra (``pip install 'ragloom[server]'``). Build an app with
:func:`ragloom.server.app.create_app`; ``ragloom serve`` runs it under uvicorn.
"""
