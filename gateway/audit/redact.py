"""Secret redaction and value truncation for audit records, applied before anything is written.

``Redactor(extra_patterns, max_value).apply(value)`` returns a copy of ``value`` (any JSON value)
in which:

- every string, object keys included (``{"sk-ant-...": 1}``; keys that redact alike get `` #2``, ...),
  is scanned with the default patterns below plus ``audit.redact`` (regular expressions, Python ``re``
  syntax); a match becomes ``[REDACTED:<kind>]``. For an assignment (``API_KEY=...``), an option
  (``--password X``, ``-pX``, ``-u user:X``) or an ``Authorization`` header only the value is
  replaced, the name stays;
- a header list's entry that names a secret (``{"name": "Cookie", "value": ...}``, ``["Authorization",
  "Bearer ..."]``) has its value replaced the same way;
- a dict entry whose key names a secret (``password``, ``api_key``, ``authorization``, ``auth``,
  ``client_secret``, ``*_token``, ...) has its whole value replaced, whatever it looks like;
- a string longer than ``max_value`` characters (after redaction) is cut to its first
  ``max_value`` characters followed by ``…[truncated: N bytes, sha256 HEX]``: N is the UTF-8 size
  of the redacted string and HEX its SHA-256, so two records of one large value can be compared
  without keeping it (the hash is never taken over a secret).

Default patterns (``DEFAULT_PATTERNS``): private key blocks (PEM ``-----BEGIN ... PRIVATE KEY-----`` up to its END
line, or to the end of the string when cut); ``Authorization`` / ``Proxy-Authorization`` values (any scheme:
``Bearer``, ``ApiKey``, ``Bot``, ...; a ``Digest`` or AWS parameter list whole); a bare 40-character AWS secret access
key in a string that names an AWS key id or ``aws``; provider API keys and tokens, also right after ``_`` in a name
(``mcp__x__write_AKIA...``), a ``\\n``/``\\t`` escape in text or a ``%XX`` escape in a URL, and the distinctive
prefixes (all but ``sk-`` and ``*_live_``) right after a letter or digit: Anthropic ``sk-ant-``, OpenAI
``sk-``/``sk-proj-``, GitHub ``ghp_``/``gho_``/``ghs_``/``ghu_``/``ghr_``/``github_pat_``, Slack ``xox?-`` and webhook
URLs, AWS access key ids ``AKIA``/``ASIA``/``ABIA``/``ACCA``, Google ``AIza``, GitLab ``glpat-``, Stripe
``sk_live_``/``rk_live_``, npm ``npm_``, Hugging Face ``hf_``, PyPI ``pypi-``, JSON web tokens ``eyJ...``;
``.env``-style assignments whose name contains SECRET, TOKEN, PASSWORD/PASSWD, API_KEY/API-KEY/APIKEY, ACCESS_KEY,
PRIVATE_KEY or CREDENTIAL(S) (``export GITHUB_TOKEN=...``, ``DB_PASSWORD: ...``, ``--password=...``, ``X-Api-Key:
...``, and JSON escaped inside a shell string: ``{\\"password\\":\\"...\\"}``); ``Pwd=...`` in a connection string (not
``PWD=/path``); credentials in URLs (``https://user:pass@host``, a token as the user: 20+ characters with a digit,
``https://TOKEN@host``); the space form of secret options (``--password X``, ``--token X``, ``--api-key X``, ``-pass
X``); ``mysql -pX`` (and ``mysqldump``, ``mariadb``...); ``sshpass -p X`` (after sshpass's own options), a registry
login's ``-p X`` (``docker [global options] login``, ``podman``, ``helm registry``, ...), ``redis-cli -a X``, ``mongosh
-p X``, ``smbclient -U user%X``; ``SSHPASS=``, ``MYSQL_PWD=`` and ``*_auth=`` assignments, names that end in
``_PASS``/``-pass`` (``REDIS_PASS=``, ``ansible_become_pass=``), a subscript or a type annotation before the ``=``
(``os.environ['DB_PASSWORD'] = ...``, ``API_TOKEN: string = ...``); a URL's credential query parameters (``?key=``,
``&api_key=``, ``?access_token=``, ``&sig=``, ...); XML elements named like a secret (``<password>``, ``<apiKey>``);
``.pgpass`` lines (``host:port:db:user:password``); ``.netrc`` entries (``machine H login U password X``); ``gh secret
set NAME --body X``; the ``echo X`` piped into a ``--password-stdin`` login; HTTPie's ``-a user:X``; a secret set with
a package manager's or git's ``config`` (``npm config set //reg/:_authToken X``, ``yarn config set npmAuthToken X``,
``git config user.password X``, ``poetry config http-basic.repo user X``); ``htpasswd -b FILE USER X`` / ``-nb USER
X``; a quoted ``"auth"``-like key's string value written inside a string (``{"auth": "..."}``, ``{\\"x-auth\\": ...}``,
``"db_pwd"``); ``Cookie`` / ``Set-Cookie`` header values that start ``name=`` (also JSON-escaped), curl's cookie data
(``-b 'sid=...'``, ``--cookie``); ``--oauth2-bearer X``; ``curl -u user:X`` (``--user``, ``--proxy-user``; a numeric
``uid:gid`` is kept). The policy validator's scanner (``configs.validators.policy``) keeps its own, stricter list (it
lets documentation placeholders pass); ``tests/unit/test_audit_redact.py`` checks that every kind it finds is redacted
here too.

Only stdlib ``re`` is used (``hookgate run`` already has it loaded). Each default pattern runs only on
strings that contain one of its hints (``DEFAULT_PATTERNS``) and compiles on first use, and none can
backtrack into a run it has read (possessive and bounded quantifiers): the time is linear in the text
(a name pattern that could start anywhere in ``secret-secret-...`` once took cubic time, minutes for
16 KB, holding back ``hookgate run``'s answer).
"""

from __future__ import annotations

import re

from gateway.audit.hints import HintSearch

TYPE_CHECKING = False  # typing costs ~2 ms to import; `hookgate run` loads this module on every record
if TYPE_CHECKING:
    from typing import Any

REDACTED = "[REDACTED:{kind}]"

_NAME = (
    # a whole run of name characters (never a part of one: no backtracking inside it, so the time is
    # linear in the text) that holds one of the words
    r"(?<![A-Za-z0-9_.\-])(?=[A-Za-z0-9_.\-]*?(?:SECRET|TOKEN|PASSWORD|PASSWD|PASSPHRASE|API[_\-]?KEY"
    r"|ACCESS[_\-]?KEY|ACCOUNT[_\-]?KEY|PRIVATE[_\-]?KEY|CREDENTIALS?|SSHPASS|_PWD(?![A-Za-z])|_AUTH(?![A-Za-z])|[_\-]PASS(?![A-Za-z])))"
    r"[A-Za-z0-9_.\-]++"
)
_HT_OPTS = r"(?:\s++-[A-Za-z]++(?:\s++[0-9]++)?)"
"""One of htpasswd's options: a cluster such as ``-bc``, or ``-C 10``."""
_WORD = r"[^\s\-;&|<>][^\s;&|<>]*+"
"""A positional argument (a file or a user name)."""
_HTPASSWD_SHAPE = (
    r"\bhtpasswd(?=<opt>*?\s++-[a-zA-Z]*b)"
    r"(?:(?=<opt>*?\s++-[a-zA-Z]*n)<opt>*+\s++<word>|<opt>*+\s++<word>\s++<word>)\s++"
)
_HTPASSWD = _HTPASSWD_SHAPE.replace("<opt>", _HT_OPTS).replace("<word>", _WORD)
"""htpasswd with ``-b`` among its options, up to the password: after one name with ``-n`` (no file), else
after two (the file and the user)."""
DEFAULT_PATTERNS: tuple[tuple[str, tuple[str, ...], int, str], ...] = (
    # (kind, hints: lower-case substrings one of which any match contains, re flags, pattern)
    (
        "private_key",
        ("-----begin",),
        re.IGNORECASE | re.DOTALL,
        # any run of spaces and tabs between the words (a tab or a double space is still the block)
        r"-----BEGIN[ \t]++(?:[A-Z0-9]++[ \t]++)*?PRIVATE[ \t]++KEY(?:[ \t]++BLOCK)?-----"
        r"(?:.*?-----END[ \t]++(?:[A-Z0-9]++[ \t]++)*?PRIVATE[ \t]++KEY(?:[ \t]++BLOCK)?-----|.*\Z)",
    ),
    (
        "authorization",
        ("authorization",),
        re.IGNORECASE,
        r"(?P<name>\b(?:proxy-)?authorization(?:\\?[\"'])?\s*[:=]\s*(?:\\?[\"'])?)(?:[A-Za-z][A-Za-z0-9._~+/\-]*+"
        r"[ \t]++(?=[^\s\"',;\\]))?(?:<p>(?:[ \t]*+,[ \t]*+<p>)*+|[^\s\"',;\\]++)".replace(
            "<p>", r"[A-Za-z0-9_.\-]++=(?:\\?\"[^\"\\\n]*+\\?\"|[^\s\"',\\]*+)"
        ),
    ),
    (
        "aws_secret",
        ("akia", "asia", "aws"),
        0,
        # a bare 40-character AWS secret access key (mixed case with a digit, / or +: never a git SHA)
        # in a string that also names an AWS key id or "aws"
        r"(?<![A-Za-z0-9/+=])(?=[A-Za-z0-9/+]{0,39}[a-z])(?=[A-Za-z0-9/+]{0,39}[A-Z])(?=[A-Za-z0-9/+]{0,39}[0-9/+])"
        r"[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])",
    ),
    (
        "api_key",
        (
            "sk-",
            "sk_live_",
            "rk_live_",
            "ghp_",
            "gho_",
            "ghu_",
            "ghs_",
            "ghr_",
            "github_pat_",
            "xox",
            "akia",
            "asia",
            "aiza",
            "glpat-",
            "eyj",
            "npm_",
            "hf_",
            "pypi-",
            "hooks.slack.com",
        ),
        0,
        # the generic "sk-" and "*_live_" prefixes: no letter or digit before them ("task-..." is no key),
        # except the letter of an escape (a literal \n or \t in file text) or a %XX escape (a URL); "_" may
        # be (a tool name "mcp__x__write_sk-..."). The distinctive prefixes match wherever they start
        # ("1AKIA...", "tok:\\tghp_...").
        r"(?:(?<![A-Za-z0-9])|(?<=\\[nrtbfv0])|(?<=%[0-9A-Fa-f]{2}))"
        r"(?:sk-ant-[A-Za-z0-9_\-]{16,}|sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}|(?:sk|rk)_live_[A-Za-z0-9]{16,})"
        r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}|xox[abposr]-[A-Za-z0-9\-]{10,}"
        r"|(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}|AIza[0-9A-Za-z_\-]{35}|glpat-[A-Za-z0-9_\-]{20,}"
        r"|npm_[A-Za-z0-9]{36}|hf_[A-Za-z0-9]{30,}|pypi-[A-Za-z0-9_\-]{50,}"
        r"|eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"
        r"|(?<=hooks\.slack\.com/services/)T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]{16,}",
    ),
    (
        "url_credentials",
        ("://",),  # (a password hookgate's own messages masked as *** is kept: gateway.store.url.redact)
        re.IGNORECASE,
        r"(?P<name>\b[a-z][a-z0-9+.\-]{0,31}://(?P<user>[^/\s:@\"']++:)?)(?(user)(?!\*\*\*@)[^/\s@\"']++(?=@)|"
        r"(?=[\w.~\-]{0,1000}?\d)[\w.~\-]{20,1000}+(?::(?=@)|(?=@)))",
    ),
    (
        "assignment",
        (
            "secret",
            "token",
            "passw",
            "passphrase",
            "apikey",
            "api_key",
            "api-key",
            "accesskey",
            "access_key",
            "access-key",
            "accountkey",
            "account_key",
            "privatekey",
            "private_key",
            "private-key",
            "credential",
            "sshpass",
            "_pwd",
            "_auth",
            "_pass",
            "-pass",
        ),
        re.IGNORECASE,
        # the name may close a quote, also a backslash-escaped one (JSON inside a shell string:
        # {\"password\":\"x\"}), and a subscript (os.environ['DB_PASSWORD'] = ...), and so may the value;
        # a type annotation between the name and "=" is skipped (API_TOKEN: string = '...')
        r"(?P<name>" + _NAME + r"(?:\\?[\"'])?\]?\s*(?::\s*(?:string|str|String|&str|&'static str)\s*)?"
        r"(?:=|:(?!//))\s*)"
        r"(?:\\\"[^\"\n]*?\\\"|\\'[^'\n]*?\\'|\"[^\"\n]*\"|'[^'\n]*'|(?:[^\s\"',;&|)\\]|\\[^\"'\n])+)",
    ),
    (
        "pwd_assignment",
        ("pwd",),
        re.IGNORECASE,
        # Pwd=... in a connection string (Server=db;Uid=sa;Pwd=x); PWD=/a/path is the working directory
        r"(?P<name>(?<![A-Za-z0-9_])pwd\s*=\s*)(?![/~\s]|\.\.?(?:[/\s;\"']|$))"
        r"(?:\"[^\"\n]*\"|'[^'\n]*'|[^\s\"',;&|)]+)",
    ),
    (
        "password_flag",
        (
            "passw",
            "pass ",
            "passphrase",
            "token",
            "secret",
            "api-key",
            "api_key",
            "apikey",
            "access-key",
            "access_key",
            "accesskey",
            "bearer",
        ),
        re.IGNORECASE,
        # the space form of a command-line secret: --password hunter2, --token X, -pass X (not --password=X:
        # that is an assignment); an option that follows (-h) is not taken for the value
        r"(?P<name>(?<![A-Za-z0-9_\-])--?(?:[A-Za-z0-9]++[\-_]){0,8}(?:password|passwd|passphrase|pass|token|secret"
        r"|api[\-_]?key|access[\-_]?key|bearer)\s+)(?!-)(?:\"[^\"\n]*\"|'[^'\n]*'|[^\s\"',;&|)]+)",
    ),
    (
        "openssl_pass",
        ("pass:",),
        0,
        # an OpenSSL pass phrase given on the command line: -passin pass:X, -passout pass:X, -pass pass:X
        # (env:VAR, file:PATH and fd:N name where it is, not the secret)
        r"(?P<name>(?<![A-Za-z0-9_\-])-pass(?:in|out)?(?:\s++|=)[\"']?pass:)(?:[^\s\"';&|)]+)",
    ),
    (
        "mysql_password",
        ("mysql", "mariadb"),
        0,
        # mysql -pSECRET (the password glued to -p; a bare -p prompts and has none)
        r"(?P<name>\b(?:mysql[a-z]*|mariadb[a-z\-]*)\b[^\n|;&]{0,300}?\s-p)(?:\"[^\"\n]*\"|'[^'\n]*'|[^\s\"';&|)]+)",
    ),
    (
        "cookie",
        ("cookie",),
        re.IGNORECASE,
        # a Cookie / Set-Cookie header's value (session cookies are bearer credentials), name=value first
        # (not `cookie: string` in code): to the end of the header, its quote or the line
        r"(?P<name>(?<![A-Za-z0-9_\-])(?:set-)?cookie(?:\\?[\"'])?\s*:\s*(?:\\?[\"'])?)(?=[^\s\"';,=\\]+=)"
        r"[^\"'\r\n\\]+",
    ),
    (
        "login_password",
        ("sshpass", "login", "redis-cli", "mongo"),
        0,
        # sshpass -p SECRET / -pSECRET (after sshpass's own options only: the command's -p is its own), a
        # registry login's -p (docker, podman, nerdctl, buildah, skopeo, helm registry, oras; global
        # options may come first), redis-cli -a, mongosh/mongo -p: a password there, not a port
        r"(?P<name>(?:\bsshpass(?:\s+-[fdP]\s*[^\s-]\S*|\s+-[evhV])*\s+-p"
        r"|\b(?:docker|podman|nerdctl|buildah|skopeo|oras|helm)\b[^\n|;&]{0,200}?\slogin\b[^\n|;&]{0,300}?\s-p"
        r"|\bredis-cli\b[^\n|;&]{0,300}?\s-a|\bmongo(?:sh)?\b[^\n|;&]{0,300}?\s-p)\s*+)"
        r"(?!-)(?:\"[^\"\n]*\"|'[^'\n]*'|[^\s\"';&|)]+)",
    ),
    (
        "curl_cookie",
        ("curl",),
        0,
        # curl -b / --cookie with cookie data (name=value; a file name is kept)
        r"(?P<name>\bcurl\b[^\n|;&]{0,300}?\s(?:-b\s*+|--cookie(?:=|\s+)))(?=[\"']?[^\s\"'=;]+=)"
        r"(?:\"[^\"\n]*\"|'[^'\n]*'|[^\s\"';&|)]+)",
    ),
    (
        "user_password",
        ("-u ", "-u=", "-u'", '-u"', "--user", "--proxy-user", "http"),
        0,
        # curl -u user:password, --user/--proxy-user user:password (a numeric uid:gid is not a password),
        # HTTPie's -a / --auth user:password (after http or https)
        r"(?P<name>(?:(?<![A-Za-z0-9_\-])(?:-u|-U|--user|--proxy-user)"
        r"|\bhttps?\b[^\n|;&]{0,300}?\s(?:-a|--auth))(?:\s+|=)?[\"']?[^\s:\"']+:)"
        r"(?![0-9]+(?:[\s\"']|\Z))[^\s\"']+",
    ),
    (
        "config_password",
        ("config",),
        re.IGNORECASE,
        # a package manager's or git's config value set on the command line under a key that names a
        # secret (npm config set //reg/:_authToken X, yarn config set npmAuthToken X, git config
        # user.password X), and a password after its user (poetry config http-basic.repo user X,
        # composer config http-basic.host user X)
        r"(?P<name>\b(?:npm|pnpm|yarn|git|poetry|pip3?|conda|cargo|bundle|composer)\b[^\n|;&]{0,200}?\sconfig"
        r"(?:\s++-[^\s]++)*+(?:\s++set\b(?:\s++-[^\s]++)*+)?\s++"
        r"(?:http-basic\.[^\s]++\s++[^\s\-][^\s]*+"
        r"|[^\s=]{0,200}?(?:token|auth|password|passwd|secret|api[_\-]?key)[^\s=]{0,200}+)\s++)"
        r"(?!-)(?:\"[^\"\n]*\"|'[^'\n]*'|[^\s\"';&|)<>]+)",
    ),
    (
        "htpasswd_password",
        ("htpasswd",),
        0,
        # htpasswd -b (batch mode: the password on the command line): htpasswd -b[c] FILE USER X,
        # htpasswd -nb USER X
        r"(?P<name>" + _HTPASSWD + r")"
        r"(?!-)(?:\"[^\"\n]*\"|'[^'\n]*'|[^\s\"';&|)<>]+)",
    ),
    (
        "json_auth",
        ("auth", "pwd", "bearer"),
        re.IGNORECASE,
        # a JSON object's "auth"-like key written inside a string (a command's echo, a file's content):
        # {"auth": "dXNlcjpw..."} (Docker's config.json), {"_auth": ...}, {"x-auth": ...}, {"db_pwd": ...};
        # TOKEN, PASSWORD and the like are "assignment" (its names need no quotes); the quotes may be
        # backslash-escaped (JSON inside a shell string)
        r"(?P<name>(?<![A-Za-z0-9_\-])\\?\"(?:[A-Za-z0-9_\-]{0,40}?auth|[A-Za-z0-9_\-]{0,40}?[_\-]pwd|pwd|bearer)\\?\""
        r"\s*+:\s*+)(?:\\\"[^\"\n]*?\\\"|\"[^\"\n]*\")",
    ),
    (
        "quoted_pass",
        # (hints without the opening quote: in the JSON the record precheck scans, "pw" is \"pw\")
        ('pass"', "pass'", 'pw"', "pw'", 'passwd"', "passwd'", 'pwd"', "pwd'", 'pass\\"', 'pw\\"', 'pwd\\"'),
        re.IGNORECASE,
        # a dict or JSON object's short password key written inside a string (a Write of Python or JSON):
        # {'user': 'bob', 'pass': 'x'}, {"pw": "x"}
        r"(?P<name>(?<![A-Za-z0-9_\-])([\"'])(?:pass|pw|passwd|pwd)\2\s*+:\s*+)(?:\"[^\"\n]*\"|'[^'\n]*')",
    ),
    (
        "query_secret",
        ("key=", "token=", "auth=", "sig=", "signature=", "password=", "secret="),
        re.IGNORECASE,
        # a URL's query parameter that carries a credential: ?key=..., &api_key=..., ?access_token=...,
        # &sig=... (a signed URL), ?password=...
        r"(?P<name>[?&](?:x-amz-|x-goog-)?(?:api[_\-]?key|key|token|access[_\-]?token|auth|sig|signature|password"
        r"|secret|client[_\-]?secret)=)[^&#\s\"'<>]+",
    ),
    (
        "xml_secret",
        ("secret", "token", "passw", "apikey", "api_key", "api-key", "credential"),
        re.IGNORECASE,
        # an XML element named like a secret (Maven settings.xml <password>, <apiKey>, <token>)
        r"(?P<name><(?:[\w.\-]{1,40}:)?(?:[\w.\-]{0,40}?(?:password|passwd|secret|token|api[_\-]?key"
        r"|credentials?))(?:\s[^<>]{0,200})?>)[^<]{1,4096}(?=</)",
    ),
    (
        "netrc_password",
        ("password",),
        0,
        # a .netrc entry: machine HOST login USER password X (on one line or several)
        r"(?P<name>\b(?:machine|default)\b(?:\s++(?!password\b)\S++){0,6}?\s++password\s++)[^\s\"']+",
    ),
    (
        "pgpass_password",
        ("pgpass", ":5432:", ":*:"),
        0,
        # a PostgreSQL password file line (~/.pgpass, $PGPASSFILE): host:port:database:user:password, written
        # by an echo or a Write; a field may be *; the hints: the file's name, the default port, a wildcard
        r"(?P<name>(?<![\w.:/@$\-])(?:[\w.\-]++|\*):(?:\d{1,5}|\*):(?:[\w.\-$]++|\*):(?:[\w.\-@$]++|\*):)"
        r"(?!\[REDACTED:)[^\s\"':]++",  # (a redacted line read again stays as it is)
    ),
    (
        "cli_secret",
        ("secret", "password-stdin"),
        0,
        # a secret given as an option's value to a command that stores it (gh secret set NAME --body X), and
        # the echo piped into a login's --password-stdin (echo X | docker login --password-stdin)
        r"(?P<name>\bgh\s++secret\s++set\b[^\n|;&]{0,300}?\s(?:-b|--body)(?:=|\s++)?"
        r"|\b(?:echo|printf)\s++(?=[\"']?[^\s|]++[\"']?\s*\|\s*(?:sudo\s+)?[\w./\-]{1,40}\s[^\n|;&]{0,300}?--password-stdin))"
        r"(?:\"[^\"\n]*\"|'[^'\n]*'|[^\s\"';&|)]+)",
    ),
    (
        "smb_password",
        ("smbclient",),
        0,
        # smbclient -U user%password
        r"(?P<name>\bsmbclient\b[^\n|;&]{0,300}?\s(?:-U|--user(?:=|\s))\s*+[\"']?[^\s%\"']+%)[^\s\"']+",
    ),
)
"""Applied in this order; a kind's pattern runs (and is compiled, once per process) only on strings
that contain one of its hints, so a plain ``ls -la`` costs a few substring tests."""

ALL_HINTS = tuple({h for _, hints, _, _ in DEFAULT_PATTERNS for h in hints} | {"cookie", "pwd", "bearer", "auth"})
"""Lower-case substrings without which no default pattern and no secret key name can match: a record
whose text has none of them (and no string longer than ``max_value``) is written as it is."""

has_hint = HintSearch(ALL_HINTS)  # has_hint(lower): whether lower-cased text holds one of ALL_HINTS

SECRET_KEYS = frozenset(
    {
        "authorization",
        "proxyauthorization",
        "auth",
        "oauth",
        "oauth2",
        "basicauth",
        "httpauth",
        "cookie",
        "setcookie",
        "password",
        "passwd",
        "pwd",
        "passphrase",
        "pass",
        "pw",
        "secret",
        "apikey",
        "xapikey",
        "privatekey",
        "clientsecret",
        "accesstoken",
        "refreshtoken",
        "idtoken",
        "token",
        "bearer",
        "credentials",
        "sessiontoken",
        "secretkey",
        "accesskey",
        "signingsecret",
    }
)
SECRET_KEY_SUFFIXES = ("password", "secret", "apikey", "accesskey", "privatekey", "token", "passwd", "pwd", "auth")

_compiled: dict[str, re.Pattern[str]] = {}
_NOT_WORD = re.compile(r"[\s\"'\\]")
"""What an argument vector's item may not hold as one word of the joined command line (``Redactor.argv``)."""


def _pattern(kind: str, flags: int, regex: str) -> re.Pattern[str]:
    pattern = _compiled.get(kind)
    if pattern is None:
        pattern = _compiled[kind] = re.compile(regex, flags)
    return pattern


def check_pattern(regex: str) -> str | None:
    """Why ``regex`` cannot be an ``audit.redact`` pattern (one line), or None when it can."""
    try:
        compiled = re.compile(regex)
    except re.error as exc:
        return f"not a valid regular expression: {exc}"
    if compiled.match(""):
        return "matches the empty string (it would redact nothing useful and everything around)"
    return None


def _secret_key(key: str) -> bool:
    norm = "".join(ch for ch in key.lower() if ch.isalnum())
    return norm in SECRET_KEYS or (len(norm) > 3 and norm.endswith(SECRET_KEY_SUFFIXES))


def _is_pair(item: Any) -> bool:
    """A header list's ``[name, value]`` entry."""
    return isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[0], str)


def _leaves_redacted(value: Any, depth: int) -> Any:
    """``value`` (what a secret key holds) with every string and number in it replaced, at any depth
    (its shape, keys and ``null``/``true``/``false`` kept)."""
    if depth > 64:
        return "[REDACTED:too-deep]"
    if isinstance(value, dict):
        return {str(k): _leaves_redacted(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_leaves_redacted(v, depth + 1) for v in value]
    if value is None or isinstance(value, bool) or value == "":
        return value
    return REDACTED.format(kind="key")


CUSTOM_SECONDS = 0.2
"""How long the ``audit.redact`` patterns may take on one string (in the main thread, where a timer can stop
them): one that backtracks (``(a+)+$``) would otherwise hold back ``hookgate run``'s answer until the host
times the hook out, and the call goes ahead. A string they do not finish on is replaced whole."""


def _custom_sub(pattern: re.Pattern[str], value: str) -> str:
    """``value`` with ``pattern``'s matches replaced by ``[REDACTED:custom]``; ``[REDACTED:custom-timeout]``
    when that takes over ``CUSTOM_SECONDS`` (``gateway.deadline``: in the main thread only; elsewhere the
    patterns run unbounded)."""
    from gateway.deadline import Deadline, DeadlineExceeded

    deadline = Deadline(CUSTOM_SECONDS)
    try:
        with deadline:
            return pattern.sub("[REDACTED:custom]", value)
    except DeadlineExceeded as exc:
        if exc.deadline is not deadline:
            raise
        return REDACTED.format(kind="custom-timeout")


class Redactor:
    """Redacts secrets and truncates large strings in JSON values (see module docstring).

    extra_patterns: more regular expressions (``audit.redact``). max_value: characters a string keeps
    (>= 16). Pure: ``apply`` never mutates its argument.
    """

    def __init__(self, extra_patterns: tuple[str, ...] | list[str] = (), max_value: int = 4096) -> None:
        self.extra = re.compile("|".join(f"(?:{p})" for p in extra_patterns)) if extra_patterns else None
        self.max_value = max(16, int(max_value))

    def text(self, value: str) -> str:
        """``value`` with secrets replaced, then truncated to ``max_value`` characters."""
        return self._truncated(self._secrets(value))

    def _truncated(self, value: str) -> str:
        """``value`` cut to ``max_value`` characters, with its size and hash."""
        if len(value) <= self.max_value:
            return value
        import hashlib

        data = value.encode("utf-8", "surrogatepass")
        digest = hashlib.sha256(data).hexdigest()
        return f"{value[: self.max_value]}…[truncated: {len(data)} bytes, sha256 {digest}]"

    def _secrets(self, value: str) -> str:
        """``value`` with secrets replaced (no truncation)."""
        lower = value.lower()
        for kind, hints, flags, regex in DEFAULT_PATTERNS:
            if any(hint in lower for hint in hints):
                replacement = f"\\g<name>[REDACTED:{kind}]" if "(?P<name>" in regex else f"[REDACTED:{kind}]"
                value = _pattern(kind, flags, regex).sub(replacement, value)
                lower = value.lower()
        if self.extra is not None:
            value = _custom_sub(self.extra, value)
        return value

    def argv(self, items: list[str]) -> list[str]:
        """An argument vector (``["psql", "--password", "X"]``: Codex's ``shell`` command, an MCP tool's
        ``args``) redacted as the command line it is: the patterns see the items joined by spaces, so an
        option and its value in two items are read together. For that join each item stands in as one
        word (its whitespace, quotes and backslashes as ``_``); an item a redaction touched keeps the
        redacted word when the stand-in was the item itself, and is replaced whole (``[REDACTED:argv]``)
        otherwise. Then each item is redacted and truncated on its own too."""
        words = [_NOT_WORD.sub("_", item) or "_" for item in items]
        joined = " ".join(words)
        lower = joined.lower()
        if self.extra is None and not has_hint(lower):
            return [self.text(item) for item in items]
        redacted = self._secrets(joined)
        if redacted != joined:
            after = redacted.split(" ")
            if len(after) != len(items):  # a redaction took a space with it: mark what it covered
                after = [word if word in redacted else REDACTED.format(kind="argv") for word in words]
            return [
                self.text(item) if new == old else self._truncated(new if item == old else REDACTED.format(kind="argv"))
                for item, old, new in zip(items, words, after, strict=True)
            ]
        return [self.text(item) for item in items]

    def clean(self, text: str) -> bool:
        """True when ``text`` (the JSON of a record's outside text: ``gateway.audit.record.redacted``)
        can hold nothing to redact or truncate: no hint of a default pattern or secret key, no
        ``audit.redact`` pattern, shorter than ``max_value``."""
        if self.extra is not None or len(text) > self.max_value:
            return False
        return not has_hint(text.lower())

    def key(self, key: str, taken: dict[str, Any]) -> str:
        """An object key redacted like any string (``{"sk-ant-...": 1}``); when that makes it equal to a
        key already in ``taken``, `` #2``, `` #3``, ... is added so no entry is lost."""
        if self.extra is None and len(key) <= self.max_value and not has_hint(key.lower()):
            return key
        redacted = self.text(key)
        if redacted == key or redacted not in taken:
            return redacted
        n = 2
        while f"{redacted} #{n}" in taken:
            n += 1
        return f"{redacted} #{n}"

    def apply(self, value: Any, _depth: int = 0) -> Any:
        """A redacted, truncated copy of the JSON value ``value``."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            out: dict[str, Any] = {}
            for key, item in value.items():
                key = self.key(str(key), out)
                if _secret_key(key) and isinstance(item, (dict, list, tuple)):  # {"token": {"v": ...}}, [...]
                    out[key] = _leaves_redacted(item, _depth + 1)
                elif _secret_key(key) and item not in (None, "", True, False):
                    out[key] = REDACTED.format(kind="key")
                else:
                    out[key] = self.apply(item, _depth + 1) if _depth < 64 else "[REDACTED:too-deep]"
            if any(isinstance(v, str) and v.endswith(".pgpass") for v in value.values()):  # a Write of ~/.pgpass
                for key, item in out.items():
                    if isinstance(item, str):
                        out[key] = self._truncated(self._secrets("pgpass\n" + item)[len("pgpass\n") :])
            named = value.get("name", value.get("key"))  # a header list's entry: {"name": "Cookie", "value": ...}
            if isinstance(named, str) and _secret_key(named) and out.get("value") not in (None, "", True, False):
                out["value"] = _leaves_redacted(value["value"], _depth + 1)
            return out
        if isinstance(value, (list, tuple)):
            if _depth < 64 and value and all(_is_pair(item) for item in value):  # [["Cookie", "sid=..."], ...]
                return [
                    [self.text(k), _leaves_redacted(v, _depth + 2)]
                    if _secret_key(k) and v not in (None, "", True, False)
                    else [self.text(k), self.apply(v, _depth + 2)]
                    for k, v in value
                ]
            if len(value) > 1 and all(isinstance(item, str) for item in value):  # an argument vector
                return self.argv(list(value))
            return [self.apply(item, _depth + 1) if _depth < 64 else "[REDACTED:too-deep]" for item in value]
        if value is None or isinstance(value, (bool, int, float)):
            return value
        return self.text(str(value))
