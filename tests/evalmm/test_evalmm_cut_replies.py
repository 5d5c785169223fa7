"""`mm run` counts the model's replies cut at max_tokens and says which option raises the
limit: a cut reply with text is scored as it is, and was said nothing of before."""

from __future__ import annotations

from pathlib import Path

from test_evalmm_run import mixed_images, mm_run, one_image_task

from pfgen_fast.testing import Reply, serve


def test_cut_model_replies_are_counted_with_the_hint(tmp_path: Path) -> None:
    data = one_image_task(tmp_path / "data", mixed_images(4))
    cut = Reply(text="画像には猫が", finish_reason="length")
    with serve(lambda path, body: cut) as server:
        result = mm_run(server.base_url, data, tmp_path / "out", "--max-tokens", "5")
    assert result.returncode == 0, result.stderr
    assert "warning: 4 model replies were cut at max_tokens (raise --max-tokens)" in (
        result.stderr.splitlines()
    )
