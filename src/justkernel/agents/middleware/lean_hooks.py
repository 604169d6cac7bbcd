"""Deep Agents' and LangChain's middlewares without their per-step costs.

Every `before_model` / `after_model` hook is a node of the agent graph, and with the lab's
`durability="sync"` each node is a checkpoint written per agent step. The two hooks below did
nothing the lab needs at that place, so their work moves around the model call (where it costs no
node) or goes: an agent step is then two nodes (model, tools) instead of seven. The content
filter keeps its work and skips what cannot need it: a text message.
"""

from __future__ import annotations

from deepagents.middleware.skills import SkillsMiddleware
from deepagents.middleware.unsupported_content import UnsupportedContentMiddleware
from langchain.agents.middleware import AgentMiddleware, TodoListMiddleware
from langchain.agents.middleware.types import ModelRequest, ModelResponse
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, ToolMessage

from justkernel.agents.middleware.shared import ModelHandler

PARALLEL_TODOS = (
    "error: write_todos was called more than once in one response; none of them ran. Call it "
    "once per response, with the whole list."
)


class LabSkillsMiddleware(SkillsMiddleware):
    """Skills without the `pinned_skills` hook: nothing in the lab pins a skill (a user of a
    chat client would), and the hook was a node at every step."""

    before_model = AgentMiddleware.before_model
    abefore_model = AgentMiddleware.abefore_model

    @property
    def name(self) -> str:
        return "SkillsMiddleware"  # Deep Agents' own is replaced by name


class LabTodoListMiddleware(TodoListMiddleware):
    """The todo list, refusing parallel `write_todos` calls around the model call (the same
    answer LangChain's `after_model` hook gives, without its node)."""

    after_model = AgentMiddleware.after_model
    aafter_model = AgentMiddleware.aafter_model

    @property
    def name(self) -> str:
        return "TodoListMiddleware"  # Deep Agents' own is replaced by name

    async def awrap_model_call(  # type: ignore[override]
        self, request: ModelRequest, handler: ModelHandler
    ) -> ModelResponse:
        response = await super().awrap_model_call(request, handler)
        if not isinstance(response, ModelResponse):
            return response
        last = next((m for m in reversed(response.result) if isinstance(m, AIMessage)), None)
        calls = [c for c in (last.tool_calls if last else []) if c["name"] == "write_todos"]
        if len(calls) > 1:
            response.result = [
                *response.result,
                *(
                    ToolMessage(content=PARALLEL_TODOS, tool_call_id=c["id"], status="error")
                    for c in calls
                ),
            ]
        return response


class LabUnsupportedContentMiddleware(UnsupportedContentMiddleware):
    """Deep Agents' filter of the content blocks a model cannot take (images for a text-only
    model), without converting every text message of the history into blocks at every model
    call: a message whose content is a string is one text block, which every model takes.
    Lists (a file tool's image, a provider's blocks) are filtered as before."""

    @property
    def name(self) -> str:
        return "UnsupportedContentMiddleware"  # Deep Agents' own is replaced by name

    def _filter_message(self, message: AnyMessage, *, model: BaseChatModel) -> AnyMessage:
        if isinstance(message.content, str):
            return message
        return super()._filter_message(message, model=model)
