"""What a prompt carries besides its text: ``@path`` files, and the workdir's files to complete over."""
