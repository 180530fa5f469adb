"""Getting models: search the model hub, list a repository's GGUF files, download them."""
