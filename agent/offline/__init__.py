"""Offline answering, with no language model: what a question asks (questions.py), the rule-based planner
(planner.py) and the typed extractive reader that also combines answers (reader.py). The workflow uses them
when no chat model is configured, and as the fallback when a model's output is unusable."""
