"""Approval channels: one module per chat platform on ``base.Channel``; ``open_channel`` builds one by
``type`` (importing its module, and so its SDK, only then)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gateway.approvals.channels.base import Channel

CHANNEL_TYPES = {
    "slack": "gateway.approvals.channels.slack:SlackChannel",
    "feishu": "gateway.approvals.channels.feishu:FeishuChannel",
    "webhook": "gateway.approvals.channels.webhook:WebhookChannel",
}


def open_channel(name: str, spec: dict[str, Any]) -> Channel:
    """The channel ``name`` configured as ``spec`` (normalized ``channels:`` entry). Raises ChannelError
    when its SDK is not installed (``pip install 'hookgate[slack]'`` ...)."""
    from gateway.errors import ChannelError

    module_name, _, attr = CHANNEL_TYPES[spec["type"]].partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ChannelError(
            f"channel {name!r} ({spec['type']}) needs {exc.name or 'its SDK'}: pip install 'hookgate[{spec['type']}]'"
        ) from None
    cls: type[Channel] = getattr(module, attr)
    return cls(name, spec)
