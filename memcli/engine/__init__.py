"""The warm engine: one long-running process per workspace (``memcli serve``) that keeps the
index open and the embedder loaded, and its socket server: an adapter over
:class:`memcli.memory.Memory`. Reaching it (its socket, the client) is
:mod:`memcli.enginelink`'s."""
