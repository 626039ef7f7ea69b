"""Flush: conversations turned into durable facts through an LLM."""
