"""The commands: ``course grade``, ``course check``, ``course release`` and ``course gradescope``.

The top layer: argument parsers and entry points that ``course_utils.cli`` mounts;
the work happens in the layers below, imported when a command runs.

- ``grade``: the ``grade``, ``grade merge`` and ``check`` commands' arguments and entry
  points
- ``verbs``: ``grade``'s class-level verbs (``report``, ``export``, ``manual``) and options
- ``similarity``: the arguments of ``grade similarity``
- ``answers``: the arguments of ``grade answers`` and ``grade manual --key``
- ``class_args``: what those two share: one SUBMISSIONS folder, ``--master``, ``--out``
- ``deploy``: the arguments of ``grade slurm``, ``release`` and ``gradescope build``
- ``limits``: the limits' arguments those commands share, with one set of defaults
"""
