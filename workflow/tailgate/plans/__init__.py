"""The registered plan: which plan a stage computes under, what each stage reads of the
registration, the registered-plan branch and the results layout both plans write."""
