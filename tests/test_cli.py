import json
import subprocess
import sys


def _run(*args, env=None):
    return subprocess.run([sys.executable, "-m", "agent.cli", *args], capture_output=True, text=True, env=env)


def test_help_lists_subcommands():
    out = _run("--help")
    assert out.returncode == 0
    assert "config" in out.stdout and "offline" in out.stdout.lower()


def test_config_shows_effective_settings_and_masks_keys(tmp_path):
    out = _run("config", "--json", "--chat-model", "m", "--chat-api-key", "secret", "--index-dir", str(tmp_path))
    assert out.returncode == 0, out.stderr
    shown = json.loads(out.stdout)
    assert shown["chat_model"] == "m" and shown["chat_api_key"] == "***" and not shown["offline"]
    assert "secret" not in out.stdout


def test_bad_setting_is_reported_without_traceback():
    out = _run("config", "--max-concurrency", "zero")
    assert out.returncode == 2
    assert "max_concurrency" in out.stderr and "Traceback" not in out.stderr
