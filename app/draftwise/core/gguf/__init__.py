"""GGUF files: reading headers, GGML type sizes, writing small files."""
