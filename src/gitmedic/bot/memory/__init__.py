"""Operational memory in the manifest repo: learned detectors, playbooks, outcomes."""
