#!/bin/sh
# docs/assets/board.png, the README's picture of a board, from the published snapshot as it is:
# the default language-modelling board (lm-tiny-lm) rendered by `make site` and photographed
# by headless Chromium (the browser the end-to-end tests use) at 1280 x 1000.
set -e
cd "$(dirname "$0")/.."
make site
chromium --headless=new --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,1000 \
    --screenshot=docs/assets/board.png "file://$PWD/site/published/boards/lm-tiny-lm.html"
