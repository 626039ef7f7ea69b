"""The warm engine: one long-running process per workspace (``memcli serve``) that keeps the
index open and the embedder loaded, and the client the CLI uses to reach it."""
