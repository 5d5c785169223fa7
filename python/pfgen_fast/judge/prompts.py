"""The judge prompts of the pairwise paper (its appendix A and B, as the spec reproduces them) and
the 10-point reference-guided prompt of the pfgen-bench paper.

The paper's text comes from a PDF: the wide spaces between blocks are read as line breaks, the
line breaks inside a sentence are joined, and the spaces the extraction put between Japanese and
Latin letters ("アシスタント Aが") are dropped (docs/judge.md)."""

from __future__ import annotations

from dataclasses import dataclass

CRITERIA_SENTENCE = "評価の際、以下の評価観点をもとに評価をしてください。\n"
CRITERIA_BLOCK = "［評価観点開始］{criteria}［評価観点終わり］\n"
REFERENCE_GOAL = "あなたの仕事は、模範回答に近いアシスタントの回答を高く評価することです。\n"
REFERENCE_BLOCK = "[模範回答の開始]{reference}[模範回答の終了]\n"
CAUTIONS = (
    "その他気をつける点は以下の通りです。立場の偏りを避け、回答が提示された順番があなたの決定に"
    "影響しないようにしてください。回答の長さが評価に影響しないようにしてください。"
    "特定のアシスタントの名前を好まないこと。できるだけ客観的に評価してください。\n"
)
REASON_THEN_RESULT = "評価理由を提供した後、以下の書式にしたがって評価を出力してください：\n"
RESULT_ONLY = "以下の書式にしたがって評価結果のみを出力してください：\n"
LETTER_RULE = "アシスタントAが良い場合はA、アシスタントBが良い場合はB、同点の場合はCです。\n"
ANSWERS = (
    "\n[アシスタントAの答えの開始]{first}[アシスタントAの答えの終了]\n"
    "\n[アシスタントBの答えの開始]{second}[アシスタントBの答えの終了]"
)

CRITERIA_PROMPT_HEAD = (
    "公平な判断者として行動し、下記の質問に対するAIアシスタントの応答品質を評価します。\n"
    "あなたが評価を行う際に必要な評価観点を、下記の{sources}から出力してください。\n"
    "評価観点は、質問内に条件および出力形式が記載されている場合は、それらを反映すること。\n"
    "箇条書きで評価観点のみ出力してください。\n"
    "[質問開始]{question}[質問終了]"
)
CRITERIA_REFERENCE = "\n[模範回答開始]{reference}[模範回答終了]"

PROMPT_VARIANTS = ("result-only", "reason-then-result")


@dataclass(frozen=True)
class PairwisePrompt:
    """One of the paper's four judge prompts: with or without generated criteria, the result
    alone or a reason then the result."""

    reasoning: bool
    with_criteria: bool

    @property
    def name(self) -> str:
        criteria = "観点有" if self.with_criteria else "観点無"
        result = "理由→結果" if self.reasoning else "結果のみ"
        return f"PPT({criteria};{result})"

    def render(
        self, question: str, reference: str | None, first: str, second: str, criteria: str | None
    ) -> str:
        """The prompt showing `first` as assistant A and `second` as assistant B. Without a
        reference the sentence and the block about the model answer are left out."""
        parts = ["以下に表示されるタスクに対するアシスタントの応答品質を評価してください。\n"]
        if reference is not None:
            parts.append(REFERENCE_GOAL)
        if self.with_criteria:
            if criteria is None:
                raise ValueError("a prompt with criteria needs the generated criteria")
            parts.append(CRITERIA_SENTENCE)
            parts.append(CRITERIA_BLOCK.format(criteria=criteria))
        parts.append(CAUTIONS)
        parts.append(REASON_THEN_RESULT if self.reasoning else RESULT_ONLY)
        parts.append(LETTER_RULE)
        parts.append(f"[タスク]{question}\n")
        if reference is not None:
            parts.append(REFERENCE_BLOCK.format(reference=reference))
        parts.append(ANSWERS.format(first=first, second=second))
        return "".join(parts)


def criteria_prompt(question: str, reference: str | None) -> str:
    """The paper's prompt that asks for evaluation criteria of one question (appendix B)."""
    sources = "質問と模範回答" if reference is not None else "質問"
    text = CRITERIA_PROMPT_HEAD.format(sources=sources, question=question)
    if reference is not None:
        text += CRITERIA_REFERENCE.format(reference=reference)
    return text


POINTWISE_PROMPT = (
    "[Instruction]\n"
    "Please act as an impartial judge and evaluate the quality of the response provided by an "
    "AI assistant to the user question displayed below. Your evaluation should consider "
    "correctness and helpfulness. You will be given a reference answer and the assistant's "
    "answer. Begin your evaluation by comparing the assistant's answer with the reference "
    "answer. Identify and correct any mistakes. Be as objective as possible. The expected "
    "language is Japanese. Responses in languages other than Japanese will incur score "
    "deductions unless specifically required. Failure to use Japanese at all will result in the "
    "lowest evaluation. However, using Japanese is not mandatory when providing only Python "
    "scripts or calculation results, where Japanese is not essential. Additionally, your "
    "explanation of judgement should be in Japanese. After providing your explanation, you must "
    'rate the response on a scale of 1 to 10 by strictly following this format: "[[rating]]", '
    'for example: "Rating: [[5]]".\n\n'
    "[Question]\n{question}\n\n"
    "[The Start of Reference Answer]\n{reference}\n[The End of Reference Answer]\n\n"
    "[The Start of Assistant's Answer]\n{answer}\n[The End of Assistant's Answer]"
)


def pointwise_prompt(question: str, reference: str, answer: str) -> str:
    """The pfgen-bench paper's 10-point judge prompt (its section 4.2) for one answer."""
    return POINTWISE_PROMPT.format(question=question, reference=reference, answer=answer)
