"""The local HTTP API (Ollama and OpenAI shapes, /healthz, /metrics)."""
