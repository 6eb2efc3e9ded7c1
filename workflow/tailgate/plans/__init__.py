"""The registered plan: which plan a stage computes under, what each stage reads of the
registration, the registered-plan branch and the results layout both plans write; and the study
as the entry points load it, each analysis kind's checks added (``registration``)."""
