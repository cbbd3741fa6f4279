"""The responder: from a persistent finding to a proposed change (playbook, bisect, LLM)."""
