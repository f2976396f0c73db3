"""An index the machine will not let us use (issue 23, items 5 and 6): permission denied, a read-only folder, a
full disk. None of it is damage: the commands say what it is, salvage refuses to act, and answering goes on.

The tests run as root, whom permissions do not stop: the permission tests run the CLI in a subprocess without root's
permission override (setpriv; skipped where it cannot be dropped); the full disk is a small tmpfs (skipped where it cannot be mounted), and a
build that fails on it is played by a fault injected where the generation is written."""

import errno
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from graph_store.index import KnowledgeIndex
from graph_store.settings import load_settings
from tests.conftest import EXAMPLES, ROOT
from tests.test_faults import kgrag
from tests.test_record_damage import FILES, QUESTIONS

QUESTION = QUESTIONS["Edda Morlund"]

# Runs kgrag commands in one process (one start-up) and prints [code, stdout, stderr] of each, as JSON.
DRIVER = """
import contextlib, io, json, sys
from kgrag.cli import main
results = []
for argv in json.loads(sys.argv[1]):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    results.append([code, out.getvalue(), err.getvalue()])
print(json.dumps(results))
"""


# root without the capabilities that let it ignore permissions: it obeys the mode bits of the files it owns
WITHOUT_OVERRIDE = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"]


def without_override(*commands: list) -> list[tuple[int, str, str]]:
    """kgrag commands run in one subprocess that file permissions stop: (code, stdout, stderr) of each."""
    proc = subprocess.run(
        [*WITHOUT_OVERRIDE, sys.executable, "-c", DRIVER, json.dumps([[str(a) for a in c] for c in commands])],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return [tuple(r) for r in json.loads(proc.stdout)]


@pytest.fixture(scope="module")
def permissions_apply(tmp_path_factory):
    """Skip unless a subprocess can be made that permissions stop (as root: setpriv drops the override)."""
    if os.geteuid() != 0:
        pytest.skip("run as root: the tests drop root's permission override with setpriv")
    if not shutil.which("setpriv"):
        pytest.skip("setpriv (util-linux) is needed to drop root's permission override")
    probe = tmp_path_factory.mktemp("probe") / "locked"
    probe.write_text("x")
    probe.chmod(0o000)
    done = subprocess.run([*WITHOUT_OVERRIDE, "cat", str(probe)], capture_output=True)
    if done.returncode == 0:
        pytest.skip("setpriv could not drop root's permission override here")


@pytest.fixture(scope="module")
def built(tmp_path_factory, embedder):
    """A small index, built once."""
    folder = tmp_path_factory.mktemp("built") / "idx"
    corpus = tmp_path_factory.mktemp("corpus")
    for name in FILES:
        shutil.copy(EXAMPLES / f"{name}.md", corpus)
    index = KnowledgeIndex(load_settings(environ={}, index_dir=folder), embedder=embedder, progress=False)
    index.add_path(corpus)
    index.close()
    return folder


@pytest.fixture
def index_copy(built, tmp_path, capsys):
    """A copy of the index holding one conversation, and its thread id."""
    folder = tmp_path / "idx"
    shutil.copytree(built, folder)
    code, out, _ = kgrag(capsys, "ask", QUESTION, "--index-dir", folder)
    assert code == 0
    yield folder, out.split("thread: ")[1].split()[0]
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)  # so that pytest can remove it


def read_only(folder: Path) -> None:
    for path in [*folder.rglob("*"), folder]:
        path.chmod(0o555 if path.is_dir() else 0o444)


@pytest.mark.door
def test_a_read_only_index_answers_and_writes_get_one_line(permissions_apply, index_copy):
    folder, thread = index_copy
    read_only(folder)
    before = sorted(p.name for p in folder.iterdir())
    ask, inspect, index, check = without_override(
        ["ask", QUESTION, "--index-dir", folder],
        ["inspect", thread, "--index-dir", folder],
        ["index", EXAMPLES / "hallin.md", "--index-dir", folder, "--quiet"],
        ["check", "--index-dir", folder],
    )
    assert ask[0] == 0 and "answer: 1889" in ask[1], ask
    assert "kept in memory only" in ask[1] and "damaged" not in ask[1] + ask[2]
    assert inspect[0] == 0 and "final answer: 1889" in inspect[1], inspect  # the conversation asked before
    assert index[0] == 2 and "read-only" in index[2] and index[2].count("\n") == 1, index
    assert "damaged" not in check[1] + check[2] and "Traceback" not in check[1] + check[2], check
    assert sorted(p.name for p in folder.iterdir()) == before


@pytest.mark.door
def test_an_unreadable_record_is_not_damage_and_salvage_refuses(permissions_apply, index_copy):
    folder, _ = index_copy
    (folder / "index.sqlite").chmod(0o000)
    check, salvage, ask = without_override(
        ["check", "--index-dir", folder],
        ["repair", "--salvage", "--index-dir", folder, "--quiet"],
        ["ask", QUESTION, "--index-dir", folder],
    )
    assert check[0] == 1 and "permission denied" in check[1] and "damaged" not in check[1], check
    assert salvage[0] == 2 and "permission denied" in salvage[2] and salvage[2].count("\n") == 1, salvage
    assert not list(folder.glob("index.sqlite.damaged-*"))
    assert ask[0] == 0 and "answer: 1889" in ask[1], ask  # answering reads the generation, not the record
    (folder / "index.sqlite").chmod(0o644)
    assert KnowledgeIndex(load_settings(environ={}, index_dir=folder), create=False).stats(vectors=False)[
        "documents"
    ] == len(FILES)


# --- a full disk ----------------------------------------------------------------------------------------


@pytest.fixture
def full_disk(built):
    """A copy of the index on a 16 MB tmpfs filled to the last byte."""
    mount = Path(tempfile.mkdtemp(prefix="kgrag-full-"))
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        mount.rmdir()
        pytest.skip(f"a full disk is played by a small tmpfs, which cannot be mounted here ({done.stderr!r})")
    try:
        shutil.copytree(built, mount / "idx")
        for size in (1 << 20, 4096, 1):  # fill what is left, in smaller and smaller pieces
            n = 0
            try:
                while True:
                    with open(mount / f"filler-{size}-{n}", "wb") as fh:
                        fh.write(b"\0" * size)
                    n += 1
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
        assert shutil.disk_usage(mount).free == 0
        yield mount / "idx"
    finally:
        subprocess.run(["umount", "--lazy", str(mount)], check=False)  # this process may still hold files open
        mount.rmdir()


def test_a_full_disk_still_answers_and_is_said_as_disk_full(full_disk, capsys):
    code, out, err = kgrag(capsys, "ask", QUESTION, "--index-dir", full_disk)
    assert code == 0 and "answer: 1889" in out, err
    assert "kept in memory only" in out and "disk full" in out
    code, out, err = kgrag(capsys, "check", "--index-dir", full_disk)
    assert code == 1 and "disk full" in out and "damaged" not in out, out + err
    code, out, err = kgrag(capsys, "index", EXAMPLES / "hallin.md", "--index-dir", full_disk, "--quiet")
    assert code == 2 and "disk full" in err and "internal error" not in err and err.count("\n") == 1, err
    assert not list((full_disk / "derived").glob("*.tmp"))


def test_a_build_failing_on_a_full_disk_leaves_no_half_generation(built, tmp_path, monkeypatch, capsys):
    folder = tmp_path / "idx"
    shutil.copytree(built, folder)

    def no_space(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(folder / "derived"))

    monkeypatch.setattr("graph_store.generations.publish", no_space)
    code, _, err = kgrag(capsys, "repair", "--index-dir", folder, "--quiet")
    assert code == 2 and err.startswith("kgrag: error: disk full") and err.count("\n") == 1, err
    assert not list((folder / "derived").glob("*.tmp"))
    monkeypatch.undo()
    code, out, _ = kgrag(capsys, "ask", QUESTION, "--index-dir", folder)  # the last complete generation answers
    assert code == 0 and "answer: 1889" in out
