"""The judging room: pairwise LLM-as-a-judge with predicted probabilities (both presentation
orders, the probabilities of the verdict letters averaged), its baselines and measures, a
Bradley-Terry ranking of models, and the pfgen-bench paper's 10-point judge."""
