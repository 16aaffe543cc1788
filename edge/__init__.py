"""edge: an offline voice assistant service for NPU development boards."""

__version__ = "0.1.0"
