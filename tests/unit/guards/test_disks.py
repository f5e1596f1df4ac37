"""Disk devices: a write onto one (`> /dev/sda`, `cp img /dev/sdb`, `tee /dev/nvme0n1`) is
`disk.device-write`, and the tools that erase signatures or partition tables (`wipefs -a`, `blkdiscard`,
`mkswap` on a device, `sgdisk --zap-all`, a partition editor that writes) are `disk.wipe`; listing and
printing pass, and so do the harmless devices (`/dev/null`, `/dev/stderr`, `/dev/tty`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from configs.guards.destructive import MAX_LENGTH, Settings
from tests.conftest import run_hookgate
from tests.unit.guards.common import cases, rule_of
from tests.unit.guards.conftest import own_state

DEVICE = "deny:disk.device-write"
WIPE = "deny:disk.wipe"

CAUGHT = [
    *cases(
        DEVICE,
        "cat /dev/zero > /dev/sda",
        "echo x > /dev/nvme0n1p1",
        "printf x >/dev/sdc",
        "cat a b > /dev/sdq1 2>/dev/null",
        "cat img >> /dev/vda",
        "cat img > /dev/xvdf",
        "cat img > /dev/mmcblk0p2",
        "cat img > /dev/md0",
        "cat img > /dev/dm-3",
        "cat img > /dev/mapper/vg-root",
        "cat img > /dev/disk/by-id/ata-SAMSUNG_1",
        "cat img > /dev/rdisk2",
        "cat img > /dev/disk3s1",
        "cat img > /dev/../dev/sda",
        "cp disk.img /dev/sdb",
        "tee /dev/mmcblk0 < img",
        "sudo tee /dev/sda < img",
        "bash -c 'cat x > /dev/sda'",
        "cd / && cat x > dev/sda",
    ),
    *cases(
        WIPE,
        "wipefs -a /dev/sda",
        "wipefs --all /dev/sda",
        "wipefs -af /dev/sdb",
        "wipefs -o 0x438 /dev/sdb1",
        "sudo wipefs -a /dev/sda",
        "blkdiscard /dev/nvme0n1",
        "blkdiscard -f /dev/sdb",
        "mkswap /dev/sdb2",
        "sgdisk --zap-all /dev/sda",
        "sgdisk -Z /dev/sda",
        "sgdisk -o /dev/sda",
        "sgdisk -d 1 /dev/sda",
        "sfdisk /dev/sda < layout.txt",
        "sfdisk --delete /dev/sda 2",
        "parted /dev/sda rm 1",
        "parted -s /dev/sda mklabel gpt",
        "fdisk /dev/sda",
        "xargs wipefs -a < devices.txt",
    ),
    *cases(
        "deny:disk.mkfs",
        "mkntfs -f /dev/sda1",
        "mkdosfs /dev/sda1",
        "mkexfatfs /dev/sdb1",
        "mkreiserfs /dev/sdb1",
        "mkudffs /dev/sdb",
        "newfs /dev/da0p1",
        "newfs_hfs /dev/disk2s1",
        "sudo mkntfs -Q /dev/sdc1",
        "/sbin/mkdosfs -F 32 /dev/sdb1",
    ),
]


@pytest.mark.parametrize(("command", "rule"), CAUGHT)
def test_disk_writes_and_wipes_are_denied(command: str, rule: str) -> None:
    assert rule_of(command) == rule


NEAR_MISSES = [
    "ls > /dev/null",
    "make 2>/dev/null",
    "echo hi > /dev/stderr",
    "echo hi > /dev/tty",
    "cat /dev/sda | head -c 512 | xxd",
    "dd if=/dev/sda of=mbr.bin bs=512 count=1",
    "cp /dev/sda1 backup.img",
    "echo x > sda",
    "echo x > ./dev/sda",
    "wipefs /dev/sda",
    "wipefs -n -a /dev/sda",
    "wipefs --no-act --all /dev/sda",
    "mkswap /swapfile",
    "sgdisk -p /dev/sda",
    "sgdisk --print /dev/sda",
    "fdisk -l",
    "fdisk -l /dev/sda",
    "sfdisk -d /dev/sda",
    "sfdisk --list",
    "sfdisk -J /dev/sda",
    "parted -l",
    "parted /dev/sda print",
    "parted -s /dev/sda unit MiB print",
    "sgdisk -i 1 /dev/sda",
    "lsblk",
    "blkid /dev/sda1",
    "echo wipefs -a /dev/sda",
]


@pytest.mark.parametrize("command", NEAR_MISSES)
def test_reading_a_disk_and_listing_partitions_pass(command: str) -> None:
    assert rule_of(command) is None


def test_the_rules_are_tunable() -> None:
    asking = Settings(rules={"disk.wipe": "ask", "disk.device-write": "off"})
    assert rule_of("wipefs -a /dev/sda", settings=asking) == "ask:disk.wipe"
    assert rule_of("cat img > /dev/sda", settings=asking) is None


@pytest.mark.parametrize(
    "text", ["cat img > /dev/sda", "wipefs -a /dev/sda", "blkdiscard /dev/nvme0n1", "mkntfs -f /dev/sda1"]
)
def test_the_raw_text_fallback_sees_them_too(text: str) -> None:
    """A command too long to analyse is scanned as raw text: the disk patterns are in that scan."""
    padded = f"{text}; echo {'x' * MAX_LENGTH}"
    assert rule_of(padded) == "deny:parse.unanalysable"
    assert rule_of(f"echo ok; echo {'x' * MAX_LENGTH}") is None


@pytest.mark.parametrize("command", ["cat /dev/zero > /dev/sda", "wipefs -a /dev/sdb"])
def test_through_hookgate_run(command: str, tmp_path: Path) -> None:
    event = {
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "cwd": "/srv/app",
        "tool_input": {"command": command},
    }
    proc = run_hookgate(["run"], event, env=own_state(tmp_path))
    assert proc.returncode == 2 and "disk." in proc.stderr, (proc.stdout, proc.stderr)
