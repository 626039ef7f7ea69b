"""memcli's version: what ``memcli --version``, doctor, the engine's handshake and the MCP
server report. A module of its own, below everything, so that no module of the package imports
the package root (which offers :class:`memcli.memory.Memory`, the top of the house)."""

__version__ = "0.1.0"
