"""The long-running process and its faces: supervisor, sd_notify, journald logs, the state file, the HTTP API."""
