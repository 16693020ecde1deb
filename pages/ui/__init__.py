"""What the pages share, one concern a module; a page imports the modules it uses.

- :mod:`.session`: every run through ``app.py``; closed tabs' sessions released.
- :mod:`.datasets`: the current data set, the session's uploads, side data, uploads parsed once.
- :mod:`.sidebar`: page links, the data-set picker, the data summary.
- :mod:`.views`: the widgets' values in the URL, restored from a link.
- :mod:`.settings`: settings kept across pages and re-judged per data set.
- :mod:`.runs`: cached calls into ``core`` with progress and Stop.
- :mod:`.widgets`: errors, the sparsity-gap metric, wrapping rows, weights on the image.
- :mod:`.downloads`: CSV and Parquet tables, the selected data, PNG masks, .h5ad results.
- :mod:`.estimates`: how long the long runs will take, said before they start.
- :mod:`.snippets`: the Python that recomputes a page's result, shown on the page.
"""
