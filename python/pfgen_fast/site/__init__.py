"""`python -m pfgen_fast site`: one static site (opens from file://, no server, no network) with
the leaderboards and run pages of pfgen-bench, LCTG Bench, llm-jp-eval-mm and the pairwise
judge, read from the files their commands write."""
