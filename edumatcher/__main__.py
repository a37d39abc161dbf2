"""``python -m edumatcher``: the command line (see ``edumatcher.cli``)."""

from edumatcher.cli import main

raise SystemExit(main())
