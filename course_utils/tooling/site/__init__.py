"""The course's website, ``course site``: the lessons as executed pages, with the
exercises, the docs, the claims' results, a PDF and a Chinese half (docs/SITE.md).

- ``build``: the ``course site`` command: checks the executed notebooks, stages, runs Sphinx
- ``pages``: the site's Sphinx source tree, staged from the course's files
- ``side_by_side``: finds the side-by-side pairs (``# PyTorch`` / ``# JAX`` / parity cells)
- ``extension``: the site's Sphinx extension (JupyterLab's heading anchors, the pairs' blocks)
- ``assets``: mermaid, MathJax and the stylesheet, served from the site itself
- ``pdf``: the whole course as one PDF, printed by chromium from the built pages
- ``languages``: the site's Chinese half: which editions it takes, their pages with the English outputs, the language switch
"""
