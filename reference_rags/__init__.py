"""Reference RAG systems shipped with ragassay, each one a plugin registered through an entry point."""
