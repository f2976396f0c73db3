"""The ``kgrag`` command line.

Settings flags are shared by every subcommand; they override environment
variables and the config file (see graph_store/settings.py).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Callable

from graph_store.errors import KGRagError
from graph_store.settings import Settings, load_settings

# flag -> Settings field; flags left unset fall through to env / file / defaults
SETTINGS_FLAGS = {
    "--index-dir": "index_dir",
    "--chat-model": "chat_model",
    "--chat-base-url": "chat_base_url",
    "--chat-api-key": "chat_api_key",
    "--chat-temperature": "chat_temperature",
    "--chat-timeout": "chat_timeout",
    "--max-concurrency": "max_concurrency",
    "--embedding-provider": "embedding_provider",
    "--embedding-model": "embedding_model",
    "--embedding-base-url": "embedding_base_url",
    "--checkpointer": "checkpointer",
}


def _settings_parent() -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    group = parent.add_argument_group("settings (override KGRAG_* variables and the config file)")
    group.add_argument("--config", help="TOML config file (default: ./kgrag.toml if present)")
    for flag, field in SETTINGS_FLAGS.items():
        info = Settings.model_fields[field]
        group.add_argument(flag, dest=field, default=None, help=info.description or f"sets {field}")
    return parent


def settings_from_args(args: argparse.Namespace) -> Settings:
    overrides = {field: getattr(args, field, None) for field in SETTINGS_FLAGS.values()}
    return load_settings(config_file=args.config, **overrides)


def cmd_config(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    print(json.dumps(settings.redacted(), indent=2))
    if settings.offline:
        print("mode: offline (no chat model configured; extractive answers, rule-based planning)")
    return 0


COMMANDS: dict[str, tuple[Callable[[argparse.Namespace], int], str, Callable | None]] = {
    "config": (cmd_config, "Show the effective settings (keys masked) and whether the system runs offline.", None),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kgrag",
        description="Answer complex questions over a document corpus with a knowledge graph "
        "(PankRAG planning + ProPEX-RAG Personalized PageRank). Offline by default.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    parent = _settings_parent()
    for name, (handler, help_text, add_arguments) in COMMANDS.items():
        cmd = sub.add_parser(name, parents=[parent], help=help_text, description=help_text)
        if add_arguments:
            add_arguments(cmd)
        cmd.set_defaults(handler=handler)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except KGRagError as exc:
        print(f"kgrag: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("kgrag: interrupted; finished work is saved, re-run to continue", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
