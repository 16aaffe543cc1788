"""Language model engines behind one interface; ``llamacpp`` on the CPU."""
