"""An approvals row edited by hand (a payload or ref that is not a JSON object, a time that is text, a
status that is none, a blob where text was): `hookgate approvals list` shows every row with the damaged one
marked, and no call is released by it (real `hookgate` subprocesses on a real SQLite state dir)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from tests.integration import approvals_helpers as apr
from tests.integration.test_audit_damage import clean, edit


def test_a_damaged_approval_row_is_marked_and_releases_no_call(tmp_path: Path) -> None:
    """A row of the approvals table whose payload, ref, times or status were edited by hand made `hookgate
    approvals list` fail as a whole (an internal error); now the list shows every row, the damaged one
    marked `unreadable`, `show` shows it, approving it is refused (exit 3) and rejecting it is taken; a
    call whose request is damaged is denied, never released."""
    config = apr.write_config(tmp_path, {"timeout": 1})
    for command in ("git push a", "git push b", "git push c"):
        code, _, _ = apr.run_event(config, apr.bash_event(command, tool_use_id=f"t-{command[-1]}"))
        assert code == 2
    ids = {r["message"]: r["id"] for r in apr.listed(config)}
    first, second, third = (
        ids["Run git push a in /repo?"],
        ids["Run git push b in /repo?"],
        ids["Run git push c in /repo?"],
    )
    db = Path(os.environ["XDG_STATE_HOME"]) / "hookgate" / "state.sqlite3"
    for sql in (
        "UPDATE approvals SET payload = '{cut' WHERE id = ?",
        "UPDATE approvals SET payload = '[1]' WHERE id = ?",
        "UPDATE approvals SET ref = 'nope' WHERE id = ?",
        "UPDATE approvals SET created_at = 'yesterday', expires_at = X'00' WHERE id = ?",
        "UPDATE approvals SET status = 'bogus', reason = X'01' WHERE id = ?",
        """UPDATE approvals SET payload = '{"approvers": 5, "message": 7}' WHERE id = ?""",
    ):
        with sqlite3.connect(db) as conn:
            conn.execute(sql, (first,))
        conn.close()
        for args in (("list",), ("list", "--json"), ("show", first)):
            shown = apr.approvals(config, *args)
            assert shown.returncode == 0 and clean(shown), (sql, args, shown.stderr)
            assert second in shown.stdout or args[0] == "show"
        listed = {r["id"]: r for r in apr.listed(config)}
        assert set(listed) == {first, second, third}
        assert listed[first]["unreadable"].startswith("its stored row is damaged: ")
        assert "unreadable" not in listed[second]
        assert "[unreadable: its stored row is damaged" in apr.approvals(config, "list").stdout
    edit(db, f"UPDATE approvals SET status = 'approved', consumed_at = NULL, payload = '{{cut' WHERE id = '{second}'")
    code, out, _ = apr.run_event(config, apr.bash_event("git push b", tool_use_id="t-again"))
    reason = apr.decision_of(out)["permissionDecisionReason"]
    assert code == 2 and second in reason and "payload is not a JSON object" in reason and "asks anew" in reason
    assert {r["id"]: r for r in apr.listed(config)}[second]["consumed_at"] is not None  # spent, not released
    edit(
        db,
        f"UPDATE approvals SET status = 'pending', decided_by = NULL, expires_at = 4102444800, "
        f"payload = 'x' WHERE id = '{third}'",
    )
    refused = apr.approvals(config, "approve", third)
    assert refused.returncode == 3 and "can be rejected, not approved" in refused.stderr, refused.stderr
    code, out, _ = apr.run_event(config, apr.bash_event("git push c", tool_use_id="t-c"))
    assert code == 2 and f"hookgate approvals reject {third}" in apr.decision_of(out)["permissionDecisionReason"]
    assert apr.approvals(config, "reject", third).returncode == 0
