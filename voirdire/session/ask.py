"""``Ask``: how one ``Session.ask`` reads its reply and sends its request, as one typed value.

The prompt's variables are the call's keywords; everything else about the call is the request's. A protocol that
asks the same way many times names the request once (``JUDGE = Ask(parse=read_yes_no, on_failure="undecided")``)
and derives variants with ``dataclasses.replace``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Ask(Generic[T]):
    """The options of one ``Session.ask``.

    Reading the reply: ``parse`` reads the paper's free text; ``schema`` (a pydantic model, a ``Literal`` or a
    tuple of choices, see ``voirdire.replies.schema``) is the closed answer the reply must fit. A role in structured
    mode, or a request with a schema and no parser, sends the schema to the backend to enforce and reads the reply
    with it. ``expected`` says what a readable reply looks like, for the record of a parse failure; ``on_failure``
    names the defined outcome the protocol takes when the reply cannot be read.

    Sending it: ``samples=k`` draws k replies in one call (``Reply.samples``). ``sender`` is who speaks the prompt
    (the moderator, unless a role's words are relayed); ``quote`` is what ``sender`` itself said inside it (the
    examiner's question), shown by the chat view instead of the whole prompt. ``temperature`` and ``seed``
    override the role's sampling for this call. ``fresh`` sends the prompt on its own, outside the role's
    conversation and without adding to it, so independent asks to one role can run at once (``asyncio.gather``).
    """

    parse: Callable[[str], T] | None = None
    schema: Any = None
    expected: str = ""
    on_failure: str = ""
    samples: int = 1
    sender: str = "moderator"
    quote: str | None = None
    temperature: float | None = None
    seed: int | None = None
    fresh: bool = False

    def __post_init__(self) -> None:
        if type(self.samples) is not int or self.samples < 1:
            raise ValueError(f"samples must be a whole number >= 1, got {self.samples!r}")


OPTIONS = frozenset(f.name for f in fields(Ask))
"""The request's option names: none of them is a prompt variable (``Session.ask`` refuses one given as such)."""
