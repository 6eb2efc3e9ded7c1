"""What ran and on what: the run's evidence beside the registration.

The interpreter's start-up state (:mod:`.startup`, :mod:`.interpreter`), the installed
distributions' files (:mod:`.installed`), compiled files that are not their source
(:mod:`.bytecode`), the runtime fingerprint of a job (:mod:`.fingerprint`), the packages a
registration needs (:mod:`.loadable`), the numeric environment (:mod:`.environment`), the
provenance record of every artifact (:mod:`.provenance`) and the warm fork server of local runs
(:mod:`.forkserver`). It sits on the contract (:mod:`tailgate.prereg`), which it records, and
below the statistics and the stages, which it serves.
"""
