"""``edge install`` / ``edge uninstall`` into a temporary root.

Nothing is simulated in --root mode: the user and groups are made by the real ``systemd-sysusers
--root``, the data folder by ``systemd-tmpfiles --root --create``, and the unit is enabled by
``systemctl --root enable`` (the multi-user.target.wants symlink). What these tests do not run is the
live-system path (root=/: ``systemctl daemon-reload``, the machine's own /etc/passwd).
"""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from drivers import system
from edge.boards import load_board
from edge.cli import main
from edge.config import load_settings
from edge.ops import doctor, install

pytestmark = pytest.mark.skipif(shutil.which("systemd-sysusers") is None or shutil.which("systemctl") is None,
                                reason="needs the Debian package 'systemd' (systemd-sysusers, systemctl)")

EXE = str(Path(sys.executable).parent / "edge")


def test_install_creates_everything_and_a_second_run_changes_nothing(tmp_path, capsys):
    root = tmp_path / "root"
    root.mkdir()
    assert main(["install", "--board", "rk3588-rock5b", "--root", str(root), "--exec", EXE]) == 0
    first = capsys.readouterr().out
    assert "6 step(s) changed something" in first

    # user and groups (C07: audio + the NPU node's group)
    acct = system.read_account(root, "edge")
    assert acct is not None and acct.home == "/var/lib/edge"
    assert {"audio", "render", "edge"} <= set(acct.groups)
    # data folder owned by the service user, not world-readable
    st = (root / "var/lib/edge").stat()
    assert st.st_uid == acct.uid and oct(st.st_mode & 0o777) == "0o750"
    assert (root / "var/lib/edge/models").is_dir()
    # config from the board, and it loads
    cfg = root / "etc/edge/edge.yaml"
    s = load_settings(cfg)
    assert s.board.name == "rk3588-rock5b" and str(s.store.path) == "/var/lib/edge/edge.db"
    assert str(s.models.dir) == "/var/lib/edge/models"
    # unit, drop-in, enabled
    unit = (root / "etc/systemd/system/edge.service").read_text()
    assert f"ExecStart={EXE} run --config /etc/edge/edge.yaml --json" in unit
    dropin = (root / "etc/systemd/system/edge.service.d/10-board.conf").read_text()
    assert "MemoryMax=5734M" in dropin and "SupplementaryGroups=render" in dropin
    assert "DeviceAllow=/dev/dri/renderD129 rw" in dropin
    link = root / "etc/systemd/system/multi-user.target.wants/edge.service"
    assert link.is_symlink() and os.readlink(link) == "/etc/systemd/system/edge.service"

    snapshot = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    assert main(["install", "--board", "rk3588-rock5b", "--root", str(root), "--exec", EXE]) == 0
    second = capsys.readouterr().out
    assert "nothing to do: already installed" in second
    assert all(line.split()[1] == "unchanged" for line in second.splitlines()[:-1]), second
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == snapshot

    # the doctor agrees: user, groups and unit are in place
    doc = doctor.Doctor(root, load_board("rk3588-rock5b"), load_settings(board="rk3588-rock5b"), probe_audio=False)
    res = {r.name: r for r in doc.run(["user", "unit"])}
    assert res["user"].status == "ok" and res["unit"].status == "ok", [r.line() for r in res.values()]


def test_cpu_only_board_gets_no_npu_group(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    install.install("rk3566-rock3c", root, exec_path=EXE)
    acct = system.read_account(root, "edge")
    assert "audio" in acct.groups and "render" not in acct.groups
    dropin = (root / "etc/systemd/system/edge.service.d/10-board.conf").read_text()
    assert "MemoryMax=1433M" in dropin and "SupplementaryGroups" not in dropin and "DeviceAllow" not in dropin


def test_edited_config_is_kept_unless_forced(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    install.install("x86-dev", root, exec_path=EXE)
    cfg = root / "etc/edge/edge.yaml"
    cfg.write_text(cfg.read_text() + "language: zh\n")
    steps = {s.name: s for s in install.install("x86-dev", root, exec_path=EXE)}
    assert steps["config"].result == "kept" and "language: zh" in cfg.read_text()
    steps = {s.name: s for s in install.install("x86-dev", root, exec_path=EXE, force=True)}
    assert steps["config"].result == "changed" and "language: zh" not in cfg.read_text()


def test_uninstall_keeps_data_unless_purge(tmp_path, capsys):
    root = tmp_path / "root"
    root.mkdir()
    install.install("rk3588-rock5b", root, exec_path=EXE)
    (root / "var/lib/edge/edge.db").write_bytes(b"the site's records")
    assert main(["uninstall", "--root", str(root)]) == 0
    out = capsys.readouterr().out
    assert "kept" in out
    for gone in ("etc/systemd/system/edge.service", "etc/systemd/system/edge.service.d", "etc/edge",
                 "etc/systemd/system/multi-user.target.wants/edge.service", "etc/sysusers.d/edge.conf"):
        assert not (root / gone).exists() and not (root / gone).is_symlink(), gone
    assert (root / "var/lib/edge/edge.db").read_bytes() == b"the site's records"
    # a second uninstall finds nothing to remove and still keeps the data
    steps = {s.name: s.result for s in install.uninstall(root)}
    assert steps["unit"] == "absent" and steps["enable"] == "absent" and steps["purge"] == "kept"
    steps = {s.name: s.result for s in install.uninstall(root, purge=True)}
    assert steps["purge"] == "removed" and not (root / "var/lib/edge").exists()


def test_install_into_a_missing_root_is_a_clear_error(tmp_path):
    with pytest.raises(install.InstallError) as e:
        install.install("x86-dev", tmp_path / "nope", exec_path=EXE)
    assert "--root" in str(e.value) and "not a folder" in str(e.value)


SITE = 'site: {box: goods-in, dsn: "host=10.0.0.5 dbname=edge user=edge", password_file: site-db-password}\n'


def test_a_config_with_a_site_gets_the_site_unit_installed_and_enabled(tmp_path, capsys):
    root = tmp_path / "root"
    root.mkdir()
    install.install("x86-dev", root, exec_path=EXE)
    site_unit = root / "etc/systemd/system/edge-site.service"
    site_link = root / "etc/systemd/system/multi-user.target.wants/edge-site.service"
    assert not site_unit.exists() and not site_link.is_symlink()  # no site: section, no site unit
    cfg = root / "etc/edge/edge.yaml"
    cfg.write_text(cfg.read_text() + SITE)
    assert main(["install", "--board", "x86-dev", "--root", str(root), "--exec", EXE]) == 0
    out = capsys.readouterr().out
    (line,) = [x for x in out.splitlines() if x.startswith("site")]
    assert line.split()[1] == "created" and "edge-site.service" in line and "goods-in" in line
    assert "/etc/edge/credentials/site-db-password" in line  # the password file is not there yet: said so
    unit = site_unit.read_text()
    assert f"ExecStart={EXE} site sync --config /etc/edge/edge.yaml" in unit
    assert site_link.is_symlink() and os.readlink(site_link) == "/etc/systemd/system/edge-site.service"
    # a second run changes nothing; with the password in place the hint is gone
    cred = root / "etc/edge/credentials/site-db-password"
    cred.parent.mkdir()
    cred.write_text("hunter2-site-password\n")
    steps = {s.name: s for s in install.install("x86-dev", root, exec_path=EXE)}
    assert steps["site"].result == "unchanged" and "credentials" not in steps["site"].detail
    # the site: section removed: the site unit goes with it
    cfg.write_text(cfg.read_text().replace(SITE, ""))
    steps = {s.name: s for s in install.install("x86-dev", root, exec_path=EXE)}
    assert steps["site"].result == "removed" and not site_unit.exists() and not site_link.is_symlink()
    assert "site" not in {s.name for s in install.install("x86-dev", root, exec_path=EXE)}


def test_uninstall_removes_the_site_unit_too(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    install.install("x86-dev", root, exec_path=EXE)
    cfg = root / "etc/edge/edge.yaml"
    cfg.write_text(cfg.read_text() + SITE)
    install.install("x86-dev", root, exec_path=EXE)
    assert (root / "etc/systemd/system/edge-site.service").exists()
    steps = [(s.name, s.result) for s in install.uninstall(root)]
    assert ("site", "removed") in steps
    assert not (root / "etc/systemd/system/edge-site.service").exists()
    assert not (root / "etc/systemd/system/multi-user.target.wants/edge-site.service").is_symlink()


def test_an_installed_config_that_does_not_validate_names_the_key(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    install.install("x86-dev", root, exec_path=EXE)
    cfg = root / "etc/edge/edge.yaml"
    cfg.write_text(cfg.read_text() + 'site: {box: "not a valid id!", dsn: "host=x"}\n')
    with pytest.raises(install.InstallError, match=r"site\.box"):
        install.install("x86-dev", root, exec_path=EXE)
