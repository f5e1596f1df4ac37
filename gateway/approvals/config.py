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

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

_ENV = r"^[A-Za-z_][A-Za-z0-9_]*$"


class _Channel(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, strict=True)


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


ChannelSpec = Annotated[SlackChannel | FeishuChannel | WebhookChannel, Field(discriminator="type")]
SECRET_FIELDS = {"slack": ("token_env", "signing_secret_env"), "feishu": ("app_id_env", "app_secret_env"),
                 "webhook": ("signing_secret_env",)}
"""The ``...Env`` fields a channel cannot work without (``hookgate validate`` warns when one is unset)."""


class Channels(BaseModel):
    """The whole section: channel name -> one of the channel models (by ``type``)."""

    model_config = ConfigDict(strict=True)
    channels: dict[Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]+$")], ChannelSpec]


def compile_channels(raw: Any) -> dict[str, dict[str, Any]]:
    """Validate a ``channels:`` value into its normalized form. Raises pydantic.ValidationError."""
    section = Channels.model_validate({"channels": raw})
    return {name: spec.model_dump() for name, spec in section.channels.items()}
