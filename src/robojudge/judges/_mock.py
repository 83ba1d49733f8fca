"""The ``mock`` backend: scripted replies, for tests and documentation. Its scores mean nothing."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from robojudge.judges._backend import BACKENDS, ChatRequest, Completion
from robojudge.judges._config import JudgeConfig

Reply = str | Completion | BaseException
Script = Callable[[ChatRequest], Reply | Awaitable[Reply]]


class MockBackend:
    """Replies from a script instead of a model.

    Args:
        config: The judge; its ``replies`` are returned in turn (cycling) when no ``script`` is given.
        script: ``request -> reply``, where a reply is text, a :class:`Completion`, or an exception
            to raise (for example :class:`TransientError` to exercise retries). May be async.

    Attributes:
        requests: Every request received, in order.
    """

    name = "mock"
    supports_logprobs = True
    interruptible = True

    def __init__(self, config: JudgeConfig, script: Script | None = None) -> None:
        if script is None and not config.replies:
            raise ValueError(
                f"judge {config.name!r}: the mock backend needs scripted replies (replies = [...])"
            )
        self.config = config
        self._script = script
        self._next = 0
        self.requests: list[ChatRequest] = []

    async def complete(self, request: ChatRequest) -> Completion:
        self.requests.append(request)
        if self._script is not None:
            reply = self._script(request)
            if isinstance(reply, Awaitable):
                reply = await reply
        else:
            reply = self.config.replies[self._next % len(self.config.replies)]
            self._next += 1
        await asyncio.sleep(0)
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, Completion):
            return reply
        n = 0 if request.frames is None else min(len(request.frames), self.config.max_images)
        return Completion(text=str(reply), meta={"mock": True, "images": n})

    async def aclose(self) -> None:
        return None


BACKENDS.add("mock", MockBackend)
