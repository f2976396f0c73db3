"""One sub-question's steps, each a node of its own subgraph (sent by ``dispatch``):

    rephrase -> route -> retrieve_local | retrieve_community | retrieve_ppr | retrieve_dense -> rerank -> sub_answer

Each step writes its part of the sub-question's record (see agent/state.py), so Studio can stop at any
of them and ``get_state(config, subgraphs=True)`` shows a running sub-question. A dependency may carry
several candidate answers: the sub-question is then retrieved once per candidate (rephrased with it),
the evidence fused by candidate confidence, and every candidate of its own answer remembers which
dependency answer it assumed, so the final answer can follow the best-scoring chain.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from agent.context import Context
from agent.offline.reader import (
    Candidate,
    Reading,
    combine,
    extractive_summary,
    question_names,
    read_answer,
    with_style,
)
from agent.plans import substitute_references
from agent.prompting import EVIDENCE_IN_PROMPT, numbered, resolved, text_of
from agent.records import (
    NOT_FOUND,
    CandidateAnswer,
    EvidenceItem,
    Query,
    Status,
    SubQuestionRecord,
    as_evidence,
    asked,
    evidence_item,
    is_not_found,
)
from agent.reranking import evidence_vectors, rerank_by_dependencies
from agent.resources import Resources
from agent.state import SubQuestionState
from agent.validation import copied_example, repeats_subject, unusable_answer
from graph_store.errors import KGRagError
from graph_store.graph import normalize_name
from graph_store.llm import json_in_reply
from prompts import render_prompt

ROUTES = ("local", "community", "ppr", "dense")
COMBINING_OPS = ("compare", "choose", "same", "both", "yes_no")


def _failed(state: SubQuestionState) -> bool:
    return state["record"].get("status") == "failed"


def _guarded(step):
    """A step that fails marks its sub-question failed and the others go on; later steps pass it through.

    Errors of the run itself (an unreachable model endpoint, bad settings, a damaged index) stop the run with
    their own message instead.
    """

    def run(state: SubQuestionState, config: RunnableConfig, runtime: Runtime[Context]) -> dict[str, Any]:
        stops = runtime.context.pause_before
        if step.__name__ in stops or (step.__name__.startswith("retrieve_") and "retrieve" in stops):
            interrupt({"paused_before": step.__name__, "subquestion": state["record"]["id"]})
        if _failed(state) and step.__name__ != "sub_answer":
            return {"record": {"notes": {**state["record"].get("notes", {}), step.__name__: "skipped after a failure"}}}
        try:
            return step(state, config, runtime)
        except KGRagError:
            raise
        except Exception as exc:  # noqa: BLE001 - one failed branch must not sink the others; the state says why
            failed = {"status": "failed", "error": f"{step.__name__}: {exc.__class__.__name__}: {exc}"}
            if step.__name__ != "sub_answer":
                return {"record": failed}
            record = {
                **state["record"],
                **failed,
                "answer": NOT_FOUND,
                "confidence": 0.0,
                "used_answers": {d["id"]: d["answer"] for d in state["dependencies"]},
            }
            return {"record": record, "subquestions": {record["id"]: record}}

    run.__name__ = step.__name__
    run.__doc__ = step.__doc__
    return run


# --- rephrase -----------------------------------------------------------------------------------------


def _dependency_candidates(dep: SubQuestionRecord) -> list[CandidateAnswer]:
    """A dependency's candidate answers, best first: none when not found; its answer alone when it has no
    candidates or a user edited it."""
    if is_not_found(dep.get("answer")):
        return []
    candidates = dep.get("candidates") or []
    if not candidates or candidates[0]["answer"] != dep["answer"]:
        return [{"answer": dep["answer"] or "", "confidence": float(dep.get("confidence") or 1.0)}]
    return candidates


def _dependency_options(dep: SubQuestionRecord, limit: int) -> list[tuple[str, str, float]]:
    """A dependency's candidate answers for rephrasing: (answer, as the next hop writes it, confidence). The next hop
    writes an answer with the style its sentence gives it ("X, Duke of Y": it asks about that X, not every X)."""
    candidates = _dependency_candidates(dep)
    if not candidates:
        unknown = f"(the answer to: {asked(dep)})"
        return [(unknown, unknown, 0.0)]
    return [
        (c["answer"], with_style(c["answer"], c.get("sentence") or ""), float(c["confidence"] or 0.0))
        for c in candidates[:limit]
    ]


def queries_for(
    record: SubQuestionRecord, dependencies: list[SubQuestionRecord], siblings: list[str], limit: int
) -> list[Query]:
    """One query per combination of dependency candidates, best combinations first, weights relative to the best."""
    options = [[(dep, *option) for option in _dependency_options(dep, limit)] for dep in dependencies]
    combos = sorted(itertools.product(*options), key=lambda combo: -_weight(combo))[:limit]
    best = _weight(combos[0]) or 1.0
    queries: list[Query] = []
    for combo in combos:
        text = substitute_references(
            record["question"], {dep["local_id"]: written for dep, _, written, _ in combo}, siblings
        )
        if text not in [q["text"] for q in queries]:
            queries.append(
                {
                    "text": text,
                    "weight": round(_weight(combo) / best, 4) if best else 1.0,
                    # the candidates' own answers: the final chain picks each dependency's candidate by them
                    "assumes": {dep["id"]: answer for dep, answer, _, _ in combo},
                }
            )
    return queries


def _weight(combo) -> float:
    weight = 1.0
    for *_, confidence in combo:
        weight *= max(confidence, 1e-3)
    return weight


@_guarded
def rephrase(state: SubQuestionState, config: RunnableConfig, runtime: Runtime[Context]) -> dict[str, Any]:
    """Top-down disambiguation: references to earlier answers replaced by them (one query per candidate
    answer); an LLM rewrites a sub-question whose dependency is implicit."""
    res = runtime.context.answering_from()
    record, deps = state["record"], state["dependencies"]
    write = runtime.stream_writer
    write({"event": "subquestion_started", "id": record["id"], "question": record["question"]})
    queries = queries_for(record, deps, state["siblings"], runtime.context.candidates)
    notes = {}
    implicit = queries[0]["text"] == record["question"]
    known = [d for d in deps if not is_not_found(d["answer"])]
    rewriter = res.model_for("rephrase")
    if record["rephrase"] and implicit and known and rewriter is not None:
        reply = text_of(
            rewriter.invoke(
                [HumanMessage(render_prompt("rephrase", question=record["question"], dependencies=resolved(known)))],
                config,
                task="rephrase",
            )
        )
        line = (reply.strip().splitlines() or [""])[0].strip()
        problem = unusable_answer(line) or ("placeholder text" if "..." in line else None)
        if problem:
            notes["rephrase"] = f"rewrite rejected ({problem}); the sub-question is retrieved as written"
        else:
            queries = [{**queries[0], "text": line}]
    rephrased = queries[0]["text"] if queries[0]["text"] != record["question"] else None
    if rephrased:
        write(
            {
                "event": "subquestion_rephrased",
                "id": record["id"],
                "rephrased": rephrased,
                "alternatives": [q["text"] for q in queries[1:]],
                "notes": notes,
            }
        )
    return {
        "record": {
            "status": "running",
            "rephrased": rephrased,
            "queries": queries,
            "notes": {**record.get("notes", {}), **notes},
        }
    }


# --- route ----------------------------------------------------------------------------------------------


@_guarded
def route(state: SubQuestionState, config: RunnableConfig, runtime: Runtime[Context]) -> dict[str, Any]:
    """The route actually used: the plan's, or the run's route policy; none for a combination of answers."""
    knobs = runtime.context
    record = state["record"]
    if (record.get("operation") or {}).get("op") in COMBINING_OPS and record["depends_on"]:
        chosen = "none"
    elif knobs.mode == "naive":
        chosen = "dense"
    else:
        chosen = record["route"] if knobs.route_policy == "plan" else knobs.route_policy
    return {"record": {"route": chosen}}


def pick_retriever(state: SubQuestionState) -> str:
    chosen = state["record"].get("route")
    return f"retrieve_{chosen}" if chosen in ROUTES and not _failed(state) else "sub_answer"


# --- retrieve -------------------------------------------------------------------------------------------


def _retrieve(route_name: str):
    def step(state: SubQuestionState, config: RunnableConfig, runtime: Runtime[Context]) -> dict[str, Any]:
        ctx = runtime.context
        res = ctx.answering_from()
        record = state["record"]
        fused: dict[str, EvidenceItem] = {}
        details, notes = [], {}
        for n, query in enumerate(record["queries"]):
            found, info = res.retrieve(
                route_name, query["text"], record["kind"], ctx.top_k(route_name), ctx.fact_filter
            )
            details.append({"query": n, **info})
            for reason in ("fallback", "filter_error"):
                if info.get(reason):
                    notes[f"retrieve_{route_name}"] = info[reason]
            for e in found:
                score = round(query["weight"] * e.score, 6)
                item = fused.setdefault(e.id, evidence_item(e, retrieval_score=0.0, found_by={}))
                item["found_by"][str(n)] = e.score
                item["retrieval_score"] = max(item["retrieval_score"], score)
        evidence = sorted(fused.values(), key=lambda item: -item["retrieval_score"])
        for item in evidence:
            item["score"] = item["retrieval_score"]
        runtime.stream_writer(
            {
                "event": "subquestion_retrieved",
                "id": record["id"],
                "route": route_name,
                "evidence": [
                    {"id": e["id"], "kind": e["kind"], "titles": e["titles"], "score": e["score"]} for e in evidence
                ],
                "notes": notes,
            }
        )
        return {"record": {"evidence": evidence, "retrieval": details, "notes": {**record.get("notes", {}), **notes}}}

    step.__name__ = f"retrieve_{route_name}"
    step.__doc__ = f"Retrieve the sub-question's evidence by the {route_name} route, once per query, fused by weight."
    return _guarded(step)


retrieve_local, retrieve_community, retrieve_ppr, retrieve_dense = (_retrieve(name) for name in ROUTES)


# --- rerank ---------------------------------------------------------------------------------------------


@_guarded
def rerank(state: SubQuestionState, config: RunnableConfig, runtime: Runtime[Context]) -> dict[str, Any]:
    """PankRAG's dependency-aware reranking, score = alpha * R + beta * M, M the similarity of the evidence to
    the dependency answers its query assumed. No dependencies (or mode no_rerank): the score stays R."""
    knobs = runtime.context
    res = knobs.answering_from()
    record, deps = state["record"], state["dependencies"]
    evidence = record.get("evidence") or []
    by_id = {d["id"]: d for d in deps}
    assumed = {}  # per query: the dependency answers it assumed, as "question answer" texts
    for n, query in enumerate(record.get("queries") or []):
        texts = [
            f"{asked(by_id[d])} {a}"
            for d, a in query["assumes"].items()
            if d in by_id and not is_not_found(by_id[d]["answer"])
        ]
        if texts:
            assumed[str(n)] = texts
    if knobs.mode != "full" or not evidence or not assumed:
        return {"record": {"evidence": [{**e, "dependency_similarity": None} for e in evidence]}}
    alpha, beta = knobs.weights(record["kind"])
    groups: dict[str, list[EvidenceItem]] = {}  # evidence by the query that found it best
    for e in evidence:
        best_query = max(e["found_by"], key=lambda q: e["found_by"][q])
        groups.setdefault(best_query if best_query in assumed else next(iter(assumed)), []).append(e)
    ranked = []
    for query_number, group in groups.items():
        items = [as_evidence(e, score=e["retrieval_score"]) for e in group]
        scored = rerank_by_dependencies(
            items,
            evidence_vectors(items, res.retrievers, res.embedder),
            res.embedder.embed(assumed[query_number]),
            alpha,
            beta,
        )
        extra = {e["id"]: e for e in group}
        ranked += [
            {**extra[s["id"]], "dependency_similarity": s["dependency_similarity"], "score": s["score"]} for s in scored
        ]
    ranked.sort(key=lambda e: -e["score"])
    runtime.stream_writer(
        {
            "event": "subquestion_reranked",
            "id": record["id"],
            "alpha": alpha,
            "beta": beta,
            "evidence": [
                {"id": e["id"], "R": e["retrieval_score"], "M": e["dependency_similarity"], "score": e["score"]}
                for e in ranked
            ],
        }
    )
    return {"record": {"evidence": ranked, "rerank": {"alpha": alpha, "beta": beta}}}


# --- sub-answer -----------------------------------------------------------------------------------------


def _offline_candidates(
    res: Resources, record: SubQuestionRecord, deps: list[SubQuestionRecord], limit: int
) -> tuple[list[CandidateAnswer], str | None]:
    """Candidates read from each query's evidence, weighted by the query's weight, merged by answer."""
    merged: dict[str, CandidateAnswer] = {}
    reason = None
    # what the chain started from and what the hops before answered: no hop answers them again
    given = [name for dep in deps for name in question_names(dep["question"])]
    given += [normalize_name(dep["answer"]) for dep in deps if dep.get("answer") and not is_not_found(dep["answer"])]
    for n, query in enumerate(record["queries"]):
        mine = [e for e in record["evidence"] if str(n) in e["found_by"]]
        reading = read_answer(
            query["text"], [as_evidence(e) for e in mine], res.embedder, limit, res.retrievers.pronoun_of, given
        )
        reason = reason or reading.reason
        for c in reading.candidates:
            key = normalize_name(c.answer) or c.answer.lower()  # "Stockholm-Arlanda Airport" is "Stockholm Arlanda ..."
            confidence = round(c.confidence * query["weight"], 4)
            if key not in merged or confidence > merged[key]["confidence"]:
                merged[key] = {
                    "answer": c.answer,
                    "confidence": confidence,
                    "sentence": c.sentence,
                    "evidence_id": c.evidence_id,
                    "answer_type": c.answer_type,
                    "assumes": query["assumes"],
                }
    return sorted(merged.values(), key=lambda c: -c["confidence"])[:limit], reason


# An option written as a relation of something ("the director of The Salt Road"): its hops name who that is.
_RELATION_LABEL = re.compile(r"^(?:the )?[a-z][a-z -]* of \S")


def _combined_inputs(
    operation: dict, record: SubQuestionRecord, deps: list[SubQuestionRecord]
) -> list[tuple[str, Reading]]:
    """(option label, the dependency's reading rebuilt from its candidates), in the operation's label order."""
    by_id = {d["id"]: d for d in deps}
    labels = operation.get("labels") or [by_id[d]["question"] for d in record["depends_on"] if d in by_id]
    if len(record["depends_on"]) == 2 * len(labels):  # two readings per option (a lifespan: birth, then death)
        labels = [label for label in labels for _ in (0, 1)]
    inputs = []
    for label, dep_id in zip(labels, record["depends_on"]):
        dep = by_id.get(dep_id)
        if dep is None:
            continue
        found = _dependency_candidates(dep)
        assumed = list((found[0].get("assumes") or {}).values()) if found else []
        if operation.get("op") == "compare" and len(assumed) == 1 and _RELATION_LABEL.match(label):
            label = assumed[0]  # "Who died first, the director of A or ...": the director the date belongs to
        candidates = [
            Candidate(
                c["answer"],
                c["confidence"],
                c.get("sentence", ""),
                c.get("evidence_id") or "",
                c.get("answer_type", ""),
            )
            for c in found
        ]
        inputs.append((label, Reading("", candidates)))
    return inputs


_CONFIDENCE_WORDS = {"high": 0.9, "medium": 0.6, "low": 0.3}


def _llm_candidates(
    res: Resources, record: SubQuestionRecord, deps: list[SubQuestionRecord], config: RunnableConfig
) -> list[CandidateAnswer]:
    """The model's answer (and alternatives) to the best query; raises ValueError on an unusable reply."""
    model = res.model_for("sub_answer")
    assert model is not None
    query = record["queries"][0]
    evidence = record["evidence"][:EVIDENCE_IN_PROMPT]
    variables = {"question": query["text"], "dependencies": resolved(deps) or "(none)", "evidence": numbered(evidence)}
    raw = text_of(model.invoke([HumanMessage(render_prompt("sub_answer", **variables))], config, task="sub_answer"))
    data = json_in_reply(raw)
    if not isinstance(data, dict) or "answer" not in data:
        raise ValueError(f"no JSON object with an answer: {raw[:60]!r}")
    said = str(data.get("answer") or "")
    problem = (
        unusable_answer(said)
        or copied_example(said, "sub_answer", "\n".join(variables.values()))
        or repeats_subject(said, query["text"])
    )
    if problem:
        raise ValueError(problem)
    cited = [
        evidence[int(n) - 1]["id"]
        for n in data.get("evidence") or []
        if str(n).strip().isdigit() and 1 <= int(n) <= len(evidence)
    ]
    confidence = _CONFIDENCE_WORDS.get(str(data.get("confidence", "")).lower(), 0.6)
    answers = [str(data["answer"]).strip()] + [str(a).strip() for a in data.get("alternatives") or [] if str(a).strip()]
    return [
        {
            "answer": a,
            "confidence": round(confidence * (0.5 if i else 1.0), 3),
            "sentence": "",
            "evidence_id": cited[0] if cited and not i else None,
            "assumes": query["assumes"],
            "cited": cited if not i else [],
        }
        for i, a in enumerate(dict.fromkeys(answers))
    ]


def _read_candidates(
    res: Resources,
    record: SubQuestionRecord,
    deps: list[SubQuestionRecord],
    limit: int,
    notes: dict[str, str],
    config: RunnableConfig,
) -> list[CandidateAnswer]:
    """The model's candidates, or (offline, or when its reply is unusable) the reader's; the record keeps the
    best one's sentence and sources, and why nothing was found."""
    candidates: list[CandidateAnswer] = []
    if res.model_for("sub_answer") is not None:
        try:
            candidates = _llm_candidates(res, record, deps, config)
        except ValueError as exc:
            notes["sub_answer"] = f"model answer rejected ({exc}); extractive answer used"
    if not candidates:
        candidates, reason = _offline_candidates(res, record, deps, limit)
        record["not_found_reason"] = None if candidates else reason
    best = candidates[0] if candidates else None
    record["supporting_sentence"] = best["sentence"] if best else ""
    record["sources"] = (best.get("cited") or ([best["evidence_id"]] if best["evidence_id"] else [])) if best else []
    return candidates


@_guarded
def sub_answer(state: SubQuestionState, config: RunnableConfig, runtime: Runtime[Context]) -> dict[str, Any]:
    """The sub-question's answer with its confidence, supporting sentence, sources and candidates."""
    res = runtime.context.answering_from()
    record, deps = SubQuestionRecord(**state["record"]), state["dependencies"]
    notes = dict(record.get("notes", {}))
    operation = record.get("operation") or {}
    candidates: list[CandidateAnswer] = []
    if _failed(state):
        answer, confidence = NOT_FOUND, 0.0
    elif operation.get("op") in COMBINING_OPS and deps:
        answer, explanation, confidence = combine(
            operation, record["question"], _combined_inputs(operation, record, deps)
        )
        record["supporting_sentence"] = explanation
        record["sources"] = list(dict.fromkeys(s for d in deps for s in d["sources"]))
    elif operation.get("op") == "summarize" and res.model_for("sub_answer") is None:
        answer, record["sources"] = extractive_summary(
            asked(record), [as_evidence(e) for e in record["evidence"]], res.embedder
        )
        confidence = 0.5 if record["sources"] else 0.0
    else:
        candidates = _read_candidates(res, record, deps, runtime.context.candidates, notes, config)
        answer = candidates[0]["answer"] if candidates else NOT_FOUND
        confidence = candidates[0]["confidence"] if candidates else 0.0
    status: Status = "failed" if _failed(state) else ("not_found" if is_not_found(answer) else "answered")
    record.update(
        SubQuestionRecord(
            answer=answer,
            confidence=round(float(confidence), 4),
            candidates=candidates,
            status=status,
            notes=notes,
            used_answers={d["id"]: d["answer"] for d in deps},
        )
    )
    runtime.stream_writer(
        {
            "event": "subquestion_answered",
            "id": record["id"],
            "answer": answer,
            "confidence": record["confidence"],
            "status": status,
            "sentence": record.get("supporting_sentence", ""),
            "sources": record.get("sources", []),
            "candidates": [{"answer": c["answer"], "confidence": c["confidence"]} for c in candidates],
            "notes": {k: v for k, v in notes.items() if k == "sub_answer"},
        }
    )
    return {"record": record, "subquestions": {record["id"]: record}}
