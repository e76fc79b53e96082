"""Skills in the Agent Skills format: a folder with ``SKILL.md`` (``name``/``description`` front matter), its body
and resources loaded by the model on demand."""
