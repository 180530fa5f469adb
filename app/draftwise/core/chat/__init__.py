"""The chat with a running engine, as data (no Qt, no sockets): the protocol of its
`/v1/chat/completions` and `/v1/completions` and the conversation (`protocol`), pictures for a
vision model (`pictures`) and the saved chats (`store`).

How a reply is cut for the window to render is the view's (viewmodels/markdown_pieces.py).
Below every other core package: it uses only core's shared helpers (messages, records,
readable, paths)."""
