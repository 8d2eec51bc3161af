"""The lowering recorder's old IPython-extension address loads the recorder."""

from course_utils.tooling import lowering_record
from course_utils.tooling.lowering import record


def test_the_old_extension_address_loads_the_recorder():
    assert lowering_record.load_ipython_extension is record.load_ipython_extension
