"""The coding agents memcli plugs into, one module each behind one interface
(:class:`memcli.agents.base.Agent`), found by name in :mod:`memcli.agents.registry`."""
