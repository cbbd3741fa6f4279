import sys

from gitmedic.bot.cli import main

sys.exit(main())
