"""Words deep-tui shows, shared by the app and the command line: plurals and message numbers, model
text made safe for a terminal, prompts and attachments as text, money, token counts, what a tool call
looked at. Pure functions with no I/O; everything above may use them."""
