import sys

from gitmedic.bot.cli.main import main

sys.exit(main())
