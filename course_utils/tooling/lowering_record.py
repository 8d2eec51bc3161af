"""The lowering recorder's old IPython-extension address, which IPython startup files
already written name (``load_extension('course_utils.tooling.lowering_record')``): the
recorder is :mod:`course_utils.tooling.lowering.record`."""

from course_utils.tooling.lowering.record import load_ipython_extension  # noqa: F401
