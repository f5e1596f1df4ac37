"""Secret redaction and truncation of audit values (gateway.audit.redact)."""

from __future__ import annotations

import hashlib

import pytest

from gateway.audit.redact import Redactor, check_pattern

ANTHROPIC = "sk-ant-api03-" + "Q" * 40
OPENAI = "sk-proj-" + "a1B2" * 10
GITHUB = "ghp_" + "x" * 36
AWS = "AKIAIOSFODNN7EXAMPLE"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"


@pytest.mark.parametrize("secret", [ANTHROPIC, OPENAI, GITHUB, AWS, JWT, "xoxb-1234567890-abcdefghij"])
def test_provider_keys_are_redacted_anywhere_in_a_string(secret: str) -> None:
    out = Redactor().text(f"curl --data '{secret}' https://example.test")
    assert secret not in out
    assert "[REDACTED:" in out
    assert out.startswith("curl --data '") and out.endswith("' https://example.test")


def test_assignments_keep_their_name() -> None:
    r = Redactor()
    assert r.text("export GITHUB_TOKEN=abc123def && make") == "export GITHUB_TOKEN=[REDACTED:assignment] && make"
    assert r.text("DB_PASSWORD: 'hunter two'") == "DB_PASSWORD: [REDACTED:assignment]"
    assert r.text("mysql --password=hunter2 db") == "mysql --password=[REDACTED:assignment] db"
    assert r.text('{"api_key": "zzz-123"}') == '{"api_key": [REDACTED:assignment]}'
    env = "DEBUG=1\nSTRIPE_SECRET_KEY=abc\nPORT=8080\n"
    assert r.text(env) == "DEBUG=1\nSTRIPE_SECRET_KEY=[REDACTED:assignment]\nPORT=8080\n"


def test_authorization_values() -> None:
    r = Redactor()
    out = r.text('curl -H "Authorization: Bearer abc.def-123" https://api.test')
    assert "abc.def-123" not in out and "Authorization: [REDACTED:authorization]" in out
    assert "dXNlcjpwYXNz" not in r.text("proxy-authorization: Basic dXNlcjpwYXNz")


def test_private_key_blocks_even_when_cut() -> None:
    r = Redactor()
    pem = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\nAAAA\n-----END OPENSSH PRIVATE KEY-----"
    out = r.text(f"cat > id <<EOF\n{pem}\nEOF")
    assert "b3BlbnNz" not in out and out.endswith("[REDACTED:private_key]\nEOF")
    assert "MIIE" not in r.text("key: -----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA")


def test_url_credentials() -> None:
    out = Redactor().text("git clone https://bob:s3cr3t@git.example.test/repo.git")
    assert "s3cr3t" not in out and "https://bob:[REDACTED:url_credentials]@git.example.test" in out


def test_secret_keys_in_objects_and_nothing_else_changes() -> None:
    value = {
        "command": "ls",
        "headers": {"Authorization": "x", "Accept": "json"},
        "password": 1234,
        "max_tokens": 100,
        "nested": [{"client_secret": "s"}],
        "flag": True,
    }
    out = Redactor().apply(value)
    assert out == {
        "command": "ls",
        "headers": {"Authorization": "[REDACTED:key]", "Accept": "json"},
        "password": "[REDACTED:key]",
        "max_tokens": 100,
        "nested": [{"client_secret": "[REDACTED:key]"}],
        "flag": True,
    }
    assert value["password"] == 1234  # not mutated


def test_extra_patterns() -> None:
    r = Redactor(["acme_[0-9a-f]{8}"])
    assert r.text("id acme_deadbeef end") == "id [REDACTED:custom] end"
    assert check_pattern("(") is not None
    assert check_pattern("a*") is not None
    assert check_pattern("acme_[0-9]+") is None


def test_truncation_keeps_size_and_hash_of_the_redacted_text() -> None:
    r = Redactor(max_value=64)
    big = "x" * 1000 + " TOKEN=abc"
    out = r.text(big)
    redacted = "x" * 1000 + " TOKEN=[REDACTED:assignment]"
    digest = hashlib.sha256(redacted.encode()).hexdigest()
    assert out == "x" * 64 + f"…[truncated: {len(redacted)} bytes, sha256 {digest}]"
    assert r.text("short") == "short"
