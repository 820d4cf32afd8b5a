"""The Conversations API (OpenAI's, which the Llama Stack 0.3+ client's ``Agent`` uses
for its sessions): ``/v1/conversations`` create, get, update, delete, and its items
(list, add, get, delete).

``/v1/responses`` with ``conversation`` (an id, or ``{"id": …}``) answers with the
conversation's messages as history and appends the new input and the output to it
(see :class:`Conversations`). Everything belongs to the caller's tenant.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from ragloom.server.v1.common import new_id, now, page
from ragloom.server.v1.context import TENANT, V1, V1Context
from ragloom.server.v1.errors import bad_request, not_found
from ragloom.server.v1.llama_objects import LlamaObjects
from ragloom.server.v1.responses_model import input_item, input_messages

CONVERSATION, ITEM = "conversation", "conversation_item"
MAX_ITEMS = 20


class ConversationCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    items: list[dict[str, Any]] | None = Field(None, max_length=MAX_ITEMS)
    metadata: dict[str, str] | None = None


class ConversationUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    metadata: dict[str, str]


class ItemsCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    items: list[dict[str, Any]] = Field(min_length=1, max_length=MAX_ITEMS)


def conversation_id(value: Any) -> str | None:
    """The id in ``/v1/responses``' ``conversation`` (a string or ``{"id": …}``)."""
    if value is None:
        return None
    if isinstance(value, str) and value:
        return value
    if isinstance(value, dict) and isinstance(value.get("id"), str) and value["id"]:
        return str(value["id"])
    raise bad_request("conversation must be a conversation id or {'id': …}", "conversation")


class Conversations:
    """Conversations and their items in the tenant-scoped object table."""

    def __init__(self, objects: LlamaObjects) -> None:
        self.objects = objects

    def get(self, tenant: str, ident: str, param: str = "conversation_id") -> dict[str, Any]:
        return self.objects.get(CONVERSATION, tenant, ident, param)

    def create(self, tenant: str, metadata: dict[str, str] | None,
               items: list[dict[str, Any]]) -> dict[str, Any]:
        if metadata is not None and len(metadata) > 16:
            raise bad_request("metadata holds at most 16 keys", "metadata")
        checked = self.checked_items(items, "items")
        ident = new_id("conv_")
        body = {"id": ident, "object": "conversation", "created_at": now(),
                "metadata": metadata or {}}
        self.objects.put(CONVERSATION, tenant, ident, body)
        self.add(tenant, ident, checked)
        return body

    @staticmethod
    def checked_items(items: list[dict[str, Any]], param: str) -> list[dict[str, Any]]:
        """Message items with ids (text content only)."""
        if not items:
            return []
        messages = input_messages(items)
        return [input_item(new_id("msg_"), m) for m in messages]

    def add(self, tenant: str, ident: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        stored = []
        for item in items:
            item = {**item, "id": item.get("id") or new_id("item_")}
            self.objects.put(ITEM, tenant, item["id"], item, parent=ident)
            stored.append(item)
        return stored

    def items(self, tenant: str, ident: str) -> list[dict[str, Any]]:
        self.get(tenant, ident)
        return self.objects.children(ITEM, tenant, ident)

    def history(self, tenant: str, ident: str) -> list[dict[str, str]]:
        """The conversation's messages as ``{"role", "content"}``, oldest first."""
        history = []
        for item in self.items(tenant, ident):
            if item.get("type", "message") != "message":
                continue
            text = "".join(str(part.get("text", "")) for part in item.get("content", [])
                           if isinstance(part, dict))
            history.append({"role": str(item.get("role", "user")), "content": text})
        return history


router = APIRouter()


@router.post("/conversations", summary="Create a conversation")
async def create(body: ConversationCreate,
                 tenant: str = TENANT, v1: V1Context = V1) -> dict[str, Any]:
    deps, conversations = v1.deps, v1.conversations
    return await deps.cpu(conversations.create, tenant, body.metadata, body.items or [])


@router.get("/conversations/{conversation_id}", summary="A conversation")
async def get(conversation_id: str, tenant: str = TENANT, v1: V1Context = V1) -> dict[str, Any]:
    deps, conversations = v1.deps, v1.conversations
    return await deps.cpu(conversations.get, tenant, conversation_id)


@router.post("/conversations/{conversation_id}", summary="Update a conversation's metadata")
async def update(conversation_id: str, body: ConversationUpdate,
                 tenant: str = TENANT, v1: V1Context = V1) -> dict[str, Any]:
    deps, conversations, objects = v1.deps, v1.conversations, v1.llama.objects

    def run() -> dict[str, Any]:
        found = conversations.get(tenant, conversation_id)
        if len(body.metadata) > 16:
            raise bad_request("metadata holds at most 16 keys", "metadata")
        return objects.put(CONVERSATION, tenant, conversation_id,
                           {**found, "metadata": body.metadata})

    return await deps.cpu(run)


@router.delete("/conversations/{conversation_id}", summary="Delete a conversation")
async def delete(conversation_id: str, tenant: str = TENANT, v1: V1Context = V1) -> dict[str, Any]:
    deps, conversations, objects = v1.deps, v1.conversations, v1.llama.objects

    def run() -> dict[str, Any]:
        conversations.get(tenant, conversation_id)
        objects.delete_children(ITEM, tenant, conversation_id)
        objects.delete(CONVERSATION, tenant, conversation_id)
        return {"id": conversation_id, "object": "conversation.deleted", "deleted": True}

    return await deps.cpu(run)


@router.get("/conversations/{conversation_id}/items", summary="A conversation's items")
async def list_items(conversation_id: str, limit: int = 20, order: str = "desc",
                     after: str | None = None, include: list[str] | None = None,
                     tenant: str = TENANT, v1: V1Context = V1) -> dict[str, Any]:
    deps, conversations = v1.deps, v1.conversations
    found = await deps.cpu(conversations.items, tenant, conversation_id)
    return page(found, limit=limit, order=order, after=after, before=None)


@router.post("/conversations/{conversation_id}/items", summary="Add items")
async def add_items(conversation_id: str, body: ItemsCreate,
                    tenant: str = TENANT, v1: V1Context = V1) -> dict[str, Any]:
    deps, conversations = v1.deps, v1.conversations

    def run() -> dict[str, Any]:
        conversations.get(tenant, conversation_id)
        added = conversations.add(tenant, conversation_id,
                                  conversations.checked_items(body.items, "items"))
        return {"object": "list", "data": added, "first_id": added[0]["id"],
                "last_id": added[-1]["id"], "has_more": False}

    return await deps.cpu(run)


def item_of(conversations: Conversations, tenant: str, conversation_id: str, item_id: str
            ) -> dict[str, Any]:
    objects = conversations.objects
    conversations.get(tenant, conversation_id)
    item = objects.find(ITEM, tenant, item_id)
    if item is None or not any(i["id"] == item_id
                               for i in objects.children(ITEM, tenant, conversation_id)):
        raise not_found("conversation item", item_id, "item_id")
    return item


@router.get("/conversations/{conversation_id}/items/{item_id}", summary="An item")
async def get_item(conversation_id: str, item_id: str,
                   tenant: str = TENANT, v1: V1Context = V1) -> dict[str, Any]:
    deps, conversations = v1.deps, v1.conversations
    return await deps.cpu(item_of, conversations, tenant, conversation_id, item_id)


@router.delete("/conversations/{conversation_id}/items/{item_id}",
               summary="Delete an item")
async def delete_item(conversation_id: str, item_id: str,
                      tenant: str = TENANT, v1: V1Context = V1) -> dict[str, Any]:
    deps, conversations, objects = v1.deps, v1.conversations, v1.llama.objects

    def run() -> dict[str, Any]:
        item_of(conversations, tenant, conversation_id, item_id)
        objects.delete(ITEM, tenant, item_id)
        return conversations.get(tenant, conversation_id)

    return await deps.cpu(run)
