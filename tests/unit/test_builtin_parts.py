"""The pure parts of the built-ins: what counts as a write (readOnly) and shape-keeping truncation."""

from __future__ import annotations

import pytest

from handlers.builtin.truncate_output import truncate
from handlers.builtin.writes import WriteRules, shell_write_reason, sql_write_reason, write_reason

RULES = WriteRules()


@pytest.mark.parametrize(
    "command",
    [
        "ls -la",
        "cat a.txt | grep foo | wc -l",
        "git status && git log -3 --oneline",
        "git -C repo diff HEAD~1",
        "find . -name '*.py' | xargs grep -n TODO",
        "sed -n 1,20p file",
        "sort -u names.txt",
        "ls 2>&1 | head",
        "grep x y > /dev/null",
        "for f in *.md; do head -1 $f; done",
        "(cd src && ls)",
        'echo "a && rm b"',
        "git branch -a",
        "git stash list",
        "timeout 5 cat x",
        "env FOO=1 ls",
        "cat <<EOF\nhi\nEOF",
        "",
        "git -C repo log --oneline",
        "git diff --output-indicator-new=+ HEAD",
        "git grep -o TODO",
        "less +G app.log",
        "less +/ERROR app.log",
        "less -N +42 file",
        "more +/pattern file",
        "date -u",
        "hostname -f",
        # sed's options and script read command by command (F4): only reads
        "sed -n '/foo/,/bar/p' x",
        "sed -e s/a/b/ -e '$d' x",
        "sed '1~2d;3q' x",
        "sed '/x/!s/a/b/;$!N' y",
        "sed ':a;N;ba' x",
        "sed '1a hello world' x",
        "sed --expression=1p --quiet x",
        "sed -Ez 's/hello/world/g' x",
        "sed 'y/abc/xyz/' f",
        "sed 's/a/b/2g;1r other' f",
        "ls ${q:-foo}",
        "echo ${x:-$(date)}",
        "FOO=1 ls",
        "LC_ALL=C sort x",
        "sort -to -k1,1 x",  # -t takes a value: its 'o' is the separator
        "sort --check x",
        "sort -T /tmp/sorttmp -S 1G big.txt",
        "cat <<EOF\nhi $HOME\nEOF",
        "rg -n TODO src",
    ],
)
def test_shell_commands_that_only_read(command: str) -> None:
    assert shell_write_reason(command, RULES) is None


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("rm -rf build", "'rm' may write"),
        ("echo x > notes.txt", "writes to 'notes.txt'"),
        ("cat a >> b", "writes to 'b' (>>)"),
        ("ls $(touch x)", "'touch' may write"),
        ("git push", "git push"),
        ("git branch feature", "git branch"),
        ("find . -delete", "find with -delete"),
        ("find . -exec rm {} +", "find with -exec"),
        ("sed -i s/a/b/ f", "sed -i"),
        ("sort -o out in", "sort -o"),
        ("npm install", "'npm' may write"),
        ("python -c 'open(1)'", "'python' may write"),
        ("$EDITOR file", "is computed"),
        ("f() { rm x; }; f", "defines a function"),
        ("cat <<EOF > x\nhi\nEOF", "'x'"),
        ("xargs rm < list", "'rm' may write"),
        ("ls ((", "cannot be analysed"),
        ("uniq in out", "uniq with an output"),
        ("git -c core.pager='sh -c \"rm -rf ~\"' log", "git -c may make git run a program"),
        ("git -c alias.st='!rm -rf x' st", "git -c may make git run"),
        ("git --config-env=core.pager=PAGER log", "git --config-env"),
        ("git --exec-path=/tmp/evil status", "git --exec-path"),
        ("git diff --output=notes.txt", "git diff --output writes a file"),
        ("git log -p --output report.txt", "git log --output writes"),
        ("git grep -Ovim TODO", "git grep -O runs a pager"),
        ("git help -w log", "starts another program"),
        ("less '+!rm -rf build' README.md", "runs a less command at start"),
        ("less +s/tmp/copy file", "runs a less command"),
        ("less -o copy.txt file", "writes a log file"),
        ("less --log-file=copy.txt file", "writes a log file"),
        ("more '+!touch x' file", "runs a more command"),
        ("sort --compress-program=sh big.txt", "runs a program"),
        ("sort --com=sh big.txt", "runs a program"),  # getopt takes any unique prefix
        ("sort --o z a", "sort --output writes a file"),
        ("sort --ou=zz a", "sort --output writes a file"),
        ("sort --outp z a", "sort --output writes a file"),
        ("sort -ro z a", "sort -o writes a file"),
        ("sort -nuoz a", "sort -o writes a file"),
        ("tree -o listing.txt", "tree -o writes"),
        ("date -s 2020-01-01", "sets the clock"),
        # F4: sed -i in a bundle of short options, abbreviated --in-place, w/W after an address, e, -f
        ("sed -ni s/a/b/ x", "sed -i"),
        ("sed -Ei s/a/b/ x", "sed -i"),
        ("sed -i.bak s/a/b/ x", "sed -i"),
        ("sed --in s/a/b/ x", "sed -i"),
        ("sed --in-pl=.bak s/a/b/ x", "sed -i"),
        ("sed -e '1w out1.txt' x", "sed w command writes"),
        ("sed '1W out2' x", "sed W command writes"),
        ("sed '$w out' x", "sed w command writes"),
        ("sed '/a/,/b/ w out' x", "sed w command writes"),
        ("sed -n 's/a/b/gw out' x", "s///w writes"),
        ("sed 'w out.txt' x", "sed w command writes"),
        ("sed 's/.*/&/e' z", "runs a shell command"),
        ("sed e x", "runs a shell command"),
        ("sed '1e touch x' y", "runs a shell command"),
        ("sed 's/x/y/;e' x", "runs a shell command"),
        ("sed -f script.sed x", "sed -f runs a script file"),
        ("sed --file=script.sed x", "sed -f runs a script file"),
        ("sed -nf script.sed x", "sed -f runs a script file"),
        ("sed --s p x", "not an option hookgate can read"),
        ("sed 'k' x", "not one hookgate knows"),
        # F4: command substitutions in ${...}, in an assignment's value, in an unquoted here-document
        ("ls ${q:=$(touch pwned3)}", "'touch' may write"),
        ("ls ${q:-`touch x`}", "'touch' may write"),
        ("X=$(touch y) ls", "'touch' may write"),
        ("X=$(touch y)", "'touch' may write"),
        ("cat <<EOF\n$(touch x)\nEOF", "here-document runs a command substitution"),
        # F4: variables that make a read-only command run a program
        ('GIT_EXTERNAL_DIFF="touch ../pwned5" git diff', "sets GIT_EXTERNAL_DIFF"),
        ("LESSOPEN='|touch pwned6 %s' less x", "sets LESSOPEN"),
        ("LESSCLOSE='touch x' less y", "sets LESSCLOSE"),
        ("GIT_PAGER='touch x' git log", "sets GIT_PAGER"),
        ("PAGER='touch x' git log", "sets PAGER"),
        ("GIT_SSH_COMMAND='touch x' git log", "sets GIT_SSH_COMMAND"),
        ("EDITOR=vim git log", "sets EDITOR"),
        ("VISUAL=vim ls", "sets VISUAL"),
        ("GIT_EDITOR=vim git status", "sets GIT_EDITOR"),
        ("BASH_ENV=x ls", "sets BASH_ENV"),
        ("ENV=x ls", "sets ENV"),
        ("PROMPT_COMMAND='touch x'; ls", "sets PROMPT_COMMAND"),
        ("env GIT_PAGER='touch x' git log", "env GIT_PAGER"),
        ("env -S'touch x' ls", "env -S runs"),
        # F4: rg and ag running a program for each file
        ("rg --pre 'touch x' foo", "rg --pre runs a program"),
        ("rg --pre=cmd foo", "rg --pre runs a program"),
        ("rg --pre-glob '*.gz' --pre zcat foo", "runs a program"),
        ("ag --pager 'touch x' foo", "ag --pager runs a program"),
        ("file -C -m magic", "file -C writes"),
    ],
)
def test_shell_commands_that_may_write(command: str, why: str) -> None:
    reason = shell_write_reason(command, RULES)
    assert reason is not None and why in reason, reason


def test_read_commands_extend_the_list() -> None:
    assert shell_write_reason("make lint", WriteRules(read_commands=["make"])) is None


@pytest.mark.parametrize(
    ("sql", "writes"),
    [
        ("SELECT * FROM t", False),
        ("with a as (select 1) select * from a", False),
        ("select 1; select 2", False),
        ("DELETE FROM t", True),
        ("select 1; drop table t", True),
        ("INSERT INTO t VALUES (1)", True),
        ("SELECT * INTO t2 FROM t", True),
        ("WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d", True),
        ("TRUNCATE t", True),
        ("GRANT ALL ON t TO bob", True),
        ("SHOW TABLES", True),
        ("how to delete rows", False),
        ("python tutorials", False),
        ("delete old files", True),
        # F4: a "plain SELECT" calling a function with side effects writes
        ("SELECT pg_terminate_backend(1)", True),
        ("SELECT pg_cancel_backend(1)", True),
        ("SELECT lo_export(16384, '/tmp/x')", True),
        ("select setval('s', 1)", True),
        ("select nextval ('s')", True),
        ("select pg_catalog.setval('s', 1)", True),
        ("select * from dblink('db', 'delete from t') as t(a int)", True),
        ("select pg_sleep(1)", False),  # only waits
        ("select count(*) from lo_table", False),  # a table, not a call
        ("select a, now() from t", False),
    ],
)
def test_sql_other_than_select_writes(sql: str, writes: bool) -> None:
    assert (sql_write_reason(sql) is not None) is writes


@pytest.mark.parametrize(
    ("tool", "args", "writes"),
    [
        ("Write", {}, True),
        ("Edit", {}, True),
        ("NotebookEdit", {}, True),
        ("Read", {}, False),
        ("TodoWrite", {"todos": []}, False),
        ("WebFetch", {"url": "u"}, False),
        ("mcp__github__create_issue", {}, True),
        ("mcp__github__get_issue", {}, False),
        ("mcp__db__query", {"sql": "select 1"}, False),
        ("mcp__db__query", {"sql": "update t set a=1"}, True),
        ("mcp__fs__writeFile", {}, True),
        ("mcp__search__find", {"query": "delete old files"}, False),
        ("run_sql", {"sql": "DROP TABLE t"}, True),
        ("run_sql", {"sql": "SELECT 1"}, False),  # README's own example: the SQL decides, not "run"
        ("execute_query", {"query": "SELECT a FROM t"}, False),
        ("mcp__db__exec", {"sql": "select 1; delete from t"}, True),
        ("run_sql", {}, True),  # no SQL to judge by: the verb counts
        ("run_migration", {"sql": "SELECT 1"}, False),
        ("delete_rows", {"sql": "SELECT 1"}, True),  # a writing verb other than run/exec still counts
        ("lookup", {"statement": "SELECT 1"}, False),
        ("mcp__search__find", {"query": "DELETE FROM t"}, True),
        ("mcp__db__query", {"query": "SELECT pg_terminate_backend(1)"}, True),
        ("mcp__db__query", {"query": "SELECT setval('s', 1) FROM t"}, True),
    ],
)
def test_tool_calls(tool: str, args: dict[str, object], writes: bool) -> None:
    assert (write_reason(tool, args, RULES) is not None) is writes


def test_write_and_read_tool_patterns() -> None:
    rules = WriteRules(write_tools=["mcp__ci__*"], read_tools=["mcp__github__create_*"])
    assert write_reason("mcp__ci__status", {}, rules) == "tool mcp__ci__status matches readOnly.writeTools"
    assert write_reason("mcp__github__create_issue", {}, rules) is None
    assert write_reason("mcp__github__create_issue", {"sql": "DELETE FROM x"}, rules) is not None  # SQL still counts


def test_truncate_keeps_the_shape_and_marks_the_first_cut() -> None:
    value = {"stdout": "a" * 6, "stderr": "b" * 6, "code": 0, "parts": ["c" * 3]}
    cut, dropped, total = truncate(value, 8)
    assert (dropped, total) == (7, 15)
    assert cut == {
        "stdout": "a" * 6,
        "stderr": "bb\n[... truncated by hookgate: 7 of 15 characters cut]",
        "code": 0,
        "parts": [""],
    }
    assert truncate("short", 8) == ("short", 0, 5)
    assert truncate(None, 8) == (None, 0, 0)


def test_truncate_cuts_only_the_text_of_mcp_content_blocks() -> None:
    """A tiny maxChars never cuts a block's ``type``, an image's base64 or a resource's ``uri``: the
    result is still a valid MCP CallToolResult, with only ``text`` fields shortened."""
    image = {"type": "image", "data": "iVBORw0KGgo" * 50, "mimeType": "image/png"}
    resource = {
        "type": "resource",
        "resource": {"uri": "file:///var/log/app.log", "mimeType": "text/plain", "text": "r" * 10},
    }
    value = {"content": [{"type": "text", "text": "t" * 10}, image, resource], "isError": False}
    cut, dropped, total = truncate(value, 3)
    assert (dropped, total) == (17, 20)  # only the two texts count
    assert cut["content"][0] == {
        "type": "text",
        "text": "ttt" + "\n[... truncated by hookgate: 17 of 20 characters cut]",
    }
    assert cut["content"][1] == image
    assert cut["content"][2] == {
        "type": "resource",
        "resource": {"uri": "file:///var/log/app.log", "mimeType": "text/plain", "text": ""},
    }
    assert cut["isError"] is False
    from mcp.types import CallToolResult

    CallToolResult.model_validate(cut)  # still the MCP shape
    # an output that is big only because of an image has nothing to cut
    assert truncate({"content": [image]}, 3) == ({"content": [image]}, 0, 0)


# ---------------------------------------------------------------------------- readOnly: the PowerShell tool (F6)


@pytest.mark.parametrize(
    "script",
    [
        "Get-ChildItem -Recurse",
        "ls; dir src",
        "Get-Content README.md | Select-String TODO",
        "gci | Where-Object { $_.Length -gt 1kb } | Sort-Object Length | Format-Table",
        "gci | ? Name -like *.py | Measure-Object",
        "Test-Path x; Get-Location",
        "Get-Item x | Format-List",
        "Get-Content x 2>&1",
        "Get-Content x > $null",
        "Write-Output $(Get-Date)",
        "git status",
        "git log --oneline -3",
        "rg TODO src",
        "",
    ],
)
def test_powershell_scripts_that_only_read(script: str) -> None:
    assert write_reason("PowerShell", {"command": script}, RULES) is None


@pytest.mark.parametrize(
    ("script", "why"),
    [
        ("Remove-Item -Recurse -Force src", "'Remove-Item' is not a read-only cmdlet"),
        ("Remove-Item ~ -Recurse -Force", "'Remove-Item' is not"),
        ("ls > out.txt", "redirects output to a file"),
        ("Get-Content x 2> err.txt", "redirects output"),
        ("Get-Content x | Out-File y", "'Out-File' is not"),
        ("Get-Content x | Set-Content y", "'Set-Content' is not"),
        ("gci | Tee-Object -FilePath y", "'Tee-Object' is not"),
        ("git push --force", "git push may write"),
        ("git $x", "known only at run time"),
        ("sort -o out in", "sort -o writes"),
        ("$env:GIT_PAGER = 'touch x'; git log", "may call a method or assign"),
        ("$f.Delete()", "may call a method or assign"),
        ("$x -eq (Get-Item x).Delete()", "may call a method"),
        ("(Get-Item x).Delete()", "a method call may write"),
        ("[IO.File]::WriteAllText('x', 'y')", "a method call may write"),
        ("gci | % { $_.Delete() }", "'%' is not"),
        ("gci | ForEach-Object Delete", "'ForEach-Object' is not"),
        ("iex 'ls'", "'iex' is not"),
        ("& ls", "'&' is not"),
        ('Write-Output "$(Remove-Item x)"', "'Remove-Item' is not"),
        ("Get-Item (Remove-Item x)", "'Remove-Item' is not"),
        ("gci | Where-Object { Remove-Item $_ }", "'Remove-Item' is not"),
        ("Get-Help ls -Online", "'Get-Help' is not"),
        ("npm install", "'npm' is not"),
    ],
)
def test_powershell_scripts_that_may_write(script: str, why: str) -> None:
    reason = write_reason("PowerShell", {"command": script}, RULES)
    assert reason is not None and why in reason, reason


def test_powershell_read_commands_extend_the_list() -> None:
    assert write_reason("PowerShell", {"command": "make lint"}, WriteRules(read_commands=["make"])) is None
    assert write_reason("PowerShell", {"command": "make lint"}, RULES) is not None
