"""What ``/v1/responses`` does for Llama Stack clients: ``conversation`` (history from a
conversation, and the turn appended to it) and the ``builtin::rag`` tool group given as
a tool (the RAG tool's search over ``vector_db_ids`` with ``query_config``, shown as a
``file_search_call`` whose results cite the documents)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragloom.server.v1.citations import Passage
from ragloom.server.v1.common import new_id
from ragloom.server.v1.conversations import Conversations, conversation_id
from ragloom.server.v1.llama_context import LlamaContext
from ragloom.server.v1.responses_model import ResponseCreate, input_item
from ragloom.server.v1.spec import knowledge_search_matches
from ragloom.server.v1.toolgroups import rag_arguments
from ragloom.types import QueryMatch

if TYPE_CHECKING:
    from ragloom.server.v1.responses import Plan


class LlamaHooks:
    def __init__(self, context: LlamaContext, conversations: Conversations) -> None:
        self.context = context
        self.conversations = conversations

    def conversation(self, tenant: str, request: ResponseCreate
                     ) -> tuple[str, list[dict[str, str]]] | None:
        """The conversation's id and its messages so far (a 404 for another tenant's)."""
        ident = conversation_id(request.conversation)
        if ident is None:
            return None
        self.conversations.get(tenant, ident, "conversation")
        return ident, self.conversations.history(tenant, ident)

    def rag_search(self, plan: Plan, question: str, args: dict[str, Any]
                   ) -> list[QueryMatch]:
        query, ids, config = rag_arguments({"query": question, **args}, "tools.args")
        context = self.context
        result, matches = knowledge_search_matches(context.deps, context.knowledge,
                                                   plan.tenant, query, ids, config)
        results = []
        for match in matches:
            document = match.chunk.source or match.chunk.document_id
            plan.passages.append(Passage(len(plan.passages) + 1, document, document,
                                         match.chunk.text))
            results.append({"file_id": document, "filename": document,
                            "score": round(match.score, 6), "text": match.chunk.text,
                            "attributes": {"document_id": document}})
        include = "file_search_call.results" in plan.request.include
        plan.search_item = {"id": new_id("fs_"), "type": "file_search_call",
                            "status": "completed", "queries": [result["metadata"]["query"]],
                            "results": results if include else None}
        return matches

    def append(self, plan: Plan, body: dict[str, Any]) -> None:
        """The turn's input messages and output items, appended to its conversation."""
        assert plan.conversation_id is not None
        items = [input_item(new_id("msg_"), m) for m in plan.new_messages]
        items += [{**item, "id": item.get("id") or new_id("item_")}
                  for item in body.get("output", [])]
        self.conversations.add(plan.tenant, plan.conversation_id, items)
