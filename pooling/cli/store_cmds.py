"""Store commands: init, import, info, export."""
