"""``parse_answer``: the body of a webhook or console answer, and the name it is recorded under."""

from __future__ import annotations

import pytest

from gateway.approvals.channels.webhook import parse_answer
from gateway.errors import CallbackRejected


@pytest.mark.parametrize(
    ("by", "decided_by"),
    [
        ("alice", "console:alice"),
        ("ops lead", "console:ops lead"),
        ("a.b+c@x.test", "console:a.b+c@x.test"),
        ("slack:U024BE7LH", "console:slack_U024BE7LH"),  # cannot pass for a Slack answer
        ("hookgate:timeout", "console:hookgate_timeout"),  # nor for the sweeper's
        ("x\ny\u202e", "console:x_y_"),
        (None, "console:anonymous"),
        ("   ", "console:anonymous"),
    ],
)
def test_a_self_given_name_cannot_pose_as_another_source(by: str | None, decided_by: str) -> None:
    answer = parse_answer({"decision": "approve", "by": by}, "apr-1", "console")
    assert answer.by == decided_by and answer.approve


def test_a_bad_body_is_refused() -> None:
    for body in ({"decision": "yes"}, {"decision": "approve", "by": 5}, {"decision": "reject", "reason": []}):
        with pytest.raises(CallbackRejected):
            parse_answer(body, "apr-1", "console")
