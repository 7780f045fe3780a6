"""Data: the byte tokenizer, corpora for language modelling, task generators."""
