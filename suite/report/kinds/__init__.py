"""The board kinds, one module each: every module here registers its kind in
:data:`suite.report.board_kinds.BOARD_KINDS`, which imports them all on its first lookup."""
