"""Which model a session talks to, how the provider is reached, and what each request costs."""
