"""What every other layer stands on: settings and where they come from, the data and config
directories, opening files without following links, atomic writes, the one secret redactor, logging,
the process's stderr, user-facing errors and exit codes, the metadata keys stored on messages."""
