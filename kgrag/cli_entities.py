"""`kgrag entities`: the merges a person reviews (graph_store/resolution.py), their decisions, splits and undos."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from pathlib import Path

from graph_store.errors import InputError
from graph_store.store import Decision, Proposal

VERDICTS = {"accept": "merge", "merge": "merge", "reject": "reject"}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "action",
        choices=["review", "merge", "split", "undo", "list", "decisions"],
        help="review: the proposed merges with their evidence (at a terminal: accept, reject or skip each; "
        "otherwise JSON: the proposals out, or decisions in on stdin); merge A B; split NAME (out of its merged "
        "entity); undo [DECISION_ID] (the latest by default); list: the merged entities and their names; "
        "decisions: every decision made, undone ones too",
    )
    p.add_argument("names", nargs="*", metavar="NAME", help="entity names (merge: two, split: one, undo: an id)")
    p.add_argument("--why", default="", help="the reason, kept with the decision")
    p.add_argument("--who", default=None, help="who decides (default: $USER)")
    p.add_argument("--json", action="store_true", help="JSON output")


def run(args: argparse.Namespace, settings) -> int:
    from graph_store.index import KnowledgeIndex
    from graph_store.manifest import require_index

    require_index(Path(settings.index_dir))
    who = args.who if args.who is not None else os.environ.get("USER", "")
    if args.action == "list":
        return _list(KnowledgeIndex(settings, progress=False, create=False), args.json)
    if args.action == "decisions":
        return _show_decisions(KnowledgeIndex(settings, progress=False, create=False).store.decisions(False), args.json)
    if args.action == "review" and not (sys.stdin.isatty() and sys.stdout.isatty()):  # JSON out, or decisions in
        incoming = "" if sys.stdin.isatty() else sys.stdin.read().strip()
        if not incoming:
            return _print_proposals(KnowledgeIndex(settings, progress=False, create=False).store.proposals())
        return _apply(KnowledgeIndex(settings, progress=False), _decisions_from_json(incoming, who), True)
    index = KnowledgeIndex(settings, progress=False)
    if args.action == "review":
        decisions = _review(index.store.proposals(), who)
        return _apply(index, decisions, args.json) if decisions else 0
    if args.action == "merge":
        if len(args.names) != 2:
            raise InputError("entities merge needs two names: kgrag entities merge NAME NAME")
        a, b = args.names
        return _apply(index, [Decision("merge", a, b, who, args.why)], args.json)
    if args.action == "split":
        if len(args.names) != 1:
            raise InputError("entities split needs one name: kgrag entities split NAME")
        return _apply(index, index.split_decisions(args.names[0], who, args.why), args.json)
    return _undo(index, args.names, args.json)


def _undo(index, names: list[str], as_json: bool) -> int:
    if len(names) > 1 or (names and not names[0].isdigit()):
        raise InputError("entities undo takes at most one decision id (`kgrag entities decisions` lists them)")
    undone, summary = index.undo_decision(int(names[0]) if names else None)
    if as_json:
        print(json.dumps({"undone": dataclasses.asdict(undone), "seconds": round(summary.seconds, 2)}, indent=2))
    else:
        print(f"undone: decision {undone.id} ({_describe(undone)}); rebuilt in {summary.seconds:.1f} s")
    return 0


def _describe(d: Decision) -> str:
    return f"{d.verdict} {d.a!r} and {d.b!r}" + (f", {d.why}" if d.why else "")


def _apply(index, decisions: list[Decision], as_json: bool) -> int:
    stored, summary = index.decide(decisions)
    changed = f"{summary.stats.get('entities', 0)} entities; rebuilt in {summary.seconds:.1f} s"
    if as_json:
        out = {"decisions": [dataclasses.asdict(d) for d in stored], "entities": summary.stats.get("entities")}
        print(json.dumps({**out, "seconds": round(summary.seconds, 2)}, indent=2, ensure_ascii=False))
        return 0
    for d in stored:
        print(f"decision {d.id}: {_describe(d)}")
    print(f"{changed} (`kgrag entities undo` takes the last decision back)")
    return 0


def _decisions_from_json(text: str, who: str) -> list[Decision]:
    """Decisions given on stdin: a list of {"verdict": "accept"|"reject", "a": NAME, "b": NAME, "why": ...}."""
    try:
        items = json.loads(text)
    except ValueError as exc:
        raise InputError(f"entities review reads a JSON list of decisions on stdin ({exc})") from None
    items = items.get("decisions", []) if isinstance(items, dict) else items
    decisions = []
    for item in items if isinstance(items, list) else [None]:
        if not isinstance(item, dict) or item.get("verdict") not in VERDICTS or not item.get("a") or not item.get("b"):
            raise InputError(
                'each decision is {"verdict": "accept" or "reject", "a": NAME, "b": NAME}, not ' + json.dumps(item)
            )
        verdict = VERDICTS[item["verdict"]]
        decisions.append(Decision(verdict, item["a"], item["b"], item.get("who") or who, item.get("why", "")))
    return decisions


def proposal_dict(p: Proposal) -> dict:
    return {
        "a": p.a_name,
        "b": p.b_name,
        "a_id": p.a_id,
        "b_id": p.b_id,
        "score": p.score,
        "reasons": json.loads(p.reasons),
        "evidence": json.loads(p.evidence),
    }


def _print_proposals(proposals: list[Proposal]) -> int:
    print(json.dumps({"proposals": [proposal_dict(p) for p in proposals]}, indent=2, ensure_ascii=False))
    return 0


def _review(proposals: list[Proposal], who: str) -> list[Decision]:
    """Each proposal with its evidence, at a terminal; the decisions taken (applied together at the end)."""
    if not proposals:
        print("no merge proposed: every name the blocking pairs up is decided or merged")
        return []
    decisions: list[Decision] = []
    for n, p in enumerate(proposals, 1):
        shown = proposal_dict(p)
        print(f"\n[{n}/{len(proposals)}] {p.a_name!r} and {p.b_name!r}: score {p.score:.2f}")
        print("  why: " + ", ".join(shown["reasons"]))
        for side, name in (("a", p.a_name), ("b", p.b_name)):
            for passage in shown["evidence"][side]:
                print(f"  {name} in {passage['title']}: {passage['text']}")
        answer = ""
        while answer not in ("a", "r", "s", "q"):
            answer = input("  merge them? [a]ccept, [r]eject, [s]kip, [q]uit: ").strip().lower()[:1]
        if answer == "q":
            break
        if answer in ("a", "r"):
            decisions.append(Decision("merge" if answer == "a" else "reject", p.a_name, p.b_name, who, "review"))
    return decisions


def _list(index, as_json: bool) -> int:
    groups: dict[str, list] = {}
    entity_of = index.store.aliases()
    merged = sorted({e for k, e in entity_of.items() if k != e})
    for alias in index.store.aliases_of(merged):
        groups.setdefault(alias.entity_id, []).append(alias)
    names = index.store.entity_names()
    if as_json:
        listed = {
            e: {"name": names.get(e, e), "aliases": [{"name": a.name, "how": a.how} for a in groups[e]]}
            for e in sorted(groups)
        }
        print(json.dumps({"merged": listed, "proposals": index.store.count("proposals")}, indent=2))
        return 0
    for entity in sorted(groups):
        forms = "; ".join(f"{a.name}" + (f" ({a.how})" if a.how else "") for a in groups[entity])
        print(f"{names.get(entity, entity)}: {forms}")
    print(f"{len(groups)} merged entities; {index.store.count('proposals')} proposals (`kgrag entities review`)")
    return 0


def _show_decisions(decisions: list[Decision], as_json: bool) -> int:
    if as_json:
        print(json.dumps({"decisions": [dataclasses.asdict(d) for d in decisions]}, indent=2, ensure_ascii=False))
        return 0
    for d in decisions:
        state = " (undone)" if d.undone else ""
        print(f"{d.id}: {_describe(d)} by {d.who or 'someone'}{state}")
    if not decisions:
        print("no decision yet (`kgrag entities review`)")
    return 0
