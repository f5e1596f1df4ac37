"""Store selection and redaction (``gateway.store.url``): which store a setting names, never a password."""

from __future__ import annotations

import pytest

from gateway.store.url import parse, password_of, redact, selected


@pytest.mark.parametrize(
    ("value", "kind", "sqlite_dir"),
    [
        (None, "sqlite", None),
        ("", "sqlite", None),
        ("sqlite", "sqlite", None),
        ("sqlite:///var/lib/hookgate", "sqlite", "/var/lib/hookgate"),
        ("postgresql://u@db:5432/hookgate", "postgresql", None),
        ("postgres://db/hookgate", "postgresql", None),
        ("postgresql:///?service=hookgate", "postgresql", None),
        ("postgresql:///hookgate", "postgresql", None),
    ],
)
def test_parse(value: str | None, kind: str, sqlite_dir: str | None) -> None:
    choice = parse(value)
    assert choice.kind == kind and choice.sqlite_dir == sqlite_dir


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("mysql://root:hunter2@db/x", "mysql://root:***@db/x: expected 'sqlite'"),
        ("postgresql://u:hunter2@db:port/x", "postgresql://u:***@db:port/x is not a valid PostgreSQL URL"),
        ("postgresql://", "names no host, database or service"),
        ("sqlite:relative", "sqlite:///ABSOLUTE/DIR"),
    ],
)
def test_bad_urls_are_one_line_without_the_password(value: str, message: str) -> None:
    with pytest.raises(ValueError) as err:
        parse(value)
    assert message in str(err.value) and "hunter2" not in str(err.value) and "\n" not in str(err.value)


def test_redact_and_password_of() -> None:
    assert redact("postgresql://u:p%40ss@h:5432/db?sslmode=require") == "postgresql://u:***@h:5432/db?sslmode=require"
    assert password_of("postgresql://u:p%40ss@h/db") == "p@ss"
    assert (
        redact("postgresql://h/db?user=u&password=x&sslpassword=y")
        == "postgresql://h/db?user=u&password=***&sslpassword=***"
    )
    assert password_of("postgresql://h/db?password=x") == "x"
    assert redact("postgresql://u@h/db") == "postgresql://u@h/db" and password_of("postgresql://u@h/db") is None


def test_the_environment_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOOKGATE_STORE_URL", "postgresql://db/x")
    assert selected("sqlite") == "postgresql://db/x"
    monkeypatch.setenv("HOOKGATE_STORE_URL", " ")
    assert selected("sqlite") == "sqlite"


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://u:pa@QZ@db:5432/x",
        "postgresql://u:pa/QZ@db:5432/x",
        "postgresql://u:p@QZ/w#rd?x@db:5432/x",
        "postgresql://u:12/QZ@db/x",
    ],
)
def test_a_password_with_delimiters_as_is_is_hidden_whole_and_refused(url: str) -> None:
    assert redact(url).startswith("postgresql://u:***@db") and "QZ" not in redact(url)
    with pytest.raises(ValueError, match="percent-encode") as err:
        parse(url)
    assert "QZ" not in str(err.value)


def test_ports_and_failover_hosts_are_not_passwords() -> None:
    for url in ("postgresql://h:5432/db?application_name=a@b", "postgresql://h1:5432,h2:5433/db"):
        assert redact(url) == url and password_of(url) is None and parse(url).kind == "postgresql"
    assert redact("postgresql://u:pw@h1:1,h2:2/db") == "postgresql://u:***@h1:1,h2:2/db"
