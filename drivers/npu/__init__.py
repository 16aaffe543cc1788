"""Rockchip NPU runtimes: ``rkllm`` (ctypes binding of librkllmrt.so, the LLM runtime) and ``rknn``
(RKNNLite runner for the small non-LLM networks, with an onnxruntime CPU fallback).

Nothing here needs the board to import; the vendor libraries are opened only when asked for.
"""
