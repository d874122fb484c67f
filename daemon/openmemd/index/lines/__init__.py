"""Reading lines of a memory file, or of a hit search cited, for `get`.

Entry point: `read.read_lines` (a file of this workspace: Markdown inside strict bounds, a
transcript as the message lines the index holds, `transcript.py`); `stored.read_stored` reads
another namespace's hit back from the stored chunks. Either takes a citation as search prints
it (`cited.py`). It reads with the indexer's bounds (`index.scan`, `index.safeopen`), so what
search cites is what `get` returns.
"""
