"""``voirdire.models`` keeps its public names and imports nothing heavy or circular."""

from __future__ import annotations

import subprocess
import sys

import voirdire.models


def test_public_names_are_re_exported() -> None:
    names = {
        *("ModelSpec", "ModelSpecError", "parse_spec", "spec_label", "redact_url", "mask_secrets"),
        *("RoleSettings", "DEFAULT_MAX_TOKENS", "load_role_config", "build_client", "ModelPool"),
        *("EMBEDDED_MODEL", "LlamaCppClient", "embedded_model_path", "HumanClient"),
        *("Script", "ScriptRule", "ScriptExhausted", "ScriptedChatCompletionClient"),
    }
    assert names <= set(voirdire.models.__all__)
    assert all(hasattr(voirdire.models, name) for name in voirdire.models.__all__)


def test_importing_models_loads_no_protocol_runner_cli_or_provider_sdk() -> None:
    code = (
        "import sys, voirdire.models\n"
        "banned = ('voirdire.session.protocol', 'voirdire.runner', 'voirdire.cli', 'voirdire.protocols', 'llama_cpp', "
        "'autogen_ext.models.openai')\n"
        "print(sorted(m for m in sys.modules if m.startswith(banned)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
