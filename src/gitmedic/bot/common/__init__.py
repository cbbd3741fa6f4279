"""What every layer of the bot may use: exit codes and usage errors, optional extras,
SQLite files opened safely."""
