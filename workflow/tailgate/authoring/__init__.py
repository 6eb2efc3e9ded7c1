"""Authoring a study: ``tailgate init`` (:mod:`~tailgate.authoring.scaffold`), the checks
``tailgate design`` runs before anything is frozen (:mod:`~tailgate.authoring.importcheck`,
:mod:`~tailgate.authoring.runnable`), and ``freeze`` and ``amend``
(:mod:`~tailgate.authoring.freeze`).

Above the data and the stages, whose code it runs on the user's files (the importer, the
transform, the statistics of the registered design), and below the command; the contract it
writes (schema, lock, pins, guard) is :mod:`tailgate.prereg`.
"""
