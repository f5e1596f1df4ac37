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


@pytest.mark.parametrize(
    ("header", "secret"),
    [
        ("Authorization: ApiKey S3cretKey1", "S3cretKey1"),  # Elasticsearch
        ("Authorization: Bot MTk4NjIy.Cl2FMQ.ZnCjm1XVW7", "ZnCjm1XVW7"),  # Discord
        ("Authorization: SSWS 00aBcD3fGh", "00aBcD3fGh"),  # Okta
        ("Authorization: OAuth S3cretTok", "S3cretTok"),
        ('Authorization: Token token="S3cretTok", email="a@b"', "S3cretTok"),  # Rails
        ('Authorization: Digest username="u", realm="r", response="6629fae49393a053"', "6629fae49393a053"),
        (
            "Authorization: AWS4-HMAC-SHA256 Credential=AKID/2026/us/s3/aws4_request, "
            "SignedHeaders=host;x-amz-date, Signature=fe5f80f77d5fa3be",
            "fe5f80f77d5fa3be",
        ),
        ('Authorization: OAuth oauth_consumer_key="ck", oauth_signature="S1g%3D"', "S1g%3D"),
    ],
)
def test_authorization_values_whatever_the_scheme(header: str, secret: str) -> None:
    """Only Bearer, Basic, token, Digest and Negotiate were read as a scheme: another scheme (``ApiKey``,
    ``Bot``, ``SSWS``) was taken for the value, and the credential after it was written as it was; of a
    Digest or AWS signature's parameter list only the first was redacted."""
    r = Redactor()
    for text in (f"curl -H '{header}' https://api.test", header):
        out = r.text(text)
        assert secret not in out and "Authorization: [REDACTED:authorization]" in out, out
    assert r.text("the Authorization header is required") == "the Authorization header is required"


def test_private_key_blocks_even_when_cut() -> None:
    r = Redactor()
    pem = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\nAAAA\n-----END OPENSSH PRIVATE KEY-----"
    out = r.text(f"cat > id <<EOF\n{pem}\nEOF")
    assert "b3BlbnNz" not in out and out.endswith("[REDACTED:private_key]\nEOF")
    assert "MIIE" not in r.text("key: -----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA")


def test_url_credentials() -> None:
    out = Redactor().text("git clone https://bob:s3cr3t@git.example.test/repo.git")
    assert "s3cr3t" not in out and "https://bob:[REDACTED:url_credentials]@git.example.test" in out


def test_a_token_as_the_url_user_name_is_a_credential() -> None:
    """``https://TOKEN@github.com`` (a token as the user name, GitHub's documented form) and
    ``https://KEY:@api.example`` (a key with an empty password) kept the token: only ``user:password@`` was
    read as a credential. A short user name (``git@``) or one without a digit (a person's name) stays."""
    r = Redactor()
    token, key = "0123456789abcdef0123456789abcdef01234567", "sk_test_abcdefghijklmnop1234"
    assert r.text(f"git clone https://{token}@github.com/o/r.git") == (
        "git clone https://[REDACTED:url_credentials]@github.com/o/r.git"
    )
    assert (
        r.text(f"curl https://{key}:@api.stripe.test/v1")
        == "curl https://[REDACTED:url_credentials]@api.stripe.test/v1"
    )
    for kept in ("git clone https://git@github.com/o/r", "https://firstname.lastname@corp.test/x", "ssh://git@h:22/x"):
        assert r.text(kept) == kept


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
    auth = {
        "auth": "hunter2hunter2",
        "oauth": {"client": "c", "code": "x"},
        "oauth2": "t",
        "proxy_auth": "p",
        "x-auth": "w",
        "requireAuth": True,
        "author": "bob",
        "authority": "ca",
    }
    assert Redactor().apply(auth) == {
        "auth": "[REDACTED:key]",
        "oauth": {"client": "[REDACTED:key]", "code": "[REDACTED:key]"},
        "oauth2": "[REDACTED:key]",
        "proxy_auth": "[REDACTED:key]",
        "x-auth": "[REDACTED:key]",
        "requireAuth": True,
        "author": "bob",
        "authority": "ca",
    }


def test_header_lists_have_their_secret_values_redacted_on_the_record_path() -> None:
    """Headers as a list of name/value objects or pairs (how many HTTP tools take them); through
    ``redacted``, the recorder's path, whose precheck must not skip them (``auth`` is a hint)."""
    from gateway.audit.record import redacted

    record = {
        "tool_input": {
            "headers": [{"name": "Authorization", "value": "Bearer S1"}, {"name": "Accept", "value": "json"}],
            "pairs": [["Cookie", "sid=S2"], ["X-Auth", "S3"], ["Accept", "json"]],
            "args": ["auth", "login"],  # an argv, not a header list: kept
            "config": {"auth": "S4"},
        }
    }
    clean, text = redacted(record, Redactor())
    assert not any(s in text for s in ("S1", "S2", "S3", "S4")), text
    assert clean["tool_input"]["headers"][1] == {"name": "Accept", "value": "json"}
    assert clean["tool_input"]["pairs"][2] == ["Accept", "json"] and clean["tool_input"]["args"] == ["auth", "login"]


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


AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


@pytest.mark.parametrize(
    ("text", "secret", "kept"),
    [
        (f"echo AKIAIOSFODNN7EXAMPLE {AWS_SECRET}", AWS_SECRET, "echo "),
        (f"aws configure set aws_secret_access_key {AWS_SECRET}", AWS_SECRET, "aws configure set"),
        ("mysql --password hunter2 -h db", "hunter2", "mysql --password [REDACTED:password_flag] -h db"),
        ("deploy --api-key s3kr1t --verbose", "s3kr1t", "deploy --api-key [REDACTED:password_flag] --verbose"),
        ("mysql -u root -pSecret db", "Secret", "mysql -u root -p[REDACTED:mysql_password] db"),
        ("mysqldump -p'two words' db", "two words", "mysqldump -p[REDACTED:mysql_password] db"),
        ("curl -u admin:pw https://x.test", "admin:pw", "curl -u admin:[REDACTED:user_password] https://x.test"),
        ("curl --user 'ci:t0k' https://x.test", "t0k", "curl --user 'ci:"),
        ("npm config set //r/:_authToken npm_" + "a1B2c3" * 6, "npm_" + "a1B2c3" * 6, "npm config set"),
        ("HF=hf_" + "Xy9" * 12 + " python train.py", "hf_" + "Xy9" * 12, "python train.py"),
        ("twine upload -p pypi-" + "AgEIcHlwaS5vcmc" + "x" * 60, "pypi-AgEI", "twine upload"),
        ("mcp__x__write_AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE", "mcp__x__write_[REDACTED:api_key]"),
        ("sshpass -p 'S3cret x' ssh host", "S3cret", "sshpass -p [REDACTED:login_password] ssh host"),
        ("sshpass -pS3cret ssh host", "S3cret", "sshpass -p[REDACTED:login_password] ssh host"),
        ("docker login -u ci -p S3cret reg.test", "S3cret", "docker login -u ci -p [REDACTED:login_password] reg"),
        ("helm registry login reg.test -u ci -p S3cret", "S3cret", "-u ci -p [REDACTED:login_password]"),
        ('curl -H "Cookie: sid=S3cret; theme=dark" x', "S3cret", 'curl -H "Cookie: [REDACTED:cookie]" x'),
        ("Set-Cookie: sid=S3cret; Path=/", "S3cret", "Set-Cookie: [REDACTED:cookie]"),
        ("curl --cookie 'sid=S3cret' https://x.test", "S3cret", "curl --cookie [REDACTED:curl_cookie] https"),
        ("curl -b 'sid=S3cret' https://x.test", "S3cret", "curl -b [REDACTED:curl_cookie] https"),
        ("curl --cookie=sid=S3cret https://x.test", "S3cret", "curl --cookie=[REDACTED:curl_cookie] https"),
        ("SSHPASS=S3cret sshpass -e ssh host", "S3cret", "SSHPASS=[REDACTED:assignment] sshpass -e ssh host"),
        ("MYSQL_PWD=S3cret mysql -u root", "S3cret", "MYSQL_PWD=[REDACTED:assignment] mysql"),
        ("npm_config__auth=dXNlcjpwYXNz npm ci", "dXNlcjpwYXNz", "npm_config__auth=[REDACTED:assignment] npm ci"),
        ("docker --context prod login -u ci -p S3cret reg", "S3cret", "-u ci -p [REDACTED:login_password] reg"),
        ("sshpass -p S3cret ssh -p 2222 host", "S3cret", "sshpass -p [REDACTED:login_password] ssh -p 2222 host"),
        ("redis-cli -h db -p 6379 -a S3cret ping", "S3cret", "-p 6379 -a [REDACTED:login_password] ping"),
        ("mongosh -u admin -p S3cret db", "S3cret", "mongosh -u admin -p [REDACTED:login_password] db"),
        ("smbclient //h/share -U bob%S3cret", "S3cret", "smbclient //h/share -U bob%[REDACTED:smb_password]"),
        ("curl --oauth2-bearer S3cret https://x.test", "S3cret", "curl --oauth2-bearer [REDACTED:password_flag]"),
        ('curl -d "{\\"Authorization\\": \\"Bearer S3cret\\"}" x', "S3cret", '\\"[REDACTED:authorization]\\"}'),
        ('curl -d "{\\"Cookie\\": \\"sid=S3cret\\"}" x', "S3cret", '\\"[REDACTED:cookie]\\"}'),
        ("npm config set //r.test/:_authToken S3cret", "S3cret", "//r.test/:_authToken [REDACTED:config_password]"),
        ("yarn config set npmAuthToken S3cret", "S3cret", "npmAuthToken [REDACTED:config_password]"),
        ("git config --global user.password 'S3 cret'", "S3 cret", "user.password [REDACTED:config_password]"),
        ("poetry config http-basic.pypi alice S3cret", "S3cret", "http-basic.pypi alice [REDACTED:config_password]"),
        ("htpasswd -b .htpasswd alice S3cret", "S3cret", "htpasswd -b .htpasswd alice [REDACTED:htpasswd_password]"),
        ("htpasswd -bc f alice S3cret && nginx -s reload", "S3cret", "alice [REDACTED:htpasswd_password] && nginx"),
        ("htpasswd -nbB -C 10 alice S3cret > f", "S3cret", "-C 10 alice [REDACTED:htpasswd_password] > f"),
        ("htpasswd -n -b alice 'two words'", "two words", "htpasswd -n -b alice [REDACTED:htpasswd_password]"),
        (
            """echo '{"auths": {"reg": {"auth": "dXNlcjpTM2NyZXQ="}}}' > ~/.docker/config.json""",
            "dXNlcjpTM2NyZXQ=",
            '{"auth": [REDACTED:json_auth]}}}',
        ),
        ('curl -d "{\\"x-auth\\": \\"S3cret\\"}" x', "S3cret", '{\\"x-auth\\": [REDACTED:json_auth]}'),
        ('{"db_pwd": "S3cret", "oauth": "S3cret2"}', "S3cret", '"oauth": [REDACTED:json_auth]'),
        ("REDIS_PASS=S3cret redis-server", "S3cret", "REDIS_PASS=[REDACTED:assignment] redis-server"),
        ("ansible_become_pass=S3cret", "S3cret", "ansible_become_pass=[REDACTED:assignment]"),
        ("db-pass: S3cret", "S3cret", "db-pass: [REDACTED:assignment]"),
        ("os.environ['DB_PASSWORD']='S3cret'", "S3cret", "os.environ['DB_PASSWORD']=[REDACTED:assignment]"),
        ("const API_TOKEN: string = 'S3cret';", "S3cret", "const API_TOKEN: string = [REDACTED:assignment];"),
        ("curl 'https://x.test/v1?key=S3cret&q=1'", "S3cret", "?key=[REDACTED:query_secret]&q=1"),
        ("https://x.test/a?X-Amz-Signature=1&sig=S3cret", "S3cret", "&sig=[REDACTED:query_secret]"),
        ("<server><password>S3cret</password></server>", "S3cret", "<password>[REDACTED:xml_secret]</password>"),
        ("machine h\n  login bob\n  password S3cret\n", "S3cret", "password [REDACTED:netrc_password]"),
        ('echo "db.test:6543:app:bob:S3cret" >> ~/.pgpass', "S3cret", 'app:bob:[REDACTED:pgpass_password]" >>'),
        ("localhost:*:*:postgres:S3cret\n", "S3cret", "localhost:*:*:postgres:[REDACTED:pgpass_password]\n"),
        ("10.0.0.7:5432:app:bob:S3cr$et", "S3cr$et", "10.0.0.7:5432:app:bob:[REDACTED:pgpass_password]"),
        ("gh secret set API --body S3cret", "S3cret", "gh secret set API --body [REDACTED:cli_secret]"),
        ("echo S3cret | docker login -u bob --password-stdin r", "S3cret", "echo [REDACTED:cli_secret] | docker"),
        ("http -a bob:S3cret https://x.test", "S3cret", "http -a bob:[REDACTED:user_password] https"),
        ("gpg --batch --passphrase S3cret -d f", "S3cret", "--passphrase [REDACTED:password_flag] -d f"),
        ("DB = {'user': 'bob', 'pass': 'S3cret'}", "S3cret", "'pass': [REDACTED:quoted_pass]}"),
        ('{"pw": "S3cret", "n": 1}', "S3cret", '{"pw": [REDACTED:quoted_pass], "n": 1}'),
        ("openssl req -passout pass:S3cret -new", "S3cret", "-passout pass:[REDACTED:openssl_pass] -new"),
        ("openssl req -passout 'pass:S3cret' -new", "S3cret", "-passout 'pass:[REDACTED:openssl_pass]' -new"),
        ("openssl rsa -passin=pass:S3cret", "S3cret", "-passin=pass:[REDACTED:openssl_pass]"),
        ("AccountName=x;AccountKey=S3cret==;EndpointSuffix=c", "S3cret", "AccountKey=[REDACTED:assignment];"),
        ("https://b.s3.test/k?X-Amz-Date=1&X-Amz-Signature=S3cret", "S3cret", "Signature=[REDACTED:query_secret]"),
    ],
)
def test_command_line_secrets(text: str, secret: str, kept: str) -> None:
    out = Redactor().text(text)
    assert secret not in out and "[REDACTED:" in out and kept in out, out


@pytest.mark.parametrize(
    "text",
    [
        "docker run -u 1000:1000 img",
        "git push -u origin main:main",
        "mysql -p db",
        "psql --no-password -h db",
        "aws s3 cp s3://bucket/key 9fceb02d0ae598e95dc970b74767f19372d61af8",  # a git SHA is no AWS secret
        "ls -la",
        "ssh -p 2222 host",  # -p is a port outside sshpass and registry logins
        "python login.py -p 8080",
        "docker login reg.test",
        "curl -b cookies.txt https://x.test",
        "grep -rn cookie src/",
        "grep -rn 'cookie:' src/",
        "const cookie: string = req.headers.cookie;",
        "cookie: {httpOnly: true, secure: true}",
        "sshpass -f ~/.pw ssh -p 2222 host",  # sshpass reads the password from a file; -p 2222 is ssh's
        "git checkout -b feature/login",
        "GIT_AUTHOR_NAME=Jo git commit -m x",
        "export OLDPWD=/tmp",
        "npm config get //r.test/:_authToken",
        "npm config delete //r.test/:_authToken",
        "git config --get user.token",
        "git config --global credential.helper store",
        "htpasswd -c .htpasswd alice",  # prompts for the password
        "htpasswd -B .htpasswd alice",
        '{"author": "Jo", "requireAuth": true, "auth_mode": "basic"}',
        "PASS=1 make",
        "bypass=1 compass_dir=/x",
        "gh secret list",
        "gh issue create --body 'fix the login page'",
        "<token-count>5</token-count>",
        "a password is required",
        "echo hello | grep x",
        "docker run -p 5432:5432 postgres",
        'ports: ["5432:5432"]',
        "chmod 600 ~/.pgpass && psql -h db -p 5432 app",
    ],
)
def test_command_lines_without_secrets_are_kept(text: str) -> None:
    assert Redactor().text(text) == text


def test_secrets_in_object_keys_and_tool_names() -> None:
    r = Redactor()
    a, b = ANTHROPIC, "sk-ant-api03-" + "R" * 40
    out = r.apply({"tool_name": "mcp__x__write_" + AWS, "tool_input": {a: 1, b: {"x": 2}, "ok": 3}})
    text = repr(out)
    assert a not in text and b not in text and AWS not in text
    assert out["tool_name"] == "mcp__x__write_[REDACTED:api_key]"
    assert sorted(out["tool_input"]) == ["[REDACTED:api_key]", "[REDACTED:api_key] #2", "ok"]
    assert out["tool_input"]["ok"] == 3
    assert not r.clean(f'{{"{a}": 1}}')  # the precheck sees keys too


def test_a_long_object_key_is_truncated_like_any_string() -> None:
    """The README truncates every string of a record, object keys included; a key with nothing that looks
    like a secret was kept whole however long (a 1 MB key, 1 MB in the record)."""
    r = Redactor(max_value=64)
    long_a, long_b = "k" * 5_000, "k" * 4_999 + "j"
    out = r.apply({long_a: 1, long_b: 2, "short": 3})
    assert len(out) == 3 and out["short"] == 3
    assert all(len(key) < 200 for key in out) and all("truncated: 5000 bytes" in k for k in out if k != "short")


def test_every_secret_the_policy_scanner_finds_is_redacted() -> None:
    """The policy validator's secret scanner (configs/validators/policy.py) and the redactor keep their own
    patterns (the scanner lets documentation placeholders pass and wants whole tokens; redaction must not):
    each value a scanner pattern finds in the scanner's own test examples is redacted on its own, with no
    ``NAME=`` around it to help."""
    from configs.validators.policy import SECRET_PATTERNS
    from tests.unit import test_policy_validator

    [mark] = [m for m in test_policy_validator.test_secrets_are_found.pytestmark if m.name == "parametrize"]
    checked = set()
    for text, kind in mark.args[1]:
        for name, pattern in SECRET_PATTERNS:
            match = pattern.search(text)
            if name == kind and match:
                value = match.group(match.lastindex or 0)
                in_context = name in ("a password in a URL", "an AWS secret access key")  # bare, they are no secret
                out = Redactor().text(f"echo {match.group(0) if in_context else value} done")
                assert value not in out and "[REDACTED:" in out, (kind, out)
                checked.add(name)
    assert len(checked) >= 12


def test_redacted_walks_only_records_with_a_hint_in_their_outside_text() -> None:
    from gateway.audit.record import canonical, redacted

    redactor = Redactor()
    plain = {"tool_input": {"command": "npm test"}, "handlers": [{"id": "guard", "reason": None}]}
    record, body = redacted(plain, redactor)
    assert record is plain and body == canonical(plain)
    named = {"tool_input": {"command": "npm test"}, "handlers": [{"id": "secret-scan", "reason": None}]}
    assert redacted(named, redactor)[0] is named  # a hint in hookgate's own fields only: no walk
    key = "sk-ant-api03-" + "A" * 40
    leaky = {"tool_input": {"command": f"curl -H 'x-api-key: {key}'"}, "handlers": []}
    record, body = redacted(leaky, redactor)
    assert record is not leaky and key not in body and body == canonical(record)


@pytest.mark.parametrize(
    ("text", "secrets"),
    [
        ('curl -H "X-Api-Key: abcdef1234567890" https://api.example', ["abcdef1234567890"]),
        ("curl -H 'x-access-key: zz99yy88' https://x", ["zz99yy88"]),
        ('sqlcmd -Q "x" "Server=db;Uid=sa;Pwd=Hunter2secret;"', ["Hunter2secret"]),
        ('curl -d "{\\"password\\":\\"a1b2c3\\",\\"token\\":\\"zz9988\\"}" https://x', ["a1b2c3", "zz9988"]),
        ("TOKEN=a\\ b-rest ./run", ["a\\ b-rest"]),
    ],
)
def test_hyphenated_names_connection_strings_and_escaped_json_are_redacted(text: str, secrets: list[str]) -> None:
    out = Redactor().text(text)
    assert "[REDACTED:" in out
    for secret in secrets:
        assert secret not in out, out


def test_the_working_directory_is_not_a_password() -> None:
    for text in ("export PWD=/home/me/project", "cd $PWD && PWD=. make", "echo $PWD"):
        assert Redactor().text(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "secret-" * 15_000,
        "a-" * 50_000 + "password",
        "--" + "a-" * 50_000 + "x",
        "mysql " * 20_000,
        "a://" * 25_000,
        "eyJaaaaaaaaa." * 8_000,
        "a.b." * 25_000 + "secret",
        "x://b:" * 15_000,
        'password="' * 10_000,
        "docker login " * 8_000,
        "sshpass -p" * 10_000,
        "cookie: " * 12_000,
        "curl -b " * 12_000,
        "docker login " * 4_000 + "redis-cli -a" * 4_000,
        "smbclient -U a" * 7_000,
        "sshpass -f x" * 8_000,
        "a_auth_pwd" * 10_000,
        'Authorization\\": \\"' * 5_000,
        "npm config set " * 7_000,
        "git config " + "-x " * 30_000,
        "htpasswd" + " -b" * 30_000,
        "htpasswd -nb a " * 7_000,
        '\\"x_auth\\": \\"' * 7_000,
        '"' + "a" * 100_000 + 'auth": "x"',
        "?key=" * 20_000,
        "<password " * 10_000,
        "machine " * 12_000 + "password",
        "echo x " * 14_000 + "| docker login --password-stdin",
        "gh secret set " * 7_000,
        "a_pass-pass" * 9_000,
        "a:5432:" * 14_000 + "b",
        "*:" * 50_000 + "pgpass",
        "-passin pass:" * 8_000,
        "?x-amz-" * 15_000 + "signature=",
        "'pass': " * 12_000 + "'x",
        "Authorization: Digest " + 'a="' * 30_000,
        "Authorization: " + "a=b, " * 20_000,
        "https://" + "a1" * 50_000,
        "x://" + ("a" * 990 + "://") * 100,
    ],
    ids=[
        "secret-run",
        "dashes",
        "option",
        "mysql",
        "schemes",
        "jwt-ish",
        "dotted",
        "userinfo",
        "quotes",
        "login",
        "sshpass",
        "cookie",
        "curl-cookie",
        "logins",
        "smbclient",
        "sshpass-options",
        "auth-names",
        "escaped-authorization",
        "config-set",
        "config-options",
        "htpasswd-options",
        "htpasswd-batch",
        "escaped-json-auth",
        "long-json-key",
        "query-keys",
        "xml-open-tags",
        "netrc-machines",
        "echo-before-password-stdin",
        "gh-secret-set",
        "pass-names",
        "pgpass-ports",
        "pgpass-wildcards",
        "openssl-pass",
        "amz-query",
        "quoted-pass",
        "authorization-params-quotes",
        "authorization-params",
        "url-token-user",
        "url-token-users",
    ],
)
def test_redaction_takes_time_linear_in_the_text(text: str) -> None:
    """A pattern that backtracks (cubic on a run like ``secret-secret-...``: 16 KB took longer than ten
    minutes) would hold back ``hookgate run``'s answer past the host's timeout. 100 KB must finish,
    with a margin of hundreds over what a linear scan takes (the alarm only catches a runaway)."""
    import signal

    def runaway(signum: int, frame: object) -> None:
        raise AssertionError("redaction did not finish within 30 s")

    previous = signal.signal(signal.SIGALRM, runaway)
    signal.alarm(30)
    try:
        Redactor().apply({"command": text})
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_everything_under_a_secret_key_is_redacted_whatever_its_shape() -> None:
    out = Redactor().apply(
        {"password": ["hunter2", 42, None], "token": {"v": "abc", "n": [1, "x"]}, "db_pwd": "z9", "name": "bob"}
    )
    assert out == {
        "password": ["[REDACTED:key]", "[REDACTED:key]", None],
        "token": {"v": "[REDACTED:key]", "n": ["[REDACTED:key]", "[REDACTED:key]"]},
        "db_pwd": "[REDACTED:key]",
        "name": "bob",
    }


def test_a_connection_string_password_may_start_with_a_dot_or_dollar() -> None:
    r = Redactor()
    assert "Xq7" not in r.text("Server=db;Uid=sa;Pwd=.Xq7abc;")
    assert "$DBPASS" not in r.text("Pwd=$DBPASS")
    for path in ("PWD=./x", "PWD=..", "PWD=~/w"):
        assert r.text(path) == path


def test_a_custom_pattern_is_stopped_after_its_time_and_an_earlier_timer_still_fires() -> None:
    import signal
    import time

    fired: list[int] = []
    previous = signal.signal(signal.SIGALRM, lambda signum, frame: fired.append(signum))
    signal.setitimer(signal.ITIMER_REAL, 1.0)
    try:
        started = time.monotonic()
        out = Redactor(["(a+)+$"]).text("x " + "a" * 30 + "!")
        assert out == "[REDACTED:custom-timeout]" and time.monotonic() - started < 5
        assert Redactor(["acme_[0-9]+"]).text("key acme_123") == "key [REDACTED:custom]"
        deadline = time.monotonic() + 10
        while not fired and time.monotonic() < deadline:
            time.sleep(0.05)
        assert fired == [signal.SIGALRM]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["psql", "--password", "S3cret", "-h", "db"], ["psql", "--password", "[REDACTED:password_flag]", "-h", "db"]),
        (["curl", "-u", "bob:S3cret", "https://x"], ["curl", "-u", "bob:[REDACTED:user_password]", "https://x"]),
        (["sshpass", "-p", "S3cret", "ssh", "h"], ["sshpass", "-p", "[REDACTED:login_password]", "ssh", "h"]),
        (
            ["gh", "secret", "set", "X", "--body", "two words"],
            ["gh", "secret", "set", "X", "--body", "[REDACTED:argv]"],
        ),
        (["gpg", "--passphrase", "S3cret\n"], ["gpg", "--passphrase", "[REDACTED:argv]"]),
        (["psql", "--password", "'S3cret'"], ["psql", "--password", "[REDACTED:argv]"]),
        (["ls", "-la", "a b"], ["ls", "-la", "a b"]),
        (["echo", "token", "passed"], ["echo", "token", "passed"]),
    ],
)
def test_an_argument_vector_is_redacted_as_its_command_line(argv: list[str], expected: list[str]) -> None:
    assert Redactor().apply({"command": argv}) == {"command": expected}


def test_the_object_keys_pass_and_pw_hold_secrets() -> None:
    assert Redactor().apply({"user": "bob", "pass": "S3cret", "pw": "S3cret2", "passed": 3}) == {
        "user": "bob",
        "pass": "[REDACTED:key]",
        "pw": "[REDACTED:key]",
        "passed": 3,
    }


def test_a_pgpass_file_written_by_name_has_its_passwords_redacted() -> None:
    """A Write to ``~/.pgpass`` names the file only in ``file_path``: its content is read as .pgpass lines
    (any port), and a line redacted once stays as it is when read again."""
    out = Redactor().apply({"file_path": "/home/u/.pgpass", "content": "db.test:5433:app:bob:S3cret\n"})
    assert out["content"] == "db.test:5433:app:bob:[REDACTED:pgpass_password]\n"
    again = Redactor().text(Redactor().text("db:5432:app:bob:S3cret"))
    assert again == "db:5432:app:bob:[REDACTED:pgpass_password]"
    assert (
        Redactor().apply({"file_path": "/p/notes.txt", "content": "db.test:5433:app:bob:x"})["content"].endswith(":x")
    )


GHP = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
AKIA = "AKIAQWERTYUIOPASDFGH"
ANT = "sk-ant-api03-" + "Zq9x" * 10


@pytest.mark.parametrize(
    "text",
    [
        f"use this\\n{GHP}",  # a literal \n escape in file text (a JSON file, echo -e)
        f"tok:\\t{GHP}",
        f"keys:\\n{ANT}",
        f"KEY=1{AKIA}",  # a digit right before the distinctive prefix
        f"curl 'https://x/?h=Authorization%3A%20Bearer%20{GHP}'",  # URL-encoded
        f"q=%20{ANT}",
        f"printf 'u\\n{GHP}' | gh auth login --with-token",
    ],
)
def test_keys_right_after_an_escape_or_a_digit_are_redacted(text: str) -> None:
    out = Redactor().text(text)
    assert GHP not in out and AKIA not in out and ANT not in out and "[REDACTED:" in out


def test_a_generic_prefix_inside_a_word_is_no_key() -> None:
    text = "git checkout task-implement-feature-login-flow && echo disk-usage-report-for-january-2026"
    assert Redactor().text(text) == text


@pytest.mark.parametrize(
    "block",
    [
        "-----BEGIN\tRSA PRIVATE KEY-----\nMIIEpAIB\n-----END RSA PRIVATE KEY-----",
        "-----BEGIN RSA PRIVATE  KEY-----\nMIIEpAIB",
        "-----BEGIN  OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1r",
    ],
)
def test_private_key_blocks_with_odd_spacing(block: str) -> None:
    out = Redactor().text(f"key: {block}")
    assert "MIIE" not in out and "b3Bl" not in out and "[REDACTED:private_key]" in out


def test_the_hint_pattern_finds_exactly_what_the_hints_do() -> None:
    """``has_hint`` moves from one ``in`` test per hint to one compiled trie (``hint_pattern``) after
    ``PATTERN_AFTER`` calls: both must say the same of every text, a hint at the very end, a
    near miss and a hint inside a longer one included."""
    import random
    import re

    from gateway.audit import hints, redact

    pattern = re.compile(hints.hint_pattern(redact.ALL_HINTS))
    rng = random.Random(7)
    alphabet = "abcdeghiklmnoprstuwxyz-_:=/'\"\\ .*0123456789"
    texts = ["", "npm test", "ls -la", "git push -u origin", "passport", "authors", "a" * 300 + "ghp_"]
    texts += [hint[:-1] for hint in redact.ALL_HINTS] + [f"x{hint}y" for hint in redact.ALL_HINTS]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 60))) for _ in range(3000)]
    for text in texts:
        expected = any(hint in text for hint in redact.ALL_HINTS)
        assert (pattern.search(text) is not None) is expected, text
    # the switch itself: the same answers before and after it, in one search
    search = hints.HintSearch(redact.ALL_HINTS)
    some = texts[: hints.PATTERN_AFTER + 50]
    answers = [search(text) for text in some]
    assert search.pattern is not None
    assert answers == [any(h in t for h in redact.ALL_HINTS) for t in some]
    with pytest.raises(ValueError, match="empty hint"):
        hints.hint_pattern(["a", ""])


def test_a_url_hookgate_already_masked_keeps_its_documented_form() -> None:
    """A store error names its URL as ``postgresql://hookgate:***@host`` (``gateway.store.url.redact``);
    the failure text the agent and the audit get is redacted again, and once turned that into
    ``hookgate:[REDACTED:url_credentials]@``: the masked form stays, a real password is still redacted."""
    from gateway.store.url import redact

    redactor = Redactor()
    message = f"store {redact('postgresql://hookgate:pgpw@127.0.0.1:5432/hookgate')} is unreachable: timeout"
    assert redactor.text(message) == "store postgresql://hookgate:***@127.0.0.1:5432/hookgate is unreachable: timeout"
    assert "pgpw" not in redactor.text("postgresql://hookgate:pgpw@db/x")
    assert "***x" not in redactor.text("postgresql://u:***x@db/x")
