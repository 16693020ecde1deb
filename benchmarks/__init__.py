"""Benchmarks: scripts that measure the library and the app against a reference run beside them
(a naive version, a library routine, a bare Streamlit page) and print tables of ratios.

Each runs from the project's folder as ``python -m benchmarks.NAME [options]`` and writes what it
printed, with the commit and the machine, to ``benchmarks/results/NAME.json``
(:mod:`benchmarks.results`); ``python -m benchmarks.render`` turns those files into
``docs/benchmarks.md``. :mod:`benchmarks.app_server` starts the app for the browser benchmarks
and the browser tests alike.
"""
