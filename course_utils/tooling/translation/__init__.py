"""The translation, ``course translate``: the Chinese edition of the lessons, the student
notebooks and the README, written from the English and a gettext catalog
(docs/AUTHORING.md).

- ``command``: the ``course translate`` command: translated notebooks and README from catalogs
- ``catalog``: markdown cut into messages, the gettext catalogs, what a translation must keep
"""
