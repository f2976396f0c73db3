"""Evaluation: metrics, dataset loaders, the run of systems over a dataset, and the offline replay experiment."""
