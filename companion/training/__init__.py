"""Everything that makes the shipped models: rendered and harvested training data, the
training runs, quantisation and the evaluation figures. Nothing here is imported by
`detect`, `watch` or `run`; `companion/detector/` holds inference only."""
