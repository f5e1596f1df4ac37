"""The ``channels:`` config section: where approval requests are posted (pydantic, validated at load).

::

    channels:
      ops:  {type: slack, tokenEnv: SLACK_BOT_TOKEN, signingSecretEnv: SLACK_SIGNING_SECRET, channel: "C0123456"}
      lark: {type: feishu, appIdEnv: LARK_APP_ID, appSecretEnv: LARK_APP_SECRET, chatId: "oc_0123"}
      hook: {type: webhook, url: "https://approvals.example.com/in", signingSecretEnv: APPROVAL_HOOK_SECRET}

Secrets are never in the file: each ``...Env`` field names the environment variable that holds one.
``baseUrl`` (slack) and ``domain`` (feishu) point the official SDKs at another API host (a proxy, a
test fake). ``callbackUrl`` (webhook) is the address of ``hookgate serve`` as the receiver reaches it.
Normalized form (``RuntimeConfig.channels``): ``{name: {snake_case fields}}``.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

_ENV = r"^[A-Za-z_][A-Za-z0-9_]*$"


class _Channel(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True, strict=True)


class SlackChannel(_Channel):
    """A Slack channel (``slack_sdk``): a message with Approve/Reject buttons, updated with the outcome."""

    type: Literal["slack"]
    channel: str = Field(min_length=1, description="channel id (C...) or name the bot posts to")
    token_env: str = Field("SLACK_BOT_TOKEN", alias="tokenEnv", pattern=_ENV)
    signing_secret_env: str = Field("SLACK_SIGNING_SECRET", alias="signingSecretEnv", pattern=_ENV)
    base_url: str = Field("https://slack.com/api/", alias="baseUrl", pattern=r"^https?://")
    timeout: float = Field(10.0, gt=0, le=60)


class FeishuChannel(_Channel):
    """A Feishu/Lark group chat (``lark-oapi``): an interactive card, updated with the outcome."""

    type: Literal["feishu"]
    chat_id: str = Field(alias="chatId", min_length=1)
    app_id_env: str = Field("LARK_APP_ID", alias="appIdEnv", pattern=_ENV)
    app_secret_env: str = Field("LARK_APP_SECRET", alias="appSecretEnv", pattern=_ENV)
    verification_token_env: str = Field("LARK_VERIFICATION_TOKEN", alias="verificationTokenEnv", pattern=_ENV)
    encrypt_key_env: str = Field("LARK_ENCRYPT_KEY", alias="encryptKeyEnv", pattern=_ENV)
    domain: str = Field("https://open.feishu.cn", pattern=r"^https?://")
    timeout: float = Field(10.0, gt=0, le=60)


class WebhookChannel(_Channel):
    """A Standard Webhooks-signed POST of the request and the URL to answer it at."""

    type: Literal["webhook"]
    url: str = Field(pattern=r"^https?://")
    signing_secret_env: str = Field(alias="signingSecretEnv", pattern=_ENV)
    callback_url: str = Field("http://127.0.0.1:8787", alias="callbackUrl", pattern=r"^https?://")
    timeout: float = Field(10.0, gt=0, le=60)


MODELS: dict[str, type[_Channel]] = {"slack": SlackChannel, "feishu": FeishuChannel, "webhook": WebhookChannel}
SECRET_FIELDS = {
    "slack": ("token_env", "signing_secret_env"),
    "feishu": ("app_id_env", "app_secret_env"),
    "webhook": ("signing_secret_env",),
}
"""The ``...Env`` fields a channel cannot work without (``hookgate validate`` warns when one is unset)."""
_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")


def compile_section(compiler: Any, path: str, raw: Any) -> None:
    """Validate one file's ``channels:`` into ``compiler.channels`` of the config compiler (by name; a
    later file's entry wins), each problem as ``file: channels.NAME.field: ...``."""
    if not isinstance(raw, dict):
        compiler.issues.append(f"{path}: channels: expected an object of named channels, got {type(raw).__name__}")
        return
    for name, entry in raw.items():
        where = f"{path}: channels.{name}"
        if not isinstance(name, str) or not _NAME.match(name):
            compiler.issues.append(f"{where}: a channel name uses letters, digits, '_', '.' and '-' only")
            continue
        kind = entry.get("type") if isinstance(entry, dict) else None
        if kind not in MODELS:
            got = f"got {kind!r}" if isinstance(entry, dict) else f"got {type(entry).__name__}, not an object"
            compiler.issues.append(f"{where}.type: required, one of {', '.join(MODELS)} ({got})")
            continue
        model = MODELS[kind]
        value = compiler.validated(model, entry, where, unknown=f"field for a {kind} channel")
        if value is not None:
            compiler.channels[name] = value.model_dump(exclude=set(value.model_extra or {}))


def finish_section(compiler: Any) -> None:
    """Cross-file check, once every file is read: each approval handler's ``channel`` is defined."""
    for groups in compiler.hooks.values():
        for group in groups:
            for handler in group["handlers"]:
                name = handler["options"].get("channel") if handler["type"] == "approval" else None
                if name is not None and name not in compiler.channels:
                    known = ", ".join(sorted(compiler.channels)) or "none are defined"
                    compiler.issues.append(
                        f"{handler['where']}.channel: no channel {name!r} under channels: "
                        f"({known}; omit channel for the built-in inbox only)"
                    )
