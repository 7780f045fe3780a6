"""The board kind of language modelling: bits per byte of held-out text at every scale."""

from __future__ import annotations

from suite.report.board_kinds import BOARD_KINDS
from suite.report.boards import ScaleBoardKind


@BOARD_KINDS.register()
class LanguageModellingBoard(ScaleBoardKind):
    """The figures of metrics declared ``board: lm`` (bits per byte), a board per corpus, size and recipe."""

    name = "lm"
    heading = "Language modelling"
    blurb = ("Bits per byte of held-out text (lower is better), scored in non-overlapping windows of s x L bytes "
             "at each multiple s of the training length L; ranked at the longest.")
    order = 0
    overlaid = True
    across_corpora = True
    metric_in_id = False
    carries_checkpoint_columns = True
    change_column = True  # a lead at 16x may be all in-distribution quality (Canon layers: 0.583 at 1x, 0.579 at 16x)
    # 0.1 bits per byte: beyond the training length encodings differ by tenths to whole bits
    # (ALiBi 2.86 against xPos 3.57 at 16x), while within it they agree to a few hundredths;
    # a tenth is about 3% of a tiny model's bpb, the least gap worth a ranking's claim
    effect = 0.1
    effect_unit = "bits per byte"

    @staticmethod
    def title(task, metric, size):
        return f"Language modelling: {task}, size {size}"
