"""The LCTG Bench room: controllability of Japanese generation (format, character count,
keyword, prohibited word) with the benchmark's own prompts, remover, judge and scoring."""
