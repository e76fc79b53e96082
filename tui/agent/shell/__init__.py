"""Shell commands: the sandbox, one command's run, the execute tool and the user's ``!command``."""
