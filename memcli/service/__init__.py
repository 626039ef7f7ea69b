"""The service layer: every operation of memcli as a method of :class:`memcli.memory.Memory`."""
