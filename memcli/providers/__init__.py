"""Model providers: LiteLLM calls and the embedder over them."""
