"""The rule players of the EV protocol (§6.1, §8.0.2-§8.0.3) as agents, built for one session each.

``NoDataProtocol.deterministic_agents(item)`` wraps each player in a ``FunctionAgent`` together with its own random
stream for the session's datapoint (``algorithm.coins``), so a player's coins never travel in a message and
nothing is handed to it afterwards. They speak JSON:

* the evaluator (and a rule generator proposing for an LLM evaluator):
  ``{"op": "label", "round", "x"}`` -> ``{"label"}`` and
  ``{"op": "propose", "round", "x", "y_hat"}`` -> ``{"x_prime", "y_tilde", "strategy", "rationale"}``
  (the commitment ``<x', ỹ'>`` of §6.1.1);
* the verifier: the evaluator's commitment ``{"op": "commit", "round", "x", "x_prime"}`` -- no label, since
  neither challenge reads one (§6.1: "neither of which rely on σ or y") -- answered with the challenge it draws
  on receipt, uniformly at random ("after the tuple has been generated, the verifier then chooses", §6.1.1),
  and the outcome: ``{"challenge", "challenge_name", "passed", "reason", "detail"}``.
"""

from __future__ import annotations

import json

import numpy as np

from voirdire.kit.models import FunctionAgent

from .challenges import Challenge, Verifier
from .evaluators import Evaluator
from .generators import Generator


class EvaluatorPlayer:
    """A rule evaluator (labeller and generator) or a rule generator, with its private stream."""

    def __init__(self, player: Evaluator | Generator, coins: np.random.Generator) -> None:
        self.player = player
        self.coins = coins

    async def __call__(self, text: str) -> str:
        request = json.loads(text)
        op = request.get("op")
        if op == "label":
            label = getattr(self.player, "label", None)
            if label is None:
                raise ValueError(f"{type(self.player).__name__} only proposes; it does not label")
            return json.dumps({"label": int(await label(request["x"], int(request["round"]), self.coins))})
        if op == "propose":
            proposal = await self.player.propose(request["x"], int(request["y_hat"]), int(request["round"]), self.coins)
            return proposal.model_dump_json()
        raise ValueError(f"evaluator: unknown request {op!r}")


class VerifierPlayer:
    """The verifier (§8.0.3: a rule matcher that knows the rubric of the phenomenon, not σ), with its private
    stream: it draws the round's challenge when the commitment arrives, checks it and announces both."""

    def __init__(self, verifier: Verifier, coins: np.random.Generator) -> None:
        self.verifier = verifier
        self.coins = coins

    async def __call__(self, text: str) -> str:
        request = json.loads(text)
        if request.get("op") != "commit":
            raise ValueError(f"verifier: unknown request {request.get('op')!r}")
        challenge = self.verifier.draw(self.coins)
        outcome = await self.verifier.check(challenge, request["x"], request["x_prime"])
        reply = outcome.model_dump()
        name = Challenge(challenge).name.lower()
        return json.dumps({"challenge": reply.pop("challenge"), "challenge_name": name, **reply}, ensure_ascii=False)


def evaluator_agent(role: str, player: Evaluator | Generator, coins: np.random.Generator, what: str) -> FunctionAgent:
    return FunctionAgent(role, EvaluatorPlayer(player, coins), description=what)


def verifier_agent(verifier: Verifier, coins: np.random.Generator) -> FunctionAgent:
    return FunctionAgent("verifier", VerifierPlayer(verifier, coins), description="rule verifier (§8.0.3)")
