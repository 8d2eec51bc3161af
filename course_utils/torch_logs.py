"""PyTorch's compile logs (``TORCH_LOGS``) collected for one block (lesson 03).

``TORCH_LOGS="recompiles"`` in the environment, or
``torch._logging.set_logs(recompiles=True)``, prints Dynamo's explanations on
stderr, every line behind a timestamp and a source location, and a graph break's
message runs to a page of hints and traceback. :func:`collect` switches the same
log artifacts on for a ``with`` block and keeps the messages instead, so a
notebook prints what matters under the cell: :func:`short` keeps a message's
first lines, :func:`break_reason` a graph break's reason in a few words.

Importing this module does not import torch.
"""

from __future__ import annotations

import contextlib
import logging
import logging.handlers
from collections.abc import Iterable, Iterator

_DYNAMO_LOGGER = "torch._dynamo"  # parent of the artifact loggers Dynamo writes to


@contextlib.contextmanager
def collect(**artifacts: bool) -> Iterator[list[str]]:
    """Switch on ``torch._logging`` artifacts (``recompiles=True``, ``graph_breaks=True``)
    inside the block; the list it yields holds their messages once the block ends.

    The messages are kept, not printed; afterwards the logs are set back to their
    defaults with ``torch._logging.set_logs()``.
    """
    import torch._logging

    handler = logging.handlers.BufferingHandler(10_000)
    logger = logging.getLogger(_DYNAMO_LOGGER)
    # set_logs installs torch's own handlers on the logger; they are swapped out below
    torch._logging.set_logs(**artifacts)
    saved = logger.handlers[:], logger.propagate
    logger.handlers, logger.propagate = [handler], False
    messages: list[str] = []
    try:
        yield messages
    finally:
        logger.handlers, logger.propagate = saved
        torch._logging.set_logs()
        messages.extend(record.getMessage() for record in handler.buffer)


def short(messages: Iterable[str], lines: int = 3) -> str:
    """The first ``lines`` lines of each message, without the source comment after ``#``."""
    return "\n".join(
        line.split("#")[0].rstrip()
        for message in messages
        for line in message.splitlines()[:lines]
    )


def break_reason(message: str) -> str:
    """The short reason in a graph-break message, or its first line.

    PyTorch 2.13 writes ``Graph Break Reason: Data-dependent branching`` on a line
    of its own; another version's wording falls back to the message's first line.
    """
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    if not lines:
        return ""
    at = next(
        (i for i, line in enumerate(lines) if line.startswith("Graph Break Reason:")),
        None,
    )
    if at is None:
        return lines[0]
    reason = lines[at].split(":", 1)[1].strip()
    if reason.endswith(":") and at + 1 < len(lines):
        return f"{reason} {lines[at + 1]}"
    return reason
