"""What memcli sets up in coding agents and what their hooks leave behind: installing memcli
into Claude Code's and Codex's settings (``planning``, ``edits``, ``installed``...), the hook
events it installs and the agent log the hooks write (``hooklog``). The hook runner and the
MCP server (:mod:`memcli.agent`), the service (``Memory.agent_*``) and doctor use them; nothing
here imports the service."""
