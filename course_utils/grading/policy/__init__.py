"""The grading policy: points, flags, what a student is shown, lateness and manual grades.

Imports ``records``, ``inputs`` and ``sandbox``; never the run that applies it.

- ``scoring``: a student's record from the kernel's replies, and hidden-test redaction
- ``flags``: the flags column: constructs in a student's code worth a human look
- ``feedback``: the files handed back (Gradescope ``results.json``, feedback and executed
  notebooks), hidden tests redacted
- ``late``: the late policy: deadline, extensions, submission times, penalty or cut-off
- ``adjust``: the late policy and manual grades applied to graded records
"""
