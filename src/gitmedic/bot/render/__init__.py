"""Rendering what people read on the forge: PR bodies, replies, the dashboard."""
