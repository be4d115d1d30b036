"""Renderers: one module per output (terminal, markdown, docs, HTML, JUnit, scoreboard),
all reading a `Report`; `outputs` writes them. The HTML page's markup, style and script
are real files in `page/`."""
