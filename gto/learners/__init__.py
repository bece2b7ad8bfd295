"""The learners: :func:`gto.optimize` (a fixed tree's decisions, globally
optimised by the engine) with its categorical front end, and the scikit-learn
estimator :class:`gto.GTOClassifier`."""
