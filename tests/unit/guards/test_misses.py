"""The default shell guard: the misses the review of issue 11 found after the first pass, each class with several
disguises, and its near misses that must still pass (everyday commands of the same tools). Deny where the work
is lost for good, ask where it can be recovered (README's table)."""

from __future__ import annotations

import pytest

from configs.guards.destructive import Settings, analyse
from configs.guards.destructive.settings import RULES
from tests.unit.guards.common import CWD, RM, cases, rule_of

CAUGHT = [
    *cases(
        "deny:git.checkout-discard",
        "git checkout-index -f -a",
        "git checkout-index --force --all",
        "git checkout-index -fa",
        "git checkout-index -a -f",
        "git -C repo checkout-index -f -- src/app.py",
        "sudo git checkout-index --fo --all",
        "git checkout-index -u -f -a",
        "git -c alias.ci='checkout-index -f -a' ci",
    ),
    # environment variables that make git (or its pager/editor) run a command
    *cases(
        RM,
        'GIT_PAGER="rm -rf ~" git log',
        "GIT_EDITOR='rm -rf ~' git commit",
        "GIT_SEQUENCE_EDITOR='rm -rf ~' git rebase -i HEAD~3",
        'GIT_SSH_COMMAND="rm -rf ~" git fetch',
        "GIT_SSH='rm -rf /' git push",
        "GIT_EXTERNAL_DIFF='rm -rf ~' git diff",
        "GIT_ASKPASS='rm -rf ~' git push",
        'env GIT_PAGER="rm -rf ~" git log',
        "env -u X GIT_SSH_COMMAND='rm -rf ~' git pull",
        "sudo env GIT_EDITOR='rm -rf ~' git commit",
        "export GIT_PAGER='rm -rf ~'; git log",
        "export GIT_PAGER='rm -rf ~' && git log",
        "declare -x GIT_EDITOR='rm -rf ~'",
        "GIT_PAGER='rm -rf ~'; export GIT_PAGER; git log",
        "PAGER='rm -rf ~' git log",
        "LESSOPEN='|rm -rf ~ %s' git log",
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0='rm -rf ~' git log",
        "export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0='!rm -rf ~'; git x",
        "GIT_CONFIG_PARAMETERS=\"'core.pager'='rm -rf ~'\" git log",
        "git config core.pager 'rm -rf ~'",
        "git config --global alias.up '!rm -rf ~'",
        "git config set core.sshCommand 'rm -rf /'",
        "sh -c 'GIT_PAGER=\"rm -rf ~\" git log'",
        "env -S 'GIT_PAGER=\"rm -rf ~\" git log'",
        "GIT_PAGER=$(echo rm -rf ~) git log",
        "GIT_EDITOR=`printf 'rm -rf /'` git commit",
    ),
    # parameter-expansion defaults that make the command name or its arguments
    *cases(
        RM,
        "${x:-rm} -rf ~",
        '"${x:-rm}" -rf ~',
        "${x-rm} -rf /",
        "${x:=rm} -rf ~",
        "${x+rm} -rf ~",
        "${x:-${y:-rm}} -rf ~",
        "r${x:-m} -rf /",
        "rm ${x:--rf} ~",
        "rm -rf ${x:-~}",
        "sudo ${x:-rm} -rf /",
        "${x:-sudo} rm -rf ~",
        'bash -c "${x:-rm} -rf ~"',
    ),
    ("git ${a:-reset} --hard", "deny:git.reset-hard"),
    ("git reset ${m:=--hard}", "deny:git.reset-hard"),
    ("${g:-git} push ${f:--f}", "deny:git.push-force"),
    # rsync --delete onto a protected root
    *cases(
        "deny:rsync.delete",
        "rsync -a --delete empty/ ~/",
        "rsync -a --delete /tmp/empty/ $HOME",
        "rsync -av --delete-after x/ /",
        "rsync -a --delete-before src/ /etc/",
        "rsync -a --del empty/ .",
        "rsync -a --delete-excluded --exclude=x a/ /home/dev/webshop",
        "sudo rsync -aH --delete-during empty/ /usr/",
        "rsync --recursive --delete --force empty/ ~/..",
    ),
    # tar --remove-files
    *cases(
        "ask:tar.remove-files",
        "tar --remove-files -czf backup.tgz src",
        "tar czf backup.tgz --remove-files src docs",
        "tar -cf - --remove-files src | ssh host tar xf -",
        "tar --remove-files -C /home/dev -czf x.tgz notes",
        "tar --remove-files --file=backup.tar ~/notes",
    ),
    *cases(
        RM,
        "tar --remove-files -cf /dev/null ~",
        "tar -cf /dev/null --remove-files src",
        "tar cf /dev/null --remove-files /",
    ),
    # git reflog expire, git gc --prune=now, git prune
    *cases(
        "deny:git.reflog-expire",
        "git reflog expire --expire=now --all",
        "git reflog expire --expire-unreachable=now --all",
        "git reflog expire --expire now --all",
        "git reflog expire --expire=all refs/heads/main",
        "git reflog delete HEAD@{1}",
        "git reflog expire --expire=now --all && git gc --prune=now",
    ),
    *cases("deny:git.gc-prune", "git gc --prune=now", "git gc --prune=all --aggressive", "git prune", "git prune -v"),
    # chmod -R / chown -R on protected roots
    *cases(
        "deny:perm.recursive",
        "chmod -R 755 /etc",
        "chmod -R 777 ~",
        "chmod -R 000 $HOME",
        "chmod -R 777 /",
        "chmod --recursive 000 .",
        "chmod -R 777 *",
        "chmod -R 755 /*",
        "chmod -Rv a-w ~/",
        "chown -R me:me /",
        "sudo chown -R nobody /home",
        "chown -R nobody /home/dev/webshop",
        "chgrp -R staff ~",
        "chmod -R 600 /usr/local",
        "chown --recursive --reference=x ~",
        "find . -maxdepth 0 -exec chmod -R 777 {} +",
        "busybox chmod -R 777 /",
        "find / -maxdepth 0 -exec chown -R x {} +",
        "cd / && chmod -R 777 .",
        "cd ~ && chown -R nobody *",
    ),
    # writes to .git/config and .git/hooks
    *cases(
        "deny:write.git-config",
        "echo x > .git/config",
        "echo x >.git/config",
        "printf '[core]\\n\\tpager = rm -rf ~\\n' >> .git/config",
        "cp evil .git/hooks/pre-commit",
        "tee .git/hooks/post-checkout < payload",
        "sed -i 's/a/b/' .git/config",
        "cat > .git/hooks/pre-push <<'EOF'\nrm -rf ~\nEOF",
        "ln -sf /tmp/x .git/hooks/pre-commit",
        "rm .git/config",
        "mv .git/config /tmp/",
        "echo x > sub/repo/.git/config",
        "echo x > ./.git/./config",
        "cd repo && cp x .git/hooks/",
        # a case-insensitive file system (macOS, Windows) opens .GIT/hooks as .git/hooks; Windows drops a
        # name's trailing dots and reads ::$DATA as the file itself; a submodule's git folder is in .git/modules
        "echo x > .GIT/hooks/pre-commit",
        "echo x > .Git/config",
        "echo x > .git/HOOKS/pre-commit",
        "echo x > .git/config.",
        "echo x > '.git/config::$DATA'",
        "cp x .git/modules/sub/hooks/pre-commit",
        "echo x > .git/modules/lib/nested/config",
        # moving the project's .git away takes its config and hooks with it (git init then makes new ones)
        "mv .git /tmp/g",
        "mv .git .git-old",
        "mv -t /tmp .git",
    ),
    # filters and converters that write a file they are given (found by a tester)
    *cases(
        "deny:write.secrets",
        "sort -o .env x",
        "patch .env < fix.patch",
        "patch -o .env a fix.patch",
        "cat x | sponge .env",
        "uniq x .env",
        "xxd -r dump ~/.ssh/id_rsa",
        "gpg --output .env -d x.gpg",
    ),
    ("sort x -o .git/config", "deny:write.git-config"),
    ("patch .claude/settings.json < fix.patch", "deny:write.hook-config"),
    # git config -f FILE rewrites FILE in git's config format (found by a tester)
    *cases(
        "deny:write.hook-config",
        "git config --file .claude/settings.json hooks.x y",
        "git config -f .claude/settings.json --unset a.b",
        "git -C . config --file=.claude/settings.local.json a.b c",
    ),
    ("git config -f ~/.ssh/config host.x y", "deny:write.secrets"),
    # sed's `w FILE` command and `s///w FILE` flag, awk's print > "FILE" (found by a tester)
    *cases(
        "deny:write.secrets",
        "sed -n 'w .env' /tmp/x",
        "sed 's/a/b/w .env' x",
        'awk \'BEGIN{print "x" > ".env"}\'',
    ),
    ("sed 'w .git/hooks/pre-commit' /tmp/x", "deny:write.git-config"),
    ("awk '{print > \".git/config\"}' x", "deny:write.git-config"),
    ("sed -e '/x/w .claude/settings.json' x", "deny:write.hook-config"),
    ('awk \'{printf("%s\\n", $0) >> ".claude/settings.json"}\' x', "deny:write.hook-config"),
    # shred overwrites its files for good: outside the project it is denied like a recursive delete there
    *cases(
        "deny:shred.outside",
        "shred -n 3 -z -u /home/user/notes.txt",
        "sudo shred -vfz /etc/passwd",
        "shred -u ~/.bashrc",
        "shred -u $FILE",
        "bash -c 'shred -u ~/notes.txt'",
        "shred --remove=wipesync ../other/file.txt",
        "/usr/bin/shred --iterations 1 /etc/hosts",
        "cd .. && shred -u notes.txt",
        "ls | xargs shred -u",
        "find ~ -exec shred -u {} +",
    ),
    ("shred -u /home/user/.ssh/id_rsa", "deny:write.secrets"),  # -u took the next word as its value before
    ("shred -u .env", "deny:write.secrets"),
    ("shred -u build/secret.key", "deny:write.secrets"),
    ("shred /dev/sda", "deny:disk.device-write"),
    ("shred -n 1 /dev/nvme0n1", "deny:disk.device-write"),
    # the review's other dcg cases
    *cases("ask:git.branch-delete", "git branch -d merged", "git branch --delete x", "git branch --del x"),
    *cases(
        "ask:git.branch-overwrite", "git branch -M old existing", "git branch -C a b", "git branch --move --force a b"
    ),
    *cases("ask:git.branch-force-delete", "git branch $(branch_option_producer)", "git branch `opts`"),
    *cases("ask:parse.unterminated", 'echo "$s $(true"', "echo `ls", "echo ${x", "echo $((1+2)"),
]


@pytest.mark.parametrize(("command", "rule"), CAUGHT)
def test_the_reviews_misses_are_caught(command: str, rule: str) -> None:
    assert rule_of(command) == rule


NEAR_MISSES = [
    "sed -n '/foo/w out.txt' x",
    "sed 's/w/x/' x",
    "awk '{print $1 > \"out.txt\"}' x",
    "awk '$1 > 5 {print}' x",
    "git config -f .claude/settings.json --get a.b",
    "git config -f .gitmodules submodule.lib.url https://x.io/lib.git",
    "sort -o out.txt x",
    "patch -p1 < fix.patch",
    "patch src/a.py < fix.patch",
    "uniq x y",
    "xxd x",
    "gpg -d x.gpg",
    "openssl req -x509 -newkey rsa:2048 -keyout key.pem -out cert.pem -nodes",
    "git checkout-index -a",
    "git checkout-index --prefix=export/ -a -f",
    "git checkout-index --temp -f -a",
    "GIT_PAGER=cat git log",
    "GIT_EDITOR=vim git commit",
    "export GIT_PAGER='less -R'",
    "env GIT_SSH_COMMAND='ssh -i ~/.ssh/deploy' git fetch",
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=user.name GIT_CONFIG_VALUE_0='rm -rf ~' git log",
    "git config user.name 'rm -rf ~'",
    "git config core.pager 'less -FRX'",
    "X=1 Y=2 make",
    "X=$(date) make",
    "GIT_PAGER=$(command -v less) git log",
    "echo 'git gc --prune=now'",
    "echo chmod -R 777 /",
    "echo ${HOME:-/}",
    "ls ${DIR:-.}",
    "${EDITOR:-vi} notes.txt",
    "rsync -a --delete dist/ public/",
    "rsync -a --delete dist/ host:/var/www/",
    "rsync -av --delete build/ /tmp/u1000/site/",
    "rsync -a src/ ~/",
    "rsync -an --delete empty/ ~/",
    "tar czf backup.tgz src",
    "tar --remove-files -czf dist.tgz dist",
    "tar xzf archive.tgz",
    "git reflog",
    "git reflog expire --expire=never --all",
    "git reflog expire --expire=90.days.ago --dry-run --all",
    "git gc",
    "git gc --aggressive",
    "git gc --prune=2.weeks.ago",
    "git prune -n",
    "git prune --expire=2.weeks.ago",
    "chmod -R u+w build",
    "cd ~/projects/x && chmod -R 777 *",
    "chmod -R 700 ~/.ssh",
    "chmod -R +x scripts",
    "chmod 755 /etc/nginx",
    "chmod -R 755 /var/www/html",
    "chown -R me ~/projects/other",
    "sudo chown -R www-data /srv/site/uploads",
    "cat .git/config",
    "git config --get remote.origin.url",
    "cp .git/config /tmp/backup",
    "grep url .git/config",
    "chmod +x .git/hooks/pre-commit",
    "shred --help",
    "shred --version",
    "shred -u build/output.bin",
    "shred -u notes.txt",
    "shred -n 1 -u /tmp/scratch.bin",
    "shred -s 1M -u ./data.bin",
    "shred -zu -- -odd-name.bin",
    "find . -name '*.pyc' -exec shred -u {} +",
    "git branch feature",
    "git branch -m new-name",
    "git branch --end-of-options -d",
    "echo \"it's",
    'git commit -m "wip',
]


@pytest.mark.parametrize("command", NEAR_MISSES)
def test_their_near_misses_pass(command: str) -> None:
    assert rule_of(command) is None


def test_a_dynamic_branch_name_asks_rather_than_guesses() -> None:
    assert rule_of('git branch "$NEW_NAME"') == "ask:git.branch-force-delete"


@pytest.mark.parametrize("rule", sorted(RULES))
def test_a_tuned_rule_words_its_reason_by_its_decision(rule: str) -> None:
    from tests.unit.guards.test_classes import RULE_SAMPLES

    for decision in ("deny", "ask"):
        found = analyse(RULE_SAMPLES[rule], CWD, Settings(rules={rule: decision}))
        assert found is not None and found.decision == decision
        if decision == "ask":
            assert "asks first" in found.reason and "policy blocks" not in found.reason, found.reason
        else:
            assert "blocks" in found.reason and "asks first" not in found.reason, found.reason
