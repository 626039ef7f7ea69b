"""The MCP protocol's names that both ``memcli mcp``'s front (:mod:`memcli.agent.mcp_front`)
and the capture of its answers (:func:`memcli.agent.mcp_capture.wire`) use."""

#: The key of the protocol version in a request's ``_meta`` (the per-request envelope).
VERSION_META = "io.modelcontextprotocol/protocolVersion"
#: Where a result of that envelope names the server.
SERVER_META = "io.modelcontextprotocol/serverInfo"
#: A subscription's acknowledgement, and the subscription mcp_wire.json has it for (the
#: list changes Claude Code listens for); its id is in the ``_meta`` under SUBSCRIPTION.
LISTENING = "notifications/subscriptions/acknowledged"
LISTEN_FOR = {"toolsListChanged": True, "promptsListChanged": True, "resourcesListChanged": True}
SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"
