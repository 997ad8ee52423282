// placeholder until the pipeline lands
